#version 450
// matmul_tiled.comp - TOSA MATMUL [N,H,C] x [N,C,W] -> [N,H,W]: a BM x BN
// block of results per workgroup, C stepped by BK with both input tiles in
// shared memory, RM x RN results per invocation in registers
// (backends/vulkan/src/matmul_tiles.hpp chooses the sizes). Each result is
// the dot product accumulated in index order; positions past H, W or C read
// as zero and are never written, so any shape is exact.
#include "matmul_common.glsl"
#include "slice.glsl"

layout(constant_id = 12) const uint BM = 64;
layout(constant_id = 13) const uint BN = 64;
layout(constant_id = 14) const uint BK = 16;
layout(constant_id = 15) const uint RM = 4;
layout(constant_id = 16) const uint RN = 4;
// (BM / RM) * (BN / RN), given by the lowerer as the workgroup size.
layout(local_size_x_id = 17) in;
// 0: no shared memory and no barriers, each invocation reads its operands
// straight from the buffers (CPU devices such as lavapipe, where a barrier
// is expensive and there is no separate shared memory to gain from).
layout(constant_id = 18) const uint USE_SHARED = 1;
// 1: the tiles are read from the buffers as vec4. The lowerer sets it only
// for FP32 with C and W multiples of 4, A's and B's bases multiples of 4
// words (so every row, batch and k step starts on 16 bytes) and BK and BN
// multiples of 4: a quad is then wholly inside or wholly past C and W.
layout(constant_id = 19) const uint VEC4 = 0;
// 1: the next k step's loads are issued before this step's products, so
// their latency hides behind the arithmetic (software pipelining through
// registers); 0: loaded after, as a plain loop would.
layout(constant_id = 20) const uint PREFETCH = 1;
// 2: two shared stages, the next step stored into the other while this one
// is read, one barrier a step; 1: one stage, two barriers a step.
layout(constant_id = 21) const uint STAGES = 1;

// The same binding seen as vec4 (aliased view, as common.glsl does for
// narrow storage); read only through VEC4.
layout(set = 0, binding = 0, std430) readonly buffer Quads { vec4 q[]; } quads[BUFFER_COUNT];

const uint THREADS = (BM / RM) * (BN / RN);
const uint TX = BN / RN;  // invocations along a row of the block
const uint TY = BM / RM;
// With RM (RN) a multiple of 4 an invocation holds runs of 4 neighbouring
// rows (columns), read from shared memory as one vec4; otherwise single
// rows strided by TY (columns by TX).
const bool A_RUNS = RM % 4u == 0u;
const bool B_RUNS = RN % 4u == 0u;

// A's tile stored k-major (As[k][m]) so the products read it by row. Rows
// are whole vec4s with at least one vec4 of padding, so the transposing
// stores of neighbouring rows' k spread over the banks and every run of 4
// starts on 16 bytes (MatmulTiles::shared_bytes counts the same sizes).
const uint AS_ROW4 = (BM + 3u) / 4u + 1u;
const uint BS_ROW4 = (BN + 3u) / 4u;
const uint AS_ROW = AS_ROW4 * 4u;
const uint BS_ROW = BS_ROW4 * 4u;
const uint AS_STAGE4 = BK * AS_ROW4;  // one stage, in vec4s
const uint BS_STAGE4 = BK * BS_ROW4;
shared vec4 As[STAGES * AS_STAGE4];
shared vec4 Bs[STAGES * BS_STAGE4];

// One k step's tile elements per invocation, held in registers between the
// loads and the stores to shared memory. 4 * ceil(x / 4T) >= ceil(x / T),
// so the sizes hold the vec4 and the scalar loads alike.
const uint A_QUADS = (BM * BK + 4u * THREADS - 1u) / (4u * THREADS);
const uint B_QUADS = (BK * BN + 4u * THREADS - 1u) / (4u * THREADS);
const uint A_SCALARS = (BM * BK + THREADS - 1u) / THREADS;
const uint B_SCALARS = (BK * BN + THREADS - 1u) / THREADS;
float ra[A_QUADS * 4u];
float rb[B_QUADS * 4u];
float acc[RM][RN];

float shared_a(uint i) { return As[i >> 2][i & 3u]; }
float shared_b(uint i) { return Bs[i >> 2][i & 3u]; }

