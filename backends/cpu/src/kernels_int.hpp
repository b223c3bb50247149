// kernels_int.hpp - the CPU backend's kernels for TOSA 1.0's integer
// elementwise operators: RESCALE, TABLE, the integer binary operators (MUL,
// INTDIV, the shifts, the bitwise operators), the integer unary operators
// (ABS, NEGATE, BITWISE_NOT, CLZ), integer CLAMP, SELECT on integers and
// BOOL, and the integer reductions (REDUCE_SUM/MAX/MIN, ARGMAX).
//
// Owns nothing: every kernel reads and writes memory its caller owns.
// Decides the integer numerics of the backend (docs/operators.md, "Integer
// operators", lists them and every REQUIRE decision):
//  - RESCALE computes value * multiplier + round in 64 bits, which cannot
//    overflow (|value| <= 2^32, multiplier < 2^31), shifts arithmetically,
//    adds the output zero point and saturates to the output's range. Where
//    TOSA 1.0's REQUIREs hold this is the specification's result exactly;
//    where they do not (a scaled value outside INT32) it is the exact value
//    saturated;
//  - TABLE follows TOSA 1.0: INT8 indexes 256 entries; INT16 interpolates
//    between entries of 513 with the low 7 bits of the input (INT32 result);
//  - INT32 arithmetic that overflows wraps in two's complement (ADD, SUB,
//    MUL, INTDIV of INT32_MIN by -1, ABS and NEGATE of INT32_MIN,
//    REDUCE_SUM): TOSA 1.0 leaves the result unpredictable (REQUIRE), and
//    this is the choice ADD and SUB already made; NEGATE on INT8 and INT16
//    saturates, as TOSA 1.0 clips it;
//  - a division by zero and a shift amount outside the type's width have no
//    result to wrap to: the kernel stops and reports the first such element
//    (IntFault), and the submission fails naming the operator.
// Shapes and attributes arrive already checked (plan.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::backend::cpu {

// Binary operators on INT8, INT16 or INT32 operands of one dtype,
// broadcast like binary(). MUL on INT8/INT16 writes INT32.
enum class IntBinary {
    mul, intdiv, arithmetic_right_shift, logical_left_shift, logical_right_shift,
    bitwise_and, bitwise_or, bitwise_xor,
};
enum class IntUnary { abs, negate, bitwise_not, clz };

// RESCALE's parameters, read from its constant operands at load.
struct RescaleParams {
    std::vector<std::int32_t> multiplier;  // one, or one per channel (the last dimension)
    std::vector<std::int32_t> shift;       // 2..62, as many as multiplier
    std::int64_t input_zp = 0;             // extended by input_unsigned
    std::int64_t output_zp = 0;            // extended by output_unsigned
    bool double_round = false;             // only with scale32 (checked at load)
    bool input_unsigned = false;
    bool output_unsigned = false;
};

// The parameters of one integer step (Step::integer).
struct IntegerParams {
    IntBinary binary = IntBinary::mul;
    IntUnary unary = IntUnary::abs;
    Reduce reduce = Reduce::sum;       // int_reduce: sum, max or min
    std::int32_t shift = 0;            // MUL INT32: 0..63
    bool round = false;                // ARITHMETIC_RIGHT_SHIFT
    std::int64_t input_zp = 0;         // NEGATE (INT8 only; 0 otherwise)
    std::int64_t output_zp = 0;
    std::int64_t min = 0, max = 0;     // CLAMP, min <= max
    RescaleParams rescale;
};

// The first element an integer kernel could not compute (see above).
struct IntFault {
    enum class Kind : std::uint8_t { none, division_by_zero, shift_out_of_range };
    Kind kind = Kind::none;
    std::uint64_t position = 0;  // flat index of the output element
    std::int64_t value = 0;      // the divisor or shift amount
};

// out = a (op) b, broadcast to out_shape; a and b of dtype `dtype` (INT8,
// INT16 or INT32); out of dtype `dtype`, or INT32 for MUL.
IntFault int_binary(const IntegerParams& params, tosa::DType dtype, const std::byte* a,
                    Shape a_shape, const std::byte* b, Shape b_shape, std::byte* out,
                    Shape out_shape);

// out[i] = op(in[i]) in the input's dtype.
void int_unary(const IntegerParams& params, tosa::DType dtype, const std::byte* in,
               std::byte* out, std::uint64_t count);

// out[i] = min(max(in[i], params.min), params.max).
void int_clamp(const IntegerParams& params, tosa::DType dtype, const std::byte* in,
               std::byte* out, std::uint64_t count);

// RESCALE from `from` (INT8, INT16, INT32) to `to`; `channels` is the size of
// the last dimension when the parameters are per channel, else 1.
void rescale(const RescaleParams& params, tosa::DType from, const std::byte* in,
             tosa::DType to, std::byte* out, std::uint64_t count, std::uint64_t channels);

// TABLE: INT8 in, 256 INT8 entries, INT8 out; or INT16 in, 513 INT16
// entries, INT32 out.
void table(tosa::DType dtype, const std::byte* in, const std::byte* entries, std::byte* out,
           std::uint64_t count);

// SELECT on any stored dtype: out = condition ? a : b, all three broadcast to
// out_shape; `element` bytes per value.
void select_elements(const std::uint8_t* condition, Shape c_shape, const std::byte* a,
                     Shape a_shape, const std::byte* b, Shape b_shape, std::byte* out,
                     Shape out_shape, std::size_t element);

// REDUCE_SUM (INT32, wrapping), REDUCE_MAX, REDUCE_MIN (INT8, INT16, INT32)
// along `axis`, which is kept as 1.
void int_reduce(Reduce op, tosa::DType dtype, const std::byte* in, Shape in_shape,
                std::int32_t axis, std::byte* out);

// ARGMAX of INT8 or INT16 along `axis`: the first index of the largest value.
void int_argmax(tosa::DType dtype, const std::byte* in, Shape in_shape, std::int32_t axis,
                std::int32_t* out);

}  // namespace vaccel::backend::cpu
