// flow_book.cpp - a device's flows and its dispatch record (flow_book.hpp).
#include "vaccel/sched/flow_book.hpp"

namespace vaccel::sched {

FlowPolicy policy_of(const backend::ContextSchedule& schedule)
{
    FlowPolicy policy;
    policy.weight = schedule.weight;
    policy.priority = schedule.latency ? Priority::latency : Priority::batch;
    policy.share_permille = schedule.share_permille;
    return policy;
}

std::uint64_t ns_since_epoch(DeviceTime::Clock::time_point t)
{
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

std::shared_ptr<FlowTag> FlowBook::own_flow()
{
    auto tag = std::make_shared<FlowTag>();
    tag->id = next_flow_++;
    tags_[tag->id] = tag;
    time_.set_policy(tag->id, FlowPolicy{});
    return tag;
}

std::shared_ptr<FlowTag> FlowBook::flow_for(const backend::ContextSchedule& schedule,
                                            std::shared_ptr<FlowTag> current)
{
    sweep(Clock::now());
    std::shared_ptr<FlowTag> tag = std::move(current);
    if (!schedule.flow.empty()) {
        std::weak_ptr<FlowTag>& shared = tenants_[schedule.flow];
        tag = shared.lock();
        if (!tag) {
            tag = std::make_shared<FlowTag>();
            tag->id = next_flow_++;
            tag->key = schedule.flow;
            shared = tag;
            tags_[tag->id] = tag;
        }
    }
    if (!tag) tag = own_flow();
    time_.set_policy(tag->id, policy_of(schedule));
    return tag;
}

std::vector<FlowId> FlowBook::sweep(Clock::time_point now)
{
    std::erase_if(tenants_, [](const auto& entry) { return entry.second.expired(); });
    std::vector<FlowId> gone;
    for (auto it = tags_.begin(); it != tags_.end();) {
        const auto account = time_.account(it->first, now);
        const bool busy = account && (account->ready != 0 || account->in_flight != 0);
        if (it->second.expired() && !busy) {
            time_.forget(it->first);
            gone.push_back(it->first);
            it = tags_.erase(it);
        } else {
            ++it;
        }
    }
    return gone;
}

std::string FlowBook::key_of(FlowId flow) const
{
    auto it = tags_.find(flow);
    if (it == tags_.end()) return {};
    const auto tag = it->second.lock();
    return tag ? tag->key : std::string();
}

std::uint64_t FlowBook::dispatched(FlowId flow, Clock::time_point now)
{
    record_.push_back({flow, key_of(flow), ns_since_epoch(now), 0, false});
    while (record_.size() > record_depth) {
        record_.pop_front();
        ++first_entry_;
    }
    return first_entry_ + record_.size() - 1;
}

void FlowBook::ended(std::uint64_t entry, std::uint64_t used_ns)
{
    if (entry < first_entry_ || entry - first_entry_ >= record_.size()) return;
    Entry& e = record_[entry - first_entry_];
    e.used_ns = used_ns;
    e.ended = true;
}

backend::DeviceService FlowBook::report(Clock::time_point now, std::uint32_t servers)
{
    backend::DeviceService service;
    service.share_window_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(DeviceTime::Options{}.share_window)
            .count());
    service.servers = servers;
    for (const auto& [id, weak] : tags_) {
        const auto account = time_.account(id, now);
        if (!account) continue;
        const auto tag = weak.lock();
        backend::FlowService flow;
        flow.flow = tag ? tag->key : std::string();
        flow.weight = account->policy.weight;
        flow.latency = account->policy.priority == Priority::latency;
        flow.share_permille = account->policy.share_permille;
        flow.charged_ns = static_cast<std::uint64_t>(account->charged.count());
        flow.window_ns = static_cast<std::uint64_t>(account->charged_in_window.count());
        flow.held_ns = static_cast<std::uint64_t>(account->held.count());
        flow.queued = account->ready;
        flow.on_device = account->in_flight;
        service.flows.push_back(std::move(flow));
    }
    for (std::size_t i = 0; i < record_.size(); ++i) {
        const Entry& e = record_[i];
        service.recent.push_back({first_entry_ + i, e.key, e.at_ns, e.used_ns, e.ended});
    }
    return service;
}

}  // namespace vaccel::sched
