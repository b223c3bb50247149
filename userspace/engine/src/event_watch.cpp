// event_watch.cpp - per-event completion (see event_watch.hpp).
#include "vaccel/engine/event_watch.hpp"

#include <algorithm>
#include <utility>

namespace vaccel::engine {

void SleepingWaiter::wake() noexcept
{
    {
        std::lock_guard lock(mutex_);
        woken_ = true;
    }
    changed_.notify_all();
}

void SleepingWaiter::sleep(std::optional<std::chrono::steady_clock::time_point> deadline)
{
    std::unique_lock lock(mutex_);
    if (deadline)
        changed_.wait_until(lock, *deadline, [&] { return woken_; });
    else
        changed_.wait(lock, [&] { return woken_; });
    woken_ = false;
}

EventWatch::EventWatch(std::shared_ptr<Waiter> listener) : listener_(std::move(listener)) {}

void EventWatch::completed(const backend::EventStatus&) noexcept
{
    SmallVector<std::shared_ptr<Waiter>, 2> waiters;
    std::shared_ptr<Waiter> listener;
    {
        std::lock_guard lock(mutex_);
        done_ = true;
        waiters = std::exchange(waiters_, {});
        listener.swap(listener_);
    }
    // Outside the lock: a subscriber that looks again on its wake sees
    // done() at once, and dropping the last reference to a waiter never
    // runs its destructor under this mutex.
    for (const auto& waiter : waiters)
        waiter->wake();
    if (listener)
        listener->wake();
}

bool EventWatch::done() const
{
    std::lock_guard lock(mutex_);
    return done_;
}

bool EventWatch::subscribe(const std::shared_ptr<Waiter>& waiter)
{
    std::lock_guard lock(mutex_);
    if (done_)
        return false;
    if (std::ranges::find(waiters_, waiter) == waiters_.end())
        waiters_.push_back(waiter);
    return true;
}

void EventWatch::unsubscribe(const Waiter* waiter)
{
    std::lock_guard lock(mutex_);
    SmallVector<std::shared_ptr<Waiter>, 2> kept;
    for (const auto& w : waiters_)
        if (w.get() != waiter)
            kept.push_back(w);
    waiters_ = std::move(kept);
}

}  // namespace vaccel::engine
