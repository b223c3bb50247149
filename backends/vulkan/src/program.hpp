// program.hpp - a TOSA program loaded on a Vulkan device.
//
// Owns: the program's plan (tosa/plan.hpp), its descriptor set layout (one
// binding: an array of storage buffers, the slots then the arena), its
// pipeline layout, one compute pipeline per distinct KernelSpec, and its
// arena (one buffer, allocated at load, constants uploaded then).
// Lifetime: ProgramState is shared by the Program object and every
// submission that runs it, so the pipelines and the arena outlive the last
// command buffer that uses them; unload is refused while `in_flight` is
// non-zero. Every member is written at load and read-only afterwards,
// except the counters.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <memory>
#include <vector>

#include "objects.hpp"
#include "vaccel/tosa/plan.hpp"

namespace vaccel::backend::vulkan {

struct ProgramState {
    std::shared_ptr<ContextState> owner;
    tosa::ProgramPlan plan;
    std::vector<SlotInfo> slots;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    std::vector<VkPipeline> pipelines;         // distinct kernel variants
    std::vector<std::uint32_t> dispatch_pipeline;  // per plan dispatch: index into pipelines
    VkBuffer arena = VK_NULL_HANDLE;
    VkDeviceMemory arena_memory = VK_NULL_HANDLE;
    std::atomic<std::uint64_t> in_flight{0};
    bool counted = false;

    explicit ProgramState(std::shared_ptr<ContextState> context) : owner(std::move(context)) {}
    ProgramState(const ProgramState&) = delete;
    ProgramState& operator=(const ProgramState&) = delete;
    ~ProgramState();
};

struct VulkanProgram final : Program {
    std::shared_ptr<ProgramState> state;
    explicit VulkanProgram(std::shared_ptr<ProgramState> s) : state(std::move(s)) {}
    std::span<const SlotInfo> slots() const override { return state->slots; }
    std::uint32_t input_count() const override { return state->plan.input_count; }
    std::uint32_t format() const override { return VACCEL_FORMAT_TOSA; }
};

// parse, analyze, admit against vulkan_descriptor() (with `target`), plan
// with the Vulkan lowering, then build the pipelines and the arena. Refusals
// as the CPU backend's for the TOSA steps.
Result<std::shared_ptr<ProgramState>> load_tosa(std::shared_ptr<ContextState> context,
                                                const ProgramDesc& desc);

}  // namespace vaccel::backend::vulkan
