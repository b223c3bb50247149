// conv2d_gemm.cuh - TOSA CONV2D on NHWC FP32 or FP16 as an implicit GEMM,
// on the FP32 cores (FMA; conv2d_gemm.cu) or the tensor cores (MMA;
// conv2d_gemm_mma.cu): FP16 operands widened on load, the sum and the bias
// in FP32, the result rounded to FP16 once; the tiling of matmul_f32.cu:
//   result [M, OC] = A [M, K] x W^T + bias,  M = N*OH*OW, K = KH*KW*IC,
// where A's row m is output pixel m's input patch in (ky, kx, ic) order,
// read straight from the input (no im2col copy; taps on padding are zero)
// and W is the weight as TOSA stores it, [OC, KH*KW*IC] row-major
// (backends/gpu/include/vaccel/gpu/lowering_spatial.hpp, ConvGemm).
//
// A block computes a BM x BN tile of the result with 256 threads, each a
// TM x TN sub-tile (in 4 x 4 quarters BM / (TM/4) rows and BN / (TN/4)
// columns apart, so shared loads do not conflict), over K in steps of 8;
// both operands are stored transposed in shared memory ([k][row], [k][col])
// and double-buffered, the next step's loads held in registers meanwhile.
// VEC (spec 24 = 1): IC, OC and the four bases are multiples of 4, so a
// step's four taps k..k+3 are four channels of one input pixel and four
// elements of one weight row, and four results one 16-byte (FP32) or
// 8-byte (FP16) store; the lowering
// checks it (backends/cuda/src/lowering_conv.cpp). Otherwise every element
// is loaded and stored on its own.
// The sum over K is in FMA steps in tile order, not the CPU device's order:
// results differ from it by rounding only (the GPU tests' tolerance).
//
// Tensor cores (MMA): the same loads, shared layout and stores; each warp
// of the 2 x 4 owns a BM/2 x BN/4 part of the tile and takes each step of
// 8 taps as mma.sync m16n8k8 products (FP32 accumulators). FP16 operands
// go in as they are, so FP16 CONV2D keeps TOSA's FP16 rules with an FP32
// accumulator (the default for FP16). FP32 operands are rounded to TF32
// (10 mantissa bits) where they are stored in shared memory: outside
// TOSA's FP32 rules, only with [devices.cuda] fp32_math = "tf32"
// (docs/adr/0028-tf32-opt-in.md); the sums stay FP32.
//
// Split K (the _s2, _s4 and _s8 kernels, 64 x 64 tiles): a tile with too
// few blocks to fill the device (batch 1 layers of 7 x 7 or 14 x 14 pixels)
// is computed by a cluster of SPLIT blocks (__cluster_dims__, blocks
// tile * SPLIT + rank), block `rank` summing the rank-th of SPLIT equal runs
// of K steps. Each block leaves its partial tile in its shared memory; after
// a cluster barrier, block `rank` adds the SPLIT partials of its BM / SPLIT
// rows from every block's shared memory (distributed shared memory), in rank
// order, then the bias, and stores them; a second barrier keeps every block
// bias. No scratch memory and no
// atomics: the order of every sum is fixed by the shape, so runs agree bit
// for bit.
//
// MATMUL (the vaccel_matmul_f32_t64_s* kernels): FP32 MATMUL with few rows
// (a transformer's [1, 128, 768] at batch 1), on the same 64 x 64 tiles and
// split K, reading MATMUL's spec words (backends/cuda/src/lowering_matmul.hpp:
// N H C W, out, A, B, mode, tiles along H and W; 13 SPLIT). A [H, C] is the
// input of a 1 x 1 convolution of H pixels and C channels; B is [C, W]
// row-major, so its step is loaded as 8 rows of 64 columns (float4 along
// W); no bias; one batch per tiles_m * tiles_n tiles. Always the float4
// path (C, W and the bases are multiples of 4: the lowering checks it).
// Spec words:
//   0 N  1 IH  2 IW  3 IC  4 OH  5 OW  6 OC  7 KH  8 KW  9 SY  10 SX
//   11 DY  12 DX  13 PT  14 PL  15 BIAS_PER_CHANNEL  16 OUT_BUF 17 OUT_BASE
//   18 IN_BUF 19 IN_BASE 20 W_BUF 21 W_BASE 22 B_BUF 23 B_BASE  24 VEC
//   25 tiles along M  26 tiles along OC  27 SPLIT (the kernel's own)
//   28..47 the epilogue (epilogue.cuh; CONV2D only): its stages applied to
//          each result, at its NHWC index row * OC + oc, before the store
#pragma once

