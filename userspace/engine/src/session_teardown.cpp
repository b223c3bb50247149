// session_teardown.cpp - releasing everything a session owns, in order.
//
// Owns: the end of a session's objects. Decides the order:
//   1. cancel what has not started: every context's queued and gated
//      submissions end CANCELLED (VACCEL_D_SESSION_CLOSED), so a dead
//      client's backlog is not run for nobody;
//   2. wait (without the session lock, woken by the completions of the
//      events still running) until no event is pending - the backends
//      finish running work, they do not abandon it;
//   3. events, gates, then queues, programs and buffers, then contexts,
//      each through its op handler so that every counter (context
//      accounting, session and device context counts) is given back exactly
//      as a client's own release would.
// A release the backend still refuses after step 1 breaks the backend
// contract; the object is then deliberately leaked (never freed behind the
// backend's back) and its record dropped so that teardown completes.
#include <vector>

#include "ops.hpp"

namespace vaccel::engine {

namespace {

// Subscribes `waiter` to every event still pending; true if there is one.
bool any_pending(SessionState& state, const std::shared_ptr<Waiter>& waiter)
{
    bool pending = false;
    state.objects.for_each([&](std::uint64_t, Object& object) {
        if (auto* event = std::get_if<EventRecord>(&object))
            pending = event->watch->subscribe(waiter) || pending;
    });
    return pending;
}

void cancel_unstarted(SessionState& state)
{
    const Error why = Error::of(Errc::cancelled, VACCEL_D_SESSION_CLOSED)
                          .with_note("the session ended before this work started");
    state.objects.for_each([&](std::uint64_t, Object& object) {
        if (auto* context = std::get_if<ContextRecord>(&object))
            context->device->call(
                [&](backend::Backend& b) { return b.cancel_pending(*context->object, why); });
    });
}

template <class R>
std::vector<std::uint64_t> handles_of(SessionState& state)
{
    std::vector<std::uint64_t> handles;
    state.objects.for_each([&](std::uint64_t handle, Object& object) {
        if (std::holds_alternative<R>(object))
            handles.push_back(handle);
    });
    return handles;
}

// Drops a record whose release the backend refused, leaking its object.
template <class R>
void abandon(SessionState& state, std::uint64_t handle)
{
    auto found = state.lookup<R>(handle);
    if (!found)
        return;
    R& record = **found;
    (void)record.object.release();  // Ownership: leaked on purpose, see the file comment
    if constexpr (!std::is_same_v<R, ContextRecord>)
        --record.owner->children;
    if constexpr (std::is_same_v<R, EventRecord>)
        --record.queue->events;
    state.erase<R>(handle);
}

template <class R, class Release>
void release_each(SessionState& state, Release release)
{
    for (std::uint64_t handle : handles_of<R>(state)) {
        vaccel_handle_release args{};
        args.handle = handle;
        if (!release(state, args))
            abandon<R>(state, handle);
    }
}

}  // namespace

bool quiesce(SessionState& state, const std::shared_ptr<Waiter>& waiter)
{
    std::lock_guard lock(state.mutex);
    cancel_unstarted(state);
    return !any_pending(state, waiter);
}

void release_all(SessionState& state)
{
    auto waiter = std::make_shared<SleepingWaiter>();
    std::unique_lock lock(state.mutex);
    cancel_unstarted(state);
    while (any_pending(state, waiter)) {
        lock.unlock();
        waiter->sleep(std::nullopt);
        lock.lock();
    }
    // RUN tickets included: the client cannot name them, teardown can.
    release_each<EventRecord>(state, [](SessionState& s, vaccel_handle_release& args) -> Status {
        auto event = s.lookup<EventRecord>(args.handle);
        if (!event)
            return fail(std::move(event.error()));
        return ops::destroy_event_record(s, args.handle, **event);
    });
    release_each<GateRecord>(state, ops::gate_destroy);
    release_each<QueueRecord>(state, ops::queue_destroy);
    release_each<ProgramRecord>(state, ops::program_unload);
    release_each<BufferRecord>(state, ops::buffer_free);
    release_each<ContextRecord>(state, ops::context_destroy);
}

}  // namespace vaccel::engine
