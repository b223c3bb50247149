// matmul_f16_mma.cu - FP16 x FP16 MATMUL on tensor cores (mma.sync
// m16n8k16, FP32 accumulators), result FP32 or FP16 (spec[10] = 1 or 2):
// the tile-shape variants of matmul_f16.cu, one template.
//
// Same contract as matmul_f16.cu (C, W and the three bases multiples of 8
// halves, C > 0; edges and the K tail zero-filled and predicated). The main
// loop double-buffers the warp's fragments: the fragments of k-step s + 1
// (of the next k tile after the last step) are read from shared memory
// while the mma of step s run, and the block waits for the next tile one
// step before the end of the current one.
#include "dispatch.h"
#include "mma_f16.cuh"

namespace {

using namespace vaccel_mma;

// Offset (halves) of 16-byte chunk c of row r in a tile whose rows are nc
// chunks: the chunk index is XORed with the row so that the 8 rows an
// ldmatrix phase reads hit 8 distinct bank groups.
template <int nc>
__device__ __forceinline__ unsigned swizzled(int r, int c)
{
    static_assert(nc == 4 || nc % 8 == 0, "rows of 64 bytes or of multiples of 128");
    const int x = nc == 4 ? (r >> 1) & 3 : r & 7;
    return r * nc * 8 + ((c ^ x) << 3);
}

// Block tile bm x bn x bk, wm x wn warps, `stages` cp.async stages; dbuf:
// fragments double-buffered (more registers).
template <int bm, int bn, int bk, int wm, int wn, int stages, bool dbuf>
struct Tc {
    static constexpr int threads = wm * wn * 32;
    static constexpr int tm = bm / wm, tn = bn / wn;  // warp tile
    static constexpr int mi = tm / 16, ni = tn / 8, kk_steps = bk / 16;
    static constexpr int a_stage = bm * bk, b_stage = bk * bn;  // halves
    static_assert(tm % 16 == 0 && tn % 16 == 0, "warp tile of whole ldmatrix x4 loads");
    static_assert(!dbuf || kk_steps % 2 == 0, "fragment buffers alternate within a tile");
    static_assert(a_stage / 8 % threads == 0 && b_stage / 8 % threads == 0, "whole copies");

