// float_math.cuh - sin, cos and pow as kernels/vulkan/float_math.glsl
// computes them, so the CUDA and Vulkan devices agree with each other and
// with the CPU device. sin and cos reduce by pi/2 in three parts
// (Cody-Waite) and evaluate Taylor polynomials on [-pi/4, pi/4]; every step
// is an explicitly rounded __fmul_rn / __fadd_rn / __fsub_rn (the GLSL's
// `precise`), so no build flag can fuse them. pow keeps C's special cases.
#pragma once

namespace vaccel_cuda {

// pi/2 = PIO2_1 + PIO2_2 + PIO2_3 to about 2^-48: k * PIO2_1 and k * PIO2_2
// are exact floats for |k| < 2^12, i.e. |x| up to REDUCE_LIMIT.
constexpr float PIO2_1 = 1.5703125f;
constexpr float PIO2_2 = 4.837512969970703e-4f;
constexpr float PIO2_3 = 7.549790126404332e-8f;
constexpr float TWO_OVER_PI = 0.6366197466850281f;
constexpr float REDUCE_LIMIT = 6433.0f;

// sin r and cos r for |r| <= pi/4 (a little more after rounding k): Taylor
// series to r^9 and r^10.
__device__ __forceinline__ float sin_kernel(float r)
{
    const float z = __fmul_rn(r, r);
    float p = 1.0f / 362880.0f;
    p = __fsub_rn(__fmul_rn(p, z), 1.0f / 5040.0f);
    p = __fadd_rn(__fmul_rn(p, z), 1.0f / 120.0f);
    p = __fsub_rn(__fmul_rn(p, z), 1.0f / 6.0f);
    return __fadd_rn(r, __fmul_rn(__fmul_rn(r, z), p));
}
__device__ __forceinline__ float cos_kernel(float r)
{
    const float z = __fmul_rn(r, r);
    float p = -1.0f / 3628800.0f;
    p = __fadd_rn(__fmul_rn(p, z), 1.0f / 40320.0f);
    p = __fsub_rn(__fmul_rn(p, z), 1.0f / 720.0f);
    p = __fadd_rn(__fmul_rn(p, z), 1.0f / 24.0f);
    return __fadd_rn(__fsub_rn(1.0f, __fmul_rn(0.5f, z)), __fmul_rn(__fmul_rn(z, z), p));
}

// sin x (cosine: quadrant_shift 1). NaN and infinities give NaN; past
// REDUCE_LIMIT the reduction is no longer exact and CUDA's sinf/cosf
// (full range reduction without fast math) take over.
__device__ __forceinline__ float sin_shifted(float x, unsigned quadrant_shift)
{
    if (isnan(x)) return x;
    if (isinf(x)) return __uint_as_float(0x7fc00000u);  // NaN
    if (fabsf(x) > REDUCE_LIMIT) return quadrant_shift == 0u ? sinf(x) : cosf(x);
    const float k = rintf(__fmul_rn(x, TWO_OVER_PI));
    float r = __fsub_rn(x, __fmul_rn(k, PIO2_1));
    r = __fsub_rn(r, __fmul_rn(k, PIO2_2));
    r = __fsub_rn(r, __fmul_rn(k, PIO2_3));
    const unsigned quadrant = (static_cast<unsigned>(static_cast<int>(k)) + quadrant_shift) & 3u;
    const float v = (quadrant & 1u) == 0u ? sin_kernel(r) : cos_kernel(r);
    return (quadrant & 2u) == 0u ? v : -v;
}
__device__ __forceinline__ float precise_sin(float x) { return sin_shifted(x, 0u); }
__device__ __forceinline__ float precise_cos(float x) { return sin_shifted(x, 1u); }

// An integral float's parity (|y| < 2^24: beyond, every float is even).
__device__ __forceinline__ bool is_integral(float y) { return floorf(y) == y; }
__device__ __forceinline__ bool is_odd_integral(float y)
{
    return is_integral(y) && fabsf(y) < 16777216.0f && (static_cast<int>(y) & 1) != 0;
}

// pow with C's special cases: pow(x, +-0) = 1 and pow(1, y) = 1 even for
// NaN; a negative x takes an integral y only (sign from its parity), else
// NaN; zeros and infinities of x give zeros and infinities with the sign
// rule; |x| = 1 with an infinite y gives 1. The rest is powf on |x|.
__device__ __forceinline__ float c_pow(float x, float y)
{
    const float infinity = __uint_as_float(0x7f800000u);
    if (y == 0.0f || x == 1.0f) return 1.0f;
    if (isnan(x) || isnan(y)) return x + y;
    const bool negate = x < 0.0f || (x == 0.0f && (__float_as_uint(x) >> 31) != 0u);
    const bool odd = is_odd_integral(y);
    if (x < 0.0f && !isinf(x) && !is_integral(y)) return __uint_as_float(0x7fc00000u);  // NaN
    const float ax = fabsf(x);
    float r;
    if (isinf(y)) {
        if (ax == 1.0f) return 1.0f;
        return (ax < 1.0f) == (y < 0.0f) ? infinity : 0.0f;
    }
    if (ax == 0.0f) r = y < 0.0f ? infinity : 0.0f;
    else if (isinf(ax)) r = y < 0.0f ? 0.0f : ax;
    else r = powf(ax, y);
    return negate && odd ? -r : r;
}

}  // namespace vaccel_cuda
