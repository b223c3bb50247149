// containers.cpp - container registrations: the container's first process
// an administrator named, where it sits, and which container a session
// belongs to.
#include "vaccel/daemon/containers.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "vaccel/daemon/peer.hpp"

namespace vaccel::daemon {

namespace {

std::string proc_path(pid_t pid, const char* leaf)
{
    return fmt::format("/proc/{}/{}", pid, leaf);
}

NamespaceId namespace_of(pid_t pid, const char* kind)
{
    // stat() follows the ns link to the nsfs inode: its device and inode
    // name the namespace (what readlink shows as "mnt:[inode]").
    struct stat st {};
    if (::stat(proc_path(pid, kind).c_str(), &st) != 0)
        return {};
    return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

// `prefix` is `path` or one of its ancestors, by whole components.
bool cgroup_within(std::string_view prefix, std::string_view path)
{
    if (prefix.empty() || path.empty())
        return false;
    if (prefix == "/")
        return true;
    return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

Error refused(std::string why)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_ADMIN_REQUEST, 0).with_note(std::move(why));
}

bool has_ended(const UniqueFd& pidfd) { return pidfd_ended(pidfd.get()); }

// The root mount of a registered container's first process now, 0 when it
// cannot be read or the process ended.
std::uint64_t root_mount_now(pid_t pid, const UniqueFd& pidfd)
{
    auto entries = read_process(pid, pidfd.get());
    return entries ? entries->root_mount : 0;
}

std::optional<std::vector<std::uint32_t>> widened(
    const std::optional<std::vector<std::uint32_t>>& had,
    const std::optional<std::vector<std::uint32_t>>& more)
{
    if (!had || !more)
        return std::nullopt;
    std::vector<std::uint32_t> both = *had;
    both.insert(both.end(), more->begin(), more->end());
    std::ranges::sort(both);
    both.erase(std::unique(both.begin(), both.end()), both.end());
    return both;
}

}  // namespace

ProcessPlace place_of(pid_t pid)
{
    return {cgroup_of(pid), namespace_of(pid, "ns/mnt"), namespace_of(pid, "ns/pid")};
}

std::string container_id_problem(const std::string& id)
{
    if (id.empty() || id.size() > 128)
        return fmt::format("a container id has 1 to 128 characters; \"{}\" has {}", id, id.size());
    for (char c : id)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'))
            return fmt::format("a container id is made of letters, digits, '_', '.' and '-'; "
                               "\"{}\" is not",
                               id);
    return {};
}

Result<ContainerView> ContainerRegistry::add(const engine::SessionIdentity& caller,
                                             const std::string& id, pid_t first_pid,
                                             const std::optional<std::vector<std::uint32_t>>& devices,
                                             std::uint32_t device_count)
{
    if (std::string problem = container_id_problem(id); !problem.empty())
        return fail(refused(std::move(problem)));
    if (devices)
        for (std::uint32_t index : *devices)
            if (index >= device_count)
                return fail(refused(fmt::format(
                    "device {} does not exist: the daemon serves {} device(s), 0 to {}; "
                    "regenerate the CDI spec (vaccelctl cdi generate)",
                    index, device_count, device_count == 0 ? 0 : device_count - 1)));

    if (first_pid <= 0)
        return fail(refused("the document needs \"pid\": the container's first process in the "
                            "daemon's pid namespace (the createRuntime hook's OCI state)"));
    // Invariant: the pidfd is opened before the process is read and checked
    // alive after (read_process), so what was read is that process's, not
    // that of a process that reused its pid.
    UniqueFd pidfd(open_pidfd(first_pid));
    if (!pidfd)
        return fail(refused(fmt::format("there is no process {} to register: {}", first_pid,
                                        std::strerror(errno))));
    auto first = read_process(first_pid, pidfd.get());
    if (!first)
        return fail(refused(std::move(first.error())));
    if (first->nspid.size() < 2 || first->nspid.back() != 1)
        return fail(refused(fmt::format(
            "process {} is not a container's first process (pid 1 of a pid namespace of its "
            "own); container add names the \"pid\" of a createRuntime hook's OCI state (run "
            "`vaccelctl cdi hook create` only from a CDI spec)",
            first_pid)));
    if (first->cgroup.empty() || first->cgroup == "/")
        return fail(refused(fmt::format(
            "process {} sits in cgroup '{}', which would make every process the container's; a "
            "container has a cgroup of its own",
            first_pid, first->cgroup)));
    if (cgroup_within(first->cgroup, caller.cgroup))
        return fail(refused(fmt::format(
            "process {}'s cgroup {} holds the registering process (pid {}) too: registering it "
            "would make host processes the container's",
            first_pid, first->cgroup, caller.pid)));
    const ProcessPlace place{first->cgroup, namespace_of(first_pid, "ns/mnt"),
                             namespace_of(first_pid, "ns/pid")};

    std::lock_guard lock(mutex_);
    drop_ended_locked();
    for (Entry& entry : entries_) {
        if (entry.view.id == id) {
            if (entry.view.first_pid != first_pid)
                return fail(refused(fmt::format(
                    "container {} is registered with its first process pid {}, not {}; remove "
                    "it first",
                    id, entry.view.first_pid, first_pid)));
            entry.view.devices = widened(entry.view.devices, devices);
            return entry.view;
        }
        if (entry.view.first_pid == first_pid || entry.view.cgroup == place.cgroup)
            return fail(refused(fmt::format(
                "process {} (cgroup {}) is registered already, as container {}",
                first_pid, place.cgroup, entry.view.id)));
    }
    ContainerView view{id, place.cgroup, first_pid, place.mount_ns, place.pid_ns, devices};
    if (view.devices) {
        std::ranges::sort(*view.devices);
        view.devices->erase(std::unique(view.devices->begin(), view.devices->end()),
                            view.devices->end());
    }
    entries_.push_back(Entry{view, std::move(pidfd)});
    return view;
}

bool ContainerRegistry::remove(const std::string& id)
{
    std::lock_guard lock(mutex_);
    const auto erased = std::erase_if(entries_, [&](const Entry& e) { return e.view.id == id; });
    drop_ended_locked();
    return erased != 0;
}

std::vector<ContainerView> ContainerRegistry::list()
{
    std::lock_guard lock(mutex_);
    drop_ended_locked();
    std::vector<ContainerView> out;
    out.reserve(entries_.size());
    for (const Entry& entry : entries_)
        out.push_back(entry.view);
    return out;
}

engine::SessionIdentity ContainerRegistry::attribute(engine::SessionIdentity who)
{
    // By cgroup first; by root mount (nsenter) only for a peer that sits
    // outside the host's namespaces, reading the first processes' mountinfo
    // without the lock.
    {
        std::lock_guard lock(mutex_);
        drop_ended_locked();
        for (const Entry& entry : entries_)
            if (cgroup_within(entry.view.cgroup, who.cgroup))
                return belonging(std::move(who), entry.view, true);
        if (entries_.empty() || who.host_namespaces || who.root_mount == 0)
            return who;
    }
    // Ownership: each first process's pidfd is duplicated, so the reads
    // below need no lock while an entry may be dropped meanwhile.
    struct Pending {
        std::string id;
        pid_t first_pid;
        UniqueFd pidfd;
    };
    std::vector<Pending> pending;
    {
        std::lock_guard lock(mutex_);
        for (const Entry& entry : entries_) {
            UniqueFd pidfd(::fcntl(entry.first_process.get(), F_DUPFD_CLOEXEC, 0));
            if (pidfd)
                pending.push_back({entry.view.id, entry.view.first_pid, std::move(pidfd)});
        }
    }
    for (const Pending& p : pending)
        if (root_mount_now(p.first_pid, p.pidfd) == who.root_mount) {
            std::lock_guard lock(mutex_);
            for (const Entry& entry : entries_)
                if (entry.view.id == p.id)
                    return belonging(std::move(who), entry.view, false);
        }
    return who;
}

engine::SessionIdentity ContainerRegistry::belonging(engine::SessionIdentity who,
                                                     const ContainerView& c, bool by_cgroup)
{
    if (!by_cgroup) {
        spdlog::info("vacceld: pid {} (cgroup '{}') is in the mount namespace of container {}: "
                     "it counts under the container's cgroup {}",
                     who.pid, who.cgroup, c.id.substr(0, 12), c.cgroup);
        who.cgroup = c.cgroup;
    }
    who.container = c.id;
    who.devices = c.devices;
    return who;
}

void ContainerRegistry::drop_ended_locked()
{
    std::erase_if(entries_, [](const Entry& e) {
        if (!has_ended(e.first_process))
            return false;
        spdlog::info("vacceld: container {} ended; its registration is dropped",
                     e.view.id.substr(0, 12));
        return true;
    });
}

}  // namespace vaccel::daemon
