// admin_authority.hpp - who may administer the daemon (VACCEL_OP_ADMIN).
//
// Owns: the admin group's id and a bounded cache of group-membership
// answers. Decides:
//  - admin power never comes from inside a container: a session that
//    belongs to a registered container, or whose user, pid or mount
//    namespace is not the host's (SessionIdentity::host_namespaces, read at
//    accept: peer.hpp), is not an admin whatever its uid; kernel sessions
//    carry no namespaces and never administer;
//  - in the host's namespaces, an admin is root, or a uid whose primary or
//    supplementary groups include the admin group;
//  - the cheap part first (look(), on the reactor, never blocking): the
//    refusals above and root need no lookup and no copy of anything; only
//    a host peer that is not root is asked about on the chores thread
//    (resolve()), whose user-database (NSS) answer is cached per (uid, gid)
//    for `answer_lifetime` with at most `cache_bound` entries (the oldest
//    entry goes first), and dropped whenever the admin group is set
//    (reload);
//  - every refusal is the same: PermissionDenied / VACCEL_D_NOT_ADMIN
//    (arg0 = uid, arg1 = gid) with a sentence saying why.
//
// Thread-safety: look() on any thread; resolve() and set_admin_group() on
// the chores thread; one leaf mutex guards the cache and the group (no
// lookup runs under it).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "vaccel/common/error.hpp"
#include "vaccel/engine/limit_policy.hpp"

namespace vaccel::daemon {

enum class AdminLook {
    admin,      // root in the host's namespaces
    not_admin,  // inside a container or outside the host's namespaces
    ask,        // a host peer that is not root: resolve() on the chores thread
};

class AdminAuthority {
public:
    // Whether `uid` (primary group `gid`) is in group `admin_gid`; may block.
    using Membership = std::function<bool(uid_t uid, gid_t gid, gid_t admin_gid)>;
    using Clock = std::chrono::steady_clock;

    static constexpr std::size_t cache_bound = 256;
    static constexpr std::chrono::seconds answer_lifetime{30};

    // `membership` defaults to the user database (peer.hpp's is_admin).
    explicit AdminAuthority(std::optional<gid_t> admin_gid, Membership membership = {});

    AdminLook look(const engine::SessionIdentity& who) const;
    // The whole decision: look(), then for `ask` the (cached) membership.
    bool resolve(const engine::SessionIdentity& who);
    // The refusal of a caller who is not an admin (the sentence says why).
    Error refusal(const engine::SessionIdentity& who) const;
    // A new admin group (reload): cached answers are dropped.
    void set_admin_group(std::optional<gid_t> admin_gid);

    // How many times the membership function ran (for tests).
    std::uint64_t lookups() const;

private:
    using Key = std::pair<uid_t, gid_t>;
    struct Answer {
        bool member = false;
        Clock::time_point at;
    };

    mutable std::mutex mutex_;  // guards everything below; a leaf lock
    std::optional<gid_t> admin_gid_;
    std::map<Key, Answer> answers_;
    std::uint64_t lookups_ = 0;
    Membership membership_;
};

}  // namespace vaccel::daemon
