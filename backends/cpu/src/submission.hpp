// submission.hpp - ending submissions and moving them through gates.
//
// Owns nothing; the functions of submission.cpp. Every function that ends a
// submission exchanges its phase first (objects.hpp), so a submission is
// finished exactly once whoever races for it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "objects.hpp"

namespace vaccel::backend::cpu {

// Puts an accepted submission in its context's unfinished set (before it is
// queued or parked, so cancel_pending() can always find it).
void track(Submission& submission);

// The context's accepted, unfinished submissions, held alive, oldest first.
std::vector<std::shared_ptr<Submission>> unfinished_of(ContextState& context);

// Finishes, with `state` and `why`, every submission of the list that has
// not started (waiting or queued). Returns how many it ended.
std::uint64_t end_unstarted(std::span<const std::shared_ptr<Submission>> submissions,
                            EventState state, const Error& why);

// submit_after, for a submission accepted in phase `waiting`: parks it on
// the gate (waiting), or, when the gate already reached `value`, moves it to
// queued for the caller to enqueue (released); `ended` when someone else
// ended it meanwhile, `closed` when the gate no longer takes waiters (the
// caller ends it).
enum class Parked { waiting, released, ended, closed };
Parked park_or_release(GateState& gate, std::uint64_t value,
                       const std::shared_ptr<Submission>& submission);

// Raises the gate; returns the submissions it released (moved waiting ->
// queued), in arrival order, for the caller to enqueue.
std::vector<std::shared_ptr<Submission>> raise(GateState& gate, std::uint64_t value);

// Closes the gate (destroyed, or its device lost); returns the submissions
// that were still waiting, with the values they awaited, for the caller to
// end.
std::vector<GateState::Waiter> close(GateState& gate);

}  // namespace vaccel::backend::cpu
