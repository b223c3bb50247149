#version 450
// conv2d_gemm.comp - TOSA CONV2D on NHWC FP32 as an implicit GEMM:
//   result [M, OC] = A [M, K] x W^T + bias,  M = N*OH*OW, K = KH*KW*IC,
// where A's row m is output pixel m's input patch in (ky, kx, ic) order,
// read straight from the input (no im2col copy; taps on padding are zero)
// and W is the weight as TOSA stores it, [OC, KH*KW*IC] row-major
// (backends/gpu/include/vaccel/gpu/lowering_spatial.hpp, ConvGemm).
//
// The tiling is matmul_tiled.comp's (the sizes are the MATMUL's, chosen by
// backends/vulkan/src/matmul_tiles.cpp): a BM x BN block of results per
// workgroup, K stepped by BK with both tiles in shared memory, RM x RN
// results per invocation in registers (rows and columns strided by the
// block's invocation grid; runs of 4 read as one vec4 of shared memory when
// RM or RN is a multiple of 4), the next step loaded into registers before
// this step's products (PREFETCH), one or two shared stages (STAGES). Both
// tiles are stored k-major (As[k][m], Bs[k][n]): A's rows and W's rows are
// both contiguous along K, so both stores transpose, and both shared rows
// are padded by one vec4 against bank conflicts.
// VEC4 (the lowering checks it, backends/vulkan/src/lowering_conv.cpp): IC
// and BK multiples of 4 and the input's and weight's bases multiples of 4
// words, so the quad k..k+3 of a step is four channels of one input pixel
// (or all padding) and four words of one weight row, each one aligned vec4.
// USE_SHARED 0 (CPU devices such as lavapipe, where a barrier is costly and
// shared memory is the same memory): every invocation reads its operands
// straight from the buffers, tap by tap, so the padding test is per row and
// tap, not per element; with one column of invocations (BN == RN) the
// weight loads are the same address in every invocation of the workgroup.
// The sum over K is in FMA steps in tile order, not the CPU device's order:
// results differ from it by rounding only (docs/operators.md's dot bound).
// The bias is added once at the end (out = acc + bias), then the epilogue
// (constants 35..54, epilogue.glsl: the elementwise chain the shared
// lowering folded into this CONV2D, each stage rounded as its own kernel
// would) before the one store. Rows past M and columns past OC read as zero
// (or are clamped to a real weight row) and are never written.
#define OWN_WORKGROUP_SIZE
#include "common.glsl"
#include "slice.glsl"
#include "float_math.glsl"
#include "element_ops.glsl"
#define EPILOGUE_ID 35
#include "epilogue.glsl"
// The same binding seen as vec4 (aliased view, as matmul_tiled.comp does);
// read only through VEC4.
layout(set = 0, binding = 0, std430) readonly buffer Quads { vec4 q[]; } quads[BUFFER_COUNT];

