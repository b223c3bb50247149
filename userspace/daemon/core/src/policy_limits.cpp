// policy_limits.cpp - PolicyStore and the LimitPolicy adapter.
#include "vaccel/daemon/policy_limits.hpp"

#include <fmt/format.h>

namespace vaccel::daemon {

PolicyStore::PolicyStore(Policy policy) : policy_(std::make_shared<const Policy>(std::move(policy)))
{
}

void PolicyStore::replace(Policy policy)
{
    auto next = std::make_shared<const Policy>(std::move(policy));
    std::lock_guard lock(mutex_);
    policy_.swap(next);
    // The old policy is released here or by the last session still reading it.
}

std::shared_ptr<const Policy> PolicyStore::current() const
{
    std::lock_guard lock(mutex_);
    return policy_;
}

Client client_of(const engine::SessionIdentity& who)
{
    return Client{who.uid, who.gid, who.cgroup};
}

engine::TenantId PolicyLimits::tenant(const engine::SessionIdentity& who) const
{
    const auto policy = store_->current();
    const Rule* rule = policy->match(client_of(who));
    const SelectorKind kind = rule != nullptr ? rule->selector.kind : SelectorKind::fallback;
    switch (kind) {
    case SelectorKind::uid: break;
    case SelectorKind::gid: return {engine::TenantKind::gid, std::to_string(who.gid)};
    case SelectorKind::cgroup: return {engine::TenantKind::cgroup, rule->selector.cgroup};
    case SelectorKind::fallback:
        if (!who.container.empty())
            return {engine::TenantKind::container, who.container};
        break;
    }
    return {engine::TenantKind::uid, std::to_string(who.uid)};
}

engine::TenantTotals PolicyLimits::totals(const engine::SessionIdentity& who) const
{
    const Totals totals = store_->current()->totals(client_of(who));
    return engine::TenantTotals{totals.per_device, totals.sessions};
}

vaccel_device_limits PolicyLimits::limits(const engine::SessionIdentity& who, std::uint32_t,
                                          const vaccel_device_info& device) const
{
    return store_->current()->context_limits(device.limits, client_of(who));
}

engine::ContextScheduling PolicyLimits::scheduling(const engine::SessionIdentity& who,
                                                   std::uint32_t) const
{
    const Schedule s = store_->current()->schedule(client_of(who));
    return {s.weight, s.priority == TenantPriority::latency, s.share_permille};
}

std::string rule_label(const Rule* rule)
{
    if (rule == nullptr)
        return "none";
    const Selector& s = rule->selector;
    switch (s.kind) {
    case SelectorKind::uid:
        return fmt::format("uid:{}", s.id);
    case SelectorKind::gid:
        return fmt::format("gid:{}", s.id);
    case SelectorKind::cgroup:
        return "cgroup:" + s.cgroup;
    case SelectorKind::fallback:
        break;
    }
    return "default";
}

}  // namespace vaccel::daemon
