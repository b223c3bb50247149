// raw_vulkan.cpp - the direct Vulkan baselines (raw_vulkan.hpp).
#include "support/raw_vulkan.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace vaccel::bench {
namespace {

[[noreturn]] void die(const char* what, VkResult r)
{
    std::fprintf(stderr, "bench_vulkan: raw Vulkan baseline: %s failed (VkResult %d)\n", what,
                 static_cast<int>(r));
    std::exit(1);
}

void check(VkResult r, const char* what)
{
    if (r != VK_SUCCESS) die(what, r);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

RawVulkan::RawVulkan(const std::array<std::uint8_t, 16>& uuid)
{
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "bench_vulkan baseline";
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    create.pApplicationInfo = &app;
    check(vkCreateInstance(&create, nullptr, &instance_), "vkCreateInstance");
    std::uint32_t count = 0;
    check(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> devices(count);
    check(vkEnumeratePhysicalDevices(instance_, &count, devices.data()),
          "vkEnumeratePhysicalDevices");
    for (VkPhysicalDevice d : devices) {
        VkPhysicalDeviceIDProperties id{};
        id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
        VkPhysicalDeviceProperties2 p{};
        p.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
        p.pNext = &id;
        vkGetPhysicalDeviceProperties2(d, &p);
        if (std::memcmp(id.deviceUUID, uuid.data(), uuid.size()) == 0) {
            physical_ = d;
            name_ = p.properties.deviceName;
            break;
        }
    }
    if (physical_ == VK_NULL_HANDLE) {
        std::fprintf(stderr, "bench_vulkan: no physical device has the backend device's UUID\n");
        std::exit(1);
    }
    std::uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
    std::vector<VkQueueFamilyProperties> props(families);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, props.data());
    // A compute family without graphics when there is one, as the backend.
    bool found = false;
    for (int pass = 0; pass < 2 && !found; ++pass)
        for (std::uint32_t f = 0; f < families && !found; ++f) {
            const bool compute = (props[f].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0;
            const bool graphics = (props[f].queueFlags & VK_QUEUE_GRAPHICS_BIT) != 0;
            if (compute && props[f].queueCount > 0 && (pass == 1 || !graphics)) {
                family_ = f;
                found = true;
            }
        }
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{};
    queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queue.queueFamilyIndex = family_;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    VkDeviceCreateInfo device{};
    device.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    device.queueCreateInfoCount = 1;
    device.pQueueCreateInfos = &queue;
    check(vkCreateDevice(physical_, &device, nullptr, &device_), "vkCreateDevice");
    vkGetDeviceQueue(device_, family_, 0, &queue_);
    VkCommandPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.queueFamilyIndex = family_;
    check(vkCreateCommandPool(device_, &pool, nullptr, &pool_), "vkCreateCommandPool");
    VkFenceCreateInfo fence{};
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    check(vkCreateFence(device_, &fence, nullptr, &fence_), "vkCreateFence");
}

RawVulkan::~RawVulkan()
{
    if (device_ != VK_NULL_HANDLE) {
        vkDeviceWaitIdle(device_);
        vkDestroyFence(device_, fence_, nullptr);
        vkDestroyCommandPool(device_, pool_, nullptr);
        vkDestroyDevice(device_, nullptr);
    }
    if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

double RawVulkan::submit_and_wait(VkCommandBuffer commands)
{
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands;
    check(vkResetFences(device_, 1, &fence_), "vkResetFences");
    const auto start = std::chrono::steady_clock::now();
    check(vkQueueSubmit(queue_, 1, &submit, fence_), "vkQueueSubmit");
    check(vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double RawVulkan::copy_seconds(std::uint64_t bytes, int runs)
{
    VkPhysicalDeviceMemoryProperties memory{};
    vkGetPhysicalDeviceMemoryProperties(physical_, &memory);
    VkBuffer buffers[2]{};
    VkDeviceMemory memories[2]{};
    for (int i = 0; i < 2; ++i) {
        VkBufferCreateInfo create{};
        create.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
        create.size = bytes;
        create.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        check(vkCreateBuffer(device_, &create, nullptr, &buffers[i]), "vkCreateBuffer");
        VkMemoryRequirements needs{};
        vkGetBufferMemoryRequirements(device_, buffers[i], &needs);
        // Device-local when the buffer may use it, else its first type.
        std::uint32_t type = UINT32_MAX;
        for (std::uint32_t t = 0; t < memory.memoryTypeCount; ++t) {
            if ((needs.memoryTypeBits & (1u << t)) == 0) continue;
            if (type == UINT32_MAX) type = t;
            if (memory.memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) {
                type = t;
                break;
            }
        }
        VkMemoryAllocateInfo allocate{};
        allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
        allocate.allocationSize = needs.size;
        allocate.memoryTypeIndex = type;
        check(vkAllocateMemory(device_, &allocate, nullptr, &memories[i]), "vkAllocateMemory");
        check(vkBindBufferMemory(device_, buffers[i], memories[i], 0), "vkBindBufferMemory");
    }
    VkCommandBufferAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    allocate.commandPool = pool_;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    VkCommandBuffer commands = VK_NULL_HANDLE;
    check(vkAllocateCommandBuffers(device_, &allocate, &commands), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    check(vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
    const VkBufferCopy region{0, 0, bytes};
    vkCmdCopyBuffer(commands, buffers[0], buffers[1], 1, &region);
    check(vkEndCommandBuffer(commands), "vkEndCommandBuffer");
    std::vector<double> seconds;
    for (int i = 0; i < runs + 1; ++i) {
        const double s = submit_and_wait(commands);
        if (i > 0) seconds.push_back(s);
    }
    vkFreeCommandBuffers(device_, pool_, 1, &commands);
    for (int i = 0; i < 2; ++i) {
        vkDestroyBuffer(device_, buffers[i], nullptr);
        vkFreeMemory(device_, memories[i], nullptr);
    }
    return median(seconds);
}

double RawVulkan::empty_submit_seconds(int runs)
{
    VkCommandBufferAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    allocate.commandPool = pool_;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    VkCommandBuffer commands = VK_NULL_HANDLE;
    check(vkAllocateCommandBuffers(device_, &allocate, &commands), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    check(vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
    check(vkEndCommandBuffer(commands), "vkEndCommandBuffer");
    std::vector<double> seconds;
    for (int i = 0; i < runs + 10; ++i) {
        const double s = submit_and_wait(commands);
        if (i >= 10) seconds.push_back(s);
    }
    vkFreeCommandBuffers(device_, pool_, 1, &commands);
    return median(seconds);
}

}  // namespace vaccel::bench
