// metrics.cpp - the METRICS document: Prometheus text exposition format
// 0.0.4.
//
// Decides the metric names (shared with vaccelctl and dashboards, listed in
// docs/protocol.md): per device vaccel_device_* (labels device, name), per
// session vaccel_session_* (labels session, transport ("socket" or
// "kernel"), pid, uid, cgroup, tenant), per tenant and device
// vaccel_tenant_*_used / vaccel_tenant_*_total (labels tenant, device; a
// total with no bound is not written), vaccel_tenant_device_seconds_total,
// vaccel_tenant_device_held_seconds_total and vaccel_tenant_device_share
// (labels tenant, device: the device time its scheduler charged the
// tenant, the part of it the device was held idle for the tenant, and its
// share of the last window),
// vaccel_tenant_sessions (label tenant), and the daemon-wide vaccel_sessions and
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

// Per tenant: open sessions, and per device each resource's use and total.
void tenant_metrics(std::string& out, const engine::Tenants& tenants)
{
    const std::vector<engine::TenantReport> reports = tenants.report();
    header(out, {"vaccel_tenant_sessions", "gauge", "Sessions the tenant has open."});
    for (const engine::TenantReport& t : reports)
        fmt::format_to(std::back_inserter(out), "vaccel_tenant_sessions{{tenant=\"{}\"}} {}\n",
                       prometheus_label_value(t.id.key()), t.sessions);
    constexpr const char* names[resource_count] = {"contexts", "memory_bytes", "buffers",
                                                   "programs", "queues",       "events",
                                                   "gates"};
    for (std::size_t k = 0; k < resource_count; ++k) {
        const auto r = static_cast<Resource>(k);
        const std::string used = fmt::format("vaccel_tenant_{}_used", names[k]);
        const std::string total = fmt::format("vaccel_tenant_{}_total", names[k]);
        const std::string used_help = fmt::format("The tenant's {} on the device, all its sessions.", names[k]);
        const std::string total_help = fmt::format("The tenant's total of {} on the device (absent: none).", names[k]);
        header(out, {used.c_str(), "gauge", used_help.c_str()});
        for (const engine::TenantReport& t : reports)
            for (std::size_t d = 0; d < t.used.size(); ++d)
                fmt::format_to(std::back_inserter(out), "{}{{tenant=\"{}\",device=\"{}\"}} {}\n",
                               used, prometheus_label_value(t.id.key()), d, t.used[d][k]);
        header(out, {total.c_str(), "gauge", total_help.c_str()});
        const std::uint64_t unbounded = r == Resource::memory_bytes ? UINT64_MAX : UINT32_MAX;
        for (const engine::TenantReport& t : reports) {
            const std::uint64_t value = limit_of(t.totals.per_device, r);
            if (value == unbounded)
                continue;
            for (std::size_t d = 0; d < t.used.size(); ++d)
                fmt::format_to(std::back_inserter(out), "{}{{tenant=\"{}\",device=\"{}\"}} {}\n",
                               total, prometheus_label_value(t.id.key()), d, value);
        }
    }
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
                         std::uint64_t uptime_seconds, const engine::Tenants* tenants)
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
            fmt::format("session=\"{}\",transport=\"{}\",pid=\"{}\",uid=\"{}\",cgroup=\"{}\","
                        "tenant=\"{}\"",
                        entry.id, entry.transport, who.pid, who.uid,
                        prometheus_label_value(who.cgroup),
                        prometheus_label_value(entry.session->tenant().key())),
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

    if (tenants != nullptr)
        tenant_metrics(out, *tenants);

    // Per tenant and device: what the device's scheduler charged it.
    const DeviceTimes times = device_times(devices);
    header(out, {"vaccel_tenant_device_seconds_total", "counter",
                 "Device time the device's scheduler charged the tenant."});
    for (const auto& [tenant, list] : times)
        for (const TenantDeviceTime& t : list)
            fmt::format_to(std::back_inserter(out),
                           "vaccel_tenant_device_seconds_total{{tenant=\"{}\",device=\"{}\"}} {:.9f}\n",
                           prometheus_label_value(tenant), t.device,
                           static_cast<double>(t.charged_ns) / 1e9);
    header(out, {"vaccel_tenant_device_held_seconds_total", "counter",
                 "Of the tenant's device time: the device kept idle for its next item "
                 "(the latency hold)."});
    for (const auto& [tenant, list] : times)
        for (const TenantDeviceTime& t : list)
            fmt::format_to(std::back_inserter(out),
                           "vaccel_tenant_device_held_seconds_total{{tenant=\"{}\",device=\"{}\"}} "
                           "{:.9f}\n",
                           prometheus_label_value(tenant), t.device,
                           static_cast<double>(t.held_ns) / 1e9);
    header(out, {"vaccel_tenant_device_share", "gauge",
                 "The tenant's share of the device's time over the last share window (0..1)."});
    for (const auto& [tenant, list] : times)
        for (const TenantDeviceTime& t : list)
            fmt::format_to(std::back_inserter(out),
                           "vaccel_tenant_device_share{{tenant=\"{}\",device=\"{}\"}} {:.4f}\n",
                           prometheus_label_value(tenant), t.device, t.share);

    header(out, {"vaccel_sessions", "gauge", "Client sessions connected."});
    fmt::format_to(std::back_inserter(out), "vaccel_sessions {}\n", sessions.size());
    header(out, {"vaccel_daemon_uptime_seconds", "gauge", "Seconds since vacceld started."});
    fmt::format_to(std::back_inserter(out), "vaccel_daemon_uptime_seconds {}\n", uptime_seconds);
    return out;
}

}  // namespace vaccel::daemon
