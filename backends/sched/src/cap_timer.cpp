// cap_timer.cpp - waking a scheduler when a share cap lapses (cap_timer.hpp).
#include "vaccel/sched/cap_timer.hpp"

namespace vaccel::sched {

CapTimer::CapTimer(std::mutex& mutex, Pump pump)
    : mutex_(mutex), pump_(std::move(pump)), thread_([this] { loop(); })
{
}

CapTimer::~CapTimer()
{
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void CapTimer::wake_at(Clock::time_point at)
{
    if (at_ && *at_ <= at) return;
    at_ = at;
    wake_.notify_all();
}

void CapTimer::loop()
{
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        if (!at_) {
            wake_.wait(lock);
            continue;
        }
        const Clock::time_point at = *at_;
        if (wake_.wait_until(lock, at) == std::cv_status::timeout || Clock::now() >= at) {
            at_.reset();
            pump_(lock);
        }
    }
}

}  // namespace vaccel::sched
