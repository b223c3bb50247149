// containers.hpp - the containers a CDI hook registered, and which devices
// each was given (docs/adr/0023-containers-through-cdi.md).
//
// Owns: the registrations (ContainerRegistry), each with a pidfd of the
// container's first process. Decides:
//  - who registers: an administrator (admin_authority.hpp: root or the
//    admin group, in the host's namespaces, in no registered container).
//    The CDI spec runs `vaccelctl cdi hook create` as a createRuntime hook,
//    which the runtime runs on the host, as root, in the host's namespaces,
//    with the OCI state (the container's id and its first process's pid in
//    the host's pid namespace) on stdin. A container's own processes never
//    administer, so they can neither register, widen, pre-empt nor remove a
//    registration;
//  - what is registered comes from the kernel, never from the document
//    beyond the id, the pid and the devices: the named process must be
//    pid 1 of a pid namespace below the daemon's (a container's first
//    process; a host process never is), and the daemon reads its cgroup
//    itself (/proc, while a pidfd names it: peer.hpp). A cgroup that is "/"
//    or encloses the registering process is refused (it would make host
//    processes, administrators among them, the container's);
//  - one registration per id, per first process and per cgroup: an ADD
//    naming an id registered with another first process, or a first
//    process (or cgroup) registered under another id, is refused; a second
//    ADD of the same id and process widens its devices (a container given
//    accel=0 and accel=1 runs the hook once for each); "all" covers all;
//  - a registration lives while that first process does (its pidfd turns
//    readable when it exits), or until CONTAINER_REMOVE (the poststop hook,
//    also an administrator on the host);
//  - a session belongs to a container when its cgroup is the container's
//    or one below it, or when its root mount is that of the container's
//    first process (one mount namespace and root: a process that entered
//    the container with nsenter -m -r, whose cgroup is still the host's).
//    Its identity then carries the container's id, cgroup (so cgroup rules
//    for the container hold it) and devices. Nothing here needs a
//    capability: cgroup, status and mountinfo of any process are readable
//    by the daemon under the shipped unit (dist/vacceld.service);
//  - mount_ns and pid_ns (nsfs inodes) are shown when the daemon may read
//    /proc/<pid>/ns/* (ptrace access: CAP_SYS_PTRACE, which the shipped
//    unit does not give), 0 otherwise; nothing is decided by them.
//
// Thread-safety: every member from any thread; one leaf mutex guards the
// list (procfs reads happen outside it).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "vaccel/common/error.hpp"
#include "vaccel/daemon/unique_fd.hpp"
#include "vaccel/engine/limit_policy.hpp"

namespace vaccel::daemon {

// A namespace as the kernel names it: the nsfs file's device and inode.
struct NamespaceId {
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    bool known() const { return inode != 0; }
    bool operator==(const NamespaceId&) const = default;
};

// One registration as the admin documents show it.
struct ContainerView {
    std::string id;
    std::string cgroup;
    pid_t first_pid = 0;  // the container's first process, in the daemon's pid namespace
    NamespaceId mount_ns;
    NamespaceId pid_ns;
    std::optional<std::vector<std::uint32_t>> devices;  // nullopt: every device
};

// Where a process sits, read from /proc/<pid> (fields empty or 0 where it
// could not be read).
struct ProcessPlace {
    std::string cgroup;
    NamespaceId mount_ns;
    NamespaceId pid_ns;
};
ProcessPlace place_of(pid_t pid);

// Why `id` cannot name a container, or empty: 1 to 128 characters of
// [A-Za-z0-9_.-] (OCI runtimes use 64 hex digits).
std::string container_id_problem(const std::string& id);

class ContainerRegistry {
public:
    // Registers the container whose first process is `first_pid` (in the
    // daemon's pid namespace) under `id`, giving it `devices` (nullopt:
    // all) of the daemon's `device_count`, for `caller`, an administrator
    // (the caller's authority is the admin channel's to check); widens an
    // existing registration of the same id and process. The error says what
    // was refused and why; nothing changes then.
    Result<ContainerView> add(const engine::SessionIdentity& caller, const std::string& id,
                              pid_t first_pid,
                              const std::optional<std::vector<std::uint32_t>>& devices,
                              std::uint32_t device_count);
    // Forgets `id`; false when it was not registered.
    bool remove(const std::string& id);
    // The live registrations (ended ones are dropped first).
    std::vector<ContainerView> list();
    // `who` with the container it belongs to filled in (unchanged when it
    // belongs to none).
    engine::SessionIdentity attribute(engine::SessionIdentity who);

private:
    struct Entry {
        ContainerView view;
        UniqueFd first_process;  // pidfd; readable once that process exited
    };
    // `who` as a session of container `c` (matched by cgroup or not).
    static engine::SessionIdentity belonging(engine::SessionIdentity who, const ContainerView& c,
                                             bool by_cgroup);
    // Drops entries whose first process ended. Caller holds mutex_.
    void drop_ended_locked();

    std::mutex mutex_;  // guards entries_; a leaf lock
    std::vector<Entry> entries_;
};

}  // namespace vaccel::daemon
