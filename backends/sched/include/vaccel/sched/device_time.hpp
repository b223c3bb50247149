// device_time.hpp - which tenant a device serves next, by measured device
// time (docs/adr/0026-gpu-device-scheduler.md).
//
// Owns: the accounts of the flows (tenants) of one device and the order of
// service; not the work itself (the caller keeps each flow's FIFO) and no
// threads or clocks (the caller passes `now`, so tests set the time).
// Decides:
//  - A flow is one tenant on one device (ADR 0024), whatever its number of
//    sessions and contexts: the caller keys flows by tenant.
//  - Service is deficit round-robin over measured device time (Shreedhar &
//    Varghese, with costs known only after the fact): a flow at the head of
//    the ring is credited weight * quantum_per_weight; it is served while
//    its deficit is positive; what its work took is charged when it ends
//    (charge()), and may take the deficit below zero, which the flow then
//    pays back over its next visits. A flow that is served while its deficit
//    is positive overdraws by at most the work it has in flight, so over a
//    window in which a set of flows stays backlogged each gets weight /
//    sum(weights) of the time charged, to within one quantum and its
//    in-flight work per flow.
//  - Priority: a flow of Priority::latency is served before every batch
//    flow whenever it has ready work; latency flows share by the same DRR
//    among themselves, so a latency tenant that floods is still held to its
//    weight against other latency tenants (and starves batch: the rule
//    that grants latency is the operator's).
//  - Share cap: a flow whose share_permille is below 1000 is held back
//    while its charged time within the last share_window reaches
//    share_permille / 1000 of the window, even when no other flow has work
//    (next() then says when the first hold lapses).
//  - A flow that goes idle (no ready work, none in flight) leaves the ring
//    and forgets its deficit, but not its charges within the share window.
//  - Latency hold (anticipation, as an I/O scheduler's idle slice): when a
//    latency flow's last item ends and the flow has nothing else, batch
//    flows are not served for up to latency_hold, so a tenant that submits
//    its next item as the last one ends (a closed loop, a burst) finds the
//    device free instead of behind a batch item that started in the gap.
//    The hold ends when the flow's next item is ready (it is served at once)
//    or when the time lapses. It is granted only to a flow that came back
//    within the hold in at least half of its last 8 idle moments (or has
//    fewer than 4 of them), so a tenant whose items come far apart costs
//    batch flows no idle time. While batch work was held back for it, the
//    flow is charged the idle time as device time (Account::held), so its
//    weight and share cap count the device it kept. Off when 0.
// Threading: not thread-safe; one owner (a device's dispatcher) calls it
// under its own lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <list>
#include <optional>
#include <unordered_map>

namespace vaccel::sched {

enum class Priority : std::uint8_t { batch = 0, latency = 1 };

struct FlowPolicy {
    static constexpr std::uint32_t default_weight = 100;
    std::uint32_t weight = default_weight;   // 1..1000 (clamped)
    Priority priority = Priority::batch;
    std::uint32_t share_permille = 1000;     // 1..1000 (clamped); 1000: no cap
    friend bool operator==(const FlowPolicy&, const FlowPolicy&) = default;
};

using FlowId = std::uint64_t;

class DeviceTime {
public:
    using Clock = std::chrono::steady_clock;
    using Duration = std::chrono::nanoseconds;

    struct Options {
        // Credit per unit of weight per visit: weight 100 is credited 1 ms.
        Duration quantum_per_weight = std::chrono::microseconds(10);
        // The window a share cap is measured over.
        Duration share_window = std::chrono::seconds(1);
        // How long batch flows wait for a latency flow's next item after
        // its last one ended (see above); 0: never.
        Duration latency_hold{0};
    };

    DeviceTime() : DeviceTime(Options{}) {}
    explicit DeviceTime(Options options) : options_(options) {}

    // The flow's policy from its next credit on; creates the flow.
    void set_policy(FlowId flow, FlowPolicy policy);
    // `count` more items of the flow are ready to start, from `now`.
    void ready(FlowId flow, Clock::time_point now, std::uint32_t count = 1);

