// metrics.cpp - the METRICS document: Prometheus text exposition format
// 0.0.4.
//
// Decides the metric names (shared with vaccelctl and dashboards, listed in
// docs/protocol.md): per device vaccel_device_* (labels device, name), per
// session vaccel_session_* (labels session, transport ("socket" or
// "kernel"), pid, uid, cgroup), and the daemon-wide vaccel_sessions and
// vaccel_daemon_uptime_seconds. Each family
// is written once with its # HELP and # TYPE lines; label values are
// escaped (\\, \", \n).
#include <cstring>

#include <fmt/format.h>

#include "vaccel/daemon/admin.hpp"

namespace vaccel::daemon {

namespace {

struct Family {
    const char* name;
    const char* type;  // gauge | counter
    const char* help;
};

void header(std::string& out, const Family& family)
{
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", family.name,
                   family.help, family.name, family.type);
}

}  // namespace

std::string prometheus_label_value(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string metrics_text(engine::DeviceManager& devices, const std::vector<SessionEntry>& sessions,
                         std::uint64_t uptime_seconds)
{
    std::string out;
    auto sample = [&](const char* name, const std::string& labels, std::uint64_t value) {
        fmt::format_to(std::back_inserter(out), "{}{{{}}} {}\n", name, labels, value);
    };

    // Per device.
    std::vector<std::pair<std::string, engine::DeviceStats>> device_rows;
    for (std::uint32_t i = 0; i < devices.count(); ++i) {
        engine::Device& device = *devices.device(i);
        const std::string name(device.info().name, strnlen(device.info().name, VACCEL_NAME_LEN));
        device_rows.emplace_back(
            fmt::format("device=\"{}\",name=\"{}\"", i, prometheus_label_value(name)),
            device.stats());
    }
    const Family device_families[] = {
        {"vaccel_device_sessions", "gauge", "Sessions holding at least one context on the device."},
        {"vaccel_device_contexts", "gauge", "Contexts alive on the device."},
        {"vaccel_device_buffer_bytes", "gauge", "Bytes of buffers allocated on the device."},
        {"vaccel_device_events_in_flight", "gauge", "Submissions accepted and not yet complete."},
        {"vaccel_device_submissions_total", "counter", "Submissions accepted by the device."},
    };
    for (std::size_t f = 0; f < std::size(device_families); ++f) {
        header(out, device_families[f]);
        for (const auto& [labels, stats] : device_rows) {
            const std::uint64_t values[] = {stats.sessions, stats.live.contexts,
                                            stats.live.buffer_bytes, stats.live.events_in_flight,
                                            stats.submissions};
            sample(device_families[f].name, labels, values[f]);
        }
    }

    // Per session.
    std::vector<std::pair<std::string, engine::SessionStats>> session_rows;
    for (const SessionEntry& entry : sessions) {
        const engine::SessionIdentity& who = entry.session->identity();
        session_rows.emplace_back(
            fmt::format("session=\"{}\",transport=\"{}\",pid=\"{}\",uid=\"{}\",cgroup=\"{}\"",
                        entry.id, entry.transport, who.pid, who.uid,
                        prometheus_label_value(who.cgroup)),
            entry.session->stats());
    }
    const Family session_families[] = {
        {"vaccel_session_memory_bytes", "gauge", "Bytes of buffers the session holds."},
        {"vaccel_session_events_in_flight", "gauge", "The session's submissions not yet complete."},
        {"vaccel_session_submissions_total", "counter", "Submissions the session made."},
        {"vaccel_session_errors_total", "counter", "Requests of the session that were refused."},
    };
    for (std::size_t f = 0; f < std::size(session_families); ++f) {
        header(out, session_families[f]);
        for (const auto& [labels, stats] : session_rows) {
            const std::uint64_t values[] = {stats.memory_bytes, stats.events_in_flight,
                                            stats.submissions, stats.errors};
            sample(session_families[f].name, labels, values[f]);
        }
    }

    header(out, {"vaccel_sessions", "gauge", "Client sessions connected."});
    fmt::format_to(std::back_inserter(out), "vaccel_sessions {}\n", sessions.size());
    header(out, {"vaccel_daemon_uptime_seconds", "gauge", "Seconds since vacceld started."});
    fmt::format_to(std::back_inserter(out), "vaccel_daemon_uptime_seconds {}\n", uptime_seconds);
    return out;
}

}  // namespace vaccel::daemon
