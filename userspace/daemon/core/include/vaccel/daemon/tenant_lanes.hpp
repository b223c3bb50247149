// tenant_lanes.hpp - which WorkQueue lane a connection's device work goes
// to: its tenant's (docs/adr/0024-tenants.md, 0026-gpu-device-scheduler.md).
//
// Decides: every connection of one tenant shares one lane of each device's
// worker, so a tenant that opens more connections gets no more of the
// daemon's time than one (the lane's weight is the tenant's rule's). A lane
// id names one tenant for as long as any of its connections lives, and is
// never given to another: jobs of a tenant whose last connection closed may
// still be queued under it.
// Threading: not thread-safe; the reactor thread alone (the Dispatcher).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace vaccel::daemon {

class TenantLanes {
public:
    // A connection of `tenant` (its key) arrived: its lane.
    std::uint64_t join(const std::string& tenant);
    // A connection of `tenant` ended; its lane is forgotten with the last one.
    void leave(const std::string& tenant);
    // Tenants with a connection (for tests).
    std::size_t size() const { return lanes_.size(); }

private:
    struct Lane {
        std::uint64_t id;
        std::uint64_t connections;
    };
    std::unordered_map<std::string, Lane> lanes_;
    std::uint64_t next_ = 1;
};

}  // namespace vaccel::daemon
