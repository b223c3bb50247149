// transfer.hpp - blocking buffer copies of one context, and the staging buffer.
//
// Owns: the staging buffer of one transfer (created per transfer, at most
// staging_bytes, in the Host domain's memory type, persistently mapped).
// Decides: each copy is recorded on the context's transfer command buffer,
// submitted with vkQueueSubmit2 and waited for on the context's fence
// (bounded: a copy that never completes loses the device, since its staging
// memory may still be in use); a barrier after each copy makes its result
// visible to the host (into staging) or to later device work (out of it).
#pragma once

#include "objects.hpp"
#include "staging.hpp"

namespace vaccel::backend::vulkan {

// How long one staging copy may take before the device is declared lost.
inline constexpr std::uint64_t transfer_timeout_ns = 10'000'000'000;

// The Error for a failed Vulkan call; VK_ERROR_DEVICE_LOST marks the device lost.
Error vulkan_error(DeviceCore& device, VkResult result, std::string_view what);

class DeviceCopier final : public WordCopier {
public:
    // Creates the staging buffer of `bytes` (whole words); check ok() after.
    DeviceCopier(ContextState& context, VkBuffer target, std::uint64_t bytes);
    ~DeviceCopier() override;
    DeviceCopier(const DeviceCopier&) = delete;
    DeviceCopier& operator=(const DeviceCopier&) = delete;

    Status ready() const { return status_; }
    std::span<std::byte> staging() override { return {mapped_, bytes_}; }
    Status to_staging(std::uint64_t offset, std::uint64_t bytes) override;
    Status from_staging(std::uint64_t offset, std::uint64_t bytes) override;

private:
    enum class Visible { host, device };
    Status copy(VkBuffer source, VkBuffer destination, const VkBufferCopy& region, Visible to);

    ContextState& context_;
    VkBuffer target_;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    std::byte* mapped_ = nullptr;
    std::uint64_t bytes_ = 0;
    Status status_;
};

}  // namespace vaccel::backend::vulkan
