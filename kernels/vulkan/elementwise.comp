#version 450
// elementwise.comp - every element-to-element operator: TOSA binary and
// unary arithmetic, comparisons, logic, CLAMP, SELECT and strided copies
// (IDENTITY, TRANSPOSE, REVERSE, CONCAT segments). The iteration space is a
// 6-D shape; operand k's element of coordinate c is BASE_k + sum(c[d] *
// STRIDE_k[d]) with signed strides (0 broadcasts, negative reverses).
// Each operand has a dtype (DT0..DT3, specialization constants): floats are
// widened to FP32 on load and narrowed on store (common.glsl); copies and
// SELECT move element bits unchanged; CAST converts between any two.
//
// DENSE (chosen by the lowering, backends/gpu/src/lowering.cpp) is the
// fast path for 32-bit operands that are all laid out densely in the
// result's shape: no index decoding, element i of every operand at BASE + i;
// with DENSE 4 every base is a multiple of 4 elements and whole quads move
// as uvec4 (16 bytes), the remainder one element at a time. Each element
// goes through the same functions as the general path, so results are
// bit-identical.
//
// Constants 48..67: the epilogue (epilogue.glsl), stages applied to each
// float arithmetic or copy result before its store.
#include "common.glsl"
#include "float_math.glsl"
#include "element_ops.glsl"
#define EPILOGUE_ID 48
#include "epilogue.glsl"

layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint D0 = 1;
layout(constant_id = 3) const uint D1 = 1;
layout(constant_id = 4) const uint D2 = 1;
layout(constant_id = 5) const uint D3 = 1;
layout(constant_id = 6) const uint D4 = 1;
layout(constant_id = 7) const uint D5 = 1;
// Operands: 0 = result, 1..3 = inputs; per operand buffer, base, 6 strides.
#define OPERAND(k, first)                                                    \
    layout(constant_id = first) const uint BUF##k = 0;                       \
    layout(constant_id = first + 1) const int BASE##k = 0;                   \
    layout(constant_id = first + 2) const int S##k##_0 = 0;                  \
    layout(constant_id = first + 3) const int S##k##_1 = 0;                  \
    layout(constant_id = first + 4) const int S##k##_2 = 0;                  \
    layout(constant_id = first + 5) const int S##k##_3 = 0;                  \
    layout(constant_id = first + 6) const int S##k##_4 = 0;                  \
    layout(constant_id = first + 7) const int S##k##_5 = 0;
OPERAND(0, 8)
OPERAND(1, 16)
OPERAND(2, 24)
OPERAND(3, 32)
// CLAMP's bounds as float bits.
layout(constant_id = 40) const uint P0 = 0;
layout(constant_id = 41) const uint P1 = 0;
// The operands' dtypes (common.glsl's DT_*), result first.
layout(constant_id = 42) const uint DT0 = 0;
layout(constant_id = 43) const uint DT1 = 0;
layout(constant_id = 44) const uint DT2 = 0;
layout(constant_id = 45) const uint DT3 = 0;
// TOSA nan_mode of MAXIMUM, MINIMUM and CLAMP: 0 PROPAGATE, 1 IGNORE.
layout(constant_id = 46) const uint NAN_IGNORE = 0;
// 0: the general path; 1: dense, scalar; 4: dense, quads as uvec4.
layout(constant_id = 47) const uint DENSE = 0;

layout(set = 0, binding = 0, std430) buffer Quads { uvec4 v[]; } bufs4[BUFFER_COUNT];

// CAST's integer side: BOOL is 0 or 1, INT8 and INT16 sign-extended.
int integer_of(uint dt, uint bits)
{
    if (dt == DT_BOOL) return bits != 0u ? 1 : 0;
    if (dt == DT_INT8) return bitfieldExtract(int(bits), 0, 8);
    if (dt == DT_INT16) return bitfieldExtract(int(bits), 0, 16);
    return int(bits);
}
// Float to INT8/16/32: round to nearest even and saturate; NaN gives 0
// (the CPU's CAST). INT32's upper limit compares against 2^31, so every
// value that does not fit saturates.
uint integer_from_float(uint dt, float x)
{
    if (isnan(x)) return 0u;
    int hi = dt == DT_INT8 ? 127 : (dt == DT_INT16 ? 32767 : 2147483647);
    int lo = -hi - 1;
    float top = dt == DT_INT32 ? 2147483648.0 : float(hi);
    if (x >= top) return uint(hi);
    if (x <= float(lo)) return uint(lo);
    return uint(int(roundEven(x)));
}
uint cast_bits(uint bits)
{
    if (dtype_is_float(DT1)) {
        uint wide = widen_bits(DT1, bits);
        if (dtype_is_float(DT0)) return narrow_bits(DT0, wide);
        if (DT0 == DT_BOOL) return (wide & 0x7fffffffu) != 0u ? 1u : 0u;
        return integer_from_float(DT0, uintBitsToFloat(wide));
    }
    int v = integer_of(DT1, bits);
    if (dtype_is_float(DT0)) return float_bits_of_int(DT0, v);
    if (DT0 == DT_BOOL) return v != 0 ? 1u : 0u;
    return uint(v);  // integer to integer keeps the low bits
}

