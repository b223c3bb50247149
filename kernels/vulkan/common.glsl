// common.glsl - what every vaccel Vulkan kernel shares (docs/adr/0013-vulkan-backend.md).
//
// Binding 0 of set 0 is one array of storage buffers: the program's bound
// slots in slot order, then its arena. Each kernel names its operands by a
// buffer index and an element offset, both specialization constants, so
// every index into the array is a constant expression (no descriptor
// indexing feature is needed). 32-bit elements are words; BOOL elements are
// bytes, four to a word, little-endian.
#extension GL_EXT_control_flow_attributes : enable

layout(constant_id = 0) const uint BUFFER_COUNT = 1;
layout(set = 0, binding = 0, std430) buffer Words { uint w[]; } bufs[BUFFER_COUNT];

// 64 invocations per workgroup; the grid is capped at 65535 groups and each
// invocation strides over the work (grid-stride loop).
layout(local_size_x = 64) in;

#define GRID_STRIDE (gl_NumWorkGroups.x * 64u)

#define LOAD_F(B, i) uintBitsToFloat(bufs[B].w[i])
#define STORE_F(B, i, v) bufs[B].w[i] = floatBitsToUint(v)
#define LOAD_BYTE(B, i) ((bufs[B].w[(i) >> 2] >> (((i) & 3u) * 8u)) & 0xffu)
// One byte of a word written without touching its neighbours: each byte has
// exactly one writer, so clearing then setting it with atomics is exact
// whatever the other invocations do to the other bytes of the word.
#define STORE_BYTE(B, i, v)                                                         \
    {                                                                               \
        uint shift_ = ((i) & 3u) * 8u;                                              \
        atomicAnd(bufs[B].w[(i) >> 2], ~(0xffu << shift_));                         \
        atomicOr(bufs[B].w[(i) >> 2], ((v) & 0xffu) << shift_);                     \
    }

// TOSA MAXIMUM / MINIMUM with NaN propagating; of two equal values (+0 and
// -0) the maximum is +0 and the minimum -0, as on the CPU device.
bool negative_sign(float x) { return (floatBitsToUint(x) >> 31) != 0u; }
float max_of(float x, float y)
{
    if (isnan(x) || isnan(y)) return x + y;
    if (x == y) return negative_sign(x) ? y : x;
    return x > y ? x : y;
}
float min_of(float x, float y)
{
    if (isnan(x) || isnan(y)) return x + y;
    if (x == y) return negative_sign(x) ? x : y;
    return x < y ? x : y;
}
