// admin_report.hpp - the daemon's admin documents as tables for people.
//
// Owns: the text form of the SESSIONS and LIMITS_GET answers (the JSON form
// is the daemon's document itself, printed as it came). Decides: one row per
// session or rule, columns aligned (numbers to the right, words to the
// left), sizes in human units ("2.0 GiB"), "-" for a limit a rule does not
// set, "?" for a field the document lacks; an empty list says so in words.
//   sessions: id pid uid cgroup contexts buffers memory programs in-flight
//             submissions errors (the JSON form also names the container)
//   limits:   rule contexts memory buffers programs queues events gates weight
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "refusal.hpp"

namespace vaccel::ctl {

// Columns of text, aligned; each row as many cells as `header`.
struct Table {
    std::vector<std::string> header;
    std::vector<bool> right_aligned;  // per column
    std::vector<std::vector<std::string>> rows;

    std::string text() const;
};

// A document the daemon sent, parsed; refused (naming what was asked) if it
// is not JSON or lacks `list_key` as an array.
Result<nlohmann::json> admin_document(std::string_view text, std::string_view what,
                                      std::string_view list_key);

std::string sessions_text(const nlohmann::json& sessions_document);
std::string limits_text(const nlohmann::json& limits_document);
// tenants: one row per tenant and device, each resource as used/total
std::string tenants_text(const nlohmann::json& tenants_document);
// mine (limits mine): who the daemon takes the caller for, its rule and
// schedule, then one row per device it may use: its tenant's use/total of
// each resource, device time and share, and the caps of each context
std::string mine_text(const nlohmann::json& mine_document);
// containers: container first-pid cgroup devices sessions
std::string containers_text(const nlohmann::json& containers_document);

}  // namespace vaccel::ctl
