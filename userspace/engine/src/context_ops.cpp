// context_ops.cpp - CONTEXT_CREATE, CONTEXT_DESTROY, CONTEXT_LIMITS.
//
// Owns nothing beyond the handlers. Decides:
//  - a context is charged twice before the backend is asked: to the session
//    (and through it to its tenant's contexts total on that device, ADR
//    0024) and to the device (its own max_contexts, all sessions); both are
//    committed only after the backend made the context and a handle is
//    certain.
//  - a new context's own caps are the device's ∩ the policy's per-context
//    level; its parent is the tenant's totals on the device.
//  - a new context gets the policy's scheduling weight (clamped to 1..1000)
//    through Backend::set_context_schedule() before anyone can submit to it;
//  - a session whose container was given only some devices (the daemon's
//    container registry, ADR 0023) creates contexts on those alone;
//  - a context with children (buffers, programs, queues, events) is not
//    destroyed: Busy, VACCEL_D_IN_USE, arg0 = the number of children.
#include <algorithm>
#include <type_traits>

#include "ops.hpp"

namespace vaccel::engine::ops {

namespace {

// A session of a container that was given only some devices creates
// contexts on those alone: PermissionDenied, VACCEL_D_DEVICE_NOT_GRANTED
// (arg0 = the device, arg1 = the given devices as a bit mask).
Status device_granted(const SessionIdentity& who, std::uint32_t device)
{
    if (!who.devices || std::ranges::find(*who.devices, device) != who.devices->end())
        return {};
    std::uint64_t given = 0;
    for (std::uint32_t index : *who.devices)
        if (index < 64)
            given |= std::uint64_t{1} << index;
    return fail(Error::of(Errc::permission_denied, VACCEL_D_DEVICE_NOT_GRANTED, device, given)
                    .with_note("container " + who.container.substr(0, 12)));
}

}  // namespace

Status context_create(SessionState& state, vaccel_context_create& args)
{
    auto device = state.devices->lookup(args.device);
    if (!device)
        return fail(std::move(device.error()));
    Device& dev = **device;
    if (auto ok = dev.usable(); !ok)
        return ok;
    if (auto granted = device_granted(state.identity, dev.index()); !granted)
        return granted;
    if (auto handle = state.reserve_handle(); !handle)
        return handle;

    // The policy may have changed since the session began (the daemon's
    // LIMITS_SET): a new context obeys the policy in force now.
    Accounting& session_contexts = *state.session_contexts[dev.index()];
    session_contexts.set_limits(state.effective_limits(dev));
    state.refresh_totals();
    auto session_charge = session_contexts.reserve(Resource::contexts, 1);
    if (!session_charge)
        return fail(std::move(session_charge.error()));
    auto device_charge = dev.contexts().reserve(Resource::contexts, 1);
    if (!device_charge)
        return fail(std::move(device_charge.error()));

    const ContextScheduling scheduling = state.policy->scheduling(state.identity, dev.index());
    backend::ContextSchedule schedule;
    schedule.flow = state.tenant->id().key();  // every context of the tenant shares one flow
    schedule.weight = std::clamp(scheduling.weight, 1u, 1000u);
    schedule.latency = scheduling.latency;
    schedule.share_permille = std::clamp(scheduling.share_permille, 1u, 1000u);
    auto context = dev.call([&](backend::Backend& b) -> Result<std::unique_ptr<backend::Context>> {
        auto made = b.create_context();
        if (made)
            b.set_context_schedule(**made, schedule);
        return made;
    });
    if (!context)
        return fail(std::move(context.error()));

    ContextRecord record;
    record.device = &dev;
    record.object = std::move(*context);
    record.accounting =
        std::make_unique<Accounting>(state.effective_limits(dev), &state.tenant->on(dev.index()));
    auto handle = state.insert(std::move(record));  // cannot fail: reserve_handle() passed
    session_charge->commit();
    device_charge->commit();
    if (session_contexts.used(Resource::contexts) == 1)
        dev.session_arrived();
    args.context = *handle;
    return {};
}

Status context_destroy(SessionState& state, vaccel_handle_release& args)
{
    auto found = state.lookup<ContextRecord>(args.handle);
    if (!found)
        return fail(std::move(found.error()));
    ContextRecord& context = **found;
    if (context.children != 0)
        return fail(Error::of(Errc::busy, VACCEL_D_IN_USE, context.children)
                        .with_note("release its buffers, programs, queues and events first"));

    Device& dev = *context.device;
    auto released = dev.call([&](backend::Backend& b) { return b.destroy_context(context.object); });
    if (!released)
        return released;  // the backend handed the context back alive
    Accounting& session_contexts = *state.session_contexts[dev.index()];
    session_contexts.release(Resource::contexts, 1);
    if (session_contexts.used(Resource::contexts) == 0)
        dev.session_left();
    dev.contexts().release(Resource::contexts, 1);
    state.erase<ContextRecord>(args.handle);
    return {};
}

Status context_limits(SessionState& state, vaccel_context_limits& args)
{
    auto found = state.lookup<ContextRecord>(args.context);
    if (!found)
        return fail(std::move(found.error()));
    // Each field reports the level that binds first: the context's own cap
    // or its tenant's total on the device, whichever leaves less room; so
    // limit - used is exactly what this context may still take.
    const Accounting& context = *(*found)->accounting;
    const Accounting* tenant = context.parent();
    vaccel_device_limits limits = context.limits();
    auto binding = [&](Resource r, auto& limit_field) {
        std::uint64_t limit = limit_of(limits, r);
        std::uint64_t used = context.used(r);
        if (tenant != nullptr) {
            const std::uint64_t t_limit = tenant->limit(r);
            const std::uint64_t t_used = tenant->used(r);
            const auto room = [](std::uint64_t l, std::uint64_t u) { return l > u ? l - u : 0; };
            if (room(t_limit, t_used) < room(limit, used)) {
                limit = t_limit;
                used = t_used;
            }
        }
        limit_field = static_cast<std::remove_reference_t<decltype(limit_field)>>(limit);
        return used;
    };
    args.used_memory_bytes = binding(Resource::memory_bytes, limits.max_memory_bytes);
    args.used_buffers = static_cast<std::uint32_t>(binding(Resource::buffers, limits.max_buffers));
    args.used_programs =
        static_cast<std::uint32_t>(binding(Resource::programs, limits.max_programs));
    args.used_queues = static_cast<std::uint32_t>(binding(Resource::queues, limits.max_queues));
    args.used_events = static_cast<std::uint32_t>(binding(Resource::events, limits.max_events));
    args.used_gates = static_cast<std::uint32_t>(binding(Resource::gates, limits.max_gates));
    if (tenant != nullptr)
        limits.max_contexts = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(limits.max_contexts, tenant->limit(Resource::contexts)));
    args.limits = limits;
    return {};
}

}  // namespace vaccel::engine::ops
