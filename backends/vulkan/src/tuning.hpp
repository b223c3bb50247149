// tuning.hpp - every size the backend derives from a device's limits, in
// one place, and the floor a device must meet to run the kernels at all.
//
// Pure: decided from the limits the probe read, so fabricated limits test
// it. Decides (docs/adr/0013-vulkan-backend.md, Tuning):
//  - the workgroup is 64 invocations wide (kernels/vulkan/common.glsl: the
//    kernels are compiled with it), so a device must allow 64 along x and
//    64 invocations per workgroup;
//  - the grid is capped at min(65535, maxComputeWorkGroupCount[0]) groups
//    (the kernels loop over the rest);
//  - a program's descriptor array (its bound slots, then the arena) is at
//    most min(VACCEL_MAX_BINDINGS + 1, maxPerStageDescriptorStorageBuffers,
//    maxDescriptorSetStorageBuffers) long; programs needing more are refused
//    at load; a device offering fewer than 3 (an input, an output and the
//    arena) is not served;
//  - the subgroup size is read from the device, never assumed.
#pragma once

#include <cstdint>
#include <expected>
#include <string>

namespace vaccel::backend::vulkan {

struct TuningLimits {
    std::uint32_t max_workgroup_size_x = 0;         // maxComputeWorkGroupSize[0]
    std::uint32_t max_workgroup_invocations = 0;    // maxComputeWorkGroupInvocations
    std::uint32_t max_workgroup_count_x = 0;        // maxComputeWorkGroupCount[0]
    std::uint32_t max_per_stage_storage_buffers = 0;
    std::uint32_t max_set_storage_buffers = 0;
    std::uint32_t max_push_constant_bytes = 0;      // maxPushConstantsSize
    std::uint32_t subgroup_size = 0;
};

struct Tuning {
    std::uint32_t workgroup_size = 64;
    std::uint32_t max_groups = 0;
    std::uint32_t descriptors = 0;  // longest descriptor array: bound slots + arena
    std::uint32_t push_constant_bytes = 0;
    std::uint32_t subgroup_size = 0;
};

inline constexpr std::uint32_t kernel_workgroup_size = 64;

// The device's tuning, or why it cannot run the kernels (for the probe report).
std::expected<Tuning, std::string> tune(const TuningLimits& limits);

}  // namespace vaccel::backend::vulkan
