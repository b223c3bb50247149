// objects.cpp - construction and destruction of the Vulkan objects (see objects.hpp).
#include "objects.hpp"

namespace vaccel::backend::vulkan {

DeviceCore::~DeviceCore()
{
    if (device != VK_NULL_HANDLE) {
        vkDeviceWaitIdle(device);
        pipelines.reset();
        vkDestroyDevice(device, nullptr);
    }
}

ContextState::ContextState(std::shared_ptr<DeviceCore> owner) : device(std::move(owner))
{
    device->counters.contexts.fetch_add(1);
}

ContextState::~ContextState()
{
    ring.reset();
    VkDevice d = device->device;
    if (transfer_done != VK_NULL_HANDLE)
        vkDestroyFence(d, transfer_done, nullptr);
    if (pool != VK_NULL_HANDLE)
        vkDestroyCommandPool(d, pool, nullptr);  // frees `transfer` too
    device->counters.contexts.fetch_sub(1);
}

VulkanBuffer::VulkanBuffer(std::shared_ptr<ContextState> context, const BufferDesc& desc)
    : owner(std::move(context)), described(desc)
{
}

VulkanBuffer::~VulkanBuffer()
{
    VkDevice d = owner->device->device;
    if (mapped != nullptr && !imported)
        vkUnmapMemory(d, memory);
    if (buffer != VK_NULL_HANDLE)
        vkDestroyBuffer(d, buffer, nullptr);
    if (memory != VK_NULL_HANDLE)
        vkFreeMemory(d, memory, nullptr);
    // Counted only once fully built (allocate_buffer sets serial last).
    if (serial != 0) {
        owner->buffers -= 1;
        owner->memory_bytes -= allocation_bytes;
        owner->device->counters.buffers.fetch_sub(1);
        owner->device->counters.buffer_bytes.fetch_sub(allocation_bytes);
    }
}

VulkanQueue::VulkanQueue(std::shared_ptr<ContextState> context) : owner(std::move(context))
{
    owner->queues += 1;
    owner->device->counters.queues.fetch_add(1);
}

VulkanQueue::~VulkanQueue()
{
    owner->queues -= 1;
    owner->device->counters.queues.fetch_sub(1);
}

}  // namespace vaccel::backend::vulkan
