// gate.hpp - host gates (docs/adr/0008) on the Vulkan backend.
//
// Owns: GateState, one timeline VkSemaphore holding the gate's value, and
// the submissions parked on it.
// Decides (docs/adr/0013-vulkan-backend.md, "Host gates"):
//  - the value lives in the semaphore: raise = vkSignalSemaphore from the
//    host, value = vkGetSemaphoreCounterValue;
//  - a SUBMIT_AFTER is recorded and accepted at once but held on the host
//    until the gate reaches its value, and only then given to the queue
//    (waiting on the semaphore at that value). The device never holds work
//    that may be cancelled, so cancelling never has to run or discard it,
//    and a parked submission never blocks later work on the one queue.
// Locking: `mutex` guards `open`, `waiting` and the order of signal and
// park, so a submission is either parked before a raise sees it or sees
// the raised value itself.
#pragma once

#include <mutex>
#include <vector>

#include "objects.hpp"
#include "submit.hpp"

namespace vaccel::backend::vulkan {

struct GateState {
    std::shared_ptr<ContextState> owner;
    VkSemaphore semaphore = VK_NULL_HANDLE;
    struct Waiter {
        std::shared_ptr<SubmissionState> submission;
        std::uint64_t value;
    };
    std::mutex mutex;
    bool open = true;  // false once destroyed: nothing parks any more
    std::vector<Waiter> waiting;

    // Creates the semaphore; counts the gate in its context and device.
    static Result<std::shared_ptr<GateState>> create(std::shared_ptr<ContextState> owner);
    explicit GateState(std::shared_ptr<ContextState> o) : owner(std::move(o)) {}
    GateState(const GateState&) = delete;
    GateState& operator=(const GateState&) = delete;
    ~GateState();

    std::uint64_t value() const;
    // Parks `submission` until `value`; false when the gate already reached
    // it (the caller submits it now).
    bool park(std::shared_ptr<SubmissionState> submission, std::uint64_t value);
    // Raises to `value` (nothing when not higher) and returns the
    // submissions it released, in arrival order.
    Result<std::vector<std::shared_ptr<SubmissionState>>> raise(std::uint64_t value);
    // Closes the gate and returns what was still parked.
    std::vector<Waiter> close();
    // Takes what is parked without closing (cancel_pending).
    std::vector<Waiter> take();
};

struct VulkanGate final : Gate {
    std::shared_ptr<GateState> state;
    explicit VulkanGate(std::shared_ptr<GateState> s) : state(std::move(s)) {}
};

}  // namespace vaccel::backend::vulkan
