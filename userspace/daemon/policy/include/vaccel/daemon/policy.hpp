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
// Only the one matching rule applies; rules never combine. The rule's keys
// are its tenant's totals (ADR 0024): on each device, across all the
// sessions of the tenant, and `sessions` the sessions open at once; a key
// the rule leaves out sets no total (`sessions`: default_sessions). The
// tenant of a uid rule is that user, of a gid rule every session of that
// primary group together, of a cgroup rule every session at or below its
// prefix; under the default rule, or none, a session of a registered
// container belongs to that container, any other to its own uid.
// Per-context caps are the optional [rule.context] level: a context's
// limits = the device's own ∩ those caps (vaccel::intersect, ADR 0003), so
// policy can only narrow what a device offers.
//
// Thread-safety: a plain value; readers on several threads need their own
// copy or outside synchronisation.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vaccel.h"
#include "vaccel/common/limits.hpp"
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

// How a tenant's work is served on a device beside other tenants'
// (docs/adr/0026-gpu-device-scheduler.md): batch shares by weight;
// latency goes before every batch tenant whenever it has work.
enum class TenantPriority : std::uint8_t { batch = 0, latency = 1 };
// "batch", "latency".
std::string_view priority_name(TenantPriority priority);
std::optional<TenantPriority> priority_of(std::string_view name);

// A cap on a tenant's share of each device's time, in tenths of a percent
// (1..1000; 1000: no cap).
inline constexpr std::uint32_t share_permille_max = 1000;
// "30%" -> 300, "12.5%" -> 125: a percentage above 0 and at most 100 with
// at most one decimal; nullopt otherwise.
std::optional<std::uint32_t> share_of(std::string_view text);
// 300 -> "30%", 125 -> "12.5%".
std::string share_text(std::uint32_t permille);

// What a tenant's rule says about serving it: its weight, priority and cap.
struct Schedule {
    std::uint32_t weight = 100;
    TenantPriority priority = TenantPriority::batch;
    std::uint32_t share_permille = share_permille_max;
    bool operator==(const Schedule&) const = default;
};

// The sessions a tenant may have open when its rule does not say (and for
// tenants no rule names).
inline constexpr std::uint32_t default_sessions = default_tenant_sessions;

// [rule.context]: caps on each single context of the tenant; an absent
// field leaves the device's own per-context limit in force.
struct ContextCaps {
    std::optional<std::uint64_t> memory_bytes;
    std::optional<std::uint32_t> buffers;
    std::optional<std::uint32_t> programs;
    std::optional<std::uint32_t> queues;
    std::optional<std::uint32_t> events;
    std::optional<std::uint32_t> gates;

    void merge(const ContextCaps& changes);
    bool empty() const { return *this == ContextCaps{}; }
    bool operator==(const ContextCaps&) const = default;
};

// What one rule sets: its tenant's totals; an absent field sets none.
struct RuleLimits {
    std::optional<std::uint32_t> contexts;      // on each device
    std::optional<std::uint64_t> memory_bytes;  // on each device: buffers and programs
    std::optional<std::uint32_t> buffers;       // on each device
    std::optional<std::uint32_t> programs;      // on each device
    std::optional<std::uint32_t> queues;        // on each device
    std::optional<std::uint32_t> events;        // on each device: events alive
    std::optional<std::uint32_t> gates;         // on each device: host gates alive
    std::optional<std::uint32_t> sessions;      // open at once, all transports
    std::optional<std::uint32_t> weight;        // weight_min..weight_max
    std::optional<TenantPriority> priority;     // on each device
    std::optional<std::uint32_t> device_share;  // per mille of each device's time, 1..1000
    ContextCaps context;                        // [rule.context]

    // Fields set in `changes` replace ours; the others stay.
    void merge(const RuleLimits& changes);
    bool operator==(const RuleLimits&) const = default;
};

// A tenant's totals as the policy gives them: the resource fields of
// `per_device` (no bound: the type's largest value) and its sessions.
struct Totals {
    vaccel_device_limits per_device{};
    std::uint64_t sessions = default_sessions;
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
    // One context's limits: the device's own narrowed by the matching
    // rule's [rule.context] caps.
    vaccel_device_limits context_limits(const vaccel_device_limits& device,
                                        const Client& client) const;
    // The totals of the tenant `client` belongs to (its matching rule's).
    Totals totals(const Client& client) const;
    // The matching rule's weight, else weight_default.
    std::uint32_t weight(const Client& client) const;
    // The matching rule's weight, priority and device share (defaults:
    // weight_default, batch, no cap).
    Schedule schedule(const Client& client) const;

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
