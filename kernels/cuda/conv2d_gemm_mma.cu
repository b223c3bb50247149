// conv2d_gemm_mma.cu - the tensor-core (MMA) CONV2D GEMM kernels: FP16
// (the default for FP16 CONV2D) and TF32 (FP32 CONV2D under [devices.cuda]
// fp32_math = "tf32"), and FP32 MATMUL in TF32 under the same opt-in
// (conv2d_gemm.cuh says what they compute and lists their spec words; the
// tiles, splits and grids are those of conv2d_gemm.cu's kernels).
#include "conv2d_gemm.cuh"

using vaccel_conv_gemm::run;
using vaccel_conv_gemm::threads;

#define VACCEL_CONV_MMA(name, T, launch_min, BM, TM)                                         \
    extern "C" __global__ void __launch_bounds__(threads, launch_min)                          \
        name(const __grid_constant__ struct vaccel_cuda_dispatch d)                            \
    {                                                                                          \
        if (d.spec[24] != 0u) run<T, BM, BM, TM, TM, true, 1, false, true>(d);                 \
        else run<T, BM, BM, TM, TM, false, 1, false, true>(d);                                 \
    }
#define VACCEL_CONV_MMA_SPLIT(name, T, SPLIT)                                                \
    extern "C" __global__ void __cluster_dims__(SPLIT, 1, 1) __launch_bounds__(threads, 1)     \
        name(const __grid_constant__ struct vaccel_cuda_dispatch d)                            \
    {                                                                                          \
        if (d.spec[24] != 0u) run<T, 64, 64, 4, 4, true, SPLIT, false, true>(d);               \
        else run<T, 64, 64, 4, 4, false, SPLIT, false, true>(d);                               \
    }
VACCEL_CONV_MMA(vaccel_conv2d_gemm_f16mma_t128, __half, 2, 128, 8)
VACCEL_CONV_MMA(vaccel_conv2d_gemm_f16mma_t64, __half, 1, 64, 4)
VACCEL_CONV_MMA_SPLIT(vaccel_conv2d_gemm_f16mma_t64_s2, __half, 2)
VACCEL_CONV_MMA_SPLIT(vaccel_conv2d_gemm_f16mma_t64_s4, __half, 4)
VACCEL_CONV_MMA_SPLIT(vaccel_conv2d_gemm_f16mma_t64_s8, __half, 8)
VACCEL_CONV_MMA(vaccel_conv2d_gemm_tf32_t128, float, 2, 128, 8)
VACCEL_CONV_MMA(vaccel_conv2d_gemm_tf32_t64, float, 1, 64, 4)
VACCEL_CONV_MMA_SPLIT(vaccel_conv2d_gemm_tf32_t64_s2, float, 2)
VACCEL_CONV_MMA_SPLIT(vaccel_conv2d_gemm_tf32_t64_s4, float, 4)
VACCEL_CONV_MMA_SPLIT(vaccel_conv2d_gemm_tf32_t64_s8, float, 8)

// FP32 MATMUL in TF32: 128 x 128 tiles, or 64 x 64 alone (s1) or split over
// K by a cluster, chosen as for the FP32-core kernels (lowering_matmul.hpp).
extern "C" __global__ void __launch_bounds__(threads, 2)
    vaccel_matmul_tf32_t128(const __grid_constant__ struct vaccel_cuda_dispatch d)
{
    run<float, 128, 128, 8, 8, true, 1, true, true>(d);
}
extern "C" __global__ void __launch_bounds__(threads, 1)
    vaccel_matmul_tf32_t64_s1(const __grid_constant__ struct vaccel_cuda_dispatch d)
{
    run<float, 64, 64, 4, 4, true, 1, true, true>(d);
}
#define VACCEL_MATMUL_TF32_SPLIT(name, SPLIT)                                                \
    extern "C" __global__ void __cluster_dims__(SPLIT, 1, 1) __launch_bounds__(threads, 1)     \
        name(const __grid_constant__ struct vaccel_cuda_dispatch d)                            \
    {                                                                                          \
        run<float, 64, 64, 4, 4, true, SPLIT, true, true>(d);                                  \
    }
VACCEL_MATMUL_TF32_SPLIT(vaccel_matmul_tf32_t64_s2, 2)
VACCEL_MATMUL_TF32_SPLIT(vaccel_matmul_tf32_t64_s4, 4)
VACCEL_MATMUL_TF32_SPLIT(vaccel_matmul_tf32_t64_s8, 8)
