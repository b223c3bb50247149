// scheduler.cpp - the Vulkan device's scheduler (scheduler.hpp).
#include "scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace vaccel::backend::vulkan {

namespace {

Error lost_error(const DeviceCore& core)
{
    return Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE)
        .with_note(fmt::format("the Vulkan device \"{}\" was lost before this work reached it; "
                               "nothing of it ran",
                               core.info.name));
}

}  // namespace

Scheduler::Scheduler(std::shared_ptr<DeviceCore> core, Completer& completer)
    : core_(std::move(core)),
      completer_(completer),
      book_(sched::DeviceTime::Options{
          .latency_hold = std::chrono::nanoseconds(core_->latency_hold_ns)}),
      timer_(mutex_, [this](std::unique_lock<std::mutex>& lock) {
          pump(lock);
          report_failures(lock);
      })
{
}

Scheduler::~Scheduler()
{
    std::unique_lock lock(mutex_);
    for (auto& [id, queue] : queues_) {
        if (auto account = book_.time().account(id, Clock::now())) {
            sched::FlowPolicy policy = account->policy;
            policy.share_permille = 1000;
            book_.time().set_policy(id, policy);
        }
    }
    pump(lock);
    report_failures(lock);
    idle_.wait(lock, [&] {
        if (on_device_ != 0) return false;
        return std::ranges::all_of(queues_, [](const auto& q) { return q.second.empty(); });
    });
}

std::shared_ptr<FlowTag> Scheduler::own_flow()
{
    std::lock_guard lock(mutex_);
    return book_.own_flow();
}

std::shared_ptr<FlowTag> Scheduler::flow_for(const ContextSchedule& schedule,
                                             std::shared_ptr<FlowTag> current)
{
    std::lock_guard lock(mutex_);
    for (sched::FlowId gone : book_.sweep(Clock::now())) queues_.erase(gone);
    return book_.flow_for(schedule, std::move(current));
}

void Scheduler::enqueue(std::shared_ptr<SubmissionState> submission)
{
    std::unique_lock lock(mutex_);
    if (core_->lost.load(std::memory_order_acquire)) {
        failed_.push_back({std::move(submission), lost_error(*core_)});
    } else {
        const sched::FlowId flow = submission->context->flow->id;
        book_.time().ready(flow, Clock::now(), submission->segments);
        queues_[flow].push_back(std::move(submission));
        pump(lock);
    }
    report_failures(lock);
}

// The sinks are told with no lock of the scheduler held: a sink may submit.
void Scheduler::report_failures(std::unique_lock<std::mutex>& lock)
{
    while (!failed_.empty()) {
        std::vector<Failed> failed = std::move(failed_);
        failed_.clear();
        lock.unlock();
        for (Failed& f : failed)
            completer_.end_unstarted(*f.submission, EventState::failed, std::move(f.why));
        lock.lock();
    }
}

void Scheduler::pump(std::unique_lock<std::mutex>& lock)
{
    (void)lock;  // held
    while (on_device_ < max_on_device) {
        // A second segment only while no other flow has work ready: with a
        // tenant's last ready work behind its running one, the next turn
        // would find only the others ready and service would alternate
        // whatever the weights (backends.device_time, closed-loop tenants).
        if (on_device_ != 0 && book_.time().others_ready(flows_on_device_.front())) break;
        if (core_->lost.load(std::memory_order_acquire)) {
            fail_queued(lost_error(*core_));
            break;
        }
        const Clock::time_point now = Clock::now();
        const sched::DeviceTime::Choice choice = book_.time().next(now);
        if (!choice.flow) {
            if (choice.held) timer_.wake_at(*choice.held);
            break;
        }
        dispatch_one(*choice.flow, now);
    }
    idle_.notify_all();
}

