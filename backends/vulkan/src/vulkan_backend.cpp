// vulkan_backend.cpp - the Vulkan backend: the Backend contract for buffers,
// contexts and queues on a Vulkan 1.3 device.
//
// Owns: opening each served device (its VkDevice, queue and memory plan)
// and the Backend calls. Decides (docs/adr/0013-vulkan-backend.md):
//  - refusal order as the CPU backend's: what the request is, then limits,
//    then state;
//  - buffers are dedicated allocations of whole words, persistently mapped
//    when their memory type is host-visible; transfers are a memcpy into the
//    mapping, else (or with stage_all_transfers) word copies through a
//    bounded staging buffer (staging.hpp);
//  - TOSA programs of the FP32 tier are loaded by program.hpp and run by
//    submit.hpp; host gates are timeline semaphores (gate.hpp); SPIR-V
//    compute modules are launched (launch.hpp): the device advertises the
//    TOSA and SPIR-V formats, VACCEL_CAP_GATES and VACCEL_CAP_LAUNCH.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "device_info.hpp"
#include "instance.hpp"
#include "memory_plan.hpp"
#include "lowering.hpp"
#include "objects.hpp"
#include "program.hpp"
#include "gate.hpp"
#include "launch.hpp"
#include "scheduler.hpp"
#include "submit.hpp"
#include "transfer.hpp"
#include "tuning.hpp"
#include "vaccel/backend/vulkan.hpp"
#include "vaccel/common/shared_memory.hpp"
#include "vaccel/common/validation.hpp"

namespace vaccel::backend {

namespace vulkan {
namespace {

constexpr VkBufferUsageFlags buffer_usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// The largest power of two dividing `address` (2^40 for zero).
std::uint64_t address_alignment(std::uint64_t address)
{
    return address == 0 ? std::uint64_t{1} << 40 : address & (~address + 1);
}

Error in_flight_error(const VulkanBuffer& buffer, std::string_view what)
{
    return Error::of(Errc::busy, VACCEL_D_IN_FLIGHT, buffer.identity(), buffer.in_flight())
        .with_note(fmt::format("{} refused: {} submission(s) in flight bind this buffer; wait "
                               "for their events first",
                               what, buffer.in_flight()));
}

// The memoryTypeBits a buffer with this backend's usage reports: which types
// a buffer may live in is a property of its usage, not of the type list.
Result<std::uint32_t> buffer_type_mask(DeviceCore& state)
{
    VkBufferCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    create.size = word_bytes;
    create.usage = buffer_usage;
    create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkBuffer probe = VK_NULL_HANDLE;
    if (VkResult r = vkCreateBuffer(state.device, &create, nullptr, &probe); r != VK_SUCCESS)
        return fail(vulkan_error(state, r, "creating a probe buffer"));
    VkMemoryRequirements needs{};
    vkGetBufferMemoryRequirements(state.device, probe, &needs);
    vkDestroyBuffer(state.device, probe, nullptr);
    return needs.memoryTypeBits;
}

std::string open_failure(const PhysicalRecord& record, std::string_view why)
{
    return fmt::format("\"{}\" is not served: {}", record.facts.name, why);
}

// Opens the device; on failure, why (for the probe report).
std::expected<std::shared_ptr<DeviceCore>, std::string> open_device(
    std::shared_ptr<Instance> instance, const PhysicalRecord& record, const VulkanOptions& options)
{
    auto state = std::make_shared<DeviceCore>();
    state->instance = std::move(instance);
    state->physical = record;
    state->options = options;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{};
    queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queue.queueFamilyIndex = record.queue_family;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    // synchronization2 is core in 1.3 but still opt-in; timeline semaphores
    // are for gates (docs/adr/0013). Nothing else is enabled (but FP16
    // MATMUL's cooperative matrices, below, where offered), so no memory
    // type needing another feature may be chosen (memory_plan.hpp).
    VkPhysicalDeviceVulkan13Features f13{};
    f13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
    f13.synchronization2 = VK_TRUE;
    VkPhysicalDeviceVulkan12Features f12{};
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    f12.timelineSemaphore = VK_TRUE;
    f12.pNext = &f13;
    // One 1.1 features structure, chained after f13, for both users below.
    VkPhysicalDeviceVulkan11Features f11{};
    f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    f13.pNext = &f11;
    // 8- and 16-bit storage, only where the device offers both: the narrow
    // dtypes' kernels use them, and the descriptor lists those dtypes then.
    if (record.storage_8bit && record.storage_16bit) {
        f12.storageBuffer8BitAccess = VK_TRUE;
        f11.storageBuffer16BitAccess = VK_TRUE;
    }
    VkDeviceCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    create.pNext = &f12;
    // The device extensions, each only when offered: host memory import
    // (import_host_buffer) and cooperative matrices (below).
    std::vector<const char*> extensions;
    if (record.host_import_alignment) extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    create.queueCreateInfoCount = 1;
    create.pQueueCreateInfos = &queue;
    // FP16 MATMUL on cooperative matrices (MATMUL kernels, docs/adr/0013):
    // enabled only when the probe saw the extension and every feature its
    // shader needs offered (PhysicalRecord::coop_matrix_nv).
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coop{};
    coop.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
    if (record.coop_matrix_nv) {
        coop.cooperativeMatrix = VK_TRUE;
        f12.shaderFloat16 = VK_TRUE;
        f12.vulkanMemoryModel = VK_TRUE;
        f11.storageBuffer16BitAccess = VK_TRUE;
        f11.pNext = &coop;
        extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    }
    create.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
    create.ppEnabledExtensionNames = extensions.data();
    if (VkResult r = vkCreateDevice(record.handle, &create, nullptr, &state->device);
        r != VK_SUCCESS) {
        state->device = VK_NULL_HANDLE;
        return std::unexpected(
            open_failure(record, fmt::format("vkCreateDevice failed (VkResult {})",
                                             static_cast<int>(r))));
    }
    vkGetDeviceQueue(state->device, record.queue_family, 0, &state->queue);
    state->latency_hold_ns = std::uint64_t{options.latency_hold_us} * 1000;
    if (record.timestamp_bits != 0 && record.limits.timestampPeriod > 0) {
        state->timestamps = true;
        state->timestamp_mask =
            record.timestamp_bits >= 64 ? ~0ull : (1ull << record.timestamp_bits) - 1;
        state->timestamp_period = record.limits.timestampPeriod;
        // Cutting needs the profile, which needs timestamps.
        state->slice_bound_ns = std::uint64_t{options.slice_us} * 1000;
    }

    auto mask = buffer_type_mask(*state);
    if (!mask)
        return std::unexpected(open_failure(record, mask.error().note));
    std::vector<MemoryType> types;
    for (std::uint32_t i = 0; i < record.memory.memoryTypeCount; ++i)
        types.push_back({record.memory.memoryTypes[i].propertyFlags,
                         record.memory.memoryTypes[i].heapIndex});
    // One heap: there is no second memory for Device to be local to.
    const bool unified = options.unified_memory && record.memory.memoryHeapCount == 1;
    auto plan = select_memory_plan(types, *mask, unified);
    if (!plan)
        return std::unexpected(open_failure(
            record, "no host-visible coherent memory type a storage buffer may use"));
    state->plan = *plan;
    const VkPhysicalDeviceLimits& l = record.limits;
    auto tuning = tune({l.maxComputeWorkGroupSize[0], l.maxComputeWorkGroupInvocations,
                        l.maxComputeWorkGroupCount[0], l.maxPerStageDescriptorStorageBuffers,
                        l.maxDescriptorSetStorageBuffers, l.maxPushConstantsSize,
                        record.subgroup_size});
    if (!tuning) return std::unexpected(open_failure(record, tuning.error()));
    state->tuning = *tuning;
    state->info = describe_device(record, *plan);
    VkPhysicalDeviceProperties properties{};
    vkGetPhysicalDeviceProperties(record.handle, &properties);
    PipelineCacheIdentity identity{properties.vendorID, properties.deviceID,
                                   properties.driverVersion, {}};
    std::memcpy(identity.cache_uuid.data(), properties.pipelineCacheUUID, VK_UUID_SIZE);
    state->pipelines = PipelineCache::open(state->device, identity, options.state_dir);
    return state;
}

class VulkanBackend final : public Backend {
public:
    Result<std::unique_ptr<Buffer>> import_host(Context& context, const BufferDesc& desc,
                                                void* memory, std::uint64_t bytes,
                                                BufferInfo& info);
    std::optional<std::uint64_t> import_alignment() const
    {
        return core_->physical.host_import_alignment;
    }
    Result<std::uint32_t> bind_host_memory(VulkanBuffer& buffer, void* memory,
                                           std::uint64_t bytes);

