// config_parse.cpp - TOML text -> Config, refusing anything it does not know.
//
// Owns the mapping from the schema in config.hpp to Config and every error
// message a bad file gets. toml++ exceptions stay inside this file: its
// parse_error becomes a ConfigError with the line toml++ reports.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <toml++/toml.h>

#include "vaccel/daemon/config.hpp"
#include "vaccel/daemon/size.hpp"

namespace vaccel::daemon {

namespace {

using Refusal = std::unexpected<ConfigError>;

// A table's entries in the order the file wrote them (toml++ keeps them
// sorted by name), so the first error reported is the first in the file.
std::vector<std::pair<const toml::key*, const toml::node*>> in_file_order(const toml::table& table)
{
    std::vector<std::pair<const toml::key*, const toml::node*>> entries;
    for (auto&& [key, node] : table)
        entries.emplace_back(&key, &node);
    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        const auto& x = a.first->source().begin;
        const auto& y = b.first->source().begin;
        return x.line != y.line ? x.line < y.line : x.column < y.column;
    });
    return entries;
}

// Reads one document; `file` names it in every error.
class Reader {
public:
    explicit Reader(std::string_view file) : file_(file) {}

    Refusal refuse(const toml::source_region& where, std::string key, std::string reason) const
    {
        return std::unexpected(
            ConfigError{file_, static_cast<std::uint32_t>(where.begin.line), std::move(key),
                        std::move(reason), 0});
    }

    std::expected<Config, ConfigError> read(const toml::table& root) const
    {
        Config config;
        for (auto [key_at, node_at] : in_file_order(root)) {
            const toml::key& key = *key_at;
            const toml::node& node = *node_at;
            if (key.str() == "daemon") {
                const toml::table* daemon = node.as_table();
                if (daemon == nullptr)
                    return refuse(node.source(), "daemon",
                                  "must be a table; write the settings under [daemon]");
                if (auto settings = read_daemon(*daemon); !settings)
                    return Refusal(settings.error());
                else
                    config.daemon = std::move(*settings);
            } else if (key.str() == "devices") {
                if (auto read = read_devices(node, config.daemon); !read)
                    return Refusal(read.error());
            } else if (key.str() == "rule") {
                const toml::array* rules = node.as_array();
                if (rules == nullptr || !rules->is_array_of_tables())
                    return refuse(node.source(), "rule",
                                  "must be an array of tables; start each rule with [[rule]]");
                for (const toml::node& rule : *rules)
                    if (auto added = read_rule(*rule.as_table(), config.policy); !added)
                        return Refusal(added.error());
            } else {
                return refuse(key.source(), std::string(key.str()),
                              "is not a setting vacceld knows; the file holds [daemon], "
                              "[devices.NAME] and [[rule]] tables only");
            }
        }
        return config;
    }

private:
    // [devices.NAME] key = value: kept as text for the backend to read.
    std::expected<void, ConfigError> read_devices(const toml::node& node,
                                                  DaemonSettings& settings) const
    {
        const toml::table* backends = node.as_table();
        if (backends == nullptr)
            return refuse(node.source(), "devices",
                          "must hold one table per backend, e.g. [devices.cpu]");
        for (auto [name_at, table_at] : in_file_order(*backends)) {
            const std::string name = "devices." + std::string(name_at->str());
            const toml::table* table = table_at->as_table();
            if (table == nullptr)
                return refuse(table_at->source(), name, "must be a table of settings");
            auto& values = settings.backends[std::string(name_at->str())];
            settings.backend_lines.at[std::string(name_at->str())] =
                static_cast<std::uint32_t>(table_at->source().begin.line);
            for (auto [key_at, value_at] : in_file_order(*table)) {
                const std::string key = name + "." + std::string(key_at->str());
                settings.backend_lines.at[std::string(name_at->str()) + "." + std::string(key_at->str())] =
                    static_cast<std::uint32_t>(key_at->source().begin.line);
                std::string text;
                if (auto number = value_at->value_exact<std::int64_t>(); value_at->is_integer())
                    text = std::to_string(*number);
                else if (auto flag = value_at->value_exact<bool>(); value_at->is_boolean())
                    text = *flag ? "true" : "false";
                else if (auto string = value_at->value_exact<std::string>(); value_at->is_string())
                    text = *string;
                else
                    return refuse(value_at->source(), key,
                                  "must be a number, true/false or a string");
                values[std::string(key_at->str())] = std::move(text);
            }
        }
        return {};
    }