    __device__ static void run(const vaccel_cuda_dispatch& d, unsigned char* smem)
    {
        const unsigned long long h = d.spec[1], c = d.spec[2], w = d.spec[3];
        const unsigned tiles_h = d.spec[11], tiles_w = d.spec[12];
        const unsigned per_batch = tiles_h * tiles_w;
        const unsigned batch = blockIdx.x / per_batch;
        const TileAt tile = grouped_tile(blockIdx.x % per_batch, tiles_h, tiles_w, 8);
        const unsigned long long m0 = (unsigned long long)tile.m * bm;
        const unsigned long long n0 = (unsigned long long)tile.n * bn;

        const __half* pa =
            reinterpret_cast<const __half*>(d.buffer[d.spec[6]]) + d.spec[7] + batch * h * c;
        const __half* pb =
            reinterpret_cast<const __half*>(d.buffer[d.spec[8]]) + d.spec[9] + batch * c * w;

        const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
        const int warp_m = warp / wn, warp_n = warp % wn;
        const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
        const unsigned sb = sa + stages * a_stage * 2;

        // Each thread copies the same chunk of rows a_rows (b_rows) apart:
        // the rows' swizzle is the same, so one shared offset serves all.
        constexpr int a_nc = bk / 8, b_nc = bn / 8;
        constexpr int a_rows = threads / a_nc, b_rows = threads / b_nc;
        static_assert(threads % b_nc == 0 && a_rows % 8 == 0 && b_rows % 8 == 0, "one swizzle");
        const int a_r = tid / a_nc, a_ch = tid % a_nc, b_r = tid / b_nc, b_ch = tid % b_nc;
        const unsigned a_dst0 = sa + swizzled<a_nc>(a_r, a_ch) * 2;
        const unsigned b_dst0 = sb + swizzled<b_nc>(b_r, b_ch) * 2;
        // Element offsets fit 32 bits: every tensor has under 2^31 elements.
        const __half* a_src0 = pa + (unsigned)((m0 + a_r) * c + a_ch * 8);
        const __half* b_src0 = pb + (unsigned)(b_r * w + n0 + b_ch * 8);
        unsigned a_rows_ok = 0;
#pragma unroll
        for (int j = 0; j < a_stage / 8 / threads; ++j)
            a_rows_ok |= (m0 + a_r + j * a_rows < h) << j;
        const bool b_col_ok = n0 + b_ch * 8 < w;
        auto load_tile = [&](int stage, unsigned k0) {
            const unsigned a_dst = a_dst0 + stage * a_stage * 2;
            const unsigned b_dst = b_dst0 + stage * b_stage * 2;
            const bool a_k_ok = k0 + a_ch * 8 < c;
#pragma unroll
            for (int j = 0; j < a_stage / 8 / threads; ++j) {
                const bool ok = a_k_ok && (a_rows_ok >> j & 1);
                const __half* src = a_src0 + (unsigned)(j * a_rows * (unsigned)c + k0);
                copy16(a_dst + j * a_rows * bk * 2, ok ? src : pa, ok);
            }
#pragma unroll
            for (int j = 0; j < b_stage / 8 / threads; ++j) {
                const bool ok = b_col_ok && k0 + b_r + j * b_rows < c;
                const __half* src = b_src0 + (unsigned)((k0 + j * b_rows) * (unsigned)w);
                copy16(b_dst + j * b_rows * bn * 2, ok ? src : pb, ok);
            }
        };

        unsigned af[dbuf ? 2 : 1][mi][4], bf[dbuf ? 2 : 1][ni / 2][4];
        auto load_frags = [&](int buf, int stage, int kk) {
            const unsigned a_src = sa + stage * a_stage * 2, b_src = sb + stage * b_stage * 2;
#pragma unroll
            for (int i = 0; i < mi; ++i) {
                const int r = warp_m * tm + i * 16 + (lane & 15);
                ldsm_x4(af[buf][i], a_src + swizzled<bk / 8>(r, kk * 2 + (lane >> 4)) * 2);
            }
#pragma unroll
            for (int j = 0; j < ni / 2; ++j) {
                const int k = kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7);
                const int ch = (warp_n * tn + j * 16) / 8 + (lane >> 4);
                ldsm_x4_trans(bf[buf][j], b_src + swizzled<bn / 8>(k, ch) * 2);
            }
        };

