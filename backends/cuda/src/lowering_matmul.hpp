// lowering_matmul.hpp - how the CUDA backend lowers TOSA MATMUL
// (kernels/cuda/matmul*.cu).
//
// Decides:
//  - dtypes: FP32 x FP32 -> FP32, FP16 x FP16 -> FP32 and FP16 x FP16 ->
//    FP16, all accumulated in FP32; anything else is refused at load
//    (Unsupported, VACCEL_D_TOSA_DTYPE, arg0 = DType, arg1 = Op);
//  - spec words: N H C W, out buffer and base, A buffer and base, B buffer
//    and base, mode (0 FP32, 1 FP16 -> FP32, 2 FP16 -> FP16: the Vulkan
//    kernels' first 11), then the blocks along H and along W of one batch,
//    and for the 64 x 64 kernels the split (1, 2, 4 or 8);
//  - the kernel by shape: H <= 4 the streaming kernel (matmul_rows); FP32
//    with C, W and the three bases multiples of 4 the SIMT tiles
//    (matmul_f32; under fp32_math = "tf32" the TF32 tensor-core tiles of
//    conv2d_gemm_mma.cu, 128 x 128 or 64 x 64 chosen the same way), or, on a device whose multiprocessor count is known and
//    that those 128 x 128 tiles would leave with fewer blocks than
//    multiprocessors (a transformer's 128 rows at batch 1), 64 x 64 tiles
//    split over K by a cluster of 2, 4 or 8 blocks as CONV2D's are
//    (kernels/cuda/conv2d_gemm.cu; lowering_conv.hpp says which split), or
//    not split; FP16 with C, W and the three bases multiples of 8 the
//    tensor-core tiles (matmul_f16); everything else, and an empty result,
//    the general kernel;
//  - the grid: work is blocks * block_threads, one block per output tile of
//    one batch, batch-major; the backend launches work / block_threads
//    blocks of matmul_kernels()'s block_threads; an empty result has work 0
//    (and may have 0 blocks along H or W): nothing is launched.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vaccel/backend/cuda.hpp"
#include "vaccel/common/error.hpp"
#include "vaccel/tosa/plan.hpp"

namespace vaccel::backend::cuda {

// The CUDA MATMUL kernels (gpu::KernelId leaves 14 on to them).
enum class MatmulKernelId : std::uint32_t {
    general = 14,  // vaccel_matmul_general: any shape, 16 x 16 results a block
    rows = 15,     // vaccel_matmul_rows: H <= 4, 32 columns a block
    f32 = 16,      // vaccel_matmul_f32_simt: 128 x 128 tiles, FP32 FMA
    f16 = 17,      // vaccel_matmul_f16_tc: 128 x 256 tiles, mma.sync ("v0")
    // FP16 variants (VACCEL_CUDA_MATMUL_F16), the same shapes as f16:
    f16_t128x256 = 18,     // 128 x 256 x 32, double-buffered fragments
    f16_t128x256s = 19,    // 128 x 256 x 32, fragments single-buffered
    f16_t128x256k64 = 20,  // 128 x 256 x 64, 3 stages
    f16_t256x128 = 21,     // 256 x 128 x 32
    f16_t128x128 = 22,     // 128 x 128 x 32, 4 warps, 2 blocks an SM
    f16_t128x128w8 = 23,   // 128 x 128 x 32, 8 warps, 2 blocks an SM
    // wgmma (sm_90a: compute capability 9.0 only):
    f16_wgmma = 24,        // 128 x 256 x 64, 4 stages
    f16_wgmma128 = 25,     // 128 x 128 x 64, 3 stages, 2 blocks an SM
    f16_wgmma128d = 26,    // 128 x 128 x 64, 6 stages
    // FP32 on 64 x 64 tiles, after the CONV2D GEMM ids (lowering_conv.hpp),
    // in conv2d_gemm.cu: alone, or split over K by a cluster of 2, 4, 8.
    f32_t64_s1 = 37, f32_t64_s2 = 38, f32_t64_s4 = 39, f32_t64_s8 = 40,
    // FP32 in TF32 on the tensor cores (fp32_math = "tf32"), after the
    // tensor-core CONV2D ids, in conv2d_gemm_mma.cu: 128 x 128 tiles, and
    // 64 x 64 alone or split as f32_t64_s*.
    tf32_t128 = 51, tf32_t64_s1 = 52, tf32_t64_s2 = 53, tf32_t64_s4 = 54, tf32_t64_s8 = 55,
};

struct MatmulKernel {
    std::uint32_t id;
    const char* function;
    std::uint32_t block_threads;
    std::uint32_t dynamic_shared_bytes;  // over 48 KiB needs the function's opt-in
    const char* module;                  // the fatbin vaccel_cuda_fatbin_<module>
    std::uint32_t only_cc = 0;  // 10 * major + minor of the one device it runs on; 0: any
    // The entry of the same kernel that honours k_first / k_end
    // (kernels/cuda/dispatch.h) in steps of k_step k, which a run cut over k
    // launches (slicing.hpp); null and 0: never cut.
    const char* k_function = nullptr;
    std::uint32_t k_step = 0;
};

std::span<const MatmulKernel> matmul_kernels();

// An FP16 tensor-core variant by its VACCEL_CUDA_MATMUL_F16 name.
struct MatmulF16Variant {
    const char* name;
    MatmulKernelId id;
    std::uint32_t tile_rows, tile_cols;  // output tile of one block
};
std::span<const MatmulF16Variant> matmul_f16_variants();

// The `matmul` Lowerer of gpu::lower() for a device of `compute_capability`
// (10 * major + minor; 0: unknown), which picks the default FP16 variant,
// with `multiprocessors` SMs (0: unknown, and no 64 x 64 tiles), its FP32
// products as `fp32_math` says.
Result<std::vector<tosa::DispatchRequest>> lower_matmul(const tosa::OperatorView& view,
                                                        std::uint32_t compute_capability = 0,
                                                        std::uint32_t multiprocessors = 0,
                                                        Fp32Math fp32_math = Fp32Math::fp32);

}  // namespace vaccel::backend::cuda
