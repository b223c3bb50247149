// memory_plan.hpp - which Vulkan memory type serves each vaccel memory domain.
//
// Pure: decided from the device's memory type list and the memoryTypeBits a
// buffer of this backend reports, so it is tested on fixtures without a
// device. Decides (docs/adr/0013-vulkan-backend.md, after the reference design):
//  - Host: HOST_VISIBLE | HOST_COHERENT, preferring memory that is not
//    device-local, then host-cached;
//  - Device: DEVICE_LOCAL, preferring a type the host cannot see; on a
//    unified (single-heap) device, preferring host-visible coherent, then
//    cached, so its transfers are a mapped copy;
//  - Shared: DEVICE_LOCAL | HOST_VISIBLE | HOST_COHERENT, cached preferred;
//  - never a type that needs a feature this backend does not enable
//    (PROTECTED, LAZILY_ALLOCATED, DEVICE_COHERENT_AMD, DEVICE_UNCACHED_AMD,
//    RDMA_CAPABLE_NV);
//  - ties go to the lowest index (Vulkan orders types by preference).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <optional>
#include <span>

namespace vaccel::backend::vulkan {

struct MemoryType {
    VkMemoryPropertyFlags flags = 0;
    std::uint32_t heap = 0;
};

struct MemoryPlan {
    std::uint32_t host = 0;  // always present: a plan without it is no plan
    std::optional<std::uint32_t> device;
    std::optional<std::uint32_t> shared;
};

// Property bits that require a feature or extension this backend never enables.
inline constexpr VkMemoryPropertyFlags excluded_memory_flags =
    VK_MEMORY_PROPERTY_PROTECTED_BIT | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT |
    VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD | VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD |
    VK_MEMORY_PROPERTY_RDMA_CAPABLE_BIT_NV;

inline constexpr VkMemoryPropertyFlags host_coherent_flags =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

// nullopt when no usable host-visible coherent type exists (the device cannot
// be served: nothing could be written by the host).
std::optional<MemoryPlan> select_memory_plan(std::span<const MemoryType> types,
                                             std::uint32_t buffer_type_mask, bool unified);

// The chosen type for a VACCEL_DOMAIN_*, or nullopt (domain not offered).
std::optional<std::uint32_t> type_for_domain(const MemoryPlan& plan, std::uint32_t domain);

// VACCEL_MEM_* bits the plan offers.
std::uint32_t memory_caps(const MemoryPlan& plan);

}  // namespace vaccel::backend::vulkan
