#version 450
// matmul_coop.comp - TOSA MATMUL FP16 x FP16 -> FP32 on NVIDIA cooperative
// matrices (VK_NV_cooperative_matrix; docs/adr/0013-vulkan-backend.md says
// why NV and not KHR). One subgroup per workgroup computes a block of
// TM x TN fragments of MM x NN results, stepping over C by KK; MM, NN, KK are
// a shape the device lists (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)
// and the lowerer takes this kernel only when H, W and C are whole multiples
// of the block (else the scalar kernel runs), so no load or store crosses
// an edge. Loads and stores need 16-byte aligned addresses and strides:
// bases are whole arena regions or 0, and W, C are multiples of 8 halves.
// glslang declares the Vulkan memory model for this shader: the device
// enables vulkanMemoryModel with the extension (instance.cpp).
#extension GL_NV_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#extension GL_EXT_control_flow_attributes : enable

layout(constant_id = 0) const uint BUFFER_COUNT = 1;
// The same binding as every kernel, seen as halves (A, B) and floats (the
// result): aliases of one storage buffer array.
layout(set = 0, binding = 0, std430) buffer Halves { float16_t h[]; } hbufs[BUFFER_COUNT];
layout(set = 0, binding = 0, std430) buffer Floats { float f[]; } fbufs[BUFFER_COUNT];

layout(constant_id = 1) const uint N = 1;
layout(constant_id = 2) const uint H = 1;
layout(constant_id = 3) const uint C = 1;
layout(constant_id = 4) const uint W = 1;
layout(constant_id = 5) const uint OUT_BUF = 0;
layout(constant_id = 6) const uint OUT_BASE = 0;
layout(constant_id = 7) const uint A_BUF = 0;
layout(constant_id = 8) const uint A_BASE = 0;
layout(constant_id = 9) const uint B_BUF = 0;
layout(constant_id = 10) const uint B_BASE = 0;
layout(constant_id = 11) const uint MODE = 1;  // FP16 x FP16 -> FP32 only
layout(constant_id = 12) const uint MM = 16;
layout(constant_id = 13) const uint NN = 16;
layout(constant_id = 14) const uint KK = 16;
layout(constant_id = 15) const uint TM = 2;
layout(constant_id = 16) const uint TN = 2;
// The device's subgroup size: one subgroup per workgroup.
layout(local_size_x_id = 17) in;

void main()
{
    const uint blocks_w = W / (NN * TN);
    const uint blocks_h = H / (MM * TM);
    for (uint t = gl_WorkGroupID.x; t < N * blocks_h * blocks_w; t += gl_NumWorkGroups.x) {
        const uint n = t / (blocks_h * blocks_w);
        const uint row0 = ((t / blocks_w) % blocks_h) * MM * TM;
        const uint col0 = (t % blocks_w) * NN * TN;
        const uint a_base = A_BASE + n * H * C;
        const uint b_base = B_BASE + n * C * W;
        fcoopmatNV<32, gl_ScopeSubgroup, MM, NN> acc[TM][TN];
        [[unroll]] for (uint i = 0u; i < TM; ++i)
            [[unroll]] for (uint j = 0u; j < TN; ++j)
                acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, MM, NN>(0.0);
        for (uint k = 0u; k < C; k += KK) {
            fcoopmatNV<16, gl_ScopeSubgroup, MM, KK> a[TM];
            fcoopmatNV<16, gl_ScopeSubgroup, KK, NN> b[TN];
            [[unroll]] for (uint i = 0u; i < TM; ++i)
                coopMatLoadNV(a[i], hbufs[A_BUF].h, a_base + (row0 + i * MM) * C + k, C, false);
            [[unroll]] for (uint j = 0u; j < TN; ++j)
                coopMatLoadNV(b[j], hbufs[B_BUF].h, b_base + k * W + col0 + j * NN, W, false);
            [[unroll]] for (uint i = 0u; i < TM; ++i)
                [[unroll]] for (uint j = 0u; j < TN; ++j)
                    acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
        }
        [[unroll]] for (uint i = 0u; i < TM; ++i)
            [[unroll]] for (uint j = 0u; j < TN; ++j)
                coopMatStoreNV(acc[i][j], fbufs[OUT_BUF].f,
                               OUT_BASE + (n * H + row0 + i * MM) * W + col0 + j * NN, W, false);
    }
}
