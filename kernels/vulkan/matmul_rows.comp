#version 450
// matmul_rows.comp - TOSA MATMUL for few rows (H <= 4, GEMV-like): each
// subgroup computes COLS consecutive results of every row; its lanes split C
// (lane l takes k = l, l + lanes, ...) and subgroupAdd sums their partial
// dot products. The subgroup size is read at run time (gl_SubgroupSize and
// the lanes actually active), never assumed.
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#include "matmul_common.glsl"

layout(constant_id = 12) const uint COLS = 8;
layout(local_size_x_id = 13) in;
const uint MAX_ROWS = 4u;

void main()
{
    // Lanes of this subgroup that run: every lane of a full subgroup.
    const uint lanes = subgroupAdd(1u);
    const uint lane = gl_SubgroupInvocationID;
    const uint blocks_w = (W + COLS - 1u) / COLS;
    const uint stride = gl_NumWorkGroups.x * gl_NumSubgroups;
    for (uint blk = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID; blk < N * blocks_w;
         blk += stride) {
        const uint n = blk / blocks_w;
        const uint col0 = (blk % blocks_w) * COLS;
        const uint a_base = A_BASE + n * H * C;
        const uint b_base = B_BASE + n * C * W;
        float acc[MAX_ROWS][COLS];
        [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r)
            [[unroll]] for (uint j = 0u; j < COLS; ++j) acc[r][j] = 0.0;
        for (uint k = lane; k < C; k += lanes) {
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
        [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r) {
            if (r < H) {
                [[unroll]] for (uint j = 0u; j < COLS; ++j) {
                    const float sum = subgroupAdd(acc[r][j]);
                    if (lane == j % lanes && col0 + j < W)
                        store_out(OUT_BASE + (n * H + r) * W + col0 + j, sum);
                }
            }
        }
    }
}
