// event_ops.cpp - EVENT_POLL, EVENT_WAIT, EVENT_DESTROY.
//
// Owns nothing beyond the handlers. wait_progress() is one look at a wait's
// events (the daemon's non-blocking seam, Session::check_wait); event_wait()
// repeats it until done. Decides how a wait blocks: without
// spinning and without holding the session lock while asleep. Each round it
//   1. reads the completion signal's generation,
//   2. under the session lock, looks every handle up again and polls it
//      (an event destroyed by another thread meanwhile is then reported as
//      an unknown handle, never read after release),
//   3. returns when all (VACCEL_WAIT_ALL) or any are done, or when the
//      absolute CLOCK_MONOTONIC timeout has passed (timeout 0: one round),
//   4. else sleeps until the generation moves or the timeout passes.
// Reading the generation before polling means a completion that lands
// between the poll and the sleep wakes the sleep at once.
// "Done" is any state but pending: complete, failed and cancelled.
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "args.hpp"
#include "ops.hpp"

namespace vaccel::engine::ops {

namespace {

backend::EventStatus poll_record(EventRecord& event)
{
    return event.owner->device->call(
        [&](backend::Backend& b) { return b.poll(*event.object); });
}

}  // namespace

Status event_poll(SessionState& state, vaccel_event_poll& args)
{
    auto found = state.lookup<EventRecord>(args.event);
    if (!found)
        return fail(std::move(found.error()));
    const backend::EventStatus status = poll_record(**found);
    args.state = static_cast<std::uint32_t>(status.state);
    args.failure = status.state == backend::EventState::failed ? status.failure.to_status()
                                                                : vaccel_status{};
    return {};
}

Result<WaitProgress> wait_progress(SessionState& state, std::span<const std::uint64_t> handles,
                                   std::uint32_t flags)
{
    WaitProgress progress;
    std::optional<std::uint32_t> first;
    std::lock_guard lock(state.mutex);
    for (std::uint32_t i = 0; i < handles.size(); ++i) {
        auto found = state.lookup<EventRecord>(handles[i]);
        if (!found)
            return fail(std::move(found.error()));
        if (poll_record(**found).state != backend::EventState::pending) {
            ++progress.done_count;
            if (!first)
                first = i;
        }
    }
    progress.first_done = first.value_or(0);
    const bool all = (flags & VACCEL_WAIT_ALL) != 0;
    progress.satisfied = all ? progress.done_count == handles.size() : progress.done_count > 0;
    return progress;
}

Status event_wait(SessionState& state, vaccel_event_wait& args, std::span<const std::byte> payload)
{
    const std::vector<std::uint64_t> handles = load_array<std::uint64_t>(payload);
    std::optional<std::chrono::steady_clock::time_point> deadline;
    // A timeout beyond what steady_clock can represent (int64 nanoseconds,
    // ~292 years of uptime) is no timeout at all.
    constexpr std::uint64_t representable = static_cast<std::uint64_t>(INT64_MAX);
    if (args.timeout_ns != 0 && args.timeout_ns <= representable)
        deadline = std::chrono::steady_clock::time_point(
            std::chrono::nanoseconds(static_cast<std::int64_t>(args.timeout_ns)));
    const bool forever = args.timeout_ns > representable;
    CompletionSignal& signal = state.devices->completions();

    for (;;) {
        const std::uint64_t seen = signal.generation();
        auto progress = wait_progress(state, handles, args.flags);
        if (!progress)
            return fail(std::move(progress.error()));
        args.done_count = progress->done_count;
        args.first_done = progress->first_done;
        if (progress->satisfied)
            return {};
        if (!forever && (!deadline || std::chrono::steady_clock::now() >= *deadline))
            return fail(Errc::deadline_expired, VACCEL_D_WAIT_TIMEOUT,
                        handles.size() - progress->done_count);
        signal.wait_for_change(seen, deadline);
    }
}

Status event_destroy(SessionState& state, vaccel_handle_release& args)
{
    auto found = state.lookup<EventRecord>(args.handle);
    if (!found)
        return fail(std::move(found.error()));
    EventRecord& event = **found;
    ContextRecord& context = *event.owner;
    auto released =
        context.device->call([&](backend::Backend& b) { return b.destroy_event(event.object); });
    if (!released)
        return released;  // Busy while pending; the handle stays valid
    context.accounting->release(Resource::events, 1);
    --context.children;
    --event.queue->events;
    state.erase<EventRecord>(args.handle);
    return {};
}

}  // namespace vaccel::engine::ops
