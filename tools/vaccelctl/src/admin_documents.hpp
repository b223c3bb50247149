// admin_documents.hpp - what vaccelctl sends on the daemon's admin channel.
//
// Owns: the command-line form of a limits rule (selector + values) and its
// JSON request documents (docs/protocol.md; the shapes are fixed by the
// daemon):
//   LIMITS_SET   {"selector": {"uid": N} | {"gid": N} | {"cgroup": "/a/b"} |
//                 {"default": true}, "limits": {"contexts": N,
//                 "memory_bytes": N, "buffers": N, "programs": N,
//                 "queues": N, "events": N, "gates": N, "weight": N,
//                 "priority": "latency", "device_share": "30%"}}  (only keys given)
//   LIMITS_RESET {"selector": {...}}
// Decides: exactly one selector per command; `limits set` needs at least one
// value; sizes are written as operators write them ("2G", "512M", "4096":
// decimal digits and an optional binary multiplier K, M, G, T, with or
// without "iB", any case; no fractions); weight is 1..1000.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "refusal.hpp"

namespace vaccel::ctl {

// As parsed from the command line; unset optionals were not given.
struct RuleSelector {
    std::optional<std::uint32_t> uid;
    std::optional<std::uint32_t> gid;
    std::optional<std::string> cgroup;
    bool default_rule = false;
};

struct LimitValues {
    std::optional<std::string> memory;  // as written: "2G"
    std::optional<std::uint32_t> contexts;
    std::optional<std::uint32_t> buffers;
    std::optional<std::uint32_t> programs;
    std::optional<std::uint32_t> queues;
    std::optional<std::uint32_t> events;
    std::optional<std::uint32_t> gates;
    std::optional<std::uint32_t> sessions;
    std::optional<std::uint32_t> weight;
    std::optional<std::string> priority;      // "latency" or "batch" (the daemon checks)
    std::optional<std::string> device_share;  // "30%" (the daemon checks)
    // [rule.context]: caps on each single context (--context-*).
    std::optional<std::string> context_memory;
    std::optional<std::uint32_t> context_buffers;
    std::optional<std::uint32_t> context_programs;
    std::optional<std::uint32_t> context_queues;
    std::optional<std::uint32_t> context_events;
    std::optional<std::uint32_t> context_gates;
};

// The byte count `text` names, or nullopt if it is not a size.
std::optional<std::uint64_t> parse_size(std::string_view text);

// {"uid": N} etc.; refused unless exactly one selector was given.
Result<nlohmann::ordered_json> selector_json(const RuleSelector& selector,
                                             std::string_view command);
Result<nlohmann::ordered_json> limits_set_request(const RuleSelector& selector,
                                                  const LimitValues& values);
Result<nlohmann::ordered_json> limits_reset_request(const RuleSelector& selector);

// A selector document as a person reads it: "uid:1000", "gid:27",
// "cgroup:/system.slice/x.service", "default" (as the daemon's "rule" field).
std::string selector_text(const nlohmann::json& selector);

}  // namespace vaccel::ctl
