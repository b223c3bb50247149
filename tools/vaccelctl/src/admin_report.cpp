// admin_report.cpp - sessions and limits tables (admin_report.hpp).
#include "admin_report.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "admin_documents.hpp"
#include "report.hpp"

namespace vaccel::ctl {

namespace {

std::string number_cell(const nlohmann::json& object, const char* key, const char* absent)
{
    if (!object.contains(key))
        return absent;
    const auto& value = object[key];
    return value.is_number_unsigned() || value.is_number_integer() ? value.dump() : "?";
}

std::string bytes_cell(const nlohmann::json& object, const char* key, const char* absent)
{
    if (!object.contains(key))
        return absent;
    const auto& value = object[key];
    return value.is_number_unsigned() ? bytes_text(value.get<std::uint64_t>())
           : value.is_number_integer() && value.get<std::int64_t>() >= 0
               ? bytes_text(static_cast<std::uint64_t>(value.get<std::int64_t>()))
               : "?";
}

std::string text_cell(const nlohmann::json& object, const char* key)
{
    if (!object.contains(key) || !object[key].is_string())
        return "?";
    const std::string text = object[key].get<std::string>();
    return text.empty() ? "-" : text;
}

// "3/4", "60.0 MiB/64.0 MiB", or the use alone where the total is null
// (no bound): {"used": N, "total": M|null}, or {"open": N, "total": ...}.
std::string use_cell(const nlohmann::json& use, bool bytes)
{
    if (!use.is_object())
        return "?";
    const char* used_key = use.contains("open") ? "open" : "used";
    const std::string used = bytes ? bytes_cell(use, used_key, "?") : number_cell(use, used_key, "?");
    if (!use.contains("total") || use["total"].is_null())
        return used;
    const std::string total = bytes ? bytes_cell(use, "total", "?") : number_cell(use, "total", "?");
    return used + "/" + total;
}

// "memory 16.0 MiB, buffers 8": the [rule.context] caps, "-" when none.
std::string context_caps_cell(const nlohmann::json& rule)
{
    if (!rule.contains("context") || !rule["context"].is_object())
        return "-";
    const auto& caps = rule["context"];
    std::string out;
    for (const char* key : {"memory_bytes", "buffers", "programs", "queues", "events", "gates"}) {
        if (!caps.contains(key))
            continue;
        if (!out.empty())
            out += ", ";
        const bool memory = std::string_view(key) == "memory_bytes";
        out += fmt::format("{} {}", memory ? "memory" : key,
                           memory ? bytes_cell(caps, key, "?") : number_cell(caps, key, "?"));
    }
    return out.empty() ? "-" : out;
}

std::string share_text(double share) { return fmt::format("{:.1f}%", share * 100.0); }

// The cells of a tenant's device time over its devices.
struct DeviceTimeCells {
    std::string charged = "-", held = "-", shares = "-";
};

// From a session's "device_time" list: the charged time and its held part
// summed over the devices, and each device's share of the last window
// ("1:30.2%"); "-" for a daemon that sends none (held: one that predates
// the latency hold).
DeviceTimeCells device_time_cells(const nlohmann::json& session)
{
    if (!session.contains("device_time") || !session["device_time"].is_array())
        return {};
    std::uint64_t total = 0, held = 0;
    bool any_held = false;
    std::string shares;
    for (const auto& d : session["device_time"]) {
        if (!d.contains("charged_ns") || !d["charged_ns"].is_number_unsigned())
            continue;
        const auto ns = d["charged_ns"].get<std::uint64_t>();
        total += ns;
        if (d.contains("held_ns") && d["held_ns"].is_number_unsigned()) {
            held += d["held_ns"].get<std::uint64_t>();
            any_held = true;
        }
        if (ns == 0 || !d.contains("share") || !d["share"].is_number())
            continue;
        if (!shares.empty())
            shares += ", ";
        shares += fmt::format("{}:{}", number_cell(d, "device", "?"),
                              share_text(d["share"].get<double>()));
    }
    return {duration_text(total), any_held ? duration_text(held) : "-",
            shares.empty() ? "-" : shares};
}

// Columns a cell takes on a terminal: its code points, not its bytes
// ("µs" is three bytes, two columns).
std::size_t columns(std::string_view cell)
{
    return static_cast<std::size_t>(std::count_if(cell.begin(), cell.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xc0) != 0x80;
    }));
}

}  // namespace

std::string Table::text() const
{
    std::vector<std::size_t> widths(header.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i)
            widths[i] = std::max(widths[i], columns(row[i]));
    };
    measure(header);
    for (const auto& row : rows)
        measure(row);
    std::string out;
    auto emit = [&](const std::vector<std::string>& row) {
        std::string line;
        for (std::size_t i = 0; i < widths.size(); ++i) {
            const std::string cell = i < row.size() ? row[i] : "";
            const bool right = i < right_aligned.size() && right_aligned[i];
            if (i > 0)
                line += "  ";
            const std::string pad(widths[i] - columns(cell), ' ');
            line += right ? pad + cell : cell + pad;
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + '\n';
    };
    emit(header);
    for (const auto& row : rows)
        emit(row);
    return out;
}