    // A Host buffer moves into a memfd the first time it is mapped (its
    // bytes copied, the device's view rebound to the same pages through
    // VK_EXT_external_memory_host) and stays there. Shared buffers live in
    // the driver's device-local memory, which no file can hold.
    Result<MappableMemory> map_buffer(Buffer& buffer) override
    {
        auto& vk_buffer = static_cast<VulkanBuffer&>(buffer);
        if (vk_buffer.shared.fd() >= 0)
            return MappableMemory{vk_buffer.mapped, vk_buffer.shared.fd(), 0};
        if (vk_buffer.desc().domain != VACCEL_DOMAIN_HOST || vk_buffer.mapped == nullptr)
            return fail(Error::of(Errc::unsupported)
                            .with_note(fmt::format("\"{}\" keeps Shared buffers in the driver's "
                                                   "device memory, which cannot be mapped into "
                                                   "a client; allocate the buffer in the Host "
                                                   "domain to map it",
                                                   core_->info.name)));
        const auto alignment = core_->physical.host_import_alignment;
        if (!alignment)
            return fail(Error::of(Errc::unsupported)
                            .with_note(fmt::format("\"{}\" cannot use shareable host memory (no "
                                                   "VK_EXT_external_memory_host); move the "
                                                   "buffer's bytes with buffer write and read",
                                                   core_->info.name)));
        if (vk_buffer.in_flight() != 0)
            return fail(in_flight_error(vk_buffer, "map"));
        const std::uint64_t align =
            std::max<std::uint64_t>({*alignment, vk_buffer.desc().alignment, 4096});
        const std::uint64_t bytes = (vk_buffer.desc().bytes + align - 1) / align * align;
        auto memory = SharedMemory::create(bytes, align, "vaccel-buffer");
        if (!memory)
            return fail(std::move(memory.error()));
        std::memcpy(memory->data(), vk_buffer.mapped, vk_buffer.desc().bytes);
        if (auto bound = bind_host_memory(vk_buffer, memory->data(), bytes); !bound)
            return fail(std::move(bound.error()));
        vk_buffer.shared = std::move(*memory);
        return MappableMemory{vk_buffer.mapped, vk_buffer.shared.fd(), 0};
    }

    explicit VulkanBackend(std::shared_ptr<DeviceCore> core)
        : core_(std::move(core)), completer_(core_), scheduler_(core_, completer_)
    {
        completer_.attach(&scheduler_);
    }

    // The tenant's flow is joined only before the context has queues (its
    // work so far is in its own flow); the policy applies from now on.
    void set_context_schedule(Context& context, const ContextSchedule& schedule) override
    {
        ContextState& state = *static_cast<VulkanContext&>(context).state;
        ContextSchedule applied = schedule;
        if (state.queues != 0) applied.flow = state.flow->key;
        state.flow = scheduler_.flow_for(applied, state.flow);
    }
    std::optional<DeviceService> device_service() const override { return scheduler_.report(); }

    const vaccel_device_info& device_info() const override { return core_->info; }
    std::vector<tosa::CapabilityDescriptor> tosa_descriptors() const override
    {
        return {vulkan_descriptor(
            StorageFeatures{core_->physical.storage_8bit, core_->physical.storage_16bit})};
    }

    DeviceState state() const override
    {
        return core_->lost.load(std::memory_order_acquire) ? DeviceState::lost : DeviceState::ok;
    }

    Result<std::unique_ptr<Context>> create_context() override
    {
        if (auto ok = refuse_if_lost(); !ok) return fail(ok.error());
        const auto& limits = core_->info.limits;
        const std::uint64_t used = core_->counters.contexts.load();
        if (used >= limits.max_contexts)
            return fail(Error::limit_hit(VACCEL_LIMIT_CONTEXTS, limits.max_contexts, used));
        auto context = std::make_shared<ContextState>(core_);
        VkCommandPoolCreateInfo pool{};
        pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
        // Reset per recording: the transfer command buffer is re-recorded per copy.
        pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pool.queueFamilyIndex = core_->physical.queue_family;
        if (VkResult r = vkCreateCommandPool(core_->device, &pool, nullptr, &context->pool);
            r != VK_SUCCESS) {
            context->pool = VK_NULL_HANDLE;
            return fail(vulkan_error(*core_, r, "creating a context's command pool"));
        }
        VkCommandBufferAllocateInfo allocate{};
        allocate.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
        allocate.commandPool = context->pool;
        allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        allocate.commandBufferCount = 1;
        if (VkResult r = vkAllocateCommandBuffers(core_->device, &allocate, &context->transfer);
            r != VK_SUCCESS)
            return fail(vulkan_error(*core_, r, "allocating a context's command buffer"));
        VkFenceCreateInfo fence{};
        fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
        if (VkResult r = vkCreateFence(core_->device, &fence, nullptr, &context->transfer_done);
            r != VK_SUCCESS) {
            context->transfer_done = VK_NULL_HANDLE;
            return fail(vulkan_error(*core_, r, "creating a context's transfer fence"));
        }
        auto ring = SubmissionRing::create(*core_, core_->tuning.descriptors);
        if (!ring) return fail(ring.error());
        context->ring = std::move(*ring);
        context->flow = scheduler_.own_flow();
        return std::make_unique<VulkanContext>(std::move(context));
    }

