#version 450
// matmul_rows.comp - TOSA MATMUL for few rows (H <= 4, GEMV-like): each
// workgroup computes COLS consecutive results of every row; all its
// invocations split C (invocation i takes k = i, i + size, ...), each
// subgroup sums its lanes' partial dot products with subgroupAdd, and the
// subgroups' sums meet in shared memory. The subgroup layout is read at run
// time (gl_SubgroupSize, gl_NumSubgroups, the lanes active), never assumed:
// SLOTS, the subgroups per workgroup the device reports, only sizes the
// shared array, and more subgroups than slots take turns.
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#include "matmul_common.glsl"

layout(constant_id = 12) const uint COLS = 8;
layout(local_size_x_id = 13) in;
layout(constant_id = 14) const uint SLOTS = 1;
const uint MAX_ROWS = 4u;

shared float partial[SLOTS * MAX_ROWS * COLS];

void main()
{
    const uint lanes = subgroupAdd(1u);  // lanes of this subgroup that run
    const uint lane = gl_SubgroupInvocationID;
    const uint sg = gl_SubgroupID;
    const uint size = gl_WorkGroupSize.x;
    const uint blocks_w = (W + COLS - 1u) / COLS;
    for (uint blk = gl_WorkGroupID.x; blk < N * blocks_w; blk += gl_NumWorkGroups.x) {
        const uint n = blk / blocks_w;
        const uint col0 = (blk % blocks_w) * COLS;
        const uint a_base = A_BASE + n * H * C;
        const uint b_base = B_BASE + n * C * W;
        float acc[MAX_ROWS][COLS];
        [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r)
            [[unroll]] for (uint j = 0u; j < COLS; ++j) acc[r][j] = 0.0;
        for (uint k = gl_LocalInvocationIndex; k < C; k += size) {
            float b[COLS];
            [[unroll]] for (uint j = 0u; j < COLS; ++j)
                b[j] = col0 + j < W ? load_b(b_base + k * W + col0 + j) : 0.0;
            [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r) {
                if (r < H) {
                    const float a = load_a(a_base + r * C + k);
                    [[unroll]] for (uint j = 0u; j < COLS; ++j) acc[r][j] += a * b[j];
                }
            }
        }
        // Subgroup 0 gathers every subgroup's sums, SLOTS subgroups a turn.
        float total[MAX_ROWS][COLS];
        [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r)
            [[unroll]] for (uint j = 0u; j < COLS; ++j) total[r][j] = 0.0;
        for (uint first = 0u; first < gl_NumSubgroups; first += SLOTS) {
            if (sg >= first && sg < first + SLOTS) {
                [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r) {
                    if (r < H) {
                        [[unroll]] for (uint j = 0u; j < COLS; ++j) {
                            const float sum = subgroupAdd(acc[r][j]);
                            if (subgroupElect()) partial[((sg - first) * MAX_ROWS + r) * COLS + j] = sum;
                        }
                    }
                }
            }
            barrier();
            if (sg == 0u) {
                const uint turn = min(SLOTS, gl_NumSubgroups - first);
                for (uint s = 0u; s < turn; ++s)
                    [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r)
                        [[unroll]] for (uint j = 0u; j < COLS; ++j)
                            if (r < H) total[r][j] += partial[(s * MAX_ROWS + r) * COLS + j];
            }
            // The next turn (or block) overwrites the slots read here.
            barrier();
        }
        if (sg == 0u) {
            [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r)
                [[unroll]] for (uint j = 0u; j < COLS; ++j)
                    if (r < H && lane == j % lanes && col0 + j < W)
                        store_out(OUT_BASE + (n * H + r) * W + col0 + j, total[r][j]);
        }
    }
}