Result<nlohmann::json> admin_document(std::string_view text, std::string_view what,
                                      std::string_view list_key)
{
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return refuse(fmt::format("the daemon's answer to '{}' is not a JSON document", what));
    if (!list_key.empty() && (!doc.contains(list_key) || !doc[std::string(list_key)].is_array()))
        return refuse(fmt::format("the daemon's answer to '{}' lacks the \"{}\" list", what,
                                  list_key));
    return doc;
}

std::string sessions_text(const nlohmann::json& document)
{
    const auto& sessions = document["sessions"];
    if (sessions.empty())
        return "no sessions\n";
    Table table;
    // device-time and share are the session's tenant's (charged per tenant).
    table.header = {"id",       "pid",      "uid",   "tenant",    "cgroup",      "contexts",
                    "buffers",  "memory",   "programs", "gates", "in-flight", "submissions",
                    "errors",   "device-time", "held", "share"};
    table.right_aligned = {true, true, true, false, false, true, true, true,
                           true, true, true, true,  true,  true, true, false};
    for (const auto& s : sessions) {
        DeviceTimeCells time = device_time_cells(s);
        table.rows.push_back({number_cell(s, "id", "?"), number_cell(s, "pid", "?"),
                              number_cell(s, "uid", "?"), text_cell(s, "tenant"),
                              text_cell(s, "cgroup"),
                              number_cell(s, "contexts", "?"), number_cell(s, "buffers", "?"),
                              bytes_cell(s, "memory_bytes", "?"), number_cell(s, "programs", "?"),
                              number_cell(s, "gates", "?"), number_cell(s, "events_in_flight", "?"),
                              number_cell(s, "submissions", "?"), number_cell(s, "errors", "?"),
                              std::move(time.charged), std::move(time.held),
                              std::move(time.shares)});
    }
    return table.text();
}

std::string containers_text(const nlohmann::json& document)
{
    const auto& containers = document["containers"];
    if (containers.empty())
        return "no containers registered\n";
    Table table;
    table.header = {"container", "first-pid", "cgroup", "devices", "sessions"};
    table.right_aligned = {false, true, false, false, true};
    for (const auto& c : containers) {
        std::string devices = "?";
        if (c.contains("devices") && c["devices"].is_string())
            devices = c["devices"].get<std::string>();
        else if (c.contains("devices") && c["devices"].is_array()) {
            devices.clear();
            for (const auto& index : c["devices"])
                devices += (devices.empty() ? "" : ",") + index.dump();
        }
        table.rows.push_back({text_cell(c, "id").substr(0, 12), number_cell(c, "first_pid", "?"),
                              text_cell(c, "cgroup"), devices, number_cell(c, "sessions", "?")});
    }
    return table.text();
}

std::string limits_text(const nlohmann::json& document)
{
    const auto& rules = document["rules"];
    if (rules.empty())
        return "no rules: every client gets each device's own limits\n";
    Table table;
    // The totals are the tenant's (ADR 0024); per-context caps in the last column.
    table.header = {"rule",   "contexts", "memory", "buffers",  "programs", "queues",
                    "events", "gates",    "sessions", "weight", "priority", "share",
                    "per-context"};
    table.right_aligned = {false, true, true, true, true, true,
                           true,  true, true, true, false, false, false};
    for (const auto& r : rules)
        table.rows.push_back({selector_text(r.contains("selector") ? r["selector"] : nullptr),
                              number_cell(r, "contexts", "-"), bytes_cell(r, "memory_bytes", "-"),
                              number_cell(r, "buffers", "-"), number_cell(r, "programs", "-"),
                              number_cell(r, "queues", "-"), number_cell(r, "events", "-"),
                              number_cell(r, "gates", "-"), number_cell(r, "sessions", "-"),
                              number_cell(r, "weight", "-"),
                              r.contains("priority") ? r["priority"].get<std::string>() : "-",
                              r.contains("device_share") ? r["device_share"].get<std::string>()
                                                         : "-",
                              context_caps_cell(r)});
    return table.text();
}

