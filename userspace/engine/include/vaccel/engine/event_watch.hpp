// event_watch.hpp - per-event completion: who is told when an event is done.
//
// Owns: for one accepted submission, whether it is done and the waiters
// subscribed to it. An EventWatch is the engine's backend::EventSink: the
// backend calls completed() once, from any thread, after the event left
// pending; completed() wakes exactly the waiters subscribed to this event
// (and the session's listener, if any), never every wait of every session.
//
// Ownership: shared by the session's EventRecord and the backend's
// submission. Waiters are held by shared_ptr while subscribed; completed()
// drops them all after waking them.
//
// No lost wake-up: subscribe() and completed() take the same mutex, so a
// subscriber either sees done() (and counts the event done) or is woken.
// Locking: the watch's mutex is a leaf. completed() wakes the waiters after
// releasing it; wake() still runs on the backend's thread and must not block
// or call back into the engine.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>

#include "vaccel/backend/backend.hpp"
#include "vaccel/common/small_vector.hpp"

namespace vaccel::engine {

class Waiter {
public:
    virtual ~Waiter() = default;
    // Some event this waiter subscribed to is done. Any thread; must not
    // block; may be called after the waiter stopped caring (ignore it then).
    virtual void wake() noexcept = 0;
};

// A waiter a blocked thread sleeps on (embedded waits, session teardown).
class SleepingWaiter final : public Waiter {
public:
    void wake() noexcept override;
    // Until woken (then re-armed) or `deadline` passes (nullopt: no deadline).
    void sleep(std::optional<std::chrono::steady_clock::time_point> deadline);

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    bool woken_ = false;
};

class EventWatch final : public backend::EventSink {
public:
    // `listener` (may be null) is woken on completion too: the session's
    // "some event of mine is done" signal.
    explicit EventWatch(std::shared_ptr<Waiter> listener = nullptr);

    void completed(const backend::EventStatus& status) noexcept override;
    bool done() const;
    // Subscribes `waiter` unless the event is done; returns false (and does
    // not subscribe) when it is.
    bool subscribe(const std::shared_ptr<Waiter>& waiter);
    void unsubscribe(const Waiter* waiter);

private:
    mutable std::mutex mutex_;
    bool done_ = false;
    std::shared_ptr<Waiter> listener_;
    // Inline: a watch rarely has more than one wait on it at a time.
    SmallVector<std::shared_ptr<Waiter>, 2> waiters_;
};

}  // namespace vaccel::engine
