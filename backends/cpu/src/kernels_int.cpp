// kernels_int.cpp - integer operator kernels (see kernels_int.hpp for the numerics).
#include "kernels_int.hpp"
#include "kernel_shapes.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

#include "vaccel.h"

namespace vaccel::backend::cpu {

namespace {

using tosa::DType;

// Calls f(type tag) with the C++ type of an integer dtype (INT8, INT16, INT32).
template <class F>
decltype(auto) with_int_type(DType dtype, F&& f)
{
    switch (dtype) {
    case DType::int8: return f(std::int8_t{});
    case DType::int16: return f(std::int16_t{});
    default: return f(std::int32_t{});
    }
}

template <class T>
T load(const std::byte* base, std::int64_t index)
{
    T value;
    std::memcpy(&value, base + index * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
    return value;
}

template <class T>
void store(std::byte* base, std::int64_t index, T value)
{
    std::memcpy(base + index * static_cast<std::int64_t>(sizeof(T)), &value, sizeof(T));
}

// Two's complement wrap of a 64-bit value to T (the low bits).
template <class T>
T wrap(std::int64_t value)
{
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<std::uint64_t>(value)));
}

std::int64_t saturate(std::int64_t value, std::int64_t low, std::int64_t high)
{
    return std::clamp(value, low, high);
}


// One binary operator on T operands. Stops at the first element TOSA 1.0
// gives no result for (a zero divisor, a shift outside 0..width-1) and
// returns it as the fault.
template <class T>
IntFault binary_of(const IntegerParams& p, const std::byte* a, Shape a_shape, const std::byte* b,
                   Shape b_shape, std::byte* out, Shape out_shape)
{
    constexpr std::int64_t bits = 8 * sizeof(T);
    IntFault fault;
    const auto shift_fault = [&](std::uint64_t i, std::int64_t amount) {
        fault = {IntFault::Kind::shift_out_of_range, i, amount};
        return false;
    };
    broadcast_walk<2>({a_shape, b_shape}, out_shape, [&](std::uint64_t i, const auto& at) {
        const std::int64_t x = load<T>(a, at[0]);
        const std::int64_t y = load<T>(b, at[1]);
        const auto o = static_cast<std::int64_t>(i);
        switch (p.binary) {
        case IntBinary::mul: {
            // INT8 and INT16 products are exact in INT32; INT32 takes the
            // 64-bit product, rounded and shifted by `shift` (0..63), then
            // its low 32 bits (the result TOSA 1.0 defines for shift 0).
            // (2^62 + 2^62 exceeds int64: the rounding sum is 128-bit.)
            __int128 product = static_cast<__int128>(x) * y;
            if (sizeof(T) == 4 && p.shift > 0)
                product = (product + (__int128{1} << (p.shift - 1))) >> p.shift;
            store<std::int32_t>(out, o, wrap<std::int32_t>(static_cast<std::int64_t>(product)));
            return true;
        }
        case IntBinary::intdiv:
            if (y == 0) {
                fault = {IntFault::Kind::division_by_zero, i, 0};
                return false;
            }
            // Truncates toward zero; INT32_MIN / -1 wraps to INT32_MIN.
            store<T>(out, o, wrap<T>(x / y));
            return true;
        case IntBinary::arithmetic_right_shift: {
            if (y < 0 || y >= bits) return shift_fault(i, y);
            std::int64_t result = x >> y;
            // round: add the last bit shifted out.
            if (p.round && y > 0 && ((x >> (y - 1)) & 1) != 0) ++result;
            store<T>(out, o, static_cast<T>(result));
            return true;
        }
        case IntBinary::logical_left_shift:
            if (y < 0 || y >= bits) return shift_fault(i, y);
            store<T>(out, o, wrap<T>(static_cast<std::int64_t>(static_cast<std::uint64_t>(x) << y)));
            return true;
        case IntBinary::logical_right_shift: {
            if (y < 0 || y >= bits) return shift_fault(i, y);
            // The bit pattern of the element's own width, shifted in zeros.
            const auto pattern = static_cast<std::make_unsigned_t<T>>(static_cast<T>(x));
            store<T>(out, o, static_cast<T>(pattern >> y));
            return true;
        }
        case IntBinary::bitwise_and: store<T>(out, o, static_cast<T>(x & y)); return true;
        case IntBinary::bitwise_or: store<T>(out, o, static_cast<T>(x | y)); return true;
        case IntBinary::bitwise_xor: store<T>(out, o, static_cast<T>(x ^ y)); return true;
        }
        return true;
    });
    return fault;
}

template <class T>
T unary_of(const IntegerParams& p, T value)
{
    constexpr std::int64_t low = std::numeric_limits<T>::min();
    constexpr std::int64_t high = std::numeric_limits<T>::max();
    const std::int64_t x = value;
    switch (p.unary) {
    case IntUnary::abs: return wrap<T>(x < 0 ? -x : x);  // INT32_MIN stays INT32_MIN
    case IntUnary::negate: {
        // output_zp - (x - input_zp) in INT32, then clipped to the type:
        // INT8 and INT16 saturate, INT32_MIN wraps to itself.
        const std::int32_t acc = wrap<std::int32_t>(p.output_zp - (x - p.input_zp));
        return static_cast<T>(saturate(acc, low, high));
    }
    case IntUnary::bitwise_not: return static_cast<T>(~value);
    case IntUnary::clz:
        return static_cast<T>(std::countl_zero(static_cast<std::uint32_t>(value)));
    }
    return value;
}

// TOSA 1.0 apply_scale_32 / apply_scale_16 on exact 64-bit arithmetic.
std::int64_t scale(std::int64_t value, std::int64_t multiplier, std::int32_t shift,
                   bool double_round)
{
    std::int64_t round = std::int64_t{1} << (shift - 1);
    if (double_round && shift > 31) round += value >= 0 ? (std::int64_t{1} << 30) : -(std::int64_t{1} << 30);
    return (value * multiplier + round) >> shift;
}

}  // namespace