#include <cooperative_groups.h>
#include <cuda_fp16.h>

#include "dispatch.h"
#include "epilogue.cuh"

namespace vaccel_conv_gemm {

// Loads and stores of one storage type, as FP32 values.
template <typename T>
struct Io;
template <>
struct Io<float> {
    static __device__ __forceinline__ float get(const float* p) { return *p; }
    static __device__ __forceinline__ float4 get4(const float* p)
    {
        return *reinterpret_cast<const float4*>(p);
    }
    static __device__ __forceinline__ void put(float* p, float v) { *p = v; }
    static __device__ __forceinline__ void put4(float* p, float4 v)
    {
        *reinterpret_cast<float4*>(p) = v;
    }
    static __device__ __forceinline__ float2 get2(const float* p)
    {
        return *reinterpret_cast<const float2*>(p);
    }
    static __device__ __forceinline__ void put2(float* p, float2 v)
    {
        *reinterpret_cast<float2*>(p) = v;
    }
};
template <>
struct Io<__half> {
    static __device__ __forceinline__ float get(const __half* p) { return __half2float(*p); }
    static __device__ __forceinline__ float4 get4(const __half* p)
    {
        const uint2 raw = *reinterpret_cast<const uint2*>(p);
        const float2 lo = __half22float2(*reinterpret_cast<const __half2*>(&raw.x));
        const float2 hi = __half22float2(*reinterpret_cast<const __half2*>(&raw.y));
        return make_float4(lo.x, lo.y, hi.x, hi.y);
    }
    static __device__ __forceinline__ void put(__half* p, float v) { *p = __float2half_rn(v); }
    static __device__ __forceinline__ void put4(__half* p, float4 v)
    {
        const __half2 lo = __floats2half2_rn(v.x, v.y), hi = __floats2half2_rn(v.z, v.w);
        uint2 raw;
        raw.x = *reinterpret_cast<const unsigned*>(&lo);
        raw.y = *reinterpret_cast<const unsigned*>(&hi);
        *reinterpret_cast<uint2*>(p) = raw;
    }
    static __device__ __forceinline__ float2 get2(const __half* p)
    {
        return __half22float2(*reinterpret_cast<const __half2*>(p));
    }
    static __device__ __forceinline__ void put2(__half* p, float2 v)
    {
        *reinterpret_cast<__half2*>(p) = __floats2half2_rn(v.x, v.y);
    }
};

// The tensor-core steps (MMA): one m16n8k8 product of a warp's A rows and
// B columns, FP32 accumulators. Fragments (PTX ISA, mma.m16n8k8), lane
// l = 4 g + t: C/D elements {(g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)};
// TF32 A {(g, t), (g+8, t), (g, t+4), (g+8, t+4)}, B {(t, g), (t+4, g)}
// as (row, k) and (k, column); FP16 A pairs {(g, 2t..2t+1), (g+8, ..)},
// B the pair (2t..2t+1, g), the lower k in the lower half.
__device__ __forceinline__ float tf32_round(float v)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
    return __uint_as_float(r);
}
__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_f16(float (&d)[4], const unsigned (&a)[2], unsigned b)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b));
}
// Two FP16 values (exact: they were FP16 before they were widened) as one
// register, `lo` in the lower half.
__device__ __forceinline__ unsigned half_pair(float lo, float hi)
{
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&h);
}

