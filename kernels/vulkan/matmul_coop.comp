#version 450
// matmul_coop.comp - TOSA MATMUL FP16 x FP16 -> FP32 on NVIDIA cooperative
// matrices (VK_NV_cooperative_matrix; docs/adr/0013-vulkan-backend.md says
// why NV and not KHR), staged through shared memory.
//
// A workgroup computes a BM x BN block of results: (BM / WM) x (BN / WN)
// subgroups, each owning a WM x WN sub-block of (WM / MM) x (WN / NN)
// fragments of MM x NN results (a shape the device lists). The K loop
// stages A's BM x BK and B's BK x BN tiles in shared memory, every
// invocation copying 8 halves (one uvec4) at a time, then each subgroup
// loads its fragments from there, KK deep at a time; each stage's global
// loads are issued into registers while the previous stage is multiplied.
//
// The lowerer (lowering_matmul.cpp) takes this kernel only when BM divides
// H and BN divides W, so no fragment crosses an edge of the result; C needs
// only be a multiple of 8: the stage past C is zeros, which add nothing.
// Every base and every row (C, W) is a multiple of 8 halves, so each uvec4
// holds 8 halves of one row, and the FP32 stores are 16-byte aligned.
// glslang declares the Vulkan memory model for this shader: the device
// enables vulkanMemoryModel with the extension (instance.cpp).
#extension GL_NV_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#extension GL_EXT_control_flow_attributes : enable
#include "slice.glsl"

layout(constant_id = 0) const uint BUFFER_COUNT = 1;
// The same binding as every kernel, seen as groups of 8 halves (A, B) and
// as floats (the result): aliases of one storage buffer array.
layout(set = 0, binding = 0, std430) buffer Quads { uvec4 q[]; } qbufs[BUFFER_COUNT];
layout(set = 0, binding = 0, std430) buffer Floats { float f[]; } fbufs[BUFFER_COUNT];

layout(constant_id = 1) const uint N = 1;
layout(constant_id = 2) const uint H = 1;
layout(constant_id = 3) const uint C = 8;
layout(constant_id = 4) const uint W = 8;
layout(constant_id = 5) const uint OUT_BUF = 0;
layout(constant_id = 6) const uint OUT_BASE = 0;
layout(constant_id = 7) const uint A_BUF = 0;
layout(constant_id = 8) const uint A_BASE = 0;  // in halves, a multiple of 8
layout(constant_id = 9) const uint B_BUF = 0;
layout(constant_id = 10) const uint B_BASE = 0;  // in halves, a multiple of 8
layout(constant_id = 11) const uint MODE = 1;  // FP16 x FP16 -> FP32 only
layout(constant_id = 12) const uint MM = 16;   // the fragment: MM x NN, KK deep
layout(constant_id = 13) const uint NN = 16;
layout(constant_id = 14) const uint KK = 16;
layout(constant_id = 15) const uint BM = 32;   // the workgroup's block
layout(constant_id = 16) const uint BN = 32;
layout(constant_id = 17) const uint BK = 16;   // the stage's depth
layout(constant_id = 18) const uint WM = 32;   // a subgroup's sub-block
layout(constant_id = 19) const uint WN = 32;
// (BM / WM) * (BN / WN) subgroups of the device's subgroup size
// (matmul_tiles.cpp checks it is within the device's limits).
layout(local_size_x_id = 20) in;

// Staged rows in uvec4s: one uvec4 (8 halves) of padding per row, so the
// 16-byte rows of a fragment load fall on different banks (A: BK = 32 is
// 80-byte rows, eight rows cover all 128 bytes of banks; B: BN = 128 is
// 272-byte rows, the same). MM, NN, KK, BK, BN are multiples of 8
// (matmul_tiles.cpp), so every fragment starts on a whole uvec4.
const uint A_ROW = BK / 8u + 1u;
const uint B_ROW = BN / 8u + 1u;
shared uvec4 a_stage[BM * A_ROW];
shared uvec4 b_stage[BK * B_ROW];

const uint TM = WM / MM;  // fragments per subgroup, down and across
const uint TN = WN / NN;

// Each invocation copies A_EACH uvec4s of A's stage and B_EACH of B's:
// uvec4 i of a stage is invocation i % invocations' number
// i / invocations (matmul_tiles.cpp checks the invocations divide both
// stages, so every invocation copies the same number).
const uint A_EACH = BM * (BK / 8u) / gl_WorkGroupSize.x;
const uint B_EACH = BK * (BN / 8u) / gl_WorkGroupSize.x;
uvec4 a_next[A_EACH];
uvec4 b_next[B_EACH];

