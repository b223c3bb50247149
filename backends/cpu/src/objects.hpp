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
//
// A submission's life is its `phase` (Submission::Phase): it is accepted
// `waiting` (for a gate) or `queued` (in the scheduler); a worker moves it
// queued -> running; cancellation and device loss move it waiting/queued ->
// done. Every move is a compare-exchange, so exactly one party finishes a
// submission (finish() in submission.cpp), whoever else still holds it
// (a gate's list, the run queue) drops it when its own exchange fails.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "vaccel/common/shared_memory.hpp"
#include <vector>

#include "arena_pool.hpp"
#include "fair_queue.hpp"
#include "plan.hpp"
#include "vaccel/backend/backend.hpp"
#include "vaccel/common/small_vector.hpp"

namespace vaccel::backend::cpu {

// Invariant (all fields): atomics, incremented by the engine thread when an
// object is created or a submission accepted, decremented by destructors
// (engine thread) or, for events_in_flight, by the worker completing it.
// The device's live objects (backend.hpp).
using Counters = LiveCounterCells;

struct GateState;

struct BackendState {
    vaccel_device_info info{};  // Invariant: written once when the backend opens, then read-only.
    Counters counters;
    // Buffer identities (Buffer::identity()): a serial, never an address.
    std::atomic<std::uint64_t> next_identity{1};

    // Device loss (real or injected). Set once, never cleared.
    std::atomic<bool> lost{false};
    // Fault injection ([devices.cpu] inject_loss_after): the submission that
    // would be accepted after this many is accepted indeterminately and the
    // device is lost. UINT64_MAX = never. `accepted` counts acceptances.
    std::uint64_t inject_loss_after = UINT64_MAX;
    std::atomic<std::uint64_t> accepted{0};

    // Every live gate, so that a device loss can fail the submissions that
    // wait on them. Guarded by gates_mutex (a leaf below a gate's mutex:
    // never take a gate's mutex while holding it).
    std::mutex gates_mutex;
    std::vector<std::weak_ptr<GateState>> live_gates;
};

struct Submission;

struct ContextState {
    std::shared_ptr<BackendState> backend;
    // Invariant: engine thread only (creation, release calls, destructors of
    // buffers/programs/queues/events, which the engine runs).
    std::uint64_t buffers = 0;
    std::uint64_t memory_bytes = 0;
    std::uint64_t programs = 0;
    std::uint64_t queues = 0;
    std::uint64_t events = 0;
    std::uint64_t gates = 0;
    // The context's share of the workers: its own, or its tenant's, which
    // every context of the tenant on this device shares (set by
    // set_context_schedule() before the context has queues). Its fields
    // belong to the scheduler (guarded by its mutex). Every queue's lane
    // points to it.
    std::shared_ptr<Flow> flow = std::make_shared<Flow>();

    // Submissions accepted and not finished, for cancel_pending(): a list
    // linked through the submissions themselves (no allocation per
    // submission). A submission links itself at acceptance and unlinks
    // itself in finish() under the mutex, before its last owner can drop
    // it: a pointer found here under the mutex is alive. Leaf lock.
    std::mutex unfinished_mutex;
    Submission* unfinished = nullptr;       // the oldest
    Submission* unfinished_last = nullptr;  // the newest

    std::uint64_t children() const { return buffers + programs + queues + gates; }
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

    // Aligned, allocation_bytes long. Ownership: freed by ~Allocation, unless
    // `shared` holds it (the buffer was mapped: BUFFER_MAP moved its bytes
    // into a memfd, and they stay there until the buffer is freed).
    std::byte* data = nullptr;
    SharedMemory shared;
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
    std::uint64_t identity() const override { return identity_; }

