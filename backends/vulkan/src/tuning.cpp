// tuning.cpp - sizes from device limits (tuning.hpp).
#include "tuning.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "vaccel.h"

namespace vaccel::backend::vulkan {

std::expected<Tuning, std::string> tune(const TuningLimits& limits)
{
    std::string lacks;
    auto lack = [&lacks](std::string what) {
        lacks += (lacks.empty() ? "" : "; ") + what;
    };
    if (limits.max_workgroup_size_x < kernel_workgroup_size)
        lack(fmt::format("workgroups {} wide at most (the kernels are {} wide)",
                         limits.max_workgroup_size_x, kernel_workgroup_size));
    if (limits.max_workgroup_invocations < kernel_workgroup_size)
        lack(fmt::format("{} invocations per workgroup at most (the kernels need {})",
                         limits.max_workgroup_invocations, kernel_workgroup_size));
    if (limits.max_workgroup_count_x == 0) lack("no workgroups along x");
    const std::uint32_t descriptors =
        std::min({std::uint32_t{VACCEL_MAX_BINDINGS + 1}, limits.max_per_stage_storage_buffers,
                  limits.max_set_storage_buffers});
    if (descriptors < 3)
        lack(fmt::format("{} storage buffers per shader stage and {} per set (a program needs "
                         "at least 3: an input, an output and its arena)",
                         limits.max_per_stage_storage_buffers, limits.max_set_storage_buffers));
    if (!lacks.empty())
        return std::unexpected(
            fmt::format("the device cannot run the backend's kernels: {}", lacks));
    Tuning tuning;
    tuning.workgroup_size = kernel_workgroup_size;
    tuning.max_groups = std::min<std::uint32_t>(65535, limits.max_workgroup_count_x);
    tuning.descriptors = descriptors;
    tuning.push_constant_bytes = limits.max_push_constant_bytes;
    tuning.subgroup_size = limits.subgroup_size;
    return tuning;
}

}  // namespace vaccel::backend::vulkan