// The geometry and operands, as ConvGemm holds them (the CUDA kernel's
// spec words 0..23, kernels/cuda/conv2d_gemm_f32.cu).
layout(constant_id = 1) const uint N = 1;
layout(constant_id = 2) const uint IH = 1;
layout(constant_id = 3) const uint IW = 1;
layout(constant_id = 4) const uint IC = 1;
layout(constant_id = 5) const uint OH = 1;
layout(constant_id = 6) const uint OW = 1;
layout(constant_id = 7) const uint OC = 1;
layout(constant_id = 8) const uint KH = 1;
layout(constant_id = 9) const uint KW = 1;
layout(constant_id = 10) const uint SY = 1;
layout(constant_id = 11) const uint SX = 1;
layout(constant_id = 12) const uint DY = 1;
layout(constant_id = 13) const uint DX = 1;
layout(constant_id = 14) const uint PT = 0;
layout(constant_id = 15) const uint PL = 0;
layout(constant_id = 16) const uint BIAS_PER_CHANNEL = 1;  // bias [OC], else [1]
layout(constant_id = 17) const uint OUT_BUF = 0;
layout(constant_id = 18) const uint OUT_BASE = 0;
layout(constant_id = 19) const uint IN_BUF = 0;
layout(constant_id = 20) const uint IN_BASE = 0;
layout(constant_id = 21) const uint W_BUF = 0;
layout(constant_id = 22) const uint W_BASE = 0;
layout(constant_id = 23) const uint B_BUF = 0;
layout(constant_id = 24) const uint B_BASE = 0;
// The tiles (matmul_tiled.comp's constants 12..21, in the same order).
layout(constant_id = 25) const uint BM = 64;
layout(constant_id = 26) const uint BN = 64;
layout(constant_id = 27) const uint BK = 16;
layout(constant_id = 28) const uint RM = 4;
layout(constant_id = 29) const uint RN = 4;
// (BM / RM) * (BN / RN), given by the lowerer as the workgroup size.
layout(local_size_x_id = 30) in;
layout(constant_id = 31) const uint USE_SHARED = 1;
layout(constant_id = 32) const uint VEC4 = 0;
layout(constant_id = 33) const uint PREFETCH = 1;
layout(constant_id = 34) const uint STAGES = 1;

const uint M = N * OH * OW;
const uint K = KH * KW * IC;

const uint THREADS = (BM / RM) * (BN / RN);
const uint TX = BN / RN;  // invocations along a row of the block
const uint TY = BM / RM;
const bool A_RUNS = RM % 4u == 0u;
const bool B_RUNS = RN % 4u == 0u;

// Both tiles k-major, rows of whole vec4s plus one vec4 of padding
// (conv_shared_bytes in matmul_tiles.hpp counts the same sizes).
const uint AS_ROW4 = (BM + 3u) / 4u + 1u;
const uint BS_ROW4 = (BN + 3u) / 4u + 1u;
const uint AS_ROW = AS_ROW4 * 4u;
const uint BS_ROW = BS_ROW4 * 4u;
const uint AS_STAGE4 = BK * AS_ROW4;
const uint BS_STAGE4 = BK * BS_ROW4;
shared vec4 As[STAGES * AS_STAGE4];
shared vec4 Bs[STAGES * BS_STAGE4];

const uint A_QUADS = (BM * BK + 4u * THREADS - 1u) / (4u * THREADS);
const uint B_QUADS = (BN * BK + 4u * THREADS - 1u) / (4u * THREADS);
const uint A_SCALARS = (BM * BK + THREADS - 1u) / THREADS;
const uint B_SCALARS = (BN * BK + THREADS - 1u) / THREADS;
float ra[A_QUADS * 4u];
float rb[B_QUADS * 4u];
float acc[RM][RN];

// The loaders' output pixels (shared path: the l-th tile element of this
// invocation lies in the same row of every k step): the first input word of
// its image, and its window's top-left corner. A row past M gets the corner
// IH, which puts every tap below the image: it reads zeros.
uint pa_img[A_SCALARS];
int pa_y[A_SCALARS], pa_x[A_SCALARS];

void pixel_of(uint row, out uint img, out int y0, out int x0)
{
    if (row >= M) {
        img = IN_BASE;
        y0 = int(IH);
        x0 = 0;
        return;
    }
    const uint ox = row % OW, oy = (row / OW) % OH, n = row / (OW * OH);
    img = IN_BASE + n * IH * IW * IC;
    y0 = int(oy * SY) - int(PT);
    x0 = int(ox * SX) - int(PL);
}

// Word index of input element (tap of k, channel of k) for the pixel, or
// ~0u on padding.
uint patch_index(uint img, int y0, int x0, uint k)
{
    const uint tap = k / IC, c = k - tap * IC;
    const uint ky = tap / KW, kx = tap - ky * KW;
    const int iy = y0 + int(ky * DY), ix = x0 + int(kx * DX);
    if (iy < 0 || iy >= int(IH) || ix < 0 || ix >= int(IW)) return ~0u;
    return img + (uint(iy) * IW + uint(ix)) * IC + c;
}

