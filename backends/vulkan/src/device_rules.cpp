// device_rules.cpp - the device floor, queue choice and ranking (see device_rules.hpp).
#include "device_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace vaccel::backend::vulkan {

std::optional<std::uint32_t> choose_queue_family(std::span<const VkQueueFlags> families)
{
    std::optional<std::uint32_t> any_compute;
    for (std::uint32_t i = 0; i < families.size(); ++i) {
        if ((families[i] & VK_QUEUE_COMPUTE_BIT) == 0)
            continue;
        if ((families[i] & VK_QUEUE_GRAPHICS_BIT) == 0)
            return i;
        if (!any_compute)
            any_compute = i;
    }
    return any_compute;
}

std::string refusal(const DeviceFacts& facts)
{
    std::vector<std::string> missing;
    if (facts.api_version < VK_API_VERSION_1_3)
        missing.push_back(fmt::format("Vulkan 1.3 (the driver offers {}.{}.{})",
                                      VK_API_VERSION_MAJOR(facts.api_version),
                                      VK_API_VERSION_MINOR(facts.api_version),
                                      VK_API_VERSION_PATCH(facts.api_version)));
    if (!facts.synchronization2)
        missing.push_back("the synchronization2 feature");
    if (!facts.timeline_semaphore)
        missing.push_back("the timelineSemaphore feature");
    if (!choose_queue_family(facts.queue_families))
        missing.push_back("a compute-capable queue family");
    if (missing.empty())
        return {};
    std::string list;
    for (std::size_t i = 0; i < missing.size(); ++i)
        list += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
    return fmt::format("\"{}\" is not served: it lacks {}, which the Vulkan backend requires; "
                       "update its driver or select another device",
                       facts.name, list);
}

int type_rank(VkPhysicalDeviceType type)
{
    switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return 3;
    default:
        return 4;
    }
}

std::vector<std::size_t> serving_order(std::span<const VkPhysicalDeviceType> types)
{
    std::vector<std::size_t> order(types.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::ranges::stable_sort(order, {}, [&](std::size_t i) { return type_rank(types[i]); });
    return order;
}

const char* type_word(VkPhysicalDeviceType type)
{
    switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return "CPU";
    default:
        return "other";
    }
}

}  // namespace vaccel::backend::vulkan
