// matmul_f32.cu - FP32 x FP32 -> FP32 MATMUL on the FP32 cores (exact FMA).
//
// Block tile 128 x 128 x 8, 256 threads of 8 x 8 results (two 4 x 4
// quarters 64 apart, so shared loads do not conflict), A stored transposed
// in shared memory, double-buffered with the next tile prefetched into
// registers. Static shared memory only (16.6 KB). The lowering picks it
// only when C, W and the three bases are multiples of 4 words (every float4
// aligned and wholly inside or past a row) and C > 0; H and W edges and the
// K tail are zero-filled and predicated. Two entries of one body:
// vaccel_matmul_f32_simt runs every k; vaccel_matmul_f32_simt_k honours
// d.k_first / d.k_end (dispatch.h) in steps of bk, a part starting from the
// partial sums the output holds and adding its k range in the same order a
// whole run does. Whole runs keep the entry without the range, so cutting
// costs them nothing.
#include "dispatch.h"

namespace {

constexpr int bm = 128, bn = 128, bk = 8, threads = 256;
constexpr int a_row = bm + 4;  // the transposed stores of a warp's two k halves then miss each other's banks
constexpr int group_m = 8;

}  // namespace

template <bool ranged>
__device__ __forceinline__ void matmul_f32_simt(const struct vaccel_cuda_dispatch& d)
{
    __shared__ __align__(16) float sa[2][bk][a_row];
    __shared__ __align__(16) float sb[2][bk][bn];

    const unsigned long long h = d.spec[1], c = d.spec[2], w = d.spec[3];
    const unsigned tiles_h = d.spec[11], tiles_w = d.spec[12];
    const unsigned per_batch = tiles_h * tiles_w;
    const unsigned batch = blockIdx.x / per_batch;
    const unsigned t = blockIdx.x % per_batch;
    const unsigned in_group = group_m * tiles_w;
    const unsigned first = t / in_group * group_m;
    const unsigned rows = min(tiles_h - first, (unsigned)group_m);
    const unsigned long long m0 = (unsigned long long)(first + (t % in_group) % rows) * bm;
    const unsigned long long n0 = (unsigned long long)((t % in_group) / rows) * bn;

    const float* pa = reinterpret_cast<const float*>(d.buffer[d.spec[6]]) + d.spec[7] + batch * h * c;
    const float* pb = reinterpret_cast<const float*>(d.buffer[d.spec[8]]) + d.spec[9] + batch * c * w;

    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    // Loaders: one float4 of A (row ar, k ak..ak+3) and one of B (row bkr, cols bc..bc+3).
    const int ar = tid >> 1, ak = (tid & 1) * 4;
    const int bkr = tid >> 5, bc = (tid & 31) * 4;
    const bool a_row_ok = m0 + ar < h, b_col_ok = n0 + bc < w;
    // Both advance one tile per step; out-of-range lanes keep a valid address.
    // This launch's k range; k_lo is a multiple of bk (the backend's cut).
    const unsigned k_lo = ranged ? d.k_first : 0u;
    const unsigned cw = ranged && d.k_end != 0 && d.k_end < d.spec[2] ? d.k_end : d.spec[2];
    const float* a_src = pa + (a_row_ok ? (m0 + ar) * c : 0) + ak + k_lo;
    const float* b_src = pb + (b_col_ok ? n0 + bc + (bkr + k_lo) * w : 0);
    const unsigned long long b_step = b_col_ok ? bk * w : 0;

    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    auto load_a = [&](unsigned k0) {
        return a_row_ok && k0 + ak < cw ? *reinterpret_cast<const float4*>(a_src) : zero;
    };
    auto load_b = [&](unsigned k0) {
        return b_col_ok && k0 + bkr < cw ? *reinterpret_cast<const float4*>(b_src) : zero;
    };
    auto store = [&](int buf, float4 va, float4 vb) {
        sa[buf][ak + 0][ar] = va.x;
        sa[buf][ak + 1][ar] = va.y;
        sa[buf][ak + 2][ar] = va.z;
        sa[buf][ak + 3][ar] = va.w;
        *reinterpret_cast<float4*>(&sb[buf][bkr][bc]) = vb;
    };

    auto row_of = [&](int i) { return m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4); };
    // The output, found where it is used (not kept live through the loop:
    // registers are what bound this kernel's occupancy).
    auto output = [&] {
        return reinterpret_cast<float*>(d.buffer[d.spec[4]]) + d.spec[5] + batch * h * w;
    };
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
    if (ranged && k_lo != 0) {  // a later part: go on from the sums the part before stored
        const float* po = output();
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const unsigned long long row = row_of(i);
            if (row >= h) continue;
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const unsigned long long col = n0 + half * 64 + tx * 4;
                if (col >= w) continue;
                const float4 v = *reinterpret_cast<const float4*>(po + row * w + col);
                acc[i][half * 4] = v.x;
                acc[i][half * 4 + 1] = v.y;
                acc[i][half * 4 + 2] = v.z;
                acc[i][half * 4 + 3] = v.w;
            }
        }
    }

    store(0, load_a(k_lo), load_b(k_lo));
    __syncthreads();

    int buf = 0;
    for (unsigned k0 = k_lo; k0 < cw; k0 += bk) {
        const bool more = k0 + bk < cw;
        float4 na = zero, nb = zero;
        if (more) {
            a_src += bk;
            b_src += b_step;
            na = load_a(k0 + bk);
            nb = load_b(k0 + bk);
        }
#pragma unroll
        for (int k = 0; k < bk; ++k) {
            float av[8], bv[8];
            *reinterpret_cast<float4*>(&av[0]) = *reinterpret_cast<const float4*>(&sa[buf][k][ty * 4]);
            *reinterpret_cast<float4*>(&av[4]) = *reinterpret_cast<const float4*>(&sa[buf][k][64 + ty * 4]);
            *reinterpret_cast<float4*>(&bv[0]) = *reinterpret_cast<const float4*>(&sb[buf][k][tx * 4]);
            *reinterpret_cast<float4*>(&bv[4]) = *reinterpret_cast<const float4*>(&sb[buf][k][64 + tx * 4]);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        // The other buffer was last read before the previous barrier.
        if (more) store(buf ^ 1, na, nb);
        __syncthreads();
        buf ^= 1;
    }

    float* po = output();
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const unsigned long long row = row_of(i);
        if (row >= h) continue;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const unsigned long long col = n0 + half * 64 + tx * 4;
            if (col >= w) continue;
            *reinterpret_cast<float4*>(po + row * w + col) =
                make_float4(acc[i][half * 4], acc[i][half * 4 + 1], acc[i][half * 4 + 2], acc[i][half * 4 + 3]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(threads, 2) vaccel_matmul_f32_simt(struct vaccel_cuda_dispatch d)
{
    matmul_f32_simt<false>(d);
}

extern "C" __global__ void __launch_bounds__(threads, 2) vaccel_matmul_f32_simt_k(struct vaccel_cuda_dispatch d)
{
    matmul_f32_simt<true>(d);
}
