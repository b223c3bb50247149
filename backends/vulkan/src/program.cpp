// program.cpp - loading a TOSA program on a Vulkan device (program.hpp).
#include "program.hpp"

#include <fmt/format.h>

#include <cstring>
#include <map>

#include "kernels.hpp"
#include "lowering.hpp"
#include "lowering_matmul.hpp"
#include "spirv_module.hpp"
#include "transfer.hpp"
#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/capability.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::backend::vulkan {
namespace {

Status make_layouts(ProgramState& program)
{
    VkDevice d = program.owner->device->device;
    VkDescriptorSetLayoutBinding binding{};
    binding.binding = 0;
    binding.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    binding.descriptorCount = program.plan.buffer_count();
    binding.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    VkDescriptorSetLayoutCreateInfo set{};
    set.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    set.bindingCount = 1;
    set.pBindings = &binding;
    if (VkResult r = vkCreateDescriptorSetLayout(d, &set, nullptr, &program.set_layout);
        r != VK_SUCCESS) {
        program.set_layout = VK_NULL_HANDLE;
        return fail(vulkan_error(*program.owner->device, r, "creating a descriptor set layout"));
    }
    // The tile and k ranges of a sliced dispatch (slice.glsl); kernels
    // without tile loops ignore them.
    VkPushConstantRange slice{VK_SHADER_STAGE_COMPUTE_BIT, 0, 4 * sizeof(std::uint32_t)};
    VkPipelineLayoutCreateInfo layout{};
    layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &program.set_layout;
    layout.pushConstantRangeCount = 1;
    layout.pPushConstantRanges = &slice;
    if (VkResult r = vkCreatePipelineLayout(d, &layout, nullptr, &program.layout);
        r != VK_SUCCESS) {
        program.layout = VK_NULL_HANDLE;
        return fail(vulkan_error(*program.owner->device, r, "creating a pipeline layout"));
    }
    return {};
}

// The timestamps of the profiling run (program.hpp), where the queue has them.
Status make_profile_queries(ProgramState& program)
{
    DeviceCore& core = *program.owner->device;
    if (!core.timestamps || program.plan.dispatches.empty()) return {};
    VkQueryPoolCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    create.queryType = VK_QUERY_TYPE_TIMESTAMP;
    create.queryCount = static_cast<std::uint32_t>(program.plan.dispatches.size() + 1);
    if (VkResult r = vkCreateQueryPool(core.device, &create, nullptr, &program.profile_queries);
        r != VK_SUCCESS) {
        program.profile_queries = VK_NULL_HANDLE;
        return fail(vulkan_error(core, r, "creating the program's profile timestamps"));
    }
    return {};
}

// One pipeline per distinct (kernel, specialization words); constant 0 is
// the buffer count, the spec words follow from constant 1.
Result<VkPipeline> make_pipeline(ProgramState& program, const tosa::KernelSpec& spec)
{
    DeviceCore& core = *program.owner->device;
    // One module per kernel per device (pipeline_cache.hpp), kept with the device.
    auto module = core.pipelines->module(kernel_spirv(spec.kernel));
    if (!module) return fail(module.error());
    std::vector<std::uint32_t> words;
    words.push_back(program.plan.buffer_count());
    words.insert(words.end(), spec.spec.begin(), spec.spec.end());
    std::vector<VkSpecializationMapEntry> entries(words.size());
    for (std::uint32_t i = 0; i < words.size(); ++i)
        entries[i] = {i, i * 4, 4};
    VkSpecializationInfo specialization{};
    specialization.mapEntryCount = static_cast<std::uint32_t>(entries.size());
    specialization.pMapEntries = entries.data();
    specialization.dataSize = words.size() * 4;
    specialization.pData = words.data();
    VkComputePipelineCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    create.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    create.stage.module = *module;
    create.stage.pName = "main";
    create.stage.pSpecializationInfo = &specialization;
    create.layout = program.layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    const VkResult r = vkCreateComputePipelines(core.device, core.pipelines->handle(), 1, &create,
                                                nullptr, &pipeline);
    if (r != VK_SUCCESS) return fail(vulkan_error(core, r, "creating a compute pipeline"));
    return pipeline;
}

Status make_pipelines(ProgramState& program)
{
    std::map<std::pair<std::uint32_t, std::vector<std::uint32_t>>, std::uint32_t> seen;
    for (const tosa::Dispatch& dispatch : program.plan.dispatches) {
        auto key = std::make_pair(dispatch.kernel.kernel, dispatch.kernel.spec);
        auto found = seen.find(key);
        if (found == seen.end()) {
            auto pipeline = make_pipeline(program, dispatch.kernel);
            if (!pipeline) return fail(pipeline.error());
            program.pipelines.push_back(*pipeline);
            found = seen.emplace(std::move(key), program.pipelines.size() - 1).first;
        }
        program.dispatch_pipeline.push_back(found->second);
    }
    return {};
}

// The arena in the Device domain's memory; constants are written now (a
// mapped copy, else through staging) and stay for the program's life.
Status make_arena(ProgramState& program)
{
    if (program.plan.arena_bytes == 0) return {};
    DeviceCore& core = *program.owner->device;
    VkBufferCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    create.size = program.plan.arena_bytes;
    create.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (VkResult r = vkCreateBuffer(core.device, &create, nullptr, &program.arena);
        r != VK_SUCCESS) {
        program.arena = VK_NULL_HANDLE;
        return fail(vulkan_error(core, r, "creating a program's arena"));
    }
    VkMemoryRequirements needs{};
    vkGetBufferMemoryRequirements(core.device, program.arena, &needs);
    const std::uint32_t type = *type_for_domain(core.plan, VACCEL_DOMAIN_DEVICE)
                                    .or_else([&] { return type_for_domain(core.plan, VACCEL_DOMAIN_HOST); });
    VkMemoryAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    allocate.allocationSize = needs.size;
    allocate.memoryTypeIndex = type;
    if (VkResult r = vkAllocateMemory(core.device, &allocate, nullptr, &program.arena_memory);
        r != VK_SUCCESS) {
        program.arena_memory = VK_NULL_HANDLE;
        return fail(Error::of(Errc::out_of_memory, VACCEL_D_EXECUTION, 0)
                        .with_note(fmt::format("the program's {}-byte arena could not be "
                                               "allocated on the device (VkResult {}); free "
                                               "buffers or load a smaller program",
                                               program.plan.arena_bytes, static_cast<int>(r))));
    }
    if (VkResult r = vkBindBufferMemory(core.device, program.arena, program.arena_memory, 0);
        r != VK_SUCCESS)
        return fail(vulkan_error(core, r, "binding a program's arena"));
    if (program.plan.constants.empty()) return {};
    const VkMemoryPropertyFlags flags = core.physical.memory.memoryTypes[type].propertyFlags;
    if ((flags & host_coherent_flags) == host_coherent_flags && !core.options.stage_all_transfers) {
        void* mapped = nullptr;
        if (VkResult r = vkMapMemory(core.device, program.arena_memory, 0, VK_WHOLE_SIZE, 0, &mapped);
            r != VK_SUCCESS)
            return fail(vulkan_error(core, r, "mapping a program's arena"));
        for (const tosa::ConstantPlan& constant : program.plan.constants)
            std::memcpy(static_cast<std::byte*>(mapped) + constant.offset, constant.bytes.data(),
                        constant.bytes.size());
        vkUnmapMemory(core.device, program.arena_memory);
        return {};
    }
    for (const tosa::ConstantPlan& constant : program.plan.constants) {
        DeviceCopier copier(*program.owner, program.arena,
                            staging_size_for(constant.offset, constant.bytes.size()));
        if (auto ok = copier.ready(); !ok) return ok;
        if (auto ok = write_through_staging(copier, constant.offset,
                                            std::as_bytes(std::span(constant.bytes)));
            !ok)
            return ok;
    }
    return {};
}

}  // namespace