    Status destroy_context(std::unique_ptr<Context>& context) override
    {
        auto& state = *static_cast<VulkanContext&>(*context).state;
        const std::uint64_t gates = state.gates.load();
        const std::uint64_t children = state.buffers + state.queues + state.programs + gates;
        if (children != 0)
            return fail(Error::of(Errc::busy, VACCEL_D_IN_USE, children)
                            .with_note(fmt::format("the context still owns {} buffers, {} "
                                                   "programs, {} queues and {} gates; release "
                                                   "them first",
                                                   state.buffers, state.programs, state.queues,
                                                   gates)));
        context.reset();
        return {};
    }

    Result<std::unique_ptr<Buffer>> allocate_buffer(Context& context, const BufferDesc& desc,
                                                    BufferInfo& info) override;
    Status free_buffer(std::unique_ptr<Buffer>& buffer) override
    {
        const auto& vk_buffer = static_cast<const VulkanBuffer&>(*buffer);
        if (vk_buffer.in_flight() != 0)
            return fail(in_flight_error(vk_buffer, "free"));
        buffer.reset();
        return {};
    }
    Status write_buffer(Buffer& buffer, std::uint64_t offset,
                        std::span<const std::byte> data) override;
    Status read_buffer(Buffer& buffer, std::uint64_t offset, std::span<std::byte> data) override;

    // Called without the device serialisation: touches only the context
    // (its session's), atomics, and the queue under queue_mutex (constant
    // uploads through staging).
    Result<std::unique_ptr<Program>> load_program(Context& context,
                                                  const ProgramDesc& desc) override
    {
        if (desc.format != VACCEL_FORMAT_TOSA && desc.format != VACCEL_FORMAT_SPIRV)
            return fail(Error::of(Errc::unsupported, VACCEL_D_FORMAT, desc.format)
                            .with_note("the Vulkan device loads TOSA 1.0 programs and SPIR-V "
                                       "compute modules only; run other kernel programs on "
                                       "the device of their format"));
        if (desc.payload.size() > core_->info.limits.max_artifact_bytes)
            return fail(Error::limit_hit(VACCEL_LIMIT_ARTIFACT_BYTES,
                                         core_->info.limits.max_artifact_bytes,
                                         desc.payload.size()));
        auto& owner = static_cast<VulkanContext&>(context).state;
        if (owner->programs >= core_->info.limits.max_programs)
            return fail(Error::limit_hit(VACCEL_LIMIT_PROGRAMS, core_->info.limits.max_programs,
                                         owner->programs));
        if (auto ok = refuse_if_lost(); !ok) return fail(ok.error());
        auto program = desc.format == VACCEL_FORMAT_SPIRV ? load_spirv(owner, desc)
                                                          : load_tosa(owner, desc);
        if (!program) return fail(program.error());
        owner->programs += 1;
        return std::make_unique<VulkanProgram>(std::move(*program));
    }
    Status unload_program(std::unique_ptr<Program>& program) override
    {
        auto& state = static_cast<VulkanProgram&>(*program).state;
        if (const auto running = state->in_flight.load(std::memory_order_acquire); running != 0)
            return fail(Error::of(Errc::busy, VACCEL_D_IN_USE, running)
                            .with_note(fmt::format("the program has {} submission(s) in "
                                                   "flight; wait for their events first",
                                                   running)));
        state->owner->programs -= 1;
        program.reset();
        return {};
    }

    Result<std::unique_ptr<Queue>> create_queue(Context& context) override
    {
        if (auto ok = refuse_if_lost(); !ok) return fail(ok.error());
        auto& owner = static_cast<VulkanContext&>(context).state;
        const auto max = core_->info.limits.max_queues;
        if (owner->queues >= max)
            return fail(Error::limit_hit(VACCEL_LIMIT_QUEUES, max, owner->queues));
        return std::make_unique<VulkanQueue>(owner);
    }
    Status destroy_queue(std::unique_ptr<Queue>& queue) override
    {
        queue.reset();
        return {};
    }

    Result<std::unique_ptr<Gate>> create_gate(Context& context) override
    {
        if (auto ok = refuse_if_lost(); !ok) return fail(ok.error());
        auto& owner = static_cast<VulkanContext&>(context).state;
        const auto max = core_->info.limits.max_gates;
        if (owner->gates.load() >= max)
            return fail(Error::limit_hit(VACCEL_LIMIT_GATES, max, owner->gates.load()));
        auto gate = GateState::create(owner);
        if (!gate) return fail(gate.error());
        std::lock_guard lock(gates_mutex_);
        std::erase_if(live_gates_, [](const auto& weak) { return weak.expired(); });
        live_gates_.push_back(*gate);
        return std::make_unique<VulkanGate>(std::move(*gate));
    }
    Status raise_gate(Gate& gate, std::uint64_t value) override
    {
        auto released = static_cast<VulkanGate&>(gate).state->raise(value);
        if (!released) return fail(released.error());
        for (auto& submission : *released) start(std::move(submission));
        return {};
    }
    std::uint64_t gate_value(const Gate& gate) const override
    {
        return static_cast<const VulkanGate&>(gate).state->value();
    }
    Status destroy_gate(std::unique_ptr<Gate>& gate) override
    {
        for (GateState::Waiter& waiter : static_cast<VulkanGate&>(*gate).state->close())
            completer_.end_unstarted(
                *waiter.submission, EventState::cancelled,
                Error::of(Errc::cancelled, VACCEL_D_GATE_DESTROYED, 0, waiter.value)
                    .with_note(fmt::format("the gate this submission waited on was destroyed "
                                           "before it reached {}; the work never ran",
                                           waiter.value)));
        gate.reset();
        return {};
    }
    Result<Submitted> submit(const SubmitDesc& desc) override;
    Result<Submitted> launch(const LaunchDesc& desc) override;
    EventStatus poll(Event& event) override
    {
        const SubmissionState& s = *static_cast<VulkanEvent&>(event).submission;
        EventStatus status;
        status.state = static_cast<EventState>(s.state.load(std::memory_order_acquire));
        if (status.state == EventState::failed || status.state == EventState::cancelled)
            status.failure = s.failure;
        return status;
    }
    Status destroy_event(std::unique_ptr<Event>& event) override
    {
        const SubmissionState& s = *static_cast<VulkanEvent&>(*event).submission;
        if (s.state.load(std::memory_order_acquire) == VACCEL_EVENT_PENDING)
            return fail(Error::of(Errc::busy, VACCEL_D_NOT_COMPLETE)
                            .with_note("the event is still pending; wait for it first"));
        completer_.forget(&s);
        event.reset();
        return {};
    }
    // Submissions parked on a gate or waiting in the scheduler have not
    // started; what has started runs to its end.
    std::uint64_t cancel_pending(Context& context, const Error& why) override
    {
        const auto& owner = static_cast<VulkanContext&>(context).state;
        std::uint64_t cancelled = 0;
        for (auto& submission : scheduler_.take_unstarted(*owner)) {
            completer_.end_unstarted(*submission, EventState::cancelled, why);
            ++cancelled;
        }
        std::vector<std::shared_ptr<GateState>> gates;
        {
            std::lock_guard lock(gates_mutex_);
            for (const auto& weak : live_gates_)
                if (auto gate = weak.lock(); gate && gate->owner == owner)
                    gates.push_back(std::move(gate));
        }
        for (const auto& gate : gates)
            for (GateState::Waiter& waiter : gate->take()) {
                completer_.end_unstarted(*waiter.submission, EventState::cancelled, why);
                ++cancelled;
            }
        return cancelled;
    }