// acc += this stage's A tile times its B tile, for invocation (ty, tx).
void multiply_step(uint stage, uint tx, uint ty)
{
    const uint a0 = stage * AS_STAGE4, b0 = stage * BS_STAGE4;  // in vec4s
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

// Loads the k step at k0 of the block at (row0, col0) into ra and rb.
void load_step(uint tid, uint a_base, uint b_base, uint row0, uint col0, uint k0)
{
    if (VEC4 != 0u) {
        const uint bk4 = BK / 4u, bn4 = BN / 4u;
        [[unroll]] for (uint l = 0u; l < A_QUADS; ++l) {
            const uint e = tid + l * THREADS;
            const uint r = row0 + e / bk4, kk = k0 + (e % bk4) * 4u;
            const vec4 v = (e < BM * bk4 && r < H && kk < C)
                ? quads[A_BUF].q[(a_base + r * C + kk) >> 2] : vec4(0.0);
            [[unroll]] for (uint q = 0u; q < 4u; ++q) ra[l * 4u + q] = v[q];
        }
        [[unroll]] for (uint l = 0u; l < B_QUADS; ++l) {
            const uint e = tid + l * THREADS;
            const uint kk = k0 + e / bn4, col = col0 + (e % bn4) * 4u;
            const vec4 v = (e < BK * bn4 && kk < C && col < W)
                ? quads[B_BUF].q[(b_base + kk * W + col) >> 2] : vec4(0.0);
            [[unroll]] for (uint q = 0u; q < 4u; ++q) rb[l * 4u + q] = v[q];
        }
    } else {
        [[unroll]] for (uint l = 0u; l < A_SCALARS; ++l) {
            const uint e = tid + l * THREADS;
            const uint r = row0 + e / BK, kk = k0 + e % BK;
            ra[l] = (e < BM * BK && r < H && kk < C) ? load_a(a_base + r * C + kk) : 0.0;
        }
        [[unroll]] for (uint l = 0u; l < B_SCALARS; ++l) {
            const uint e = tid + l * THREADS;
            const uint kk = k0 + e / BN, col = col0 + e % BN;
            rb[l] = (e < BK * BN && kk < C && col < W) ? load_b(b_base + kk * W + col) : 0.0;
        }
    }
}

// Stores ra and rb to the shared tiles of `stage`, in the layout load_step
// read them.
void store_step(uint tid, uint stage)
{
    const uint a0 = stage * AS_STAGE4, b0 = stage * BS_STAGE4;  // in vec4s
    if (VEC4 != 0u) {
        const uint bk4 = BK / 4u, bn4 = BN / 4u;
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
            if (e < BK * bn4)
                Bs[b0 + (e / bn4) * BS_ROW4 + e % bn4] =
                    vec4(rb[l * 4u], rb[l * 4u + 1u], rb[l * 4u + 2u], rb[l * 4u + 3u]);
        }
    } else {
        [[unroll]] for (uint l = 0u; l < A_SCALARS; ++l) {
            const uint e = tid + l * THREADS;
            const uint i = (e % BK) * AS_ROW + e / BK;
            if (e < BM * BK) As[a0 + (i >> 2)][i & 3u] = ra[l];
        }
        [[unroll]] for (uint l = 0u; l < B_SCALARS; ++l) {
            const uint e = tid + l * THREADS;
            const uint i = (e / BN) * BS_ROW + e % BN;
            if (e < BK * BN) Bs[b0 + (i >> 2)][i & 3u] = rb[l];
        }
    }
}

void main()
{
    const uint tiles_w = (W + BN - 1u) / BN;
    const uint tiles_h = (H + BM - 1u) / BM;
    const uint tid = gl_LocalInvocationID.x;
    // Invocation (ty, tx) holds rows ty + i*TY and columns tx + j*TX of the
    // block, or with runs rows 4*(ty + (i/4)*TY) + i%4 (columns alike):
    // neighbours read neighbouring shared words and write neighbouring
    // results.
    const uint tx = tid % TX, ty = tid / TX;
    const bool a_runs = USE_SHARED != 0u && A_RUNS;
    const bool b_runs = USE_SHARED != 0u && B_RUNS;
    for (uint t = tile_slice.first + gl_WorkGroupID.x; t < slice_end(N * tiles_h * tiles_w);
         t += gl_NumWorkGroups.x) {
        const uint n = t / (tiles_h * tiles_w);
        const uint row0 = ((t / tiles_w) % tiles_h) * BM;
        const uint col0 = (t % tiles_w) * BN;
        const uint a_base = A_BASE + n * H * C;
        const uint b_base = B_BASE + n * C * W;
        // A part cut over k (slice.glsl) starts from the sums stored so far.
        const uint k_first = tile_slice.k_first, k_end = slice_k_end(C);
        [[unroll]] for (uint i = 0u; i < RM; ++i) {
            const uint r = row0 + (a_runs ? (ty + (i / 4u) * TY) * 4u + i % 4u : ty + i * TY);
            [[unroll]] for (uint j = 0u; j < RN; ++j) {
                const uint col = col0 + (b_runs ? (tx + (j / 4u) * TX) * 4u + j % 4u : tx + j * TX);
                acc[i][j] = k_first != 0u && r < H && col < W
                    ? uintBitsToFloat(bufs[OUT_BUF].w[OUT_BASE + (n * H + r) * W + col]) : 0.0;
            }
        }
        if (USE_SHARED == 0u) {
            for (uint k = k_first; k < k_end; ++k) {
                float a[RM], b[RN];
                [[unroll]] for (uint i = 0u; i < RM; ++i) {
                    const uint r = row0 + ty + i * TY;
                    a[i] = r < H ? load_a(a_base + r * C + k) : 0.0;
                }
                [[unroll]] for (uint j = 0u; j < RN; ++j) {
                    const uint col = col0 + tx + j * TX;
                    b[j] = col < W ? load_b(b_base + k * W + col) : 0.0;
                }
                [[unroll]] for (uint i = 0u; i < RM; ++i)
                    [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i][j] += a[i] * b[j];
            }
        } else {
            load_step(tid, a_base, b_base, row0, col0, k_first);
            if (STAGES == 2u) {
                store_step(tid, 0u);
                barrier();
            }
        }
        // Step k0 reads stage s; with two stages the next step is stored
        // into the other one meanwhile, and the one barrier at the end both
        // publishes it and ends every read of stage s before it is reused.
        uint s = 0u;
        for (uint k0 = k_first; USE_SHARED != 0u && k0 < k_end; k0 += BK) {
            if (STAGES == 1u) {
                store_step(tid, 0u);
                barrier();
            }
            const bool more = k0 + BK < k_end;
            if (PREFETCH != 0u && more) load_step(tid, a_base, b_base, row0, col0, k0 + BK);
            multiply_step(s, tx, ty);
            if (STAGES == 1u) barrier();  // the next step overwrites the tiles
            if (PREFETCH == 0u && more) load_step(tid, a_base, b_base, row0, col0, k0 + BK);
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
                if (r < H && col < W) store_out(OUT_BASE + (n * H + r) * W + col, acc[i][j]);
            }
        }
    }
}
