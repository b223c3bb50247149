// objects.hpp - the CUDA backend's objects: the device, contexts, buffers,
// queues, programs and accepted submissions.
//
// Ownership: every object holds a shared_ptr to what it lives in (a buffer
// to its context, a context to its device), so a CUDA context is destroyed
// only after everything made in it; cuCtxDestroy releases what is left.
// Threading (backend.hpp): calls come from the engine's device thread, and
// load_program from other threads; counters that load_program touches are
// atomics. Every driver call is made with its context current: pushed on
// the calling thread's context stack for the call's span and popped after
// (ContextState::enter), so the backend never changes what the thread had
// current (an application using CUDA itself, embedded).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "driver.hpp"
#include "profile.hpp"
#include "vaccel/backend/backend.hpp"
#include "vaccel/backend/cuda.hpp"
#include "vaccel/sched/slicing.hpp"
#include "vaccel/tosa/plan.hpp"

namespace vaccel::backend::cuda {

// What the backend reads of a device once, at open.
struct DeviceFacts {
    int compute_major = 0;
    int compute_minor = 0;
    int multiprocessors = 0;
    int max_threads_per_block = 0;
    int max_block[3] = {};
    int max_grid[3] = {};
    int max_shared_per_block = 0;  // without opting in
    int max_shared_optin = 0;      // with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    bool managed_memory = false;
    bool mapped_host_memory = false;
};

// The device's live objects (backend.hpp).
using Counters = LiveCounterCells;

struct DeviceCore {
    const Driver* cu = nullptr;
    CUdevice device = 0;
    std::uint32_t ordinal = 0;  // the driver's device index
    vaccel_device_info info{};
    DeviceFacts facts;
    CudaOptions options;
    Counters counters;
    std::atomic<bool> lost{false};
    std::atomic<std::uint64_t> next_identity{1};
    // Fault injection (CudaOptions): accepted submissions so far.
    std::uint64_t inject_loss_after = UINT64_MAX;
    std::uint64_t accepted = 0;

    // An error for a failed driver call: DeviceLost when the device is gone,
    // OutOfMemory for exhausted memory, else External; `what` is the action.
    Error error(CUresult result, std::string_view what) const;
};

// The span in which a context is current on this thread (push, then pop).
class ScopedContext {
public:
    ScopedContext(const Driver& cu, CUcontext context);
    ScopedContext(ScopedContext&& other) noexcept : cu_(other.cu_) { other.cu_ = nullptr; }
    ScopedContext(const ScopedContext&) = delete;
    ScopedContext& operator=(const ScopedContext&) = delete;
    ScopedContext& operator=(ScopedContext&&) = delete;
    ~ScopedContext();
    bool pushed() const { return cu_ != nullptr; }

private:
    const Driver* cu_;  // null once moved from or when the push failed
};

struct ContextState {
    std::shared_ptr<DeviceCore> device;
    CUcontext context = nullptr;
    // Children, for destroy_context's refusal and the limits.
    std::uint64_t buffers = 0;
    std::atomic<std::uint64_t> memory_bytes{0};  // buffers and program arenas (load_program too)
    std::uint64_t queues = 0;
    std::atomic<std::uint64_t> programs{0};
    std::atomic<std::uint64_t> gates{0};
    // The TOSA kernels' modules (kernels/cuda), loaded on first use.
    std::mutex modules_mutex;
    std::map<std::string, CUmodule, std::less<>> modules;
    // A kernel of this context faulted: CUDA makes the error sticky (for the
    // whole process), so every later call is refused with `fault` (set once,
    // before `faulted`).
    std::atomic<bool> faulted{false};
    Error fault;

    explicit ContextState(std::shared_ptr<DeviceCore> d) : device(std::move(d)) {}
    ContextState(const ContextState&) = delete;
    ContextState& operator=(const ContextState&) = delete;
    ~ContextState();

    // Makes the CUDA context current on the calling thread until the
    // returned scope ends.
    Result<ScopedContext> enter() const;
    // Refused when the context faulted or the device was lost.
    Status usable() const;
    // Records the first fault (the failing call's result) and marks the
    // context faulted; later calls are refused with it.
    void poison(CUresult result, std::string_view what);
};

struct CudaContext final : Context {
    std::shared_ptr<ContextState> state;
    explicit CudaContext(std::shared_ptr<ContextState> s) : state(std::move(s)) {}
};

class CudaBuffer final : public Buffer {
public:
    CudaBuffer(std::shared_ptr<ContextState> o, const BufferDesc& d) : owner(std::move(o)), desc_(d) {}
    CudaBuffer(const CudaBuffer&) = delete;
    CudaBuffer& operator=(const CudaBuffer&) = delete;
    ~CudaBuffer() override;
    const BufferDesc& desc() const override { return desc_; }
    std::uint64_t in_flight() const override { return readers.load() + writers.load(); }
    std::uint64_t identity() const override { return serial; }

