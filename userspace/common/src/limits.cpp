// limits.cpp - Accounting, Charge and the intersection of limits.
#include "vaccel/common/limits.hpp"

#include <algorithm>
#include <utility>

namespace vaccel {

std::uint32_t limit_kind(Resource resource)
{
    switch (resource) {
    case Resource::contexts: return VACCEL_LIMIT_CONTEXTS;
    case Resource::memory_bytes: return VACCEL_LIMIT_MEMORY_BYTES;
    case Resource::buffers: return VACCEL_LIMIT_BUFFERS;
    case Resource::programs: return VACCEL_LIMIT_PROGRAMS;
    case Resource::queues: return VACCEL_LIMIT_QUEUES;
    case Resource::events: return VACCEL_LIMIT_EVENTS;
    case Resource::gates: return VACCEL_LIMIT_GATES;
    }
    return VACCEL_LIMIT_NONE;
}

std::uint64_t limit_of(const vaccel_device_limits& limits, Resource resource)
{
    switch (resource) {
    case Resource::contexts: return limits.max_contexts;
    case Resource::memory_bytes: return limits.max_memory_bytes;
    case Resource::buffers: return limits.max_buffers;
    case Resource::programs: return limits.max_programs;
    case Resource::queues: return limits.max_queues;
    case Resource::events: return limits.max_events;
    case Resource::gates: return limits.max_gates;
    }
    return 0;
}

// ---- Charge ---------------------------------------------------------------

Charge::Charge(Charge&& other) noexcept
    : accounting_(std::exchange(other.accounting_, nullptr)), resource_(other.resource_),
      amount_(other.amount_)
{
}

Charge& Charge::operator=(Charge&& other) noexcept
{
    if (this != &other) {
        rollback();
        accounting_ = std::exchange(other.accounting_, nullptr);
        resource_ = other.resource_;
        amount_ = other.amount_;
    }
    return *this;
}

Charge::~Charge() { rollback(); }

void Charge::commit() { accounting_ = nullptr; }

void Charge::rollback()
{
    if (accounting_ != nullptr)
        std::exchange(accounting_, nullptr)->release(resource_, amount_);
}

// ---- Accounting -----------------------------------------------------------

Accounting::Accounting(const vaccel_device_limits& limits, Accounting* parent,
                       RefusalLabel label)
    : limits_(limits), parent_(parent), label_(std::move(label))
{
}

Status Accounting::hold(Resource r, std::uint64_t amount)
{
    const auto index = static_cast<std::size_t>(r);
    std::unique_lock lock(mutex_);
    const std::uint64_t limit = limit_of(limits_, r);
    const std::uint64_t used = used_[index];
    // Overflow-safe form of used + amount > limit (used may exceed a limit
    // that was lowered after it was charged).
    if (amount != 0 && (used > limit || amount > limit - used)) {
        lock.unlock();
        Error refusal = Error::limit_hit(limit_kind(r), limit, used);
        if (label_)
            label_(refusal);
        return fail(std::move(refusal));
    }
    used_[index] = used + amount;
    return {};
}

void Accounting::give_back(Resource r, std::uint64_t amount)
{
    const auto index = static_cast<std::size_t>(r);
    std::lock_guard lock(mutex_);
    used_[index] -= std::min(used_[index], amount);
}

Result<Charge> Accounting::reserve(Resource r, std::uint64_t amount)
{
    // Level by level, nearest first; a refusal gives back the levels
    // already held, so nothing changes anywhere.
    for (Accounting* level = this; level != nullptr; level = level->parent_) {
        if (auto held = level->hold(r, amount); !held) {
            for (Accounting* undo = this; undo != level; undo = undo->parent_)
                undo->give_back(r, amount);
            return fail(std::move(held.error()));
        }
    }
    return Charge(this, r, amount);
}

void Accounting::release(Resource r, std::uint64_t amount)
{
    for (Accounting* level = this; level != nullptr; level = level->parent_)
        level->give_back(r, amount);
}

std::uint64_t Accounting::used(Resource r) const
{
    std::lock_guard lock(mutex_);
    return used_[static_cast<std::size_t>(r)];
}

std::uint64_t Accounting::limit(Resource r) const
{
    std::lock_guard lock(mutex_);
    return limit_of(limits_, r);
}

std::uint64_t Accounting::room(Resource r) const
{
    std::uint64_t least = UINT64_MAX;
    for (const Accounting* level = this; level != nullptr; level = level->parent_) {
        std::lock_guard lock(level->mutex_);
        const std::uint64_t limit = limit_of(level->limits_, r);
        const std::uint64_t used = level->used_[static_cast<std::size_t>(r)];
        least = std::min(least, limit > used ? limit - used : 0);
    }
    return least;
}

vaccel_device_limits Accounting::limits() const
{
    std::lock_guard lock(mutex_);
    return limits_;
}

void Accounting::set_limits(const vaccel_device_limits& limits)
{
    std::lock_guard lock(mutex_);
    limits_ = limits;
}

vaccel_device_limits unlimited_limits()
{
    vaccel_device_limits out{};
    out.max_contexts = UINT32_MAX;
    out.max_buffers = UINT32_MAX;
    out.max_programs = UINT32_MAX;
    out.max_queues = UINT32_MAX;
    out.max_events = UINT32_MAX;
    out.max_gates = UINT32_MAX;
    out.max_bindings = UINT32_MAX;
    out.max_buffer_bytes = UINT64_MAX;
    out.max_artifact_bytes = UINT64_MAX;
    out.max_memory_bytes = UINT64_MAX;
    return out;
}

vaccel_device_limits intersect(const vaccel_device_limits& a, const vaccel_device_limits& b)
{
    vaccel_device_limits out{};
    out.max_contexts = std::min(a.max_contexts, b.max_contexts);
    out.max_buffers = std::min(a.max_buffers, b.max_buffers);
    out.max_programs = std::min(a.max_programs, b.max_programs);
    out.max_queues = std::min(a.max_queues, b.max_queues);
    out.max_events = std::min(a.max_events, b.max_events);
    out.max_gates = std::min(a.max_gates, b.max_gates);
    out.max_bindings = std::min(a.max_bindings, b.max_bindings);
    out.max_buffer_bytes = std::min(a.max_buffer_bytes, b.max_buffer_bytes);
    out.max_artifact_bytes = std::min(a.max_artifact_bytes, b.max_artifact_bytes);
    out.max_memory_bytes = std::min(a.max_memory_bytes, b.max_memory_bytes);
    return out;
}

}  // namespace vaccel