void Scheduler::dispatch_one(sched::FlowId flow, Clock::time_point now)
{
    FlowQueue& queue = queues_.at(flow);
    std::shared_ptr<SubmissionState> submission = queue.front();
    const std::uint32_t segment = submission->dispatched;
    // Nothing of this submission goes out any more: withdraw its other
    // segments, return the picked one uncharged and end it here.
    auto abandon = [&](const Error& why) {
        queue.pop_front();
        book_.time().withdraw(flow, submission->segments - segment - 1);
        book_.time().charge(flow, std::chrono::nanoseconds(0), now);
        if (segment == 0 || submission->ended_segments == segment)
            failed_.push_back({submission, why});
        else
            submission->abandoned = why;  // the Completer ends it with its last segment
    };
    if (auto ok = submit_recorded(*submission, segment == 0 ? submission->deadline_ns : 0, segment);
        !ok) {
        abandon(ok.error());
        return;
    }
    submission->dispatched = segment + 1;
    if (submission->dispatched == submission->segments) queue.pop_front();
    submission->dispatched_at[segment] = sched::ns_since_epoch(now);
    submission->entries[segment] = book_.dispatched(flow, now);
    ++on_device_;
    flows_on_device_.push_back(flow);
    completer_.watch(std::move(submission), segment);
}

Scheduler::Verdict Scheduler::ended(SubmissionState& submission, std::uint32_t segment, bool ok,
                                    std::optional<std::uint64_t> measured_ns)
{
    std::unique_lock lock(mutex_);
    const Clock::time_point now = Clock::now();
    const std::uint64_t end = sched::ns_since_epoch(now);
    // Without timestamps: from when it could start (dispatched, and the
    // segment before it ended) to when its fence was seen.
    const std::uint64_t used =
        measured_ns ? *measured_ns
                    : end - std::min(end, std::max(submission.dispatched_at[segment], last_end_ns_));
    last_end_ns_ = end;
    const sched::FlowId flow = submission.context->flow->id;
    book_.time().charge(flow, std::chrono::nanoseconds(used), now);
    book_.ended(submission.entries[segment], used);
    submission.used_ns[segment] = used;
    submission.ended_segments = segment + 1;
    --on_device_;
    if (auto it = std::ranges::find(flows_on_device_, flow); it != flows_on_device_.end())
        flows_on_device_.erase(it);
    if (!ok && submission.dispatched < submission.segments) {
        // Its fence failed (the device is lost): what is not out never goes.
        std::erase_if(queues_.at(flow), [&](const auto& s) { return s.get() == &submission; });
        book_.time().withdraw(flow, submission.segments - submission.dispatched);
        submission.abandoned = Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE);
        submission.segments = submission.dispatched;
    }
    Verdict verdict;
    // Reported once, when nothing of it is on the device any more.
    if (submission.ended_segments == submission.dispatched) {
        if (submission.ended_segments == submission.segments && ok && !submission.abandoned) {
            verdict.finish = true;
        } else if (!ok || submission.abandoned) {
            verdict.finish = true;
            if (ok) verdict.failure = submission.abandoned;
        }
    }
    pump(lock);
    report_failures(lock);
    return verdict;
}

void Scheduler::fail_queued(const Error& why)
{
    for (auto& [flow, queue] : queues_) {
        while (!queue.empty()) {
            std::shared_ptr<SubmissionState> submission = std::move(queue.front());
            queue.pop_front();
            book_.time().withdraw(flow, submission->segments - submission->dispatched);
            if (submission->ended_segments == submission->dispatched)
                failed_.push_back({std::move(submission), why});
            else
                submission->abandoned = why;
        }
    }
}

std::vector<std::shared_ptr<SubmissionState>> Scheduler::take_unstarted(const ContextState& context)
{
    std::unique_lock lock(mutex_);
    std::vector<std::shared_ptr<SubmissionState>> taken;
    for (auto& [flow, queue] : queues_) {
        auto moved = std::ranges::stable_partition(queue, [&](const auto& s) {
            return s->context.get() != &context || s->dispatched != 0;
        });
        for (auto it = moved.begin(); it != moved.end(); ++it) {
            book_.time().withdraw(flow, (*it)->segments);
            taken.push_back(std::move(*it));
        }
        queue.erase(moved.begin(), moved.end());
    }
    idle_.notify_all();
    return taken;
}

DeviceService Scheduler::report() const
{
    std::lock_guard lock(mutex_);
    return book_.report(Clock::now());
}

}  // namespace vaccel::backend::vulkan
