// common.glsl - what every vaccel Vulkan kernel shares (docs/adr/0013-vulkan-backend.md).
//
// Binding 0 of set 0 is one array of storage buffers: the program's bound
// slots in slot order, then its arena. Each kernel names its operands by a
// buffer index and an element offset, both specialization constants, so
// every index into the array is a constant expression (no descriptor
// indexing feature is needed). 32-bit elements are words; BOOL elements are
// bytes, four to a word, little-endian.
//
// A kernel compiled with NARROW_STORAGE defined (the "_narrow" variants) also
// sees the same binding as 16-bit and 8-bit arrays (aliased views, which
// needs storageBuffer16BitAccess and storageBuffer8BitAccess): FP16, BF16,
// INT16, FP8E4M3, FP8E5M2 and INT8 elements are loaded and stored at their
// own width, so a store never touches a neighbouring element. The FP32
// variants declare neither view and need neither feature.
#extension GL_EXT_control_flow_attributes : enable
#ifdef NARROW_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#endif

layout(constant_id = 0) const uint BUFFER_COUNT = 1;
layout(set = 0, binding = 0, std430) buffer Words { uint w[]; } bufs[BUFFER_COUNT];
#ifdef NARROW_STORAGE
layout(set = 0, binding = 0, std430) buffer Halves { uint16_t h[]; } bufs16[BUFFER_COUNT];
layout(set = 0, binding = 0, std430) buffer Bytes { uint8_t b[]; } bufs8[BUFFER_COUNT];
#endif

// 64 invocations per workgroup; the grid is capped at 65535 groups and each
// invocation strides over the work (grid-stride loop). A kernel that sizes
// its own workgroups (conv2d_gemm.comp) defines OWN_WORKGROUP_SIZE.
#ifndef OWN_WORKGROUP_SIZE
layout(local_size_x = 64) in;
#endif

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

// The same for a 16-bit element (two to a word), for kernels without the
// 16-bit view (the spatial kernels run FP16 on every device this way).
#define LOAD_HALF(B, i) ((bufs[B].w[(i) >> 1] >> (((i) & 1u) * 16u)) & 0xffffu)
#define STORE_HALF(B, i, v)                                                         \
    {                                                                               \
        uint shift_ = ((i) & 1u) * 16u;                                             \
        atomicAnd(bufs[B].w[(i) >> 1], ~(0xffffu << shift_));                       \
        atomicOr(bufs[B].w[(i) >> 1], ((v) & 0xffffu) << shift_);                   \
    }

// Element dtypes, as the lowering (backends/gpu/src/lowering_storage.cpp)
// numbers them in specialization constants.
const uint DT_FP32 = 0u, DT_INT32 = 1u, DT_BOOL = 2u, DT_FP16 = 3u, DT_BF16 = 4u;
const uint DT_FP8E4M3 = 5u, DT_FP8E5M2 = 6u, DT_INT8 = 7u, DT_INT16 = 8u;

uint dtype_bytes(uint dt)
{
    if (dt == DT_FP32 || dt == DT_INT32) return 4u;
    if (dt == DT_FP16 || dt == DT_BF16 || dt == DT_INT16) return 2u;
    return 1u;
}
bool dtype_is_float(uint dt) { return dt == DT_FP32 || (dt >= DT_FP16 && dt <= DT_FP8E5M2); }

// An element's bits (zero-extended) of dtype DT at element index i, and a
// store of the low bits of v. Statements, so that only the branch of the
// operand's dtype (a specialization constant) survives specialization.
#ifdef NARROW_STORAGE
#define LOAD_BITS(dst, B, i, DT)                                                    \
    if (dtype_bytes(DT) == 4u) dst = bufs[B].w[i];                                  \
    else if (dtype_bytes(DT) == 2u) dst = uint(bufs16[B].h[i]);                     \
    else dst = uint(bufs8[B].b[i]);
#define STORE_BITS(B, i, DT, v)                                                     \
    if (dtype_bytes(DT) == 4u) bufs[B].w[i] = (v);                                  \
    else if (dtype_bytes(DT) == 2u) bufs16[B].h[i] = uint16_t((v) & 0xffffu);       \
    else if (DT == DT_BOOL) STORE_BYTE(B, i, (v))                                   \
    else bufs8[B].b[i] = uint8_t((v) & 0xffu);
#else
#define LOAD_BITS(dst, B, i, DT)                                                    \
    if (dtype_bytes(DT) == 4u) dst = bufs[B].w[i];                                  \
    else dst = LOAD_BYTE(B, i);