ProgramState::~ProgramState()
{
    VkDevice d = owner->device->device;
    for (VkPipeline pipeline : pipelines) vkDestroyPipeline(d, pipeline, nullptr);
    for (auto& [key, kernel] : kernels) {
        if (kernel.pipeline != VK_NULL_HANDLE) vkDestroyPipeline(d, kernel.pipeline, nullptr);
        if (kernel.layout != VK_NULL_HANDLE) vkDestroyPipelineLayout(d, kernel.layout, nullptr);
        if (kernel.set_layout != VK_NULL_HANDLE)
            vkDestroyDescriptorSetLayout(d, kernel.set_layout, nullptr);
    }
    if (module != VK_NULL_HANDLE) vkDestroyShaderModule(d, module, nullptr);
    if (profile_queries != VK_NULL_HANDLE) vkDestroyQueryPool(d, profile_queries, nullptr);
    if (layout != VK_NULL_HANDLE) vkDestroyPipelineLayout(d, layout, nullptr);
    if (set_layout != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(d, set_layout, nullptr);
    if (arena != VK_NULL_HANDLE) vkDestroyBuffer(d, arena, nullptr);
    if (arena_memory != VK_NULL_HANDLE) vkFreeMemory(d, arena_memory, nullptr);
    if (counted) owner->device->counters.programs.fetch_sub(1);
}

Result<std::shared_ptr<ProgramState>> load_tosa(std::shared_ptr<ContextState> context,
                                                const ProgramDesc& desc)
{
    auto target = tosa::target_from_uapi(desc.target);
    if (!target) return fail(target.error());
    auto graph = tosa::parse(desc.payload);
    if (!graph) return fail(graph.error());
    auto analysis = tosa::analyze(*graph);
    if (!analysis) return fail(analysis.error());
    if (auto admitted = tosa::admit(*graph, *analysis,
                                         vulkan_descriptor(StorageFeatures{
                                             context->device->physical.storage_8bit,
                                             context->device->physical.storage_16bit}),
                                         *target); !admitted)
        return fail(admitted.error());
    // The MATMUL kernels' shapes (and CONV2D's GEMM tiles); a device (or
    // override) none fits refuses programs with a MATMUL or a CONV2D only.
    const auto matmul = device_matmul_choice(context->device->physical);
    auto fusion = gpu::fusion_chosen();
    if (!fusion) return fail(fusion.error());
    auto plan = tosa::plan_block(
        *graph, *analysis, tosa::BlockRef{0, 0}, gpu::with_epilogues(tosa::PlanOptions{}, *fusion),
        [&](const tosa::OperatorView& view) -> Result<std::vector<tosa::DispatchRequest>> {
            if ((view.op->op == tosa::Op::matmul || view.op->op == tosa::Op::conv2d) && !matmul)
                return fail(matmul.error());
            return lower(view, matmul.value_or(MatmulChoice{}));
        });
    if (!plan) return fail(plan.error());
    if (auto ok = within_memory_budget(plan->arena_bytes, desc.memory_budget); !ok)
        return fail(ok.error());

    // The descriptor array (slots, then the arena) must fit the device
    // (tuning.hpp) and a ring slot's descriptor pool, which is sized to it.
    const std::uint32_t descriptors = context->device->tuning.descriptors;
    if (plan->buffer_count() > descriptors)
        return fail(Error::limit_hit(VACCEL_LIMIT_BINDINGS, descriptors, plan->buffer_count())
                        .with_note(fmt::format("the program needs {} storage buffers ({} slots "
                                               "and its arena), more than the {} this device "
                                               "binds at once; split the program or give it "
                                               "fewer inputs and outputs",
                                               plan->buffer_count(), plan->slots.size(),
                                               descriptors)));
    auto program = std::make_shared<ProgramState>(std::move(context));
    program->plan = std::move(*plan);
    const tosa::Block& block = graph->regions[0].blocks[0];
    for (const tosa::SlotPlan& slot : program->plan.slots)
        program->slots.push_back(SlotInfo{
            slot.role == tosa::SlotRole::input ? std::uint32_t{VACCEL_SLOT_INPUT}
                                               : std::uint32_t{VACCEL_SLOT_OUTPUT},
            static_cast<std::uint32_t>(slot.dtype), slot.shape, slot.bytes,
            block.tensors[slot.tensor].name});
    if (auto ok = make_layouts(*program); !ok) return fail(ok.error());
    if (auto ok = make_pipelines(*program); !ok) return fail(ok.error());
    if (auto ok = make_arena(*program); !ok) return fail(ok.error());
    if (auto ok = make_profile_queries(*program); !ok) return fail(ok.error());
    program->counted = true;
    program->owner->device->counters.programs.fetch_add(1);
    program->owner->device->pipelines->programs_loaded();
    return program;
}

Result<std::shared_ptr<ProgramState>> load_spirv(std::shared_ptr<ContextState> context,
                                                 const ProgramDesc& desc)
{
    auto inspected = inspect_spirv(desc.payload);
    if (!inspected) return fail(inspected.error());
    if (inspected->compute_entries.empty())
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_KERNEL_ENTRY)
                        .with_note("the SPIR-V module has no GLCompute entry point; compile it "
                                   "from a compute shader (a .comp file)"));
    DeviceCore& core = *context->device;
    auto program = std::make_shared<ProgramState>(std::move(context));
    program->format = VACCEL_FORMAT_SPIRV;
    program->entries = std::move(inspected->compute_entries);
    VkShaderModuleCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    create.codeSize = inspected->words.size() * 4;
    create.pCode = inspected->words.data();
    if (VkResult r = vkCreateShaderModule(core.device, &create, nullptr, &program->module);
        r != VK_SUCCESS) {
        program->module = VK_NULL_HANDLE;
        return fail(vulkan_error(core, r, "creating the program's shader module"));
    }
    program->counted = true;
    core.counters.programs.fetch_add(1);
    return program;
}

