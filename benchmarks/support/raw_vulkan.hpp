// raw_vulkan.hpp - the baselines bench_vulkan measures beside the Vulkan
// backend: the same physical device opened directly (its own VkInstance and
// VkDevice, found by the device UUID the backend reports), a device-to-device
// vkCmdCopyBuffer and an empty command buffer's submit + fence wait.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <string>

namespace vaccel::bench {

class RawVulkan {
public:
    // Opens the physical device with this UUID; exits with a message when
    // there is none or it cannot be opened.
    explicit RawVulkan(const std::array<std::uint8_t, 16>& uuid);
    RawVulkan(const RawVulkan&) = delete;
    RawVulkan& operator=(const RawVulkan&) = delete;
    ~RawVulkan();

    // Median wall-clock seconds (submit to fence signalled) of `runs` copies
    // of `bytes` between two device-local buffers, after one warm-up.
    double copy_seconds(std::uint64_t bytes, int runs);
    // Median wall-clock seconds of `runs` submissions of an empty command
    // buffer, each waited on with vkWaitForFences, after 10 warm-ups.
    double empty_submit_seconds(int runs);
    const std::string& name() const { return name_; }

private:
    double submit_and_wait(VkCommandBuffer commands);

    VkInstance instance_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    std::uint32_t family_ = 0;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    std::string name_;
};

}  // namespace vaccel::bench
