// admin_documents.cpp - admin request documents from command-line values.
#include "admin_documents.hpp"

#include <cctype>
#include <fmt/format.h>

namespace vaccel::ctl {

std::optional<std::uint64_t> parse_size(std::string_view text)
{
    std::size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])))
        ++digits;
    if (digits == 0)
        return std::nullopt;
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < digits; ++i) {
        const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
        if (value > (UINT64_MAX - digit) / 10)
            return std::nullopt;
        value = value * 10 + digit;
    }
    std::string suffix;
    for (char c : text.substr(digits))
        suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (suffix.empty() || suffix == "B")
        return value;
    unsigned shift = 0;
    switch (suffix[0]) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    default: return std::nullopt;
    }
    const std::string_view rest = std::string_view(suffix).substr(1);
    if (!rest.empty() && rest != "IB" && rest != "B")
        return std::nullopt;
    if (value > (UINT64_MAX >> shift))
        return std::nullopt;
    return value << shift;
}

Result<nlohmann::ordered_json> selector_json(const RuleSelector& selector,
                                             std::string_view command)
{
    const int given = int(selector.uid.has_value()) + int(selector.gid.has_value()) +
                      int(selector.cgroup.has_value()) + int(selector.default_rule);
    if (given != 1)
        return refuse(fmt::format("{} takes exactly one selector, {} given: --uid N, --gid N, "
                                  "--cgroup PATH or --default",
                                  command, given));
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    if (selector.uid)
        out["uid"] = *selector.uid;
    else if (selector.gid)
        out["gid"] = *selector.gid;
    else if (selector.cgroup) {
        if (selector.cgroup->empty() || selector.cgroup->front() != '/')
            return refuse(fmt::format("--cgroup {} is not a cgroup path: give the path from "
                                      "the cgroup root, starting with '/', e.g. "
                                      "/system.slice/inference.service",
                                      *selector.cgroup));
        out["cgroup"] = *selector.cgroup;
    } else
        out["default"] = true;
    return out;
}

Result<nlohmann::ordered_json> limits_set_request(const RuleSelector& selector,
                                                  const LimitValues& values)
{
    auto chosen = selector_json(selector, "limits set");
    if (!chosen)
        return std::unexpected(chosen.error());
    nlohmann::ordered_json limits = nlohmann::ordered_json::object();
    if (values.contexts)
        limits["contexts"] = *values.contexts;
    auto size_of = [](const std::string& text,
                      std::string_view flag) -> Result<std::uint64_t> {
        const auto bytes = parse_size(text);
        if (!bytes)
            return refuse(fmt::format("{} {} is not a size: write bytes as digits with an "
                                      "optional K, M, G or T (powers of 1024), e.g. 512M or 2G",
                                      flag, text));
        return *bytes;
    };
    if (values.memory) {
        auto bytes = size_of(*values.memory, "--memory");
        if (!bytes)
            return std::unexpected(bytes.error());
        limits["memory_bytes"] = *bytes;
    }
    if (values.buffers)
        limits["buffers"] = *values.buffers;
    if (values.programs)
        limits["programs"] = *values.programs;
    if (values.queues)
        limits["queues"] = *values.queues;
    if (values.events)
        limits["events"] = *values.events;
    if (values.gates)
        limits["gates"] = *values.gates;
    if (values.sessions)
        limits["sessions"] = *values.sessions;
    nlohmann::ordered_json context = nlohmann::ordered_json::object();
    if (values.context_memory) {
        auto bytes = size_of(*values.context_memory, "--context-memory");
        if (!bytes)
            return std::unexpected(bytes.error());
        context["memory_bytes"] = *bytes;
    }
    if (values.context_buffers)
        context["buffers"] = *values.context_buffers;
    if (values.context_programs)
        context["programs"] = *values.context_programs;
    if (values.context_queues)
        context["queues"] = *values.context_queues;
    if (values.context_events)
        context["events"] = *values.context_events;
    if (values.context_gates)
        context["gates"] = *values.context_gates;
    if (!context.empty())
        limits["context"] = context;
    if (values.weight) {
        if (*values.weight < 1 || *values.weight > 1000)
            return refuse(fmt::format("--weight {} is outside 1..1000 (100 is the default share)",
                                      *values.weight));
        limits["weight"] = *values.weight;
    }
    // The daemon checks both and names the valid forms.
    if (values.priority) limits["priority"] = *values.priority;
    if (values.device_share) limits["device_share"] = *values.device_share;
    if (limits.empty())
        return refuse("limits set needs at least one value to set: --memory, --contexts, "
                      "--buffers, --programs, --queues, --events, --gates, --sessions, "
                      "--weight, --priority, --device-share or a --context-* cap");
    return nlohmann::ordered_json{{"selector", *chosen}, {"limits", limits}};
}

Result<nlohmann::ordered_json> limits_reset_request(const RuleSelector& selector)
{
    auto chosen = selector_json(selector, "limits reset");
    if (!chosen)
        return std::unexpected(chosen.error());
    return nlohmann::ordered_json{{"selector", *chosen}};
}

std::string selector_text(const nlohmann::json& selector)
{
    if (!selector.is_object())
        return "?";
    if (selector.contains("uid"))
        return fmt::format("uid:{}", selector["uid"].dump());
    if (selector.contains("gid"))
        return fmt::format("gid:{}", selector["gid"].dump());
    if (selector.contains("cgroup") && selector["cgroup"].is_string())
        return "cgroup:" + selector["cgroup"].get<std::string>();
    if (selector.contains("default"))
        return "default";
    return selector.dump();
}

}  // namespace vaccel::ctl
