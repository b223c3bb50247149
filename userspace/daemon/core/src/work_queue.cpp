// work_queue.cpp - the worker thread and its deficit round-robin over lanes.
//
// Decides the cost of a job: 100 weight units. Each time a lane reaches the
// front of the rotation it earns its weight in credits and runs jobs while
// it has 100 credits or more; a lane left with jobs goes to the back, a lane
// left empty forgets its credits (an idle lane does not bank a burst).
#include "vaccel/daemon/work_queue.hpp"

#include <pthread.h>

#include <algorithm>

namespace vaccel::daemon {

namespace {
constexpr std::int64_t job_cost = 100;
}

WorkQueue::WorkQueue(std::string name) : thread_([this] { run(); })
{
    name.resize(std::min<std::size_t>(name.size(), 15));
    pthread_setname_np(thread_.native_handle(), name.c_str());
}

WorkQueue::~WorkQueue()
{
    {
        std::lock_guard lock(mutex_);
        closing_ = true;
    }
    ready_.notify_one();
    thread_.join();
}

void WorkQueue::push(std::uint64_t lane, std::uint32_t weight, Job job)
{
    {
        std::lock_guard lock(mutex_);
        Lane& l = lanes_[lane];
        l.weight = std::clamp<std::uint32_t>(weight, 1, 1000);
        if (l.jobs.empty())
            rotation_.push_back(lane);
        l.jobs.push_back(std::move(job));
        ++queued_;
    }
    ready_.notify_one();
}

std::size_t WorkQueue::queued() const
{
    std::lock_guard lock(mutex_);
    return queued_;
}

WorkQueue::Job WorkQueue::pop_locked()
{
    for (;;) {
        const std::uint64_t id = rotation_.front();
        Lane& lane = lanes_[id];
        if (lane.deficit < job_cost) {
            lane.deficit += lane.weight;
            if (lane.deficit < job_cost) {
                rotation_.pop_front();
                rotation_.push_back(id);
                continue;
            }
        }
        Job job = std::move(lane.jobs.front());
        lane.jobs.pop_front();
        lane.deficit -= job_cost;
        --queued_;
        if (lane.jobs.empty()) {
            rotation_.pop_front();
            lanes_.erase(id);
        } else if (lane.deficit < job_cost) {
            rotation_.pop_front();
            rotation_.push_back(id);
        }
        return job;
    }
}

bool WorkQueue::idle() const
{
    std::lock_guard lock(mutex_);
    return queued_ == 0 && !running_;
}

void WorkQueue::run()
{
    std::unique_lock lock(mutex_);
    for (;;) {
        ready_.wait(lock, [this] { return queued_ > 0 || closing_; });
        if (queued_ == 0)
            return;  // closing, and everything queued has run
        Job job = pop_locked();
        running_ = true;
        lock.unlock();
        job();
        job = nullptr;  // destroyed on this thread, outside the lock
        lock.lock();
        running_ = false;
    }
}

}  // namespace vaccel::daemon
