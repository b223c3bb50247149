// matmul_f16.cu - FP16 x FP16 MATMUL on tensor cores (mma.sync m16n8k16,
// FP32 accumulators), result FP32 or FP16 (spec[10] = 1 or 2).
//
// Block tile 128 x 256 x 32, 8 warps of 64 x 64, a 4-stage cp.async
// pipeline: 98304 bytes of dynamic shared memory. The lowering picks it only
// when C, W and the three bases are multiples of 8 halves (every 16-byte
// copy aligned and wholly inside or past a row) and C > 0; H and W edges
// and the K tail are zero-filled and predicated.
#include <cuda_fp16.h>

#include "dispatch.h"

namespace {

constexpr int bm = 128, bn = 256, bk = 32, stages = 4, threads = 256;
constexpr int a_stage = bm * bk;  // halves
constexpr int b_stage = bk * bn;
constexpr int group_m = 8;  // row blocks walked together, for L2 reuse

// A tile: rows of 4 chunks of 8 halves; chunk c of row r stored at c ^ ((r >> 1) & 3),
// so the 8 rows an ldmatrix phase reads fall in 8 distinct bank groups.
__device__ __forceinline__ unsigned a_offset(int r, int c) { return r * bk + ((c ^ ((r >> 1) & 3)) << 3); }
// B tile: rows (k) of 32 chunks; chunk c of row k stored at c ^ (k & 7).
__device__ __forceinline__ unsigned b_offset(int k, int c) { return k * bn + ((c ^ (k & 7)) << 3); }

__device__ __forceinline__ void copy16(unsigned dst, const void* src, bool valid)
{
    // A source size of 0 fills the 16 bytes with zeros and reads nothing.
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int n>
__device__ __forceinline__ void wait_groups() { asm volatile("cp.async.wait_group %0;\n" ::"n"(n) : "memory"); }

__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_trans(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace

extern "C" __global__ void __launch_bounds__(threads, 1) vaccel_matmul_f16_tc(struct vaccel_cuda_dispatch d)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned long long h = d.spec[1], c = d.spec[2], w = d.spec[3];
    const unsigned tiles_h = d.spec[11], tiles_w = d.spec[12];
    const unsigned per_batch = tiles_h * tiles_w;
    const unsigned batch = blockIdx.x / per_batch;
    const unsigned t = blockIdx.x % per_batch;
    // Grouped order: group_m row blocks sweep the columns together.
    const unsigned in_group = group_m * tiles_w;
    const unsigned first = t / in_group * group_m;
    const unsigned rows = min(tiles_h - first, (unsigned)group_m);
    const unsigned tile_m = first + (t % in_group) % rows;
    const unsigned tile_n = (t % in_group) / rows;
    const unsigned long long m0 = (unsigned long long)tile_m * bm, n0 = (unsigned long long)tile_n * bn;

    const __half* pa = reinterpret_cast<const __half*>(d.buffer[d.spec[6]]) + d.spec[7] + batch * h * c;
    const __half* pb = reinterpret_cast<const __half*>(d.buffer[d.spec[8]]) + d.spec[9] + batch * c * w;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp >> 2, warp_n = warp & 3;
    const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    const unsigned sb = sa + stages * a_stage * 2;

    auto load_tile = [&](int stage, unsigned long long k0) {
        const unsigned a_dst = sa + stage * a_stage * 2, b_dst = sb + stage * b_stage * 2;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int id = tid + j * threads, r = id >> 2, ch = id & 3;
            const unsigned long long gr = m0 + r, gk = k0 + ch * 8;
            const bool ok = gr < h && gk < c;
            copy16(a_dst + a_offset(r, ch) * 2, ok ? pa + gr * c + gk : pa, ok);
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int id = tid + j * threads, r = id >> 5, ch = id & 31;
            const unsigned long long gk = k0 + r, gn = n0 + ch * 8;
            const bool ok = gk < c && gn < w;
            copy16(b_dst + b_offset(r, ch) * 2, ok ? pb + gk * w + gn : pb, ok);
        }
    };

    float acc[4][8][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

    const int ktiles = static_cast<int>((c + bk - 1) / bk);
#pragma unroll
    for (int s = 0; s < stages - 1; ++s) {
        if (s < ktiles) load_tile(s, (unsigned long long)s * bk);
        commit();
    }

    for (int kt = 0; kt < ktiles; ++kt) {
        // Tile kt has landed; every warp is done with the stage refilled next.
        wait_groups<stages - 2>();
        __syncthreads();
        const int next = kt + stages - 1;
        if (next < ktiles) load_tile(next % stages, (unsigned long long)next * bk);
        commit();

        const int stage = kt % stages;
        const unsigned a_src = sa + stage * a_stage * 2, b_src = sb + stage * b_stage * 2;
#pragma unroll
        for (int kk = 0; kk < bk / 16; ++kk) {
            unsigned af[4][4], bf[4][4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int r = warp_m * 64 + i * 16 + (lane & 15);
                ldsm_x4(af[i], a_src + a_offset(r, kk * 2 + (lane >> 4)) * 2);
            }
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int k = kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7);
                const int ch = (warp_n * 64 + j * 16) / 8 + (lane >> 4);
                ldsm_x4_trans(bf[j], b_src + b_offset(k, ch) * 2);
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    mma(acc[i][j], af[i], bf[j >> 1][(j & 1) * 2], bf[j >> 1][(j & 1) * 2 + 1]);
        }
    }
    wait_groups<0>();

    // Each accumulator pair is (row, col), (row, col + 1): W is a multiple
    // of 8, so a pair is wholly inside or past the edge.
    const bool half_out = d.spec[10] == 2;
    const unsigned long long out_off = d.spec[5] + batch * h * w;
    const int g = lane >> 2, q = lane & 3;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int hi = 0; hi < 2; ++hi) {
            const unsigned long long row = m0 + warp_m * 64 + i * 16 + g + hi * 8;
            if (row >= h) continue;
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const unsigned long long col = n0 + warp_n * 64 + j * 8 + q * 2;
                if (col >= w) continue;
                const float x = acc[i][j][hi * 2], y = acc[i][j][hi * 2 + 1];
                const unsigned long long at = out_off + row * w + col;
                if (half_out)
                    reinterpret_cast<__half2*>(d.buffer[d.spec[4]])[at / 2] = __floats2half2_rn(x, y);
                else
                    reinterpret_cast<float2*>(d.buffer[d.spec[4]])[at / 2] = make_float2(x, y);
            }
        }
}
