// scheduler.cpp - the Vulkan device's scheduler (scheduler.hpp).
#include "scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace vaccel::backend::vulkan {

namespace {

constexpr std::size_t record_depth = 4096;

std::uint64_t ns_since_epoch(std::chrono::steady_clock::time_point t)
{
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

sched::FlowPolicy policy_of(const ContextSchedule& schedule)
{
    sched::FlowPolicy policy;
    policy.weight = schedule.weight;
    policy.priority = schedule.latency ? sched::Priority::latency : sched::Priority::batch;
    policy.share_permille = schedule.share_permille;
    return policy;
}

Error lost_error(const DeviceCore& core)
{
    return Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE)
        .with_note(fmt::format("the Vulkan device \"{}\" was lost before this work reached it; "
                               "nothing of it ran",
                               core.info.name));
}

}  // namespace

Scheduler::Scheduler(std::shared_ptr<DeviceCore> core, Completer& completer)
    : core_(std::move(core)), completer_(completer), timer_([this] { timer_loop(); })
{
}

Scheduler::~Scheduler()
{
    std::unique_lock lock(mutex_);
    draining_ = true;
    for (auto& [id, queue] : queues_) {
        if (auto account = time_.account(id, Clock::now())) {
            sched::FlowPolicy policy = account->policy;
            policy.share_permille = 1000;
            time_.set_policy(id, policy);
        }
    }
    pump(lock);
    report_failures(lock);
    idle_.wait(lock, [&] {
        if (on_device_ != 0) return false;
        return std::ranges::all_of(queues_, [](const auto& q) { return q.second.waiting.empty(); });
    });
    stopping_ = true;
    lock.unlock();
    wake_.notify_all();
    timer_.join();
}

std::shared_ptr<FlowTag> Scheduler::own_flow()
{
    std::lock_guard lock(mutex_);
    auto tag = std::make_shared<FlowTag>();
    tag->id = next_flow_++;
    queues_[tag->id].tag = tag;
    return tag;
}

std::shared_ptr<FlowTag> Scheduler::flow_for(const ContextSchedule& schedule,
                                             std::shared_ptr<FlowTag> current)
{
    std::lock_guard lock(mutex_);
    sweep_flows();
    std::shared_ptr<FlowTag> tag = std::move(current);
    if (!schedule.flow.empty()) {
        std::weak_ptr<FlowTag>& shared = tenant_flows_[schedule.flow];
        tag = shared.lock();
        if (!tag) {
            tag = std::make_shared<FlowTag>();
            tag->id = next_flow_++;
            tag->key = schedule.flow;
            shared = tag;
            queues_[tag->id].tag = tag;
        }
    }
    time_.set_policy(tag->id, policy_of(schedule));
    return tag;
}

// Flows whose every context has gone and that hold no work are forgotten.
void Scheduler::sweep_flows()
{
    std::erase_if(tenant_flows_, [](const auto& entry) { return entry.second.expired(); });
    for (auto it = queues_.begin(); it != queues_.end();) {
        const auto account = time_.account(it->first, Clock::now());
        const bool busy = account && (account->ready != 0 || account->in_flight != 0);
        if (it->second.tag.expired() && it->second.waiting.empty() && !busy) {
            time_.forget(it->first);
            it = queues_.erase(it);
        } else {
            ++it;
        }
    }
}

void Scheduler::enqueue(std::shared_ptr<SubmissionState> submission)
{
    std::unique_lock lock(mutex_);
    if (core_->lost.load(std::memory_order_acquire)) {
        failed_.push_back({std::move(submission), lost_error(*core_)});
    } else {
        const sched::FlowId flow = submission->context->flow->id;
        time_.ready(flow, submission->segments);
        queues_[flow].waiting.push_back(std::move(submission));
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
        if (core_->lost.load(std::memory_order_acquire)) {
            fail_queued(lost_error(*core_));
            break;
        }
        const Clock::time_point now = Clock::now();
        const sched::DeviceTime::Choice choice = time_.next(now);
        if (!choice.flow) {
            if (choice.held && (!wake_at_ || *choice.held < *wake_at_)) {
                wake_at_ = choice.held;
                wake_.notify_all();
            }
            break;
        }
        dispatch_one(*choice.flow, now);
    }
    idle_.notify_all();
}