    std::expected<DaemonSettings, ConfigError> read_daemon(const toml::table& table) const
    {
        DaemonSettings settings;
        for (auto [key_at, node_at] : in_file_order(table)) {
            const toml::key& key = *key_at;
            const toml::node& node = *node_at;
            const std::string name = "daemon." + std::string(key.str());
            if (key.str() == "devices") {
                const toml::array* list = node.as_array();
                if (list == nullptr)
                    return refuse(node.source(), name,
                                  "must be a list of device names, e.g. [\"cpu\"]");
                std::vector<std::string> devices;
                for (const toml::node& item : *list) {
                    const auto device = item.value<std::string>();
                    if (!item.is_string() || !device || device->empty())
                        return refuse(item.source(), name,
                                      "every entry must be a non-empty device name in quotes");
                    devices.push_back(*device);
                }
                settings.devices = std::move(devices);
            } else if (key.str() == "socket" || key.str() == "admin_group" ||
                       key.str() == "state_dir") {
                const auto text = node.value<std::string>();
                if (!node.is_string() || !text || text->empty())
                    return refuse(node.source(), name, "must be a non-empty string in quotes");
                if (key.str() == "socket" || key.str() == "state_dir") {
                    const bool socket = key.str() == "socket";
                    if (text->front() != '/')
                        return refuse(node.source(), name,
                                      fmt::format("\"{}\" is not an absolute path; write the "
                                                  "full path, e.g. \"{}\"",
                                                  *text,
                                                  socket ? default_socket_path
                                                         : default_state_dir));
                    (socket ? settings.socket : settings.state_dir) = *text;
                } else {
                    settings.admin_group = *text;
                }
            } else {
                return refuse(key.source(), name,
                              "is not a [daemon] setting; use devices, socket, admin_group or "
                              "state_dir");
            }
        }
        return settings;
    }

    // An integer in [low, high].
    std::expected<std::uint64_t, ConfigError> integer(const toml::node& node,
                                                      const std::string& name, std::uint64_t low,
                                                      std::uint64_t high) const
    {
        const auto value = node.value_exact<std::int64_t>();
        if (!node.is_integer() || !value)
            return refuse(node.source(), name, "must be a whole number (no quotes)");
        if (*value < 0 || static_cast<std::uint64_t>(*value) < low ||
            static_cast<std::uint64_t>(*value) > high)
            return refuse(node.source(), name,
                          fmt::format("{} is out of range; use {}..{}", *value, low, high));
        return static_cast<std::uint64_t>(*value);
    }

    std::expected<std::uint64_t, ConfigError> size(const toml::node& node,
                                                   const std::string& name) const
    {
        if (node.is_integer())
            return integer(node, name, 0, std::numeric_limits<std::int64_t>::max());
        const auto text = node.value<std::string>();
        if (!node.is_string() || !text)
            return refuse(node.source(), name,
                          "must be a size: a number of bytes, or a number with K, M, G or T, "
                          "e.g. \"2G\"");
        const auto bytes = parse_size(*text);
        if (!bytes)
            return refuse(node.source(), name,
                          fmt::format("\"{}\" is not a size; write a number of bytes, or a "
                                      "number with K, M, G or T, e.g. \"2G\"",
                                      *text));
        return *bytes;
    }

