// submit_ops.cpp - SUBMIT and SUBMIT_AFTER, and what LAUNCH shares with them.
//
// Owns nothing beyond the handlers. Decides the engine's share of submission
// checking, in the reference design's order, before the backend sees anything:
//  1. queue and program are this session's, and of the same context
//     (program of another context: Incompatible, VACCEL_D_BINDING_CONTEXT,
//     arg0 = the program handle); the device is not lost (DeviceLost); the
//     program is a TOSA program (a kernel program: Incompatible, D_FORMAT);
//  2. (SUBMIT_AFTER) the gate is this session's and of the queue's context
//     (Incompatible, VACCEL_D_BINDING_CONTEXT, arg0 = the gate handle);
//  3. a deadline on a device without VACCEL_CAP_DEADLINES is refused
//     (DeadlineExpired, VACCEL_D_DEADLINE);
//  4. binding_count within the context's effective max_bindings
//     (ResourceLimit, VACCEL_LIMIT_BINDINGS);
//  5. per binding, in order: the buffer handle is known (InvalidArgument,
//     D_UNKNOWN_HANDLE) and belongs to the queue's context (Incompatible,
//     D_BINDING_CONTEXT, arg0 = binding index) - the backend says the same;
//  6. the shared binding rules (validate::bindings), so that a malformed
//     binding list is named before any limit is charged (the reference design's order);
//  7. one event is charged to the context (max_events) and a handle is
//     certain to be available.
// The backend then either rejects (nothing happened) or accepts. An
// accepted submission always gets its event handle; when the backend could
// not confirm acceptance (indeterminate), the handle is returned together
// with the error (VACCEL_D_INDETERMINATE, arg0 = the handle).
#include "submit_common.hpp"

#include "args.hpp"
#include "ops.hpp"

namespace vaccel::engine::ops {

Result<Target> resolve_target(SessionState& state, std::uint64_t queue_handle,
                              std::uint64_t program_handle)
{
    auto queue = state.lookup<QueueRecord>(queue_handle);
    if (!queue)
        return fail(std::move(queue.error()));
    auto program = state.lookup<ProgramRecord>(program_handle);
    if (!program)
        return fail(std::move(program.error()));
    ContextRecord& context = *(*queue)->owner;
    if ((*program)->owner != &context)
        return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT, program_handle)
                        .with_note("the program was loaded into another context than the queue's"));
    if (auto ok = context.device->usable(); !ok)
        return fail(ok.error());
    return Target{*queue, *program, &context};
}

Status check_deadline(const Target& target, std::uint64_t deadline_ns)
{
    // A deadline the device cannot honour is refused, not silently ignored.
    if (deadline_ns != 0 && (target.context->device->info().flags & VACCEL_CAP_DEADLINES) == 0)
        return fail(Error::of(Errc::deadline_expired, VACCEL_D_DEADLINE)
                        .with_note("this device does not honour submission deadlines; submit "
                                   "with deadline 0"));
    return {};
}

Status resolve_bindings(SessionState& state, const Target& target,
                        std::span<const vaccel_binding> wire, Bindings& bindings)
{
    const vaccel_device_limits limits = target.context->accounting->limits();
    if (wire.size() > limits.max_bindings)
        return fail(Error::limit_hit(VACCEL_LIMIT_BINDINGS, limits.max_bindings, wire.size()));
    for (std::size_t i = 0; i < wire.size(); ++i) {
        auto buffer = state.lookup<BufferRecord>(wire[i].buffer);
        if (!buffer)
            return fail(std::move(buffer.error()));
        if ((*buffer)->owner != target.context)
            return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT, i)
                            .with_note("the buffer belongs to another context than the queue's"));
        bindings.push_back(backend::Binding{wire[i].slot, wire[i].access, (*buffer)->object.get(),
                                            wire[i].offset, wire[i].bytes});
    }
    return {};
}

BindingFactsList binding_facts(std::span<const backend::Binding> bindings,
                               std::span<const vaccel_binding> wire)
{
    BindingFactsList facts;
    for (std::size_t i = 0; i < bindings.size(); ++i) {
        const backend::BufferDesc& desc = bindings[i].buffer->desc();
        facts.push_back({bindings[i].slot, bindings[i].access, wire[i].buffer, desc.bytes,
                         desc.usage, desc.access, bindings[i].offset, bindings[i].bytes});
    }
    return facts;
}