constexpr int bk = 8, threads = 256;
constexpr unsigned epilogue_word = 28;

// A CONV2D result (bias added) as the store leaves it: rounded to T, then
// through the epilogue's stages when it has any.
template <typename T, bool MATMUL>
__device__ __forceinline__ float finished(const vaccel_cuda::Epilogue& e,
                                          unsigned long long index, float v)
{
    if constexpr (MATMUL) return v;
    if (e.stages == 0u) return v;
    constexpr unsigned dt = sizeof(T) == 4 ? vaccel_cuda::DT_FP32 : vaccel_cuda::DT_FP16;
    return e.apply(dt, static_cast<unsigned>(index),
                   vaccel_cuda::widen(dt, vaccel_cuda::narrow(dt, v)));
}

struct Geometry {
    unsigned ih, iw, ic, oh, ow, oc, kw, sy, sx, dy, dx, pt, pl;
    unsigned long long m, k;
};

// The input element of A[row pixel (n, iy0, ix0)][k], or 0 on padding.
template <typename T>
__device__ __forceinline__ float patch_element(const Geometry& g, const T* in, unsigned n,
                                               int iy0, int ix0, unsigned long long k)
{
    const unsigned tap = static_cast<unsigned>(k / g.ic), c = static_cast<unsigned>(k % g.ic);
    const unsigned ky = tap / g.kw, kx = tap % g.kw;
    const int iy = iy0 + static_cast<int>(ky * g.dy), ix = ix0 + static_cast<int>(kx * g.dx);
    if (iy < 0 || iy >= static_cast<int>(g.ih) || ix < 0 || ix >= static_cast<int>(g.iw)) return 0.0f;
    return Io<T>::get(in + ((static_cast<unsigned long long>(n) * g.ih + iy) * g.iw + ix) * g.ic + c);
}

// MMA: the products on the tensor cores (FP16 operands as they are; FP32
// operands rounded to TF32 as they are stored in shared memory, the
// [devices.cuda] fp32_math = "tf32" opt-in), eight warps in 2 x 4 each
// owning a BM/2 x BN/4 part of the tile; otherwise each thread's TM x TN
// sub-tile on the FP32 cores.
template <typename T, int BM, int BN, int TM, int TN, bool VEC, int SPLIT, bool MATMUL = false,
          bool MMA = false>