    std::expected<void, ConfigError> read_rule(const toml::table& table, Policy& policy) const
    {
        constexpr std::uint64_t u32 = std::numeric_limits<std::uint32_t>::max();
        std::optional<Selector> selector;
        const toml::source_region* selector_at = nullptr;
        RuleLimits limits;
        for (auto [key_at, node_at] : in_file_order(table)) {
            const toml::key& key = *key_at;
            const toml::node& node = *node_at;
            const std::string_view k = key.str();
            const std::string name = "rule." + std::string(k);
            std::optional<Selector> chosen;
            if (k == "uid" || k == "gid") {
                // uid/gid (uid_t)-1 means "no id" to the kernel: never a client.
                auto id = integer(node, name, 0, u32 - 1);
                if (!id)
                    return Refusal(id.error());
                chosen = k == "uid" ? Selector::uid(static_cast<uid_t>(*id))
                                    : Selector::gid(static_cast<gid_t>(*id));
            } else if (k == "cgroup") {
                const auto path = node.value<std::string>();
                if (!node.is_string() || !path)
                    return refuse(node.source(), name,
                                  "must be a cgroup path prefix in quotes, e.g. "
                                  "\"/system.slice\"");
                chosen = Selector::cgroup_prefix(*path);
                if (std::string problem = selector_problem(*chosen); !problem.empty())
                    return refuse(node.source(), name, std::move(problem));
            } else if (k == "default") {
                if (node.value_exact<bool>() != std::optional<bool>(true))
                    return refuse(node.source(), name,
                                  "must be true (it marks the rule for clients no other rule "
                                  "selects)");
                chosen = Selector::fallback();
            } else if (k == "memory") {
                auto bytes = size(node, name);
                if (!bytes)
                    return Refusal(bytes.error());
                limits.memory_bytes = *bytes;
            } else if (k == "weight") {
                auto weight = integer(node, name, weight_min, weight_max);
                if (!weight)
                    return Refusal(weight.error());
                limits.weight = static_cast<std::uint32_t>(*weight);
            } else if (k == "priority") {
                const auto text = node.value<std::string>();
                const auto priority = text ? priority_of(*text) : std::nullopt;
                if (!node.is_string() || !priority)
                    return refuse(node.source(), name,
                                  fmt::format("{} is not a priority; use \"latency\" (served "
                                              "before batch work whenever it waits) or "
                                              "\"batch\" (shares by weight, the default)",
                                              text ? fmt::format("\"{}\"", *text)
                                                   : std::string("this value")));
                limits.priority = *priority;
            } else if (k == "device_share") {
                const auto text = node.value<std::string>();
                const auto share = text && node.is_string() ? share_of(*text) : std::nullopt;
                if (!share)
                    return refuse(node.source(), name,
                                  fmt::format("{} is not a share; write a percentage in quotes "
                                              "from \"0.1%\" to \"100%\" (at most one "
                                              "decimal), e.g. \"30%\"",
                                              text && node.is_string()
                                                  ? fmt::format("\"{}\"", *text)
                                                  : std::string("this value")));
                limits.device_share = *share;
            } else if (std::optional<std::uint32_t>* count = count_field(limits, k)) {
                auto value = integer(node, name, 0, u32);
                if (!value)
                    return Refusal(value.error());
                *count = static_cast<std::uint32_t>(*value);
            } else if (k == "context") {
                const toml::table* caps = node.as_table();
                if (caps == nullptr)
                    return refuse(node.source(), name,
                                  "must be a table; write the per-context caps under "
                                  "[rule.context] after the rule's [[rule]]");
                if (auto read = read_context_caps(*caps, limits.context); !read)
                    return Refusal(read.error());
            } else {
                return refuse(key.source(), name,
                              "is not a rule setting; a rule has one selector (uid, gid, "
                              "cgroup, default) and any of contexts, memory, buffers, "
                              "programs, queues, events, gates, sessions, weight, "
                              "priority, device_share, and an optional [rule.context] "
                              "table");
            }
            if (chosen) {
                if (selector)
                    return refuse(key.source(), name,
                                  fmt::format("a rule selects clients one way only, and this "
                                              "one already selects {} (line {}); split it into "
                                              "two rules",
                                              selector->describe(), selector_at->begin.line));
                selector = std::move(chosen);
                selector_at = &key.source();
            }
        }
        if (!selector)
            return refuse(table.source(), "rule",
                          "has no selector; add one of uid = N, gid = N, cgroup = \"/prefix\" "
                          "or default = true");
        if (const Rule* earlier = policy.find(*selector); earlier != nullptr)
            return refuse(*selector_at, "rule." + selector_key(*selector),
                          fmt::format("a second rule for {}; keep one rule per selector",
                                      selector->describe()));
        if (auto set = policy.set(*selector, limits); !set)
            return refuse(*selector_at, "rule", set.error().reason);
        return {};
    }