    LiveCounters live() const override { return core_->counters.snapshot(); }

private:
    // Binding `index` of a submission or launch: its buffer must belong to
    // the queue's context and its offset be a multiple of the device's
    // storage-buffer offset alignment.
    Status check_placement(std::size_t index, const Binding& b,
                           const std::shared_ptr<ContextState>& owner) const
    {
        if (static_cast<const VulkanBuffer&>(*b.buffer).owner != owner)
            return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT, index)
                            .with_note(fmt::format("binding {} names a buffer of another context",
                                                   index)));
        const std::uint64_t alignment = core_->physical.limits.minStorageBufferOffsetAlignment;
        if (b.offset % alignment != 0)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                                  offsetof(vaccel_binding, offset), b.offset)
                            .with_note(fmt::format("binding {}: offset {} is not a multiple of "
                                                   "the device's storage-buffer offset alignment "
                                                   "({} bytes); bind at an aligned offset",
                                                   index, b.offset, alignment)));
        return {};
    }

    Status refuse_if_lost() const
    {
        if (core_->lost.load(std::memory_order_acquire))
            return fail(Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE)
                            .with_note(fmt::format("the Vulkan device \"{}\" was lost; use "
                                                   "another device, or restart the daemon to "
                                                   "reset this one",
                                                   core_->info.name)));
        return {};
    }
    Status check_transfer(const VulkanBuffer& buffer, std::uint32_t usage, std::uint64_t offset,
                          std::uint64_t length, std::string_view what) const;

    // Gives an accepted submission released by its gate to the queue; one
    // that cannot start (device lost, deadline passed, submission refused)
    // fails, since it was accepted already.
    void start(std::shared_ptr<SubmissionState> submission);

    std::shared_ptr<DeviceCore> core_;
    std::mutex gates_mutex_;  // guards live_gates_
    std::vector<std::weak_ptr<GateState>> live_gates_;
    // Destroyed after the scheduler, so every accepted submission has been
    // waited for and reported while the device still exists.
    Completer completer_;
    // Declared last: destroyed first, putting what it still holds on the
    // device while the Completer can see it end.
    Scheduler scheduler_;
};

Result<Submitted> VulkanBackend::submit(const SubmitDesc& desc)
{
    auto& queue = static_cast<VulkanQueue&>(*desc.queue);
    auto& program = static_cast<VulkanProgram&>(*desc.program);
    if (auto ok = refuse_if_lost(); !ok) return fail(ok.error());
    if (program.state->format != VACCEL_FORMAT_TOSA)
        return fail(Error::of(Errc::incompatible, VACCEL_D_FORMAT, program.state->format)
                        .with_note("a kernel program is run with vaccel_launch, not submitted"));
    if (program.state->owner != queue.owner)
        return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT)
                        .with_note("the program belongs to another context than the queue"));
    auto* gate = static_cast<VulkanGate*>(desc.after);
    if (gate != nullptr && gate->state->owner != queue.owner)
        return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT)
                        .with_note("the gate belongs to another context than the queue"));
    for (std::size_t i = 0; i < desc.bindings.size(); ++i)
        if (desc.bindings[i].buffer == nullptr)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE, 0)
                            .with_note(fmt::format("binding {} names no buffer", i)));
    std::vector<validate::SlotSpec> slots;
    for (const SlotInfo& slot : program.state->slots) slots.push_back({slot.role, slot.bytes});
    std::vector<validate::BindingFacts> facts;
    for (const Binding& b : desc.bindings) {
        const auto& buffer = static_cast<const VulkanBuffer&>(*b.buffer);
        facts.push_back({b.slot, b.access, buffer.identity(), buffer.desc().bytes,
                         buffer.desc().usage, buffer.desc().access, b.offset, b.bytes});
    }
    if (auto ok = validate::bindings(slots, facts, core_->info.limits.max_bindings); !ok)
        return fail(ok.error());
    std::vector<BoundSlot> bound(slots.size());
    for (std::size_t i = 0; i < desc.bindings.size(); ++i) {
        const Binding& b = desc.bindings[i];
        if (auto ok = check_placement(i, b, queue.owner); !ok) return fail(ok.error());
        auto& buffer = static_cast<VulkanBuffer&>(*b.buffer);
        bound[b.slot] = BoundSlot{&buffer, b.offset, (b.access & VACCEL_ACCESS_WRITE) != 0};
    }
    // A full ring is refused before the buffers' in-flight state is looked
    // at. Only this (device-serialised) call takes slots, so a free slot seen
    // here is still free when record_only takes it.
    if (queue.owner->ring->in_use() + queue.owner->ring->retired() >= ring_depth)
        return fail(ring_full_error());
    for (const Binding& b : desc.bindings) {
        const auto& buffer = static_cast<const VulkanBuffer&>(*b.buffer);
        const bool writes = (b.access & VACCEL_ACCESS_WRITE) != 0;
        if (buffer.writers.load(std::memory_order_acquire) != 0 ||
            (writes && buffer.in_flight() != 0))
            return fail(in_flight_error(buffer, writes ? "binding a buffer for writing"
                                                       : "binding a buffer for reading"));
    }
    if (desc.deadline_ns != 0 && monotonic_ns() >= desc.deadline_ns)
        return fail(Error::of(Errc::deadline_expired, VACCEL_D_DEADLINE)
                        .with_note("the deadline had already passed when the work was "
                                   "submitted; nothing ran"));
    const auto max_events = core_->info.limits.max_events;
    if (queue.owner->events.load() >= max_events)
        return fail(Error::limit_hit(VACCEL_LIMIT_EVENTS, max_events, queue.owner->events.load()));
    if (gate == nullptr) {
        auto submission = record_only(queue.owner, program.state, bound, desc.sink);
        if (!submission) return fail(submission.error());
        (*submission)->deadline_ns = desc.deadline_ns;
        core_->counters.events_in_flight.fetch_add(1);
        Submitted submitted;
        submitted.event = std::make_unique<VulkanEvent>(*submission);
        if (core_->accepted.fetch_add(1) == core_->inject_loss_after) {
            // Fault injection: the device dies while taking this work, so
            // whether it was taken cannot be confirmed. The completion thread
            // sees the loss and fails it with everything else still pending.
            core_->lost.store(true, std::memory_order_release);
            submitted.indeterminate =
                Error::of(Errc::device_lost, VACCEL_D_INDETERMINATE)
                    .with_note("the device was lost while accepting this work; its event "
                               "reports the outcome");
        }
        scheduler_.enqueue(std::move(*submission));
        return submitted;
    }
    // SUBMIT_AFTER: recorded now (refusals happen here), accepted, and held
    // on the host until the gate reaches the value (gate.hpp).
    auto submission = record_only(queue.owner, program.state, bound, desc.sink);
    if (!submission) return fail(submission.error());
    (*submission)->gate = gate->state;
    (*submission)->after_value = desc.after_value;
    (*submission)->deadline_ns = desc.deadline_ns;
    core_->counters.events_in_flight.fetch_add(1);
    Submitted submitted;
    submitted.event = std::make_unique<VulkanEvent>(*submission);
    if (!gate->state->park(*submission, desc.after_value)) start(std::move(*submission));
    return submitted;
}

