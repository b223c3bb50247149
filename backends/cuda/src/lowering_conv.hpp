// lowering_conv.hpp - how the CUDA backend runs a checked CONV2D as an
// implicit GEMM (kernels/cuda/conv2d_gemm.cu), the ConvGemmLowerer of
// the shared lowering (vaccel/gpu/lowering_spatial.hpp).
//
// Decides:
//  - which convolutions: FP32 and FP16 CONV2D with at least one result and
//    one tap (K = KH*KW*IC > 0); FP16 is accumulated in FP32 whatever
//    acc_type says (FP16 or FP32: TOSA's bound for an FP16 accumulator
//    holds a fortiori) and rounded to FP16 once, with the bias; an empty
//    result is left to the shared direct kernel, FP16 refused there;
//  - the cores: FP16 on the FP32 cores, or with VACCEL_CUDA_CONV_MMA=1 on
//    the tensor cores (mma.sync, FP32 accumulators; not the default: slower
//    on small layers, ADR 0028); FP32 on the FP32 cores, or in TF32 on the tensor cores
//    under fp32_math = "tf32" (Fp32Math);
//  - VEC (the kernel's float4 path) when IC, OC and the four operand bases
//    are multiples of 4 elements;
//  - the tile: 128 x 128 when that still gives every multiprocessor two
//    blocks, else 64 x 64 (batch 1 layers of 7 x 7 or 14 x 14 pixels);
//  - split K: 64 x 64 tiles fewer than the multiprocessors are each
//    computed by a cluster of SPLIT blocks (2, 4 or 8), the largest with
//    at most two blocks per multiprocessor and at least 8 K steps (64
//    taps) per block; none when even 2 would pass those;
//  - the grid: work is tiles_m * tiles_n * SPLIT * 256 (one block, or one
//    cluster, per tile, the tiles of one row of M adjacent), the kernels'
//    spec words as conv2d_gemm.cu lists them;
//  - every kernel applies the convolution's epilogue (a chain of
//    elementwise operators, vaccel/gpu/lowering_epilogue.hpp) at its store:
//    no pass after it;
//  - VACCEL_CUDA_CONV=direct keeps every CONV2D on the direct kernel (the
//    baseline the benchmarks measure the GEMM kernels against); unset,
//    empty or "gemm" is the default; any other value is refused at load.
#pragma once

#include <cstdint>
#include <optional>

#include "vaccel/backend/cuda.hpp"
#include "vaccel/common/error.hpp"
#include "vaccel/gpu/lowering_spatial.hpp"

namespace vaccel::backend::cuda {

// The CUDA implicit-GEMM convolution kernels (after the MATMUL ids).
enum class ConvKernelId : std::uint32_t {
    gemm_f32_t128 = 27,  // vaccel_conv2d_gemm_f32_t128
    gemm_f32_t64 = 28,   // vaccel_conv2d_gemm_f32_t64
    gemm_f16_t128 = 29,  // vaccel_conv2d_gemm_f16_t128: FP16 storage, FP32 sums
    gemm_f16_t64 = 30,   // vaccel_conv2d_gemm_f16_t64
    // 64 x 64 tiles split over K by a cluster of 2, 4 or 8 blocks.
    gemm_f32_t64_s2 = 31, gemm_f32_t64_s4 = 32, gemm_f32_t64_s8 = 33,
    gemm_f16_t64_s2 = 34, gemm_f16_t64_s4 = 35, gemm_f16_t64_s8 = 36,
    // The tensor-core kernels (conv2d_gemm_mma.cu), after MATMUL's 37..40,
    // each family in the order t128, t64, t64_s2, t64_s4, t64_s8: FP16, and
    // TF32 for FP32 under [devices.cuda] fp32_math = "tf32".
    mma_f16_t128 = 41, mma_f16_t64 = 42, mma_f16_t64_s2 = 43, mma_f16_t64_s4 = 44,
    mma_f16_t64_s8 = 45,
    mma_tf32_t128 = 46, mma_tf32_t64 = 47, mma_tf32_t64_s2 = 48, mma_tf32_t64_s4 = 49,
    mma_tf32_t64_s8 = 50,
};

// The split over K of `tiles` 64 x 64 tiles with K = `depth`, on a device
// of `multiprocessors` SMs: the largest of 8, 4, 2 with at most two blocks
// per SM and at least 8 K steps (of 8) per block, else 1 (a power of two:
// the kernel ids of each split follow in that order). CONV2D and
// MATMUL's 64 x 64 kernels both split this way.
std::uint32_t gemm_split(std::uint64_t tiles, std::uint64_t depth, std::uint64_t multiprocessors);

struct ConvKernel {
    std::uint32_t id;
    const char* function;
    std::uint32_t block_threads;
    const char* module;
};
std::span<const ConvKernel> conv_kernels();

// Whether CONV2D takes the GEMM kernels (VACCEL_CUDA_CONV), or
// InvalidArgument naming the valid values.
Result<bool> conv_gemm_enabled(const tosa::OperatorView& view);

// Whether FP16 CONV2D takes the tensor cores (VACCEL_CUDA_CONV_MMA), or
// InvalidArgument naming the valid values.
Result<bool> conv_mma_enabled();

// The ConvGemmLowerer for a device with `multiprocessors` SMs (0: unknown,
// taken as 132); `fp16_mma`: conv_mma_enabled().
std::optional<gpu::ConvGemmKernel> lower_conv_gemm(const tosa::OperatorView& view,
                                                   const gpu::ConvGemm& gemm,
                                                   std::uint32_t multiprocessors, bool fp16_mma,
                                                   Fp32Math fp32_math);

}  // namespace vaccel::backend::cuda
