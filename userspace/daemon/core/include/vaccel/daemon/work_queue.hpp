// work_queue.hpp - one thread that runs jobs handed to it, fairly by lane.
//
// Owns: a thread, the jobs queued for it and their lanes. Decides the order
// jobs run in: jobs of one lane run in the order they were pushed; lanes
// with jobs queued are served by deficit round-robin on their weights (a
// lane of weight 200 gets two jobs for every one of a lane of weight 100
// while both have work), so one flooding client cannot starve another. A
// device worker uses one lane per tenant (TenantLanes: all of a tenant's
// connections share it); the daemon's chores thread one lane for everything.
//
// Ownership (ADR 0006): push() moves the job into the queue; from then on the
// worker thread owns it, runs it and destroys it. A job hands its result back
// to the reactor itself (Reactor::post).
//
// Thread-safety: push() from any thread; the mutex is held only to push or
// pop, never while a job runs.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace vaccel::daemon {

class WorkQueue {
public:
    using Job = std::function<void()>;

    // Starts the thread (named `name` for ps/top, at most 15 characters).
    explicit WorkQueue(std::string name);
    // Runs every job already queued, then joins the thread.
    ~WorkQueue();
    WorkQueue(const WorkQueue&) = delete;
    WorkQueue& operator=(const WorkQueue&) = delete;

    // Queues `job` on `lane` (weight 1..1000; the lane's latest weight wins).
    void push(std::uint64_t lane, std::uint32_t weight, Job job);
    void push(Job job) { push(0, 100, std::move(job)); }

    // Jobs queued and not yet started (any thread; for tests and metrics).
    std::size_t queued() const;
    // Nothing queued and no job running. Only meaningful to the one thread
    // that pushes (the reactor): while it does not push, an idle queue stays
    // idle, so the pusher may do a short piece of the worker's work itself.
    bool idle() const;

private:
    struct Lane {
        std::deque<Job> jobs;
        std::uint32_t weight = 100;
        std::int64_t deficit = 0;  // job credits, in weight units
    };

    void run();
    // The next job by deficit round-robin; caller holds mutex_, a job exists.
    Job pop_locked();

    mutable std::mutex mutex_;  // guards lanes_, rotation_, queued_, running_, closing_
    std::condition_variable ready_;
    std::unordered_map<std::uint64_t, Lane> lanes_;
    std::deque<std::uint64_t> rotation_;  // lanes with jobs, in serving order
    std::size_t queued_ = 0;
    bool running_ = false;  // a job popped and not yet finished
    bool closing_ = false;
    std::thread thread_;  // last: started after everything it reads exists
};

}  // namespace vaccel::daemon
