// matmul.cu - MATMUL for any shape, alignment and dtype pair (spec[10]:
// 0 FP32 x FP32 -> FP32, 1 FP16 x FP16 -> FP32, 2 FP16 x FP16 -> FP16),
// elements loaded one at a time and accumulated in FP32.
//  - vaccel_matmul_general: 16 x 16 results per block of 256 threads;
//  - vaccel_matmul_rows: H <= 4, 32 columns per block, C split over the
//    8 warps and summed in shared memory.
#include <cuda_fp16.h>

#include "dispatch.h"

namespace {

constexpr int tile = 16;
constexpr int row_cols = 32, row_slices = 8, max_rows = 4;

__device__ __forceinline__ float load(unsigned long long base, unsigned long long i, bool half)
{
    return half ? __half2float(reinterpret_cast<const __half*>(base)[i]) : reinterpret_cast<const float*>(base)[i];
}

__device__ __forceinline__ void store(unsigned long long base, unsigned long long i, float v, bool half)
{
    if (half)
        reinterpret_cast<__half*>(base)[i] = __float2half_rn(v);  // nearest even
    else
        reinterpret_cast<float*>(base)[i] = v;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(256) vaccel_matmul_general(struct vaccel_cuda_dispatch d)
{
    __shared__ float sa[tile][tile + 1];
    __shared__ float sb[tile][tile + 1];
    const unsigned long long h = d.spec[1], c = d.spec[2], w = d.spec[3];
    const unsigned tiles_h = d.spec[11], tiles_w = d.spec[12];
    const unsigned per_batch = tiles_h * tiles_w;
    const unsigned long long batch = blockIdx.x / per_batch;
    const unsigned t = blockIdx.x % per_batch;
    const unsigned long long m0 = (unsigned long long)(t / tiles_w) * tile, n0 = (unsigned long long)(t % tiles_w) * tile;
    const bool half_in = d.spec[10] != 0, half_out = d.spec[10] == 2;
    const unsigned long long a = d.buffer[d.spec[6]], b = d.buffer[d.spec[8]];
    const unsigned long long a_off = d.spec[7] + batch * h * c, b_off = d.spec[9] + batch * c * w;
    const int tx = threadIdx.x % tile, ty = threadIdx.x / tile;
    const unsigned long long row = m0 + ty, col = n0 + tx;

    float acc = 0.0f;
    for (unsigned long long k0 = 0; k0 < c; k0 += tile) {
        sa[ty][tx] = row < h && k0 + tx < c ? load(a, a_off + row * c + k0 + tx, half_in) : 0.0f;
        sb[ty][tx] = k0 + ty < c && col < w ? load(b, b_off + (k0 + ty) * w + col, half_in) : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < tile; ++k) acc = fmaf(sa[ty][k], sb[k][tx], acc);
        __syncthreads();
    }
    if (row < h && col < w) store(d.buffer[d.spec[4]], d.spec[5] + batch * h * w + row * w + col, acc, half_out);
}

extern "C" __global__ void __launch_bounds__(256) vaccel_matmul_rows(struct vaccel_cuda_dispatch d)
{
    __shared__ float part[row_slices][max_rows][row_cols];
    const unsigned long long h = d.spec[1], c = d.spec[2], w = d.spec[3];
    const unsigned tiles_w = d.spec[12];
    const unsigned long long batch = blockIdx.x / tiles_w;
    const unsigned long long col = (unsigned long long)(blockIdx.x % tiles_w) * row_cols + threadIdx.x % row_cols;
    const unsigned slice = threadIdx.x / row_cols;
    const bool half_in = d.spec[10] != 0, half_out = d.spec[10] == 2;
    const unsigned long long a = d.buffer[d.spec[6]], b = d.buffer[d.spec[8]];
    const unsigned long long a_off = d.spec[7] + batch * h * c, b_off = d.spec[9] + batch * c * w;

    float acc[max_rows] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (col < w) {
        // Each warp reads 32 consecutive columns of one row of B; A's
        // element is the same for the whole warp.
#pragma unroll 4
        for (unsigned long long k = slice; k < c; k += row_slices) {
            const float x = load(b, b_off + k * w + col, half_in);
#pragma unroll
            for (int r = 0; r < max_rows; ++r)
                if (r < h) acc[r] = fmaf(load(a, a_off + r * c + k, half_in), x, acc[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < max_rows; ++r) part[slice][r][threadIdx.x % row_cols] = acc[r];
    __syncthreads();
    if (slice != 0 || col >= w) return;
    const unsigned long long out_off = d.spec[5] + batch * h * w;
    for (unsigned r = 0; r < h; ++r) {
        float sum = 0.0f;
#pragma unroll
        for (int s = 0; s < row_slices; ++s) sum += part[s][r][threadIdx.x];
        store(d.buffer[d.spec[4]], out_off + r * w + col, sum, half_out);
    }
}
