// admin_authority.cpp - the admin-power decision (admin_authority.hpp).
#include "vaccel/daemon/admin_authority.hpp"

#include <algorithm>

#include "vaccel/daemon/peer.hpp"

namespace vaccel::daemon {

AdminAuthority::AdminAuthority(std::optional<gid_t> admin_gid, Membership membership)
    : admin_gid_(admin_gid), membership_(std::move(membership))
{
    if (!membership_)
        membership_ = [](uid_t uid, gid_t gid, gid_t admin) { return is_admin(uid, gid, admin); };
}

AdminLook AdminAuthority::look(const engine::SessionIdentity& who) const
{
    if (!who.container.empty() || !who.host_namespaces)
        return AdminLook::not_admin;
    if (who.uid == 0)
        return AdminLook::admin;
    return AdminLook::ask;
}

bool AdminAuthority::resolve(const engine::SessionIdentity& who)
{
    switch (look(who)) {
    case AdminLook::admin:
        return true;
    case AdminLook::not_admin:
        return false;
    case AdminLook::ask:
        break;
    }
    const Key key{who.uid, who.gid};
    std::optional<gid_t> group;
    {
        std::lock_guard lock(mutex_);
        if (!admin_gid_)
            return false;
        if (*admin_gid_ == who.gid)
            return true;
        group = admin_gid_;
        if (auto it = answers_.find(key);
            it != answers_.end() && Clock::now() - it->second.at < answer_lifetime)
            return it->second.member;
    }
    // The user database may block (NSS): never under the lock.
    const bool member = membership_(who.uid, who.gid, *group);
    std::lock_guard lock(mutex_);
    ++lookups_;
    if (admin_gid_ != group)
        return member;  // the group changed meanwhile: do not cache an old answer
    if (answers_.size() >= cache_bound && !answers_.contains(key)) {
        const auto oldest = std::ranges::min_element(
            answers_, [](const auto& a, const auto& b) { return a.second.at < b.second.at; });
        answers_.erase(oldest);
    }
    answers_[key] = Answer{member, Clock::now()};
    return member;
}

Error AdminAuthority::refusal(const engine::SessionIdentity& who) const
{
    const char* why =
        !who.container.empty()
            ? "a session of a registered container never administers, whatever its uid; "
              "administer from the host"
        : !who.host_namespaces
            ? "a process whose user, pid or mount namespace is not the host's (a container's) "
              "never administers, whatever its uid; administer from the host"
            : "only root and the admin group may administer";
    return Error::of(Errc::permission_denied, VACCEL_D_NOT_ADMIN, who.uid, who.gid).with_note(why);
}

void AdminAuthority::set_admin_group(std::optional<gid_t> admin_gid)
{
    std::lock_guard lock(mutex_);
    admin_gid_ = admin_gid;
    answers_.clear();
}

std::uint64_t AdminAuthority::lookups() const
{
    std::lock_guard lock(mutex_);
    return lookups_;
}

}  // namespace vaccel::daemon