IntFault int_binary(const IntegerParams& params, DType dtype, const std::byte* a, Shape a_shape,
                    const std::byte* b, Shape b_shape, std::byte* out, Shape out_shape)
{
    return with_int_type(dtype, [&](auto tag) {
        return binary_of<decltype(tag)>(params, a, a_shape, b, b_shape, out, out_shape);
    });
}

void int_unary(const IntegerParams& params, DType dtype, const std::byte* in, std::byte* out,
               std::uint64_t count)
{
    with_int_type(dtype, [&](auto tag) {
        using T = decltype(tag);
        for (std::uint64_t i = 0; i < count; ++i) {
            const auto at = static_cast<std::int64_t>(i);
            store<T>(out, at, unary_of<T>(params, load<T>(in, at)));
        }
    });
}

void int_clamp(const IntegerParams& params, DType dtype, const std::byte* in, std::byte* out,
               std::uint64_t count)
{
    with_int_type(dtype, [&](auto tag) {
        using T = decltype(tag);
        for (std::uint64_t i = 0; i < count; ++i) {
            const auto at = static_cast<std::int64_t>(i);
            store<T>(out, at, static_cast<T>(saturate(load<T>(in, at), params.min, params.max)));
        }
    });
}

void rescale(const RescaleParams& p, DType from, const std::byte* in, DType to, std::byte* out,
             std::uint64_t count, std::uint64_t channels)
{
    // The output's range: unsigned 8/16 bits when output_unsigned.
    const std::int64_t bits = 8 * static_cast<std::int64_t>(tosa::dtype_bytes(to));
    const std::int64_t low = p.output_unsigned ? 0 : -(std::int64_t{1} << (bits - 1));
    const std::int64_t high = p.output_unsigned ? (std::int64_t{1} << bits) - 1
                                                : (std::int64_t{1} << (bits - 1)) - 1;
    const std::int64_t in_bits = 8 * static_cast<std::int64_t>(tosa::dtype_bytes(from));
    for (std::uint64_t i = 0; i < count; ++i) {
        const auto at = static_cast<std::int64_t>(i);
        std::int64_t value = with_int_type(from, [&](auto tag) {
            return static_cast<std::int64_t>(load<decltype(tag)>(in, at));
        });
        // input_unsigned reads the element's bits as an unsigned number.
        if (p.input_unsigned && value < 0) value += std::int64_t{1} << in_bits;
        const std::size_t c = p.multiplier.size() == 1 ? 0 : i % channels;
        const std::int64_t result =
            saturate(scale(value - p.input_zp, p.multiplier[c], p.shift[c], p.double_round) +
                         p.output_zp,
                     low, high);
        // An unsigned result above the signed maximum keeps its bits.
        with_int_type(to, [&](auto tag) {
            using T = decltype(tag);
            store<T>(out, at, wrap<T>(result));
        });
    }
}

