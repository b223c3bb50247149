// cap_timer.hpp - a thread that wakes a device's scheduler when a share cap
// that holds its work back lapses (docs/adr/0026-gpu-device-scheduler.md).
//
// Owns: one thread and the earliest moment it was told of.
// Locking: the scheduler's own mutex, shared by reference: wake_at() is
// called with it held, and the thread calls `pump` with it held. The
// scheduler constructs the timer last and destroys it first, with its mutex
// released (the destructor takes it).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace vaccel::sched {

class CapTimer {
public:
    using Clock = std::chrono::steady_clock;
    using Pump = std::function<void(std::unique_lock<std::mutex>&)>;

    CapTimer(std::mutex& mutex, Pump pump);
    ~CapTimer();
    CapTimer(const CapTimer&) = delete;
    CapTimer& operator=(const CapTimer&) = delete;

    // With the mutex held: pump at `at`, unless an earlier wake is set.
    void wake_at(Clock::time_point at);

private:
    void loop();

    std::mutex& mutex_;
    Pump pump_;
    bool stopping_ = false;
    std::optional<Clock::time_point> at_;
    std::condition_variable wake_;
    std::thread thread_;  // last: started once everything above exists
};

}  // namespace vaccel::sched