// A SPIR-V kernel (launch.hpp): refused in the CPU's order (format, entry,
// the work's context and bindings, the argv's pointers), then this
// device's limits (push bytes, storage buffers, grid), deadline and
// events, the ring, and the buffers' in-flight state.
Result<Submitted> VulkanBackend::launch(const LaunchDesc& desc)
{
    auto& queue = static_cast<VulkanQueue&>(*desc.queue);
    auto& program = static_cast<VulkanProgram&>(*desc.program);
    if (program.state->format != VACCEL_FORMAT_SPIRV)
        return fail(Error::of(Errc::incompatible, VACCEL_D_FORMAT, program.state->format)
                        .with_note("only kernel programs are launched; submit TOSA programs "
                                   "with vaccel_submit"));
    const auto& entries = program.state->entries;
    if (std::ranges::find(entries, desc.entry) == entries.end()) {
        std::string names;
        for (const std::string& name : entries) names += (names.empty() ? "" : ", ") + name;
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_KERNEL_ENTRY)
                        .with_note(fmt::format("\"{}\" is not a GLCompute entry point of the "
                                               "SPIR-V module (entries: {})",
                                               desc.entry, names)));
    }
    if (auto ok = refuse_if_lost(); !ok) return fail(ok.error());
    if (program.state->owner != queue.owner)
        return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT)
                        .with_note("the program belongs to another context than the queue"));
    for (std::size_t i = 0; i < desc.bindings.size(); ++i)
        if (desc.bindings[i].buffer == nullptr)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE, 0)
                            .with_note(fmt::format("binding {} names no buffer", i)));
    std::vector<validate::BindingFacts> facts;
    for (const Binding& b : desc.bindings) {
        const auto& buffer = static_cast<const VulkanBuffer&>(*b.buffer);
        facts.push_back({b.slot, b.access, buffer.identity(), buffer.desc().bytes,
                         buffer.desc().usage, buffer.desc().access, b.offset, b.bytes});
    }
    if (auto ok = validate::launch_bindings(facts, core_->info.limits.max_bindings); !ok)
        return fail(ok.error());
    std::vector<vaccel_binding> wire(desc.bindings.size());
    for (std::size_t i = 0; i < desc.bindings.size(); ++i) {
        const Binding& b = desc.bindings[i];
        if (auto ok = check_placement(i, b, queue.owner); !ok) return fail(ok.error());
        wire[i] = vaccel_binding{b.slot, b.access, i, b.offset, b.bytes};
    }
    auto mapped = map_kernel_args(desc.args, wire, core_->tuning.push_constant_bytes,
                                  core_->tuning.descriptors);
    if (!mapped) return fail(mapped.error());
    if (auto ok = validate::launch_dims(desc.dims); !ok) return fail(ok.error());
    // The grid is the number of workgroups; their size is the module's own.
    const auto& counts = core_->physical.limits.maxComputeWorkGroupCount;
    for (std::size_t i = 0; i < 3; ++i)
        if (desc.dims.grid[i] > counts[i])
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_LAUNCH_DIMS,
                                  offsetof(vaccel_launch, dims) +
                                      offsetof(vaccel_launch_dims, grid) + 4 * i,
                                  desc.dims.grid[i])
                            .with_note(fmt::format("grid[{}] is {} workgroups, more than the "
                                                   "device's {}; launch fewer, larger "
                                                   "workgroups or loop in the kernel",
                                                   i, desc.dims.grid[i], counts[i])));
    if (desc.deadline_ns != 0 && monotonic_ns() >= desc.deadline_ns)
        return fail(Error::of(Errc::deadline_expired, VACCEL_D_DEADLINE)
                        .with_note("the deadline had already passed when the work was "
                                   "submitted; nothing ran"));
    const auto max_events = core_->info.limits.max_events;
    if (queue.owner->events.load() >= max_events)
        return fail(Error::limit_hit(VACCEL_LIMIT_EVENTS, max_events, queue.owner->events.load()));
    if (queue.owner->ring->in_use() + queue.owner->ring->retired() >= ring_depth)
        return fail(ring_full_error());
    std::vector<BoundSlot> held;
    for (const Binding& b : desc.bindings) {
        auto& buffer = static_cast<VulkanBuffer&>(*b.buffer);
        const bool writes = (b.access & VACCEL_ACCESS_WRITE) != 0;
        if (buffer.writers.load(std::memory_order_acquire) != 0 ||
            (writes && buffer.in_flight() != 0))
            return fail(in_flight_error(buffer, writes ? "binding a buffer for writing"
                                                       : "binding a buffer for reading"));
        held.push_back(BoundSlot{&buffer, b.offset, writes});
    }
    auto kernel = kernel_pipeline(*program.state, std::string(desc.entry),
                                  static_cast<std::uint32_t>(mapped->buffers.size()),
                                  static_cast<std::uint32_t>(mapped->push.size()));
    if (!kernel) return fail(kernel.error());
    LaunchRecord record;
    record.kernel = *kernel;
    for (const KernelBuffer& k : mapped->buffers) {
        const Binding& b = desc.bindings[k.binding];
        record.buffers.push_back(
            {static_cast<VulkanBuffer&>(*b.buffer).buffer, b.offset,
             // Whole words: buffers are allocated in words (objects.hpp).
             (k.bytes + word_bytes - 1) / word_bytes * word_bytes});
    }
    record.push = std::move(mapped->push);
    record.grid = {desc.dims.grid[0], desc.dims.grid[1], desc.dims.grid[2]};
    auto submission = record_only(queue.owner, program.state, held, desc.sink, std::move(record));
    if (!submission) return fail(submission.error());
    (*submission)->deadline_ns = desc.deadline_ns;
    core_->counters.events_in_flight.fetch_add(1);
    Submitted submitted;
    submitted.event = std::make_unique<VulkanEvent>(*submission);
    scheduler_.enqueue(std::move(*submission));
    return submitted;
}

