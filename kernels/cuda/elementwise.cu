// elementwise.cu - vaccel_elementwise: every element-to-element operator
// (TOSA binary and unary arithmetic, comparisons, logic, CLAMP, SELECT, CAST
// and the strided copies IDENTITY, TRANSPOSE, REVERSE, CONCAT segments).
// Mirrors kernels/vulkan/elementwise.comp and its _narrow variant, reading
// the same spec words (backends/gpu/src/lowering.cpp, ElementSpec):
//   0 OP (lowering.hpp's ElementOp)   1..6 D0..D5, the 6-D iteration space
//   7 + 8k .. 14 + 8k  operand k (0 result, 1..3 inputs): buffer, base,
//                      6 signed strides (0 broadcasts, negative reverses)
//   39, 40 P0, P1 (CLAMP's bounds as FP32 bits)   41..44 DT0..DT3 (DT_*)
//   45 NAN_IGNORE   46 DENSE (0 general, 1 dense scalar, 4 dense quads)
//   47..66 the epilogue (epilogue.cuh): stages applied to each float
//          arithmetic or copy result before its store
// Operand k's element of coordinate c is BASE_k + sum(c[d] * STRIDE_k[d]).
// Floats are widened to FP32 on load and narrowed on store; copies and
// SELECT move element bits unchanged. DENSE 4 moves whole 16-byte quads
// when every operand it touches is 16-byte aligned (checked here: binding
// offsets may not be), else falls back to the dense scalar loop; both go
// through the same per-element functions, so results are bit-identical.
// The switch on OP picks a specialised loop, as Vulkan specialises.
#include "common.cuh"
#include "epilogue.cuh"
#include "element_ops.cuh"
#include "float_math.cuh"

