// element_ops.glsl - the float arithmetic of the elementwise operators, by
// operation code, for elementwise.comp and every epilogue (epilogue.glsl).
// Mirrors kernels/cuda/element_ops.cuh. Called with specialization
// constants, so each pipeline keeps only its own operation.

// Operation codes: the C++ lowering (backends/gpu/include/vaccel/gpu/lowering.hpp) uses the same numbers.
const uint COPY32 = 0, COPY8 = 1;
const uint ADD = 2, SUB = 3, MUL = 4, MAXIMUM = 5, MINIMUM = 6, POW = 7;
const uint EQUAL = 8, GREATER = 9, GREATER_EQUAL = 10;
const uint ABS = 11, NEGATE = 12, EXP = 13, LOG = 14, RECIPROCAL = 15, RSQRT = 16;
const uint CEIL = 17, FLOOR = 18, SIN = 19, COS = 20, SIGMOID = 21, TANH = 22, ERF = 23;
const uint CLAMP = 24, SELECT = 25;
const uint LOGICAL_AND = 26, LOGICAL_OR = 27, LOGICAL_XOR = 28, LOGICAL_NOT = 29;
const uint COPY16 = 30, CAST = 31;

// erf by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7).
float erf_approx(float x)
{
    float t = 1.0 / (1.0 + 0.3275911 * abs(x));
    float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t +
                     0.254829592) * t * exp(-x * x);
    return sign(x) * y;
}

// ADD..POW; MAXIMUM and MINIMUM with nan_mode IGNORE or PROPAGATE (GLSL's
// max/min leave NaN undefined).
float binary_op(uint op, float a, float b, bool ignore_nan)
{
    if (op == ADD) return a + b;
    if (op == SUB) return a - b;
    if (op == MUL) return a * b;
    if (op == MAXIMUM) return ignore_nan ? max_ignoring_nan(a, b) : max_of(a, b);
    if (op == MINIMUM) return ignore_nan ? min_ignoring_nan(a, b) : min_of(a, b);
    return c_pow(a, b);
}

// ABS..CLAMP; CLAMP's bounds lo and hi.
float unary_op(uint op, float a, float lo, float hi, bool ignore_nan)
{
    if (op == ABS) return abs(a);
    if (op == NEGATE) return -a;
    if (op == EXP) return exp(a);
    if (op == LOG) return log(a);
    if (op == RECIPROCAL) return 1.0 / a;
    if (op == RSQRT) return inversesqrt(a);
    if (op == CEIL) return ceil(a);
    if (op == FLOOR) return floor(a);
    if (op == SIN) return precise_sin(a);
    if (op == COS) return precise_cos(a);
    if (op == SIGMOID) return 1.0 / (1.0 + exp(-a));
    if (op == TANH) return tanh(a);
    if (op == ERF) return erf_approx(a);
    // CLAMP: NaN propagates, or with nan_mode IGNORE becomes the lower
    // bound; a value equal to a bound (+0 and -0) stays.
    if (isnan(a)) return ignore_nan ? lo : a;
    float v = a < lo ? lo : a;
    return hi < v ? hi : v;
}
