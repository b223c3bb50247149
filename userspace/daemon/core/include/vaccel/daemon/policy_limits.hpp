// policy_limits.hpp - the operator's policy (vaccel_policy) as the engine's
// LimitPolicy.
//
// Owns: the policy in force (PolicyStore), shared by every session. Decides:
//  - which tenant a session belongs to (policy.hpp: the matching rule's
//    selector; under the default rule or none, its container, else its
//    uid), fixed when the session opens;
//  - a tenant's totals are read from the policy in force when a session of
//    it opens or creates a context, and at Tenants::refresh() after a
//    LIMITS_SET or a reload (engine/tenants.hpp);
//  - a context's own caps ([rule.context]) and weight are looked up when it
//    is created, so existing contexts keep the caps they were created with;
//  - the client a rule matches is the session's uid, primary gid, cgroup
//    and container.
//
// Thread-safety: PolicyStore::replace() and current() from any thread (a
// leaf mutex held only to swap or copy a shared_ptr); PolicyLimits is
// immutable.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "vaccel/daemon/policy.hpp"
#include "vaccel/engine/limit_policy.hpp"

namespace vaccel::daemon {

class PolicyStore {
public:
    explicit PolicyStore(Policy policy);
    void replace(Policy policy);
    std::shared_ptr<const Policy> current() const;

private:
    mutable std::mutex mutex_;  // guards policy_; a leaf lock
    std::shared_ptr<const Policy> policy_;
};

class PolicyLimits : public engine::LimitPolicy {
public:
    explicit PolicyLimits(std::shared_ptr<const PolicyStore> store) : store_(std::move(store)) {}

    engine::TenantId tenant(const engine::SessionIdentity& who) const override;
    engine::TenantTotals totals(const engine::SessionIdentity& who) const override;
    vaccel_device_limits limits(const engine::SessionIdentity& who, std::uint32_t device_index,
                                const vaccel_device_info& device) const override;
    engine::ContextScheduling scheduling(const engine::SessionIdentity& who,
                                         std::uint32_t device_index) const override;

private:
    std::shared_ptr<const PolicyStore> store_;
};

Client client_of(const engine::SessionIdentity& who);

// The rule's selector as the admin documents write it: "uid:1000",
// "gid:100", "cgroup:/a/b", "default"; "none" when no rule matches.
std::string rule_label(const Rule* rule);

}  // namespace vaccel::daemon
