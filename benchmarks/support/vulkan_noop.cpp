// vulkan_noop.cpp - see vulkan_noop.hpp.
#include "support/vulkan_noop.hpp"

#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstdio>

#include "support/latency.hpp"

namespace vaccel::bench {

namespace {

int rank_of(VkPhysicalDeviceType type)
{
    switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
    }
}

bool ok(VkResult r, const char* what)
{
    if (r == VK_SUCCESS) return true;
    std::fprintf(stderr, "vulkan floor: %s failed (VkResult %d)\n", what, static_cast<int>(r));
    return false;
}

}  // namespace

VulkanNoopFloor vulkan_noop_floor(unsigned iterations, unsigned warmup)
{
    VulkanNoopFloor floor;
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo ici{};
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pApplicationInfo = &app;
    VkInstance instance = VK_NULL_HANDLE;  // kept until exit (see the header)
    if (!ok(vkCreateInstance(&ici, nullptr, &instance), "vkCreateInstance")) return floor;
    std::uint32_t count = 0;
    vkEnumeratePhysicalDevices(instance, &count, nullptr);
    std::vector<VkPhysicalDevice> physical(count);
    vkEnumeratePhysicalDevices(instance, &count, physical.data());
    if (physical.empty()) {
        std::fprintf(stderr, "vulkan floor: no Vulkan device\n");
        return floor;
    }
    auto props = [](VkPhysicalDevice d) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(d, &p);
        return p;
    };
    std::stable_sort(physical.begin(), physical.end(), [&](auto a, auto b) {
        return rank_of(props(a).deviceType) < rank_of(props(b).deviceType);
    });
    VkPhysicalDevice gpu = physical[0];
    std::uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(gpu, &families, nullptr);
    std::vector<VkQueueFamilyProperties> family(families);
    vkGetPhysicalDeviceQueueFamilyProperties(gpu, &families, family.data());
    // A compute family without graphics when there is one, as the backend picks.
    std::uint32_t chosen = families;
    for (std::uint32_t i = 0; i < families; ++i) {
        const bool compute = family[i].queueFlags & VK_QUEUE_COMPUTE_BIT;
        const bool graphics = family[i].queueFlags & VK_QUEUE_GRAPHICS_BIT;
        if (compute && (chosen == families || !graphics)) chosen = i;
        if (compute && !graphics) break;
    }
    if (chosen == families) {
        std::fprintf(stderr, "vulkan floor: no compute queue\n");
        return floor;
    }
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{};
    qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qci.queueFamilyIndex = chosen;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{};
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    VkDevice device = VK_NULL_HANDLE;
    if (!ok(vkCreateDevice(gpu, &dci, nullptr, &device), "vkCreateDevice")) return floor;
    VkQueue queue;
    vkGetDeviceQueue(device, chosen, 0, &queue);
    VkCommandPoolCreateInfo pci{};
    pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pci.queueFamilyIndex = chosen;
    VkCommandPool pool;
    VkCommandBuffer cmd;
    VkFence fence;
    VkCommandBufferAllocateInfo cai{};
    cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    VkFenceCreateInfo fci{};
    fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    if (!ok(vkCreateCommandPool(device, &pci, nullptr, &pool), "vkCreateCommandPool")) return floor;
    cai.commandPool = pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    if (!ok(vkAllocateCommandBuffers(device, &cai, &cmd), "vkAllocateCommandBuffers") ||
        !ok(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer") ||
        !ok(vkEndCommandBuffer(cmd), "vkEndCommandBuffer") ||
        !ok(vkCreateFence(device, &fci, nullptr, &fence), "vkCreateFence"))
        return floor;
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    floor.samples.reserve(iterations);
    for (unsigned i = 0; i < warmup + iterations; ++i) {
        const std::uint64_t t0 = monotonic_ns();
        if (!ok(vkQueueSubmit(queue, 1, &submit, fence), "vkQueueSubmit") ||
            !ok(vkWaitForFences(device, 1, &fence, VK_TRUE, 1'000'000'000), "vkWaitForFences") ||
            !ok(vkResetFences(device, 1, &fence), "vkResetFences")) {
            floor.samples.clear();
            return floor;
        }
        if (i >= warmup) floor.samples.push_back(monotonic_ns() - t0);
    }
    floor.device = props(gpu).deviceName;
    vkDestroyFence(device, fence, nullptr);
    vkDestroyCommandPool(device, pool, nullptr);
    vkDestroyDevice(device, nullptr);
    return floor;
}

}  // namespace vaccel::bench
