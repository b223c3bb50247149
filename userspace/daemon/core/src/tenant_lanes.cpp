// tenant_lanes.cpp - one worker lane per tenant (tenant_lanes.hpp).
#include "vaccel/daemon/tenant_lanes.hpp"

namespace vaccel::daemon {

std::uint64_t TenantLanes::join(const std::string& tenant)
{
    auto [it, made] = lanes_.try_emplace(tenant, Lane{next_, 0});
    if (made) ++next_;
    ++it->second.connections;
    return it->second.id;
}

void TenantLanes::leave(const std::string& tenant)
{
    auto it = lanes_.find(tenant);
    if (it == lanes_.end()) return;
    if (--it->second.connections == 0) lanes_.erase(it);
}

}  // namespace vaccel::daemon
