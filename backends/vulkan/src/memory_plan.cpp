// memory_plan.cpp - the per-domain memory type choice (see memory_plan.hpp).
#include "memory_plan.hpp"

#include "vaccel.h"

namespace vaccel::backend::vulkan {

namespace {

bool has(VkMemoryPropertyFlags flags, VkMemoryPropertyFlags wanted)
{
    return (flags & wanted) == wanted;
}

// The usable type with all of `required` and the highest score; the first
// such type wins a tie.
template <class Score>
std::optional<std::uint32_t> pick(std::span<const MemoryType> types, std::uint32_t mask,
                                  VkMemoryPropertyFlags required, Score score)
{
    std::optional<std::uint32_t> best;
    int best_score = -1;
    for (std::uint32_t i = 0; i < types.size() && i < 32; ++i) {
        const VkMemoryPropertyFlags flags = types[i].flags;
        if ((mask & (1u << i)) == 0 || (flags & excluded_memory_flags) != 0 ||
            !has(flags, required))
            continue;
        const int s = score(flags);
        if (s > best_score) {
            best = i;
            best_score = s;
        }
    }
    return best;
}

}  // namespace

std::optional<MemoryPlan> select_memory_plan(std::span<const MemoryType> types,
                                             std::uint32_t buffer_type_mask, bool unified)
{
    const auto host = pick(types, buffer_type_mask, host_coherent_flags, [](auto f) {
        return (has(f, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? 0 : 2) +
               (has(f, VK_MEMORY_PROPERTY_HOST_CACHED_BIT) ? 1 : 0);
    });
    if (!host)
        return std::nullopt;
    MemoryPlan plan;
    plan.host = *host;
    if (unified)
        plan.device = pick(types, buffer_type_mask, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                           [](auto f) {
                               return (has(f, host_coherent_flags) ? 2 : 0) +
                                      (has(f, VK_MEMORY_PROPERTY_HOST_CACHED_BIT) ? 1 : 0);
                           });
    else
        plan.device = pick(types, buffer_type_mask, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                           [](auto f) { return has(f, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) ? 0 : 1; });
    plan.shared = pick(types, buffer_type_mask,
                       VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host_coherent_flags,
                       [](auto f) { return has(f, VK_MEMORY_PROPERTY_HOST_CACHED_BIT) ? 1 : 0; });
    return plan;
}

std::optional<std::uint32_t> type_for_domain(const MemoryPlan& plan, std::uint32_t domain)
{
    switch (domain) {
    case VACCEL_DOMAIN_HOST:
        return plan.host;
    case VACCEL_DOMAIN_DEVICE:
        return plan.device;
    case VACCEL_DOMAIN_SHARED:
        return plan.shared;
    default:
        return std::nullopt;
    }
}

std::uint32_t memory_caps(const MemoryPlan& plan)
{
    std::uint32_t caps = VACCEL_MEM_HOST_VISIBLE;
    if (plan.device)
        caps |= VACCEL_MEM_DEVICE_LOCAL;
    if (plan.shared)
        caps |= VACCEL_MEM_SHARED;
    return caps;
}

}  // namespace vaccel::backend::vulkan
