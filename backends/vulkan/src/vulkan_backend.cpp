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
//  - programs, submissions, launches and gates are refused (Unsupported)
//    until the backend runs programs: the device advertises no format and
//    no capability, so no client is sent here for a program.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "device_info.hpp"
#include "instance.hpp"
#include "memory_plan.hpp"
#include "objects.hpp"
#include "transfer.hpp"
#include "vaccel/backend/vulkan.hpp"
#include "vaccel/common/validation.hpp"

namespace vaccel::backend {

namespace vulkan {
namespace {

constexpr VkBufferUsageFlags buffer_usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_DST_BIT;

constexpr const char* no_programs_yet =
    "the Vulkan backend does not run programs yet; use the cpu device (vaccelctl --device cpu "
    "or auto)";

// The largest power of two dividing `address` (2^40 for zero).
std::uint64_t address_alignment(std::uint64_t address)
{
    return address == 0 ? std::uint64_t{1} << 40 : address & (~address + 1);
}

Error unsupported(std::string_view what)
{
    return Error::of(Errc::unsupported).with_note(fmt::format("{}: {}", what, no_programs_yet));
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
    // are for gates (docs/adr/0013). Nothing else is enabled, so no memory
    // type needing another feature may be chosen (memory_plan.hpp).
    VkPhysicalDeviceVulkan13Features f13{};
    f13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
    f13.synchronization2 = VK_TRUE;
    VkPhysicalDeviceVulkan12Features f12{};
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    f12.timelineSemaphore = VK_TRUE;
    f12.pNext = &f13;
    VkDeviceCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    create.pNext = &f12;
    create.queueCreateInfoCount = 1;
    create.pQueueCreateInfos = &queue;
    if (VkResult r = vkCreateDevice(record.handle, &create, nullptr, &state->device);
        r != VK_SUCCESS) {
        state->device = VK_NULL_HANDLE;
        return std::unexpected(
            open_failure(record, fmt::format("vkCreateDevice failed (VkResult {})",
                                             static_cast<int>(r))));
    }
    vkGetDeviceQueue(state->device, record.queue_family, 0, &state->queue);

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
    state->info = describe_device(record, *plan);
    return state;
}

class VulkanBackend final : public Backend {
public:
    explicit VulkanBackend(std::shared_ptr<DeviceCore> core) : core_(std::move(core)) {}

    const vaccel_device_info& device_info() const override { return core_->info; }

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
        return std::make_unique<VulkanContext>(std::move(context));
    }

    Status destroy_context(std::unique_ptr<Context>& context) override
    {
        auto& state = *static_cast<VulkanContext&>(*context).state;
        const std::uint64_t children = state.buffers + state.queues;
        if (children != 0)
            return fail(Error::of(Errc::busy, VACCEL_D_IN_USE, children)
                            .with_note(fmt::format("the context still owns {} buffers and {} "
                                                   "queues; release them first",
                                                   state.buffers, state.queues)));
        context.reset();
        return {};
    }

    Result<std::unique_ptr<Buffer>> allocate_buffer(Context& context, const BufferDesc& desc,
                                                    BufferInfo& info) override;
    Status free_buffer(std::unique_ptr<Buffer>& buffer) override
    {
        // Nothing binds a buffer yet (no submissions), so a free never waits.
        buffer.reset();
        return {};
    }
    Status write_buffer(Buffer& buffer, std::uint64_t offset,
                        std::span<const std::byte> data) override;
    Status read_buffer(Buffer& buffer, std::uint64_t offset, std::span<std::byte> data) override;

    // Safe against every other call: touches nothing.
    Result<std::unique_ptr<Program>> load_program(Context&, const ProgramDesc& desc) override
    {
        return fail(Error::of(Errc::unsupported, VACCEL_D_FORMAT, desc.format)
                        .with_note(no_programs_yet));
    }
    Status unload_program(std::unique_ptr<Program>& program) override
    {
        program.reset();  // none can exist: load_program refuses every format
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

    Result<std::unique_ptr<Gate>> create_gate(Context&) override
    {
        return fail(unsupported("host gates"));
    }
    Status raise_gate(Gate&, std::uint64_t) override { return fail(unsupported("host gates")); }
    std::uint64_t gate_value(const Gate&) const override { return 0; }
    Status destroy_gate(std::unique_ptr<Gate>& gate) override
    {
        gate.reset();
        return {};
    }
    Result<Submitted> submit(const SubmitDesc&) override
    {
        return fail(unsupported("submissions"));
    }
    Result<Submitted> launch(const LaunchDesc&) override { return fail(unsupported("launches")); }
    // No event can exist (submit and launch refuse), so these never see one.
    EventStatus poll(Event&) override
    {
        EventStatus status;
        status.state = EventState::failed;
        status.failure = unsupported("events");
        return status;
    }
    Status destroy_event(std::unique_ptr<Event>& event) override
    {
        event.reset();
        return {};
    }
    std::uint64_t cancel_pending(Context&, const Error&) override { return 0; }

    LiveCounters live() const override
    {
        const Counters& c = core_->counters;
        LiveCounters live;
        live.contexts = c.contexts.load();
        live.buffers = c.buffers.load();
        live.buffer_bytes = c.buffer_bytes.load();
        live.queues = c.queues.load();
        return live;
    }

private:
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

    std::shared_ptr<DeviceCore> core_;
};

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
