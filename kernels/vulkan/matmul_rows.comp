#version 450
// matmul_rows.comp - TOSA MATMUL for few rows (H <= 4, GEMV-like),
// bandwidth-bound on B. A workgroup is THREADS column invocations x SLICES
// K-slices (invocation index = slice * THREADS + column thread) and
// computes THREADS * WIDTH consecutive results of every row:
//  - each invocation owns WIDTH consecutive columns, so neighbouring
//    invocations read neighbouring words of one B row (coalesced); with
//    WIDTH 4 (FP32, every B row and B's base 16-byte aligned, checked by the
//    lowering) it reads them as one vec4 through an aliased view;
//  - slice s takes k = s, s + SLICES, ...; A's few values per k are the same
//    address for a whole column group (broadcast loads);
//  - the slices' partial sums meet in shared memory in a halving tree, one
//    row at a time: a fixed summation order per result, no atomics, so runs
//    are deterministic.
// No subgroup operation is used: the layout needs none.
#include "matmul_common.glsl"
#include "slice.glsl"

layout(constant_id = 12) const uint THREADS = 8;
layout(local_size_x_id = 13) in;  // THREADS * SLICES
layout(constant_id = 14) const uint SLICES = 8;  // a power of two
layout(constant_id = 15) const uint WIDTH = 1;   // 1, or 4 (vec4 loads of B)
const uint MAX_ROWS = 4u;
const uint MAX_WIDTH = 4u;

layout(set = 0, binding = 0, std430) buffer Quads { vec4 v[]; } bufs4[BUFFER_COUNT];

shared float partial[SLICES * THREADS * MAX_WIDTH];

void main()
{
    const uint thread = gl_LocalInvocationIndex % THREADS;
    const uint slice = gl_LocalInvocationIndex / THREADS;
    const uint cols = THREADS * WIDTH;
    const uint blocks_w = (W + cols - 1u) / cols;
    // Uniform per workgroup: every invocation meets every barrier.
    for (uint blk = tile_slice.first + gl_WorkGroupID.x; blk < slice_end(N * blocks_w);
         blk += gl_NumWorkGroups.x) {
        const uint n = blk / blocks_w;
        const uint col = (blk % blocks_w) * cols + thread * WIDTH;
        const uint a_base = A_BASE + n * H * C;
        const uint b_base = B_BASE + n * C * W;
        float acc[MAX_ROWS][MAX_WIDTH];
        [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r)
            [[unroll]] for (uint j = 0u; j < MAX_WIDTH; ++j) acc[r][j] = 0.0;
        if (col < W) {
            for (uint k = slice; k < C; k += SLICES) {
                vec4 b = vec4(0.0);
                if (WIDTH == 4u) {
                    // W % 4 == 0 and col % 4 == 0: the 4 columns are in range.
                    b = bufs4[B_BUF].v[(b_base + k * W + col) >> 2];
                } else {
                    b.x = load_b(b_base + k * W + col);
                }
                [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r) {
                    if (r < H) {
                        const float a = load_a(a_base + r * C + k);
                        [[unroll]] for (uint j = 0u; j < MAX_WIDTH; ++j)
                            if (j < WIDTH) acc[r][j] += a * b[j];
                    }
                }
            }
        }
        [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r) {
            if (r < H) {
                const uint mine = (slice * THREADS + thread) * MAX_WIDTH;
                [[unroll]] for (uint j = 0u; j < MAX_WIDTH; ++j) partial[mine + j] = acc[r][j];
                barrier();
                for (uint half_ = SLICES / 2u; half_ > 0u; half_ /= 2u) {
                    if (slice < half_) {
                        const uint other = mine + half_ * THREADS * MAX_WIDTH;
                        [[unroll]] for (uint j = 0u; j < MAX_WIDTH; ++j)
                            partial[mine + j] += partial[other + j];
                    }
                    barrier();
                }
                if (slice == 0u) {
                    [[unroll]] for (uint j = 0u; j < MAX_WIDTH; ++j)
                        if (j < WIDTH && col + j < W)
                            store_out(OUT_BASE + (n * H + r) * W + col + j, partial[mine + j]);
                }
                // The next row (or block) overwrites the sums read here.
                barrier();
            }
        }
    }
}