void VulkanBackend::start(std::shared_ptr<SubmissionState> submission)
{
    if (auto ok = refuse_if_lost(); !ok) {
        completer_.end_unstarted(*submission, EventState::failed, ok.error());
        return;
    }
    scheduler_.enqueue(std::move(submission));
}

Result<std::unique_ptr<Buffer>> VulkanBackend::allocate_buffer(Context& context,
                                                               const BufferDesc& desc,
                                                               BufferInfo& info)
{
    const auto& device = core_->info;
    if (auto valid = validate::buffer_desc(device, desc.bytes, desc.alignment, desc.domain,
                                           desc.usage, desc.access);
        !valid)
        return fail(valid.error());
    if (auto ok = refuse_if_lost(); !ok) return fail(ok.error());
    // validate::buffer_desc refused a domain the plan lacks (memory_caps).
    const std::uint32_t type = *type_for_domain(core_->plan, desc.domain);
    auto& owner = static_cast<VulkanContext&>(context).state;
    if (owner->buffers >= device.limits.max_buffers)
        return fail(Error::limit_hit(VACCEL_LIMIT_BUFFERS, device.limits.max_buffers,
                                     owner->buffers));

    VkDevice d = core_->device;
    auto buffer = std::make_unique<VulkanBuffer>(owner, desc);
    // Whole words: the device reads and writes storage by 4-byte words, and
    // staging copies whole words (staging.hpp).
    const std::uint64_t rounded = (desc.bytes + word_bytes - 1) / word_bytes * word_bytes;
    VkBufferCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    create.size = rounded;
    create.usage = buffer_usage;
    create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (VkResult r = vkCreateBuffer(d, &create, nullptr, &buffer->buffer); r != VK_SUCCESS) {
        buffer->buffer = VK_NULL_HANDLE;
        return fail(vulkan_error(*core_, r, "creating a buffer"));
    }
    VkMemoryRequirements needs{};
    vkGetBufferMemoryRequirements(d, buffer->buffer, &needs);
    if ((needs.memoryTypeBits & (1u << type)) == 0)
        return fail(Error::of(Errc::incompatible, VACCEL_D_BAD_VALUE,
                              offsetof(vaccel_buffer_alloc, domain), desc.domain)
                        .with_note(fmt::format("a buffer of {} bytes cannot live in memory type "
                                               "{} chosen for this domain; try another domain",
                                               desc.bytes, type)));
    if (owner->memory_bytes + needs.size > device.limits.max_memory_bytes)
        return fail(Error::limit_hit(VACCEL_LIMIT_MEMORY_BYTES, device.limits.max_memory_bytes,
                                     owner->memory_bytes));
    VkMemoryDedicatedAllocateInfo dedicated{};
    dedicated.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO;
    dedicated.buffer = buffer->buffer;
    VkMemoryAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    allocate.pNext = &dedicated;
    allocate.allocationSize = needs.size;
    allocate.memoryTypeIndex = type;
    if (VkResult r = vkAllocateMemory(d, &allocate, nullptr, &buffer->memory); r != VK_SUCCESS) {
        buffer->memory = VK_NULL_HANDLE;
        return fail(vulkan_error(*core_, r,
                                 fmt::format("allocating {} bytes of device memory", needs.size)));
    }
    if (VkResult r = vkBindBufferMemory(d, buffer->buffer, buffer->memory, 0); r != VK_SUCCESS)
        return fail(vulkan_error(*core_, r, "binding buffer memory"));
    const VkMemoryPropertyFlags flags = core_->physical.memory.memoryTypes[type].propertyFlags;
    // Alignment is measured: the mapping's address when mapped, else the
    // binding requirement, the only guarantee observable without device addresses.
    std::uint64_t alignment = std::max<std::uint64_t>(needs.alignment, 1);
    if ((flags & host_coherent_flags) == host_coherent_flags) {
        void* pointer = nullptr;
        if (VkResult r = vkMapMemory(d, buffer->memory, 0, VK_WHOLE_SIZE, 0, &pointer);
            r != VK_SUCCESS)
            return fail(vulkan_error(*core_, r, "mapping buffer memory"));
        buffer->mapped = static_cast<std::byte*>(pointer);
        alignment = address_alignment(reinterpret_cast<std::uintptr_t>(pointer));
        // New memory reads as zero, as on every other device (the CPU's too).
        std::memset(buffer->mapped, 0, rounded);
    }
    if (desc.alignment != 0 && alignment < desc.alignment)
        return fail(Error::of(Errc::resource_limit, VACCEL_D_BAD_VALUE,
                              offsetof(vaccel_buffer_alloc, alignment), desc.alignment)
                        .with_note(fmt::format("the device gave an allocation aligned to {} "
                                               "bytes, less than the {} asked for",
                                               alignment, desc.alignment)));
    buffer->allocation_bytes = needs.size;
    buffer->serial = core_->next_identity++;
    owner->buffers += 1;
    owner->memory_bytes += needs.size;
    core_->counters.buffers.fetch_add(1);
    core_->counters.buffer_bytes.fetch_add(needs.size);

    info.allocation_bytes = needs.size;
    info.measured_alignment = alignment;
    info.properties = VACCEL_PROP_DIRECT_BINDING;
    if (buffer->mapped != nullptr)
        info.properties |= VACCEL_PROP_HOST_VISIBLE | VACCEL_PROP_COHERENT;
    if ((flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0)
        info.properties |= VACCEL_PROP_DEVICE_LOCAL;
    return buffer;
}

Result<std::unique_ptr<Buffer>> VulkanBackend::import_host(Context& context,
                                                          const BufferDesc& desc, void* memory,
                                                          std::uint64_t bytes, BufferInfo& info)
{
    const auto& device = core_->info;
    if (auto valid = validate::buffer_desc(device, desc.bytes, desc.alignment, desc.domain,
                                           desc.usage, desc.access);
        !valid)
        return fail(valid.error());
    if (auto ok = refuse_if_lost(); !ok) return fail(ok.error());
    const auto alignment = core_->physical.host_import_alignment;
    if (!alignment)
        return fail(Error::of(Errc::unsupported)
                        .with_note(fmt::format("\"{}\" cannot import host memory (no "
                                               "VK_EXT_external_memory_host); allocate a buffer "
                                               "and write it instead",
                                               device.name)));
    if (desc.domain == VACCEL_DOMAIN_DEVICE)
        return fail(Error::of(Errc::unsupported, VACCEL_D_BAD_VALUE,
                              offsetof(vaccel_buffer_alloc, domain), desc.domain)
                        .with_note("imported host memory is in the HOST or SHARED domain, "
                                   "never DEVICE; ask for HOST"));
    const auto address = reinterpret_cast<std::uintptr_t>(memory);
    if (memory == nullptr || address % *alignment != 0 || bytes == 0 || bytes % *alignment != 0)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, address, bytes)
                        .with_note(fmt::format("host memory at {:#x} of {} bytes cannot be "
                                               "imported: the address and the length must be "
                                               "non-zero multiples of the device's {}-byte "
                                               "import alignment (minImportedHostPointer"
                                               "Alignment); use aligned_alloc or mmap",
                                               address, bytes, *alignment)));
    if (desc.bytes > bytes)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, desc.bytes, bytes)
                        .with_note(fmt::format("a {}-byte buffer does not fit the {} bytes of "
                                               "host memory given",
                                               desc.bytes, bytes)));
    auto& owner = static_cast<VulkanContext&>(context).state;
    if (owner->buffers >= device.limits.max_buffers)
        return fail(Error::limit_hit(VACCEL_LIMIT_BUFFERS, device.limits.max_buffers,
                                     owner->buffers));
    if (owner->memory_bytes + bytes > device.limits.max_memory_bytes)
        return fail(Error::limit_hit(VACCEL_LIMIT_MEMORY_BYTES, device.limits.max_memory_bytes,
                                     owner->memory_bytes));
    auto buffer = std::make_unique<VulkanBuffer>(owner, desc);
    auto type = bind_host_memory(*buffer, memory, bytes);
    if (!type)
        return fail(std::move(type.error()));
    const std::uint64_t measured = address_alignment(address);
    if (desc.alignment != 0 && measured < desc.alignment)
        return fail(Error::of(Errc::resource_limit, VACCEL_D_BAD_VALUE,
                              offsetof(vaccel_buffer_alloc, alignment), desc.alignment)
                        .with_note(fmt::format("the host memory is aligned to {} bytes, less "
                                               "than the {} asked for",
                                               measured, desc.alignment)));
    buffer->allocation_bytes = bytes;
    buffer->serial = core_->next_identity++;
    owner->buffers += 1;
    owner->memory_bytes += bytes;
    core_->counters.buffers.fetch_add(1);
    core_->counters.buffer_bytes.fetch_add(bytes);
    info.allocation_bytes = bytes;
    info.measured_alignment = measured;
    info.properties = VACCEL_PROP_DIRECT_BINDING | VACCEL_PROP_HOST_VISIBLE | VACCEL_PROP_COHERENT;
    if ((core_->physical.memory.memoryTypes[*type].propertyFlags &
         VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0)
        info.properties |= VACCEL_PROP_DEVICE_LOCAL;
    return std::unique_ptr<Buffer>(std::move(buffer));
}

