// ring.cpp - the submission ring of a context (ring.hpp).
#include "ring.hpp"

#include <fmt/format.h>

#include "objects.hpp"
#include "transfer.hpp"
#include "vaccel.h"

namespace vaccel::backend::vulkan {

Result<std::unique_ptr<SubmissionRing>> SubmissionRing::create(DeviceCore& core,
                                                               std::uint32_t descriptors)
{
    std::unique_ptr<SubmissionRing> ring(new SubmissionRing(core));
    ring->slots_.resize(ring_depth);
    for (std::uint32_t i = 0; i < ring_depth; ++i) {
        RingSlot& s = ring->slots_[i];
        VkCommandPoolCreateInfo pool{};
        pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
        pool.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
        pool.queueFamilyIndex = core.physical.queue_family;
        if (VkResult r = vkCreateCommandPool(core.device, &pool, nullptr, &s.pool); r != VK_SUCCESS) {
            s.pool = VK_NULL_HANDLE;
            return fail(vulkan_error(core, r, "creating a submission slot's command pool"));
        }
        VkCommandBufferAllocateInfo allocate{};
        allocate.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
        allocate.commandPool = s.pool;
        allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        allocate.commandBufferCount = 1;
        if (VkResult r = vkAllocateCommandBuffers(core.device, &allocate, &s.commands);
            r != VK_SUCCESS)
            return fail(vulkan_error(core, r, "allocating a submission slot's command buffer"));
        VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptors};
        VkDescriptorPoolCreateInfo sets{};
        sets.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
        sets.maxSets = 1;
        sets.poolSizeCount = 1;
        sets.pPoolSizes = &size;
        if (VkResult r = vkCreateDescriptorPool(core.device, &sets, nullptr, &s.descriptors);
            r != VK_SUCCESS) {
            s.descriptors = VK_NULL_HANDLE;
            return fail(vulkan_error(core, r, "creating a submission slot's descriptor pool"));
        }
        VkFenceCreateInfo fence{};
        fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
        if (VkResult r = vkCreateFence(core.device, &fence, nullptr, &s.fence); r != VK_SUCCESS) {
            s.fence = VK_NULL_HANDLE;
            return fail(vulkan_error(core, r, "creating a submission slot's fence"));
        }
        ring->free_.push_back(i);
    }
    return ring;
}

SubmissionRing::~SubmissionRing()
{
    // Every submission holds its context, so no slot is in use here except
    // retired ones, whose device is lost (destroying is then allowed).
    VkDevice d = core_.device;
    for (RingSlot& s : slots_) {
        if (s.fence != VK_NULL_HANDLE) vkDestroyFence(d, s.fence, nullptr);
        if (s.descriptors != VK_NULL_HANDLE) vkDestroyDescriptorPool(d, s.descriptors, nullptr);
        if (s.pool != VK_NULL_HANDLE) vkDestroyCommandPool(d, s.pool, nullptr);
    }
}

std::optional<std::uint32_t> SubmissionRing::take()
{
    std::lock_guard lock(mutex_);
    if (free_.empty()) return std::nullopt;
    const std::uint32_t index = free_.front();
    free_.pop_front();
    return index;
}

void SubmissionRing::give_back(std::uint32_t index)
{
    RingSlot& s = slots_[index];
    // Failures here leave objects that the next use would misuse: retire.
    if (vkResetFences(core_.device, 1, &s.fence) != VK_SUCCESS ||
        vkResetCommandPool(core_.device, s.pool, 0) != VK_SUCCESS ||
        vkResetDescriptorPool(core_.device, s.descriptors, 0) != VK_SUCCESS) {
        retire(index);
        return;
    }
    std::lock_guard lock(mutex_);
    free_.push_back(index);
}

void SubmissionRing::retire(std::uint32_t)
{
    std::lock_guard lock(mutex_);
    retired_ += 1;
}

std::uint32_t SubmissionRing::in_use() const
{
    std::lock_guard lock(mutex_);
    return ring_depth - static_cast<std::uint32_t>(free_.size()) - retired_;
}

std::uint32_t SubmissionRing::retired() const
{
    std::lock_guard lock(mutex_);
    return retired_;
}

Error ring_full_error()
{
    return Error::limit_hit(VACCEL_LIMIT_EVENTS, ring_depth, ring_depth)
        .with_note(fmt::format("{} submissions of this context are already in flight on the "
                               "Vulkan device, the depth of its submission ring; wait for one "
                               "of their events before submitting more",
                               ring_depth));
}

}  // namespace vaccel::backend::vulkan