void table(DType dtype, const std::byte* in, const std::byte* entries, std::byte* out,
           std::uint64_t count)
{
    for (std::uint64_t i = 0; i < count; ++i) {
        const auto at = static_cast<std::int64_t>(i);
        if (dtype == DType::int8) {
            store<std::int8_t>(out, at, load<std::int8_t>(entries, load<std::int8_t>(in, at) + 128));
            continue;
        }
        // INT16: entry (x + 32768) >> 7 and the next one, interpolated by the
        // low 7 bits: base * 128 + (next - base) * fraction, exact in INT32.
        const std::int32_t biased = load<std::int16_t>(in, at) + 32768;
        const std::int32_t base = load<std::int16_t>(entries, biased >> 7);
        const std::int32_t next = load<std::int16_t>(entries, (biased >> 7) + 1);
        store<std::int32_t>(out, at, base * 128 + (next - base) * (biased & 0x7f));
    }
}

void select_elements(const std::uint8_t* condition, Shape c_shape, const std::byte* a,
                     Shape a_shape, const std::byte* b, Shape b_shape, std::byte* out,
                     Shape out_shape, std::size_t element)
{
    const auto size = static_cast<std::int64_t>(element);
    broadcast_walk<3>({c_shape, a_shape, b_shape}, out_shape, [&](std::uint64_t i, const auto& at) {
        const std::byte* source = condition[at[0]] != 0 ? a + at[1] * size : b + at[2] * size;
        std::memcpy(out + static_cast<std::int64_t>(i) * size, source, element);
        return true;
    });
}

void int_reduce(Reduce op, DType dtype, const std::byte* in, Shape in_shape, std::int32_t axis,
                std::byte* out)
{
    with_int_type(dtype, [&](auto tag) {
        using T = decltype(tag);
        const AxisSplit s = split_at(in_shape, axis);
        for (std::int64_t o = 0; o < s.outer; ++o) {
            for (std::int64_t i = 0; i < s.inner; ++i) {
                const std::int64_t first = o * s.length * s.inner + i;
                // The identities TOSA 1.0 starts from: 0, the type's minimum, maximum.
                std::int64_t acc = op == Reduce::sum   ? 0
                                   : op == Reduce::max ? std::numeric_limits<T>::min()
                                                       : std::numeric_limits<T>::max();
                for (std::int64_t k = 0; k < s.length; ++k) {
                    const std::int64_t value = load<T>(in, first + k * s.inner);
                    if (op == Reduce::sum) acc = wrap<T>(acc + value);  // wraps like ADD
                    else if (op == Reduce::max) acc = std::max(acc, value);
                    else acc = std::min(acc, value);
                }
                store<T>(out, o * s.inner + i, static_cast<T>(acc));
            }
        }
    });
}

void int_argmax(DType dtype, const std::byte* in, Shape in_shape, std::int32_t axis,
                std::int32_t* out)
{
    with_int_type(dtype, [&](auto tag) {
        using T = decltype(tag);
        const AxisSplit s = split_at(in_shape, axis);
        for (std::int64_t o = 0; o < s.outer; ++o) {
            for (std::int64_t i = 0; i < s.inner; ++i) {
                const std::int64_t first = o * s.length * s.inner + i;
                std::int64_t best_index = 0;
                T best = std::numeric_limits<T>::min();
                for (std::int64_t k = 0; k < s.length; ++k) {
                    const T value = load<T>(in, first + k * s.inner);
                    if (value > best) {  // strictly: the first index of the maximum
                        best = value;
                        best_index = k;
                    }
                }
                out[o * s.inner + i] = static_cast<std::int32_t>(best_index);
            }
        }
    });
}

}  // namespace vaccel::backend::cpu