Result<Charge> charge_event(SessionState& state, const Target& target)
{
    if (auto handle = state.reserve_handle(); !handle)
        return fail(std::move(handle.error()));
    return target.context->accounting->reserve(Resource::events, 1);
}

Status record_event(SessionState& state, const Target& target, Charge& charge,
                    Result<backend::Submitted> submitted, std::shared_ptr<EventWatch> watch,
                    std::span<const backend::Binding> bindings,
                    std::span<const vaccel_binding> wire, __u64& event_out)
{
    if (!submitted) {
        Error error = std::move(submitted.error());
        for (std::size_t i = 0; i < wire.size(); ++i) {
            const std::uint64_t before = error.arg0;
            error = name_buffer(std::move(error), bindings[i].buffer, wire[i].buffer);
            if (error.arg0 != before)
                break;
        }
        return fail(std::move(error));
    }
    EventRecord record;
    record.owner = target.context;
    record.queue = target.queue;
    record.object = std::move(submitted->event);
    record.watch = std::move(watch);
    auto handle = state.insert(std::move(record));  // cannot fail: reserve_handle() passed
    charge.commit();
    ++target.context->children;
    ++target.queue->events;
    state.submissions.fetch_add(1, std::memory_order_relaxed);
    target.context->device->submission_accepted();
    event_out = *handle;
    if (submitted->indeterminate) {
        Error error = std::move(*submitted->indeterminate);
        error.arg0 = *handle;
        return fail(std::move(error));
    }
    return {};
}

namespace {

// SUBMIT and SUBMIT_AFTER (gate_handle 0 = none).
Status submit_common(SessionState& state, std::uint64_t queue_handle, std::uint64_t program_handle,
                     std::span<const std::byte> payload, std::uint64_t deadline_ns,
                     std::uint64_t gate_handle, std::uint64_t gate_value, __u64& event_out)
{
    auto target = resolve_target(state, queue_handle, program_handle);
    if (!target)
        return fail(std::move(target.error()));
    if (const std::uint32_t format = target->program->object->format(); format != VACCEL_FORMAT_TOSA)
        return fail(Error::of(Errc::incompatible, VACCEL_D_FORMAT, format)
                        .with_note("a kernel program is run with vaccel_launch, not submitted"));
    backend::Gate* gate = nullptr;
    if (gate_handle != 0) {
        auto found = state.lookup<GateRecord>(gate_handle);
        if (!found)
            return fail(std::move(found.error()));
        if ((*found)->owner != target->context)
            return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT, gate_handle)
                            .with_note("the gate belongs to another context than the queue's"));
        gate = (*found)->object.get();
    }
    if (auto ok = check_deadline(*target, deadline_ns); !ok)
        return ok;
    const WireBindings wire = load_small_array<vaccel_binding, VACCEL_MAX_BINDINGS>(payload);
    Bindings bindings;
    if (auto resolved = resolve_bindings(state, *target, wire, bindings); !resolved)
        return resolved;

    SlotSpecs slots;
    for (const backend::SlotInfo& slot : target->program->object->slots())
        slots.push_back({slot.role, slot.bytes});
    if (auto valid = validate::bindings(slots, binding_facts(bindings, wire),
                                        target->context->accounting->limits().max_bindings);
        !valid)
        return valid;

    backend::SubmitDesc desc;
    desc.queue = target->queue->object.get();
    desc.program = target->program->object.get();
    desc.bindings = bindings;
    desc.deadline_ns = deadline_ns;
    desc.after = gate;
    desc.after_value = gate_value;
    return hand_over(
        state, *target, desc,
        [](backend::Backend& b, const backend::SubmitDesc& d) { return b.submit(d); }, bindings,
        wire, event_out);
}

}  // namespace

Status submit(SessionState& state, vaccel_submit& args, std::span<const std::byte> payload)
{
    return submit_common(state, args.queue, args.program, payload, args.deadline_ns, 0, 0,
                         args.event);
}

Status submit_after(SessionState& state, vaccel_submit_after& args,
                    std::span<const std::byte> payload)
{
    return submit_common(state, args.queue, args.program, payload, 0, args.gate, args.value,
                         args.event);
}

}  // namespace vaccel::engine::ops
