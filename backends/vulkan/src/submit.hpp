// submit.hpp - running a loaded program: recording, submission and completion.
//
// Owns: SubmissionState (one accepted submission: the ring slot it took
// (ring.hpp: its segments' command buffers and fences, descriptor set,
// timestamps), the buffers it holds in flight and its event sink) and the
// Completer, one thread per device that waits for the segments' fences in
// queue order, hands each segment's measured time to the device's
// scheduler (scheduler.hpp) and reports each outcome.
// Decides (docs/adr/0013-vulkan-backend.md):
//  - recording: every segment (one command buffer) starts with a barrier
//    (orders it after earlier work on the queue that may share the
//    program's arena or the bound buffers, including its own earlier
//    segments) and a timestamp, then holds its part of the plan's
//    dispatches with a compute->compute memory barrier exactly where
//    Dispatch::barrier_before is set, then a compute->host barrier so the
//    host may read the outputs once the fence signals, and a timestamp;
//  - a submission is accepted once it is recorded and the scheduler holds
//    it; a refusal before that releases everything it made;
//  - completion: the Completer sets the state, releases the buffers and the
//    program, then calls the sink exactly once; a device lost makes this and
//    every later submission fail with DeviceLost.
// Locking: the Completer's queue is guarded by its mutex; buffers' and
// programs' in-flight counts are atomics; vkQueueSubmit2 is called under
// DeviceCore::queue_mutex.
#pragma once

#include <array>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "objects.hpp"
#include "program.hpp"

namespace vaccel::backend::vulkan {

struct GateState;
class Scheduler;

// What a launch of a SPIR-V kernel records instead of a plan's dispatches:
// its pipeline, set 0's storage buffers, the push constants and the grid.
struct LaunchRecord {
    ProgramState::KernelPipeline kernel;
    std::vector<VkDescriptorBufferInfo> buffers;
    std::vector<std::byte> push;
    std::array<std::uint32_t, 3> grid{};
};

struct SubmissionState {
    std::shared_ptr<ContextState> context;
    // A SUBMIT_AFTER's gate: kept alive until completion, since the queued
    // work waits on its semaphore.
    std::shared_ptr<GateState> gate;
    std::uint64_t after_value = 0;
    std::uint64_t deadline_ns = 0;  // checked again when the gate releases it
    std::shared_ptr<ProgramState> program;
    // The context's ring slot this submission took; given back (reset) by
    // release(), or retired when on_device() (its work may still run).
    std::optional<std::uint32_t> slot;
    std::optional<LaunchRecord> launch;  // a kernel launch, else the program's plan
    // Its segments (the slot's first `segments` command buffers and
    // fences): recorded at once, put on the queue one by one by the
    // scheduler (`dispatched`, under its lock) and seen ended by the
    // Completer (`ended_segments`, also under the scheduler's lock).
    std::uint32_t segments = 1;
    std::uint32_t dispatched = 0;
    std::uint32_t ended_segments = 0;
    std::vector<std::uint64_t> dispatched_at;  // per segment, ns (scheduler's clock)
    std::vector<std::uint64_t> entries;        // per segment, its dispatch record entry
    // Set when a later segment could not be put on the queue: the
    // submission fails with it once its segments on the device have ended.
    std::optional<Error> abandoned;
    // This run takes its program's profile (program.hpp): one segment with
    // a timestamp after every dispatch.
    bool profiling = false;
    // The program's cut it was recorded with (null: whole), and each
    // segment's charged device time (the scheduler writes it as segments
    // end; read once the last has).
    std::shared_ptr<const Cut> cut;
    std::vector<std::uint64_t> used_ns;
    bool on_device() const { return dispatched > ended_segments; }
    struct Held {
        VulkanBuffer* buffer;  // alive: free_buffer is refused while held
        bool writes;
    };
    std::vector<Held> held;
    std::shared_ptr<EventSink> sink;
    std::atomic<std::uint32_t> state{VACCEL_EVENT_PENDING};
    Error failure;  // written before `state` leaves pending (release)

    SubmissionState() = default;
    SubmissionState(const SubmissionState&) = delete;
    SubmissionState& operator=(const SubmissionState&) = delete;
    ~SubmissionState();
    // Gives back the buffers, the program and the ring slot (once).
    void release();
    bool released = false;
};

struct VulkanEvent final : Event {
    std::shared_ptr<SubmissionState> submission;
    explicit VulkanEvent(std::shared_ptr<SubmissionState> s);
    ~VulkanEvent() override;
};

class Completer {
public:
    explicit Completer(std::shared_ptr<DeviceCore> core);
    // Waits for every accepted submission, then stops the thread.
    ~Completer();
    // The scheduler told of every segment's end; set once, before any work.
    void attach(Scheduler* scheduler) { scheduler_ = scheduler; }
    // Segment `segment` of `submission` is on the queue (the scheduler).
    void watch(std::shared_ptr<SubmissionState> submission, std::uint32_t segment);
    // Ends an accepted submission that never reached the device (cancelled,
    // or failed when released); reports it like any other.
    void end_unstarted(SubmissionState& submission, EventState state, Error failure);
    // Returns once the completion thread holds no reference to `submission`
    // (it drops its own after publishing the outcome), so destroying a
    // finished event releases the submission's context on the caller's
    // thread and live() counts are exact when it returns.
    void forget(const SubmissionState* submission);

private:
    void run();
    // `reference`, the completion thread's own, is dropped before the sink
    // is told: the client may release the context and program the
    // submission holds as soon as it hears, and the live counters must then
    // read zero.
    void finish(SubmissionState& submission, EventState state, Error failure,
                std::shared_ptr<SubmissionState> reference = {});

    // The device time the segment's timestamps measured, if the queue has them.
    std::optional<std::uint64_t> measured_ns(SubmissionState& submission, std::uint32_t segment);

    std::shared_ptr<DeviceCore> core_;
    Scheduler* scheduler_ = nullptr;
    std::mutex mutex_;
    std::condition_variable wake_;
    struct Pending {
        std::shared_ptr<SubmissionState> submission;
        std::uint32_t segment;
    };
    std::deque<Pending> pending_;  // in queue order
    const SubmissionState* current_ = nullptr;  // finishing, still referenced by the thread
    std::condition_variable idle_;               // current_ changed
    bool stopping_ = false;
    std::thread thread_;  // last: started once everything above exists
};

// Records and submits `program` with `buffers` (one per slot, with the
// binding's offset) after the checks of submit(). Holds the buffers and
// the program; on a refusal nothing is held.
struct BoundSlot {
    VulkanBuffer* buffer = nullptr;
    std::uint64_t offset = 0;
    bool writes = false;
};
// Records and holds without submitting; the caller gives it to the
// scheduler (at once, or when its gate releases a SUBMIT_AFTER). Takes a
// slot of the context's ring: refused with ring_full_error() when all are
// taken.
// `slots` are the buffers held in flight; a launch binds `launch->buffers`.
Result<std::shared_ptr<SubmissionState>> record_only(
    std::shared_ptr<ContextState> context, std::shared_ptr<ProgramState> program,
    std::span<const BoundSlot> slots, std::shared_ptr<EventSink> sink,
    std::optional<LaunchRecord> launch = std::nullopt);
// Gives segment `segment` of a recorded submission to the queue (the first
// waiting on its gate's semaphore at after_value when it has one); past
// `deadline_ns` nothing is submitted. Called by the scheduler only.
Status submit_recorded(SubmissionState& submission, std::uint64_t deadline_ns,
                       std::uint32_t segment);

std::uint64_t monotonic_ns();

}  // namespace vaccel::backend::vulkan
