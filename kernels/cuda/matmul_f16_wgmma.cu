// matmul_f16_wgmma.cu - FP16 x FP16 MATMUL on Hopper's warpgroup MMA
// (wgmma.mma_async m64n256k16, FP32 accumulators), result FP32 or FP16
// (spec[10] = 1 or 2). Built for sm_90a only (kernels/cuda/matmul.cmake):
// the lowering runs it on compute capability 9.0 alone.
//
// Block tile 128 x bn x 64 (bn 256 or 128), two warpgroups (256 threads),
// warpgroup g computing rows 64 g .. 64 g + 63 of the tile. A cp.async
// pipeline fills shared memory in the layouts wgmma reads with 128-byte
// swizzling (16-byte chunk c of a 128-byte row r stored at c ^ (r & 7),
// every 8 rows a 1024-byte aligned atom):
//  - A (K-major): row m of the tile is its 64 halves of K, 128 bytes;
//  - B (N-major, transposed by wgmma): bn / 64 column blocks of 64 halves,
//    each 64 rows (k) of 128 bytes, blocks 8192 bytes apart.
// A stage is 16384 (A) + 128 bn (B) bytes; dynamic shared memory is
// stages * stage + 1024 bytes (to align the base). Same operand contract as
// matmul_f16.cu (C, W and bases multiples of 8 halves, C > 0).
#include "dispatch.h"
#include "mma_f16.cuh"

namespace {

using namespace vaccel_mma;

constexpr int bm = 128, bk = 64, threads = 256;
constexpr unsigned a_bytes = bm * bk * 2;
constexpr unsigned b_block_bytes = bk * 128;  // one 64-column block of B

// Shared memory matrix descriptor: start address, leading and stride byte
// offsets (all >> 4), 128-byte swizzle (layout type 1, bits 62-63).
__device__ __forceinline__ unsigned long long descriptor(unsigned addr, unsigned lead,
                                                         unsigned stride)
{
    return (unsigned long long)((addr & 0x3ffff) >> 4) |
           (unsigned long long)(lead >> 4) << 16 | (unsigned long long)(stride >> 4) << 32 |
           1ull << 62;
}

__device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int n>
__device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(n) : "memory");
}
// cp.async writes through the generic proxy, wgmma reads through the async
// proxy: each writer fences between its landed copies and the barrier.
__device__ __forceinline__ void proxy_fence()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Keeps the compiler from moving accumulator reads across a wait.
__device__ __forceinline__ void pin(float& x) { asm volatile("" : "+f"(x)::"memory"); }

// d (64 x n of the warpgroup) += A (64 x 16, K-major) * B (16 x n,
// N-major: trans-b = 1).
__device__ __forceinline__ void wgmma_n(float (&d)[128], unsigned long long a,
                                        unsigned long long b)
{
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
        "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
        "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, "
        "%60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, "
        "%72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, "
        "%84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, "
        "%108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, "
        "%120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
        :
          "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
          "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
          "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
          "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
          "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
          "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
          "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
          "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]),
          "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),
          "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
          "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]),
          "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]),
          "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]),
          "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]),
          "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]),
          "+f"(d[126]), "+f"(d[127])
        : "l"(a), "l"(b), "r"(1));
}
__device__ __forceinline__ void wgmma_n(float (&d)[64], unsigned long long a,
                                        unsigned long long b)
{
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
        "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
        "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, "
        "%60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 1;\n}\n"
        :
          "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
          "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
          "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
          "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
          "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
          "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
          "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
          "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(a), "l"(b), "r"(1));
}

template <int bn, int stages>
__device__ __forceinline__ void run(const vaccel_cuda_dispatch& d, unsigned char* smem)
{
    constexpr unsigned b_bytes = bk * bn * 2, stage_bytes = a_bytes + b_bytes;
    constexpr int b_nc = bn / 8, b_rows = threads / b_nc;  // B chunks a row, rows apart
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

    const int tid = threadIdx.x;
    // Swizzle atoms must start 1024-byte aligned.
    const unsigned base = (static_cast<unsigned>(__cvta_generic_to_shared(smem)) + 1023) & ~1023u;

    // A: 128 rows of 8 chunks, 4 per thread, rows 32 apart; B: 64 rows of
    // bn / 8 chunks, rows b_rows apart. Rows 8 apart share a swizzle.
    const int a_r = tid >> 3, a_ch = tid & 7, b_r = tid / b_nc, b_ch = tid % b_nc;
    const unsigned a_dst0 = base + a_r * 128 + ((a_ch ^ (a_r & 7)) << 4);
    const unsigned b_dst0 = base + a_bytes + (b_ch >> 3) * b_block_bytes + b_r * 128 +
                            (((b_ch & 7) ^ (b_r & 7)) << 4);
    // Element offsets fit 32 bits: every tensor has under 2^31 elements.
    const __half* a_src0 = pa + (unsigned)((m0 + a_r) * c + a_ch * 8);
    const __half* b_src0 = pb + (unsigned)(b_r * w + n0 + b_ch * 8);
    unsigned a_rows_ok = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) a_rows_ok |= (m0 + a_r + j * 32 < h) << j;
    const bool b_col_ok = n0 + b_ch * 8 < w;
    auto load_tile = [&](int stage, unsigned k0) {
        const unsigned off = stage * stage_bytes;
        const bool a_k_ok = k0 + a_ch * 8 < c;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const bool ok = a_k_ok && (a_rows_ok >> j & 1);
            copy16(a_dst0 + off + j * 32 * 128,
                   ok ? a_src0 + (unsigned)(j * 32 * (unsigned)c + k0) : pa, ok);
        }