__device__ __forceinline__ void run(const vaccel_cuda_dispatch& d)
{
    static_assert(!MATMUL || (VEC && BN * bk / 4 <= threads), "MATMUL: the float4 path");
    static_assert(BM * bk / 4 <= threads && BN * bk / 4 <= threads, "one float4 per loader");
    static_assert((BM / TM) * (BN / TN) == threads, "a sub-tile per thread");
    constexpr int qm = TM / 4, qn = TN / 4;  // quarters per thread
    // Row padding: with 4, the loaders' stores and the FP16 fragments'
    // loads are free of bank conflicts; the TF32 fragments need 8.
    constexpr int pad = MMA && sizeof(T) == 4 ? 8 : 4;
    constexpr int a_row = BM + pad, b_row = BN + pad;
    constexpr int wm_size = BM / 2, wn_size = BN / 4;  // MMA: a warp's part
    constexpr int mi_count = wm_size / 16, ni_count = wn_size / 8;
    static_assert(!MMA || mi_count * ni_count * 4 == TM * TN, "MMA: the same results a thread");
    // One shared array: the double-buffered operand steps, and (split K)
    // the partial tile over them once the last step has been read.
    constexpr int step_floats = 2 * bk * (a_row + b_row);
    constexpr int smem_floats = SPLIT > 1 && BM * BN > step_floats ? BM * BN : step_floats;
    __shared__ __align__(16) float smem[smem_floats];
    auto sa = reinterpret_cast<float (*)[bk][a_row]>(smem);
    auto sb = reinterpret_cast<float (*)[bk][b_row]>(smem + 2 * bk * a_row);

    Geometry g;
    const T* in;
    const T* weight;
    const T* bias = nullptr;
    T* out;
    bool bias_per_channel = false;
    vaccel_cuda::Epilogue epilogue{};
    if constexpr (!MATMUL) epilogue = vaccel_cuda::Epilogue::of(d, epilogue_word);
    unsigned tiles_n, tile = blockIdx.x / SPLIT;
    const unsigned rank = blockIdx.x % SPLIT;
    if constexpr (MATMUL) {
        // H pixels of C channels through a 1 x 1 kernel; this tile's batch.
        const unsigned long long h = d.spec[1], c = d.spec[2], w = d.spec[3];
        g.ih = g.iw = g.oh = g.ow = g.kw = 1, g.ic = d.spec[2], g.oc = d.spec[3];
        g.sy = g.sx = g.dy = g.dx = 1, g.pt = g.pl = 0;
        g.m = h, g.k = c;
        tiles_n = d.spec[12];
        const unsigned per_batch = d.spec[11] * tiles_n, batch = tile / per_batch;
        tile %= per_batch;
        out = reinterpret_cast<T*>(d.buffer[d.spec[4]]) + d.spec[5] + batch * h * w;
        in = reinterpret_cast<const T*>(d.buffer[d.spec[6]]) + d.spec[7] + batch * h * c;
        weight = reinterpret_cast<const T*>(d.buffer[d.spec[8]]) + d.spec[9] + batch * c * w;
    } else {
        const unsigned n_count = d.spec[0];
        g.ih = d.spec[1], g.iw = d.spec[2], g.ic = d.spec[3], g.oh = d.spec[4], g.ow = d.spec[5];
        g.oc = d.spec[6], g.kw = d.spec[8], g.sy = d.spec[9], g.sx = d.spec[10];
        g.dy = d.spec[11], g.dx = d.spec[12], g.pt = d.spec[13], g.pl = d.spec[14];
        g.m = static_cast<unsigned long long>(n_count) * g.oh * g.ow;
        g.k = static_cast<unsigned long long>(d.spec[7]) * g.kw * g.ic;
        bias_per_channel = d.spec[15] != 0u;
        tiles_n = d.spec[26];
        in = reinterpret_cast<const T*>(d.buffer[d.spec[18]]) + d.spec[19];
        weight = reinterpret_cast<const T*>(d.buffer[d.spec[20]]) + d.spec[21];
        bias = reinterpret_cast<const T*>(d.buffer[d.spec[22]]) + d.spec[23];
        out = reinterpret_cast<T*>(d.buffer[d.spec[16]]) + d.spec[17];
    }
    const unsigned long long m0 = static_cast<unsigned long long>(tile / tiles_n) * BM;
    const unsigned long long n0 = static_cast<unsigned long long>(tile % tiles_n) * BN;
    // This block's K range [k_begin, k_end): whole steps, the last range to K.
    const unsigned long long steps = (g.k + bk - 1) / bk;
    const unsigned long long k_begin = steps * rank / SPLIT * bk;
    const unsigned long long k_end = rank + 1 == SPLIT ? g.k : steps * (rank + 1) / SPLIT * bk;

    const int tid = threadIdx.x;
    // Loader slots: row `lr` of the tile, taps lk..lk+3 of the step.
    const int lr = tid >> 1, lk = (tid & 1) * 4;
    const bool a_loader = lr < BM, b_loader = lr < BN;
    const unsigned long long am = m0 + lr, bn_row = n0 + lr;
    const bool a_ok = a_loader && am < g.m, b_ok = b_loader && bn_row < g.oc;
    // The loader's output pixel.
    const unsigned ox = a_ok ? static_cast<unsigned>(am % g.ow) : 0u;
    const unsigned oy = a_ok ? static_cast<unsigned>((am / g.ow) % g.oh) : 0u;
    const unsigned n = a_ok ? static_cast<unsigned>(am / (static_cast<unsigned long long>(g.ow) * g.oh)) : 0u;
    const int iy0 = static_cast<int>(oy * g.sy) - static_cast<int>(g.pt);
    const int ix0 = static_cast<int>(ox * g.sx) - static_cast<int>(g.pl);
    const T* image = in + static_cast<unsigned long long>(n) * g.ih * g.iw * g.ic;
    const T* w_row = weight + (b_ok ? bn_row * g.k : 0ull);
    // MATMUL's B loader: row bkr of the step, columns bc..bc+3 of the tile.
    const int bkr = tid / (BN / 4), bc = (tid % (BN / 4)) * 4;
    const bool b_kn_ok = tid < BN * bk / 4 && n0 + bc < g.oc;
    // VEC: the loader's tap (c, kx, ky) of k = k0 + lk, advanced a step at a time.
    unsigned c = 0, kx = 0, ky = 0;
    if constexpr (VEC) {
        const unsigned long long first = k_begin + lk;
        const unsigned tap = static_cast<unsigned>(first / g.ic);
        c = static_cast<unsigned>(first % g.ic);
        kx = tap % g.kw;
        ky = tap / g.kw;
    }

    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    auto load_a = [&](unsigned long long k0) -> float4 {
        if (!a_ok) return zero;
        const unsigned long long k = k0 + lk;
        if constexpr (VEC) {
            if (k >= k_end) return zero;
            const int iy = iy0 + static_cast<int>(ky * g.dy), ix = ix0 + static_cast<int>(kx * g.dx);
            if (iy < 0 || iy >= static_cast<int>(g.ih) || ix < 0 || ix >= static_cast<int>(g.iw))
                return zero;
            return Io<T>::get4(image + (static_cast<unsigned long long>(iy) * g.iw + ix) * g.ic + c);
        } else {
            float v[4];
#pragma unroll
            for (int e = 0; e < 4; ++e)
                v[e] = k + e < k_end ? patch_element(g, in, n, iy0, ix0, k + e) : 0.0f;
            return make_float4(v[0], v[1], v[2], v[3]);
        }
    };
    auto load_b = [&](unsigned long long k0) -> float4 {
        if constexpr (MATMUL) {
            const unsigned long long k = k0 + bkr;
            return b_kn_ok && k < k_end ? Io<T>::get4(weight + k * g.oc + n0 + bc) : zero;
        }
        if (!b_ok) return zero;
        const unsigned long long k = k0 + lk;
        if constexpr (VEC) {
            return k < k_end ? Io<T>::get4(w_row + k) : zero;
        } else {
            float v[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) v[e] = k + e < k_end ? Io<T>::get(w_row + k + e) : 0.0f;
            return make_float4(v[0], v[1], v[2], v[3]);
        }
    };
    auto advance = [&] {
        if constexpr (VEC) {
            c += bk;
            while (c >= g.ic) {
                c -= g.ic;
                if (++kx == g.kw) kx = 0, ++ky;
            }
        }
    };
    auto store = [&](int buf, float4 va, float4 vb) {
        if constexpr (MMA && sizeof(T) == 4) {
            va = make_float4(tf32_round(va.x), tf32_round(va.y), tf32_round(va.z), tf32_round(va.w));
            vb = make_float4(tf32_round(vb.x), tf32_round(vb.y), tf32_round(vb.z), tf32_round(vb.w));
        }
        if (a_loader) {
            sa[buf][lk + 0][lr] = va.x;
            sa[buf][lk + 1][lr] = va.y;
            sa[buf][lk + 2][lr] = va.z;
            sa[buf][lk + 3][lr] = va.w;
        }
        if constexpr (MATMUL) {
            if (tid < BN * bk / 4) *reinterpret_cast<float4*>(&sb[buf][bkr][bc]) = vb;
        } else if (b_loader) {
            sb[buf][lk + 0][lr] = vb.x;
            sb[buf][lk + 1][lr] = vb.y;
            sb[buf][lk + 2][lr] = vb.z;
            sb[buf][lk + 3][lr] = vb.w;
        }
    };

    const int tx = tid % (BN / TN), ty = tid / (BN / TN);
    const int lane = tid % 32, warp = tid / 32, g4 = lane / 4, t4 = lane % 4;
    const int wm = (warp / 4) * wm_size, wn = (warp % 4) * wn_size;
    // The thread's results: SIMT element i * TN + j; MMA fragment
    // (mi * ni_count + ni) * 4 + q (the C/D order above).
    float acc[TM * TN];
#pragma unroll
    for (int e = 0; e < TM * TN; ++e) acc[e] = 0.0f;
    // Where result `e` of this thread lies in the tile.
    auto position = [&](int e, int& r, int& c) {
        if constexpr (MMA) {
            const int f = e / 4, q = e % 4;
            r = wm + (f / ni_count) * 16 + g4 + (q >= 2 ? 8 : 0);
            c = wn + (f % ni_count) * 8 + 2 * t4 + (q & 1);
        } else {
            const int i = e / TN, j = e % TN;
            r = (i / 4) * (BM / qm) + ty * 4 + i % 4;
            c = (j / 4) * (BN / qn) + tx * 4 + j % 4;
        }
    };

    store(0, load_a(k_begin), load_b(k_begin));
    __syncthreads();

    int buf = 0;
    for (unsigned long long k0 = k_begin; k0 < k_end; k0 += bk) {
        const bool more = k0 + bk < k_end;
        float4 na = zero, nb = zero;
        if (more) {
            advance();
            na = load_a(k0 + bk);
            nb = load_b(k0 + bk);
        }
        if constexpr (MMA) {
            // A warp's fragments of the step, then its mi_count x ni_count products.
            constexpr int a_regs = sizeof(T) == 4 ? 4 : 2, b_regs = sizeof(T) == 4 ? 2 : 1;
            unsigned af[mi_count][a_regs], bf[ni_count][b_regs];
#pragma unroll
            for (int mi = 0; mi < mi_count; ++mi) {
                const int r = wm + mi * 16 + g4;
                if constexpr (sizeof(T) == 4) {
                    af[mi][0] = __float_as_uint(sa[buf][t4][r]);
                    af[mi][1] = __float_as_uint(sa[buf][t4][r + 8]);
                    af[mi][2] = __float_as_uint(sa[buf][t4 + 4][r]);
                    af[mi][3] = __float_as_uint(sa[buf][t4 + 4][r + 8]);
                } else {
                    af[mi][0] = half_pair(sa[buf][2 * t4][r], sa[buf][2 * t4 + 1][r]);
                    af[mi][1] = half_pair(sa[buf][2 * t4][r + 8], sa[buf][2 * t4 + 1][r + 8]);
                }
            }
#pragma unroll
            for (int ni = 0; ni < ni_count; ++ni) {
                const int c = wn + ni * 8 + g4;
                if constexpr (sizeof(T) == 4) {
                    bf[ni][0] = __float_as_uint(sb[buf][t4][c]);
                    bf[ni][1] = __float_as_uint(sb[buf][t4 + 4][c]);
                } else {
                    bf[ni][0] = half_pair(sb[buf][2 * t4][c], sb[buf][2 * t4 + 1][c]);
                }
            }
#pragma unroll
            for (int mi = 0; mi < mi_count; ++mi)
#pragma unroll
                for (int ni = 0; ni < ni_count; ++ni) {
                    float(&dst)[4] = *reinterpret_cast<float(*)[4]>(&acc[(mi * ni_count + ni) * 4]);
                    if constexpr (sizeof(T) == 4) mma_tf32(dst, af[mi], bf[ni]);
                    else mma_f16(dst, af[mi], bf[ni][0]);
                }
        } else {
#pragma unroll
            for (int k = 0; k < bk; ++k) {
                float av[TM], bv[TN];
#pragma unroll
                for (int q = 0; q < qm; ++q)
                    *reinterpret_cast<float4*>(&av[q * 4]) =
                        *reinterpret_cast<const float4*>(&sa[buf][k][q * (BM / qm) + ty * 4]);
#pragma unroll
                for (int q = 0; q < qn; ++q)
                    *reinterpret_cast<float4*>(&bv[q * 4]) =
                        *reinterpret_cast<const float4*>(&sb[buf][k][q * (BN / qn) + tx * 4]);
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) acc[i * TN + j] = fmaf(av[i], bv[j], acc[i * TN + j]);
            }
        }
        // The other buffer was last read before the previous barrier.
        if (more) store(buf ^ 1, na, nb);
        __syncthreads();
        buf ^= 1;
    }

    if constexpr (SPLIT > 1) {
        // The partial tile (the loop's last barrier is behind every read of
        // the steps), then this block's rows of the sum of all SPLIT.
        auto partial = reinterpret_cast<float (*)[BN]>(smem);
#pragma unroll
        for (int e = 0; e < TM * TN; ++e) {
            int r, col;
            position(e, r, col);
            partial[r][col] = acc[e];
        }
        namespace cg = cooperative_groups;
        cg::cluster_group cluster = cg::this_cluster();
        cluster.sync();
        constexpr int rows = BM / SPLIT;
        for (int e = tid; e < rows * BN; e += threads) {
            const int r = static_cast<int>(rank) * rows + e / BN, col = e % BN;
            float sum = 0.0f;
#pragma unroll
            for (int q = 0; q < SPLIT; ++q)
                sum += cluster.map_shared_rank(&partial[0][0], q)[r * BN + col];
            const unsigned long long row = m0 + r, oc = n0 + col;
            if (row < g.m && oc < g.oc) {
                if constexpr (!MATMUL) sum += Io<T>::get(bias + (bias_per_channel ? oc : 0));
                Io<T>::put(out + row * g.oc + oc,
                           finished<T, MATMUL>(epilogue, row * g.oc + oc, sum));
            }
        }
        cluster.sync();
    } else if constexpr (MMA) {
        // Two adjacent columns a pair: (e, e + 1) for even e.
#pragma unroll
        for (int e = 0; e < TM * TN; e += 2) {
            int r, cc;
            position(e, r, cc);
            const unsigned long long row = m0 + r, col = n0 + cc;
            if (row >= g.m) continue;
            T* po = out + row * g.oc;
            const unsigned long long at = row * g.oc + col;
            if constexpr (VEC) {
                // OC is a multiple of 4: col is even, and col + 1 < OC with it.
                if (col >= g.oc) continue;
                float2 b = make_float2(0.0f, 0.0f);
                if constexpr (!MATMUL) {
                    const float b0 = Io<T>::get(bias);
                    b = bias_per_channel ? Io<T>::get2(bias + col) : make_float2(b0, b0);
                }
                Io<T>::put2(po + col, make_float2(finished<T, MATMUL>(epilogue, at, acc[e] + b.x),
                                                  finished<T, MATMUL>(epilogue, at + 1, acc[e + 1] + b.y)));
            } else {
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    if (col + h < g.oc)
                        Io<T>::put(po + col + h,
                                   finished<T, MATMUL>(epilogue, at + h,
                                                       acc[e + h] +
                                                           Io<T>::get(bias + (bias_per_channel ? col + h : 0))));
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const unsigned long long row = m0 + (i / 4) * (BM / qm) + ty * 4 + i % 4;
            if (row >= g.m) continue;
            T* po = out + row * g.oc;
#pragma unroll
            for (int q = 0; q < qn; ++q) {
                const unsigned long long col = n0 + q * (BN / qn) + tx * 4;
                if constexpr (VEC) {
                    if (col >= g.oc) continue;
                    float4 b = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    if constexpr (!MATMUL) {
                        const float b0 = Io<T>::get(bias);
                        b = bias_per_channel ? Io<T>::get4(bias + col) : make_float4(b0, b0, b0, b0);
                    }
                    const unsigned long long at = row * g.oc + col;
                    Io<T>::put4(po + col,
                                make_float4(finished<T, MATMUL>(epilogue, at, acc[i * TN + q * 4] + b.x),
                                            finished<T, MATMUL>(epilogue, at + 1, acc[i * TN + q * 4 + 1] + b.y),
                                            finished<T, MATMUL>(epilogue, at + 2, acc[i * TN + q * 4 + 2] + b.z),
                                            finished<T, MATMUL>(epilogue, at + 3, acc[i * TN + q * 4 + 3] + b.w)));
                } else {
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        if (col + e < g.oc)
                            Io<T>::put(po + col + e,
                                       finished<T, MATMUL>(epilogue, row * g.oc + col + e,
                                                           acc[i * TN + q * 4 + e] +
                                                               Io<T>::get(bias + (bias_per_channel ? col + e : 0))));
                }
            }
        }
    }
}

}  // namespace vaccel_conv_gemm

