// flow_book.hpp - the flows of one device's scheduler, and what it served
// (docs/adr/0026-gpu-device-scheduler.md).
//
// Owns: the device's DeviceTime accounts, which tenant key names which flow,
// and the record of the latest dispatches (Backend::device_service()).
// Decides:
//  - a context gets a flow of its own (own_flow()) when it is made, and joins
//    its tenant's flow when the engine names the tenant (flow_for()); every
//    context of one tenant on the device shares that flow, so more sessions
//    or contexts buy no more of the device;
//  - a flow lives while a context holds its tag or it has work; sweep()
//    forgets the rest;
//  - the record keeps the latest record_depth dispatches, numbered from the
//    device's first; an entry names its flow's key as it was then.
// Threading: not thread-safe; a device's scheduler calls it under its own
// lock. Backends keep the work itself (their FIFOs), the devices and the
// clocks; this class knows none of them.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "vaccel/backend/backend.hpp"
#include "vaccel/sched/device_time.hpp"

namespace vaccel::sched {

// Held by each context of a flow: the flow lives while one does.
struct FlowTag {
    FlowId id = 0;
    std::string key;  // the tenant's key; empty for a context's own flow
};

// The DeviceTime policy a context's schedule asks for.
FlowPolicy policy_of(const backend::ContextSchedule& schedule);

std::uint64_t ns_since_epoch(DeviceTime::Clock::time_point t);

class FlowBook {
public:
    using Clock = DeviceTime::Clock;
    static constexpr std::size_t record_depth = 4096;

    explicit FlowBook(DeviceTime::Options options = {}) : time_(options) {}

    DeviceTime& time() { return time_; }

    std::shared_ptr<FlowTag> own_flow();
    // The tenant's flow for `schedule.flow` (made by its first context,
    // kept while any lives), with the schedule's policy from now on;
    // `current` keeps its flow when the schedule names no tenant.
    std::shared_ptr<FlowTag> flow_for(const backend::ContextSchedule& schedule,
                                      std::shared_ptr<FlowTag> current);
    // Forgets flows no context holds and with no work; returns their ids
    // (the caller drops its FIFOs of them).
    std::vector<FlowId> sweep(Clock::time_point now);

    // A dispatch of `flow` at `now`: its entry number, for ended().
    std::uint64_t dispatched(FlowId flow, Clock::time_point now);
    // Entry `entry` ended having used `used_ns` (no-op once it left the record).
    void ended(std::uint64_t entry, std::uint64_t used_ns);

    // The flows and the record. `servers`: how many items the device runs
    // at once (DeviceService::servers).
    backend::DeviceService report(Clock::time_point now, std::uint32_t servers = 1);

private:
    struct Entry {
        FlowId flow;
        std::string key;  // the flow's key then (the flow may be forgotten since)
        std::uint64_t at_ns;
        std::uint64_t used_ns;
        bool ended;
    };
    std::string key_of(FlowId flow) const;

    DeviceTime time_;
    std::unordered_map<FlowId, std::weak_ptr<FlowTag>> tags_;
    std::map<std::string, std::weak_ptr<FlowTag>> tenants_;
    FlowId next_flow_ = 1;
    // The latest dispatches, oldest first: entry `first_entry_ + i` is record_[i].
    std::deque<Entry> record_;
    std::uint64_t first_entry_ = 0;
};

}  // namespace vaccel::sched
