// tenants_document.cpp - the TENANTS document: each tenant's use against
// its totals (docs/protocol.md "Administration", ADR 0024).
//
// Decides the document's shape: one entry per tenant with an open session,
// ordered by key, with its open sessions and, per device, each resource's
// use and total (a total with no bound is null) and the device time its
// scheduler charged the tenant (0 on a device without one).
#include <nlohmann/json.hpp>

#include "vaccel/daemon/admin.hpp"

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

}  // namespace

std::string tenants_document(const engine::Tenants& tenants, const DeviceTimes& times)
{
    json list = json::array();
    for (const engine::TenantReport& t : tenants.report()) {
        const auto timed = times.find(t.id.key());
        json devices = json::array();
        for (std::size_t d = 0; d < t.used.size(); ++d) {
            json device{{"index", d},
                        {"device_time_ns", 0},
                        {"device_held_ns", 0},
                        {"device_share", 0.0}};
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
        list.push_back({{"tenant", t.id.key()},
                        {"kind", kind_text(t.id.kind)},
                        {"name", t.id.name},
                        {"sessions",
                         {{"open", t.sessions},
                          {"total", t.totals.sessions == UINT64_MAX ? json(nullptr)
                                                                    : json(t.totals.sessions)}}},
                        {"devices", std::move(devices)}});
    }
    return json{{"tenants", std::move(list)}}.dump();
}

}  // namespace vaccel::daemon
