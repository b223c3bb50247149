// event_ops.cpp - EVENT_POLL, EVENT_WAIT, EVENT_DESTROY.
//
// Owns nothing beyond the handlers. wait_progress() is one look at a wait's
// events (the daemon's non-blocking seam, Session::check_wait); event_wait()
// repeats it until done. Decides how a wait blocks: without spinning,
// without holding the session lock while asleep, and woken only by the
// completion of an event it names (event_watch.hpp). Each round it
//   1. under the session lock, looks every handle up again (an event
//      destroyed by another thread meanwhile is then reported as an unknown
//      handle, never read after release) and asks its watch whether it is
//      done, subscribing the round's waiter to those that are not;
//   2. returns when all (VACCEL_WAIT_ALL) or any are done, or when the
//      absolute CLOCK_MONOTONIC timeout has passed (timeout 0: one round);
//   3. else sleeps until woken or the timeout passes.
// Subscribing in the same look as the check means a completion that lands
// between the look and the sleep wakes the sleep at once.
// "Done" is any state but pending: complete, failed and cancelled.
#include <chrono>
#include <cstdint>
#include <optional>

#include "args.hpp"
#include "ops.hpp"
#include "vaccel/common/recycling.hpp"
#include "vaccel/common/small_vector.hpp"

namespace vaccel::engine::ops {

Result<EventRecord*> client_event(SessionState& state, std::uint64_t handle)
{
    auto found = state.lookup<EventRecord>(handle);
    if (found && (*found)->run_ticket)
        return fail(Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE, handle);
    return found;
}

backend::EventStatus event_status(EventRecord& event, vaccel_status& failure)
{
    backend::EventStatus status =
        event.owner->device->call([&](backend::Backend& b) { return b.poll(*event.object); });
    const bool failed = status.state == backend::EventState::failed ||
                        status.state == backend::EventState::cancelled;
    failure = failed ? status.failure.to_status() : vaccel_status{};
    // Backends know no device index: name the device a lost event was on.
    if (failed && failure.detail == VACCEL_D_DEVICE_STATE)
        failure.arg0 = event.owner->device->index();
    return status;
}

Status event_poll(SessionState& state, vaccel_event_poll& args)
{
    auto found = client_event(state, args.event);
    if (!found)
        return fail(std::move(found.error()));
    args.state = static_cast<std::uint32_t>(event_status(**found, args.failure).state);
    return {};
}

Result<WaitProgress> wait_progress(SessionState& state, std::span<const std::uint64_t> handles,
                                   std::uint32_t flags, const std::shared_ptr<Waiter>& waiter)
{
    WaitProgress progress;
    std::optional<std::uint32_t> first;
    SmallVector<EventWatch*, VACCEL_MAX_WAIT_EVENTS> pending;
    std::lock_guard lock(state.mutex);
    for (std::uint32_t i = 0; i < handles.size(); ++i) {
        auto found = client_event(state, handles[i]);
        if (!found)
            return fail(std::move(found.error()));
        EventWatch& watch = *(*found)->watch;
        if (watch.done()) {
            ++progress.done_count;
            if (!first)
                first = i;
        } else {
            pending.push_back(&watch);
        }
    }
    progress.first_done = first.value_or(0);
    const bool all = (flags & VACCEL_WAIT_ALL) != 0;
    progress.satisfied = all ? progress.done_count == handles.size() : progress.done_count > 0;
    if (!progress.satisfied && waiter)
        for (EventWatch* watch : pending)
            if (!watch->subscribe(waiter))
                waiter->wake();  // done since the look: look again at once
    return progress;
}

Status event_wait(SessionState& state, vaccel_event_wait& args, std::span<const std::byte> payload)
{
    const auto handles = load_small_array<std::uint64_t, VACCEL_MAX_WAIT_EVENTS>(payload);
    std::optional<std::chrono::steady_clock::time_point> deadline;
    // A timeout beyond what steady_clock can represent (int64 nanoseconds,
    // ~292 years of uptime) is no timeout at all.
    constexpr std::uint64_t representable = static_cast<std::uint64_t>(INT64_MAX);
    if (args.timeout_ns != 0 && args.timeout_ns <= representable)
        deadline = std::chrono::steady_clock::time_point(
            std::chrono::nanoseconds(static_cast<std::int64_t>(args.timeout_ns)));
    const bool forever = args.timeout_ns > representable;
    // Ownership: watches keep the waiter until their event completes; it
    // outlives this call harmlessly (a late wake() sets a flag nobody reads).
    auto waiter = std::allocate_shared<SleepingWaiter>(Recycling<SleepingWaiter>{});

    for (;;) {
        const bool may_sleep = forever || (deadline && std::chrono::steady_clock::now() < *deadline);
        auto progress = wait_progress(state, handles, args.flags, may_sleep ? waiter : nullptr);
        if (!progress)
            return fail(std::move(progress.error()));
        args.done_count = progress->done_count;
        args.first_done = progress->first_done;
        if (progress->satisfied)
            return {};
        if (!may_sleep)
            return fail(Errc::deadline_expired, VACCEL_D_WAIT_TIMEOUT,
                        handles.size() - progress->done_count);
        waiter->sleep(deadline);
    }
}

Status destroy_event_record(SessionState& state, std::uint64_t handle, EventRecord& event)
{
    ContextRecord& context = *event.owner;
    auto released =
        context.device->call([&](backend::Backend& b) { return b.destroy_event(event.object); });
    if (!released) {
        // Busy while pending; the handle stays valid. The contract names the
        // event by its handle, never by anything of the backend's.
        Error error = std::move(released.error());
        if (error.detail == VACCEL_D_NOT_COMPLETE)
            error.arg0 = handle;
        return fail(std::move(error));
    }
    context.accounting->release(Resource::events, 1);
    --context.children;
    --event.queue->events;
    state.erase<EventRecord>(handle);
    return {};
}

Status event_destroy(SessionState& state, vaccel_handle_release& args)
{
    auto found = client_event(state, args.handle);
    if (!found)
        return fail(std::move(found.error()));
    return destroy_event_record(state, args.handle, **found);
}

}  // namespace vaccel::engine::ops