    // [rule.context]: caps on each one context; the keys of a rule's
    // resources, less those that count more than one context.
    std::expected<void, ConfigError> read_context_caps(const toml::table& table,
                                                       ContextCaps& caps) const
    {
        constexpr std::uint64_t u32 = std::numeric_limits<std::uint32_t>::max();
        for (auto [key_at, node_at] : in_file_order(table)) {
            const std::string_view k = key_at->str();
            const std::string name = "rule.context." + std::string(k);
            if (k == "memory") {
                auto bytes = size(*node_at, name);
                if (!bytes)
                    return Refusal(bytes.error());
                caps.memory_bytes = *bytes;
                continue;
            }
            std::optional<std::uint32_t>* count = k == "buffers"    ? &caps.buffers
                                                  : k == "programs" ? &caps.programs
                                                  : k == "queues"   ? &caps.queues
                                                  : k == "events"   ? &caps.events
                                                  : k == "gates"    ? &caps.gates
                                                                    : nullptr;
            if (count == nullptr) {
                const bool tenant_only = k == "contexts" || k == "sessions" || k == "weight" ||
                                         k == "priority" || k == "device_share";
                return refuse(key_at->source(), name,
                              tenant_only
                                  ? fmt::format("is the tenant's, not one context's; set {} "
                                                "in the rule itself",
                                                k)
                                  : std::string("is not a per-context cap; use memory, "
                                                "buffers, programs, queues, events or gates"));
            }
            auto value = integer(*node_at, name, 0, u32);
            if (!value)
                return Refusal(value.error());
            *count = static_cast<std::uint32_t>(*value);
        }
        return {};
    }

    static std::optional<std::uint32_t>* count_field(RuleLimits& limits, std::string_view key)
    {
        if (key == "sessions") return &limits.sessions;
        if (key == "contexts") return &limits.contexts;
        if (key == "buffers") return &limits.buffers;
        if (key == "programs") return &limits.programs;
        if (key == "queues") return &limits.queues;
        if (key == "events") return &limits.events;
        if (key == "gates") return &limits.gates;
        return nullptr;
    }

    static std::string selector_key(const Selector& selector)
    {
        switch (selector.kind) {
        case SelectorKind::uid: return "uid";
        case SelectorKind::gid: return "gid";
        case SelectorKind::cgroup: return "cgroup";
        case SelectorKind::fallback: break;
        }
        return "default";
    }

    std::string file_;
};

}  // namespace

std::uint32_t SettingLines::line_of(std::string_view backend, std::string_view key) const
{
    std::string name(backend);
    if (!key.empty()) name += "." + std::string(key);
    const auto it = at.find(name);
    return it == at.end() ? 0 : it->second;
}

std::expected<Config, ConfigError> parse_config(std::string_view text, std::string_view file_name)
{
    toml::table root;
    try {
        root = toml::parse(text, file_name);
    } catch (const toml::parse_error& error) {
        return std::unexpected(ConfigError{std::string(file_name),
                                           static_cast<std::uint32_t>(error.source().begin.line),
                                           {},
                                           fmt::format("not valid TOML: {}", error.description()),
                                           0});
    }
    return Reader(file_name).read(root);
}

std::expected<Config, ConfigError> load_config(const std::filesystem::path& path)
{
    auto refused = [&](int err) {
        return std::unexpected(ConfigError{path.string(), 0, {},
                                           fmt::format("cannot be read: {}", std::strerror(err)),
                                           err});
    };
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return refused(errno);
    std::string text;
    char chunk[16384];
    for (;;) {
        const ssize_t got = ::read(fd, chunk, sizeof(chunk));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            const int err = errno;
            ::close(fd);
            return refused(err);
        }
        if (got == 0)
            break;
        text.append(chunk, static_cast<std::size_t>(got));
    }
    ::close(fd);
    return parse_config(text, path.string());
}

}  // namespace vaccel::daemon
