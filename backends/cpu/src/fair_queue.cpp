// fair_queue.cpp - deficit round-robin over contexts (see fair_queue.hpp).
#include "fair_queue.hpp"

#include <algorithm>

namespace vaccel::backend::cpu {

void FairQueue::set_weight(Flow& flow, std::uint32_t weight)
{
    flow.weight = std::clamp(weight, Flow::min_weight, Flow::max_weight);
}

void FairQueue::enter_ring(const std::shared_ptr<Flow>& flow)
{
    flow->in_ring = true;
    flow->credited = false;
    flow->deficit = 0;
    flow->position = ring_.insert(ring_.end(), flow);
}

void FairQueue::leave_ring(Flow& flow)
{
    // Invariant: no ready lane and none running; erasing may drop the last
    // reference to the flow but for the lanes' own.
    flow.in_ring = false;
    flow.credited = false;
    flow.deficit = 0;
    ring_.erase(flow.position);
}

bool FairQueue::push(const std::shared_ptr<Lane>& lane, std::shared_ptr<Submission> submission)
{
    lane->pending.push_back(std::move(submission));
    if (lane->scheduled) return false;  // ready already, or a worker runs it
    lane->scheduled = true;
    Flow& flow = *lane->flow;
    if (!flow.in_ring) enter_ring(lane->flow);
    flow.ready.push_back(lane);
    if (flow.ready.size() == 1) ++ready_flows_;
    return true;
}

std::optional<FairQueue::Dispatch> FairQueue::pop()
{
    if (ready_flows_ == 0) return std::nullopt;
    // Terminates: some flow in the ring is ready, and each pass over the
    // ring credits it its weight (>= 1), so within submission_cost passes
    // some ready flow's deficit covers the cost.
    auto at = ring_.begin();
    for (;;) {
        while ((*at)->ready.empty()) ++at;  // all its lanes run on other workers
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
            std::shared_ptr<Submission> submission = std::move(lane->pending.front());
            lane->pending.pop_front();
            return Dispatch{std::move(lane), std::move(submission)};
        }
        // The visit ends: to the tail, to be credited again when it comes back.
        flow.credited = false;
        auto next = std::next(at);
        ring_.splice(ring_.end(), ring_, at);
        // Invariant: a ready flow lies at or after `at` (the one just moved
        // to the tail is ready), so the scan above never runs off the end.
        at = next == ring_.end() ? ring_.begin() : next;
    }
}

bool FairQueue::finish(const std::shared_ptr<Lane>& lane)
{
    Flow& flow = *lane->flow;
    --flow.running;
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
