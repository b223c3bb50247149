// matmul_common.glsl - what the MATMUL kernels share (docs/adr/0013-vulkan-backend.md).
//
// The same binding as common.glsl (one array of storage buffers: the slots
// in slot order, then the arena), but no fixed workgroup size: each MATMUL
// kernel takes its size from a specialization constant chosen at load from
// the device's limits (backends/vulkan/src/matmul_tiles.hpp).
//
// Operand constants, in this order from constant_id 1 in every MATMUL
// kernel: N, H, C, W, then buffer and element offset of the result, A and B,
// then the dtype mode. FP16 elements are read as halves of 32-bit words
// (unpackHalf2x16), so no 16-bit storage feature is needed; an FP16 result
// half is written with two atomics on its word, exact because each half has
// one writer (as BOOL bytes in common.glsl).
#extension GL_EXT_control_flow_attributes : enable

layout(constant_id = 0) const uint BUFFER_COUNT = 1;
layout(set = 0, binding = 0, std430) buffer Words { uint w[]; } bufs[BUFFER_COUNT];

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
// 0: FP32 x FP32 -> FP32; 1: FP16 x FP16 -> FP32; 2: FP16 x FP16 -> FP16.
// Every mode accumulates in FP32 and rounds once at the end.
layout(constant_id = 11) const uint MODE = 0;

const bool HALF_IN = MODE != 0u;
const bool HALF_OUT = MODE == 2u;

float half_at(uint word, uint i) { return unpackHalf2x16(word)[i & 1u]; }

float load_a(uint i)
{
    if (HALF_IN) return half_at(bufs[A_BUF].w[i >> 1], i);
    return uintBitsToFloat(bufs[A_BUF].w[i]);
}
float load_b(uint i)
{
    if (HALF_IN) return half_at(bufs[B_BUF].w[i >> 1], i);
    return uintBitsToFloat(bufs[B_BUF].w[i]);
}
void store_out(uint i, float v)
{
    if (HALF_OUT) {
        const uint shift = (i & 1u) * 16u;
        const uint bits = packHalf2x16(vec2(v, 0.0)) & 0xffffu;
        atomicAnd(bufs[OUT_BUF].w[i >> 1], ~(0xffffu << shift));
        atomicOr(bufs[OUT_BUF].w[i >> 1], bits << shift);
    } else {
        bufs[OUT_BUF].w[i] = floatBitsToUint(v);
    }
}