void Scheduler::dispatch_one(sched::FlowId flow, Clock::time_point now)
{
    FlowQueue& queue = queues_.at(flow);
    std::shared_ptr<SubmissionState> submission = queue.waiting.front();
    const std::uint32_t segment = submission->dispatched;
    // Nothing of this submission goes out any more: withdraw its other
    // segments, return the picked one uncharged and end it here.
    auto abandon = [&](const Error& why) {
        queue.waiting.pop_front();
        time_.withdraw(flow, submission->segments - segment - 1);
        time_.charge(flow, std::chrono::nanoseconds(0), now);
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
    if (submission->dispatched == submission->segments) queue.waiting.pop_front();
    const std::uint64_t at = ns_since_epoch(now);
    submission->dispatched_at[segment] = at;
    submission->entries[segment] = first_entry_ + record_.size();
    const auto tag = queue.tag.lock();
    record_.push_back({flow, tag ? tag->key : std::string(), at, 0, false});
    while (record_.size() > record_depth) {
        record_.pop_front();
        ++first_entry_;
    }
    ++on_device_;
    completer_.watch(std::move(submission), segment);
}

Scheduler::Verdict Scheduler::ended(SubmissionState& submission, std::uint32_t segment, bool ok,
                                    std::optional<std::uint64_t> measured_ns)
{
    std::unique_lock lock(mutex_);
    const Clock::time_point now = Clock::now();
    const std::uint64_t end = ns_since_epoch(now);
    // Without timestamps: from when it could start (dispatched, and the
    // segment before it ended) to when its fence was seen.
    const std::uint64_t used =
        measured_ns ? *measured_ns
                    : end - std::min(end, std::max(submission.dispatched_at[segment], last_end_ns_));
    last_end_ns_ = end;
    const sched::FlowId flow = submission.context->flow->id;
    time_.charge(flow, std::chrono::nanoseconds(used), now);
    if (submission.entries[segment] >= first_entry_) {
        Entry& entry = record_[submission.entries[segment] - first_entry_];
        entry.used_ns = used;
        entry.ended = true;
    }
    submission.used_ns[segment] = used;
    submission.ended_segments = segment + 1;
    --on_device_;
    if (!ok && submission.dispatched < submission.segments) {
        // Its fence failed (the device is lost): what is not out never goes.
        FlowQueue& queue = queues_.at(flow);
        std::erase_if(queue.waiting, [&](const auto& s) { return s.get() == &submission; });
        time_.withdraw(flow, submission.segments - submission.dispatched);
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
        while (!queue.waiting.empty()) {
            std::shared_ptr<SubmissionState> submission = std::move(queue.waiting.front());
            queue.waiting.pop_front();
            time_.withdraw(flow, submission->segments - submission->dispatched);
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
        auto moved = std::ranges::stable_partition(queue.waiting, [&](const auto& s) {
            return s->context.get() != &context || s->dispatched != 0;
        });
        for (auto it = moved.begin(); it != moved.end(); ++it) {
            time_.withdraw(flow, (*it)->segments);
            taken.push_back(std::move(*it));
        }
        queue.waiting.erase(moved.begin(), moved.end());
    }
    idle_.notify_all();
    return taken;
}

DeviceService Scheduler::report() const
{
    std::lock_guard lock(mutex_);
    auto& time = const_cast<sched::DeviceTime&>(time_);  // account() expires old charges
    const Clock::time_point now = Clock::now();
    DeviceService service;
    service.share_window_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(sched::DeviceTime::Options{}.share_window)
            .count());
    for (const auto& [id, queue] : queues_) {
        const auto account = time.account(id, now);
        if (!account) continue;
        const auto tag = queue.tag.lock();
        FlowService flow;
        flow.flow = tag ? tag->key : std::string();
        flow.weight = account->policy.weight;
        flow.latency = account->policy.priority == sched::Priority::latency;
        flow.share_permille = account->policy.share_permille;
        flow.charged_ns = static_cast<std::uint64_t>(account->charged.count());
        flow.window_ns = static_cast<std::uint64_t>(account->charged_in_window.count());
        flow.queued = account->ready;
        flow.on_device = account->in_flight;
        service.flows.push_back(std::move(flow));
    }
    for (std::size_t i = 0; i < record_.size(); ++i) {
        const Entry& e = record_[i];
        service.recent.push_back({first_entry_ + i, e.key, e.at_ns, e.used_ns, e.ended});
    }
    return service;
}

void Scheduler::timer_loop()
{
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        if (!wake_at_) {
            wake_.wait(lock);
            continue;
        }
        const Clock::time_point at = *wake_at_;
        if (wake_.wait_until(lock, at) == std::cv_status::timeout || Clock::now() >= at) {
            wake_at_.reset();
            pump(lock);
            report_failures(lock);
        }
    }
}

}  // namespace vaccel::backend::vulkan
