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
//  - teardown: the destructor waits for in-flight events, then releases
//    events, queues, programs, buffers and finally contexts, so that the
//    backends' LiveCounters return to what they were before the session.
//
// Thread-safety: call() may be made from several threads at once. One mutex
// per session guards the table and the records; it is held across backend
// calls (lock order in device_manager.hpp) but released while an EVENT_WAIT
// blocks, so other threads of the same client keep submitting meanwhile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "vaccel/common/error.hpp"
#include "vaccel/engine/device_manager.hpp"
#include "vaccel/engine/limit_policy.hpp"

namespace vaccel::engine {

struct SessionState;

struct SessionOptions {
    SessionIdentity identity{};
    // nullptr = the default policy (each device's own limits).
    std::shared_ptr<const LimitPolicy> policy;
    // Objects of all kinds alive at once in this session.
    std::uint32_t handle_capacity = 1u << 16;
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

    // Objects alive in this session (all kinds).
    std::uint32_t object_count() const;

private:
    std::unique_ptr<SessionState> state_;
};

}  // namespace vaccel::engine
