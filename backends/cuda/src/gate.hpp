// gate.hpp - host gates (docs/adr/0008) on a CUDA device.
//
// Decides (docs/adr/0018-cuda-backend.md): the gate is a value on the host;
// a SUBMIT_AFTER is accepted at once and held on the host until the gate
// reaches its value, and only then put on its stream. The device never
// holds work that may be cancelled, and a parked submission never blocks
// later work on its stream.
// Locking: `mutex` guards everything, so a submission is either parked
// before a raise sees it or sees the raised value itself.
#pragma once

#include <mutex>
#include <vector>

#include "objects.hpp"

namespace vaccel::backend::cuda {

struct GateState {
    std::shared_ptr<ContextState> owner;
    struct Waiter {
        std::shared_ptr<SubmissionState> submission;
        std::uint64_t value;
    };

    explicit GateState(std::shared_ptr<ContextState> o);
    GateState(const GateState&) = delete;
    GateState& operator=(const GateState&) = delete;
    ~GateState();

    std::uint64_t value() const;
    // Parks `submission` until `value`; false when the gate is there
    // already (the caller starts it now).
    bool park(std::shared_ptr<SubmissionState> submission, std::uint64_t value);
    // Raises to `value` (nothing when not higher); returns what it
    // released, in arrival order.
    std::vector<std::shared_ptr<SubmissionState>> raise(std::uint64_t value);
    // Closes the gate and returns what was parked.
    std::vector<Waiter> close();
    // Takes what is parked without closing (cancel_pending).
    std::vector<Waiter> take();

private:
    mutable std::mutex mutex_;
    std::uint64_t value_ = 0;
    bool open_ = true;
    std::vector<Waiter> waiting_;
};

struct CudaGate final : Gate {
    std::shared_ptr<GateState> state;
    explicit CudaGate(std::shared_ptr<GateState> s) : state(std::move(s)) {}
};

}  // namespace vaccel::backend::cuda
