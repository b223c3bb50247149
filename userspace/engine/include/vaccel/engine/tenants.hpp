// tenants.hpp - who accounting belongs to: tenants and their totals.
//
// Owns: every tenant with an open session (Tenants), each tenant's use on
// each device and its open sessions (Tenant). Decides (ADR 0024):
//  - a tenant is what the policy says a session belongs to (LimitPolicy::
//    tenant(): a user, a primary group, a cgroup subtree or a registered
//    container); sessions with the same TenantId share one Tenant, whatever
//    their transport;
//  - a tenant's limits are totals: its contexts, memory, buffers, programs,
//    queues, events and gates on each device across all its sessions (the
//    parent level of every context's Accounting, limits.hpp), and the
//    sessions it may have open at once;
//  - a session is admitted (Tenants::admit) before it exists, against the
//    tenant's session total, exactly even when two sessions of one tenant
//    race for the last seat; its TenantSeat gives the seat back when the
//    session is gone, after everything it held was released;
//  - totals are re-read from the policy in force when a session of the
//    tenant opens, when one creates a context, and at refresh() (the
//    daemon's LIMITS_SET and reload): lowered totals bind the next
//    reservation, use above them stays until released.
//
// Ownership: Tenants holds tenants weakly; each session's TenantSeat holds
// its Tenant, so a tenant lives exactly as long as one of its sessions does
// (a session being torn down included). A Tenant never points back at
// Tenants, so seats may outlive the registry.
// Thread-safety: every member may be called from any thread. Lock order:
// Tenants::mutex_ -> Tenant::mutex_ -> an Accounting's (each a leaf there).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vaccel.h"
#include "vaccel/common/error.hpp"
#include "vaccel/common/limits.hpp"
#include "vaccel/engine/limit_policy.hpp"

namespace vaccel::engine {

class Tenant {
public:
    Tenant(TenantId id, std::uint32_t device_count, const TenantTotals& totals,
           SessionIdentity representative);
    Tenant(const Tenant&) = delete;
    Tenant& operator=(const Tenant&) = delete;

    const TenantId& id() const { return id_; }
    // Its totals and use on `device` (< the device count): the parent of
    // the tenant's context accountings there.
    Accounting& on(std::uint32_t device) { return *devices_[device]; }
    const Accounting& on(std::uint32_t device) const { return *devices_[device]; }
    std::uint32_t device_count() const { return static_cast<std::uint32_t>(devices_.size()); }

    std::uint64_t sessions() const;
    TenantTotals totals() const;
    // New totals bind later reservations and admissions.
    void set_totals(const TenantTotals& totals);
    // The identity of the session that made the tenant: what the policy is
    // asked again at refresh().
    const SessionIdentity& representative() const { return representative_; }

    // The refusal label of this tenant on `device` (limits.hpp): the scope
    // (kind, device, sessions open now) and the tenant's name as the note.
    void label(Error& refusal, std::uint32_t device) const;

private:
    friend class Tenants;
    friend class TenantSeat;

    const TenantId id_;
    const SessionIdentity representative_;
    std::vector<std::unique_ptr<Accounting>> devices_;
    mutable std::mutex mutex_;  // guards sessions_ and session_limit_
    std::uint64_t sessions_ = 0;
    std::uint64_t session_limit_ = 0;
};

// One admitted session's place in its tenant. Move-only; destruction gives
// the seat back.
class TenantSeat {
public:
    TenantSeat() = default;
    explicit TenantSeat(std::shared_ptr<Tenant> tenant) : tenant_(std::move(tenant)) {}
    TenantSeat(TenantSeat&&) noexcept = default;
    TenantSeat& operator=(TenantSeat&& other) noexcept;
    TenantSeat(const TenantSeat&) = delete;
    TenantSeat& operator=(const TenantSeat&) = delete;
    ~TenantSeat();

    Tenant* get() const { return tenant_.get(); }
    Tenant* operator->() const { return tenant_.get(); }
    explicit operator bool() const { return tenant_ != nullptr; }

private:
    void leave();
    std::shared_ptr<Tenant> tenant_;
};

// One tenant's use, for the admin channel and metrics.
struct TenantReport {
    TenantId id;
    TenantTotals totals;
    std::uint64_t sessions = 0;
    // Per device: what is used now (contexts, memory, ... in Resource order).
    std::vector<std::array<std::uint64_t, resource_count>> used;
};

class Tenants {
public:
    explicit Tenants(std::uint32_t device_count) : device_count_(device_count) {}

    // A seat for a new session of `who` in the tenant `policy` names, with
    // the totals it gives now; ResourceLimit (D_LIMIT, VACCEL_LIMIT_SESSIONS,
    // arg0 = the total, arg1 = open now, the tenant's scope and name) when
    // the tenant has all its sessions open; nothing changes then.
    Result<TenantSeat> admit(const SessionIdentity& who, const LimitPolicy& policy);

    // Re-reads every tenant's totals from `policy`.
    void refresh(const LimitPolicy& policy);

    // Every tenant with an open session, ordered by key.
    std::vector<TenantReport> report() const;

    std::uint32_t device_count() const { return device_count_; }

private:
    const std::uint32_t device_count_;
    mutable std::mutex mutex_;  // guards tenants_
    // key -> tenant; expired entries are swept by admit() and report().
    std::vector<std::pair<std::string, std::weak_ptr<Tenant>>> tenants_;
};

// A seat in a tenant of its own, with no totals: for a session made without
// a registry (the embedded transport, tests).
TenantSeat private_seat(const SessionIdentity& who, std::uint32_t device_count);

}  // namespace vaccel::engine
