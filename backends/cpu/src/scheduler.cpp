// scheduler.cpp - worker threads taking queue lanes in turn (see scheduler.hpp).
#include "scheduler.hpp"

namespace vaccel::backend::cpu {

Scheduler::Scheduler(unsigned threads)
{
    if (threads == 0) threads = 1;
    workers_.reserve(threads);
    for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

Scheduler::~Scheduler()
{
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
}

void Scheduler::enqueue(const std::shared_ptr<Lane>& lane, std::shared_ptr<Submission> submission)
{
    {
        std::lock_guard lock(mutex_);
        lane->pending.push_back(std::move(submission));
        if (lane->scheduled) return;  // a worker has it, or it waits in ready_
        lane->scheduled = true;
        ready_.push_back(lane);
    }
    wake_.notify_one();
}

void Scheduler::work()
{
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return stopping_ || !ready_.empty(); });
        if (ready_.empty()) return;  // stopping, and everything accepted has run
        std::shared_ptr<Lane> lane = std::move(ready_.front());
        ready_.pop_front();
        std::shared_ptr<Submission> submission = std::move(lane->pending.front());
        lane->pending.pop_front();
        lock.unlock();
        // Ownership: this worker owns the lane's front submission until it is
        // terminal; the lane stays `scheduled`, so no other worker takes the
        // next submission of the same queue meanwhile.
        run_submission(*submission);
        submission.reset();
        lock.lock();
        if (lane->pending.empty()) {
            lane->scheduled = false;
        } else {
            ready_.push_back(std::move(lane));
            wake_.notify_one();
        }
    }
}

}  // namespace vaccel::backend::cpu
