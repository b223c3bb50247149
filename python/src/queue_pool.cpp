// queue_pool.cpp - taking, making and giving back queues (queue_pool.hpp).
#include "queue_pool.hpp"

#include <cerrno>
#include <optional>

namespace vaccel::python {

std::uint64_t QueuePool::take(const ClientCore::Hold& hold, std::uint64_t context)
{
    std::unique_lock lock(mutex_);
    for (;;) {
        PerContext& pool = contexts_[context];
        if (!pool.idle.empty()) {
            const std::uint64_t queue = pool.idle.back();
            pool.idle.pop_back();
            ++pool.busy;
            return queue;
        }
        ++pool.busy;  // counted while being made: a waiter then knows one will come back
        lock.unlock();
        std::uint64_t queue = 0;
        const int rc = vaccel_queue_create(hold.get(), context, &queue);
        std::optional<CallFailure> refused;
        if (rc < 0)
            refused = CallFailure::last_call(rc, "cannot create a queue to run the program");
        lock.lock();
        PerContext& same = contexts_[context];
        if (!refused)
            return queue;
        --same.busy;
        // At the queue limit every queue of the context is this pool's: if
        // none is idle and none in use, the limit admits none at all.
        if (rc != -EDQUOT || (same.busy == 0 && same.idle.empty()))
            throw *refused;
        // At the queue limit while other runs hold queues: one comes back
        // (or already came back while this one was being refused).
        queue_idle_.wait(lock, [&] {
            const PerContext& now = contexts_[context];
            return !now.idle.empty() || now.busy == 0;
        });
    }
}

void QueuePool::give_back(std::uint64_t context, std::uint64_t queue)
{
    {
        std::lock_guard lock(mutex_);
        PerContext& pool = contexts_[context];
        pool.idle.push_back(queue);
        --pool.busy;
    }
    queue_idle_.notify_all();
}

std::size_t QueuePool::size(std::uint64_t context) const
{
    std::lock_guard lock(mutex_);
    const auto found = contexts_.find(context);
    return found == contexts_.end() ? 0 : found->second.idle.size() + found->second.busy;
}

}  // namespace vaccel::python
