// peer.hpp - who is at the other end of a client socket.
//
// Owns nothing. Decides:
//  - identity comes from the kernel, never from the client: SO_PEERCRED
//    (pid, uid, gid at connect()) and a pidfd of that process
//    (SO_PEERPIDFD; where the kernel lacks it, pidfd_open() of the
//    SO_PEERCRED pid, whose /proc/<pid>/status uid and gid must then match
//    the credentials);
//  - where the peer sits is read from /proc/<pid> (cgroup, status,
//    uid_map, mountinfo: all readable with no capability, so the shipped
//    unit's empty capability set suffices; /proc/<pid>/ns/* and the pidfd
//    namespace ioctls are not, they need ptrace access), and then the pidfd
//    must still name a live process: a pid is never reused while its
//    process lives, so what was read is that process's;
//  - a peer whose process exited before it was read, or whose entries
//    cannot be read, is refused: peer_identity() says why, and the server
//    closes the connection and logs that sentence (no session is made);
//  - the cgroup is the cgroup v2 path of the peer's "0::" line in
//    /proc/<pid>/cgroup, or, on a host with cgroup v1 only, the path of its
//    name=systemd line (empty when it has neither: the peer matches no
//    cgroup rule);
//  - host namespaces: the peer's pid namespace is the daemon's (its NSpid
//    line has one pid), its uid_map is that of pid 1 (the same user
//    namespace, or one mapped identically, which only the host's root can
//    make), and its root mount is pid 1's (the same mount namespace and
//    root). pid 1 of the daemon's pid namespace stands for the host because
//    the daemon's own mount namespace may be private (systemd's
//    ProtectSystem and PrivateTmp make one);
//  - group membership (is_admin) may block on the user database (NSS):
//    never call it on the reactor thread. Who administers is decided in
//    admin_authority.hpp.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vaccel/engine/limit_policy.hpp"

namespace vaccel::daemon {

// The identity of a connected socket's peer (see above), or the sentence
// saying why it has none and must be refused.
std::expected<engine::SessionIdentity, std::string> peer_identity(int fd);

// What /proc/<pid> says of one process, read while `pidfd` names it.
struct ProcessEntries {
    std::string cgroup;             // cgroup_from_text of /proc/<pid>/cgroup
    std::vector<long> nspid;        // the NSpid line: outermost (the daemon's) first
    std::vector<long> uids, gids;   // the Uid and Gid lines (real, effective, saved, fs)
    long ppid = -1;                 // the PPid line
    std::string uid_map;            // /proc/<pid>/uid_map as text
    std::uint64_t root_mount = 0;   // root_mount_of(/proc/<pid>/mountinfo)
};
// Reads them, then checks that `pidfd` (a pidfd of `pid`) still names a
// live process; the error says what could not be read or that the process
// ended.
std::expected<ProcessEntries, std::string> read_process(pid_t pid, int pidfd);
// A pidfd of `pid` (pidfd_open), or -1 with errno set.
int open_pidfd(pid_t pid);
// True once the process a pidfd names has exited (its pidfd is readable).
bool pidfd_ended(int pidfd);

// The mount id of the last line of a mountinfo text whose mount point is
// "/" (the mount the process sees as its root), 0 when there is none.
std::uint64_t root_mount_of(std::string_view mountinfo);

// The daemon's reference for host namespaces: pid 1's uid_map and root
// mount, read once (first use).
struct HostReference {
    std::string uid_map;
    std::uint64_t root_mount = 0;
};
const HostReference& host_reference();
// `entries` are those of a process in the host's user, pid and mount
// namespaces (see above).
bool in_host_namespaces(const ProcessEntries& entries, const HostReference& host);

// The cgroup v2 path of `pid` ("" when unknown).
std::string cgroup_of(pid_t pid);
// The "0::" (else "name=systemd") line's path in a /proc/<pid>/cgroup text.
std::string cgroup_from_text(const std::string& text);

// The gid of group `name`, nullopt when no such group exists.
std::optional<gid_t> group_id(const std::string& name);
// Root, or member of `admin_gid` by primary or supplementary group.
bool is_admin(uid_t uid, gid_t gid, std::optional<gid_t> admin_gid);

}  // namespace vaccel::daemon
