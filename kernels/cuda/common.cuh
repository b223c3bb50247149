// common.cuh - what every vaccel CUDA TOSA kernel shares; mirrors
// kernels/vulkan/common.glsl (docs/adr/0017-shared-gpu-lowering.md).
//
// Operands are (buffer index, element offset) spec words, as on Vulkan;
// every element is loaded and stored at its own width (4, 2 or 1 bytes), so
// one kernel serves what Vulkan splits into a kernel and its _narrow
// variant. Index arithmetic is 32-bit unsigned, as in the GLSL: identical
// results, wrap-around included.
#pragma once

#include "dispatch.h"

// Every kernel runs in blocks of this many threads (the backend's launch).
#define VACCEL_CUDA_BLOCK 256

// The spec words arrive by value in the kernel's parameter space;
// __grid_constant__ lets a run-time index (buffer[spec[k]]) read it in place.
#define VACCEL_KERNEL(name)                                                         \
    extern "C" __global__ void __launch_bounds__(VACCEL_CUDA_BLOCK)                 \
        name(const __grid_constant__ struct vaccel_cuda_dispatch d)

namespace vaccel_cuda {

typedef struct vaccel_cuda_dispatch Dispatch;

__device__ __forceinline__ unsigned first_index() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ unsigned grid_stride() { return gridDim.x * blockDim.x; }

// The operand whose buffer index is spec word k.
__device__ __forceinline__ unsigned char* buffer(const Dispatch& d, unsigned k)
{
    return reinterpret_cast<unsigned char*>(d.buffer[d.spec[k]]);
}
__device__ __forceinline__ const unsigned* words(const Dispatch& d, unsigned k)
{
    return reinterpret_cast<const unsigned*>(d.buffer[d.spec[k]]);
}
__device__ __forceinline__ unsigned* out_words(const Dispatch& d, unsigned k)
{
    return reinterpret_cast<unsigned*>(d.buffer[d.spec[k]]);
}

// Element dtypes, numbered as common.glsl's DT_* and the lowering's kernel_dtype().
enum : unsigned {
    DT_FP32 = 0, DT_INT32 = 1, DT_BOOL = 2, DT_FP16 = 3, DT_BF16 = 4,
    DT_FP8E4M3 = 5, DT_FP8E5M2 = 6, DT_INT8 = 7, DT_INT16 = 8,
};

__device__ __forceinline__ unsigned dtype_bytes(unsigned dt)
{
    if (dt == DT_FP32 || dt == DT_INT32) return 4u;
    if (dt == DT_FP16 || dt == DT_BF16 || dt == DT_INT16) return 2u;
    return 1u;
}
__device__ __forceinline__ bool dtype_is_float(unsigned dt)
{
    return dt == DT_FP32 || (dt >= DT_FP16 && dt <= DT_FP8E5M2);
}

// Element i of dtype dt, zero-extended; and a store of v's low bits. Each
// element has one writer, so a byte (BOOL included) is stored as a byte.
__device__ __forceinline__ unsigned load_bits(const unsigned char* __restrict__ p, unsigned i,
                                              unsigned dt)
{
    const unsigned bytes = dtype_bytes(dt);
    if (bytes == 4u) return reinterpret_cast<const unsigned*>(p)[i];
    if (bytes == 2u) return reinterpret_cast<const unsigned short*>(p)[i];
    return p[i];
}
__device__ __forceinline__ void store_bits(unsigned char* __restrict__ p, unsigned i, unsigned dt,
                                           unsigned v)
{
    const unsigned bytes = dtype_bytes(dt);
    if (bytes == 4u) reinterpret_cast<unsigned*>(p)[i] = v;
    else if (bytes == 2u) reinterpret_cast<unsigned short*>(p)[i] = static_cast<unsigned short>(v);
    else p[i] = static_cast<unsigned char>(v);
}

__device__ __forceinline__ int find_msb(unsigned v) { return 31 - __clz(v); }

// ----- narrow float encodings (docs/adr/0011-narrow-floats-on-the-cpu.md) ----
// Widening is exact; narrowing rounds to nearest, ties to even, once, in
// integer arithmetic only. Overflow gives infinity (FP16, BF16, E5M2) or NaN
// (E4M3, which has none); a NaN keeps its sign and the top of its payload
// and comes out quiet (E4M3: S.1111.111). Bit for bit common.glsl's.
struct FloatFormat {
    int exponent_bits;
    int mantissa_bits;
    int bias;
    bool infinities;
};
__device__ __forceinline__ FloatFormat format_of(unsigned dt)
{
    if (dt == DT_FP16) return {5, 10, 15, true};
    if (dt == DT_BF16) return {8, 7, 127, true};
    if (dt == DT_FP8E4M3) return {4, 3, 7, false};
    if (dt == DT_FP8E5M2) return {5, 2, 15, true};
    return {8, 23, 127, true};  // FP32
}

// The FP32 bits of an FP16, BF16 or FP8 encoding.
__device__ __forceinline__ unsigned widen_bits(unsigned dt, unsigned bits)
{
    if (dt == DT_FP32) return bits;
    if (dt == DT_BF16) return (bits & 0xffffu) << 16;  // subnormals stay FP32 subnormals
    const FloatFormat f = format_of(dt);
    const unsigned mb = static_cast<unsigned>(f.mantissa_bits);
    const unsigned all_ones = (1u << f.exponent_bits) - 1u;
    const unsigned sign = ((bits >> (static_cast<unsigned>(f.exponent_bits) + mb)) & 1u) << 31;
    const unsigned exponent = (bits >> mb) & all_ones;
    const unsigned mantissa = bits & ((1u << mb) - 1u);
    if (exponent == all_ones && (f.infinities || mantissa == (1u << mb) - 1u))
        return sign | 0x7f800000u | (mantissa << (23u - mb));  // infinity, or NaN with its payload
    if (exponent == 0u) {
        if (mantissa == 0u) return sign;
        // Subnormal: mantissa * 2^(1 - bias - mb), a normal FP32 for these formats.
        const int msb = find_msb(mantissa);
        const unsigned biased =
            static_cast<unsigned>(1 - f.bias - static_cast<int>(mb) + msb + 127);
        return sign | (biased << 23) | ((mantissa << (23 - msb)) & 0x7fffffu);
    }
    return sign | (static_cast<unsigned>(static_cast<int>(exponent) - f.bias + 127) << 23) |
           (mantissa << (23u - mb));
}

// Rounds magnitude * 2^scale (magnitude > 0) to format dt, with the sign bit
// already in its place; NaN and infinity are the callers'.
__device__ __forceinline__ unsigned encode_magnitude(unsigned dt, unsigned sign, unsigned magnitude,
                                                     int scale)
{
    const FloatFormat f = format_of(dt);
    const int mb = f.mantissa_bits;
    const unsigned unit = 1u << mb;
    const unsigned all_ones = (1u << f.exponent_bits) - 1u;
    const unsigned nan =
        f.infinities ? (all_ones << mb) | (unit >> 1) : (all_ones << mb) | (unit - 1u);
    const unsigned overflow = f.infinities ? sign | (all_ones << mb) : sign | nan;
    int exponent = max(find_msb(magnitude) + scale, 1 - f.bias);
    // The quantum of that binade is 2^(exponent - mb): count quanta, rounded.
    // shift >= -23 here, so the left shift stays inside the word.
    const int shift = exponent - mb - scale;
    unsigned q;
    if (shift <= 0) {
        q = magnitude << static_cast<unsigned>(-shift);  // exact
    } else if (shift >= 32) {
        q = 0u;  // below half the smallest subnormal
    } else {
        q = magnitude >> static_cast<unsigned>(shift);
        const unsigned rest = magnitude & ((1u << static_cast<unsigned>(shift)) - 1u);
        const unsigned half = 1u << static_cast<unsigned>(shift - 1);
        if (rest > half || (rest == half && (q & 1u) != 0u)) ++q;
    }
    if (q == 0u) return sign;
    if (q < unit) return sign | q;  // subnormal
    if (q == 2u * unit) {           // rounded up into the next binade
        q = unit;
        ++exponent;
    }
    const int biased = exponent + f.bias;
    const int largest = f.infinities ? static_cast<int>(all_ones) - 1 : static_cast<int>(all_ones);
    if (biased > largest) return overflow;
    const unsigned bits = (static_cast<unsigned>(biased) << mb) | (q - unit);
    if (!f.infinities && bits == nan) return overflow;  // E4M3 past 448
    return sign | bits;
}

// FP32 bits narrowed to dt (FP32: unchanged).
__device__ __forceinline__ unsigned narrow_bits(unsigned dt, unsigned x)
{
    if (dt == DT_FP32) return x;
    const FloatFormat f = format_of(dt);
    const unsigned mb = static_cast<unsigned>(f.mantissa_bits);
    const unsigned unit = 1u << mb;
    const unsigned all_ones = (1u << f.exponent_bits) - 1u;
    const unsigned sign = (x >> 31) << (static_cast<unsigned>(f.exponent_bits) + mb);
    const unsigned magnitude = x & 0x7fffffffu;
    const unsigned nan =
        f.infinities ? (all_ones << mb) | (unit >> 1) : (all_ones << mb) | (unit - 1u);
    if (magnitude > 0x7f800000u)
        return f.infinities ? sign | nan | ((magnitude >> (23u - mb)) & (unit - 1u)) : sign | nan;
    if (magnitude == 0x7f800000u) return f.infinities ? sign | (all_ones << mb) : sign | nan;
    if (magnitude == 0u) return sign;
    const unsigned exponent = magnitude >> 23;
    const unsigned mantissa = magnitude & 0x7fffffu;
    if (exponent == 0u) return encode_magnitude(dt, sign, mantissa, -149);
    return encode_magnitude(dt, sign, mantissa | 0x800000u, static_cast<int>(exponent) - 150);
}

// An integer narrowed to float dt (FP32 included), rounded once.
__device__ __forceinline__ unsigned float_bits_of_int(unsigned dt, int v)
{
    const FloatFormat f = format_of(dt);
    const unsigned sign =
        v < 0 ? 1u << static_cast<unsigned>(f.exponent_bits + f.mantissa_bits) : 0u;
    if (v == 0) return 0u;
    // INT32_MIN included.
    const unsigned magnitude =
        v < 0 ? static_cast<unsigned>(-(v + 1)) + 1u : static_cast<unsigned>(v);
    return encode_magnitude(dt, sign, magnitude, 0);
}

// A float dtype's element as FP32, and an FP32 value as its element bits.
__device__ __forceinline__ float widen(unsigned dt, unsigned bits)
{
    return __uint_as_float(widen_bits(dt, bits));
}
__device__ __forceinline__ unsigned narrow(unsigned dt, float v)
{
    return narrow_bits(dt, __float_as_uint(v));
}

// TOSA MAXIMUM / MINIMUM with NaN propagating (x + y: the hardware's NaN,
// as in the GLSL); of +0 and -0 the maximum is +0 and the minimum -0.
__device__ __forceinline__ bool negative_sign(float x) { return (__float_as_uint(x) >> 31) != 0u; }
__device__ __forceinline__ float max_of(float x, float y)
{
    if (isnan(x) || isnan(y)) return x + y;
    if (x == y) return negative_sign(x) ? y : x;
    return x > y ? x : y;
}
__device__ __forceinline__ float min_of(float x, float y)
{
    if (isnan(x) || isnan(y)) return x + y;
    if (x == y) return negative_sign(x) ? x : y;
    return x < y ? x : y;
}
// TOSA nan_mode IGNORE: a NaN operand gives way to the other; two NaNs give NaN.
__device__ __forceinline__ float max_ignoring_nan(float x, float y)
{
    return isnan(x) ? y : (isnan(y) ? x : max_of(x, y));
}
__device__ __forceinline__ float min_ignoring_nan(float x, float y)
{
    return isnan(x) ? y : (isnan(y) ? x : min_of(x, y));
}

}  // namespace vaccel_cuda
