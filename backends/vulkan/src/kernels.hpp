// kernels.hpp - the SPIR-V of the Vulkan kernels (kernels/vulkan/*.comp,
// compiled by glslc at build time), by kernel id: gpu::KernelId's and the
// backend's own (lowering_conv.hpp's VulkanKernelId).
#pragma once

#include <cstdint>
#include <span>

#include "lowering.hpp"

namespace vaccel::backend::vulkan {

// Empty for an id no Vulkan kernel has (ids at or past vulkan_kernel_count).
std::span<const std::uint32_t> kernel_spirv(std::uint32_t kernel);

}  // namespace vaccel::backend::vulkan
