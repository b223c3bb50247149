// submit_ops.cpp - SUBMIT.
//
// Owns nothing beyond the handler. Decides the engine's share of submission
// checking, before the backend sees anything:
//  1. queue and program are this session's, and of the same context
//     (program of another context: Incompatible, VACCEL_D_BINDING_CONTEXT,
//     arg0 = the program handle);
//  2. binding_count within the context's effective max_bindings
//     (ResourceLimit, VACCEL_LIMIT_BINDINGS);
//  3. per binding, in order: the buffer handle is known
//     (InvalidArgument, D_UNKNOWN_HANDLE) and belongs to the queue's context
//     (Incompatible, D_BINDING_CONTEXT, arg0 = binding index);
//  4. a deadline on a device without VACCEL_CAP_DEADLINES is refused
//     (DeadlineExpired, VACCEL_D_DEADLINE);
//  5. one event is charged to the context (max_events) and a handle is
//     certain to be available.
// The backend then applies the shared binding rules (validate::bindings)
// and either rejects (nothing happened) or accepts; an accepted submission
// always gets its event handle, since nothing after acceptance can fail.
#include <vector>

#include "args.hpp"
#include "ops.hpp"

namespace vaccel::engine::ops {

Status submit(SessionState& state, vaccel_submit& args, std::span<const std::byte> payload)
{
    auto queue_found = state.lookup<QueueRecord>(args.queue);
    if (!queue_found)
        return fail(std::move(queue_found.error()));
    QueueRecord& queue = **queue_found;
    auto program_found = state.lookup<ProgramRecord>(args.program);
    if (!program_found)
        return fail(std::move(program_found.error()));
    ProgramRecord& program = **program_found;
    ContextRecord& context = *queue.owner;
    if (program.owner != &context)
        return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT, args.program)
                        .with_note("the program was loaded into another context than the queue's"));

    // A deadline the device cannot honour is refused, not silently ignored
    // (the backend would refuse it too; refusing here names it before any
    // work). Devices that honour deadlines say so with VACCEL_CAP_DEADLINES.
    if (args.deadline_ns != 0 && (context.device->info().flags & VACCEL_CAP_DEADLINES) == 0)
        return fail(Error::of(Errc::deadline_expired, VACCEL_D_DEADLINE)
                        .with_note("this device does not honour submission deadlines; submit "
                                   "with deadline 0"));

    const vaccel_device_limits limits = context.accounting->limits();
    if (args.binding_count > limits.max_bindings)
        return fail(Error::limit_hit(VACCEL_LIMIT_BINDINGS, limits.max_bindings, args.binding_count));

    const std::vector<vaccel_binding> wire = load_array<vaccel_binding>(payload);
    std::vector<backend::Binding> bindings;
    bindings.reserve(wire.size());
    for (std::size_t i = 0; i < wire.size(); ++i) {
        auto buffer = state.lookup<BufferRecord>(wire[i].buffer);
        if (!buffer)
            return fail(std::move(buffer.error()));
        if ((*buffer)->owner != &context)
            return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT, i)
                            .with_note("the buffer belongs to another context than the queue's"));
        bindings.push_back(backend::Binding{wire[i].slot, wire[i].access, (*buffer)->object.get(),
                                            wire[i].offset, wire[i].bytes});
    }

    if (auto handle = state.reserve_handle(); !handle)
        return handle;
    auto charge = context.accounting->reserve(Resource::events, 1);
    if (!charge)
        return fail(std::move(charge.error()));

    auto event = context.device->call([&](backend::Backend& b) {
        return b.submit(*queue.object, *program.object, bindings, args.deadline_ns);
    });
    if (!event) {
        Error error = std::move(event.error());
        for (std::size_t i = 0; i < wire.size(); ++i)
            error = name_buffer(std::move(error), bindings[i].buffer, wire[i].buffer);
        return fail(std::move(error));
    }

    EventRecord record;
    record.owner = &context;
    record.queue = &queue;
    record.object = std::move(*event);
    auto handle = state.insert(std::move(record));  // cannot fail: reserve_handle() passed
    charge->commit();
    ++context.children;
    ++queue.events;
    state.submissions.fetch_add(1, std::memory_order_relaxed);
    context.device->submission_accepted();
    args.event = *handle;
    return {};
}

}  // namespace vaccel::engine::ops
