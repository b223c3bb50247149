// conv2d_gemm.cu - the FP32-core (FMA) CONV2D GEMM kernels and FP32
// MATMUL on 64 x 64 tiles (conv2d_gemm.cuh says what they compute and
// lists their spec words).
#include "conv2d_gemm.cuh"

using vaccel_conv_gemm::run;
using vaccel_conv_gemm::threads;

// 128 x 128 tiles, 8 x 8 results a thread: large M and OC; 64 x 64 tiles,
// 4 x 4 results a thread: more blocks for small layers; and those split
// over K by clusters of 2, 4 or 8 blocks.
#define VACCEL_CONV_GEMM(name, T, launch_min, BM, TM)                                        \
    extern "C" __global__ void __launch_bounds__(threads, launch_min)                          \
        name(const __grid_constant__ struct vaccel_cuda_dispatch d)                                                    \
    {                                                                                          \
        if (d.spec[24] != 0u) run<T, BM, BM, TM, TM, true, 1>(d);                              \
        else run<T, BM, BM, TM, TM, false, 1>(d);                                              \
    }
#define VACCEL_CONV_GEMM_SPLIT(name, T, SPLIT)                                               \
    extern "C" __global__ void __cluster_dims__(SPLIT, 1, 1) __launch_bounds__(threads, 1)     \
        name(const __grid_constant__ struct vaccel_cuda_dispatch d)                                                    \
    {                                                                                          \
        if (d.spec[24] != 0u) run<T, 64, 64, 4, 4, true, SPLIT>(d);                            \
        else run<T, 64, 64, 4, 4, false, SPLIT>(d);                                            \
    }
VACCEL_CONV_GEMM(vaccel_conv2d_gemm_f32_t128, float, 2, 128, 8)
VACCEL_CONV_GEMM(vaccel_conv2d_gemm_f32_t64, float, 1, 64, 4)
VACCEL_CONV_GEMM(vaccel_conv2d_gemm_f16_t128, __half, 2, 128, 8)
VACCEL_CONV_GEMM(vaccel_conv2d_gemm_f16_t64, __half, 1, 64, 4)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f32_t64_s2, float, 2)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f32_t64_s4, float, 4)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f32_t64_s8, float, 8)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f16_t64_s2, __half, 2)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f16_t64_s4, __half, 4)
VACCEL_CONV_GEMM_SPLIT(vaccel_conv2d_gemm_f16_t64_s8, __half, 8)

// FP32 MATMUL on 64 x 64 tiles, alone (s1) or split over K by a cluster.
extern "C" __global__ void __launch_bounds__(threads, 1)
    vaccel_matmul_f32_t64_s1(const __grid_constant__ struct vaccel_cuda_dispatch d)
{
    run<float, 64, 64, 4, 4, true, 1, true>(d);
}
#define VACCEL_MATMUL_SPLIT(name, SPLIT)                                                     \
    extern "C" __global__ void __cluster_dims__(SPLIT, 1, 1) __launch_bounds__(threads, 1)     \
        name(const __grid_constant__ struct vaccel_cuda_dispatch d)                                                    \
    {                                                                                          \
        run<float, 64, 64, 4, 4, true, SPLIT, true>(d);                                        \
    }
VACCEL_MATMUL_SPLIT(vaccel_matmul_f32_t64_s2, 2)
VACCEL_MATMUL_SPLIT(vaccel_matmul_f32_t64_s4, 4)
VACCEL_MATMUL_SPLIT(vaccel_matmul_f32_t64_s8, 8)
