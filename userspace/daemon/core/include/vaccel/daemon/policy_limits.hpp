// policy_limits.hpp - the operator's policy (vaccel_policy) as the engine's
// LimitPolicy.
//
// Owns: the policy in force (PolicyStore), shared by every session. Decides:
//  - a session's limits and weight are looked up when each context is
//    created, in the policy in force at that moment, so a LIMITS_SET or a
//    SIGHUP reload applies to every context created afterwards (existing
//    contexts keep the limits they were created with);
//  - the client a rule matches is the session's uid, primary gid and cgroup.
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

    vaccel_device_limits limits(const engine::SessionIdentity& who, std::uint32_t device_index,
                                const vaccel_device_info& device) const override;
    std::uint32_t weight(const engine::SessionIdentity& who,
                         std::uint32_t device_index) const override;

private:
    std::shared_ptr<const PolicyStore> store_;
};

Client client_of(const engine::SessionIdentity& who);

// The rule's selector as the admin documents write it: "uid:1000",
// "gid:100", "cgroup:/a/b", "default"; "none" when no rule matches.
std::string rule_label(const Rule* rule);

}  // namespace vaccel::daemon
