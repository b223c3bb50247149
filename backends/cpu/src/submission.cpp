// submission.cpp - the end of a submission, and the gates that hold some back.
//
// Owns finish() (the one way a submission becomes terminal) and the gate
// operations that move submissions out of a gate's waiting list. Decides, for
// every party that may end a submission (a worker, a gate being destroyed,
// a cancellation, a device loss), that only the one whose phase exchange
// succeeds finishes it; see objects.hpp.
#include "submission.hpp"

#include <utility>

namespace vaccel::backend::cpu {

namespace {

// Leaves the context's unfinished list (a submission never tracked is in no
// list: nothing to do).
void untrack(Submission& submission)
{
    ContextState& context = *submission.context;
    std::lock_guard lock(context.unfinished_mutex);
    if (!submission.unfinished_prev && context.unfinished != &submission)
        return;
    Submission* prev = submission.unfinished_prev;
    Submission* next = submission.unfinished_next;
    (prev ? prev->unfinished_next : context.unfinished) = next;
    (next ? next->unfinished_prev : context.unfinished_last) = prev;
    submission.unfinished_prev = submission.unfinished_next = nullptr;
}

}  // namespace

void finish(Submission& submission, EventState state, Error failure)
{
    // Gates first, so an engine that sees the event terminal may at once
    // write, read or free the buffers and unload the program.
    for (Submission::Held& held : submission.held) {
        held.allocation->submissions.fetch_sub(1, std::memory_order_acq_rel);
        held.allocation->release(held.exclusive);
    }
    submission.held.clear();
    submission.program->in_flight.fetch_sub(1, std::memory_order_acq_rel);
    submission.backend->counters.events_in_flight.fetch_sub(1);
    submission.phase.store(Submission::Phase::done, std::memory_order_release);
    if (state == EventState::failed || state == EventState::cancelled)
        submission.failure = std::move(failure);
    EventStatus status{state, submission.failure};
    submission.state.store(static_cast<std::uint32_t>(state), std::memory_order_release);
    // Ownership: the sink may be the last thing keeping the engine's waiters
    // informed; it is told after the state is visible to poll().
    std::shared_ptr<EventSink> sink = std::move(submission.sink);
    untrack(submission);
    if (sink)
        sink->completed(status);
}

void track(Submission& submission)
{
    ContextState& context = *submission.context;
    std::lock_guard lock(context.unfinished_mutex);
    submission.unfinished_prev = context.unfinished_last;
    submission.unfinished_next = nullptr;
    if (context.unfinished_last)
        context.unfinished_last->unfinished_next = &submission;
    else
        context.unfinished = &submission;
    context.unfinished_last = &submission;
}

std::vector<std::shared_ptr<Submission>> unfinished_of(ContextState& context)
{
    std::vector<std::shared_ptr<Submission>> found;
    std::lock_guard lock(context.unfinished_mutex);
    for (Submission* submission = context.unfinished; submission;
         submission = submission->unfinished_next)
        found.push_back(submission->shared_from_this());
    return found;
}

std::uint64_t end_unstarted(std::span<const std::shared_ptr<Submission>> submissions,
                            EventState state, const Error& why)
{
    std::uint64_t ended = 0;
    for (const auto& submission : submissions) {
        if (submission->move(Submission::Phase::waiting, Submission::Phase::done) ||
            submission->move(Submission::Phase::queued, Submission::Phase::done)) {
            finish(*submission, state, why);
            ++ended;
        }
    }
    return ended;
}

Parked park_or_release(GateState& gate, std::uint64_t value,
                       const std::shared_ptr<Submission>& submission)
{
    std::lock_guard lock(gate.mutex);
    if (gate.open && gate.value < value) {
        gate.waiting.push_back({value, submission});
        return Parked::waiting;
    }
    if (!gate.open)
        return Parked::closed;
    return submission->move(Submission::Phase::waiting, Submission::Phase::queued)
               ? Parked::released
               : Parked::ended;
}

std::vector<std::shared_ptr<Submission>> raise(GateState& gate, std::uint64_t value)
{
    std::vector<std::shared_ptr<Submission>> released;
    std::lock_guard lock(gate.mutex);
    if (!gate.open || value <= gate.value)
        return released;
    gate.value = value;
    // Kept in arrival order: submissions released by one raise enter their
    // queues in the order they were made.
    std::erase_if(gate.waiting, [&](GateState::Waiter& waiter) {
        if (waiter.value > value)
            return false;
        if (waiter.submission->move(Submission::Phase::waiting, Submission::Phase::queued))
            released.push_back(std::move(waiter.submission));
        return true;  // released now, or already ended by someone else
    });
    return released;
}

std::vector<GateState::Waiter> close(GateState& gate)
{
    std::lock_guard lock(gate.mutex);
    gate.open = false;
    return std::exchange(gate.waiting, {});
}

}  // namespace vaccel::backend::cpu
