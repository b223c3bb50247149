// policy.cpp - rule matching, effective limits and rule changes.
//
// Owns the precedence documented in policy.hpp and the validation of a
// selector and a weight; nothing here touches files.
#include "vaccel/daemon/policy.hpp"

#include <fmt/format.h>

#include <limits>
#include <string_view>

#include "vaccel/common/limits.hpp"

namespace vaccel::daemon {

std::string ConfigError::message() const
{
    std::string out = file.empty() ? std::string("policy") : file;
    if (line != 0)
        out += fmt::format(":{}", line);
    out += ": ";
    if (!key.empty())
        out += fmt::format("key '{}': ", key);
    out += reason;
    return out;
}

std::string Selector::describe() const
{
    switch (kind) {
    case SelectorKind::uid: return fmt::format("uid {}", id);
    case SelectorKind::gid: return fmt::format("gid {}", id);
    case SelectorKind::cgroup: return fmt::format("cgroup {}", cgroup);
    case SelectorKind::fallback: break;
    }
    return "default";
}

namespace {

// A field set in the changes replaces ours; an unset one leaves ours.
template <class T>
void take(std::optional<T>& mine, const std::optional<T>& theirs)
{
    if (theirs)
        mine = theirs;
}

}  // namespace

void RuleLimits::merge(const RuleLimits& changes)
{
    take(contexts, changes.contexts);
    take(memory_bytes, changes.memory_bytes);
    take(buffers, changes.buffers);
    take(programs, changes.programs);
    take(queues, changes.queues);
    take(events, changes.events);
    take(gates, changes.gates);
    take(sessions, changes.sessions);
    take(weight, changes.weight);
    take(priority, changes.priority);
    take(device_share, changes.device_share);
    context.merge(changes.context);
}

void ContextCaps::merge(const ContextCaps& changes)
{
    take(memory_bytes, changes.memory_bytes);
    take(buffers, changes.buffers);
    take(programs, changes.programs);
    take(queues, changes.queues);
    take(events, changes.events);
    take(gates, changes.gates);
}

std::string selector_problem(const Selector& selector)
{
    if (selector.kind != SelectorKind::cgroup)
        return {};
    const std::string_view path = selector.cgroup;
    if (path.empty() || path.front() != '/')
        return fmt::format("cgroup prefix \"{}\" is not an absolute path; write it as in "
                           "/proc/<pid>/cgroup, e.g. \"/system.slice/ml.service\"",
                           path);
    if (path == "/")
        return {};
    if (path.back() == '/')
        return fmt::format("cgroup prefix \"{}\" ends with '/'; drop the trailing slash", path);
    std::size_t start = 1;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string_view::npos)
            end = path.size();
        const std::string_view part = path.substr(start, end - start);
        if (part.empty() || part == "." || part == "..")
            return fmt::format("cgroup prefix \"{}\" has an empty, \".\" or \"..\" component; "
                               "write the plain path",
                               path);
        start = end + 1;
    }
    return {};
}

std::string weight_problem(std::uint64_t weight)
{
    if (weight < weight_min || weight > weight_max)
        return fmt::format("weight {} is out of range; use {}..{} (default {})", weight,
                           weight_min, weight_max, weight_default);
    return {};
}

namespace {

// `prefix` selects `path` by whole components.
bool cgroup_selects(std::string_view prefix, std::string_view path)
{
    if (prefix == "/")
        return !path.empty();
    if (!path.starts_with(prefix))
        return false;
    return path.size() == prefix.size() || path[prefix.size()] == '/';
}

}  // namespace

const Rule* Policy::match(const Client& client) const
{
    const Rule* by_gid = nullptr;
    const Rule* by_cgroup = nullptr;
    const Rule* by_default = nullptr;
    for (const Rule& rule : rules_) {
        const Selector& s = rule.selector;
        switch (s.kind) {
        case SelectorKind::uid:
            if (s.id == client.uid)
                return &rule;  // highest precedence: nothing can beat it
            break;
        case SelectorKind::gid:
            if (s.id == client.gid)
                by_gid = &rule;
            break;
        case SelectorKind::cgroup:
            if (cgroup_selects(s.cgroup, client.cgroup) &&
                (by_cgroup == nullptr || s.cgroup.size() > by_cgroup->selector.cgroup.size()))
                by_cgroup = &rule;
            break;
        case SelectorKind::fallback: by_default = &rule; break;
        }
    }
    if (by_gid != nullptr)
        return by_gid;
    if (by_cgroup != nullptr)
        return by_cgroup;
    return by_default;
}

