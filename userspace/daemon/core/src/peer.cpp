// peer.cpp - peer credentials, where a peer sits (cgroup, namespaces, read
// while a pidfd names it), and admin group membership.
//
// Groups come from NSS (getgrnam_r, getgrouplist), except in a static build
// (VACCEL_USER_FILES_ONLY): glibc's NSS cannot run in a static binary, so
// /etc/group and /etc/passwd are read directly (user_files.hpp).
#include "vaccel/daemon/peer.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "vaccel/daemon/unique_fd.hpp"
#include "vaccel/daemon/user_files.hpp"

namespace vaccel::daemon {

namespace {

// SO_PEERPIDFD (Linux 6.5); Debian 12's headers predate it.
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

std::string proc_path(pid_t pid, const char* leaf) { return fmt::format("/proc/{}/{}", pid, leaf); }

// The whole of a procfs file, nullopt when it cannot be read. A small
// procfs read: it never waits on a device or the network.
std::optional<std::string> read_text(const std::string& path)
{
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        return std::nullopt;
    std::string text;
    char chunk[4096];
    for (;;) {
        const ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return std::nullopt;
        }
        if (n == 0)
            return text;
        text.append(chunk, static_cast<std::size_t>(n));
    }
}

// The numbers of a "Name:\tvalue..." line of a /proc/<pid>/status text.
std::vector<long> status_values(const std::string& status, std::string_view name)
{
    std::istringstream lines(status);
    std::string line;
    while (std::getline(lines, line)) {
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

}  // namespace

int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

bool pidfd_ended(int pidfd)
{
    // A pidfd turns readable when its process exits; a zombie has exited.
    pollfd p{pidfd, POLLIN, 0};
    return ::poll(&p, 1, 0) != 0;
}

std::uint64_t root_mount_of(std::string_view mountinfo)
{
    // "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ...": the last mount whose
    // mount point is "/" is the one on top, the root the process sees.
    std::uint64_t root = 0;
    std::size_t at = 0;
    while (at < mountinfo.size()) {
        std::size_t end = mountinfo.find('\n', at);
        if (end == std::string_view::npos)
            end = mountinfo.size();
        std::istringstream fields{std::string(mountinfo.substr(at, end - at))};
        std::uint64_t id = 0;
        std::string parent, device, inner, point;
        if (fields >> id >> parent >> device >> inner >> point && point == "/")
            root = id;
        at = end + 1;
    }
    return root;
}

std::expected<ProcessEntries, std::string> read_process(pid_t pid, int pidfd)
{
    ProcessEntries out;
    const auto cgroup = read_text(proc_path(pid, "cgroup"));
    const auto status = read_text(proc_path(pid, "status"));
    const auto uid_map = read_text(proc_path(pid, "uid_map"));
    const auto mountinfo = read_text(proc_path(pid, "mountinfo"));
    // Invariant: checked after every read. While the process lives its pid
    // is not reused, so each file read above was that process's.
    if (pidfd_ended(pidfd))
        return std::unexpected(fmt::format("process {} ended before the daemon could read where "
                                           "it sits (/proc/{})",
                                           pid, pid));
    const char* unreadable = !cgroup      ? "cgroup"
                             : !status    ? "status"
                             : !uid_map   ? "uid_map"
                             : !mountinfo ? "mountinfo"
                                          : nullptr;
    if (unreadable != nullptr)
        return std::unexpected(fmt::format("cannot read /proc/{}/{}: {}", pid, unreadable,
                                           std::strerror(errno)));
    out.cgroup = cgroup_from_text(*cgroup);
    out.nspid = status_values(*status, "NSpid");
    out.uids = status_values(*status, "Uid");
    out.gids = status_values(*status, "Gid");
    if (const auto ppid = status_values(*status, "PPid"); ppid.size() == 1)
        out.ppid = ppid[0];
    out.uid_map = *uid_map;
    out.root_mount = root_mount_of(*mountinfo);
    if (out.nspid.empty() || out.uids.empty() || out.gids.empty())
        return std::unexpected(fmt::format("/proc/{}/status has no NSpid, Uid or Gid line", pid));
    return out;
}

const HostReference& host_reference()
{
    static const HostReference host = [] {
        HostReference h;
        h.uid_map = read_text("/proc/1/uid_map").value_or("");
        h.root_mount = root_mount_of(read_text("/proc/1/mountinfo").value_or(""));
        if (h.uid_map.empty() || h.root_mount == 0)
            spdlog::warn("vacceld: cannot read pid 1's uid_map or mountinfo: no peer counts as "
                         "being in the host's namespaces, so no socket peer may administer");
        return h;
    }();
    return host;
}

bool in_host_namespaces(const ProcessEntries& entries, const HostReference& host)
{
    return entries.nspid.size() == 1 && !host.uid_map.empty() && entries.uid_map == host.uid_map &&
           host.root_mount != 0 && entries.root_mount == host.root_mount;
}

std::expected<engine::SessionIdentity, std::string> peer_identity(int fd)
{
    ucred cred{};
    socklen_t length = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0 || length != sizeof cred)
        return std::unexpected(fmt::format("the kernel gave no peer credentials: {}",
                                           std::strerror(errno)));
    if (cred.pid <= 0)
        return std::unexpected("the peer's pid is not visible in the daemon's pid namespace");
    // The kernel's pidfd of the connecting process; pidfd_open of its pid
    // where SO_PEERPIDFD is missing (before Linux 6.5), verified below.
    int pidfd = -1;
    length = sizeof pidfd;
    bool from_socket = true;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) != 0) {
        if (errno != ENOPROTOOPT && errno != EINVAL)
            return std::unexpected(fmt::format("the connecting process (pid {}) is gone: {}",
                                               cred.pid, std::strerror(errno)));
        from_socket = false;
        pidfd = open_pidfd(cred.pid);
        if (pidfd < 0)
            return std::unexpected(fmt::format("the connecting process (pid {}) is gone: {}",
                                               cred.pid, std::strerror(errno)));
    }
    const UniqueFd process(pidfd);
    auto entries = read_process(cred.pid, process.get());
    if (!entries)
        return std::unexpected(std::move(entries.error()));
    // A pidfd opened by pid may name a process that reused the pid: it
    // must at least run with the connecting process's credentials.
    if (!from_socket && (entries->uids[0] != static_cast<long>(cred.uid) ||
                         entries->gids[0] != static_cast<long>(cred.gid)))
        return std::unexpected(fmt::format("process {} no longer has the credentials it "
                                           "connected with (uid {}, gid {}): its pid was reused",
                                           cred.pid, cred.uid, cred.gid));
    engine::SessionIdentity who;
    who.pid = cred.pid;
    who.uid = cred.uid;
    who.gid = cred.gid;
    who.cgroup = std::move(entries->cgroup);
    who.host_namespaces = in_host_namespaces(*entries, host_reference());
    who.root_mount = entries->root_mount;
    return who;
}

