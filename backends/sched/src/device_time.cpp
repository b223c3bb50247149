// device_time.cpp - deficit round-robin over measured device time, latency
// before batch, share caps (device_time.hpp).
#include "vaccel/sched/device_time.hpp"

#include <algorithm>
#include <bit>
#include <limits>

namespace vaccel::sched {
namespace {

constexpr std::uint32_t clamp_weight(std::uint32_t w) { return std::clamp(w, 1u, 1000u); }
constexpr std::uint32_t clamp_share(std::uint32_t s) { return std::clamp(s, 1u, 1000u); }

}  // namespace

DeviceTime::Flow& DeviceTime::flow_of(FlowId id) { return flows_[id]; }

void DeviceTime::set_policy(FlowId id, FlowPolicy policy)
{
    policy.weight = clamp_weight(policy.weight);
    policy.share_permille = clamp_share(policy.share_permille);
    Flow& flow = flow_of(id);
    const bool moves = flow.in_ring && flow.policy.priority != policy.priority;
    if (moves) {
        (flow.policy.priority == Priority::latency ? latency_ring_ : batch_ring_)
            .erase(flow.position);
        flow.in_ring = false;
    }
    flow.policy = policy;
    if (moves) enter_ring(id, flow);
}

void DeviceTime::enter_ring(FlowId id, Flow& flow)
{
    std::list<FlowId>& ring = flow.policy.priority == Priority::latency ? latency_ring_ : batch_ring_;
    flow.position = ring.insert(ring.end(), id);
    flow.in_ring = true;
    flow.credited = false;
}

void DeviceTime::leave_ring_if_idle(Flow& flow)
{
    if (!flow.in_ring || flow.ready != 0 || flow.in_flight != 0) return;
    (flow.policy.priority == Priority::latency ? latency_ring_ : batch_ring_).erase(flow.position);
    flow.in_ring = false;
    flow.credited = false;
    // Unused credit is not banked while idle; a debt stays until paid, so
    // going idle for a moment never wipes out what a flow overdrew.
    flow.deficit_ns = std::min<std::int64_t>(flow.deficit_ns, 0);
}

void DeviceTime::ready(FlowId id, Clock::time_point now, std::uint32_t count)
{
    if (count == 0) return;
    Flow& flow = flow_of(id);
    if (flow.idle_since) {
        // Back from idle: whether it came within the hold (earns_hold()).
        const bool soon = now - *flow.idle_since <= options_.latency_hold;
        flow.returns = static_cast<std::uint8_t>((flow.returns << 1) | (soon ? 1 : 0));
        flow.returns_known = static_cast<std::uint8_t>(std::min(flow.returns_known + 1, 8));
        flow.idle_since.reset();
    }
    flow.ready += count;
    if (!flow.in_ring) enter_ring(id, flow);
}

void DeviceTime::withdraw(FlowId id, std::uint32_t count)
{
    auto found = flows_.find(id);
    if (found == flows_.end()) return;
    Flow& flow = found->second;
    flow.ready -= std::min(count, flow.ready);
    leave_ring_if_idle(flow);
}

void DeviceTime::put_back(FlowId id)
{
    auto found = flows_.find(id);
    if (found == flows_.end() || found->second.in_flight == 0) return;
    --found->second.in_flight;
    ++found->second.ready;
}

bool DeviceTime::others_ready(FlowId id) const
{
    return std::ranges::any_of(flows_, [&](const auto& f) { return f.first != id && f.second.ready != 0; });
}

void DeviceTime::forget(FlowId id)
{
    auto found = flows_.find(id);
    if (found == flows_.end() || found->second.ready != 0 || found->second.in_flight != 0) return;
    if (hold_ && hold_->flow == id) hold_.reset();
    flows_.erase(found);
}

void DeviceTime::expire(Flow& flow, Clock::time_point now)
{
    while (!flow.recent.empty() && flow.recent.front().at + options_.share_window <= now) {
        flow.recent_total -= flow.recent.front().used;
        flow.recent.pop_front();
    }
}

std::optional<DeviceTime::Clock::time_point> DeviceTime::cap_hold(Flow& flow,
                                                                  Clock::time_point now)
{
    if (flow.policy.share_permille >= 1000) return std::nullopt;
    expire(flow, now);
    const Duration allowed = options_.share_window * flow.policy.share_permille / 1000;
    if (flow.recent_total < allowed) return std::nullopt;
    // Held until enough of the oldest charges leave the window.
    Duration left = flow.recent_total;
    for (const Charge& c : flow.recent) {
        left -= c.used;
        if (left < allowed) return c.at + options_.share_window;
    }
    return now + options_.share_window;  // not reached: the loop empties `left`
}

std::optional<FlowId> DeviceTime::pick(std::list<FlowId>& ring, Clock::time_point now,
                                       std::optional<Clock::time_point>& held)
{
    for (int round = 0; round < 2 && !ring.empty(); ++round) {
        const std::size_t members = ring.size();
        for (std::size_t i = 0; i < members; ++i) {
            const FlowId id = ring.front();
            Flow& flow = flows_.at(id);
            std::optional<Clock::time_point> hold;
            if (flow.ready != 0) hold = cap_hold(flow, now);
            if (flow.ready != 0 && !hold) {
                if (!flow.credited) {
                    flow.deficit_ns += static_cast<std::int64_t>(flow.policy.weight) *
                                       options_.quantum_per_weight.count();
                    flow.credited = true;
                }
                if (flow.deficit_ns > 0) return id;  // the visit goes on
            }
            if (hold) held = held ? std::min(*held, *hold) : *hold;
            // The visit ends: to the tail, credited again next time.
            flow.credited = false;
            ring.splice(ring.end(), ring, ring.begin());
        }
        // A whole pass credited every servable flow once and none came
        // out positive (debts larger than a quantum): give every servable
        // flow, at once, the visits the nearest to positive still needs
        // but one; the next pass's credit makes that one positive.
        std::int64_t visits = std::numeric_limits<std::int64_t>::max();
        for (FlowId id : ring) {
            Flow& flow = flows_.at(id);
            if (flow.ready == 0 || cap_hold(flow, now)) continue;
            const std::int64_t quantum =
                static_cast<std::int64_t>(flow.policy.weight) * options_.quantum_per_weight.count();
            visits = std::min(visits, (-flow.deficit_ns) / quantum + 1);
        }
        if (visits == std::numeric_limits<std::int64_t>::max()) return std::nullopt;
        for (FlowId id : ring) {
            Flow& flow = flows_.at(id);
            if (flow.ready == 0 || cap_hold(flow, now)) continue;
            flow.deficit_ns += (visits - 1) * static_cast<std::int64_t>(flow.policy.weight) *
                               options_.quantum_per_weight.count();
        }
    }
    return std::nullopt;
}

bool DeviceTime::earns_hold(const Flow& flow) const
{
    if (flow.returns_known < 4) return true;
    const unsigned known = (1u << flow.returns_known) - 1;
    return 2 * std::popcount(flow.returns & known) >= flow.returns_known;
}

bool DeviceTime::batch_ready(Clock::time_point now)
{
    // A batch flow its own cap holds back would not run anyway.
    return std::ranges::any_of(batch_ring_, [&](FlowId id) {
        Flow& flow = flows_.at(id);
        return flow.ready != 0 && !cap_hold(flow, now);
    });
}

void DeviceTime::end_hold(Clock::time_point now)
{
    auto found = flows_.find(hold_->flow);
    if (hold_->batch_waited_since && found != flows_.end()) {
        // The device sat idle for the flow while batch work waited: that is
        // the flow's device time, as if it had run.
        const Clock::time_point end = std::min(now, hold_->until);
        const Duration idle = std::max(Duration{0}, end - *hold_->batch_waited_since);
        found->second.held += idle;
        bill(found->second, idle, end);
    }
    hold_.reset();
}

bool DeviceTime::hold_holds(Clock::time_point now)
{
    if (!hold_) return false;
    auto found = flows_.find(hold_->flow);
    const bool back = found == flows_.end() || found->second.ready != 0 ||
                      found->second.in_flight != 0 ||
                      found->second.policy.priority != Priority::latency;
    if (!back && now < hold_->until) return true;
    end_hold(now);
    return false;
}

DeviceTime::Choice DeviceTime::next(Clock::time_point now)
{
    Choice choice;
    const bool holding = hold_holds(now);
    std::optional<FlowId> id = pick(latency_ring_, now, choice.held);
    if (!id && holding && batch_ready(now)) {
        if (!hold_->batch_waited_since) hold_->batch_waited_since = now;
        choice.held = choice.held ? std::min(*choice.held, hold_->until) : hold_->until;
        return choice;
    }
    if (!id) id = pick(batch_ring_, now, choice.held);
    if (!id) return choice;
    Flow& flow = flows_.at(*id);
    --flow.ready;
    ++flow.in_flight;
    choice.flow = id;
    choice.held.reset();
    return choice;
}

void DeviceTime::bill(Flow& flow, Duration used, Clock::time_point now)
{
    flow.deficit_ns -= used.count();
    flow.charged += used;
    flow.recent.push_back({now, used});
    flow.recent_total += used;
    expire(flow, now);
}

void DeviceTime::charge(FlowId id, Duration used, Clock::time_point now)
{
    auto found = flows_.find(id);
    if (found == flows_.end()) return;
    Flow& flow = found->second;
    if (flow.in_flight != 0) --flow.in_flight;
    bill(flow, std::max(used, Duration{0}), now);
    const bool goes_idle = flow.ready == 0 && flow.in_flight == 0;
    if (goes_idle && flow.policy.priority == Priority::latency &&
        options_.latency_hold > Duration{0}) {
        flow.idle_since = now;
        if (earns_hold(flow)) {
            if (hold_) end_hold(now);  // one hold at a time: the latest flow's
            hold_ = Hold{id, now + options_.latency_hold, std::nullopt};
        }
    }
    leave_ring_if_idle(flow);
}

std::optional<DeviceTime::Account> DeviceTime::account(FlowId id, Clock::time_point now)
{
    auto found = flows_.find(id);
    if (found == flows_.end()) return std::nullopt;
    Flow& flow = found->second;
    expire(flow, now);
    return Account{flow.policy,  flow.ready,        flow.in_flight, flow.deficit_ns,
                   flow.charged, flow.recent_total, flow.held};
}

}  // namespace vaccel::sched
