// scheduler.hpp - the one scheduler of a Vulkan device: whose work reaches
// the queue next (docs/adr/0026-gpu-device-scheduler.md).
//
// Owns: each flow's FIFO of accepted submissions that are not yet wholly on
// the queue, the flows' accounts and the record of recent dispatches
// (sched::FlowBook), and a timer that wakes it when a share cap lapses
// (sched::CapTimer).
// Decides:
//  - every submission and launch of every context of the device reaches the
//    queue through here, one segment at a time (ring.hpp), in the order
//    DeviceTime serves the flows. A context's flow is its tenant's
//    (ContextSchedule::flow), so the contexts of one tenant share one
//    account; a context without one has a flow of its own;
//  - at most max_on_device segments are on the queue at once: one running
//    and one behind it, so the device does not idle between segments; the
//    second only while no other flow has work ready (with a closed-loop
//    tenant's last ready work behind its running one, the next turn would
//    find only the others ready and service would alternate whatever the
//    weights). A tenant whose work arrives waits for at most those two;
//  - a segment is charged the device time its timestamps measured, or where
//    the queue has no timestamps the interval from the later of its dispatch
//    and the previous segment's end to its own end, as the host saw them;
//  - within a flow, submissions keep their order, and the segments of one
//    submission go out in order;
//  - a submission past its deadline when its first segment's turn comes
//    fails with DeadlineExpired and nothing of it runs; one that has started
//    always finishes (or fails with the device).
// Locking: mutex_ guards everything here and each SubmissionState's
// `dispatched`, `ended_segments` and `abandoned`. The queue submission
// (under DeviceCore::queue_mutex) and Completer::watch are called with
// mutex_ held (order: scheduler, queue, completer); submissions that fail
// before reaching the device are ended with mutex_ released, since their
// sinks may submit again. The Completer calls ended() holding none of its
// own locks.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "submit.hpp"
#include "vaccel/sched/cap_timer.hpp"
#include "vaccel/sched/flow_book.hpp"

namespace vaccel::backend::vulkan {

class Scheduler {
public:
    static constexpr std::uint32_t max_on_device = 2;

    Scheduler(std::shared_ptr<DeviceCore> core, Completer& completer);
    // Lifts every share cap, puts everything queued on the device and waits
    // until the last segment has ended (shutdown loses no accepted work).
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // A flow of the context's own (create_context).
    std::shared_ptr<FlowTag> own_flow();
    // The tenant's flow for `schedule.flow` (made by its first context,
    // kept while any lives), with the schedule's policy from now on.
    std::shared_ptr<FlowTag> flow_for(const ContextSchedule& schedule,
                                      std::shared_ptr<FlowTag> current);

    // An accepted, recorded submission (counted in flight by the caller):
    // it reaches the queue when its flow is served. On a lost device it
    // fails at once.
    void enqueue(std::shared_ptr<SubmissionState> submission);

    // What the Completer does with a submission once one of its segments
    // has ended.
    struct Verdict {
        bool finish = false;  // report it now (its last segment ended, or it failed)
        std::optional<Error> failure;
    };
    // Segment `segment` of `submission` ended: its fence signalled (`ok`)
    // or failed (the device is lost); `measured_ns` is its timestamps'
    // device time where the queue has them. Without a failure the verdict's
    // `failure` is the reason a later segment could not go out, if any;
    // after one, the Completer names the loss itself.
    Verdict ended(SubmissionState& submission, std::uint32_t segment, bool ok,
                  std::optional<std::uint64_t> measured_ns);

    // Removes the context's submissions that have not started and returns
    // them (cancel_pending); started ones run to their end.
    std::vector<std::shared_ptr<SubmissionState>> take_unstarted(const ContextState& context);

    DeviceService report() const;

private:
    using Clock = sched::DeviceTime::Clock;
    // A flow's accepted submissions not yet wholly on the queue, oldest first.
    using FlowQueue = std::deque<std::shared_ptr<SubmissionState>>;

    // Puts segments on the queue while fewer than max_on_device are there.
    void pump(std::unique_lock<std::mutex>& lock);
    // Fails every queued submission (the device is lost).
    void fail_queued(const Error& why);
    // One segment of the flow's oldest submission to the queue.
    void dispatch_one(sched::FlowId flow, Clock::time_point now);
    void report_failures(std::unique_lock<std::mutex>& lock);

    std::shared_ptr<DeviceCore> core_;
    Completer& completer_;
    mutable std::mutex mutex_;
    mutable sched::FlowBook book_;  // report() expires old charges
    std::unordered_map<sched::FlowId, FlowQueue> queues_;
    std::uint32_t on_device_ = 0;
    std::vector<sched::FlowId> flows_on_device_;  // one entry per segment on the queue
    std::uint64_t last_end_ns_ = 0;  // host-seen end of the latest segment (no timestamps)
    struct Failed {
        std::shared_ptr<SubmissionState> submission;
        Error why;
    };
    std::vector<Failed> failed_;  // ended by report_failures(), unlocked
    std::condition_variable idle_;  // on_device_ or the queues changed
    sched::CapTimer timer_;  // last: pumps when a share cap lapses
};

}  // namespace vaccel::backend::vulkan
