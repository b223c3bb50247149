// device_manager.hpp - the devices the engine serves, and who may call them.
//
// Owns: every opened Backend (one Device each; the device index is its
// position), the device-wide context accounting (max_contexts is a limit per
// device across all sessions) and the completion signal every backend's
// notifier raises.
//
// Decides:
//  - which backends are opened and in which order (DeviceOptions). For now
//    the CPU backend; GPU backends are appended by open() once they exist, so
//    only this file and device_manager.cpp learn about them.
//  - how backends are called: a Backend takes calls from one thread at a
//    time (backend.hpp), so every call goes through Device::call(), which
//    holds the device's mutex for exactly the duration of the call.
//
// Lock order (engine-wide): Session mutex -> Device mutex -> CompletionSignal
// mutex. The CompletionSignal mutex is a leaf: the backends' notifier takes
// only it, from any backend thread, so a notification never waits on a
// session or a device.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "vaccel.h"
#include "vaccel/backend/backend.hpp"
#include "vaccel/common/error.hpp"
#include "vaccel/common/limits.hpp"

namespace vaccel::engine {

// Raised each time some event of some device leaves pending. Waiters read
// generation() BEFORE looking at their events and then wait for it to move,
// so a completion between their look and their wait is never lost.
//
// A listener (one, optional) is called after each notify(), from the
// notifying backend thread, with the signal's mutex held: it must not block
// and must not call back into the engine (the daemon's listener posts to its
// reactor). It lets a caller that never blocks on wait_for_change() learn
// that it should look again.
class CompletionSignal {
public:
    void notify();
    std::uint64_t generation() const;
    // Replaces the listener (an empty function removes it). Any thread.
    void set_listener(std::function<void()> listener);
    // Blocks until generation() != seen or `deadline` passes (nullopt = no
    // deadline). Returns false on timeout.
    bool wait_for_change(std::uint64_t seen,
                         std::optional<std::chrono::steady_clock::time_point> deadline);

private:
    mutable std::mutex mutex_;  // guards generation_ and listener_; a leaf lock
    std::condition_variable changed_;
    std::function<void()> listener_;
    std::uint64_t generation_ = 0;
};

// A device's use, all sessions together, for the admin channel and metrics.
struct DeviceStats {
    backend::LiveCounters live;    // what the backend holds now
    std::uint64_t sessions = 0;     // sessions with at least one context here
    std::uint64_t submissions = 0;  // submissions accepted since the device opened
};

// One backend and the mutex that serialises calls into it.
class Device {
public:
    Device(std::uint32_t index, std::unique_ptr<backend::Backend> backend);

    std::uint32_t index() const { return index_; }
    // Immutable after opening: readable without the device mutex.
    const vaccel_device_info& info() const { return info_; }

    // Runs f(Backend&) under the device mutex and returns what f returns.
    template <class F>
    auto call(F&& f)
    {
        std::lock_guard lock(mutex_);
        return f(*backend_);
    }

    backend::LiveCounters live();

    // Contexts alive on this device, all sessions together, against the
    // device's own max_contexts. Accounting locks itself.
    Accounting& contexts() { return contexts_; }

    // Takes the device mutex (live counters): not for a thread that must
    // never block.
    DeviceStats stats();
    // Bookkeeping the engine does as sessions come and go (any thread).
    void session_arrived() { sessions_.fetch_add(1, std::memory_order_relaxed); }
    void session_left() { sessions_.fetch_sub(1, std::memory_order_relaxed); }
    void submission_accepted() { submissions_.fetch_add(1, std::memory_order_relaxed); }

private:
    std::uint32_t index_;
    std::mutex mutex_;  // guards every call into backend_
    std::unique_ptr<backend::Backend> backend_;
    vaccel_device_info info_;
    Accounting contexts_;
    std::atomic<std::uint64_t> sessions_{0};
    std::atomic<std::uint64_t> submissions_{0};
};

struct DeviceOptions {
    bool cpu = true;            // open the CPU backend
    unsigned cpu_threads = 0;   // its worker threads; 0 = hardware concurrency
};

class DeviceManager {
public:
    // Opens the backends DeviceOptions asks for. Fails (Unsupported,
    // VACCEL_D_NO_DEVICE) only when no device at all could be opened.
    static Result<std::shared_ptr<DeviceManager>> open(const DeviceOptions& options = {});

    // Takes backends already opened (tests, embedders); index = position.
    explicit DeviceManager(std::vector<std::unique_ptr<backend::Backend>> backends);
    ~DeviceManager();
    DeviceManager(const DeviceManager&) = delete;
    DeviceManager& operator=(const DeviceManager&) = delete;

    std::uint32_t count() const { return static_cast<std::uint32_t>(devices_.size()); }
    // nullptr when index >= count().
    Device* device(std::uint32_t index);
    // InvalidArgument, VACCEL_D_NO_DEVICE (arg0 = index, arg1 = count).
    Result<Device*> lookup(std::uint32_t index);

    // VACCEL_CAP_* offered by at least one device.
    std::uint64_t capabilities() const;

    CompletionSignal& completions() { return *completions_; }
    // Calls `listener` (from backend threads) each time some event of some
    // device leaves pending; see CompletionSignal::set_listener for what it
    // may do. One listener; a later call replaces it, an empty one removes it.
    void on_completion(std::function<void()> listener)
    {
        completions_->set_listener(std::move(listener));
    }

private:
    // Ownership: the signal is shared with every backend's notifier and is
    // declared first, so it outlives the backends (which may still notify
    // while their workers drain during destruction).
    std::shared_ptr<CompletionSignal> completions_;
    std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace vaccel::engine
