// conv2d_gemm.cu - the FP32-core (FMA) CONV2D GEMM kernels and FP32
// MATMUL on 64 x 64 tiles (conv2d_gemm.cuh says what they compute and
// lists their spec words).
#include "conv2d_gemm.cuh"

// 128 x 128 tiles, 8 x 8 results a thread: large M and OC; 64 x 64 tiles,
// 4 x 4 results a thread: more blocks for small layers; and those split
// over K by clusters of 2, 4 or 8 blocks.
VACCEL_CONV_GEMM(vaccel_conv2d_gemm_f32_t128, float, 2, 128, 8, false)
VACCEL_CONV_GEMM(vaccel_conv2d_gemm_f32_t64, float, 1, 64, 4, false)
VACCEL_CONV_GEMM(vaccel_conv2d_gemm_f16_t128, __half, 2, 128, 8, false)
VACCEL_CONV_GEMM(vaccel_conv2d_gemm_f16_t64, __half, 1, 64, 4, false)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f32_t64_s2, float, 2, false)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f32_t64_s4, float, 4, false)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f32_t64_s8, float, 8, false)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f16_t64_s2, __half, 2, false)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f16_t64_s4, __half, 4, false)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f16_t64_s8, __half, 8, false)

// FP32 MATMUL on 64 x 64 tiles, alone (s1) or split over K by a cluster.
VACCEL_MATMUL_GEMM(vaccel_matmul_f32_t64_s1, 1, 64, 4, false)
VACCEL_MATMUL_GEMM_SPLIT(vaccel_matmul_f32_t64_s2, 2, false)
VACCEL_MATMUL_GEMM_SPLIT(vaccel_matmul_f32_t64_s4, 4, false)
VACCEL_MATMUL_GEMM_SPLIT(vaccel_matmul_f32_t64_s8, 8, false)