    std::shared_ptr<ContextState> owner;
    CUdeviceptr address = 0;     // what kernels use
    std::byte* host = nullptr;   // Host (pinned, mapped) and Shared (managed): the host's view
    std::uint64_t allocation_bytes = 0;
    std::uint64_t serial = 0;
    bool counted = false;
    // Accepted, unfinished submissions binding it (the in-flight rules).
    std::atomic<std::uint64_t> readers{0};
    std::atomic<std::uint64_t> writers{0};

private:
    BufferDesc desc_;
};

struct QueueState {
    std::shared_ptr<ContextState> owner;
    CUstream stream = nullptr;
    explicit QueueState(std::shared_ptr<ContextState> o) : owner(std::move(o)) {}
    QueueState(const QueueState&) = delete;
    QueueState& operator=(const QueueState&) = delete;
    ~QueueState();
};

struct CudaQueue final : Queue {
    std::shared_ptr<QueueState> state;
    explicit CudaQueue(std::shared_ptr<QueueState> s) : state(std::move(s)) {}
};

// One kernel launch of a TOSA program's plan, resolved at load.
struct PlannedLaunch {
    CUfunction function = nullptr;
    std::uint32_t grid = 1;
    std::uint32_t block = 1;
    std::uint32_t shared_bytes = 0;
    tosa::KernelSpec kernel;
    // What it runs, for the profile: the operator and the kernel's entry
    // name (static storage: kernels.cpp's table).
    std::uint32_t op_index = 0;
    tosa::Op op = tosa::Op::unknown;
    std::string_view function_name;
    // The kernel's entry that takes a k range (a part of a run cut over k,
    // slicing.hpp); null when it has none.
    CUfunction k_function = nullptr;
};

struct ProgramState {
    std::shared_ptr<ContextState> owner;
    std::uint32_t format = VACCEL_FORMAT_TOSA;
    std::vector<SlotInfo> slots;
    // TOSA: the plan's launches and the arena (slots, then the arena, are
    // the kernels' buffers; kernels/cuda/dispatch.h).
    std::vector<PlannedLaunch> launches;
    CUdeviceptr arena = 0;
    std::uint64_t arena_bytes = 0;
    // Runs of one program share its arena, so each waits for the one
    // before it, whatever queue it is on: the last run's end.
    CUevent last_run = nullptr;
    // TOSA: the launches of a run recorded as CUDA graphs, one per set of
    // buffer addresses the runs were bound to (the kernels take them by
    // value) and cut (a graph per segment, recorded as each first runs),
    // the most recently used last; at most max_recorded_runs, the least
    // recently used destroyed first. Under graphs_mutex (runs of one
    // program may be enqueued from two queues at once); the execs are
    // destroyed with the program.
    struct RecordedRun {
        std::vector<CUdeviceptr> buffers;
        std::shared_ptr<const sched::Cut> cut;  // null: the run whole
        std::vector<CUgraphExec> segments;      // null until recorded
    };
    static constexpr std::size_t max_recorded_runs = 4;
    bool use_graphs = true;  // VACCEL_CUDA_GRAPHS at load (program.hpp)
    std::mutex graphs_mutex;
    std::vector<RecordedRun> recorded;
    // VACCEL_CUDA_PROFILE (profile.hpp): set at load when profiled (then
    // use_graphs is false); reported and its events destroyed with the program.
    std::unique_ptr<ProgramProfile> profile;
    // Slicing (slicing.hpp): each launch's device time as the first run
    // measured it, taken by the one submission that moves `costs_state`
    // from unmeasured to measuring; the cut made from it (null: runs go
    // whole). `cut` and `costs` under cut_mutex; cost_events (launches + 1
    // timing events) are made by that run and destroyed with the program.
    enum CostState : int { unmeasured = 0, measuring = 1, measured = 2 };
    std::atomic<int> costs_state{unmeasured};
    std::vector<CUevent> cost_events;
    std::mutex cut_mutex;
    std::vector<sched::DispatchCost> costs;
    std::shared_ptr<const sched::Cut> cut;
    // PTX and cubin: the module, its functions by entry name.
    CUmodule module = nullptr;
    std::mutex functions_mutex;
    std::map<std::string, CUfunction, std::less<>> functions;
    std::atomic<std::uint64_t> in_flight{0};
    bool counted = false;

