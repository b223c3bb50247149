// ops.hpp - the per-op handlers behind Session::call().
//
// Owns nothing. Decides: one handler per contract operation, grouped in one
// file per object (device_ops, context_ops, buffer_ops, program_ops,
// queue_ops, submit_ops, event_ops). Each handler receives the checked,
// aligned struct and its payload, fills the struct's outputs and returns the
// refusal, if any.
//
// Locking: Session::call() holds SessionState::mutex around every handler
// except event_wait (which takes and drops it itself, so that it never
// blocks other threads while it waits) and the device queries (which read
// immutable device data only).
#pragma once

#include <cstddef>
#include <span>

#include "vaccel.h"
#include "session_state.hpp"
#include "vaccel/engine/session.hpp"

namespace vaccel::engine::ops {

// device_ops.cpp (no session lock needed)
Status get_version(SessionState& state, vaccel_get_version& args);
Status device_count(SessionState& state, vaccel_device_count& args);
Status device_query(SessionState& state, vaccel_device_query& args);
Status device_tosa(SessionState& state, vaccel_device_tosa& args);

// context_ops.cpp
Status context_create(SessionState& state, vaccel_context_create& args);
Status context_destroy(SessionState& state, vaccel_handle_release& args);
Status context_limits(SessionState& state, vaccel_context_limits& args);

// buffer_ops.cpp
Status buffer_alloc(SessionState& state, vaccel_buffer_alloc& args);
Status buffer_free(SessionState& state, vaccel_handle_release& args);
Status buffer_write(SessionState& state, vaccel_buffer_transfer& args,
                    std::span<const std::byte> data);
Status buffer_read(SessionState& state, vaccel_buffer_transfer& args, std::span<std::byte> data);

// program_ops.cpp
Status program_load(SessionState& state, vaccel_program_load& args,
                    std::span<const std::byte> artifact);
Status program_unload(SessionState& state, vaccel_handle_release& args);
Status program_slot(SessionState& state, vaccel_program_slot& args);

// queue_ops.cpp
Status queue_create(SessionState& state, vaccel_queue_create& args);
Status queue_destroy(SessionState& state, vaccel_handle_release& args);

// submit_ops.cpp
Status submit(SessionState& state, vaccel_submit& args, std::span<const std::byte> bindings);
Status submit_after(SessionState& state, vaccel_submit_after& args,
                    std::span<const std::byte> bindings);

// launch_ops.cpp
Status launch(SessionState& state, vaccel_launch& args, std::span<const std::byte> payload);

// gate_ops.cpp
Status gate_create(SessionState& state, vaccel_gate_create& args);
Status gate_raise(SessionState& state, vaccel_gate_value& args);
Status gate_value(SessionState& state, vaccel_gate_value& args);
Status gate_destroy(SessionState& state, vaccel_handle_release& args);

// event_ops.cpp
Status event_poll(SessionState& state, vaccel_event_poll& args);
// One look at `handles` (the daemon's seam). Takes SessionState::mutex
// itself; called without it. When `waiter` is given and the wait is not
// satisfied, it is subscribed to every pending event looked at (woken when
// one completes; see event_watch.hpp).
Result<WaitProgress> wait_progress(SessionState& state, std::span<const std::uint64_t> handles,
                                   std::uint32_t flags,
                                   const std::shared_ptr<Waiter>& waiter = nullptr);
// Takes SessionState::mutex itself; called without it.
Status event_wait(SessionState& state, vaccel_event_wait& args, std::span<const std::byte> handles);
Status event_destroy(SessionState& state, vaccel_handle_release& args);

}  // namespace vaccel::engine::ops
