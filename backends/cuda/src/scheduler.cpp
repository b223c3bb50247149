// scheduler.cpp - the CUDA device's scheduler (scheduler.hpp).
#include "scheduler.hpp"

#include <algorithm>

namespace vaccel::backend::cuda {

Scheduler::Scheduler(std::chrono::milliseconds hold_bound, std::chrono::microseconds latency_hold)
    : book_(sched::DeviceTime::Options{.latency_hold = latency_hold}),
      hold_bound_(hold_bound),
      timer_(mutex_, [this](std::unique_lock<std::mutex>& lock) { pump(lock); })
{
}

void Scheduler::put_on_device(Item& item, Clock::time_point now)
{
    item.stage = Item::Stage::live;
    ++item.released;
    running_.push_back({&item, sched::ns_since_epoch(now), book_.dispatched(item.flow, now)});
    device_flow_ = item.flow;
    ++on_device_;
    timer_.wake_at(now + hold_bound_);
}

void Scheduler::charge_ended(std::size_t at, Clock::time_point now)
{
    const Running segment = running_[at];
    running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(at));
    const std::uint64_t end = sched::ns_since_epoch(now);
    if (segment.overran) {
        // Others ran beside it since it passed the bound: charged its own
        // whole interval, leaving the others' charges as they are.
        const std::uint64_t used = end - std::min(end, segment.released_ns);
        book_.time().charge(segment.item->flow, std::chrono::nanoseconds(used), now);
        book_.ended(segment.entry, used);
        return;
    }
    const std::uint64_t used = end - std::min(end, std::max(segment.released_ns, last_end_ns_));
    last_end_ns_ = end;
    book_.time().charge(segment.item->flow, std::chrono::nanoseconds(used), now);
    book_.ended(segment.entry, used);
    --on_device_;
}

void Scheduler::expire_holds(Clock::time_point now)
{
    const std::uint64_t at = sched::ns_since_epoch(now);
    const auto bound = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(hold_bound_).count());
    std::uint64_t earliest = UINT64_MAX;
    for (Running& r : running_) {
        if (r.overran) continue;
        if (at - std::min(at, r.released_ns) < bound) {
            earliest = std::min(earliest, r.released_ns);
            continue;
        }
        r.overran = true;
        --on_device_;
    }
    if (earliest != UINT64_MAX)
        timer_.wake_at(now + std::chrono::nanoseconds(earliest + bound - at));
}

std::shared_ptr<sched::FlowTag> Scheduler::own_flow()
{
    std::lock_guard lock(mutex_);
    return book_.own_flow();
}

std::shared_ptr<sched::FlowTag> Scheduler::flow_for(const ContextSchedule& schedule,
                                                    std::shared_ptr<sched::FlowTag> current)
{
    std::lock_guard lock(mutex_);
    for (sched::FlowId gone : book_.sweep(Clock::now())) queues_.erase(gone);
    return book_.flow_for(schedule, std::move(current));
}

void Scheduler::enqueue(std::shared_ptr<Item> item)
{
    std::unique_lock lock(mutex_);
    if (item->stage != Item::Stage::made) return;  // ended before it was ready, or started
    item->stage = Item::Stage::live;
    item->queued = true;
    book_.time().ready(item->flow, Clock::now());
    queues_[item->flow].push_back(std::move(item));
    pump(lock);
}

void Scheduler::set_segments(std::shared_ptr<Item> item, std::uint32_t segments)
{
    std::unique_lock lock(mutex_);
    item->segments = std::max<std::uint32_t>(segments, 1);
    // Started at once (start_now) and not done: its next segment waits at
    // the head of its flow, before anything its flow queued meanwhile.
    if (item->stage != Item::Stage::live || item->queued || item->released >= item->segments)
        return;
    item->queued = true;
    book_.time().ready(item->flow, Clock::now());
    queues_[item->flow].push_front(std::move(item));
    pump(lock);
}

bool Scheduler::start_now(Item& item)
{
    std::lock_guard lock(mutex_);
    if (item.stage != Item::Stage::made || on_device_ >= max_on_device) return false;
    if (on_device_ != 0 && (item.flow != device_flow_ || book_.time().others_ready(device_flow_)))
        return false;
    auto& queue = queues_[item.flow];
    if (!queue.empty()) return false;  // keeps its flow's order
    const Clock::time_point now = Clock::now();
    book_.time().ready(item.flow, now);
    const sched::DeviceTime::Choice choice = book_.time().next(now);
    if (choice.flow != item.flow) {
        if (choice.flow) book_.time().put_back(*choice.flow);
        book_.time().withdraw(item.flow);
        return false;
    }
    put_on_device(item, now);
    return true;
}

void Scheduler::unstart(Item& item)
{
    std::unique_lock lock(mutex_);
    auto it = std::ranges::find_if(running_, [&](const Running& r) { return r.item == &item; });
    if (item.stage != Item::Stage::live || it == running_.end()) return;
    item.stage = Item::Stage::ended;
    book_.time().put_back(item.flow);
    book_.time().withdraw(item.flow);
    book_.ended(it->entry, 0);
    if (!it->overran) --on_device_;
    running_.erase(it);
    pump(lock);
}

bool Scheduler::segment_ended(Item& item)
{
    std::unique_lock lock(mutex_);
    auto it = std::ranges::find_if(running_, [&](const Running& r) { return r.item == &item; });
    // Its last segment's end is `completed`, never this.
    if (item.stage != Item::Stage::live || it == running_.end() ||
        item.finished + 1 >= item.segments)
        return false;
    ++item.finished;
    charge_ended(static_cast<std::size_t>(it - running_.begin()), Clock::now());
    pump(lock);
    return true;
}

void Scheduler::ended(Item& item)
{
    std::unique_lock lock(mutex_);
    const Item::Stage was = item.stage;
    item.stage = Item::Stage::ended;
    if (was != Item::Stage::live) return;
    if (item.queued) {
        item.queued = false;
        std::erase_if(queues_[item.flow], [&](const auto& i) { return i.get() == &item; });
        book_.time().withdraw(item.flow);
    }
    const Clock::time_point now = Clock::now();
    for (std::size_t at = running_.size(); at-- > 0;)
        if (running_[at].item == &item) charge_ended(at, now);
    pump(lock);
}

void Scheduler::pump(std::unique_lock<std::mutex>& lock)
{
    (void)lock;  // held
    expire_holds(Clock::now());
    while (on_device_ < max_on_device) {
        // A second segment only while no other flow waits (see the header).
        if (on_device_ != 0 && book_.time().others_ready(device_flow_)) return;
        const Clock::time_point now = Clock::now();
        const sched::DeviceTime::Choice choice = book_.time().next(now);
        if (!choice.flow) {
            if (choice.held) timer_.wake_at(*choice.held);
            return;
        }
        if (on_device_ != 0 && *choice.flow != device_flow_) {
            book_.time().put_back(*choice.flow);  // not reached: only device_flow_ was ready
            return;
        }
        auto& queue = queues_[*choice.flow];
        std::shared_ptr<Item> item = queue.front();
        put_on_device(*item, now);
        if (item->released >= item->segments) {
            item->queued = false;
            queue.pop_front();
        } else {
            book_.time().ready(item->flow, now);  // its next segment waits at the head
        }
        item->release();
    }
}

DeviceService Scheduler::report() const
{
    std::lock_guard lock(mutex_);
    return book_.report(Clock::now());
}

}  // namespace vaccel::backend::cuda
