// objects.hpp - the Vulkan backend's device, context, buffer and queue objects.
//
// Owns: every Vulkan handle, each with exactly one owner that destroys it.
// Decides:
//  - destruction order: buffers and contexts hold their DeviceCore, the
//    DeviceCore holds the Instance, so a VkBuffer dies before its VkDevice
//    and the VkDevice before the VkInstance;
//  - counters: each object counts itself in its constructor and uncounts in
//    its destructor, so live() is exact and returns to zero;
//  - device loss: a VK_ERROR_DEVICE_LOST (or a transfer that never
//    completes) sets `lost` for good; later calls are refused.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "instance.hpp"
#include "memory_plan.hpp"
#include "pipeline_cache.hpp"
#include "ring.hpp"
#include "tuning.hpp"
#include "vaccel/backend/backend.hpp"
#include "vaccel/backend/vulkan.hpp"
#include "vaccel/common/shared_memory.hpp"
#include "vaccel/sched/flow_book.hpp"

namespace vaccel::backend::vulkan {

// The device's live objects (backend.hpp).
using Counters = LiveCounterCells;

struct DeviceCore {
    std::shared_ptr<Instance> instance;  // outlives the device
    PhysicalRecord physical;
    VulkanOptions options;
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;
    MemoryPlan plan;
    Tuning tuning;  // written once at open (tuning.hpp)
    vaccel_device_info info{};  // Invariant: written once at open, then read-only.
    Counters counters;
    std::atomic<bool> lost{false};
    // The queue writes timestamps (timestampValidBits > 0): segments are
    // charged what they measure (scheduler.hpp); `timestamp_mask` keeps the
    // valid bits, `timestamp_period` is nanoseconds per tick.
    bool timestamps = false;
    std::uint64_t timestamp_mask = 0;
    double timestamp_period = 1.0;
    // The device time a segment aims at (vaccel/sched/slicing.hpp); 0 keeps every run
    // whole.
    std::uint64_t slice_bound_ns = 0;
    // VulkanOptions::latency_hold_us, for the scheduler.
    std::uint64_t latency_hold_ns = 0;
    // Fault injection (VulkanOptions::inject_loss_after, this device only):
    // acceptances counted by `accepted`; UINT64_MAX = never.
    std::uint64_t inject_loss_after = UINT64_MAX;
    std::atomic<std::uint64_t> accepted{0};
    // vkQueueSubmit* needs the queue externally synchronised: transfers
    // (also from load_program, which runs beside other calls) and
    // submissions take this lock around the call.
    std::mutex queue_mutex;
    std::uint64_t next_identity = 1;  // buffers' serial numbers (device-serialised calls)
    // The pipeline cache and shader modules; destroyed (and saved) before the device.
    std::unique_ptr<PipelineCache> pipelines;

    DeviceCore() = default;
    DeviceCore(const DeviceCore&) = delete;
    DeviceCore& operator=(const DeviceCore&) = delete;
    ~DeviceCore();
};

// The flow of the device's scheduler a context's work joins (scheduler.hpp);
// shared by the contexts of one tenant, alive while any of them (or their
// work) is.
using sched::FlowTag;


// One context: the command pool, command buffer and fence of its blocking
// transfers, its submission ring, and its share of the limits.
struct ContextState {
    std::shared_ptr<DeviceCore> device;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer transfer = VK_NULL_HANDLE;
    VkFence transfer_done = VK_NULL_HANDLE;
    std::uint64_t buffers = 0;
    std::uint64_t memory_bytes = 0;
    std::uint64_t queues = 0;
    std::uint64_t programs = 0;
    std::atomic<std::uint64_t> events{0};  // decremented by destroy_event only
    // Gates alive; a destroyed gate may die on the completion thread (a
    // released submission holds it), so atomic.
    std::atomic<std::uint64_t> gates{0};
    // Its submissions' command buffers, descriptor pools and fences (ring.hpp).
    std::unique_ptr<SubmissionRing> ring;
    // Set at create_context, replaced by set_context_schedule before the
    // context has queues; read by the scheduler for every submission.
    std::shared_ptr<FlowTag> flow;

    explicit ContextState(std::shared_ptr<DeviceCore> owner);
    ContextState(const ContextState&) = delete;
    ContextState& operator=(const ContextState&) = delete;
    ~ContextState();
};

struct VulkanContext final : Context {
    std::shared_ptr<ContextState> state;
    explicit VulkanContext(std::shared_ptr<ContextState> s) : state(std::move(s)) {}
};

// A buffer, its memory and (when host-visible) its persistent mapping.
// Allocated and bound before construction; the object then owns them.
struct VulkanBuffer final : Buffer {
    std::shared_ptr<ContextState> owner;
    BufferDesc described;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    std::byte* mapped = nullptr;
    bool imported = false;  // `mapped` is the caller's memory (import_host_buffer): never unmapped
    // A Host buffer that was mapped into a client (BUFFER_MAP): `mapped`
    // points into this memfd, imported. Ownership: the buffer's; released
    // after the Vulkan objects (members are destroyed after ~VulkanBuffer).
    SharedMemory shared;
    std::uint64_t allocation_bytes = 0;
    std::uint64_t serial = 0;
    // Submissions accepted and not complete that bind this buffer, and how
    // many of them write it; changed by submit (device-serialised) and the
    // completion thread, so atomic. Transfers and free are refused while
    // in_flight is non-zero; a second submission may only read a buffer
    // that no in-flight submission writes.
    std::atomic<std::uint64_t> submissions{0};
    std::atomic<std::uint64_t> writers{0};

    VulkanBuffer(std::shared_ptr<ContextState> context, const BufferDesc& desc);
    ~VulkanBuffer() override;
    const BufferDesc& desc() const override { return described; }
    std::uint64_t in_flight() const override { return submissions.load(std::memory_order_acquire); }
    std::uint64_t identity() const override { return serial; }
};

struct VulkanQueue final : Queue {
    std::shared_ptr<ContextState> owner;
    explicit VulkanQueue(std::shared_ptr<ContextState> context);
    ~VulkanQueue() override;
};

}  // namespace vaccel::backend::vulkan
