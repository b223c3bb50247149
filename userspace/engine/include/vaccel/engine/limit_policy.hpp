// limit_policy.hpp - the seam where operator policy narrows device limits.
//
// Owns nothing. Decides: the policy names which tenant a session belongs to
// and that tenant's totals (tenants.hpp, ADR 0024); the effective limits of
// one context are intersect(device limits, the policy's per-context caps) -
// a policy can only narrow what a device offers, never widen it. The engine
// applies the intersection itself, so a policy returning larger numbers is
// harmless. The policy also names each new context's scheduling weight. The
// default policy makes each uid a tenant with no totals and grants the
// device's own limits per context; the daemon's policy (per client
// selector: uid, gid, cgroup, container) plugs in here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <sys/types.h>

#include "vaccel.h"
#include "vaccel/common/limits.hpp"

namespace vaccel::engine {

// Who a session belongs to, as the transport learnt it (SO_PEERCRED, the
// module's request, or the calling process for the embedded transport).
struct SessionIdentity {
    pid_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    // The cgroup the policy matches: the cgroup v2 path ("0::" line of
    // /proc/<pid>/cgroup; the name=systemd line where there is no unified
    // hierarchy); may be empty. For a session of a registered container it
    // is the container's cgroup, also when the process itself sits
    // elsewhere (one that entered the container's namespaces).
    std::string cgroup;
    // The registered container the session belongs to, or empty.
    std::string container;
    // The device indices whose contexts the session may create, when its
    // container was given only some; nullopt: every device.
    std::optional<std::vector<std::uint32_t>> devices;
    // Socket peers (vaccel/daemon/peer.hpp): the peer's user, pid and mount
    // namespaces are those of pid 1 of the daemon's pid namespace (the
    // host's). False when they are not, or were not read (kernel sessions,
    // the embedded transport): such a session never administers.
    bool host_namespaces = false;
    // The mount id of the peer's root in its mount namespace (the last
    // "/" line of /proc/<pid>/mountinfo), 0 when unknown: mount ids are
    // unique among live mounts, so two processes with one root mount id
    // share a mount namespace (and root).
    std::uint64_t root_mount = 0;
};

// The scheduling weight a context gets when its policy says nothing.
inline constexpr std::uint32_t default_context_weight = 100;

// What a tenant's policy says about serving its work on a device.
struct ContextScheduling {
    std::uint32_t weight = default_context_weight;
    bool latency = false;                 // priority = "latency"
    std::uint32_t share_permille = 1000;  // device_share; 1000: no cap
};

// What kind of tenant; the values are the uapi's VACCEL_SCOPE_*.
enum class TenantKind : std::uint8_t {
    uid = VACCEL_SCOPE_UID,
    gid = VACCEL_SCOPE_GID,
    cgroup = VACCEL_SCOPE_CGROUP,
    container = VACCEL_SCOPE_CONTAINER,
};

// Who accounting belongs to: a uid or gid (`name` its number), a cgroup
// subtree (`name` the rule's path prefix) or a registered container
// (`name` its id).
struct TenantId {
    TenantKind kind = TenantKind::uid;
    std::string name;

    // "uid:1000", "gid:100", "cgroup:/a/b", "container:ID": unique per tenant.
    std::string key() const;
    // "uid 1000", "cgroup /a/b", "container 3f2a9c1b2d4e": for people.
    std::string describe() const;
    bool operator==(const TenantId&) const = default;
};

// A tenant's totals: each field of `per_device` (contexts, memory, buffers,
// programs, queues, events, gates; the per-request fields are unused) is
// the tenant's total on each device, all its sessions together; `sessions`
// the sessions it may have open at once.
struct TenantTotals {
    vaccel_device_limits per_device{};
    std::uint64_t sessions = 0;
};


class LimitPolicy {
public:
    virtual ~LimitPolicy() = default;

    // The tenant a session of `who` belongs to. Default: its uid.
    virtual TenantId tenant(const SessionIdentity& who) const;

    // The totals of the tenant of `who`. Default: none on resources,
    // default_tenant_sessions sessions.
    virtual TenantTotals totals(const SessionIdentity& who) const;

    // Caps for one context the session creates on `device_index` (the
    // policy's per-context level; max_contexts is the device's own).
    // Called under the session's lock: must not call back into the engine.
    virtual vaccel_device_limits limits(const SessionIdentity& who, std::uint32_t device_index,
                                        const vaccel_device_info& device) const
    {
        (void)who;
        (void)device_index;
        return device.limits;
    }

    // How a context the session creates on `device_index` is served (its
    // tenant's weight 1..1000, which the engine clamps, priority and device
    // share). The engine hands it, with the tenant's key as the flow, to
    // Backend::set_context_schedule() right after creating the context.
    // Called under the session's lock: must not call back into the engine.
    virtual ContextScheduling scheduling(const SessionIdentity& who,
                                         std::uint32_t device_index) const
    {
        (void)who;
        (void)device_index;
        return {};
    }
};

}  // namespace vaccel::engine
