// limits.hpp - limit accounting with check-then-commit.
//
// Owns: the use counters of one accounting scope (a context, a session, a
// tenant on one device, a device) against that scope's limits. Decides: when
// a request is refused (use + amount > limit, computed without overflow),
// the refusal (ResourceLimit, D_LIMIT, limit kind, arg0 = limit, arg1 = use,
// plus the scope's label), and the protocol that keeps a failed call from
// changing any counter:
//
//     auto charge = accounting.reserve(Resource::buffers, 1);  // check + hold
//     if (!charge) return fail(charge.error());
//     ... backend call; on failure return: the Charge rolls back ...
//     charge->commit();                                        // keep it
//
// A reservation counts as use from reserve() on, so two concurrent callers
// can never both pass a check that only one of them fits.
//
// Scopes nest (ADR 0024): an Accounting may have a parent (a context's
// parent is its tenant's totals on that device). reserve() holds the amount
// here, then in the parent; a parent's refusal gives back what was held here
// and is the refusal returned. release() and a Charge's rollback give back
// at every level. So a tenant's total holds across all its contexts and
// sessions, exactly, whichever level refuses first.
//
// Thread-safety: Accounting is guarded by one std::mutex (named `mutex_`,
// protecting `limits_` and `used_`); every member may be called from any
// thread. A level's mutex is never held while its parent's is taken, so
// nesting adds no lock order. Charge is a plain value owned by one thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string_view>

#include "vaccel.h"
#include "vaccel/common/error.hpp"

namespace vaccel {

// What is counted. Each maps to one enum vaccel_limit_kind and one field of
// struct vaccel_device_limits.
enum class Resource : std::uint8_t { contexts, memory_bytes, buffers, programs, queues, events, gates };
inline constexpr std::size_t resource_count = 7;

// VACCEL_LIMIT_CONTEXTS, VACCEL_LIMIT_MEMORY_BYTES, ...
std::uint32_t limit_kind(Resource resource);
// The field of `limits` that bounds `resource`.
std::uint64_t limit_of(const vaccel_device_limits& limits, Resource resource);

class Accounting;

// One reservation. Move-only. commit() makes it permanent (the amount stays
// counted until the caller release()s it); destruction without commit()
// gives the amount back.
// Ownership: a Charge points at its Accounting and must not outlive it.
class Charge {
public:
    Charge() = default;
    Charge(Charge&& other) noexcept;
    Charge& operator=(Charge&& other) noexcept;
    Charge(const Charge&) = delete;
    Charge& operator=(const Charge&) = delete;
    ~Charge();

    // Keeps the reservation; the Charge becomes empty.
    void commit();
    // Gives the reservation back now; the Charge becomes empty.
    void rollback();

    // True while it holds an uncommitted reservation.
    bool pending() const { return accounting_ != nullptr; }
    Resource resource() const { return resource_; }
    std::uint64_t amount() const { return amount_; }

private:
    friend class Accounting;
    Charge(Accounting* accounting, Resource resource, std::uint64_t amount)
        : accounting_(accounting), resource_(resource), amount_(amount)
    {
    }

    Accounting* accounting_ = nullptr;
    Resource resource_ = Resource::contexts;
    std::uint64_t amount_ = 0;
};

// Fills in who a refusal of one level is about (Error::scope, the note):
// called with the refusal, outside every Accounting lock.
using RefusalLabel = std::function<void(Error&)>;

class Accounting {
public:
    // Ownership: `parent` (may be null) must outlive this Accounting.
    explicit Accounting(const vaccel_device_limits& limits, Accounting* parent = nullptr,
                        RefusalLabel label = {});
    Accounting(const Accounting&) = delete;
    Accounting& operator=(const Accounting&) = delete;

    // Holds `amount` of `r` if use + amount <= limit here and in every
    // parent; else ResourceLimit (D_LIMIT, limit_kind(r), arg0 = the
    // limit, arg1 = the use of the level that refused, labelled by it) and
    // nothing changes at any level. amount 0 always succeeds.
    Result<Charge> reserve(Resource r, std::uint64_t amount);
    // Gives back committed use, here and in every parent. Releasing more
    // than is used clamps at 0.
    void release(Resource r, std::uint64_t amount);
    Accounting* parent() const { return parent_; }

    std::uint64_t used(Resource r) const;
    std::uint64_t limit(Resource r) const;
    // How much more of `r` a reserve() could take now: the least room of
    // this level and every parent.
    std::uint64_t room(Resource r) const;
    // The limits in force (also the fields accounting does not count:
    // max_bindings, max_buffer_bytes, max_artifact_bytes).
    vaccel_device_limits limits() const;
    // New limits apply to later reservations; use above a lowered limit
    // stays until released.
    void set_limits(const vaccel_device_limits& limits);

private:
    // This level alone; the refusal is unlabelled.
    Status hold(Resource r, std::uint64_t amount);
    void give_back(Resource r, std::uint64_t amount);

    mutable std::mutex mutex_;  // guards limits_ and used_
    vaccel_device_limits limits_;
    std::array<std::uint64_t, resource_count> used_{};
    Accounting* const parent_;
    const RefusalLabel label_;
};

// The sessions a tenant may have open when no rule says (ADR 0024). Above
// the vaccel module's per-user default cap (64), which binds first on
// /dev/vaccel and is given back at once when a file closes, while a
// tenant's seat is given back once the daemon has torn the session down.
inline constexpr std::uint32_t default_tenant_sessions = 256;

// A limit with no bound: the largest value of the field's type.
vaccel_device_limits unlimited_limits();

// Field-wise minimum. Every field is a real limit: 0 means "none allowed",
// never "unlimited".
vaccel_device_limits intersect(const vaccel_device_limits& a, const vaccel_device_limits& b);

}  // namespace vaccel
