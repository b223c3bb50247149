// lowering_matmul.hpp - how the Vulkan backend lowers TOSA MATMUL
// (docs/adr/0013-vulkan-backend.md, "MATMUL kernels").
//
// Decides:
//  - dtypes: FP32 x FP32 -> FP32, FP16 x FP16 -> FP32 and FP16 x FP16 ->
//    FP16 (TOSA 1.0's FP16 MATMUL: the accumulator is implied by the
//    result), all accumulated in FP32; anything else is refused at load
//    (Unsupported, VACCEL_D_TOSA_DTYPE, arg0 = DType, arg1 = Op);
//  - the kernel by shape: FP16 x FP16 -> FP32 takes the cooperative-matrix
//    kernel (matmul_coop.comp) when the device offers VK_NV_cooperative_matrix
//    with an FP16 shape and one of the device's block tilings
//    (MatmulChoice::coop_tiles, largest first) divides H and W, with C, W
//    and every base multiples of 8 halves (VACCEL_VULKAN_COOPMAT=0 turns it
//    off); else H <= MatmulChoice::max_rows takes the streaming
//    kernel (matmul_rows.comp) when a streaming shape fits the device (with
//    vec4 loads of B for FP32, W % 4 == 0 and B's base a multiple of 4),
//    every other shape the tiled kernel (matmul_tiled.comp) with the
//    device's tiles;
//  - the grid: the submission sizes it as work / 64 groups (submit.cpp), so
//    work is 64 per workgroup wanted: one per output block, capped at 65535
//    groups there and covered by the kernels' grid-stride loops.
#pragma once

#include "instance.hpp"
#include "matmul_tiles.hpp"
#include "vaccel/tosa/plan.hpp"

namespace vaccel::backend::vulkan {

// What the choice reads of a physical device.
MatmulLimits matmul_limits(const PhysicalRecord& device);

// The device's choice, with VACCEL_VULKAN_MATMUL_TILES, _MATMUL_ROWS and
// _COOPMAT_TILES applied when set (the last refused on a device without
// FP16 cooperative matrices).
Result<MatmulChoice> device_matmul_choice(const PhysicalRecord& device);

Result<std::vector<tosa::DispatchRequest>> lower_matmul(const tosa::OperatorView& view,
                                                        const MatmulChoice& choice);

// The depth of one k step of a MATMUL dispatch the scheduler may cut over
// its dot products' k (vaccel/sched/slicing.hpp): the tiled and the cooperative-matrix
// kernels with an FP32 result, whose partial sums are exact in the result
// between parts. 0 for every other dispatch.
std::uint32_t matmul_k_step(const tosa::KernelSpec& kernel);

}  // namespace vaccel::backend::vulkan
