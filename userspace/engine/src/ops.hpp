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
// BUFFER_WRITE/BUFFER_READ before any byte moves: the handle, the device
// and the range, refused as the transfer itself would refuse them.
Status buffer_transfer_admits(SessionState& state, const vaccel_buffer_transfer& args);
// BUFFER_MAP: the buffer's shareable memory (`memory`, when given, receives
// it). Device buffers are refused (Incompatible, VACCEL_D_DOMAIN).
Status buffer_map(SessionState& state, vaccel_buffer_map& args,
                  backend::MappableMemory* memory = nullptr);

// program_ops.cpp
Status program_load(SessionState& state, vaccel_program_load& args,
                    std::span<const std::byte> artifact);
// PROGRAM_LOAD before its artifact is read: the context, the device and
// the artifact size limit, refused as the load itself would refuse them.
Status program_load_admits(SessionState& state, const vaccel_program_load& args);
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
// The event `handle` names as the client may use it: a RUN's ticket is
// refused as an unknown handle. Caller holds SessionState::mutex.
Result<EventRecord*> client_event(SessionState& state, std::uint64_t handle);
// The state of `event` and, when it failed or was cancelled, why. Caller
// holds SessionState::mutex.
backend::EventStatus event_status(EventRecord& event, vaccel_status& failure);
// Destroys `event` (its handle `handle`) when it is no longer pending.
// Caller holds SessionState::mutex.
Status destroy_event_record(SessionState& state, std::uint64_t handle, EventRecord& event);
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

// session.cpp: the struct rules and the payload size every request meets
// before its handler (check_request_wire, request_payload_size).
Status check_wire(std::uint32_t opcode, std::span<const std::byte> args,
                  std::size_t payload_bytes);

// run_ops.cpp: RUN, as a ticket (an event only the transport sees).
// Submits as SUBMIT does; `ticket` is set once the work was accepted (also
// with an indeterminate error). Caller holds SessionState::mutex.
Status run_begin(SessionState& state, vaccel_run& args, std::span<const std::byte> bindings,
                 std::uint64_t& ticket);
// Whether the ticket's work has ended; subscribes `waiter` when it has not
// (woken at its end). Takes SessionState::mutex itself.
Result<bool> run_ended(SessionState& state, std::uint64_t ticket,
                       const std::shared_ptr<Waiter>& waiter);
// Writes the outcome (state, failure) into `args` and drops the ticket.
// Caller holds SessionState::mutex; the work has ended.
Status run_finish(SessionState& state, std::uint64_t ticket, vaccel_run& args);
// The whole RUN, blocking until the work ended (embedded). Takes
// SessionState::mutex itself, released while it sleeps.
Status run(SessionState& state, vaccel_run& args, std::span<const std::byte> bindings);

}  // namespace vaccel::engine::ops
