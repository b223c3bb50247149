// lowering.hpp - the Vulkan lowering: the shared GPU lowering
// (vaccel/gpu/lowering.hpp) with this backend's MATMUL kernels
// (lowering_matmul.hpp), its CONV2D GEMM kernel (lowering_conv.hpp) and the
// Vulkan names of its descriptor.
#pragma once

#include "matmul_tiles.hpp"
#include "vaccel/gpu/lowering.hpp"

namespace vaccel::backend::vulkan {

// The shared lowering's kernels, operation codes and storage rules are the
// Vulkan kernels' (kernels/vulkan/*.comp read the same words).
using namespace vaccel::backend::gpu;

// The Lowerer of plan_block(), MATMUL with the device's kernel choice and
// CONV2D on the implicit GEMM where `matmul.conv` has tiles (else, and with
// VACCEL_VULKAN_CONV=direct, the direct kernel).
Result<std::vector<tosa::DispatchRequest>> lower(const tosa::OperatorView& view,
                                                 const MatmulChoice& matmul);

inline tosa::CapabilityDescriptor vulkan_descriptor(StorageFeatures features)
{
    return gpu_descriptor(features);
}
inline tosa::CapabilityDescriptor vulkan_descriptor() { return gpu_descriptor(); }

}  // namespace vaccel::backend::vulkan
