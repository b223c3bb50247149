// kernels.hpp - the SPIR-V of the Vulkan kernels (kernels/vulkan/*.comp,
// compiled by glslc at build time), by KernelId.
#pragma once

#include <cstdint>
#include <span>

#include "lowering.hpp"

namespace vaccel::backend::vulkan {

std::span<const std::uint32_t> kernel_spirv(KernelId kernel);

}  // namespace vaccel::backend::vulkan
