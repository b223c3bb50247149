// peer.hpp - who is at the other end of a client socket.
//
// Owns nothing. Decides:
//  - identity comes from the kernel (SO_PEERCRED), never from the client;
//  - the cgroup is the cgroup v2 path of the peer's "0::" line in
//    /proc/<pid>/cgroup, or, on a host with cgroup v1 only, the path of its
//    name=systemd line (empty when unreadable: the peer matches no cgroup
//    rule);
//  - an admin is root, or a uid whose primary or supplementary groups
//    (getgrouplist over the user database) include the admin group. That
//    lookup may block on the user database (NSS): never call it on the
//    reactor thread.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "vaccel/engine/limit_policy.hpp"

namespace vaccel::daemon {

// SO_PEERCRED of a connected socket plus the peer's cgroup; nullopt when the
// kernel gives no credentials.
std::optional<engine::SessionIdentity> peer_identity(int fd);

// The cgroup v2 path of `pid` ("" when unknown).
std::string cgroup_of(pid_t pid);
// The "0::" (else "name=systemd") line's path in a /proc/<pid>/cgroup text.
std::string cgroup_from_text(const std::string& text);

// The gid of group `name`, nullopt when no such group exists.
std::optional<gid_t> group_id(const std::string& name);
// Root, or member of `admin_gid` by primary or supplementary group.
bool is_admin(uid_t uid, gid_t gid, std::optional<gid_t> admin_gid);

}  // namespace vaccel::daemon