namespace {

using namespace vaccel_cuda;

// Spec word positions.
enum : unsigned {
    W_OP = 0, W_DIMS = 1, W_OPERANDS = 7, W_P0 = 39, W_P1 = 40, W_DT = 41,
    W_NAN_IGNORE = 45, W_DENSE = 46, W_EPILOGUE = 47,
};
__device__ __forceinline__ unsigned buf_word(unsigned k) { return W_OPERANDS + 8u * k; }
__device__ __forceinline__ unsigned base_word(unsigned k) { return W_OPERANDS + 8u * k + 1u; }

__host__ __device__ constexpr bool has_dense(unsigned op)
{
    return op == COPY32 || op == CAST || is_binary(op) || is_unary(op);
}

// CAST's integer side: BOOL is 0 or 1, INT8 and INT16 sign-extended.
__device__ __forceinline__ int integer_of(unsigned dt, unsigned bits)
{
    if (dt == DT_BOOL) return bits != 0u ? 1 : 0;
    if (dt == DT_INT8) return static_cast<signed char>(bits & 0xffu);
    if (dt == DT_INT16) return static_cast<short>(bits & 0xffffu);
    return static_cast<int>(bits);
}
// Float to INT8/16/32: round to nearest even and saturate; NaN gives 0.
// INT32's upper limit compares against 2^31, so every value that does not
// fit saturates.
__device__ __forceinline__ unsigned integer_from_float(unsigned dt, float x)
{
    if (isnan(x)) return 0u;
    const int hi = dt == DT_INT8 ? 127 : (dt == DT_INT16 ? 32767 : 2147483647);
    const int lo = -hi - 1;
    const float top = dt == DT_INT32 ? 2147483648.0f : static_cast<float>(hi);
    if (x >= top) return static_cast<unsigned>(hi);
    if (x <= static_cast<float>(lo)) return static_cast<unsigned>(lo);
    return static_cast<unsigned>(__float2int_rn(x));
}
__device__ __forceinline__ unsigned cast_bits(unsigned dt0, unsigned dt1, unsigned bits)
{
    if (dtype_is_float(dt1)) {
        const unsigned wide = widen_bits(dt1, bits);
        if (dtype_is_float(dt0)) return narrow_bits(dt0, wide);
        if (dt0 == DT_BOOL) return (wide & 0x7fffffffu) != 0u ? 1u : 0u;
        return integer_from_float(dt0, __uint_as_float(wide));
    }
    const int v = integer_of(dt1, bits);
    if (dtype_is_float(dt0)) return float_bits_of_int(dt0, v);
    if (dt0 == DT_BOOL) return v != 0 ? 1u : 0u;
    return static_cast<unsigned>(v);  // integer to integer keeps the low bits
}

template <unsigned OP>
__device__ __forceinline__ float binary(const Dispatch& d, float a, float b)
{
    return binary_op(OP, a, b, d.spec[W_NAN_IGNORE] != 0u);
}

template <unsigned OP>
__device__ __forceinline__ float unary(const Dispatch& d, float a)
{
    return unary_op(OP, a, __uint_as_float(d.spec[W_P0]), __uint_as_float(d.spec[W_P1]),
                    d.spec[W_NAN_IGNORE] != 0u);
}

// One element of the dense path (32-bit operands), from and to element bits.
// Element i of the result (dense), its epilogue applied.
template <unsigned OP>
__device__ __forceinline__ unsigned dense_bits(const Dispatch& d, const Epilogue& e, unsigned x,
                                               unsigned y, unsigned i)
{
    const unsigned dt0 = d.spec[W_DT], dt1 = d.spec[W_DT + 1];
    unsigned r = x;
    if constexpr (OP == COPY32) r = x;
    else if constexpr (OP == CAST) return cast_bits(dt0, dt1, x);
    else if constexpr (is_binary(OP))
        r = narrow(dt0, binary<OP>(d, widen(dt1, x), widen(d.spec[W_DT + 2], y)));
    else r = narrow(dt0, unary<OP>(d, widen(dt1, x)));
    return epilogue_bits(e, dt0, i, r);
}

template <unsigned OP>
__device__ __forceinline__ void dense_run(const Dispatch& d, unsigned total)
{
    const Epilogue e = Epilogue::of(d, W_EPILOGUE);
    constexpr bool two_inputs = is_binary(OP);
    unsigned* __restrict__ out = out_words(d, buf_word(0)) + d.spec[base_word(0)];
    const unsigned* __restrict__ x = words(d, buf_word(1)) + d.spec[base_word(1)];
    const unsigned* __restrict__ y = two_inputs ? words(d, buf_word(2)) + d.spec[base_word(2)] : x;
    const unsigned stride = grid_stride();
    unsigned first = 0u;  // the scalar loop starts after the whole quads
    const unsigned long long misaligned =
        (reinterpret_cast<unsigned long long>(out) | reinterpret_cast<unsigned long long>(x) |
         reinterpret_cast<unsigned long long>(y)) & 15u;
    if (d.spec[W_DENSE] == 4u && misaligned == 0u) {
        const unsigned quads = total / 4u;
        const uint4* __restrict__ x4 = reinterpret_cast<const uint4*>(x);
        const uint4* __restrict__ y4 = reinterpret_cast<const uint4*>(y);
        uint4* __restrict__ out4 = reinterpret_cast<uint4*>(out);
        for (unsigned q = first_index(); q < quads; q += stride) {
            const uint4 a = x4[q];
            uint4 b = make_uint4(0u, 0u, 0u, 0u);
            if constexpr (two_inputs) b = y4[q];
            uint4 r;
            r.x = dense_bits<OP>(d, e, a.x, b.x, 4u * q);
            r.y = dense_bits<OP>(d, e, a.y, b.y, 4u * q + 1u);
            r.z = dense_bits<OP>(d, e, a.z, b.z, 4u * q + 2u);
            r.w = dense_bits<OP>(d, e, a.w, b.w, 4u * q + 3u);
            out4[q] = r;
        }
        first = quads * 4u;
    }
    for (unsigned i = first + first_index(); i < total; i += stride) {
        const unsigned a = x[i];
        const unsigned b = two_inputs ? y[i] : 0u;
        out[i] = dense_bits<OP>(d, e, a, b, i);
    }
}

// Operand k's element offset at coordinate c (signed strides, 32-bit wrap
// as in the GLSL's uint(int) arithmetic).
__device__ __forceinline__ unsigned offset(const Dispatch& d, unsigned k, const unsigned (&c)[6])
{
    unsigned o = d.spec[base_word(k)];
#pragma unroll
    for (unsigned j = 0; j < 6u; ++j) o += c[j] * d.spec[base_word(k) + 1u + j];
    return o;
}

__device__ __forceinline__ bool load_bool(const unsigned char* __restrict__ p, unsigned i)
{
    return p[i] != 0u;
}

template <unsigned OP>
__device__ __forceinline__ void general_run(const Dispatch& d, unsigned total)
{
    const Epilogue e = Epilogue::of(d, W_EPILOGUE);
    unsigned char* __restrict__ out = buffer(d, buf_word(0));
    const unsigned char* __restrict__ in1 = buffer(d, buf_word(1));
    const unsigned dt0 = d.spec[W_DT], dt1 = d.spec[W_DT + 1];
    const unsigned dt2 = d.spec[W_DT + 2], dt3 = d.spec[W_DT + 3];
    const unsigned d1 = d.spec[W_DIMS + 1], d2 = d.spec[W_DIMS + 2], d3 = d.spec[W_DIMS + 3];
    const unsigned d4 = d.spec[W_DIMS + 4], d5 = d.spec[W_DIMS + 5];
    const unsigned stride = grid_stride();
    for (unsigned i = first_index(); i < total; i += stride) {
        unsigned c[6];
        unsigned r = i;
        c[5] = r % d5; r /= d5;
        c[4] = r % d4; r /= d4;
        c[3] = r % d3; r /= d3;
        c[2] = r % d2; r /= d2;
        c[1] = r % d1; r /= d1;
        c[0] = r;
        const unsigned o = offset(d, 0, c);
        const unsigned a = offset(d, 1, c);
        if constexpr (OP == COPY32 || OP == COPY8 || OP == COPY16) {
            // A copy carries an epilogue only as the pass after a producer
            // whose kernel has none (lowering_epilogue.hpp): a float result.
            store_bits(out, o, dt0, epilogue_bits(e, dt0, i, load_bits(in1, a, dt1)));
        } else if constexpr (OP == CAST) {
            store_bits(out, o, dt0, cast_bits(dt0, dt1, load_bits(in1, a, dt1)));
        } else if constexpr (is_binary(OP)) {
            const unsigned char* __restrict__ in2 = buffer(d, buf_word(2));
            const float x = widen(dt1, load_bits(in1, a, dt1));
            const float y = widen(dt2, load_bits(in2, offset(d, 2, c), dt2));
            store_bits(out, o, dt0,
                       epilogue_bits(e, dt0, i, narrow(dt0, binary<OP>(d, x, y))));
        } else if constexpr (OP >= EQUAL && OP <= GREATER_EQUAL) {
            const unsigned char* __restrict__ in2 = buffer(d, buf_word(2));
            const float x = widen(dt1, load_bits(in1, a, dt1));
            const float y = widen(dt2, load_bits(in2, offset(d, 2, c), dt2));
            const bool v = OP == EQUAL ? x == y : (OP == GREATER ? x > y : x >= y);
            out[o] = v ? 1u : 0u;
        } else if constexpr (is_unary(OP)) {
            const float x = widen(dt1, load_bits(in1, a, dt1));
            store_bits(out, o, dt0,
                       epilogue_bits(e, dt0, i, narrow(dt0, unary<OP>(d, x))));
        } else if constexpr (OP == SELECT) {
            const unsigned char* __restrict__ in2 = buffer(d, buf_word(2));
            const unsigned char* __restrict__ in3 = buffer(d, buf_word(3));
            const unsigned chosen = load_bool(in1, a) ? load_bits(in2, offset(d, 2, c), dt2)
                                                      : load_bits(in3, offset(d, 3, c), dt3);
            store_bits(out, o, dt0, chosen);
        } else if constexpr (OP == LOGICAL_NOT) {
            out[o] = load_bool(in1, a) ? 0u : 1u;
        } else {
            const unsigned char* __restrict__ in2 = buffer(d, buf_word(2));
            const bool x = load_bool(in1, a), y = load_bool(in2, offset(d, 2, c));
            const bool v = OP == LOGICAL_AND ? (x && y) : (OP == LOGICAL_OR ? (x || y) : (x != y));
            out[o] = v ? 1u : 0u;
        }
    }
}

template <unsigned OP>
__device__ __forceinline__ void run(const Dispatch& d)
{
    const unsigned total = d.spec[W_DIMS] * d.spec[W_DIMS + 1] * d.spec[W_DIMS + 2] *
                           d.spec[W_DIMS + 3] * d.spec[W_DIMS + 4] * d.spec[W_DIMS + 5];
    if constexpr (has_dense(OP)) {
        if (d.spec[W_DENSE] != 0u) {
            dense_run<OP>(d, total);
            return;
        }
    }
    general_run<OP>(d, total);
}

}  // namespace