#define OFFSET(k, c0, c1, c2, c3, c4, c5)                                                 \
    uint(BASE##k + int(c0) * S##k##_0 + int(c1) * S##k##_1 + int(c2) * S##k##_2 +         \
         int(c3) * S##k##_3 + int(c4) * S##k##_4 + int(c5) * S##k##_5)

float binary(float a, float b) { return binary_op(OP, a, b, NAN_IGNORE != 0u); }

float unary(float a)
{
    return unary_op(OP, a, uintBitsToFloat(P0), uintBitsToFloat(P1), NAN_IGNORE != 0u);
}

// One element of the dense path (32-bit operands only: COPY32, CAST,
// ADD..POW, ABS..CLAMP), from and to element bits.
uint dense_bits(uint x, uint y, uint i)
{
    if (OP == CAST) return cast_bits(x);
    uint r = x;  // COPY32
    if (OP >= ADD && OP <= POW) r = narrow(DT0, binary(widen(DT1, x), widen(DT2, y)));
    else if (OP != COPY32) r = narrow(DT0, unary(widen(DT1, x)));
    return epilogue_bits(DT0, i, r);
}

void dense_main()
{
    const uint total = D0 * D1 * D2 * D3 * D4 * D5;
    const bool two_inputs = OP >= ADD && OP <= POW;
    uint first = 0u;  // the scalar part starts after the whole quads
    if (DENSE == 4u) {
        const uint quads = total / 4u;
        for (uint q = gl_GlobalInvocationID.x; q < quads; q += GRID_STRIDE) {
            const uvec4 x = bufs4[BUF1].v[uint(BASE1) / 4u + q];
            uvec4 y = uvec4(0u);
            if (two_inputs) y = bufs4[BUF2].v[uint(BASE2) / 4u + q];
            uvec4 r;
            [[unroll]] for (uint j = 0u; j < 4u; ++j) r[j] = dense_bits(x[j], y[j], 4u * q + j);
            bufs4[BUF0].v[uint(BASE0) / 4u + q] = r;
        }
        first = quads * 4u;
    }
    for (uint i = first + gl_GlobalInvocationID.x; i < total; i += GRID_STRIDE) {
        const uint x = bufs[BUF1].w[uint(BASE1) + i];
        const uint y = two_inputs ? bufs[BUF2].w[uint(BASE2) + i] : 0u;
        bufs[BUF0].w[uint(BASE0) + i] = dense_bits(x, y, i);
    }
}

void main()
{
    if (DENSE != 0u) {
        dense_main();
        return;
    }
    const uint total = D0 * D1 * D2 * D3 * D4 * D5;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += GRID_STRIDE) {
        uint r = i;
        uint c5 = r % D5; r /= D5;
        uint c4 = r % D4; r /= D4;
        uint c3 = r % D3; r /= D3;
        uint c2 = r % D2; r /= D2;
        uint c1 = r % D1; r /= D1;
        uint c0 = r;
        uint o = OFFSET(0, c0, c1, c2, c3, c4, c5);
        uint a = OFFSET(1, c0, c1, c2, c3, c4, c5);
        if (OP == COPY32 || OP == COPY8 || OP == COPY16) {
            // A copy carries an epilogue only as the pass after a producer
            // whose kernel has none (lowering_epilogue.hpp): a float result.
            uint v = 0u;
            LOAD_BITS(v, BUF1, a, DT1)
            STORE_BITS(BUF0, o, DT0, epilogue_bits(DT0, i, v))
        } else if (OP == CAST) {
            uint v = 0u;
            LOAD_BITS(v, BUF1, a, DT1)
            STORE_BITS(BUF0, o, DT0, cast_bits(v))
        } else if (OP >= ADD && OP <= POW) {
            uint b = OFFSET(2, c0, c1, c2, c3, c4, c5);
            float x = 0.0, y = 0.0;
            LOAD_FLOAT(x, BUF1, a, DT1)
            LOAD_FLOAT(y, BUF2, b, DT2)
            STORE_BITS(BUF0, o, DT0, epilogue_bits(DT0, i, narrow(DT0, binary(x, y))))
        } else if (OP >= EQUAL && OP <= GREATER_EQUAL) {
            uint b = OFFSET(2, c0, c1, c2, c3, c4, c5);
            float x = 0.0, y = 0.0;
            LOAD_FLOAT(x, BUF1, a, DT1)
            LOAD_FLOAT(y, BUF2, b, DT2)
            bool v = OP == EQUAL ? x == y : (OP == GREATER ? x > y : x >= y);
            STORE_BYTE(BUF0, o, v ? 1u : 0u);
        } else if (OP >= ABS && OP <= CLAMP) {
            float x = 0.0;
            LOAD_FLOAT(x, BUF1, a, DT1)
            STORE_BITS(BUF0, o, DT0, epilogue_bits(DT0, i, narrow(DT0, unary(x))))
        } else if (OP == SELECT) {
            uint b = OFFSET(2, c0, c1, c2, c3, c4, c5);
            uint c = OFFSET(3, c0, c1, c2, c3, c4, c5);
            uint chosen = 0u;
            if (LOAD_BYTE(BUF1, a) != 0u) {
                LOAD_BITS(chosen, BUF2, b, DT2)
            } else {
                LOAD_BITS(chosen, BUF3, c, DT3)
            }
            STORE_BITS(BUF0, o, DT0, chosen)
        } else if (OP == LOGICAL_NOT) {
            STORE_BYTE(BUF0, o, LOAD_BYTE(BUF1, a) != 0u ? 0u : 1u);
        } else {
            uint b = OFFSET(2, c0, c1, c2, c3, c4, c5);
            bool x = LOAD_BYTE(BUF1, a) != 0u, y = LOAD_BYTE(BUF2, b) != 0u;
            bool v = OP == LOGICAL_AND ? (x && y) : (OP == LOGICAL_OR ? (x || y) : (x != y));
            STORE_BYTE(BUF0, o, v ? 1u : 0u);
        }
    }
}