std::string tenants_text(const nlohmann::json& document)
{
    const auto& tenants = document["tenants"];
    if (tenants.empty())
        return "no tenants: no session is open\n";
    Table table;
    table.header = {"tenant", "sessions", "device", "contexts", "memory", "buffers",
                    "programs", "queues",  "events", "gates", "device-time", "held",
                    "share"};
    table.right_aligned = {false, true, true, true, true, true,
                           true,  true, true, true, true, true, true};
    for (const auto& t : tenants) {
        const std::string name = text_cell(t, "tenant");
        const nlohmann::json sessions = t.contains("sessions") ? t["sessions"] : nlohmann::json();
        const std::string open = use_cell(sessions, false);
        if (!t.contains("devices") || !t["devices"].is_array())
            continue;
        for (const auto& d : t["devices"]) {
            auto cell = [&](const char* key, bool bytes) {
                return d.contains(key) ? use_cell(d[key], bytes) : std::string("?");
            };
            const bool timed = d.contains("device_time_ns") &&
                               d["device_time_ns"].is_number_unsigned() &&
                               d.contains("device_share") && d["device_share"].is_number();
            const bool held = d.contains("device_held_ns") &&
                              d["device_held_ns"].is_number_unsigned();
            table.rows.push_back(
                {name, open, number_cell(d, "index", "?"), cell("contexts", false),
                 cell("memory_bytes", true), cell("buffers", false), cell("programs", false),
                 cell("queues", false), cell("events", false), cell("gates", false),
                 timed ? duration_text(d["device_time_ns"].get<std::uint64_t>()) : "-",
                 held ? duration_text(d["device_held_ns"].get<std::uint64_t>()) : "-",
                 timed ? share_text(d["device_share"].get<double>()) : "-"});
        }
    }
    return table.text();
}

namespace {

// "memory 64.0 MiB, buffers 4096, ...": a device's caps on each context,
// those without a bound left out; "none" when no cap binds.
std::string caps_cell(const nlohmann::json& caps)
{
    if (!caps.is_object())
        return "?";
    std::string out;
    for (const char* key : {"memory_bytes", "buffer_bytes", "buffers", "programs", "queues",
                            "events", "gates", "bindings"}) {
        if (!caps.contains(key) || caps[key].is_null())
            continue;
        const std::string_view k = key;
        const bool bytes = k.ends_with("_bytes");
        const std::string label = k == "memory_bytes" ? "memory" : k == "buffer_bytes" ? "one buffer" : key;
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", label,
                           bytes ? bytes_cell(caps, key, "?") : number_cell(caps, key, "?"));
    }
    return out.empty() ? "none" : out;
}

}  // namespace

std::string mine_text(const nlohmann::json& d)
{
    std::string out;
    if (d.contains("caller") && d["caller"].is_object()) {
        const auto& c = d["caller"];
        out += fmt::format("you: uid {}, gid {}, pid {}", number_cell(c, "uid", "?"),
                           number_cell(c, "gid", "?"), number_cell(c, "pid", "?"));
        if (c.contains("cgroup") && c["cgroup"].is_string() && !c["cgroup"].get<std::string>().empty())
            out += ", cgroup " + c["cgroup"].get<std::string>();
        if (c.contains("container") && c["container"].is_string() &&
            !c["container"].get<std::string>().empty())
            out += ", container " + c["container"].get<std::string>();
        out += "\n";
    }
    const std::string weight = number_cell(d, "weight", "?");
    out += fmt::format("rule: {}; tenant {}; weight {}, priority {}, device share {}\n",
                       text_cell(d, "rule"), text_cell(d, "tenant"), weight,
                       text_cell(d, "priority"), text_cell(d, "device_share"));
    out += fmt::format("sessions open: {}\n",
                       use_cell(d.contains("sessions") ? d["sessions"] : nlohmann::json(), false));
    if (!d.contains("devices") || !d["devices"].is_array() || d["devices"].empty())
        return out + "devices: none you may use\n";
    Table table;
    table.header = {"device", "name", "contexts", "memory", "buffers", "programs", "queues",
                    "events", "gates", "device-time", "share", "each context"};
    table.right_aligned = {true, false, true, true, true, true, true, true, true, true, true, false};
    for (const auto& dev : d["devices"]) {
        auto cell = [&](const char* key, bool bytes) {
            return dev.contains(key) ? use_cell(dev[key], bytes) : std::string("?");
        };
        const bool timed = dev.contains("device_time_ns") && dev["device_time_ns"].is_number_unsigned() &&
                           dev.contains("device_share") && dev["device_share"].is_number();
        table.rows.push_back(
            {number_cell(dev, "index", "?"), text_cell(dev, "name"), cell("contexts", false),
             cell("memory_bytes", true), cell("buffers", false), cell("programs", false),
             cell("queues", false), cell("events", false), cell("gates", false),
             timed ? duration_text(dev["device_time_ns"].get<std::uint64_t>()) : "-",
             timed ? share_text(dev["device_share"].get<double>()) : "-",
             dev.contains("context") ? caps_cell(dev["context"]) : "?"});
    }
    return out + table.text();
}

}  // namespace vaccel::ctl
