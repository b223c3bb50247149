// scheduler.hpp - the CPU backend's worker threads.
//
// Owns: the worker threads and the ready list of queue lanes. Decides:
// submissions of one queue run one after another in submission order (a
// lane is handed to one worker at a time); different queues run in parallel
// on up to `threads` workers. Destruction drains every accepted submission
// before the workers exit, so no event is ever left pending.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

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

private:
    void work();

    std::mutex mutex_;  // guards ready_, stopping_ and every Lane's fields
    std::condition_variable wake_;
    std::deque<std::shared_ptr<Lane>> ready_;
    bool stopping_ = false;
    std::vector<std::thread> workers_;
};

// Runs one submission to its terminal state: executes the plan (execute.cpp),
// releases its gates and program use, publishes the event state, notifies.
void run_submission(Submission& submission);

}  // namespace vaccel::backend::cpu