#define VACCEL_ELEMENT_CASE(op)                                                     \
    case op: run<op>(d); break;

VACCEL_KERNEL(vaccel_elementwise)
{
    switch (d.spec[W_OP]) {
        VACCEL_ELEMENT_CASE(COPY32) VACCEL_ELEMENT_CASE(COPY8) VACCEL_ELEMENT_CASE(COPY16)
        VACCEL_ELEMENT_CASE(CAST)
        VACCEL_ELEMENT_CASE(ADD) VACCEL_ELEMENT_CASE(SUB) VACCEL_ELEMENT_CASE(MUL)
        VACCEL_ELEMENT_CASE(MAXIMUM) VACCEL_ELEMENT_CASE(MINIMUM) VACCEL_ELEMENT_CASE(POW)
        VACCEL_ELEMENT_CASE(EQUAL) VACCEL_ELEMENT_CASE(GREATER)
        VACCEL_ELEMENT_CASE(GREATER_EQUAL)
        VACCEL_ELEMENT_CASE(ABS) VACCEL_ELEMENT_CASE(NEGATE) VACCEL_ELEMENT_CASE(EXP)
        VACCEL_ELEMENT_CASE(LOG) VACCEL_ELEMENT_CASE(RECIPROCAL) VACCEL_ELEMENT_CASE(RSQRT)
        VACCEL_ELEMENT_CASE(CEIL) VACCEL_ELEMENT_CASE(FLOOR) VACCEL_ELEMENT_CASE(SIN)
        VACCEL_ELEMENT_CASE(COS) VACCEL_ELEMENT_CASE(SIGMOID) VACCEL_ELEMENT_CASE(TANH)
        VACCEL_ELEMENT_CASE(ERF) VACCEL_ELEMENT_CASE(CLAMP) VACCEL_ELEMENT_CASE(SELECT)
        VACCEL_ELEMENT_CASE(LOGICAL_AND) VACCEL_ELEMENT_CASE(LOGICAL_OR)
        VACCEL_ELEMENT_CASE(LOGICAL_XOR) VACCEL_ELEMENT_CASE(LOGICAL_NOT)
    default: break;
    }
}
