// lowering_conv.hpp - how the Vulkan backend runs a checked CONV2D as an
// implicit GEMM (kernels/vulkan/conv2d_gemm.comp), the ConvGemmLowerer of
// the shared lowering (vaccel/gpu/lowering_spatial.hpp).
//
// Decides (docs/adr/0013-vulkan-backend.md, "CONV2D as an implicit GEMM"):
//  - the kernel id: 14, the first after the shared ids 0..13 (the Vulkan
//    backend's own id space: CUDA's 14.. never reach this backend), so the
//    Vulkan kernels stay 0..vulkan_kernel_count - 1;
//  - which convolutions: FP32 CONV2D with at least one result and one tap
//    (K = KH*KW*IC > 0) on a device with conv tiles (MatmulChoice::conv);
//    anything else (FP16, an empty result, no tiles) keeps the shared
//    direct kernel;
//  - the tiles: MatmulChoice::conv (matmul_tiles.hpp: the MATMUL's on a
//    GPU, 256 x 4 blocks read straight from the buffers on a CPU device);
//    on that direct path with one column of invocations, M at most half a
//    block halves the block's rows and doubles its columns (up to 8) until
//    it does not or one row per invocation is left, so a 7 x 7 layer of one
//    image (M = 49) runs in 64 x 8 blocks of 1 x 8;
//  - VEC4 when the tiles allow it and IC and the input's and weight's bases
//    are multiples of 4 (and BK on the shared path), so every quad of taps
//    is four channels of one pixel and one aligned vec4; OC needs no
//    alignment (results are stored one at a time);
//  - the grid: one workgroup per BM x BN block (work = blocks * 64, the
//    submission's 64 per group), capped there and covered by the kernel's
//    grid-stride loop;
//  - VACCEL_VULKAN_CONV=direct keeps every CONV2D on the direct kernel (the
//    baseline the benchmarks measure the GEMM kernel against); unset, empty
//    or "gemm" is the default; any other value is refused at load
//    (InvalidArgument, VACCEL_D_BAD_VALUE, arg1 = Op).
#pragma once

#include <cstdint>
#include <optional>

#include "matmul_tiles.hpp"
#include "vaccel/common/error.hpp"
#include "vaccel/gpu/lowering.hpp"

namespace vaccel::backend::vulkan {

// The Vulkan backend's kernels beyond the shared gpu::KernelId ones.
enum class VulkanKernelId : std::uint32_t {
    conv2d_gemm = gpu::kernel_count,  // 14: kernels/vulkan/conv2d_gemm.comp
};
// The kernels the Vulkan backend builds pipelines for: ids 0..14.
inline constexpr std::uint32_t vulkan_kernel_count = gpu::kernel_count + 1;

// Whether CONV2D takes the GEMM kernel (VACCEL_VULKAN_CONV), or
// InvalidArgument naming the valid values.
Result<bool> conv_gemm_enabled(const tosa::OperatorView& view);

// The ConvGemmLowerer with the device's conv tiles.
std::optional<gpu::ConvGemmKernel> lower_conv_gemm(const tosa::OperatorView& view,
                                                const gpu::ConvGemm& gemm,
                                                const MatmulTiles& tiles);

}  // namespace vaccel::backend::vulkan
