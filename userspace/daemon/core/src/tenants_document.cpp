// tenants_document.cpp - the TENANTS and MINE documents: a tenant's use
// against its totals (docs/protocol.md "Administration", ADR 0024).
//
// Decides the documents' shape: TENANTS has one entry per tenant with an
// open session, ordered by key, with its open sessions and, per device,
// each resource's use and total (a total with no bound is null) and the
// device time its scheduler charged the tenant (0 on a device without
// one). MINE is the caller's own: who the daemon takes it for, the rule
// that selects it, its schedule, and its tenant's entry as TENANTS writes
// it, narrowed to the devices the caller may use, each with the device's
// name and the caps of each context the caller creates there.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

#include "vaccel/daemon/admin.hpp"
#include "vaccel/daemon/policy_limits.hpp"

namespace vaccel::daemon {

namespace {

using nlohmann::json;

std::string_view kind_text(engine::TenantKind kind)
{
    switch (kind) {
    case engine::TenantKind::uid: return "uid";
    case engine::TenantKind::gid: return "gid";
    case engine::TenantKind::cgroup: return "cgroup";
    case engine::TenantKind::container: return "container";
    }
    return "unknown";
}

// The document's name of each Resource, in Resource order.
constexpr std::string_view resource_keys[resource_count] = {
    "contexts", "memory_bytes", "buffers", "programs", "queues", "events", "gates"};

// A field's own type's largest value means "no bound" (unlimited_limits()).
json total_json(const vaccel_device_limits& totals, Resource r)
{
    const std::uint64_t value = limit_of(totals, r);
    const bool unbounded =
        r == Resource::memory_bytes ? value == UINT64_MAX : value == UINT32_MAX;
    return unbounded ? json(nullptr) : json(value);
}

// One tenant's entry: its sessions and each device's use, totals and time.
json tenant_entry(const engine::TenantReport& t, const DeviceTimes& times)
{
    const auto timed = times.find(t.id.key());
    json devices = json::array();
    for (std::size_t d = 0; d < t.used.size(); ++d) {
        json device{{"index", d}, {"device_time_ns", 0}, {"device_held_ns", 0}, {"device_share", 0.0}};
        if (timed != times.end())
            for (const TenantDeviceTime& time : timed->second)
                if (time.device == d) {
                    device["device_time_ns"] = time.charged_ns;
                    device["device_held_ns"] = time.held_ns;
                    device["device_share"] = time.share;
                }
        for (std::size_t k = 0; k < resource_count; ++k)
            device[std::string(resource_keys[k])] = {
                {"used", t.used[d][k]},
                {"total", total_json(t.totals.per_device, static_cast<Resource>(k))}};
        devices.push_back(std::move(device));
    }
    return {{"tenant", t.id.key()},
            {"kind", kind_text(t.id.kind)},
            {"name", t.id.name},
            {"sessions",
             {{"open", t.sessions},
              {"total", t.totals.sessions == UINT64_MAX ? json(nullptr) : json(t.totals.sessions)}}},
            {"devices", std::move(devices)}};
}

// The caps each context gets on a device (the device's own narrowed by the
// rule's [rule.context]); a cap with no bound is null.
json context_caps(const vaccel_device_limits& l)
{
    auto cap = [](std::uint64_t value, std::uint64_t unbounded) {
        return value == unbounded ? json(nullptr) : json(value);
    };
    return {{"memory_bytes", cap(l.max_memory_bytes, UINT64_MAX)},
            {"buffer_bytes", cap(l.max_buffer_bytes, UINT64_MAX)},
            {"buffers", cap(l.max_buffers, UINT32_MAX)},
            {"programs", cap(l.max_programs, UINT32_MAX)},
            {"queues", cap(l.max_queues, UINT32_MAX)},
            {"events", cap(l.max_events, UINT32_MAX)},
            {"gates", cap(l.max_gates, UINT32_MAX)},
            {"bindings", cap(l.max_bindings, UINT32_MAX)}};
}

}  // namespace

std::string tenants_document(const engine::Tenants& tenants, const DeviceTimes& times)
{
    json list = json::array();
    for (const engine::TenantReport& t : tenants.report())
        list.push_back(tenant_entry(t, times));
    return json{{"tenants", std::move(list)}}.dump();
}

std::string mine_document(const engine::SessionIdentity& caller, const Policy& policy,
                          const engine::LimitPolicy& limits, const engine::Tenants* tenants,
                          engine::DeviceManager& devices, const DeviceTimes& times)
{
    const Client client = client_of(caller);
    const Schedule schedule = policy.schedule(client);
    const engine::TenantId id = limits.tenant(caller);
    // The caller's own session is open, so its tenant is in the report;
    // without a registry (tests) it is made from the policy with no use.
    engine::TenantReport own{id, limits.totals(caller), 0, {}};
    if (tenants != nullptr)
        for (engine::TenantReport& t : tenants->report())
            if (t.id == id) own = std::move(t);
    own.used.resize(devices.count());
    json entry = tenant_entry(own, times);

    // Only the devices the caller may use: a container given some sees those.
    json mine = json::array();
    for (json& device : entry["devices"]) {
        const auto index = device["index"].get<std::uint32_t>();
        if (caller.devices && std::ranges::find(*caller.devices, index) == caller.devices->end())
            continue;
        const vaccel_device_info& info = devices.device(index)->info();
        device["name"] = std::string(info.name, strnlen(info.name, VACCEL_NAME_LEN));
        device["context"] = context_caps(intersect(info.limits, limits.limits(caller, index, info)));
        mine.push_back(std::move(device));
    }
    entry["devices"] = std::move(mine);
    entry["caller"] = {{"pid", caller.pid},
                       {"uid", caller.uid},
                       {"gid", caller.gid},
                       {"cgroup", caller.cgroup},
                       {"container", caller.container}};
    entry["rule"] = rule_label(policy.match(client));
    entry["weight"] = schedule.weight;
    entry["priority"] = priority_name(schedule.priority);
    entry["device_share"] = share_text(schedule.share_permille);
    return entry.dump();
}

}  // namespace vaccel::daemon
