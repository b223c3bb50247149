// gate_ops.cpp - GATE_CREATE, GATE_RAISE, GATE_VALUE, GATE_DESTROY.
//
// Owns nothing beyond the handlers. Decides: a gate is a child of its
// context, charged to the context's `gates` limit (ResourceLimit,
// VACCEL_LIMIT_GATES) like the other objects; another session's gate is an
// unknown handle (HandleTable). Raising never lowers (the backend keeps the
// maximum); destroying cancels the submissions still waiting on the gate
// and never fails for them, so no submission waits forever.
#include "ops.hpp"

namespace vaccel::engine::ops {

Status gate_create(SessionState& state, vaccel_gate_create& args)
{
    auto found = state.lookup<ContextRecord>(args.context);
    if (!found)
        return fail(std::move(found.error()));
    ContextRecord& context = **found;
    if (auto ok = context.device->usable(); !ok)
        return ok;
    if ((context.device->info().flags & VACCEL_CAP_GATES) == 0)
        return fail(Error::of(Errc::unsupported, VACCEL_D_NONE)
                        .with_note("this device has no host gates"));
    if (auto handle = state.reserve_handle(); !handle)
        return handle;
    auto charge = context.accounting->reserve(Resource::gates, 1);
    if (!charge)
        return fail(std::move(charge.error()));
    auto gate = context.device->call(
        [&](backend::Backend& b) { return b.create_gate(*context.object); });
    if (!gate)
        return fail(std::move(gate.error()));

    GateRecord record;
    record.owner = &context;
    record.context = args.context;
    record.object = std::move(*gate);
    auto handle = state.insert(std::move(record));  // cannot fail: reserve_handle() passed
    charge->commit();
    ++context.children;
    args.gate = *handle;
    return {};
}

Status gate_raise(SessionState& state, vaccel_gate_value& args)
{
    auto found = state.lookup<GateRecord>(args.gate);
    if (!found)
        return fail(std::move(found.error()));
    GateRecord& gate = **found;
    if (auto ok = gate.owner->device->usable(); !ok)
        return ok;
    return gate.owner->device->call(
        [&](backend::Backend& b) { return b.raise_gate(*gate.object, args.value); });
}

Status gate_value(SessionState& state, vaccel_gate_value& args)
{
    auto found = state.lookup<GateRecord>(args.gate);
    if (!found)
        return fail(std::move(found.error()));
    GateRecord& gate = **found;
    args.value =
        gate.owner->device->call([&](backend::Backend& b) { return b.gate_value(*gate.object); });
    return {};
}

Status gate_destroy(SessionState& state, vaccel_handle_release& args)
{
    auto found = state.lookup<GateRecord>(args.handle);
    if (!found)
        return fail(std::move(found.error()));
    GateRecord& gate = **found;
    ContextRecord& context = *gate.owner;
    auto released =
        context.device->call([&](backend::Backend& b) { return b.destroy_gate(gate.object); });
    if (!released)
        return released;
    context.accounting->release(Resource::gates, 1);
    --context.children;
    state.erase<GateRecord>(args.handle);
    return {};
}

}  // namespace vaccel::engine::ops
