// session.hpp - one client's view of the engine.
//
// Owns: every object one client created (contexts, buffers, programs,
// queues, events), in ONE handle table per session covering all five kinds:
// a handle of the wrong kind is then reported as WRONG_HANDLE_KIND rather
// than "unknown", and a handle from another session (another table, another
// tag) is unknown. Also owns the session's accounting: per context (buffers,
// memory bytes, programs, queues, events against the context's effective
// limits) and per device (the session's contexts).
//
// Decides:
//  - the single entry point call(): the op's uapi struct as on the wire
//    (user-pointer fields zero; payload bytes passed separately), checked by
//    check_request_wire(), dispatched to the per-object handlers, outputs
//    written back into args. The caller writes the returned Error into the
//    struct's status (the transport's job, so every transport does it once).
//  - check-then-commit: every limit is checked before the backend is called
//    and committed only when the backend call succeeded; a failed call
//    changes no counter and no table.
//  - teardown: the destructor cancels work that has not started (events
//    CANCELLED, VACCEL_D_SESSION_CLOSED), waits for running work, then
//    releases events, gates, queues, programs, buffers and finally
//    contexts, so that the backends' LiveCounters return to what they were
//    before the session. The daemon runs it off its admin thread.
//
// Daemon seams (the embedded transport needs none of them): route() names
// the device a request is for without waiting on anything, check_wait() is
// EVENT_WAIT without blocking, stats() the session's use for the admin
// channel.
//
// Thread-safety: call() may be made from several threads at once. One mutex
// per session guards the table and the records; it is held across backend
// calls (lock order in device_manager.hpp) but released while an EVENT_WAIT
// blocks, so other threads of the same client keep submitting meanwhile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "vaccel/common/error.hpp"
#include "vaccel/engine/device_manager.hpp"
#include "vaccel/engine/event_watch.hpp"
#include "vaccel/engine/limit_policy.hpp"
#include "vaccel/engine/tenants.hpp"

namespace vaccel::engine {

struct SessionState;

// One session's use, for the admin channel and metrics.
struct SessionStats {
    std::uint64_t contexts = 0;
    std::uint64_t buffers = 0;
    std::uint64_t memory_bytes = 0;      // bytes charged to its buffers
    std::uint64_t programs = 0;
    std::uint64_t queues = 0;
    std::uint64_t gates = 0;
    std::uint64_t events = 0;            // events alive (pending or done)
    std::uint64_t events_in_flight = 0;  // events still pending
    std::uint64_t submissions = 0;       // accepted since the session began
    std::uint64_t errors = 0;            // refusals since the session began
};

// Where an EVENT_WAIT stands, looked at once (Session::check_wait).
struct WaitProgress {
    std::uint32_t done_count = 0;  // events not pending
    std::uint32_t first_done = 0;  // index of the first done event (0 if none)
    bool satisfied = false;        // all (VACCEL_WAIT_ALL) or any are done
};

// A buffer's memory as BUFFER_MAP shares it (Session::buffer_mapping).
// Ownership: `fd` is the caller's (a duplicate of the buffer's memfd; close
// it); `address` is valid until the buffer is freed.
struct BufferMapping {
    std::byte* address = nullptr;
    int fd = -1;
    std::uint64_t offset = 0;  // where the buffer starts in `fd`
    std::uint64_t bytes = 0;   // the buffer's size
};

struct SessionOptions {
    SessionIdentity identity{};
    // nullptr = the default policy (each device's own limits).
    std::shared_ptr<const LimitPolicy> policy;
    // Objects of all kinds alive at once in this session.
    std::uint32_t handle_capacity = 1u << 16;
    // The session's seat in its tenant (Tenants::admit, with `policy`);
    // empty: a tenant of its own with no totals (the embedded transport).
    TenantSeat tenant;
};

class Session {
public:
    explicit Session(std::shared_ptr<DeviceManager> devices, SessionOptions options = {});
    // Waits for in-flight work, then releases everything the session owns.
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Runs one contract operation. `args` is the op's struct (sizeof exact,
    // status zero, user-pointer fields zero); `in_payload` the request
    // payload the wire rules name (write data, artifact, bindings, wait
    // handles), exactly that size; `out_payload` the BUFFER_READ destination,
    // exactly `length` bytes. On return the op's outputs are in args (status
    // untouched); the result is the Error to report.
    Status call(std::uint32_t opcode, std::span<std::byte> args,
                std::span<const std::byte> in_payload, std::span<std::byte> out_payload);

