// fair_queue.cpp - deficit round-robin over contexts (see fair_queue.hpp).
#include "fair_queue.hpp"

#include <algorithm>
#include <utility>

namespace vaccel::backend::cpu {

void FairQueue::set_weight(Flow& flow, std::uint32_t weight)
{
    flow.weight = std::clamp(weight, Flow::min_weight, Flow::max_weight);
}

void FairQueue::set_share(Flow& flow, std::uint32_t share_permille)
{
    flow.share_permille = std::clamp(share_permille, 1u, 1000u);
}

void FairQueue::charge(const std::shared_ptr<Lane>& lane, Clock::duration used,
                       Clock::time_point now)
{
    Flow& flow = *lane->flow;
    used = std::max(used, Clock::duration{0});
    if (!flow.charges.empty() && now - flow.charges.back().first < charge_bucket) {
        flow.charges.back().first = std::max(flow.charges.back().first, now);
        flow.charges.back().second += used;
    } else {
        flow.charges.reserve(share_window / charge_bucket + 1);
        flow.charges.push_back({now, used});
    }
    flow.charged += used;
    flow.charged_total += used;
    (void)charged_within(flow, now);
}

FairQueue::Clock::duration FairQueue::charged_within(Flow& flow, Clock::time_point now)
{
    while (!flow.charges.empty() && flow.charges.front().first + share_window <= now) {
        flow.charged -= flow.charges.front().second;
        flow.charges.pop_front();
    }
    return flow.charged;
}

std::optional<FairQueue::Clock::time_point> FairQueue::cap_hold(Flow& flow,
                                                                Clock::time_point now) const
{
    if (draining_ || flow.share_permille >= 1000) return std::nullopt;
    (void)charged_within(flow, now);
    const Clock::duration allowed = share_window * workers_ * flow.share_permille / 1000;
    if (flow.charged < allowed) return std::nullopt;
    // Held until enough of the oldest charges leave the window.
    Clock::duration left = flow.charged;
    for (std::size_t i = 0; i < flow.charges.size(); ++i) {
        const auto& [at, used] = flow.charges[i];
        left -= used;
        if (left < allowed) return at + share_window;
    }
    return now + share_window;  // not reached: the loop empties `left`
}

void FairQueue::enter_ring(const std::shared_ptr<Flow>& flow)
{
    flow->in_ring = true;
    flow->credited = false;
    flow->deficit = 0;
    if (spare_.empty()) {
        flow->position = ring_.insert(ring_.end(), flow);
        return;
    }
    ring_.splice(ring_.end(), spare_, spare_.begin());
    flow->position = std::prev(ring_.end());
    *flow->position = flow;
}

void FairQueue::leave_ring(Flow& flow)
{
    // Invariant: no ready lane and none running; erasing may drop the last
    // reference to the flow but for the lanes' own.
    flow.in_ring = false;
    flow.credited = false;
    flow.deficit = 0;
    spare_.splice(spare_.end(), ring_, flow.position);
    spare_.back().reset();  // `flow` may be gone from here on
}

namespace {

bool same_owner(const std::weak_ptr<Flow>& a, const std::shared_ptr<Flow>& b)
{
    return !a.owner_before(b) && !b.owner_before(a);
}

}  // namespace

void FairQueue::note_activity(const std::shared_ptr<Flow>& flow, Clock::time_point now)
{
    if (!latest_.seen || !same_owner(latest_.flow, flow)) latest_other_ = std::move(latest_);
    latest_ = Activity{flow, now, true};
}

std::optional<FairQueue::Clock::time_point> FairQueue::others_latest(
    const std::shared_ptr<Flow>& flow) const
{
    const Activity& other = same_owner(latest_.flow, flow) ? latest_other_ : latest_;
    if (!other.seen) return std::nullopt;
    return other.at;
}

std::optional<FairQueue::Clock::time_point> FairQueue::headroom_hold(
    const std::shared_ptr<Flow>& flow, Clock::time_point now) const
{
    if (workers_ < 2 || flow->running < workers_ - 1) return std::nullopt;
    const std::optional<Clock::time_point> other = others_latest(flow);
    if (!other || now - *other >= headroom_window) return std::nullopt;
    return *other + headroom_window;
}

bool FairQueue::push(const std::shared_ptr<Lane>& lane, std::shared_ptr<Submission> submission,
                     Clock::time_point now)
{
    note_activity(lane->flow, now);
    lane->pending.push_back(std::move(submission));
    ++lane->flow->queued;
    if (lane->scheduled) return false;  // ready already, or a worker runs it
    lane->scheduled = true;
    Flow& flow = *lane->flow;
    if (!flow.in_ring) enter_ring(lane->flow);
    flow.ready.push_back(lane);
    if (flow.ready.size() == 1) ++ready_flows_;
    return true;
}

std::optional<FairQueue::Dispatch> FairQueue::pop(Clock::time_point now)
{
    held_until_.reset();
    if (ready_flows_ == 0) return std::nullopt;
    // Dispatchable: ready, and not held back by the headroom rule. Holds do
    // not change during this call (no flow's `running` or activity does).
    bool any_eligible = false, latency_waits = false;
    for (const std::shared_ptr<Flow>& flow : ring_) {
        if (flow->ready.empty()) continue;
        std::optional<Clock::time_point> hold = headroom_hold(flow, now);
        if (!hold) hold = cap_hold(*flow, now);
        if (!hold) {
            any_eligible = true;
            latency_waits = latency_waits || flow->latency;
            continue;
        }
        if (!held_until_ || *hold < *held_until_) held_until_ = hold;
    }
    if (!any_eligible) return std::nullopt;
    // Eligible: dispatchable, and a latency flow when one is.
    auto eligible = [&](const std::shared_ptr<Flow>& flow) {
        return !flow->ready.empty() && (!latency_waits || flow->latency) &&
               !headroom_hold(flow, now) && !cap_hold(*flow, now);
    };
    held_until_.reset();
    // Terminates: some flow in the ring is eligible, and each pass over the
    // ring credits it its weight (>= 1), so within submission_cost passes
    // some eligible flow's deficit covers the cost.
    auto at = ring_.begin();
    for (;;) {
        // Skipped: all its lanes run on other workers, or the headroom rule
        // holds it back; its place and deficit stay as they are.
        while (!eligible(*at)) ++at;
        Flow& flow = **at;
        if (!flow.credited) {
            flow.deficit += flow.weight;
            flow.credited = true;
        }
        if (flow.deficit >= submission_cost) {
            flow.deficit -= submission_cost;
            std::shared_ptr<Lane> lane = std::move(flow.ready.front());
            flow.ready.pop_front();
            if (flow.ready.empty()) --ready_flows_;
            ++flow.running;
            ++running_;
            std::shared_ptr<Submission> submission = std::move(lane->pending.front());
            lane->pending.pop_front();
            --flow.queued;
            return Dispatch{std::move(lane), std::move(submission)};
        }
        // The visit ends: to the tail, to be credited again when it comes back.
        flow.credited = false;
        auto next = std::next(at);
        ring_.splice(ring_.end(), ring_, at);
        // Invariant: an eligible flow lies at or after `at` (the one just
        // moved to the tail is eligible), so the scan above never runs off
        // the end.
        at = next == ring_.end() ? ring_.begin() : next;
    }
}

bool FairQueue::claim(const std::shared_ptr<Lane>& lane, Clock::time_point now)
{
    Flow& flow = *lane->flow;
    if (lane->scheduled || ready_flows_ != 0 || running_ >= workers_ || cap_hold(flow, now))
        return false;
    note_activity(lane->flow, now);
    lane->scheduled = true;
    if (!flow.in_ring) enter_ring(lane->flow);
    ++flow.running;
    ++running_;
    return true;
}

bool FairQueue::finish(const std::shared_ptr<Lane>& lane)
{
    Flow& flow = *lane->flow;
    --flow.running;
    --running_;
    if (!lane->pending.empty()) {
        flow.ready.push_back(lane);
        if (flow.ready.size() == 1) ++ready_flows_;
        return true;
    }
    lane->scheduled = false;
    if (flow.ready.empty() && flow.running == 0) leave_ring(flow);
    return false;
}

}  // namespace vaccel::backend::cpu