#define STORE_BITS(B, i, DT, v)                                                     \
    if (dtype_bytes(DT) == 4u) bufs[B].w[i] = (v);                                  \
    else STORE_BYTE(B, i, (v))
#endif
// The spatial kernels' loads and stores (no 16-bit views on any device):
// as LOAD_BITS and STORE_BITS, with 16-bit elements read out of their word
// and stored by STORE_HALF. Only those kernels use them, so the others'
// code is unchanged by them.
#define LOAD_ELEMENT(dst, B, i, DT)                                                 \
    if (dtype_bytes(DT) == 4u) dst = bufs[B].w[i];                                  \
    else if (dtype_bytes(DT) == 2u) dst = LOAD_HALF(B, i);                          \
    else dst = LOAD_BYTE(B, i);
#define STORE_ELEMENT(B, i, DT, v)                                                  \
    if (dtype_bytes(DT) == 4u) bufs[B].w[i] = (v);                                  \
    else if (dtype_bytes(DT) == 2u) STORE_HALF(B, i, (v))                           \
    else STORE_BYTE(B, i, (v))
// A float element of dtype DT (FP32 or narrower) as FP32 (exact) through
// LOAD (LOAD_BITS or LOAD_ELEMENT), and an FP32 value rounded once to DT and
// stored; the _ELEMENT forms are the spatial kernels'.
#define LOAD_FLOAT_WITH(LOAD, dst, B, i, DT)                                        \
    {                                                                               \
        uint bits_ = 0u;                                                            \
        LOAD(bits_, B, i, DT)                                                       \
        dst = widen(DT, bits_);                                                     \
    }
#define LOAD_FLOAT(dst, B, i, DT) LOAD_FLOAT_WITH(LOAD_BITS, dst, B, i, DT)
#define LOAD_FLOAT_ELEMENT(dst, B, i, DT) LOAD_FLOAT_WITH(LOAD_ELEMENT, dst, B, i, DT)
#define STORE_FLOAT(B, i, DT, v) STORE_BITS(B, i, DT, narrow(DT, v))
#define STORE_FLOAT_ELEMENT(B, i, DT, v) STORE_ELEMENT(B, i, DT, narrow(DT, v))

// ----- narrow float encodings (docs/adr/0011-narrow-floats-on-the-cpu.md) ----
// Widening is exact; narrowing rounds to nearest, ties to even, once, in
// integer arithmetic only (so a device that flushes FP32 subnormals cannot
// change it). The rules are the CPU backend's bit for bit: overflow gives
// infinity (FP16, BF16, E5M2) or NaN (E4M3, which has none); a NaN keeps its
// sign and the top bits of its payload and comes out quiet (E4M3: S.1111.111).
struct FloatFormat {
    int exponent_bits;
    int mantissa_bits;
    int bias;
    bool infinities;
};
FloatFormat format_of(uint dt)
{
    if (dt == DT_FP16) return FloatFormat(5, 10, 15, true);
    if (dt == DT_BF16) return FloatFormat(8, 7, 127, true);
    if (dt == DT_FP8E4M3) return FloatFormat(4, 3, 7, false);
    if (dt == DT_FP8E5M2) return FloatFormat(5, 2, 15, true);
    return FloatFormat(8, 23, 127, true);  // FP32
}

// The FP32 bits of an FP16, BF16 or FP8 encoding.
uint widen_bits(uint dt, uint bits)
{
    if (dt == DT_FP32) return bits;
    if (dt == DT_BF16) return (bits & 0xffffu) << 16;  // subnormals stay FP32 subnormals
    FloatFormat f = format_of(dt);
    uint mb = uint(f.mantissa_bits);
    uint all_ones = (1u << f.exponent_bits) - 1u;
    uint sign = ((bits >> (uint(f.exponent_bits) + mb)) & 1u) << 31;
    uint exponent = (bits >> mb) & all_ones;
    uint mantissa = bits & ((1u << mb) - 1u);
    if (exponent == all_ones && (f.infinities || mantissa == (1u << mb) - 1u))
        return sign | 0x7f800000u | (mantissa << (23u - mb));  // infinity, or NaN with its payload
    if (exponent == 0u) {
        if (mantissa == 0u) return sign;
        // Subnormal: mantissa * 2^(1 - bias - mb), a normal FP32 for these formats.
        int msb = findMSB(mantissa);
        uint biased = uint(1 - f.bias - int(mb) + msb + 127);
        return sign | (biased << 23) | ((mantissa << (23 - msb)) & 0x7fffffu);
    }
    return sign | (uint(int(exponent) - f.bias + 127) << 23) | (mantissa << (23u - mb));
}

