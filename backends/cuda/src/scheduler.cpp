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
    item.stage = Item::Stage::on_device;
    item.released_ns = sched::ns_since_epoch(now);
    item.entry = book_.dispatched(item.flow, now);
    device_flow_ = item.flow;
    ++on_device_;
    running_.push_back(&item);
    timer_.wake_at(now + hold_bound_);
}

void Scheduler::expire_holds(Clock::time_point now)
{
    const std::uint64_t at = sched::ns_since_epoch(now);
    const auto bound = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(hold_bound_).count());
    std::uint64_t earliest = UINT64_MAX;
    std::erase_if(running_, [&](Item* item) {
        if (at - std::min(at, item->released_ns) < bound) {
            earliest = std::min(earliest, item->released_ns);
            return false;
        }
        item->stage = Item::Stage::overran;
        --on_device_;
        return true;
    });
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
    if (item->stage != Item::Stage::made) return;  // ended before it was ready
    item->stage = Item::Stage::queued;
    book_.time().ready(item->flow, Clock::now());
    queues_[item->flow].push_back(std::move(item));
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
    if (item.stage != Item::Stage::on_device) return;
    item.stage = Item::Stage::ended;
    book_.time().put_back(item.flow);
    book_.time().withdraw(item.flow);
    book_.ended(item.entry, 0);
    std::erase(running_, &item);
    --on_device_;
    pump(lock);
}

void Scheduler::ended(Item& item)
{
    std::unique_lock lock(mutex_);
    const Item::Stage was = item.stage;
    item.stage = Item::Stage::ended;
    if (was == Item::Stage::queued) {
        std::erase_if(queues_[item.flow], [&](const auto& i) { return i.get() == &item; });
        book_.time().withdraw(item.flow);
    } else if (was == Item::Stage::on_device) {
        const Clock::time_point now = Clock::now();
        const std::uint64_t end = sched::ns_since_epoch(now);
        const std::uint64_t used = end - std::min(end, std::max(item.released_ns, last_end_ns_));
        last_end_ns_ = end;
        book_.time().charge(item.flow, std::chrono::nanoseconds(used), now);
        book_.ended(item.entry, used);
        std::erase(running_, &item);
        --on_device_;
    } else if (was == Item::Stage::overran) {
        // Others ran beside it since it passed the bound: charged its own
        // whole interval, leaving the others' charges as they are.
        const Clock::time_point now = Clock::now();
        const std::uint64_t end = sched::ns_since_epoch(now);
        const std::uint64_t used = end - std::min(end, item.released_ns);
        book_.time().charge(item.flow, std::chrono::nanoseconds(used), now);
        book_.ended(item.entry, used);
        return;  // the device was not counting it
    } else {
        return;
    }
    pump(lock);
}

void Scheduler::pump(std::unique_lock<std::mutex>& lock)
{
    (void)lock;  // held
    expire_holds(Clock::now());
    while (on_device_ < max_on_device) {
        // A second item only while no other flow waits (see the header).
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
        std::shared_ptr<Item> item = std::move(queue.front());
        queue.pop_front();
        put_on_device(*item, now);
        item->release();
    }
}

DeviceService Scheduler::report() const
{
    std::lock_guard lock(mutex_);
    return book_.report(Clock::now());
}

}  // namespace vaccel::backend::cuda