float shared_a(uint i) { return As[i >> 2][i & 3u]; }
float shared_b(uint i) { return Bs[i >> 2][i & 3u]; }

// acc += this stage's A tile times its B tile (matmul_tiled.comp's step).
void multiply_step(uint stage, uint tx, uint ty)
{
    const uint a0 = stage * AS_STAGE4, b0 = stage * BS_STAGE4;
    [[unroll]] for (uint k = 0u; k < BK; ++k) {
        float a[RM], b[RN];
        if (A_RUNS) {
            [[unroll]] for (uint i = 0u; i < RM / 4u; ++i) {
                const vec4 v = As[a0 + k * AS_ROW4 + i * TY + ty];
                [[unroll]] for (uint q = 0u; q < 4u; ++q) a[i * 4u + q] = v[q];
            }
        } else {
            [[unroll]] for (uint i = 0u; i < RM; ++i)
                a[i] = shared_a(a0 * 4u + k * AS_ROW + ty + i * TY);
        }
        if (B_RUNS) {
            [[unroll]] for (uint j = 0u; j < RN / 4u; ++j) {
                const vec4 v = Bs[b0 + k * BS_ROW4 + j * TX + tx];
                [[unroll]] for (uint q = 0u; q < 4u; ++q) b[j * 4u + q] = v[q];
            }
        } else {
            [[unroll]] for (uint j = 0u; j < RN; ++j)
                b[j] = shared_b(b0 * 4u + k * BS_ROW + tx + j * TX);
        }
        [[unroll]] for (uint i = 0u; i < RM; ++i)
            [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
}

// Loads the k step at k0 of the block whose columns start at col0 into ra
// and rb (the rows are pa_*).
void load_step(uint tid, uint col0, uint k0)
{
    if (VEC4 != 0u) {
        const uint bk4 = BK / 4u;
        [[unroll]] for (uint l = 0u; l < A_QUADS; ++l) {
            const uint e = tid + l * THREADS;
            const uint kk = k0 + (e % bk4) * 4u;
            const uint i = (e < BM * bk4 && kk < K) ? patch_index(pa_img[l], pa_y[l], pa_x[l], kk)
                                                     : ~0u;
            const vec4 v = i != ~0u ? quads[IN_BUF].q[i >> 2] : vec4(0.0);
            [[unroll]] for (uint q = 0u; q < 4u; ++q) ra[l * 4u + q] = v[q];
        }
        [[unroll]] for (uint l = 0u; l < B_QUADS; ++l) {
            const uint e = tid + l * THREADS;
            const uint oc = col0 + e / bk4, kk = k0 + (e % bk4) * 4u;
            const vec4 v = (e < BN * bk4 && oc < OC && kk < K)
                ? quads[W_BUF].q[(W_BASE + oc * K + kk) >> 2] : vec4(0.0);
            [[unroll]] for (uint q = 0u; q < 4u; ++q) rb[l * 4u + q] = v[q];
        }
    } else {
        [[unroll]] for (uint l = 0u; l < A_SCALARS; ++l) {
            const uint e = tid + l * THREADS;
            const uint kk = k0 + e % BK;
            const uint i = (e < BM * BK && kk < K) ? patch_index(pa_img[l], pa_y[l], pa_x[l], kk)
                                                    : ~0u;
            ra[l] = i != ~0u ? uintBitsToFloat(bufs[IN_BUF].w[i]) : 0.0;
        }
        [[unroll]] for (uint l = 0u; l < B_SCALARS; ++l) {
            const uint e = tid + l * THREADS;
            const uint oc = col0 + e / BK, kk = k0 + e % BK;
            rb[l] = (e < BN * BK && oc < OC && kk < K)
                ? uintBitsToFloat(bufs[W_BUF].w[W_BASE + oc * K + kk]) : 0.0;
        }
    }
}

// Stores ra and rb to the shared tiles of `stage`, both transposed.
void store_step(uint tid, uint stage)
{
    const uint a0 = stage * AS_STAGE4, b0 = stage * BS_STAGE4;
    if (VEC4 != 0u) {
        const uint bk4 = BK / 4u;
        [[unroll]] for (uint l = 0u; l < A_QUADS; ++l) {
            const uint e = tid + l * THREADS;
            const uint m = e / bk4, k = (e % bk4) * 4u;
            [[unroll]] for (uint q = 0u; q < 4u; ++q) {
                const uint i = (k + q) * AS_ROW + m;
                if (e < BM * bk4) As[a0 + (i >> 2)][i & 3u] = ra[l * 4u + q];
            }
        }
        [[unroll]] for (uint l = 0u; l < B_QUADS; ++l) {
            const uint e = tid + l * THREADS;
            const uint n = e / bk4, k = (e % bk4) * 4u;
            [[unroll]] for (uint q = 0u; q < 4u; ++q) {
                const uint i = (k + q) * BS_ROW + n;
                if (e < BN * bk4) Bs[b0 + (i >> 2)][i & 3u] = rb[l * 4u + q];
            }
        }
    } else {
        [[unroll]] for (uint l = 0u; l < A_SCALARS; ++l) {
            const uint e = tid + l * THREADS;
            const uint i = (e % BK) * AS_ROW + e / BK;
            if (e < BM * BK) As[a0 + (i >> 2)][i & 3u] = ra[l];
        }
        [[unroll]] for (uint l = 0u; l < B_SCALARS; ++l) {
            const uint e = tid + l * THREADS;
            const uint i = (e % BK) * BS_ROW + e / BK;
            if (e < BN * BK) Bs[b0 + (i >> 2)][i & 3u] = rb[l];
        }
    }
}

// The direct path (USE_SHARED 0): rows ty + i*TY, columns tx + j*TX of the
// block, tap by tap. Columns past OC read the last weight row (their
// results are not written), so the loads need no test.
void direct_block(uint tx, uint ty, uint row0, uint col0)
{
    uint img[RM], wrow[RN];
    int y0[RM], x0[RM];
    [[unroll]] for (uint i = 0u; i < RM; ++i) pixel_of(row0 + ty + i * TY, img[i], y0[i], x0[i]);
    [[unroll]] for (uint j = 0u; j < RN; ++j) wrow[j] = W_BASE + min(col0 + tx + j * TX, OC - 1u) * K;
    for (uint ky = 0u; ky < KH; ++ky) {
        for (uint kx = 0u; kx < KW; ++kx) {
            const uint tap = (ky * KW + kx) * IC;
            uint p[RM];
            bool inside[RM];
            [[unroll]] for (uint i = 0u; i < RM; ++i) {
                const int iy = y0[i] + int(ky * DY), ix = x0[i] + int(kx * DX);
                inside[i] = iy >= 0 && iy < int(IH) && ix >= 0 && ix < int(IW);
                p[i] = inside[i] ? img[i] + (uint(iy) * IW + uint(ix)) * IC : 0u;
            }
            if (VEC4 != 0u) {
                for (uint c = 0u; c < IC; c += 4u) {
                    vec4 a[RM], b[RN];
                    [[unroll]] for (uint i = 0u; i < RM; ++i)
                        a[i] = inside[i] ? quads[IN_BUF].q[(p[i] + c) >> 2] : vec4(0.0);
                    [[unroll]] for (uint j = 0u; j < RN; ++j)
                        b[j] = quads[W_BUF].q[(wrow[j] + tap + c) >> 2];
                    [[unroll]] for (uint i = 0u; i < RM; ++i)
                        [[unroll]] for (uint j = 0u; j < RN; ++j)
                            [[unroll]] for (uint q = 0u; q < 4u; ++q) acc[i][j] += a[i][q] * b[j][q];
                }
            } else {
                for (uint c = 0u; c < IC; ++c) {
                    float a[RM], b[RN];
                    [[unroll]] for (uint i = 0u; i < RM; ++i)
                        a[i] = inside[i] ? uintBitsToFloat(bufs[IN_BUF].w[p[i] + c]) : 0.0;
                    [[unroll]] for (uint j = 0u; j < RN; ++j)
                        b[j] = uintBitsToFloat(bufs[W_BUF].w[wrow[j] + tap + c]);
                    [[unroll]] for (uint i = 0u; i < RM; ++i)
                        [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i][j] += a[i] * b[j];
                }
            }
        }
    }
}

void main()
{
    const uint tiles_n = (OC + BN - 1u) / BN;
    const uint tiles_m = (M + BM - 1u) / BM;
    const uint tid = gl_LocalInvocationID.x;
    const uint tx = tid % TX, ty = tid / TX;
    const bool a_runs = USE_SHARED != 0u && A_RUNS;
    const bool b_runs = USE_SHARED != 0u && B_RUNS;
    // Neighbouring workgroups take neighbouring column blocks of one row
    // block, so they read the same input rows.
    for (uint t = tile_slice.first + gl_WorkGroupID.x; t < slice_end(tiles_m * tiles_n);
         t += gl_NumWorkGroups.x) {
        const uint row0 = (t / tiles_n) * BM;
        const uint col0 = (t % tiles_n) * BN;
        [[unroll]] for (uint i = 0u; i < RM; ++i)
            [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i][j] = 0.0;
        if (USE_SHARED == 0u) {
            direct_block(tx, ty, row0, col0);
        } else {
            [[unroll]] for (uint l = 0u; l < A_SCALARS; ++l) {
                const uint e = tid + l * THREADS;
                const uint m = VEC4 != 0u ? e / (BK / 4u) : e / BK;
                pixel_of(row0 + m, pa_img[l], pa_y[l], pa_x[l]);
            }
            load_step(tid, col0, 0u);
            if (STAGES == 2u) {
                store_step(tid, 0u);
                barrier();
            }
        }
        // As matmul_tiled.comp: step k0 reads stage s; with two stages the
        // next step is stored into the other one meanwhile, and the one
        // barrier both publishes it and ends every read of stage s.
        uint s = 0u;
        for (uint k0 = 0u; USE_SHARED != 0u && k0 < K; k0 += BK) {
            if (STAGES == 1u) {
                store_step(tid, 0u);
                barrier();
            }
            const bool more = k0 + BK < K;
            if (PREFETCH != 0u && more) load_step(tid, col0, k0 + BK);
            multiply_step(s, tx, ty);
            if (STAGES == 1u) barrier();
            if (PREFETCH == 0u && more) load_step(tid, col0, k0 + BK);
            if (STAGES == 2u) {
                if (more) store_step(tid, s ^ 1u);
                barrier();
                s ^= 1u;
            }
        }
        [[unroll]] for (uint i = 0u; i < RM; ++i) {
            const uint r = row0 + (a_runs ? (ty + (i / 4u) * TY) * 4u + i % 4u : ty + i * TY);
            [[unroll]] for (uint j = 0u; j < RN; ++j) {
                const uint col = col0 + (b_runs ? (tx + (j / 4u) * TX) * 4u + j % 4u : tx + j * TX);
                if (r < M && col < OC) {
                    const float bias =
                        uintBitsToFloat(bufs[B_BUF].w[B_BASE + (BIAS_PER_CHANNEL != 0u ? col : 0u)]);
                    bufs[OUT_BUF].w[OUT_BASE + r * OC + col] =
                        epilogue_bits(DT_FP32, r * OC + col, floatBitsToUint(acc[i][j] + bias));
                }
            }
        }
    }
}
