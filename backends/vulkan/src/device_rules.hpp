// device_rules.hpp - which physical devices the backend serves, in what order,
// and on which queue family.
//
// Pure: decided from facts the probe read (instance.cpp), so fixtures test
// it without a device. Decides (docs/adr/0013-vulkan-backend.md):
//  - the floor: Vulkan 1.3, the synchronization2 and timelineSemaphore
//    features, a compute-capable queue family; a device lacking one is
//    refused with a reason naming what is missing and what to do;
//  - the queue: a compute family without graphics when there is one (work
//    stays off the graphics queue), else the first compute-capable family;
//  - the order: discrete, integrated, virtual, CPU, other; equal ranks keep
//    the loader's order.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace vaccel::backend::vulkan {

struct DeviceFacts {
    std::string name;
    std::uint32_t api_version = 0;
    VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
    bool synchronization2 = false;
    bool timeline_semaphore = false;
    std::vector<VkQueueFlags> queue_families;
};

std::optional<std::uint32_t> choose_queue_family(std::span<const VkQueueFlags> families);

// Empty when the device meets the floor, else why it is refused.
std::string refusal(const DeviceFacts& facts);

// 0 = most preferred.
int type_rank(VkPhysicalDeviceType type);

// Indices into `types` in serving order (stable by rank).
std::vector<std::size_t> serving_order(std::span<const VkPhysicalDeviceType> types);

const char* type_word(VkPhysicalDeviceType type);

}  // namespace vaccel::backend::vulkan
