// session_teardown.cpp - releasing everything a session owns, in order.
//
// Owns: the end of a session's objects. Decides the order:
//   1. wait (without the session lock, on the completion signal) until no
//      event is pending - the backends finish accepted work, they do not
//      abandon it;
//   2. events, then queues, programs and buffers, then contexts, each
//      through its op handler so that every counter (context accounting,
//      session and device context counts) is given back exactly as a
//      client's own release would.
// A release the backend still refuses after step 1 breaks the backend
// contract; the object is then deliberately leaked (never freed behind the
// backend's back) and its record dropped so that teardown completes.
#include <vector>

#include "ops.hpp"

namespace vaccel::engine {

namespace {

bool any_pending(SessionState& state)
{
    bool pending = false;
    state.objects.for_each([&](std::uint64_t, Object& object) {
        if (auto* event = std::get_if<EventRecord>(&object); event && !pending)
            pending = event->owner->device->call([&](backend::Backend& b) {
                return b.poll(*event->object).state == backend::EventState::pending;
            });
    });
    return pending;
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

void release_all(SessionState& state)
{
    CompletionSignal& signal = state.devices->completions();
    std::unique_lock lock(state.mutex);
    for (;;) {
        const std::uint64_t seen = signal.generation();
        if (!any_pending(state))
            break;
        lock.unlock();
        signal.wait_for_change(seen, std::nullopt);
        lock.lock();
    }
    release_each<EventRecord>(state, ops::event_destroy);
    release_each<QueueRecord>(state, ops::queue_destroy);
    release_each<ProgramRecord>(state, ops::program_unload);
    release_each<BufferRecord>(state, ops::buffer_free);
    release_each<ContextRecord>(state, ops::context_destroy);
}

}  // namespace vaccel::engine
