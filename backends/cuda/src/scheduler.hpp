// scheduler.hpp - the one scheduler of a CUDA device served through context
// hosts: whose accepted work a host may put on its stream next
// (docs/adr/0026-gpu-device-scheduler.md).
//
// Owns: each flow's FIFO of accepted work not yet released, the flows'
// accounts (sched::FlowBook) and a timer that wakes it when a share cap
// lapses (sched::CapTimer).
// Decides:
//  - every submission and launch of every context of the device is held by
//    its host once accepted (CudaOptions::hold_starts) and goes on its stream
//    when this scheduler releases it, in the order DeviceTime serves the
//    flows; a context's flow is its tenant's, so the contexts of one tenant
//    share one account;
//  - one item is on the device while other flows have work waiting: contexts
//    are processes, and the driver time-slices the work of two processes,
//    so two flows' work on the device at once would each be slowed by the
//    other and neither could be charged its own time. While no other flow
//    waits, the flow on the device may put a second item behind its first
//    (max_on_device), so a lone tenant's stream does not idle between its
//    items. An item is charged from the later of its release and the end of
//    the item before it to its own end, as the daemon sees them, so the
//    charges add up to the time the device was held. A tenant whose work
//    arrives waits for the item on the device (at most two, when it came
//    while a lone tenant pipelined), then goes by DRR; a tenant that keeps
//    one item running and one waiting is backlogged, so weights hold for
//    closed-loop tenants too;
//  - within a flow, work is released in the order it became ready (accepted,
//    or its gate reached); one that ends before it is released (cancelled,
//    its host lost) leaves its FIFO uncharged;
//  - an item may go out in segments (a TOSA run cut by its host,
//    slicing.hpp): each segment is released, counted on the device and
//    charged as an item is, and the item stays at the head of its flow's
//    FIFO until its last segment is released, so nothing else of its flow
//    (nothing else of its context, whose runs share a program's arena)
//    goes between its segments, while other flows' work may;
//  - raw kernels are items like any other: charged what they took, held
//    back while their tenant is over its share (they are not cut);
//  - an item that keeps the device longer than the hold bound (a kernel
//    that never ends, a host that never reports) stops counting as on the
//    device: the others' work goes out beside it and the driver
//    time-slices them, as without a scheduler; it is charged its whole
//    interval when it ends. No tenant can hold a device against the rest.
// Locking: mutex_ guards everything here and every Item's fields. Release
// messages are sent with mutex_ held (order: scheduler, then a host's send
// lock), so a flow's items reach their hosts in order; a send has its own
// short deadline (Item::release), past which that host is killed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "vaccel/backend/backend.hpp"
#include "vaccel/sched/cap_timer.hpp"
#include "vaccel/sched/flow_book.hpp"

namespace vaccel::backend::cuda {

// One accepted submission or launch as the scheduler sees it.
struct Item {
    virtual ~Item() = default;
    // Tells the item's host to put its next segment on its stream (mutex_
    // held: quick).
    virtual void release() = 0;

    // made: not ready yet; live: enqueued or started; ended: reported.
    enum class Stage { made, live, ended };
    sched::FlowId flow = 0;
    Stage stage = Stage::made;
    std::uint32_t segments = 1;  // how many it goes out in (set_segments)
    std::uint32_t released = 0;  // segments released so far
    std::uint32_t finished = 0;  // segments whose end segment_ended() took
    bool queued = false;         // in its flow's FIFO: a segment waits for release
};

class Scheduler {
public:
    static constexpr std::uint32_t max_on_device = 2;

    // `hold_bound`: how long one item may keep the device to its flow;
    // `latency_hold`: DeviceTime::Options::latency_hold.
    Scheduler(std::chrono::milliseconds hold_bound, std::chrono::microseconds latency_hold);
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    std::shared_ptr<sched::FlowTag> own_flow();
    std::shared_ptr<sched::FlowTag> flow_for(const ContextSchedule& schedule,
                                             std::shared_ptr<sched::FlowTag> current);

    // Before its request goes to its host: true when the item would be
    // released at once (the device is free for its flow and its flow has
    // nothing queued), and it is then on the device already; its host
    // starts it as it accepts it, which saves the release message. A
    // refused item is taken back with unstart().
    bool start_now(Item& item);
    // A start_now() item its host refused: it never ran and is not charged.
    void unstart(Item& item);
    // An accepted item ready to start (no gate, or its gate reached); an
    // item that ended already, or started at once, is not queued.
    void enqueue(std::shared_ptr<Item> item);
    // The accepted item goes out in `segments` (its host's reply said so),
    // before enqueue(); one start_now() started waits for its second
    // segment's release at the head of its flow.
    void set_segments(std::shared_ptr<Item> item, std::uint32_t segments);
    // One of the item's segments on the device ended, not its last; false
    // when none of its segments is on the device (the host broke the
    // protocol).
    bool segment_ended(Item& item);
    // The item ended (completed, failed, cancelled), released or not.
    void ended(Item& item);

    DeviceService report() const;

private:
    using Clock = sched::DeviceTime::Clock;
    // A segment on the device: released at released_ns, its entry in the
    // FlowBook's record; overran: released longer ago than the hold bound
    // and still running, so the device no longer counts it (others go
    // beside it).
    struct Running {
        Item* item;
        std::uint64_t released_ns;
        std::uint64_t entry;
        bool overran = false;
    };
    void pump(std::unique_lock<std::mutex>& lock);
    // The next segment of `item` goes on the device.
    void put_on_device(Item& item, Clock::time_point now);
    // Charges and forgets the segment running_[at], which ended at `now`.
    void charge_ended(std::size_t at, Clock::time_point now);
    // Segments on the device past the hold bound stop counting.
    void expire_holds(Clock::time_point now);

    mutable std::mutex mutex_;
    mutable sched::FlowBook book_;  // report() expires old charges
    std::unordered_map<sched::FlowId, std::deque<std::shared_ptr<Item>>> queues_;
    const std::chrono::milliseconds hold_bound_;
    std::uint32_t on_device_ = 0;  // running_ entries not overran
    // Segments released and not ended, oldest first; each item alive until
    // ended() or unstart() takes its entries out (its host channel holds it).
    std::vector<Running> running_;
    sched::FlowId device_flow_ = 0;  // the flow on the device while on_device_ > 0
    std::uint64_t last_end_ns_ = 0;
    sched::CapTimer timer_;  // last: pumps when a share cap lapses
};

}  // namespace vaccel::backend::cuda
