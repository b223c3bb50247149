// instance.hpp - the Vulkan instance and what the probe reads of each device.
//
// Owns: the VkInstance, shared by every device opened from it and kept for
// the life of the process (instance.cpp says why: drivers that cannot be
// loaded twice). Decides: the instance asks for Vulkan 1.3 and
// portability enumeration; a loader without any driver (vkCreateInstance
// failing, zero devices) means "no Vulkan here", never an error.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device_rules.hpp"
#include "drm_node.hpp"
#include "matmul_tiles.hpp"
#include "vaccel/backend/vulkan.hpp"

namespace vaccel::backend::vulkan {

struct Instance {
    VkInstance handle = VK_NULL_HANDLE;
    Instance() = default;
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;
    ~Instance();
};

// Everything read about one served physical device before it is opened.
struct PhysicalRecord {
    VkPhysicalDevice handle = VK_NULL_HANDLE;
    std::size_t probe_line = 0;  // its line in Probe::lines
    DeviceFacts facts;
    std::uint32_t vendor_id = 0;
    std::uint32_t device_id = 0;
    std::uint32_t driver_version = 0;
    std::array<std::uint8_t, 16> uuid{};
    std::string driver_name;  // VkPhysicalDeviceDriverProperties
    std::string driver_info;
    std::uint32_t queue_family = 0;
    std::uint32_t timestamp_bits = 0;  // the queue family's timestampValidBits
    VkPhysicalDeviceMemoryProperties memory{};
    VkPhysicalDeviceLimits limits{};
    std::uint32_t subgroup_size = 0;
    // What subgroup operations the device has, and in which stages (MATMUL
    // kernels, matmul_tiles.hpp).
    VkSubgroupFeatureFlags subgroup_operations = 0;
    VkShaderStageFlags subgroup_stages = 0;
    // VK_NV_cooperative_matrix with its feature, shaderFloat16,
    // storageBuffer16BitAccess and vulkanMemoryModel all offered: its
    // entries (empty otherwise). open_device enables them only when set.
    bool coop_matrix_nv = false;
    std::vector<CoopMatrixEntry> coop_entries;
    std::optional<PciLocation> pci;          // VK_EXT_pci_bus_info
    std::optional<std::string> render_node;  // via libdrm, or VK_EXT_physical_device_drm
    // minImportedHostPointerAlignment when VK_EXT_external_memory_host is offered.
    std::optional<std::uint64_t> host_import_alignment;
    // 8- and 16-bit storage buffer access (storageBuffer8BitAccess,
    // storageBuffer16BitAccess): the narrow kernels need both
    // (vaccel/gpu/lowering_storage.hpp); enabled when offered.
    bool storage_8bit = false;
    bool storage_16bit = false;
};

struct Probe {
    std::shared_ptr<Instance> instance;  // null when there is no Vulkan
    std::vector<PhysicalRecord> served;  // serving order (device_rules.hpp)
    std::vector<VulkanProbeLine> lines;  // every device, loader order
    std::string unavailable;
};

Probe probe_devices();

bool has_extension(VkPhysicalDevice device, const char* name);

}  // namespace vaccel::backend::vulkan