    struct Choice {
        std::optional<FlowId> flow;              // serve one item of it now
        std::optional<Clock::time_point> held;   // nothing now; a cap lapses then
    };
    // The flow whose item should start at `now`: that flow's ready count
    // drops by one and its in-flight count rises by one. No flow when none
    // is ready, or when every ready flow is held by its cap (then `held`).
    Choice next(Clock::time_point now);
    // An item of the flow that next() started has ended after using the
    // device for `used`, at `now`.
    void charge(FlowId flow, Duration used, Clock::time_point now);
    // An item next() started did not start after all (the device could not
    // take it yet): it is ready again, its flow's place and credit kept.
    void put_back(FlowId flow);
    // Whether a flow other than `flow` has items ready to start.
    bool others_ready(FlowId flow) const;
    // An item counted by ready() will not start after all (cancelled).
    void withdraw(FlowId flow, std::uint32_t count = 1);
    // Forgets an idle flow (no ready or in-flight work); no-op otherwise.
    void forget(FlowId flow);

    struct Account {
        FlowPolicy policy;
        std::uint32_t ready = 0, in_flight = 0;
        std::int64_t deficit_ns = 0;
        Duration charged{0};                 // in all, since the flow was made
        Duration charged_in_window{0};       // within the last share_window
        Duration held{0};  // of `charged`: device kept idle for it (latency hold)
    };
    // The flow's account at `now`, if the flow exists.
    std::optional<Account> account(FlowId flow, Clock::time_point now);

private:
    struct Charge {
        Clock::time_point at;
        Duration used;
    };
    struct Flow {
        FlowPolicy policy;
        std::uint32_t ready = 0, in_flight = 0;
        std::int64_t deficit_ns = 0;
        bool credited = false;
        bool in_ring = false;
        Duration charged{0};
        // Charges within the share window, oldest first.
        std::deque<Charge> recent;
        Duration recent_total{0};
        std::list<FlowId>::iterator position{};
        Duration held{0};
        // Latency hold: when it last went idle (nullopt while it has work,
        // or once its return was seen), and whether it came back within the
        // hold in each of its last `returns_known` (at most 8) idle moments,
        // newest in bit 0.
        std::optional<Clock::time_point> idle_since;
        std::uint8_t returns = 0, returns_known = 0;
    };
    // The latency hold in force: batch flows wait for `flow` until `until`;
    // `batch_waited_since`: since when batch work was ready and held back.
    struct Hold {
        FlowId flow;
        Clock::time_point until;
        std::optional<Clock::time_point> batch_waited_since;
    };

    Flow& flow_of(FlowId id);
    // Adds `used` to the flow's charges (deficit, totals, share window).
    void bill(Flow& flow, Duration used, Clock::time_point now);
    bool earns_hold(const Flow& flow) const;
    // Ends the hold in force at `now`, charging its flow the idle time
    // batch work waited for it.
    void end_hold(Clock::time_point now);
    // Ends the hold in force if it lapsed or its flow is back; true while
    // it holds.
    bool hold_holds(Clock::time_point now);
    // Whether a batch flow has work it could start at `now`.
    bool batch_ready(Clock::time_point now);
    void enter_ring(FlowId id, Flow& flow);
    void leave_ring_if_idle(Flow& flow);
    void expire(Flow& flow, Clock::time_point now);
    // When the flow's cap stops holding it, if it holds it at `now`.
    std::optional<Clock::time_point> cap_hold(Flow& flow, Clock::time_point now);
    // DRR over one ring; nullopt when none of it may be served now.
    std::optional<FlowId> pick(std::list<FlowId>& ring, Clock::time_point now,
                               std::optional<Clock::time_point>& held);

    Options options_;
    std::unordered_map<FlowId, Flow> flows_;
    std::list<FlowId> latency_ring_, batch_ring_;  // flows with work, head being visited
    std::optional<Hold> hold_;
};

}  // namespace vaccel::sched