        float acc[mi][ni][4];
#pragma unroll
        for (int i = 0; i < mi; ++i)
#pragma unroll
            for (int j = 0; j < ni; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

        const int ktiles = static_cast<int>((c + bk - 1) / bk);
#pragma unroll
        for (int s = 0; s < stages - 1; ++s) {
            if (s < ktiles) load_tile(s, s * bk);
            commit();
        }
        wait_groups<stages - 2>();
        __syncthreads();
        if (dbuf) load_frags(0, 0, 0);

        int read_stage = 0, write_stage = stages - 1;
        for (int kt = 0; kt < ktiles; ++kt) {
#pragma unroll
            for (int kk = 0; kk < kk_steps; ++kk) {
                if (!dbuf) load_frags(0, read_stage, kk);
                if (kk == kk_steps - 1) {
                    // Tile kt + 1 has landed, and every warp has read its
                    // last fragments of tile kt - 1, whose stage is refilled
                    // at step 0 of the next tile.
                    wait_groups<stages - 2>();
                    __syncthreads();
                    read_stage = read_stage + 1 == stages ? 0 : read_stage + 1;
                }
                // Past the last tile this reads a stale stage, unused.
                if (dbuf) load_frags((kk + 1) & 1, read_stage, (kk + 1) % kk_steps);
                if (kk == 0) {
                    const int next = kt + stages - 1;
                    if (next < ktiles) load_tile(write_stage, next * bk);
                    commit();
                    write_stage = write_stage + 1 == stages ? 0 : write_stage + 1;
                }
                const int f = dbuf ? kk & 1 : 0;
#pragma unroll
                for (int i = 0; i < mi; ++i)
#pragma unroll
                    for (int j = 0; j < ni; ++j)
                        mma(acc[i][j], af[f][i], bf[f][j >> 1][(j & 1) * 2],
                            bf[f][j >> 1][(j & 1) * 2 + 1]);
            }
        }
        wait_groups<0>();

        // Each accumulator pair is (row, col), (row, col + 1): W is a
        // multiple of 8, so a pair is wholly inside or past the edge.
        const bool half_out = d.spec[10] == 2;
        const unsigned long long out = d.buffer[d.spec[4]];
        const unsigned long long out_off = d.spec[5] + batch * h * w;
        const int g = lane >> 2, q = lane & 3;
#pragma unroll
        for (int i = 0; i < mi; ++i)
#pragma unroll
            for (int hi = 0; hi < 2; ++hi) {
                const unsigned long long row = m0 + warp_m * tm + i * 16 + g + hi * 8;
                if (row >= h) continue;
#pragma unroll
                for (int j = 0; j < ni; ++j) {
                    const unsigned long long col = n0 + warp_n * tn + j * 8 + q * 2;
                    if (col >= w) continue;
                    store_pair(out, half_out, out_off + row * w + col, acc[i][j][hi * 2],
                               acc[i][j][hi * 2 + 1]);
                }
            }
    }
};

}  // namespace

// One extern "C" kernel per variant; backends/cuda/src/lowering_matmul.cpp
// lists each with its threads and dynamic shared memory,
// stages * (bm * bk + bk * bn) * 2 bytes.
#define VACCEL_MATMUL_F16_VARIANT(name, bm, bn, bk, wm, wn, stages, dbuf, min_blocks)     \
    extern "C" __global__ void __launch_bounds__(wm * wn * 32, min_blocks)               \
        name(struct vaccel_cuda_dispatch d)                                              \
    {                                                                                    \
        extern __shared__ __align__(128) unsigned char smem[];                           \
        Tc<bm, bn, bk, wm, wn, stages, dbuf>::run(d, smem);                              \
    }

// 128 x 256 x 32, 8 warps of 64 x 64, 4 stages: 98304 bytes.
VACCEL_MATMUL_F16_VARIANT(vaccel_matmul_f16_t128x256, 128, 256, 32, 2, 4, 4, true, 1)
VACCEL_MATMUL_F16_VARIANT(vaccel_matmul_f16_t128x256s, 128, 256, 32, 2, 4, 4, false, 1)
// 128 x 256 x 64, 8 warps of 64 x 64, 3 stages: 147456 bytes.
VACCEL_MATMUL_F16_VARIANT(vaccel_matmul_f16_t128x256k64, 128, 256, 64, 2, 4, 3, false, 1)
// 256 x 128 x 32, 8 warps of 64 x 64, 4 stages: 98304 bytes.
VACCEL_MATMUL_F16_VARIANT(vaccel_matmul_f16_t256x128, 256, 128, 32, 4, 2, 4, true, 1)
// 128 x 128 x 32, 4 warps of 64 x 64, 4 stages: 65536 bytes, 2 blocks an SM.
VACCEL_MATMUL_F16_VARIANT(vaccel_matmul_f16_t128x128, 128, 128, 32, 2, 2, 4, true, 2)
// 128 x 128 x 32, 8 warps of 64 x 32, 4 stages: 65536 bytes, 2 blocks an SM.
VACCEL_MATMUL_F16_VARIANT(vaccel_matmul_f16_t128x128w8, 128, 128, 32, 2, 4, 4, false, 2)
