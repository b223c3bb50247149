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
        if (core.timestamps) {
            VkQueryPoolCreateInfo queries{};
            queries.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
            queries.queryType = VK_QUERY_TYPE_TIMESTAMP;
            queries.queryCount = 2 * max_segments;
            if (VkResult r = vkCreateQueryPool(core.device, &queries, nullptr, &s.timestamps);
                r != VK_SUCCESS) {
                s.timestamps = VK_NULL_HANDLE;
                return fail(vulkan_error(core, r, "creating a submission slot's timestamps"));
            }
        }
        if (auto grown = ring->grow(i, 1); !grown) return fail(grown.error());
        ring->free_.push_back(i);
    }
    return ring;
}

Status SubmissionRing::grow(std::uint32_t index, std::uint32_t segments)
{
    RingSlot& s = slots_[index];
    while (s.commands.size() < segments) {
        VkCommandBufferAllocateInfo allocate{};
        allocate.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
        allocate.commandPool = s.pool;
        allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        allocate.commandBufferCount = 1;
        VkCommandBuffer commands = VK_NULL_HANDLE;
        if (VkResult r = vkAllocateCommandBuffers(core_.device, &allocate, &commands);
            r != VK_SUCCESS)
            return fail(vulkan_error(core_, r, "allocating a submission slot's command buffer"));
        s.commands.push_back(commands);
    }
    while (s.fences.size() < segments) {
        VkFenceCreateInfo create{};
        create.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
        VkFence fence = VK_NULL_HANDLE;
        if (VkResult r = vkCreateFence(core_.device, &create, nullptr, &fence); r != VK_SUCCESS)
            return fail(vulkan_error(core_, r, "creating a submission slot's fence"));
        s.fences.push_back(fence);
    }
    return {};
}

SubmissionRing::~SubmissionRing()
{
    // Every submission holds its context, so no slot is in use here except
    // retired ones, whose device is lost (destroying is then allowed).
    VkDevice d = core_.device;
    for (RingSlot& s : slots_) {
        for (VkFence fence : s.fences) vkDestroyFence(d, fence, nullptr);
        if (s.timestamps != VK_NULL_HANDLE) vkDestroyQueryPool(d, s.timestamps, nullptr);
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
    if (vkResetFences(core_.device, s.used, s.fences.data()) != VK_SUCCESS ||
        vkResetCommandPool(core_.device, s.pool, 0) != VK_SUCCESS ||
        vkResetDescriptorPool(core_.device, s.descriptors, 0) != VK_SUCCESS) {
        retire(index);
        return;
    }
    s.used = 1;
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