Result<ProgramState::KernelPipeline> kernel_pipeline(ProgramState& program,
                                                     const std::string& entry,
                                                     std::uint32_t buffers,
                                                     std::uint32_t push_bytes)
{
    std::lock_guard lock(program.kernels_mutex);
    const auto key = std::make_tuple(entry, buffers, push_bytes);
    if (auto found = program.kernels.find(key); found != program.kernels.end())
        return found->second;
    DeviceCore& core = *program.owner->device;
    ProgramState::KernelPipeline kept;
    // On a refusal below, whatever was made is destroyed and nothing kept.
    struct Cleanup {
        VkDevice device;
        ProgramState::KernelPipeline& made;
        bool armed = true;
        ~Cleanup()
        {
            if (!armed) return;
            if (made.layout != VK_NULL_HANDLE) vkDestroyPipelineLayout(device, made.layout, nullptr);
            if (made.set_layout != VK_NULL_HANDLE)
                vkDestroyDescriptorSetLayout(device, made.set_layout, nullptr);
        }
    } cleanup{core.device, kept};
    std::vector<VkDescriptorSetLayoutBinding> bindings(buffers);
    for (std::uint32_t i = 0; i < buffers; ++i)
        bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT,
                       nullptr};
    VkDescriptorSetLayoutCreateInfo set{};
    set.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    set.bindingCount = buffers;
    set.pBindings = bindings.data();
    if (VkResult r = vkCreateDescriptorSetLayout(core.device, &set, nullptr, &kept.set_layout);
        r != VK_SUCCESS) {
        kept.set_layout = VK_NULL_HANDLE;
        return fail(vulkan_error(core, r, "creating a kernel's descriptor set layout"));
    }
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo layout{};
    layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &kept.set_layout;
    layout.pushConstantRangeCount = push_bytes == 0 ? 0 : 1;
    layout.pPushConstantRanges = &range;
    if (VkResult r = vkCreatePipelineLayout(core.device, &layout, nullptr, &kept.layout);
        r != VK_SUCCESS) {
        kept.layout = VK_NULL_HANDLE;
        return fail(vulkan_error(core, r, "creating a kernel's pipeline layout"));
    }
    VkComputePipelineCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    create.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    create.stage.module = program.module;
    create.stage.pName = entry.c_str();
    create.layout = kept.layout;
    if (VkResult r = vkCreateComputePipelines(core.device, core.pipelines->handle(), 1, &create,
                                              nullptr, &kept.pipeline);
        r != VK_SUCCESS) {
        kept.pipeline = VK_NULL_HANDLE;
        return fail(Error::of(Errc::incompatible, VACCEL_D_KERNEL_SIGNATURE)
                        .with_note(fmt::format("the driver could not build \"{}\" with {} "
                                               "storage buffers and {} push-constant bytes "
                                               "(VkResult {}); the arguments must match the "
                                               "kernel's bindings and push-constant block",
                                               entry, buffers, push_bytes, static_cast<int>(r))));
    }
    cleanup.armed = false;
    program.kernels.emplace(key, kept);
    core.pipelines->programs_loaded();
    return kept;
}

}  // namespace vaccel::backend::vulkan
