// conv2d_gemm_mma.cu - the tensor-core (MMA) CONV2D GEMM kernels: FP16
// (VACCEL_CUDA_CONV_MMA=1) and TF32 (FP32 CONV2D under [devices.cuda]
// fp32_math = "tf32"), and FP32 MATMUL in TF32 under the same opt-in
// (conv2d_gemm.cuh says what they compute and lists their spec words; the
// tiles, splits and grids are those of conv2d_gemm.cu's kernels).
#include "conv2d_gemm.cuh"

VACCEL_CONV_GEMM(vaccel_conv2d_gemm_f16mma_t128, __half, 2, 128, 8, true)
VACCEL_CONV_GEMM(vaccel_conv2d_gemm_f16mma_t64, __half, 1, 64, 4, true)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f16mma_t64_s2, __half, 2, true)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f16mma_t64_s4, __half, 4, true)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f16mma_t64_s8, __half, 8, true)
VACCEL_CONV_GEMM(vaccel_conv2d_gemm_tf32_t128, float, 2, 128, 8, true)
VACCEL_CONV_GEMM(vaccel_conv2d_gemm_tf32_t64, float, 1, 64, 4, true)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_tf32_t64_s2, float, 2, true)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_tf32_t64_s4, float, 4, true)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_tf32_t64_s8, float, 8, true)

// FP32 MATMUL in TF32: 128 x 128 tiles, or 64 x 64 alone (s1) or split over
// K by a cluster, chosen as for the FP32-core kernels (lowering_matmul.hpp).
VACCEL_MATMUL_GEMM(vaccel_matmul_tf32_t128, 2, 128, 8, true)
VACCEL_MATMUL_GEMM(vaccel_matmul_tf32_t64_s1, 1, 64, 4, true)
VACCEL_MATMUL_GEMM_SPLIT(vaccel_matmul_tf32_t64_s2, 2, true)
VACCEL_MATMUL_GEMM_SPLIT(vaccel_matmul_tf32_t64_s4, 4, true)
VACCEL_MATMUL_GEMM_SPLIT(vaccel_matmul_tf32_t64_s8, 8, true)