    std::shared_ptr<ContextState> context;
    std::shared_ptr<Allocation> allocation;

private:
    BufferDesc desc_;
    std::uint64_t identity_;
};

struct ProgramState {
    std::uint32_t format = VACCEL_FORMAT_TOSA;
    std::shared_ptr<const Plan> plan;  // TOSA programs; immutable after load
    // TOSA programs: the arenas runs compute in; the first is made at load.
    std::unique_ptr<ArenaPool> arenas;
    // TOSA programs with variables: their values between runs (Plan::variables
    // order), set from the declarations at load. Guarded by state_mutex,
    // which a run of the program holds from start to end (execute.cpp).
    std::mutex state_mutex;
    std::vector<std::vector<std::byte>> variables;
    // Invariant: +1 by the engine thread on accept, -1 by finish().
    std::atomic<std::uint64_t> in_flight{0};
    // TOSA programs: how long the latest completed run took (0: none yet);
    // the inline rule reads it (Scheduler::run_inline).
    std::atomic<std::uint64_t> last_run_ns{0};
};

class CpuProgram final : public Program {
public:
    CpuProgram(std::shared_ptr<ContextState> context, std::shared_ptr<ProgramState> state);
    ~CpuProgram() override;
    std::span<const SlotInfo> slots() const override
    {
        return state->plan ? std::span<const SlotInfo>(state->plan->slots)
                           : std::span<const SlotInfo>();
    }
    std::uint32_t input_count() const override
    {
        return state->plan ? state->plan->input_count : 0;
    }
    std::uint32_t format() const override { return state->format; }

    std::shared_ptr<ContextState> context;
    std::shared_ptr<ProgramState> state;
};

// One built-in kernel launch: the entry and its laid-out arguments.
struct BuiltinKernel;
struct KernelRun {
    const BuiltinKernel* kernel = nullptr;   // static table entry, never freed
    kernel_args::ParamBlock params;          // pointer args hold host addresses
    vaccel_launch_dims dims{};
};

// One accepted submission, from acceptance to its terminal state.
struct Submission : std::enable_shared_from_this<Submission> {
    struct Held {
        std::shared_ptr<Allocation> allocation;
        bool exclusive = false;
    };
    enum class Phase : std::uint32_t { waiting, queued, running, done };

    std::shared_ptr<BackendState> backend;
    std::shared_ptr<ContextState> context;
    std::shared_ptr<ProgramState> program;
    std::shared_ptr<Lane> lane;  // where it runs once released
    // Invariant: filled by the engine thread before the submission is queued;
    // read and finally cleared only by the party that finishes it.
    SmallVector<Held, VACCEL_MAX_BINDINGS> held;
    SmallVector<std::byte*, VACCEL_MAX_BINDINGS> slot_data;  // TOSA: per slot, data + offset
    std::unique_ptr<KernelRun> kernel;  // launches: what to run
    std::uint64_t deadline_ns = 0;      // absolute CLOCK_MONOTONIC, 0 = none
    std::shared_ptr<EventSink> sink;    // told once, by finish()

    // Links in the context's unfinished list; guarded by its mutex.
    Submission* unfinished_prev = nullptr;
    Submission* unfinished_next = nullptr;

    std::atomic<Phase> phase{Phase::queued};
    // Invariant: `failure` is written by finish() before `state` leaves
    // pending (release store) and never after; readers load `state` with
    // acquire before reading `failure`.
    std::atomic<std::uint32_t> state{VACCEL_EVENT_PENDING};
    Error failure{};

    // One compare-exchange of the phase; true when this caller made the move.
    bool move(Phase from, Phase to)
    {
        return phase.compare_exchange_strong(from, to, std::memory_order_acq_rel);
    }
};

// Ends a submission that the caller moved to `done` (or ran): gives back its
// buffer gates and program use, publishes `state` and `failure`, leaves the
// context's unfinished set and tells the sink. Exactly once per submission.
void finish(Submission& submission, EventState state, Error failure = {});

// A host gate: its value and the submissions waiting for it. Guarded by its
// mutex; released submissions are handed to `release` outside the lock.
struct GateState {
    std::shared_ptr<ContextState> context;
    std::mutex mutex;
    std::uint64_t value = 0;
    bool open = true;  // false once destroyed or the device is lost
    struct Waiter {
        std::uint64_t value;
        std::shared_ptr<Submission> submission;
    };
    std::vector<Waiter> waiting;
};

class CpuGate final : public Gate {
public:
    explicit CpuGate(std::shared_ptr<ContextState> context);
    ~CpuGate() override;
    std::shared_ptr<ContextState> context;
    std::shared_ptr<GateState> state;
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
    // One per submission: the memory is recycled.
    static void* operator new(std::size_t bytes);
    static void operator delete(void* p) noexcept;
    std::shared_ptr<ContextState> context;
    std::shared_ptr<Submission> submission;
};

std::uint64_t monotonic_ns();

}  // namespace vaccel::backend::cpu