#pragma unroll
        for (int j = 0; j < 64 / b_rows; ++j) {
            const bool ok = b_col_ok && k0 + b_r + j * b_rows < c;
            copy16(b_dst0 + off + j * b_rows * 128,
                   ok ? b_src0 + (unsigned)((k0 + j * b_rows) * (unsigned)w) : pb, ok);
        }
    };

    float acc[bn / 2];
#pragma unroll
    for (int i = 0; i < bn / 2; ++i) acc[i] = 0.0f;

    const int group = tid >> 7;
    const int ktiles = static_cast<int>((c + bk - 1) / bk);
    // Tiles kt + 1 and kt + 2 load while tile kt multiplies and tile
    // kt - 1's wgmma may still run: a stage is refilled two tiles after use.
#pragma unroll
    for (int s = 0; s < stages - 2; ++s) {
        if (s < ktiles) load_tile(s, s * bk);
        commit();
    }
    for (int kt = 0; kt < ktiles; ++kt) {
        wait_groups<stages - 3>();
        proxy_fence();
        // Tile kt is visible to both warpgroups, and both have finished
        // the wgmma of tile kt - 2 (waited below), whose stage refills now.
        __syncthreads();
        const int next = kt + stages - 2;
        if (next < ktiles) load_tile(next % stages, next * bk);
        commit();

        const unsigned a_tile = base + (kt % stages) * stage_bytes + group * 64 * 128;
        const unsigned b_tile = base + (kt % stages) * stage_bytes + a_bytes;
        wgmma_fence();
#pragma unroll
        for (int s = 0; s < bk / 16; ++s)
            // A: k-step s is 32 bytes along the swizzled rows; B: 16 rows.
            wgmma_n(acc, descriptor(a_tile + s * 32, 16, 1024),
                      descriptor(b_tile + s * 16 * 128, b_block_bytes, 1024));
        wgmma_commit();
        wgmma_wait<1>();
    }
    wgmma_wait<0>();
    wait_groups<0>();
#pragma unroll
    for (int i = 0; i < bn / 2; ++i) pin(acc[i]);

    // acc[4 j + e]: row 16 warp + lane / 4 (+ 8 for e >= 2) of the
    // warpgroup's 64, columns 8 j + 2 (lane % 4) (+ 1 for odd e).
    const bool half_out = d.spec[10] == 2;
    const unsigned long long out = d.buffer[d.spec[4]];
    const unsigned long long out_off = d.spec[5] + batch * h * w;
    const int lane = tid & 31, warp = (tid >> 5) & 3;
#pragma unroll
    for (int hi = 0; hi < 2; ++hi) {
        const unsigned long long row = m0 + group * 64 + warp * 16 + (lane >> 2) + hi * 8;
        if (row >= h) continue;
#pragma unroll
        for (int j = 0; j < bn / 8; ++j) {
            const unsigned long long col = n0 + j * 8 + (lane & 3) * 2;
            if (col >= w) continue;
            store_pair(out, half_out, out_off + row * w + col, acc[4 * j + hi * 2],
                       acc[4 * j + hi * 2 + 1]);
        }
    }
}

}  // namespace

// 128 x 256 x 64, 4 stages: 4 * 49152 + 1024 = 197632 bytes, 1 block an SM.
extern "C" __global__ void __launch_bounds__(threads, 1)
    vaccel_matmul_f16_wgmma(struct vaccel_cuda_dispatch d)
{
    extern __shared__ __align__(128) unsigned char smem[];
    run<256, 4>(d, smem);
}

// 128 x 128 x 64, 3 stages: 3 * 32768 + 1024 = 99328 bytes, 2 blocks an SM
// (one's epilogue overlaps the other's main loop).
extern "C" __global__ void __launch_bounds__(threads, 2)
    vaccel_matmul_f16_wgmma128(struct vaccel_cuda_dispatch d)
{
    extern __shared__ __align__(128) unsigned char smem[];
    run<128, 3>(d, smem);
}

// 128 x 128 x 64, 6 stages: 6 * 32768 + 1024 = 197632 bytes, 1 block an SM.
extern "C" __global__ void __launch_bounds__(threads, 1)
    vaccel_matmul_f16_wgmma128d(struct vaccel_cuda_dispatch d)
{
    extern __shared__ __align__(128) unsigned char smem[];
    run<128, 6>(d, smem);
}