vaccel_device_limits Policy::context_limits(const vaccel_device_limits& device,
                                            const Client& client) const
{
    const Rule* rule = match(client);
    if (rule == nullptr)
        return device;
    constexpr auto all32 = std::numeric_limits<std::uint32_t>::max();
    constexpr auto all64 = std::numeric_limits<std::uint64_t>::max();
    const ContextCaps& c = rule->limits.context;
    vaccel_device_limits caps = unlimited_limits();
    caps.max_buffers = c.buffers.value_or(all32);
    caps.max_programs = c.programs.value_or(all32);
    caps.max_queues = c.queues.value_or(all32);
    caps.max_events = c.events.value_or(all32);
    caps.max_gates = c.gates.value_or(all32);
    caps.max_memory_bytes = c.memory_bytes.value_or(all64);
    return intersect(device, caps);
}

Totals Policy::totals(const Client& client) const
{
    constexpr auto all32 = std::numeric_limits<std::uint32_t>::max();
    constexpr auto all64 = std::numeric_limits<std::uint64_t>::max();
    Totals out;
    out.per_device = unlimited_limits();
    const Rule* rule = match(client);
    if (rule == nullptr)
        return out;
    const RuleLimits& l = rule->limits;
    out.per_device.max_contexts = l.contexts.value_or(all32);
    out.per_device.max_buffers = l.buffers.value_or(all32);
    out.per_device.max_programs = l.programs.value_or(all32);
    out.per_device.max_queues = l.queues.value_or(all32);
    out.per_device.max_events = l.events.value_or(all32);
    out.per_device.max_gates = l.gates.value_or(all32);
    out.per_device.max_memory_bytes = l.memory_bytes.value_or(all64);
    out.sessions = l.sessions.value_or(default_sessions);
    return out;
}

std::uint32_t Policy::weight(const Client& client) const
{
    const Rule* rule = match(client);
    return rule != nullptr ? rule->limits.weight.value_or(weight_default) : weight_default;
}

Schedule Policy::schedule(const Client& client) const
{
    Schedule out;
    const Rule* rule = match(client);
    if (rule == nullptr) return out;
    out.weight = rule->limits.weight.value_or(weight_default);
    out.priority = rule->limits.priority.value_or(TenantPriority::batch);
    out.share_permille = rule->limits.device_share.value_or(share_permille_max);
    return out;
}

std::string_view priority_name(TenantPriority priority)
{
    return priority == TenantPriority::latency ? "latency" : "batch";
}

std::optional<TenantPriority> priority_of(std::string_view name)
{
    if (name == "batch") return TenantPriority::batch;
    if (name == "latency") return TenantPriority::latency;
    return std::nullopt;
}

std::optional<std::uint32_t> share_of(std::string_view text)
{
    if (text.size() < 2 || text.back() != '%') return std::nullopt;
    text.remove_suffix(1);
    std::uint32_t whole = 0, tenth = 0;
    std::size_t i = 0, digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 4; ++i, ++digits)
        whole = whole * 10 + static_cast<std::uint32_t>(text[i] - '0');
    if (digits == 0) return std::nullopt;
    if (i < text.size()) {
        if (text[i] != '.' || i + 2 != text.size() || text[i + 1] < '0' || text[i + 1] > '9')
            return std::nullopt;
        tenth = static_cast<std::uint32_t>(text[i + 1] - '0');
    }
    const std::uint32_t permille = whole * 10 + tenth;
    if (permille == 0 || permille > share_permille_max) return std::nullopt;
    return permille;
}

std::string share_text(std::uint32_t permille)
{
    return permille % 10 == 0 ? fmt::format("{}%", permille / 10)
                              : fmt::format("{}.{}%", permille / 10, permille % 10);
}

const Rule* Policy::find(const Selector& selector) const
{
    for (const Rule& rule : rules_)
        if (rule.selector == selector)
            return &rule;
    return nullptr;
}

std::expected<void, ConfigError> Policy::set(const Selector& selector, const RuleLimits& changes)
{
    if (std::string problem = selector_problem(selector); !problem.empty())
        return std::unexpected(ConfigError{{}, 0, "cgroup", std::move(problem), 0});
    if (changes.weight)
        if (std::string problem = weight_problem(*changes.weight); !problem.empty())
            return std::unexpected(ConfigError{{}, 0, "weight", std::move(problem), 0});
    if (changes.device_share &&
        (*changes.device_share == 0 || *changes.device_share > share_permille_max))
        return std::unexpected(ConfigError{
            {}, 0, "device_share",
            fmt::format("a share of {} per mille is out of range; use 0.1% to 100%",
                        *changes.device_share),
            0});
    for (Rule& rule : rules_)
        if (rule.selector == selector) {
            rule.limits.merge(changes);
            return {};
        }
    rules_.push_back(Rule{selector, changes});
    return {};
}

bool Policy::reset(const Selector& selector)
{
    for (auto it = rules_.begin(); it != rules_.end(); ++it)
        if (it->selector == selector) {
            rules_.erase(it);
            return true;
        }
    return false;
}

}  // namespace vaccel::daemon
