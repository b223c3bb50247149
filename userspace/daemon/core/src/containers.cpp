// containers.cpp - container registrations: where the caller sits, its
// container's first process, and which container a session belongs to.
#include "vaccel/daemon/containers.hpp"

#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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

// The values of a "Name:\tvalue..." line of /proc/<pid>/status.
std::vector<long> status_values(pid_t pid, std::string_view name)
{
    std::ifstream file(proc_path(pid, "status"));
    std::string line;
    while (std::getline(file, line)) {
        if (!line.starts_with(name) || line.size() <= name.size() || line[name.size()] != ':')
            continue;
        std::istringstream values(line.substr(name.size() + 1));
        std::vector<long> out;
        long value = 0;
        while (values >> value)
            out.push_back(value);
        return out;
    }
    return {};
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

bool has_ended(const UniqueFd& pidfd)
{
    pollfd p{pidfd.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
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
                                             const std::string& id,
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

    // The caller is the hook; its parent is the container's first process.
    const std::vector<long> parent = status_values(caller.pid, "PPid");
    if (parent.size() != 1 || parent[0] <= 0)
        return fail(refused(fmt::format("the caller (pid {}) has no parent to read", caller.pid)));
    const auto first = static_cast<pid_t>(parent[0]);
    const std::vector<long> inner = status_values(first, "NSpid");
    if (inner.size() < 2 || inner.back() != 1)
        return fail(refused(fmt::format(
            "container add comes from a container runtime's createContainer hook, whose parent "
            "is the container's first process (pid 1 in its own pid namespace); the caller's "
            "parent, pid {}, is not (run `vaccelctl cdi hook` only from a CDI spec)",
            first)));
    // Invariant: the pidfd is opened before the places are read and the
    // process is checked alive after, so the places are that process's,
    // not those of a process that reused its pid.
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, first, 0)));
    if (!pidfd)
        return fail(refused(fmt::format("cannot watch the container's first process (pid {}): {}",
                                        first, std::strerror(errno))));
    const ProcessPlace place = place_of(caller.pid);
    const ProcessPlace first_place = place_of(first);
    if (has_ended(pidfd) || place.cgroup.empty() || !place.mount_ns.known() ||
        !place.pid_ns.known())
        return fail(refused(fmt::format("the container's first process (pid {}) ended while it "
                                        "was registered",
                                        first)));
    if (first_place.pid_ns != place.pid_ns || first_place.cgroup != place.cgroup)
        return fail(refused(fmt::format(
            "the caller (pid {}, cgroup {}) and its parent (pid {}, cgroup {}) are not in one "
            "container",
            caller.pid, place.cgroup, first, first_place.cgroup)));

    std::lock_guard lock(mutex_);
    drop_ended_locked();
    for (Entry& entry : entries_)
        if (entry.view.id == id) {
            if (entry.view.first_pid != first)
                return fail(refused(fmt::format(
                    "container {} is registered with its first process pid {}, not {}; remove "
                    "it first",
                    id, entry.view.first_pid, first)));
            entry.view.devices = widened(entry.view.devices, devices);
            return entry.view;
        }
    ContainerView view{id, place.cgroup, first, place.mount_ns, place.pid_ns, devices};
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
    {
        std::lock_guard lock(mutex_);
        drop_ended_locked();
        if (entries_.empty())
            return who;
    }
    // The namespaces are read without the lock (procfs), then matched.
    const NamespaceId mount_ns = namespace_of(who.pid, "ns/mnt");
    const NamespaceId pid_ns = namespace_of(who.pid, "ns/pid");
    std::lock_guard lock(mutex_);
    for (const Entry& entry : entries_) {
        const ContainerView& c = entry.view;
        const bool by_cgroup = cgroup_within(c.cgroup, who.cgroup);
        const bool by_namespace =
            (mount_ns.known() && mount_ns == c.mount_ns) || (pid_ns.known() && pid_ns == c.pid_ns);
        if (!by_cgroup && !by_namespace)
            continue;
        if (!by_cgroup)
            spdlog::info("vacceld: pid {} (cgroup '{}') is in the namespaces of container {}: "
                         "it counts under the container's cgroup {}",
                         who.pid, who.cgroup, c.id.substr(0, 12), c.cgroup);
        who.container = c.id;
        if (!by_cgroup)
            who.cgroup = c.cgroup;
        who.devices = c.devices;
        return who;
    }
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