    // Teardown without blocking, for a daemon whose client has gone: cancels
    // the work that has not started (CANCELLED, VACCEL_D_SESSION_CLOSED) and
    // subscribes `waiter` to the events still running. True when nothing is
    // pending any more: destroying the session then waits for nothing. Call
    // again after `waiter` wakes. The client must make no more calls.
    bool quiesce(const std::shared_ptr<Waiter>& waiter);

    // The lowest index of a device this session has objects on; nullopt
    // when it has none. Leaf lock only (like route()).
    std::optional<std::uint32_t> first_device() const;

    // Objects alive in this session (all kinds).
    std::uint32_t object_count() const;

    const SessionIdentity& identity() const;
    // The tenant the session was admitted to (fixed for its life).
    const TenantId& tenant() const;

    // Takes the session lock and device locks (pending events are polled):
    // not for a thread that must never block.
    SessionStats stats() const;

    // The non-blocking half of EVENT_WAIT: looks at `events` once, under the
    // session lock, and says how many are done. An unknown or wrong-kind
    // handle is refused exactly as EVENT_WAIT refuses it. When the wait is
    // not satisfied and `waiter` is given, the waiter is subscribed to every
    // pending event it names, in the same look: a completion after the look
    // wakes it, so none is ever missed (event_watch.hpp). Counts a refusal in
    // stats().errors.
    Result<WaitProgress> check_wait(std::span<const std::uint64_t> events, std::uint32_t flags,
                                    const std::shared_ptr<Waiter>& waiter = nullptr);

    // RUN without blocking, for a transport that parks it: begin_run()
    // checks and submits as call(VACCEL_OP_RUN) would (args and bindings as
    // on the wire; a refusal comes back with ticket 0 and nothing ran);
    // once accepted, `ticket` names the work. run_done() says whether it
    // ended, subscribing `waiter` (woken at its end) when it has not.
    // finish_run() writes state and failure into args and drops the
    // ticket; call it once, after run_done() said true. A ticket is no
    // handle the client can name (its event ops refuse it).
    Status begin_run(std::span<std::byte> args, std::span<const std::byte> bindings,
                     std::uint64_t& ticket);
    Result<bool> run_done(std::uint64_t ticket, const std::shared_ptr<Waiter>& waiter);
    Status finish_run(std::uint64_t ticket, std::span<std::byte> args);
    // For a transport that reads a request's payload from elsewhere (the
    // kernel transport's slot): refuses a BUFFER_WRITE, BUFFER_READ or
    // PROGRAM_LOAD whose handle, device, range or size limit call() would
    // refuse, before a byte of its payload is allocated or read; the
    // refusal is the one call() gives. Any other op: ok. `args` passed
    // check_request_wire(). Takes the session lock briefly; counts a
    // refusal in stats().errors.
    Status admit_payload(std::uint32_t opcode, std::span<const std::byte> args);
    // BUFFER_MAP's memory for a transport that shares it: what
    // call(VACCEL_OP_BUFFER_MAP) checks, plus the memory itself.
    Result<BufferMapping> buffer_mapping(std::uint64_t buffer);
    // Woken each time any event of this session completes (submissions
    // made after the call). The daemon makes the session's descriptor
    // readable with it.
    void set_completion_listener(std::shared_ptr<Waiter> listener);

    // Counts a refusal the transport produced for this session (a parked
    // wait's timeout), so stats().errors covers every refusal the client saw.
    void count_refusal();

    // Which device a request (already passed check_request_wire and its
    // payload size) is for: the device its handle's object lives on, or the
    // index a CONTEXT_CREATE names. nullopt for the device-less ops
    // (GET_VERSION, DEVICE_COUNT, DEVICE_QUERY, DEVICE_TOSA), which never
    // take the session lock and may run on any thread. A handle this session does not know
    // (or an index past the devices) routes to device 0, where call() then
    // refuses it as usual. Takes only a leaf lock that is never held across
    // a backend call: safe on a thread that must never block on a device.
    std::optional<std::uint32_t> route(std::uint32_t opcode, std::span<const std::byte> args,
                                       std::span<const std::byte> in_payload) const;

private:
    Status dispatch(std::uint32_t opcode, std::span<std::byte> args,
                    std::span<const std::byte> in_payload, std::span<std::byte> out_payload);

    std::unique_ptr<SessionState> state_;
};

}  // namespace vaccel::engine