// The kernel entry points, one shape each for conv2d_gemm.cu (MMA false)
// and conv2d_gemm_mma.cu (MMA true): CONV2D on BM x BM tiles of TM x TM
// results a thread (spec word 24 picks the float4 path), CONV2D on 64 x 64
// tiles split over K by a cluster of SPLIT blocks, and MATMUL's float4 path
// on either.
#define VACCEL_CONV_GEMM(name, T, launch_min, BM, TM, MMA)                                   \
    extern "C" __global__ void __launch_bounds__(vaccel_conv_gemm::threads, launch_min)        \
        name(const __grid_constant__ struct vaccel_cuda_dispatch d)                            \
    {                                                                                          \
        if (d.spec[24] != 0u) vaccel_conv_gemm::run<T, BM, BM, TM, TM, true, 1, false, MMA>(d); \
        else vaccel_conv_gemm::run<T, BM, BM, TM, TM, false, 1, false, MMA>(d);                \
    }
#define VACCEL_CONV_GEMM_SPLIT(name, T, SPLIT, MMA)                                          \
    extern "C" __global__ void __cluster_dims__(SPLIT, 1, 1)                                   \
        __launch_bounds__(vaccel_conv_gemm::threads, 1)                                        \
        name(const __grid_constant__ struct vaccel_cuda_dispatch d)                            \
    {                                                                                          \
        if (d.spec[24] != 0u) vaccel_conv_gemm::run<T, 64, 64, 4, 4, true, SPLIT, false, MMA>(d); \
        else vaccel_conv_gemm::run<T, 64, 64, 4, 4, false, SPLIT, false, MMA>(d);              \
    }
#define VACCEL_MATMUL_GEMM(name, launch_min, BM, TM, MMA)                                    \
    extern "C" __global__ void __launch_bounds__(vaccel_conv_gemm::threads, launch_min)        \
        name(const __grid_constant__ struct vaccel_cuda_dispatch d)                            \
    {                                                                                          \
        vaccel_conv_gemm::run<float, BM, BM, TM, TM, true, 1, true, MMA>(d);                   \
    }
#define VACCEL_MATMUL_GEMM_SPLIT(name, SPLIT, MMA)                                           \
    extern "C" __global__ void __cluster_dims__(SPLIT, 1, 1)                                   \
        __launch_bounds__(vaccel_conv_gemm::threads, 1)                                        \
        name(const __grid_constant__ struct vaccel_cuda_dispatch d)                            \
    {                                                                                          \
        vaccel_conv_gemm::run<float, 64, 64, 4, 4, true, SPLIT, true, MMA>(d);                 \
    }
