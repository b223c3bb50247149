// float_math.glsl - float functions whose GLSL builtins are not accurate
// enough to agree with the CPU device (docs/adr/0013-vulkan-backend.md).
//
// Vulkan only promises sin and cos to an absolute error of 2^-11 inside
// [-pi, pi] and nothing outside it, and leaves pow undefined for x < 0 and
// for x = 0 with y <= 0; a GPU driver is free to use its fast hardware
// approximations (the NVIDIA H200 did: sin(100) off by 7e-6). These
// versions reduce the argument by pi/2 in three parts (Cody-Waite) and
// evaluate Taylor polynomials on [-pi/4, pi/4], and give pow the C
// library's special cases. Every operation is `precise`, so the compiler
// may neither fuse nor reorder what the error analysis relies on. Emulated
// step by step in float32 against float64 sin and cos, the error stayed
// below 2.6 ULP over 150 000 arguments in [-6400, 6400].

// pi/2 = PIO2_1 + PIO2_2 + PIO2_3 to about 2^-48: PIO2_1 has 8 significant
// bits and PIO2_2 12, so k * PIO2_1 and k * PIO2_2 are exact floats for
// |k| < 2^12, i.e. |x| up to REDUCE_LIMIT.
const float PIO2_1 = 1.5703125;
const float PIO2_2 = 4.837512969970703e-4;
const float PIO2_3 = 7.549790126404332e-8;
const float TWO_OVER_PI = 0.6366197466850281;
const float REDUCE_LIMIT = 6433.0;
#define INFINITY uintBitsToFloat(0x7f800000u)

// sin r and cos r for |r| <= pi/4 (a little more after rounding k): the
// Taylor series to r^9 and r^10, whose first omitted terms are below
// 2e-9 and 1e-10 there, far under float's half ULP.
float sin_kernel(float r)
{
    precise float z = r * r;
    precise float p = 1.0 / 362880.0;
    p = p * z - 1.0 / 5040.0;
    p = p * z + 1.0 / 120.0;
    p = p * z - 1.0 / 6.0;
    return r + r * z * p;
}
float cos_kernel(float r)
{
    precise float z = r * r;
    precise float p = -1.0 / 3628800.0;
    p = p * z + 1.0 / 40320.0;
    p = p * z - 1.0 / 720.0;
    p = p * z + 1.0 / 24.0;
    return 1.0 - 0.5 * z + z * z * p;
}

// sin x (cosine: quadrant_shift 1). NaN and infinities give NaN; past
// REDUCE_LIMIT the reduction is no longer exact and the builtin is used.
float sin_shifted(float x, uint quadrant_shift)
{
    if (isnan(x)) return x;
    if (isinf(x)) return uintBitsToFloat(0x7fc00000u);  // NaN
    if (abs(x) > REDUCE_LIMIT) return quadrant_shift == 0u ? sin(x) : cos(x);
    precise float k = roundEven(x * TWO_OVER_PI);
    precise float r = x - k * PIO2_1;
    r = r - k * PIO2_2;
    r = r - k * PIO2_3;
    const uint quadrant = (uint(int(k)) + quadrant_shift) & 3u;
    const float v = (quadrant & 1u) == 0u ? sin_kernel(r) : cos_kernel(r);
    return (quadrant & 2u) == 0u ? v : -v;
}
float precise_sin(float x) { return sin_shifted(x, 0u); }
float precise_cos(float x) { return sin_shifted(x, 1u); }

// An integral float's parity (|y| < 2^24: beyond, every float is even).
bool is_integral(float y) { return floor(y) == y; }
bool is_odd_integral(float y) { return is_integral(y) && abs(y) < 16777216.0 && (int(y) & 1) != 0; }

// pow with C's special cases (powf): pow(x, +-0) = 1 and pow(1, y) = 1
// even for NaN; a negative x takes an integral y only (sign from its
// parity), else NaN; zeros and infinities of x give zeros and infinities
// with the sign rule; |x| = 1 with an infinite y gives 1. The rest is the
// builtin on |x|.
float c_pow(float x, float y)
{
    if (y == 0.0 || x == 1.0) return 1.0;
    if (isnan(x) || isnan(y)) return x + y;
    const bool negate = x < 0.0 || (x == 0.0 && (floatBitsToUint(x) >> 31) != 0u);
    const bool odd = is_odd_integral(y);
    if (x < 0.0 && !isinf(x) && !is_integral(y)) return uintBitsToFloat(0x7fc00000u);  // NaN
    const float ax = abs(x);
    float r;
    if (isinf(y)) {
        if (ax == 1.0) return 1.0;
        return (ax < 1.0) == (y < 0.0) ? INFINITY : 0.0;
    }
    if (ax == 0.0) r = y < 0.0 ? INFINITY : 0.0;
    else if (isinf(ax)) r = y < 0.0 ? 0.0 : ax;
    else r = pow(ax, y);
    return negate && odd ? -r : r;
}
