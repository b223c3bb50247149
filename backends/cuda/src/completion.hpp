// completion.hpp - reporting a CUDA device's submissions (one thread per
// device, docs/adr/0018-cuda-backend.md).
//
// Decides:
//  - a submission on its stream ends with `done` recorded and a host
//    function that wakes this thread; the thread asks each pending event
//    (cuEventQuery) and reports the finished ones. Right after activity it
//    keeps asking for a short while (a no-op kernel is back in microseconds);
//    then it sleeps until a wake or 2 ms, whichever is first, so a fault that
//    stops the host function from ever running is still seen;
//  - a sticky fault in a context fails that context's pending work and
//    poisons it (ContextState::poison); the device and other contexts go on;
//  - a device lost fails everything pending;
//  - reporting: state set, buffers and program given back, then the sink,
//    exactly once (SubmissionState::reported). The reactor is never
//    blocked: sinks only post;
//  - a run cut into segments (slicing.hpp): each segment but the last is
//    tracked by its end mark, and its end is told to the sink
//    (EventSink::segment_ended), in order: a segment is never reported
//    before the one before it, nor the run's end before its segments. A
//    fault in a segment fails the run at once.
// Locking: `mutex_` guards `pending_`, `wakes_` and `stop_`.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "objects.hpp"

namespace vaccel::backend::cuda {

class Completer {
public:
    explicit Completer(std::shared_ptr<DeviceCore> core);
    Completer(const Completer&) = delete;
    Completer& operator=(const Completer&) = delete;
    // Reports everything still pending first.
    ~Completer();

    // A submission now on its stream, `done` recorded after its work.
    void track(std::shared_ptr<SubmissionState> submission);
    // Segment `index` of a run cut into segments, not its last, is on its
    // stream with its end mark (marks[2 * index + 1]) recorded after it.
    void track_segment(std::shared_ptr<SubmissionState> submission, std::uint32_t index);
    // Reports a submission that never reached its stream.
    void end_unstarted(SubmissionState& submission, EventState state, Error why);
    // The host function enqueued after `done` (argument: the Completer).
    static void CUDA_CB wake(void* completer);

private:
    void run();
    void finish(SubmissionState& submission, EventState state, Error why);
    // Asks every pending event once; true when any finished.
    bool sweep();

    // What the thread waits for: a run's end (`segment` = none), or the
    // end of one of its segments.
    struct Pending {
        static constexpr std::uint32_t none = UINT32_MAX;
        std::shared_ptr<SubmissionState> submission;
        std::uint32_t segment = none;
    };
    std::shared_ptr<DeviceCore> core_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<Pending> pending_;  // in the order they went on their streams
    std::uint64_t wakes_ = 0;
    bool stop_ = false;
    std::thread thread_;  // last: starts after everything it reads
};

}  // namespace vaccel::backend::cuda
