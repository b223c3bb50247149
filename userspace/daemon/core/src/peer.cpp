// peer.cpp - peer credentials, cgroups and admin group membership.
#include "vaccel/daemon/peer.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

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
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line))
        if (line.rfind("0::", 0) == 0)
            return line.substr(3);
    return {};
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

}  // namespace vaccel::daemon
