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
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "objects.hpp"
#include "vaccel/sched/slicing.hpp"
#include "vaccel/tosa/plan.hpp"

namespace vaccel::backend::vulkan {

using sched::Cut;
using sched::cut_segments;
using sched::DispatchCost;
using sched::halve_costly_cuts;
using sched::Piece;
using sched::Segment;
using sched::whole_run;

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

    // The profile (vaccel/sched/slicing.hpp): the first run's device time per dispatch,
    // taken by the one submission that moves `profile` from unmeasured to
    // measuring (submit.cpp); `cut` is stored before it becomes measured
    // (release) and only read after (acquire). A run that fails puts it
    // back to unmeasured. Later runs may replace `cut` (a dispatch whose
    // parts cost too much gets fewer); `costs` is guarded by cut_mutex.
    enum Profile : int { unmeasured = 0, measuring = 1, measured = 2 };
    std::atomic<int> profile{unmeasured};
    VkQueryPool profile_queries = VK_NULL_HANDLE;  // dispatches + 1 timestamps; null: never
    std::mutex cut_mutex;
    std::vector<DispatchCost> costs;
    std::atomic<std::shared_ptr<const Cut>> cut;

    // VACCEL_FORMAT_SPIRV (launch.hpp): the module, its GLCompute entry
    // points, and one pipeline per (entry, storage buffers, push-constant
    // bytes), made at the first launch that needs it and kept with the program.
    std::uint32_t format = VACCEL_FORMAT_TOSA;
    VkShaderModule module = VK_NULL_HANDLE;
    std::vector<std::string> entries;
    struct KernelPipeline {
        VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
        VkPipelineLayout layout = VK_NULL_HANDLE;
        VkPipeline pipeline = VK_NULL_HANDLE;
    };
    std::mutex kernels_mutex;  // guards kernels (launches of one program may race)
    std::map<std::tuple<std::string, std::uint32_t, std::uint32_t>, KernelPipeline> kernels;

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
    std::uint32_t format() const override { return state->format; }
    std::uint64_t device_bytes() const override { return state->plan.arena_bytes; }
};

// parse, analyze, admit against vulkan_descriptor() (with `target`), plan
// with the Vulkan lowering, then build the pipelines and the arena. Refusals
// as the CPU backend's for the TOSA steps.
Result<std::shared_ptr<ProgramState>> load_tosa(std::shared_ptr<ContextState> context,
                                                const ProgramDesc& desc);

// A SPIR-V module (spirv_module.hpp checks it first); no slots, launched only.
Result<std::shared_ptr<ProgramState>> load_spirv(std::shared_ptr<ContextState> context,
                                                 const ProgramDesc& desc);

// The pipeline of `entry` with `buffers` storage buffers in set 0 and
// `push_bytes` of push constants (made once, then reused).
Result<ProgramState::KernelPipeline> kernel_pipeline(ProgramState& program,
                                                     const std::string& entry,
                                                     std::uint32_t buffers,
                                                     std::uint32_t push_bytes);

}  // namespace vaccel::backend::vulkan