// Makes a buffer over `bytes` of host memory at `memory` (aligned to the
// import alignment) and binds it; on success the new VkBuffer and its
// imported memory replace `buffer`'s (the old ones, if any, are released)
// and `buffer.mapped` is `memory`. Returns the memory type used. On failure
// `buffer` is untouched.
Result<std::uint32_t> VulkanBackend::bind_host_memory(VulkanBuffer& buffer, void* memory,
                                                      std::uint64_t bytes)
{
    const auto address = reinterpret_cast<std::uintptr_t>(memory);
    struct Created {
        VkDevice device = VK_NULL_HANDLE;
        VkBuffer buffer = VK_NULL_HANDLE;
        VkDeviceMemory memory = VK_NULL_HANDLE;
        ~Created()
        {
            if (buffer != VK_NULL_HANDLE)
                vkDestroyBuffer(device, buffer, nullptr);
            if (memory != VK_NULL_HANDLE)
                vkFreeMemory(device, memory, nullptr);
        }
    } created;
    created.device = core_->device;
    VkDevice d = core_->device;
    auto properties_of = reinterpret_cast<PFN_vkGetMemoryHostPointerPropertiesEXT>(
        vkGetDeviceProcAddr(d, "vkGetMemoryHostPointerPropertiesEXT"));
    VkMemoryHostPointerPropertiesEXT host{};
    host.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT;
    if (properties_of == nullptr ||
        properties_of(d, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, memory, &host) !=
            VK_SUCCESS)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, address, bytes)
                        .with_note("the driver cannot import this host memory (it must be "
                                   "ordinary anonymous or huge-page memory)"));
    VkExternalMemoryBufferCreateInfo external{};
    external.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
    external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    VkBufferCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    create.pNext = &external;
    create.size = bytes;
    create.usage = buffer_usage;
    create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (VkResult r = vkCreateBuffer(d, &create, nullptr, &created.buffer); r != VK_SUCCESS) {
        created.buffer = VK_NULL_HANDLE;
        return fail(vulkan_error(*core_, r, "creating a buffer over host memory"));
    }
    VkMemoryRequirements needs{};
    vkGetBufferMemoryRequirements(d, created.buffer, &needs);
    // A host-coherent type both the pointer and the buffer allow; the
    // plan's Host type first.
    const std::uint32_t allowed = host.memoryTypeBits & needs.memoryTypeBits;
    std::optional<std::uint32_t> type;
    if (auto preferred = type_for_domain(core_->plan, VACCEL_DOMAIN_HOST);
        preferred && (allowed & (1u << *preferred)) != 0)
        type = *preferred;
    for (std::uint32_t i = 0; !type && i < core_->physical.memory.memoryTypeCount; ++i)
        if ((allowed & (1u << i)) != 0 &&
            (core_->physical.memory.memoryTypes[i].propertyFlags & host_coherent_flags) ==
                host_coherent_flags)
            type = i;
    if (!type || needs.size > bytes)
        return fail(Error::of(Errc::incompatible, VACCEL_D_BAD_VALUE, address, bytes)
                        .with_note("no host-coherent memory type of the device can hold a "
                                   "storage buffer over this host memory"));
    VkImportMemoryHostPointerInfoEXT import{};
    import.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT;
    import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    import.pHostPointer = memory;
    VkMemoryAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    allocate.pNext = &import;
    allocate.allocationSize = bytes;
    allocate.memoryTypeIndex = *type;
    if (VkResult r = vkAllocateMemory(d, &allocate, nullptr, &created.memory); r != VK_SUCCESS) {
        created.memory = VK_NULL_HANDLE;
        return fail(vulkan_error(*core_, r, "importing host memory"));
    }
    if (VkResult r = vkBindBufferMemory(d, created.buffer, created.memory, 0); r != VK_SUCCESS)
        return fail(vulkan_error(*core_, r, "binding imported host memory"));
    VkDevice old_device = core_->device;
    if (buffer.mapped != nullptr && !buffer.imported)
        vkUnmapMemory(old_device, buffer.memory);
    if (buffer.buffer != VK_NULL_HANDLE)
        vkDestroyBuffer(old_device, buffer.buffer, nullptr);
    if (buffer.memory != VK_NULL_HANDLE)
        vkFreeMemory(old_device, buffer.memory, nullptr);
    buffer.buffer = std::exchange(created.buffer, VK_NULL_HANDLE);
    buffer.memory = std::exchange(created.memory, VK_NULL_HANDLE);
    buffer.mapped = static_cast<std::byte*>(memory);
    buffer.imported = true;
    return *type;
}

