// peer.cpp - peer credentials, cgroups and admin group membership.
//
// Groups come from NSS (getgrnam_r, getgrouplist), except in a static build
// (VACCEL_USER_FILES_ONLY): glibc's NSS cannot run in a static binary, so
// /etc/group and /etc/passwd are read directly (user_files.hpp).
#include "vaccel/daemon/peer.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include <spdlog/spdlog.h>

#include "vaccel/daemon/user_files.hpp"

namespace vaccel::daemon {

std::optional<engine::SessionIdentity> peer_identity(int fd)
{
    ucred cred{};
    socklen_t length = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0 || length != sizeof cred)
        return std::nullopt;
    engine::SessionIdentity who;
    who.pid = cred.pid;
    who.uid = cred.uid;
    who.gid = cred.gid;
    who.cgroup = cgroup_of(cred.pid);
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
