#version 450
// matmul_tiled.comp - TOSA MATMUL [N,H,C] x [N,C,W] -> [N,H,W]: a BM x BN
// block of results per workgroup, C stepped by BK with both input tiles in
// shared memory, RM x RN results per invocation in registers
// (backends/vulkan/src/matmul_tiles.hpp chooses the sizes). Each result is
// the dot product accumulated in index order; positions past H, W or C read
// as zero and are never written, so any shape is exact.
#include "matmul_common.glsl"

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

const uint THREADS = (BM / RM) * (BN / RN);
const uint TX = BN / RN;  // invocations along a row of the block
const uint TY = BM / RM;

// A's tile stored k-major (As[k][m]) so the inner loop reads it by row;
// rows padded by one word so the loads, where neighbouring invocations
// store neighbouring k of one m, fall in different banks
// (MatmulTiles::shared_bytes counts the pad).
const uint AS_ROW = BM + 1u;
shared float As[BK * AS_ROW];
shared float Bs[BK * BN];

void main()
{
    const uint tiles_w = (W + BN - 1u) / BN;
    const uint tiles_h = (H + BM - 1u) / BM;
    const uint tid = gl_LocalInvocationID.x;
    // Invocation (ty, tx) holds rows ty + i*TY and columns tx + j*TX of the
    // block: neighbours read neighbouring shared words and write
    // neighbouring results.
    const uint tx = tid % TX, ty = tid / TX;
    for (uint t = gl_WorkGroupID.x; t < N * tiles_h * tiles_w; t += gl_NumWorkGroups.x) {
        const uint n = t / (tiles_h * tiles_w);
        const uint row0 = ((t / tiles_w) % tiles_h) * BM;
        const uint col0 = (t % tiles_w) * BN;
        const uint a_base = A_BASE + n * H * C;
        const uint b_base = B_BASE + n * C * W;
        float acc[RM][RN];
        [[unroll]] for (uint i = 0u; i < RM; ++i)
            [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i][j] = 0.0;
        if (USE_SHARED == 0u) {
            for (uint k = 0u; k < C; ++k) {
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
        }
        for (uint k0 = 0u; USE_SHARED != 0u && k0 < C; k0 += BK) {
            for (uint e = tid; e < BM * BK; e += THREADS) {
                const uint m = e / BK, k = e % BK;
                const uint r = row0 + m, kk = k0 + k;
                As[k * AS_ROW + m] = (r < H && kk < C) ? load_a(a_base + r * C + kk) : 0.0;
            }
            for (uint e = tid; e < BK * BN; e += THREADS) {
                const uint k = e / BN, c = e % BN;
                const uint col = col0 + c, kk = k0 + k;
                Bs[k * BN + c] = (col < W && kk < C) ? load_b(b_base + kk * W + col) : 0.0;
            }
            barrier();
            [[unroll]] for (uint k = 0u; k < BK; ++k) {
                float a[RM], b[RN];
                [[unroll]] for (uint i = 0u; i < RM; ++i) a[i] = As[k * AS_ROW + ty + i * TY];
                [[unroll]] for (uint j = 0u; j < RN; ++j) b[j] = Bs[k * BN + tx + j * TX];
                [[unroll]] for (uint i = 0u; i < RM; ++i)
                    [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i][j] += a[i] * b[j];
            }
            // The next step overwrites the tiles this one read.
            barrier();
        }
        [[unroll]] for (uint i = 0u; i < RM; ++i) {
            const uint r = row0 + ty + i * TY;
            [[unroll]] for (uint j = 0u; j < RN; ++j) {
                const uint col = col0 + tx + j * TX;
                if (r < H && col < W) store_out(OUT_BASE + (n * H + r) * W + col, acc[i][j]);
            }
        }
    }
}
