// containers.hpp - the containers a CDI hook registered, and which devices
// each was given (docs/adr/0023-containers-through-cdi.md).
//
// Owns: the registrations (ContainerRegistry), each with a pidfd of the
// container's first process. Decides:
//  - a registration comes from inside the container: the createContainer
//    hook (`vaccelctl cdi hook create`) runs in the container's cgroup and
//    namespaces, so the daemon takes the cgroup and the mount and pid
//    namespaces from the caller's own /proc entry, never from the request
//    document; the caller's parent must be the container's first process
//    (its innermost pid is 1), which is what a hook's parent is, and what
//    a process on the host never has;
//  - a registration lives while that first process does (its pidfd turns
//    readable when it exits), or until CONTAINER_REMOVE (the poststop hook);
//  - a second ADD for the same id widens its devices (a container given
//    accel=0 and accel=1 runs the hook once for each); "all" covers all;
//  - a session belongs to a container when its cgroup is the container's
//    or one below it, or when its mount or pid namespace is the
//    container's (a process that entered the container with nsenter, whose
//    cgroup is still the host's). Its identity then carries the
//    container's id, cgroup (so cgroup rules for the container hold it) and
//    devices.
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

// Where a process sits, read from /proc/<pid>.
struct ProcessPlace {
    std::string cgroup;
    NamespaceId mount_ns;
    NamespaceId pid_ns;
};
// Empty fields where /proc/<pid> could not be read.
ProcessPlace place_of(pid_t pid);

// Why `id` cannot name a container, or empty: 1 to 128 characters of
// [A-Za-z0-9_.-] (OCI runtimes use 64 hex digits).
std::string container_id_problem(const std::string& id);

class ContainerRegistry {
public:
    // Registers the container that `caller` (the createContainer hook)
    // runs in, giving it `devices` (nullopt: all) of the daemon's
    // `device_count`; widens an existing registration of the same id. The
    // error says what was refused and why; nothing changes then.
    Result<ContainerView> add(const engine::SessionIdentity& caller, const std::string& id,
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
    // Drops entries whose first process ended. Caller holds mutex_.
    void drop_ended_locked();

    std::mutex mutex_;  // guards entries_; a leaf lock
    std::vector<Entry> entries_;
};

}  // namespace vaccel::daemon
