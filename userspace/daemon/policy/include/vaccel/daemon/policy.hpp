// policy.hpp - the operator's limits policy: which rule a client falls under
// and what that rule narrows.
//
// Owns: the rules (selector -> limits + scheduling weight). Decides the
// matching precedence and the effective limits of a client:
//
//   1. a `uid` rule for the client's uid, else
//   2. a `gid` rule for the client's primary gid (the gid SO_PEERCRED
//      reports; supplementary groups are not consulted), else
//   3. the `cgroup` rule with the longest prefix of the client's cgroup
//      path, compared by whole path components ("/a/b" selects "/a/b" and
//      "/a/b/c", never "/a/bc"; "/" selects every cgroup; a client whose
//      cgroup is unknown matches no cgroup rule), else
//   4. the `default` rule, else
//   5. no rule: the device's own limits and weight 100.
//
// Only the one matching rule applies; rules never combine. A field a rule
// leaves out does not narrow anything: effective limits = the device's own
// limits ∩ the fields the rule sets (vaccel::intersect, ADR 0003), so policy
// can only narrow what a device offers.
//
// Thread-safety: a plain value; readers on several threads need their own
// copy or outside synchronisation.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "vaccel.h"
#include "vaccel/daemon/config_error.hpp"

namespace vaccel::daemon {

// Who a session belongs to, as the transport learnt it.
struct Client {
    uid_t uid = 0;
    gid_t gid = 0;       // primary gid
    std::string cgroup;  // cgroup v2 path ("0::" line of /proc/<pid>/cgroup); may be empty
};

enum class SelectorKind : std::uint8_t { uid, gid, cgroup, fallback };

// Which clients a rule is for. `fallback` is the config file's `default`.
struct Selector {
    SelectorKind kind = SelectorKind::fallback;
    std::uint32_t id = 0;  // the uid or gid
    std::string cgroup;    // the path prefix

    static Selector uid(uid_t uid) { return {SelectorKind::uid, uid, {}}; }
    static Selector gid(gid_t gid) { return {SelectorKind::gid, gid, {}}; }
    static Selector cgroup_prefix(std::string path)
    {
        return {SelectorKind::cgroup, 0, std::move(path)};
    }
    static Selector fallback() { return {}; }

    // "uid 1000", "gid 100", "cgroup /system.slice", "default".
    std::string describe() const;
    bool operator==(const Selector&) const = default;
};

inline constexpr std::uint32_t weight_min = 1;
inline constexpr std::uint32_t weight_max = 1000;
inline constexpr std::uint32_t weight_default = 100;

// What one rule sets; an absent field leaves the device's limit in force.
struct RuleLimits {
    std::optional<std::uint32_t> contexts;      // per client, on each device
    std::optional<std::uint64_t> memory_bytes;  // per context: all its buffers
    std::optional<std::uint32_t> buffers;       // per context
    std::optional<std::uint32_t> programs;      // per context
    std::optional<std::uint32_t> queues;        // per context
    std::optional<std::uint32_t> events;        // per context: events in flight
    std::optional<std::uint32_t> gates;         // per context: host gates alive
    std::optional<std::uint32_t> weight;        // weight_min..weight_max

    // Fields set in `changes` replace ours; the others stay.
    void merge(const RuleLimits& changes);
    bool operator==(const RuleLimits&) const = default;
};

struct Rule {
    Selector selector;
    RuleLimits limits;
    bool operator==(const Rule&) const = default;
};

// Why `selector` cannot be a rule's selector, or empty: a cgroup prefix
// must be an absolute path without empty, "." or ".." components and
// without a trailing "/" (except "/" itself).
std::string selector_problem(const Selector& selector);
// Why `weight` is out of range, or empty.
std::string weight_problem(std::uint64_t weight);

class Policy {
public:
    // The rule that applies to `client` (precedence above), or nullptr.
    const Rule* match(const Client& client) const;
    // The device's own limits narrowed by the matching rule.
    vaccel_device_limits effective(const vaccel_device_limits& device, const Client& client) const;
    // The matching rule's weight, else weight_default.
    std::uint32_t weight(const Client& client) const;

    // Adds a rule for `selector`, or merges `changes` into the existing one.
    // Refuses (nothing changes) a bad selector or weight; the error names
    // the key and the reason.
    std::expected<void, ConfigError> set(const Selector& selector, const RuleLimits& changes);
    // Removes the rule for `selector`; false if there was none.
    bool reset(const Selector& selector);

    const Rule* find(const Selector& selector) const;
    // Invariant: at most one rule per selector, in the order they were added.
    const std::vector<Rule>& rules() const { return rules_; }
    bool operator==(const Policy&) const = default;

private:
    std::vector<Rule> rules_;
};

}  // namespace vaccel::daemon