std::string cgroup_from_text(const std::string& text)
{
    // cgroup v2 (and the unified line of a hybrid layout) first; a v1-only
    // layout names the process's place in its name=systemd line.
    std::istringstream lines(text);
    std::string line;
    std::string systemd;
    while (std::getline(lines, line)) {
        if (line.rfind("0::", 0) == 0)
            return line.substr(3);
        if (const auto at = line.find(":name=systemd:"); at != std::string::npos)
            systemd = line.substr(at + 14);
    }
    return systemd;
}

std::string cgroup_of(pid_t pid)
{
    // A small procfs read: it never waits on a device or the network.
    std::ifstream file("/proc/" + std::to_string(pid) + "/cgroup");
    if (!file)
        return {};
    std::ostringstream text;
    text << file.rdbuf();
    return cgroup_from_text(text.str());
}

#if VACCEL_USER_FILES_ONLY

// A static build: /etc/group and /etc/passwd, never NSS (user_files.hpp).

namespace {

void say_nss_is_not_consulted()
{
    static std::once_flag said;
    std::call_once(said, [] {
        spdlog::info("vacceld: this static build reads groups from /etc/group and users from "
                     "/etc/passwd only; NSS (LDAP, sssd, systemd-userdb) is not consulted for the "
                     "admin group");
    });
}

}  // namespace

std::optional<gid_t> group_id(const std::string& name)
{
    if (name.empty())
        return std::nullopt;
    say_nss_is_not_consulted();
    auto group = group_in_file("/etc/group", name);
    if (!group)
        return std::nullopt;
    return group->gid;
}

bool is_admin(uid_t uid, gid_t gid, std::optional<gid_t> admin_gid)
{
    if (uid == 0)
        return true;
    if (!admin_gid)
        return false;
    return in_group_by_files("/etc/group", "/etc/passwd", uid, gid, *admin_gid);
}

#else

std::optional<gid_t> group_id(const std::string& name)
{
    if (name.empty())
        return std::nullopt;
    group entry{};
    group* found = nullptr;
    std::vector<char> buffer(16384);
    if (getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 ||
        found == nullptr)
        return std::nullopt;
    return entry.gr_gid;
}

bool is_admin(uid_t uid, gid_t gid, std::optional<gid_t> admin_gid)
{
    if (uid == 0)
        return true;
    if (!admin_gid)
        return false;
    if (gid == *admin_gid)
        return true;
    passwd entry{};
    passwd* found = nullptr;
    std::vector<char> buffer(16384);
    if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
        return false;
    int count = 64;
    std::vector<gid_t> groups(static_cast<std::size_t>(count));
    if (getgrouplist(entry.pw_name, gid, groups.data(), &count) < 0) {
        groups.resize(static_cast<std::size_t>(count));
        if (getgrouplist(entry.pw_name, gid, groups.data(), &count) < 0)
            return false;
    }
    groups.resize(static_cast<std::size_t>(count));
    for (gid_t g : groups)
        if (g == *admin_gid)
            return true;
    return false;
}

#endif

}  // namespace vaccel::daemon