Status VulkanBackend::check_transfer(const VulkanBuffer& buffer, std::uint32_t usage,
                                     std::uint64_t offset, std::uint64_t length,
                                     std::string_view what) const
{
    if ((buffer.desc().usage & usage) == 0)
        return fail(Error::of(Errc::permission_denied, VACCEL_D_USAGE, usage, buffer.desc().usage)
                        .with_note(fmt::format("{} refused: the buffer was allocated without "
                                               "the {} usage",
                                               what,
                                               usage == VACCEL_USAGE_TRANSFER_DST
                                                   ? "TRANSFER_DST"
                                                   : "TRANSFER_SRC")));
    if (buffer.in_flight() != 0) return fail(in_flight_error(buffer, what));
    auto end = validate::range(buffer.desc().bytes, offset, length);
    if (!end) return fail(end.error());
    return refuse_if_lost();
}

Status VulkanBackend::write_buffer(Buffer& buffer, std::uint64_t offset,
                                   std::span<const std::byte> data)
{
    auto& target = static_cast<VulkanBuffer&>(buffer);
    if (auto ok = check_transfer(target, VACCEL_USAGE_TRANSFER_DST, offset, data.size(), "write");
        !ok)
        return ok;
    if (target.mapped != nullptr && !core_->options.stage_all_transfers) {
        // Host-coherent: no flush needed.
        std::memcpy(target.mapped + offset, data.data(), data.size());
        return {};
    }
    DeviceCopier copier(*target.owner, target.buffer, staging_size_for(offset, data.size()));
    if (auto ok = copier.ready(); !ok) return ok;
    return write_through_staging(copier, offset, data);
}

Status VulkanBackend::read_buffer(Buffer& buffer, std::uint64_t offset, std::span<std::byte> data)
{
    auto& source = static_cast<VulkanBuffer&>(buffer);
    if (auto ok = check_transfer(source, VACCEL_USAGE_TRANSFER_SRC, offset, data.size(), "read");
        !ok)
        return ok;
    if (source.mapped != nullptr && !core_->options.stage_all_transfers) {
        std::memcpy(data.data(), source.mapped + offset, data.size());
        return {};
    }
    DeviceCopier copier(*source.owner, source.buffer, staging_size_for(offset, data.size()));
    if (auto ok = copier.ready(); !ok) return ok;
    return read_through_staging(copier, offset, data);
}

}  // namespace
}  // namespace vulkan

std::optional<std::uint64_t> vulkan_host_import_alignment(const Backend& device)
{
    const auto* vulkan = dynamic_cast<const vulkan::VulkanBackend*>(&device);
    return vulkan == nullptr ? std::nullopt : vulkan->import_alignment();
}

Result<std::unique_ptr<Buffer>> import_host_buffer(Backend& device, Context& context,
                                                   const BufferDesc& desc, void* memory,
                                                   std::uint64_t bytes, BufferInfo& info)
{
    auto* vulkan = dynamic_cast<vulkan::VulkanBackend*>(&device);
    if (vulkan == nullptr)
        return fail(Error::of(Errc::unsupported)
                        .with_note("host memory import is a Vulkan device's; this device is "
                                   "not one"));
    return vulkan->import_host(context, desc, memory, bytes, info);
}

VulkanDevices open_vulkan_devices(const VulkanOptions& options)
{
    VulkanDevices out;
    vulkan::Probe probe = vulkan::probe_devices();
    out.unavailable = std::move(probe.unavailable);
    out.probe = std::move(probe.lines);
    for (const auto& record : probe.served) {
        auto core = vulkan::open_device(probe.instance, record, options);
        if (!core) {
            out.probe[record.probe_line].served = false;
            out.probe[record.probe_line].reason = core.error();
            continue;
        }
        if (out.devices.size() == options.inject_loss_device)
            (*core)->inject_loss_after = options.inject_loss_after;
        out.devices.push_back(std::make_unique<vulkan::VulkanBackend>(std::move(*core)));
    }
    for (const auto& line : out.probe) {
        if (line.served)
            spdlog::debug("vulkan: serving {}", line.name);
        else
            spdlog::warn("vulkan: {}", line.reason);
    }
    if (!out.unavailable.empty())
        spdlog::debug("vulkan: no Vulkan device: {}", out.unavailable);
    return out;
}

}  // namespace vaccel::backend
