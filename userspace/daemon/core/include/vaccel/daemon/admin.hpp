// admin.hpp - the admin channel (VACCEL_OP_ADMIN): devices, sessions,
// limits and metrics for root and the admin group; each caller's own
// limits and use for everyone.
//
// Owns: the config file the daemon runs with (ConfigFile) and the admin
// group's id. Decides:
//  - who may: AdminAuthority decides (admin_authority.hpp: root or the
//    admin group, in the host's namespaces and in no registered container);
//    everyone else gets PermissionDenied / VACCEL_D_NOT_ADMIN (arg0 = uid,
//    arg1 = gid) and nothing else happens; MINE alone is answered to every
//    caller (open_to_every_caller), since it shows only the caller's own;
//  - the documents (docs/protocol.md "Administration"): JSON for DEVICES,
//    SESSIONS, LIMITS_GET/SET/RESET, Prometheus text 0.0.4 for METRICS. A
//    request document that is not what its command expects is refused with
//    InvalidArgument / VACCEL_D_ADMIN_REQUEST (arg0 = byte offset of the
//    fault, 0 when the fault is not at one place); an unknown command with
//    InvalidArgument / VACCEL_D_BAD_VALUE (arg0 = offset of `command`);
//  - CONTAINER_ADD registers the container whose first process the
//    document names ("pid", in the daemon's pid namespace: the
//    createRuntime hook's OCI state) with the devices it was given,
//    CONTAINER_REMOVE forgets one, CONTAINERS lists them (containers.hpp
//    decides which processes may be registered); registrations are not
//    persisted: they end with the container or the daemon;
//  - LIMITS_SET/RESET are persisted atomically (ConfigFile) before the
//    reply is made, then published to every session (PolicyStore) and to
//    every tenant's totals (Tenants::refresh): the next reservation obeys
//    them; contexts created afterwards get the new per-context caps;
//  - TENANTS shows each tenant's use against its totals (ADR 0024); MINE
//    the caller's (its request document must be empty).
//
// Threads: every member runs on the daemon's chores thread, which may block
// (user database lookups, fsync, session and device locks); never on the
// reactor (ADR 0006).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vaccel/daemon/admin_authority.hpp"
#include "vaccel/daemon/config.hpp"
#include "vaccel/daemon/containers.hpp"
#include "vaccel/daemon/exchange.hpp"
#include "vaccel/daemon/policy_limits.hpp"
#include "vaccel/engine/device_manager.hpp"
#include "vaccel/engine/session.hpp"
#include "vaccel/engine/tenants.hpp"

namespace vaccel::daemon {

// A live session as the reactor hands it to the chores thread.
// Ownership: the shared_ptr keeps the Session alive while a document is
// made; if the connection ended meanwhile, the last reference may be this
// one, and the Session is then destroyed on the chores thread.
struct SessionEntry {
    std::uint64_t id = 0;
    std::shared_ptr<engine::Session> session;
    const char* transport = "socket";  // "socket" or "kernel" (a static string)
    std::uint64_t waits_parked = 0;    // EVENT_WAITs the daemon holds for it now
};

// A tenant's time on one device, as the device's scheduler charged it
// (docs/adr/0026-gpu-device-scheduler.md).
struct TenantDeviceTime {
    std::uint32_t device = 0;
    std::uint64_t charged_ns = 0;  // since the tenant's flow on it was made
    // Of charged_ns: the device kept idle for the tenant's next item (the
    // latency hold, ADR 0026); 0 on devices without one.
    std::uint64_t held_ns = 0;
    // Of the device's time within the last share window (0..1; the CPU's
    // time is its workers' together).
    double share = 0;
};
// Every tenant with a flow on some device, by tenant key; devices without a
// scheduler give none.
using DeviceTimes = std::map<std::string, std::vector<TenantDeviceTime>>;
DeviceTimes device_times(engine::DeviceManager& devices);

// Documents, as functions of what they show (testable without a daemon).
std::string devices_document(engine::DeviceManager& devices);
std::string sessions_document(const std::vector<SessionEntry>& sessions, const Policy& policy,
                              const DeviceTimes& times = {});
std::string limits_document(const Policy& policy);
std::string containers_document(const std::vector<ContainerView>& containers,
                                const std::vector<SessionEntry>& sessions);
// Every tenant with an open session, its use and totals per device.
std::string tenants_document(const engine::Tenants& tenants, const DeviceTimes& times = {});
// The caller's own: who it is taken for, its rule and schedule, and its
// tenant's use and totals on each device it may use, with each context's
// caps there (`limits` is the policy as the engine applies it).
std::string mine_document(const engine::SessionIdentity& caller, const Policy& policy,
                          const engine::LimitPolicy& limits, const engine::Tenants* tenants,
                          engine::DeviceManager& devices, const DeviceTimes& times = {});
// Whether an admin command is answered without the admin authority (MINE):
// the one place this is decided; the dispatcher and AdminService ask it.
bool open_to_every_caller(std::uint32_t command);
std::string metrics_text(engine::DeviceManager& devices, const std::vector<SessionEntry>& sessions,
                         std::uint64_t uptime_seconds, const engine::Tenants* tenants = nullptr);
// A Prometheus label value with \, " and newline escaped.
std::string prometheus_label_value(std::string_view text);

// What a reload changed, for the log.
struct ReloadOutcome {
    bool applied = false;
    std::string message;  // the config error, or what changed
};

class AdminService {
public:
    AdminService(std::shared_ptr<engine::DeviceManager> devices,
                 std::shared_ptr<PolicyStore> policy, ConfigFile config,
                 std::optional<std::string> admin_group_from_cli, std::uint64_t started_ns,
                 std::shared_ptr<ContainerRegistry> containers = nullptr,
                 std::shared_ptr<engine::Tenants> tenants = nullptr);

    // Answers one ADMIN request from `caller`.
    Reply handle(const engine::SessionIdentity& caller, Request& request,
                 const std::vector<SessionEntry>& sessions);

    // Re-reads the config file (SIGHUP): rules and admin group apply at
    // once; a changed device list or socket needs a restart (said in the
    // message). A file that does not parse changes nothing.
    ReloadOutcome reload();

    const Config& config() const { return config_.config(); }
    // Who may administer; the dispatcher refuses with it before any copy.
    AdminAuthority& authority() { return *authority_; }

private:
    Result<std::string> limits_set(std::string_view document);
    Result<std::string> limits_reset(std::string_view document);
    Result<std::string> container_add(const engine::SessionIdentity& caller,
                                      std::string_view document);
    Result<std::string> container_remove(std::string_view document);
    // Puts the config file's policy in force: sessions and tenants.
    void publish_policy();

    std::shared_ptr<engine::DeviceManager> devices_;
    std::shared_ptr<PolicyStore> policy_;
    ConfigFile config_;
    std::optional<std::string> admin_group_from_cli_;  // --admin-group wins over the file
    std::unique_ptr<AdminAuthority> authority_;  // holds the admin group's id
    std::uint64_t started_ns_;
    std::shared_ptr<ContainerRegistry> containers_;  // null: containers are not served
    std::shared_ptr<engine::Tenants> tenants_;       // null: no tenants to show or refresh
};

}  // namespace vaccel::daemon