    explicit ProgramState(std::shared_ptr<ContextState> o) : owner(std::move(o)) {}
    ProgramState(const ProgramState&) = delete;
    ProgramState& operator=(const ProgramState&) = delete;
    ~ProgramState();
};

struct CudaProgram final : Program {
    std::shared_ptr<ProgramState> state;
    explicit CudaProgram(std::shared_ptr<ProgramState> s) : state(std::move(s)) {}
    std::span<const SlotInfo> slots() const override { return state->slots; }
    std::uint32_t input_count() const override
    {
        std::uint32_t n = 0;
        for (const SlotInfo& s : state->slots) n += s.role == VACCEL_SLOT_INPUT ? 1 : 0;
        return n;
    }
    std::uint32_t format() const override { return state->format; }
    std::uint64_t device_bytes() const override { return state->arena_bytes; }
};

struct GateState;

// A raw kernel's launch, ready to go to its stream.
struct KernelLaunch {
    CUfunction function = nullptr;
    vaccel_launch_dims dims{};
    std::vector<std::byte> params;  // the parameter block (kernel_args::lay_out)
};

// One accepted submission or launch, from acceptance to its report.
struct SubmissionState {
    std::shared_ptr<QueueState> queue;
    std::shared_ptr<ProgramState> program;
    std::optional<KernelLaunch> launch;  // a raw kernel, else the program's plan
    std::vector<CUdeviceptr> buffers;    // the plan's buffers: slot addresses, then the arena
    struct Held {
        CudaBuffer* buffer;  // alive: free_buffer is refused while held
        bool writes;
    };
    std::vector<Held> held;
    std::shared_ptr<GateState> gate;  // a SUBMIT_AFTER's, until it starts
    std::uint64_t after_value = 0;
    std::uint64_t deadline_ns = 0;
    CUevent done = nullptr;  // recorded after the work, on the queue's stream
    // A run cut into segments (slicing.hpp): the cut it was accepted with
    // (null: one segment, the whole run), the next segment to go on the
    // stream, and two timing events around each segment that went (made as
    // it goes, destroyed with the submission), whose spans become used_ns
    // as each ends. A run between segments waits in the backend's held
    // list for its next start_held(). `measures_costs`: this run times
    // each launch for the program's costs (its cost_events), and is whole.
    std::shared_ptr<const sched::Cut> cut;
    std::uint32_t next_segment = 0;
    std::vector<CUevent> marks;
    std::vector<std::uint64_t> used_ns;
    bool measures_costs = false;
    // Reported once: the first finish() sets it (the completion thread and
    // a cancel may both try to end a run cut into segments).
    std::atomic<bool> reported{false};
    // A launch after the first was refused by the driver, or a run cut into
    // segments was cancelled between them: what did go to the stream runs,
    // and the event ends with this (as partial_state) once it is done.
    std::optional<Error> partial;
    EventState partial_state = EventState::failed;
    std::shared_ptr<EventSink> sink;
    std::atomic<std::uint32_t> state{VACCEL_EVENT_PENDING};
    Error failure;  // written before `state` leaves pending

    SubmissionState() = default;
    SubmissionState(const SubmissionState&) = delete;
    SubmissionState& operator=(const SubmissionState&) = delete;
    ~SubmissionState();
    // Gives back the buffers and the program (once).
    void release();
    bool released = false;
};

// Segments of the run still to go on the stream (0 once the last went, and
// for a raw kernel).
inline std::uint32_t segments_left(const SubmissionState& s)
{
    const std::size_t total = s.cut ? s.cut->segments.size() : 1;
    return total > s.next_segment ? static_cast<std::uint32_t>(total - s.next_segment) : 0;
}

struct CudaEvent final : Event {
    std::shared_ptr<SubmissionState> submission;
    explicit CudaEvent(std::shared_ptr<SubmissionState> s) : submission(std::move(s)) {}
};

std::uint64_t monotonic_ns();

}  // namespace vaccel::backend::cuda
