// scheduler.hpp - the CPU backend's worker threads.
//
// Owns: the worker threads and the run queue (fair_queue.hpp). Decides:
// submissions of one queue run one after another in submission order;
// different queues run in parallel on up to `threads` workers; when several
// contexts have work queued, workers take it by deficit round-robin over
// the contexts' weights (fair_queue.hpp states the bound), keeping one
// worker free for a context active within the headroom window while another
// floods (fair_queue.hpp's headroom rule; the clock is read here). Destruction
// drains every accepted submission before the workers exit, so no event is
// ever left pending.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "fair_queue.hpp"
#include "objects.hpp"

namespace vaccel::backend::cpu {

class Scheduler {
public:
    explicit Scheduler(unsigned threads);
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // Called by the engine thread once the submission holds its gates.
    void enqueue(const std::shared_ptr<Lane>& lane, std::shared_ptr<Submission> submission);
    // The inline rule (CpuOptions::inline_us): a TOSA submission whose
    // program's last run took at most `bound` runs here, on the caller's
    // thread, when FairQueue::claim() allows (no worker would be passed
    // over), and is charged as a worker's run. True when it ran (it is
    // then terminal); false leaves `submission` to enqueue().
    bool run_inline(const std::shared_ptr<Lane>& lane,
                    const std::shared_ptr<Submission>& submission,
                    std::chrono::nanoseconds bound);
    // The flow's share from its next DRR visit on (1..1000, clamped),
    // whether it is served before batch flows, and its cap on the workers'
    // time (per mille; fair_queue.hpp). Each submission's run time is
    // charged to its flow when it ends.
    void set_schedule(Flow& flow, std::uint32_t weight, bool latency,
                      std::uint32_t share_permille);

    // What the workers served each of `flows` (tenant key, flow): charged
    // run time in all and within the share window, queued and running.
    DeviceService report(
        const std::vector<std::pair<std::string, std::shared_ptr<Flow>>>& flows) const;

private:
    void work();

    mutable std::mutex mutex_;  // guards run_queue_, stopping_ and every Flow's and Lane's fields
    std::condition_variable wake_;
    FairQueue run_queue_;
    bool stopping_ = false;
    std::vector<std::thread> workers_;
};

// Runs one submission to its terminal state: executes the plan (execute.cpp),
// releases its gates and program use, publishes the event state, notifies.
void run_submission(Submission& submission);

}  // namespace vaccel::backend::cpu
