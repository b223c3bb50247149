// transfer.cpp - blocking copies through a staging buffer (see transfer.hpp).
#include "transfer.hpp"

#include <fmt/format.h>

namespace vaccel::backend::vulkan {

Error vulkan_error(DeviceCore& device, VkResult result, std::string_view what)
{
    switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        return Error::of(Errc::out_of_memory)
            .with_note(fmt::format("{} failed: the Vulkan device \"{}\" is out of memory; free "
                                   "buffers or ask for less",
                                   what, device.info.name));
    case VK_ERROR_DEVICE_LOST:
        device.lost.store(true, std::memory_order_release);
        return Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE)
            .with_note(fmt::format("{} failed: the Vulkan device \"{}\" was lost; use another "
                                   "device, or restart the daemon to reset this one",
                                   what, device.info.name));
    default:
        return Error::of(Errc::external, VACCEL_D_NONE,
                         static_cast<std::uint64_t>(static_cast<std::int64_t>(result)))
            .with_note(fmt::format("{} failed with VkResult {} on \"{}\"", what,
                                   static_cast<int>(result), device.info.name));
    }
}

DeviceCopier::DeviceCopier(ContextState& context, VkBuffer target, std::uint64_t bytes)
    : context_(context), target_(target), bytes_(bytes)
{
    DeviceCore& state = *context.device;
    VkDevice d = state.device;
    VkBufferCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    create.size = bytes;
    create.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (VkResult r = vkCreateBuffer(d, &create, nullptr, &buffer_); r != VK_SUCCESS) {
        buffer_ = VK_NULL_HANDLE;
        status_ = fail(vulkan_error(state, r, "creating a staging buffer"));
        return;
    }
    VkMemoryRequirements needs{};
    vkGetBufferMemoryRequirements(d, buffer_, &needs);
    // The Host domain's type is host-visible and coherent by construction of
    // the plan; staging needs exactly that.
    if ((needs.memoryTypeBits & (1u << state.plan.host)) == 0) {
        status_ = fail(Error::of(Errc::incompatible)
                           .with_note("the staging buffer cannot live in the Host memory type"));
        return;
    }
    VkMemoryAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    allocate.allocationSize = needs.size;
    allocate.memoryTypeIndex = state.plan.host;
    if (VkResult r = vkAllocateMemory(d, &allocate, nullptr, &memory_); r != VK_SUCCESS) {
        memory_ = VK_NULL_HANDLE;
        status_ = fail(vulkan_error(state, r, "allocating staging memory"));
        return;
    }
    if (VkResult r = vkBindBufferMemory(d, buffer_, memory_, 0); r != VK_SUCCESS) {
        status_ = fail(vulkan_error(state, r, "binding staging memory"));
        return;
    }
    void* pointer = nullptr;
    if (VkResult r = vkMapMemory(d, memory_, 0, VK_WHOLE_SIZE, 0, &pointer); r != VK_SUCCESS) {
        status_ = fail(vulkan_error(state, r, "mapping staging memory"));
        return;
    }
    mapped_ = static_cast<std::byte*>(pointer);
}

DeviceCopier::~DeviceCopier()
{
    VkDevice d = context_.device->device;
    if (mapped_ != nullptr)
        vkUnmapMemory(d, memory_);
    if (buffer_ != VK_NULL_HANDLE)
        vkDestroyBuffer(d, buffer_, nullptr);
    if (memory_ != VK_NULL_HANDLE)
        vkFreeMemory(d, memory_, nullptr);
}

Status DeviceCopier::to_staging(std::uint64_t offset, std::uint64_t bytes)
{
    return copy(target_, buffer_, VkBufferCopy{offset, 0, bytes}, Visible::host);
}

Status DeviceCopier::from_staging(std::uint64_t offset, std::uint64_t bytes)
{
    return copy(buffer_, target_, VkBufferCopy{0, offset, bytes}, Visible::device);
}

Status DeviceCopier::copy(VkBuffer source, VkBuffer destination, const VkBufferCopy& region,
                          Visible to)
{
    DeviceCore& state = *context_.device;
    VkDevice d = state.device;
    VkCommandBuffer commands = context_.transfer;
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VkMemoryBarrier2 barrier{};
    barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2;
    barrier.srcStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
    barrier.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
    if (to == Visible::host) {
        barrier.dstStageMask = VK_PIPELINE_STAGE_2_HOST_BIT;
        barrier.dstAccessMask = VK_ACCESS_2_HOST_READ_BIT;
    } else {
        barrier.dstStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_COPY_BIT;
        barrier.dstAccessMask = VK_ACCESS_2_SHADER_STORAGE_READ_BIT |
                                VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT |
                                VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT;
    }
    VkDependencyInfo dependency{};
    dependency.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO;
    dependency.memoryBarrierCount = 1;
    dependency.pMemoryBarriers = &barrier;
    VkCommandBufferSubmitInfo command_info{};
    command_info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO;
    command_info.commandBuffer = commands;
    VkSubmitInfo2 submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2;
    submit.commandBufferInfoCount = 1;
    submit.pCommandBufferInfos = &command_info;

    // The fence is unsignalled after reset and waited for below, so the
    // command buffer is never re-recorded while pending.
    if (VkResult r = vkResetFences(d, 1, &context_.transfer_done); r != VK_SUCCESS)
        return fail(vulkan_error(state, r, "resetting the transfer fence"));
    if (VkResult r = vkBeginCommandBuffer(commands, &begin); r != VK_SUCCESS)
        return fail(vulkan_error(state, r, "recording a buffer copy"));
    vkCmdCopyBuffer(commands, source, destination, 1, &region);
    vkCmdPipelineBarrier2(commands, &dependency);
    if (VkResult r = vkEndCommandBuffer(commands); r != VK_SUCCESS)
        return fail(vulkan_error(state, r, "recording a buffer copy"));
    VkResult submitted;
    {
        std::lock_guard lock(state.queue_mutex);
        submitted = vkQueueSubmit2(state.queue, 1, &submit, context_.transfer_done);
    }
    if (VkResult r = submitted;
        r != VK_SUCCESS)
        return fail(vulkan_error(state, r, "submitting a buffer copy"));
    const VkResult waited =
        vkWaitForFences(d, 1, &context_.transfer_done, VK_TRUE, transfer_timeout_ns);
    if (waited == VK_TIMEOUT) {
        // The copy may still touch the staging memory: the device is not
        // trusted again (objects.hpp, device loss).
        state.lost.store(true, std::memory_order_release);
        return fail(Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE)
                        .with_note(fmt::format("a buffer copy on \"{}\" did not complete within "
                                               "{} s; the device is treated as lost",
                                               state.info.name, transfer_timeout_ns / 1'000'000'000)));
    }
    if (waited != VK_SUCCESS)
        return fail(vulkan_error(state, waited, "waiting for a buffer copy"));
    return {};
}

}  // namespace vaccel::backend::vulkan