// Rounds magnitude * 2^scale (magnitude > 0) to format dt, with the sign bit
// already in its place; NaN and infinity are the callers'.
uint encode_magnitude(uint dt, uint sign, uint magnitude, int scale)
{
    FloatFormat f = format_of(dt);
    int mb = f.mantissa_bits;
    uint unit = 1u << mb;
    uint all_ones = (1u << f.exponent_bits) - 1u;
    uint nan = f.infinities ? (all_ones << mb) | (unit >> 1) : (all_ones << mb) | (unit - 1u);
    uint overflow = f.infinities ? sign | (all_ones << mb) : sign | nan;
    int exponent = max(findMSB(magnitude) + scale, 1 - f.bias);
    // The quantum of that binade is 2^(exponent - mb): count quanta, rounded.
    int shift = exponent - mb - scale;
    uint q;
    if (shift <= 0) {
        q = magnitude << uint(-shift);  // exact
    } else if (shift >= 32) {
        q = 0u;  // below half the smallest subnormal
    } else {
        q = magnitude >> uint(shift);
        uint rest = magnitude & ((1u << uint(shift)) - 1u);
        uint half_ = 1u << uint(shift - 1);
        if (rest > half_ || (rest == half_ && (q & 1u) != 0u)) ++q;
    }
    if (q == 0u) return sign;
    if (q < unit) return sign | q;  // subnormal
    if (q == 2u * unit) {           // rounded up into the next binade
        q = unit;
        ++exponent;
    }
    int biased = exponent + f.bias;
    int largest = f.infinities ? int(all_ones) - 1 : int(all_ones);
    if (biased > largest) return overflow;
    uint bits = (uint(biased) << mb) | (q - unit);
    if (!f.infinities && bits == nan) return overflow;  // E4M3 past 448
    return sign | bits;
}

// FP32 bits narrowed to dt (FP32: unchanged).
uint narrow_bits(uint dt, uint x)
{
    if (dt == DT_FP32) return x;
    FloatFormat f = format_of(dt);
    uint mb = uint(f.mantissa_bits);
    uint unit = 1u << mb;
    uint all_ones = (1u << f.exponent_bits) - 1u;
    uint sign = (x >> 31) << (uint(f.exponent_bits) + mb);
    uint magnitude = x & 0x7fffffffu;
    uint nan = f.infinities ? (all_ones << mb) | (unit >> 1) : (all_ones << mb) | (unit - 1u);
    if (magnitude > 0x7f800000u)
        return f.infinities ? sign | nan | ((magnitude >> (23u - mb)) & (unit - 1u)) : sign | nan;
    if (magnitude == 0x7f800000u) return f.infinities ? sign | (all_ones << mb) : sign | nan;
    if (magnitude == 0u) return sign;
    uint exponent = magnitude >> 23;
    uint mantissa = magnitude & 0x7fffffu;
    if (exponent == 0u) return encode_magnitude(dt, sign, mantissa, -149);
    return encode_magnitude(dt, sign, mantissa | 0x800000u, int(exponent) - 150);
}

// An integer narrowed to float dt (FP32 included), rounded once.
uint float_bits_of_int(uint dt, int v)
{
    FloatFormat f = format_of(dt);
    uint sign = v < 0 ? 1u << uint(f.exponent_bits + f.mantissa_bits) : 0u;
    if (v == 0) return 0u;
    uint magnitude = v < 0 ? uint(-(v + 1)) + 1u : uint(v);  // INT32_MIN included
    return encode_magnitude(dt, sign, magnitude, 0);
}

// A float dtype's element as FP32, and an FP32 value as its element bits.
float widen(uint dt, uint bits) { return uintBitsToFloat(widen_bits(dt, bits)); }
uint narrow(uint dt, float v) { return narrow_bits(dt, floatBitsToUint(v)); }

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
// TOSA nan_mode IGNORE: a NaN operand gives way to the other; two NaNs
// give NaN.
float max_ignoring_nan(float x, float y) { return isnan(x) ? y : (isnan(y) ? x : max_of(x, y)); }
float min_ignoring_nan(float x, float y) { return isnan(x) ? y : (isnan(y) ? x : min_of(x, y)); }
