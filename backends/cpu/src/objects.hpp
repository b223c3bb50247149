// objects.hpp - the CPU backend's objects and the state they share with its workers.
//
// Owns: the concrete Context, Buffer, Program, Queue and Event types and the
// states behind them. Decides who may touch what:
//  - the engine thread (one at a time, see backend.hpp) creates and releases
//    objects, acquires in-flight gates and enqueues submissions;
//  - worker threads run submissions, then release the gates they hold,
//    decrement the program's in-flight count and publish the event state.
// Ownership: every object holds a shared_ptr to the states it needs
// (BackendState, ContextState, Allocation, ProgramState), and a submission
// holds shared_ptrs to the allocations it binds and to its program, so a
// worker never touches freed memory even if the engine drops an object
// without releasing it. The release calls (free_buffer, unload_program, ...)
// still refuse with Busy while work is in flight: that is the contract.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "fair_queue.hpp"
#include "plan.hpp"
#include "vaccel/backend/backend.hpp"

namespace vaccel::backend::cpu {

// Invariant (all fields): atomics, incremented by the engine thread when an
// object is created or a submission accepted, decremented by destructors
// (engine thread) or, for events_in_flight, by the worker completing it.
struct Counters {
    std::atomic<std::uint64_t> contexts{0};
    std::atomic<std::uint64_t> buffers{0};
    std::atomic<std::uint64_t> buffer_bytes{0};
    std::atomic<std::uint64_t> programs{0};
    std::atomic<std::uint64_t> queues{0};
    std::atomic<std::uint64_t> events{0};
    std::atomic<std::uint64_t> events_in_flight{0};
};

struct BackendState {
    vaccel_device_info info{};  // Invariant: written once when the backend opens, then read-only.
    Counters counters;

    // Invariant: set by the engine thread before the first submit; called by
    // workers under notify_mutex (the callback must not call back in).
    std::mutex notify_mutex;
    std::function<void()> notify;

    void notify_completion()
    {
        std::lock_guard lock(notify_mutex);
        if (notify) notify();
    }
};

struct ContextState {
    std::shared_ptr<BackendState> backend;
    // Invariant: engine thread only (creation, release calls, destructors of
    // buffers/programs/queues/events, which the engine runs).
    std::uint64_t buffers = 0;
    std::uint64_t memory_bytes = 0;
    std::uint64_t programs = 0;
    std::uint64_t queues = 0;
    std::uint64_t events = 0;
    // The context's share of the workers; its fields belong to the scheduler
    // (guarded by its mutex). Every queue's lane points to it.
    std::shared_ptr<Flow> flow = std::make_shared<Flow>();

    std::uint64_t children() const { return buffers + programs + queues; }
};

class CpuContext final : public Context {
public:
    explicit CpuContext(std::shared_ptr<ContextState> state);
    ~CpuContext() override;
    std::shared_ptr<ContextState> state;
};

// The memory of one buffer and its in-flight gate.
struct Allocation {
    static constexpr std::uint64_t exclusive = std::uint64_t{1} << 63;

    std::byte* data = nullptr;  // aligned, allocation_bytes long, freed by ~Allocation
    std::uint64_t bytes = 0;
    std::uint64_t allocation_bytes = 0;

    // The gate: 0 = free, n < exclusive = n reading submissions, exclusive =
    // one writing submission.
    // Invariant: the engine thread acquires (compare-exchange, in submit);
    // workers release when a submission completes. Any non-zero value means
    // in flight: transfers and free are refused.
    std::atomic<std::uint64_t> gate{0};
    // Invariant: submissions in flight that bind this allocation; +1 by the
    // engine thread after all gates of a submission are acquired, -1 by the
    // worker before it releases the gate.
    std::atomic<std::uint64_t> submissions{0};

    ~Allocation();
    bool acquire(bool exclusive_access);
    void release(bool exclusive_access);
};

class CpuBuffer final : public Buffer {
public:
    CpuBuffer(std::shared_ptr<ContextState> context, const BufferDesc& desc,
              std::shared_ptr<Allocation> allocation);
    ~CpuBuffer() override;
    const BufferDesc& desc() const override { return desc_; }
    std::uint64_t in_flight() const override
    {
        return allocation->submissions.load(std::memory_order_acquire);
    }
    std::uint64_t identity() const { return reinterpret_cast<std::uintptr_t>(this); }

    std::shared_ptr<ContextState> context;
    std::shared_ptr<Allocation> allocation;

private:
    BufferDesc desc_;
};

struct ProgramState {
    std::shared_ptr<const Plan> plan;  // immutable after load
    // Invariant: +1 by the engine thread on accept, -1 by the worker on completion.
    std::atomic<std::uint64_t> in_flight{0};
};

class CpuProgram final : public Program {
public:
    CpuProgram(std::shared_ptr<ContextState> context, std::shared_ptr<ProgramState> state);
    ~CpuProgram() override;
    std::span<const SlotInfo> slots() const override { return state->plan->slots; }
    std::uint32_t input_count() const override { return state->plan->input_count; }

    std::shared_ptr<ContextState> context;
    std::shared_ptr<ProgramState> state;
};

// One accepted submission, from acceptance to its terminal state.
struct Submission {
    struct Held {
        std::shared_ptr<Allocation> allocation;
        bool exclusive = false;
    };

    std::shared_ptr<BackendState> backend;
    std::shared_ptr<ProgramState> program;
    // Invariant: filled by the engine thread before the submission is queued;
    // read and finally cleared only by the worker running it.
    std::vector<Held> held;
    std::vector<std::byte*> slot_data;  // per slot: buffer data + binding offset
    std::uint64_t deadline_ns = 0;      // absolute CLOCK_MONOTONIC, 0 = none

    // Invariant: `failure` is written by the worker before `state` leaves
    // pending (release store) and never after; readers load `state` with
    // acquire before reading `failure`.
    std::atomic<std::uint32_t> state{VACCEL_EVENT_PENDING};
    Error failure{};
};

class CpuQueue final : public Queue {
public:
    CpuQueue(std::shared_ptr<ContextState> context);
    ~CpuQueue() override;
    std::shared_ptr<ContextState> context;
    std::shared_ptr<Lane> lane = std::make_shared<Lane>(context->flow);
};

class CpuEvent final : public Event {
public:
    CpuEvent(std::shared_ptr<ContextState> context, std::shared_ptr<Submission> submission);
    ~CpuEvent() override;
    std::shared_ptr<ContextState> context;
    std::shared_ptr<Submission> submission;
};

std::uint64_t monotonic_ns();

}  // namespace vaccel::backend::cpu
