// scheduler.cpp - worker threads taking submissions in fair order (see scheduler.hpp).
#include "scheduler.hpp"

namespace vaccel::backend::cpu {

Scheduler::Scheduler(unsigned threads) : run_queue_(threads == 0 ? 1 : threads)
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
        run_queue_.drain();  // no cap holds back what must run before the workers exit
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
}

void Scheduler::enqueue(const std::shared_ptr<Lane>& lane, std::shared_ptr<Submission> submission)
{
    bool woke;
    {
        std::lock_guard lock(mutex_);
        woke = run_queue_.push(lane, std::move(submission), FairQueue::Clock::now());
    }
    if (woke) wake_.notify_one();
}

bool Scheduler::run_inline(const std::shared_ptr<Lane>& lane,
                           const std::shared_ptr<Submission>& submission,
                           std::chrono::nanoseconds bound)
{
    if (bound.count() <= 0 || submission->kernel) return false;
    const std::uint64_t last = submission->program->last_run_ns.load(std::memory_order_relaxed);
    if (last == 0 || last > static_cast<std::uint64_t>(bound.count())) return false;
    {
        std::lock_guard lock(mutex_);
        if (stopping_ || !run_queue_.claim(lane, FairQueue::Clock::now())) return false;
    }
    const auto started = FairQueue::Clock::now();
    run_submission(*submission);
    const auto ended = FairQueue::Clock::now();
    bool woke;
    {
        std::lock_guard lock(mutex_);
        run_queue_.charge(lane, ended - started, ended);
        // Work pushed to the lane meanwhile waited for this run: a worker
        // takes it now.
        woke = run_queue_.finish(lane);
    }
    if (woke) wake_.notify_one();
    return true;
}

void Scheduler::set_schedule(Flow& flow, std::uint32_t weight, bool latency,
                             std::uint32_t share_permille)
{
    std::lock_guard lock(mutex_);
    FairQueue::set_weight(flow, weight);
    FairQueue::set_latency(flow, latency);
    FairQueue::set_share(flow, share_permille);
}

DeviceService Scheduler::report(
    const std::vector<std::pair<std::string, std::shared_ptr<Flow>>>& flows) const
{
    using std::chrono::duration_cast;
    using std::chrono::nanoseconds;
    std::lock_guard lock(mutex_);
    const auto now = FairQueue::Clock::now();
    DeviceService service;
    service.share_window_ns =
        static_cast<std::uint64_t>(duration_cast<nanoseconds>(FairQueue::share_window).count());
    service.servers = static_cast<std::uint32_t>(workers_.size());
    for (const auto& [key, flow] : flows) {
        FlowService f;
        f.flow = key;
        f.weight = flow->weight;
        f.latency = flow->latency;
        f.share_permille = flow->share_permille;
        f.charged_ns = static_cast<std::uint64_t>(duration_cast<nanoseconds>(flow->charged_total).count());
        f.window_ns = static_cast<std::uint64_t>(
            duration_cast<nanoseconds>(FairQueue::charged_within(*flow, now)).count());
        f.queued = flow->queued;
        f.on_device = flow->running;
        service.flows.push_back(std::move(f));
    }
    return service;
}

void Scheduler::work()
{
    std::unique_lock lock(mutex_);
    for (;;) {
        std::optional<FairQueue::Dispatch> next = run_queue_.pop(FairQueue::Clock::now());
        if (!next) {
            // Stopping with nothing dispatchable: a worker still running a
            // lane with more work takes that work itself after finish(), and
            // a flow held back by the headroom rule runs a lane on another
            // worker, which takes its work the same way; so everything
            // accepted runs before the last worker exits.
            if (stopping_) return;
            // Woken by enqueue() or finish() making a lane ready, by the
            // destructor, or when a headroom hold lapses; every wake-up
            // (spurious ones too) just asks the run queue again.
            if (const auto until = run_queue_.held_until())
                wake_.wait_until(lock, *until);
            else
                wake_.wait(lock);
            continue;
        }
        lock.unlock();
        // Ownership: this worker owns the lane's dispatched submission until
        // it is terminal; the lane stays `scheduled`, so no other worker
        // takes the next submission of the same queue meanwhile.
        const auto started = FairQueue::Clock::now();
        run_submission(*next->submission);
        next->submission.reset();
        const auto ended = FairQueue::Clock::now();
        lock.lock();
        run_queue_.charge(next->lane, ended - started, ended);
        if (run_queue_.finish(next->lane)) wake_.notify_one();
    }
}

}  // namespace vaccel::backend::cpu
