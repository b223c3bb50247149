// queue_pool.hpp - the queues of one client, shared by every program's runs.
//
// Owns: the idle queues of each context of a client (made on demand; the
// client's close releases them). Decides:
//  - a run takes a queue for its duration and gives it back, so concurrent
//    runs never share a queue, and a client holds as many queues per
//    context as it ever ran programs at once there, whatever the programs;
//  - a run that finds no idle queue makes one; if the context's queue
//    limit refuses it (ResourceLimit) while other runs of this client hold
//    queues of that context, it waits for one of them instead of failing.
// Lock: mutex_, taken with a Hold of the client and without the GIL; never
// held across the vaccel_queue_create round trip.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "client_core.hpp"

namespace vaccel::python {

class QueuePool {
public:
    std::uint64_t take(const ClientCore::Hold& hold, std::uint64_t context);
    void give_back(std::uint64_t context, std::uint64_t queue);
    // The queues of `context`, idle or in use (for tests and reports).
    std::size_t size(std::uint64_t context) const;

private:
    struct PerContext {
        std::vector<std::uint64_t> idle;
        std::size_t busy = 0;
    };
    mutable std::mutex mutex_;
    std::condition_variable queue_idle_;
    std::map<std::uint64_t, PerContext> contexts_;
};

// Takes a queue for one run and gives it back on every path out of it.
class QueueLease {
public:
    QueueLease(QueuePool& pool, const ClientCore::Hold& hold, std::uint64_t context)
        : pool_(pool), context_(context), queue_(pool.take(hold, context))
    {
    }
    ~QueueLease() { pool_.give_back(context_, queue_); }
    QueueLease(const QueueLease&) = delete;
    QueueLease& operator=(const QueueLease&) = delete;
    std::uint64_t queue() const { return queue_; }

private:
    QueuePool& pool_;
    std::uint64_t context_;
    std::uint64_t queue_;
};

}  // namespace vaccel::python
