// tenants.cpp - tenants, their seats and the default policy's tenant.
#include "vaccel/engine/tenants.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace vaccel::engine {

// ---- TenantId and the default policy ---------------------------------------

namespace {

std::string_view kind_name(TenantKind kind)
{
    switch (kind) {
    case TenantKind::uid: return "uid";
    case TenantKind::gid: return "gid";
    case TenantKind::cgroup: return "cgroup";
    case TenantKind::container: return "container";
    }
    return "tenant";
}

}  // namespace

std::string TenantId::key() const { return fmt::format("{}:{}", kind_name(kind), name); }

std::string TenantId::describe() const
{
    // A container id is 64 hex digits; people know its first 12 (podman ps).
    if (kind == TenantKind::container)
        return fmt::format("container {}", name.substr(0, 12));
    return fmt::format("{} {}", kind_name(kind), name);
}

TenantId LimitPolicy::tenant(const SessionIdentity& who) const
{
    return TenantId{TenantKind::uid, std::to_string(who.uid)};
}

TenantTotals LimitPolicy::totals(const SessionIdentity&) const
{
    return TenantTotals{unlimited_limits(), default_tenant_sessions};
}

// ---- Tenant ------------------------------------------------------------------

Tenant::Tenant(TenantId id, std::uint32_t device_count, const TenantTotals& totals,
               SessionIdentity representative)
    : id_(std::move(id)), representative_(std::move(representative)),
      session_limit_(totals.sessions)
{
    devices_.reserve(device_count);
    for (std::uint32_t i = 0; i < device_count; ++i)
        // Ownership: the label names this Tenant, which owns the Accounting.
        devices_.push_back(std::make_unique<Accounting>(
            totals.per_device, nullptr, [this, i](Error& refusal) { label(refusal, i); }));
}

std::uint64_t Tenant::sessions() const
{
    std::lock_guard lock(mutex_);
    return sessions_;
}

TenantTotals Tenant::totals() const
{
    TenantTotals out;
    out.per_device = devices_.empty() ? unlimited_limits() : devices_.front()->limits();
    std::lock_guard lock(mutex_);
    out.sessions = session_limit_;
    return out;
}

void Tenant::set_totals(const TenantTotals& totals)
{
    for (auto& device : devices_)
        device->set_limits(totals.per_device);
    std::lock_guard lock(mutex_);
    session_limit_ = totals.sessions;
}

void Tenant::label(Error& refusal, std::uint32_t device) const
{
    const std::uint64_t open = sessions();
    refusal.scope = VACCEL_SCOPE_MAKE(static_cast<std::uint32_t>(id_.kind), device,
                                      static_cast<std::uint32_t>(std::min<std::uint64_t>(open, 0xffff)));
    refusal.note = id_.describe();
}

// ---- TenantSeat ----------------------------------------------------------------

TenantSeat& TenantSeat::operator=(TenantSeat&& other) noexcept
{
    if (this != &other) {
        leave();
        tenant_ = std::move(other.tenant_);
    }
    return *this;
}

TenantSeat::~TenantSeat() { leave(); }

void TenantSeat::leave()
{
    if (!tenant_)
        return;
    {
        std::lock_guard lock(tenant_->mutex_);
        if (tenant_->sessions_ > 0)
            --tenant_->sessions_;
    }
    tenant_.reset();
}

// ---- Tenants -------------------------------------------------------------------

Result<TenantSeat> Tenants::admit(const SessionIdentity& who, const LimitPolicy& policy)
{
    TenantId id = policy.tenant(who);
    const std::string key = id.key();

    std::lock_guard lock(mutex_);
    std::erase_if(tenants_, [](const auto& entry) { return entry.second.expired(); });
    std::shared_ptr<Tenant> tenant;
    for (const auto& [k, weak] : tenants_)
        if (k == key) {
            tenant = weak.lock();
            break;
        }
    // A tenant's totals always come from its representative (the session
    // that made it), whichever session asks: sessions of one tenant may
    // differ in what else a rule could match (another gid, say).
    if (!tenant) {
        tenant = std::make_shared<Tenant>(std::move(id), device_count_, policy.totals(who), who);
        tenants_.emplace_back(key, tenant);
    } else {
        tenant->set_totals(policy.totals(tenant->representative()));
    }

    // Invariant: the check and the increment happen under Tenants::mutex_
    // and the tenant's own, so two sessions racing for the last seat get
    // one success.
    std::unique_lock seat_lock(tenant->mutex_);
    if (tenant->sessions_ >= tenant->session_limit_) {
        Error refusal = Error::limit_hit(VACCEL_LIMIT_SESSIONS, tenant->session_limit_,
                                         tenant->sessions_);
        seat_lock.unlock();
        tenant->label(refusal, 0);
        return fail(std::move(refusal));
    }
    ++tenant->sessions_;
    seat_lock.unlock();
    return TenantSeat(std::move(tenant));
}

void Tenants::refresh(const LimitPolicy& policy)
{
    std::vector<std::shared_ptr<Tenant>> live;
    {
        std::lock_guard lock(mutex_);
        for (const auto& entry : tenants_)
            if (auto tenant = entry.second.lock())
                live.push_back(std::move(tenant));
    }
    for (const auto& tenant : live)
        tenant->set_totals(policy.totals(tenant->representative()));
}

std::vector<TenantReport> Tenants::report() const
{
    std::vector<std::shared_ptr<Tenant>> live;
    {
        std::lock_guard lock(mutex_);
        for (const auto& entry : tenants_)
            if (auto tenant = entry.second.lock())
                live.push_back(std::move(tenant));
    }
    std::vector<TenantReport> out;
    out.reserve(live.size());
    for (const auto& tenant : live) {
        TenantReport r;
        r.id = tenant->id();
        r.totals = tenant->totals();
        r.sessions = tenant->sessions();
        for (std::uint32_t d = 0; d < tenant->device_count(); ++d) {
            std::array<std::uint64_t, resource_count> used{};
            for (std::size_t k = 0; k < resource_count; ++k)
                used[k] = tenant->on(d).used(static_cast<Resource>(k));
            r.used.push_back(used);
        }
        out.push_back(std::move(r));
    }
    std::ranges::sort(out, {}, [](const TenantReport& r) { return r.id.key(); });
    return out;
}

namespace {

// No totals and no session cap: a tenant of one session, alone.
class NoTotals final : public LimitPolicy {
public:
    TenantTotals totals(const SessionIdentity&) const override
    {
        return TenantTotals{unlimited_limits(), UINT64_MAX};
    }
};

}  // namespace

TenantSeat private_seat(const SessionIdentity& who, std::uint32_t device_count)
{
    // The registry goes at once; the seat keeps its tenant (tenants.hpp).
    Tenants alone(device_count);
    auto seat = alone.admit(who, NoTotals{});
    return seat ? std::move(*seat) : TenantSeat{};  // an uncapped admission cannot be refused
}

}  // namespace vaccel::engine