// A[row0 + r][k0 + 8q .. +8] -> a_next for a_stage[r][q], B[k0 + r][col0 +
// 8q .. +8] -> b_next for b_stage[r][q]; `a_base`, `b_base` in uvec4s. k0
// is a multiple of 8 (BK is), so a uvec4 of A is wholly before C or wholly
// past it; past C (A's columns, B's rows) the stage holds zeros.
void fetch(uint k0, uint a_base, uint b_base, uint row0, uint col0)
{
    const uint c8 = C / 8u;  // A's row and B's row in uvec4s
    const uint w8 = W / 8u;
    [[unroll]] for (uint e = 0u; e < A_EACH; ++e) {
        const uint i = gl_LocalInvocationID.x + e * gl_WorkGroupSize.x;
        const uint r = i / (BK / 8u), q = i % (BK / 8u);
        const uint kq = k0 / 8u + q;
        a_next[e] = kq < c8 ? qbufs[A_BUF].q[a_base + (row0 + r) * c8 + kq] : uvec4(0u);
    }
    [[unroll]] for (uint e = 0u; e < B_EACH; ++e) {
        const uint i = gl_LocalInvocationID.x + e * gl_WorkGroupSize.x;
        const uint r = i / (BN / 8u), q = i % (BN / 8u);
        b_next[e] = k0 + r < C ? qbufs[B_BUF].q[b_base + (k0 + r) * w8 + col0 / 8u + q] : uvec4(0u);
    }
}

void main()
{
    const uint invocations = gl_WorkGroupSize.x;
    const uint local = gl_LocalInvocationID.x;
    // The subgroup's sub-block; gl_SubgroupID < (BM / WM) * (BN / WN) as the
    // workgroup is that many whole subgroups.
    const uint sub_row = (gl_SubgroupID / (BN / WN)) * WM;
    const uint sub_col = (gl_SubgroupID % (BN / WN)) * WN;
    const uint blocks_w = W / BN;
    const uint blocks_h = H / BM;
    // `t` is the same for the whole workgroup: every invocation reaches
    // every barrier below.
    for (uint t = tile_slice.first + gl_WorkGroupID.x; t < slice_end(N * blocks_h * blocks_w);
         t += gl_NumWorkGroups.x) {
        const uint n = t / (blocks_h * blocks_w);
        const uint row0 = ((t / blocks_w) % blocks_h) * BM;
        const uint col0 = (t % blocks_w) * BN;
        // In uvec4s: H * C and C * W are multiples of 8 as C and W are.
        const uint a_base = (A_BASE + n * H * C) / 8u;
        const uint b_base = (B_BASE + n * C * W) / 8u;
        // A part cut over k (slice.glsl) starts from the sums stored so far.
        const uint k_first = tile_slice.k_first, k_end = slice_k_end(C);
        fcoopmatNV<32, gl_ScopeSubgroup, MM, NN> acc[TM][TN];
        [[unroll]] for (uint i = 0u; i < TM; ++i)
            [[unroll]] for (uint j = 0u; j < TN; ++j) {
                if (k_first != 0u)
                    coopMatLoadNV(acc[i][j], fbufs[OUT_BUF].f,
                                  OUT_BASE + (n * H + row0 + sub_row + i * MM) * W + col0 +
                                      sub_col + j * NN,
                                  W, false);
                else
                    acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, MM, NN>(0.0);
            }
        fetch(k_first, a_base, b_base, row0, col0);
        for (uint k0 = k_first; k0 < k_end; k0 += BK) {
            // The uvec4s fetched for this stage (before the loop, or during
            // the previous stage's multiplies) go to shared memory.
            [[unroll]] for (uint e = 0u; e < A_EACH; ++e) {
                const uint i = local + e * invocations;
                a_stage[(i / (BK / 8u)) * A_ROW + i % (BK / 8u)] = a_next[e];
            }
            [[unroll]] for (uint e = 0u; e < B_EACH; ++e) {
                const uint i = local + e * invocations;
                b_stage[(i / (BN / 8u)) * B_ROW + i % (BN / 8u)] = b_next[e];
            }
            // The stage is complete before any subgroup reads it.
            memoryBarrierShared();
            barrier();
            // The next stage's global loads are in flight during this one's
            // multiplies (registers only: the stage is still being read).
            if (k0 + BK < k_end) fetch(k0 + BK, a_base, b_base, row0, col0);
            [[unroll]] for (uint kk = 0u; kk < BK; kk += KK) {
                // Row-major loads from the stage: element and stride count
                // uvec4s (8 halves), the array's element type.
                fcoopmatNV<16, gl_ScopeSubgroup, MM, KK> a[TM];
                fcoopmatNV<16, gl_ScopeSubgroup, KK, NN> b[TN];
                [[unroll]] for (uint i = 0u; i < TM; ++i)
                    coopMatLoadNV(a[i], a_stage, (sub_row + i * MM) * A_ROW + kk / 8u, A_ROW,
                                  false);
                [[unroll]] for (uint j = 0u; j < TN; ++j)
                    coopMatLoadNV(b[j], b_stage, kk * B_ROW + (sub_col + j * NN) / 8u, B_ROW,
                                  false);
                [[unroll]] for (uint i = 0u; i < TM; ++i)
                    [[unroll]] for (uint j = 0u; j < TN; ++j)
                        acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
            }
            // Every subgroup has read the stage before the next one
            // overwrites it.
            barrier();
        }
        [[unroll]] for (uint i = 0u; i < TM; ++i)
            [[unroll]] for (uint j = 0u; j < TN; ++j)
                coopMatStoreNV(acc[i][j], fbufs[OUT_BUF].f,
                               OUT_BASE + (n * H + row0 + sub_row + i * MM) * W + col0 + sub_col +
                                   j * NN,
                               W, false);
    }
}
