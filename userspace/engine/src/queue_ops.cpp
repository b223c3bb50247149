// queue_ops.cpp - QUEUE_CREATE, QUEUE_DESTROY.
//
// Owns nothing beyond the handlers. Decides: events are children of the
// queue they were submitted on; a queue with events alive is not destroyed
// (Busy, VACCEL_D_IN_USE, arg0 = events alive), so a backend event never
// outlives its queue.
#include "ops.hpp"

namespace vaccel::engine::ops {

Status queue_create(SessionState& state, vaccel_queue_create& args)
{
    auto found = state.lookup<ContextRecord>(args.context);
    if (!found)
        return fail(std::move(found.error()));
    ContextRecord& context = **found;
    if (auto ok = context.device->usable(); !ok)
        return ok;
    if (auto handle = state.reserve_handle(); !handle)
        return handle;
    auto charge = context.accounting->reserve(Resource::queues, 1);
    if (!charge)
        return fail(std::move(charge.error()));

    auto queue = context.device->call(
        [&](backend::Backend& b) { return b.create_queue(*context.object); });
    if (!queue)
        return fail(std::move(queue.error()));

    QueueRecord record;
    record.owner = &context;
    record.context = args.context;
    record.object = std::move(*queue);
    auto handle = state.insert(std::move(record));  // cannot fail: reserve_handle() passed
    charge->commit();
    ++context.children;
    args.queue = *handle;
    return {};
}

Status queue_destroy(SessionState& state, vaccel_handle_release& args)
{
    auto found = state.lookup<QueueRecord>(args.handle);
    if (!found)
        return fail(std::move(found.error()));
    QueueRecord& queue = **found;
    if (queue.events != 0)
        return fail(Error::of(Errc::busy, VACCEL_D_IN_USE, queue.events)
                        .with_note("destroy the events submitted on this queue first"));
    ContextRecord& context = *queue.owner;
    auto released =
        context.device->call([&](backend::Backend& b) { return b.destroy_queue(queue.object); });
    if (!released)
        return released;
    context.accounting->release(Resource::queues, 1);
    --context.children;
    state.erase<QueueRecord>(args.handle);
    return {};
}

}  // namespace vaccel::engine::ops
