// limit_policy.hpp - the seam where operator policy narrows device limits.
//
// Owns nothing. Decides: the effective limits of a context are
// intersect(device limits, policy limits) - a policy can only narrow what a
// device offers, never widen it. The engine applies the intersection itself,
// so a policy returning larger numbers is harmless. The policy also names
// each new context's scheduling weight. The default policy grants
// the device's own limits; the daemon's policy (per client selector: uid,
// gid, cgroup) plugs in here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <sys/types.h>

#include "vaccel.h"

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

class LimitPolicy {
public:
    virtual ~LimitPolicy() = default;

    // Limits for one context the session creates on `device_index`;
    // max_contexts counts the session's contexts on that device.
    // Called under the session's lock: must not call back into the engine.
    virtual vaccel_device_limits limits(const SessionIdentity& who, std::uint32_t device_index,
                                        const vaccel_device_info& device) const
    {
        (void)who;
        (void)device_index;
        return device.limits;
    }

    // The scheduling weight of a context the session creates on
    // `device_index` (1..1000; the engine clamps). The engine hands it to
    // Backend::set_context_weight() right after creating the context.
    // Called under the session's lock: must not call back into the engine.
    virtual std::uint32_t weight(const SessionIdentity& who, std::uint32_t device_index) const
    {
        (void)who;
        (void)device_index;
        return default_context_weight;
    }
};

}  // namespace vaccel::engine
