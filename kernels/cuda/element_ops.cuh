// element_ops.cuh - the float arithmetic of the elementwise operators, by
// operation code, for the elementwise kernel and every epilogue
// (epilogue.cuh). Mirrors kernels/vulkan/element_ops.glsl.
#pragma once

#include "common.cuh"
#include "float_math.cuh"

namespace vaccel_cuda {

// Operation codes: ElementOp in backends/gpu/include/vaccel/gpu/lowering.hpp.
enum : unsigned {
    COPY32 = 0, COPY8 = 1,
    ADD = 2, SUB = 3, MUL = 4, MAXIMUM = 5, MINIMUM = 6, POW = 7,
    EQUAL = 8, GREATER = 9, GREATER_EQUAL = 10,
    ABS = 11, NEGATE = 12, EXP = 13, LOG = 14, RECIPROCAL = 15, RSQRT = 16,
    CEIL = 17, FLOOR = 18, SIN = 19, COS = 20, SIGMOID = 21, TANH = 22, ERF = 23,
    CLAMP = 24, SELECT = 25,
    LOGICAL_AND = 26, LOGICAL_OR = 27, LOGICAL_XOR = 28, LOGICAL_NOT = 29,
    COPY16 = 30, CAST = 31,
};

__host__ __device__ constexpr bool is_binary(unsigned op) { return op >= ADD && op <= POW; }
__host__ __device__ constexpr bool is_unary(unsigned op) { return op >= ABS && op <= CLAMP; }

// erf by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7).
__device__ __forceinline__ float erf_approx(float x)
{
    const float t = 1.0f / (1.0f + 0.3275911f * fabsf(x));
    const float y = 1.0f - (((((1.061405429f * t - 1.453152027f) * t) + 1.421413741f) * t -
                             0.284496736f) * t + 0.254829592f) * t * expf(-x * x);
    const float sign = x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
    return sign * y;
}

// ADD..POW; MAXIMUM and MINIMUM with nan_mode IGNORE or PROPAGATE.
__device__ __forceinline__ float binary_op(unsigned op, float a, float b, bool ignore_nan)
{
    switch (op) {
    case ADD: return a + b;
    case SUB: return a - b;
    case MUL: return a * b;
    case MAXIMUM: return ignore_nan ? max_ignoring_nan(a, b) : max_of(a, b);
    case MINIMUM: return ignore_nan ? min_ignoring_nan(a, b) : min_of(a, b);
    default: return c_pow(a, b);
    }
}

// ABS..CLAMP; CLAMP's bounds lo and hi.
__device__ __forceinline__ float unary_op(unsigned op, float a, float lo, float hi,
                                          bool ignore_nan)
{
    switch (op) {
    case ABS: return fabsf(a);
    case NEGATE: return -a;
    case EXP: return expf(a);
    case LOG: return logf(a);
    case RECIPROCAL: return 1.0f / a;
    case RSQRT: return 1.0f / sqrtf(a);  // both correctly rounded
    case CEIL: return ceilf(a);
    case FLOOR: return floorf(a);
    case SIN: return precise_sin(a);
    case COS: return precise_cos(a);
    case SIGMOID: return 1.0f / (1.0f + expf(-a));
    case TANH: return tanhf(a);
    case ERF: return erf_approx(a);
    default: {
        // CLAMP: NaN propagates, or with nan_mode IGNORE becomes the lower
        // bound; a value equal to a bound (+0 and -0) stays.
        if (isnan(a)) return ignore_nan ? lo : a;
        const float v = a < lo ? lo : a;
        return hi < v ? hi : v;
    }
    }
}

}  // namespace vaccel_cuda
