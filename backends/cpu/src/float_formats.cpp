// float_formats.cpp - widening and narrowing FP16, BF16, FP8E4M3 and FP8E5M2.
//
// One description per encoding (Format) and one encoder and decoder for all
// of them. Narrowing scales the exact magnitude so that one unit is the
// target's quantum in its binade and rounds that to an integer with
// nearbyint (the default rounding mode, ties to even, which the backend
// never changes): a single rounding, so results are correctly rounded from
// FP32 and from any integer (a double holds every INT32 exactly). The bulk
// paths that steps run use bit-level FP16 and BF16 conversions and decoded
// FP8 tables instead; they give the generic results bit for bit (tested).
#include "float_formats.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include "kernels_data.hpp"

namespace vaccel::backend::cpu {

using tosa::DType;

namespace {

struct Format {
    int exponent_bits;
    int mantissa_bits;
    int bias;
    bool infinities;  // IEEE specials (exponent all ones); false: OCP E4M3
    int bytes;
};

constexpr Format fp16_format{5, 10, 15, true, 2};
constexpr Format bf16_format{8, 7, 127, true, 2};
constexpr Format e4m3_format{4, 3, 7, false, 1};
constexpr Format e5m2_format{5, 2, 15, true, 1};

const Format& format_of(DType dtype)
{
    switch (dtype) {
    case DType::fp16: return fp16_format;
    case DType::bf16: return bf16_format;
    case DType::fp8e4m3: return e4m3_format;
    default: return e5m2_format;
    }
}

float from_f32_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

float decode(const Format& f, std::uint32_t bits)
{
    const std::uint32_t sign = (bits >> (f.exponent_bits + f.mantissa_bits)) & 1u;
    const std::uint32_t all_ones = (1u << f.exponent_bits) - 1;
    const std::uint32_t exponent = (bits >> f.mantissa_bits) & all_ones;
    const std::uint32_t mantissa = bits & ((1u << f.mantissa_bits) - 1);
    const std::uint32_t all_mantissa = (1u << f.mantissa_bits) - 1;
    const bool special = exponent == all_ones && (f.infinities || mantissa == all_mantissa);
    if (special) {
        // Infinity, or a NaN keeping its payload in the top mantissa bits
        // (the quiet bit lands on FP32's quiet bit; E4M3's one NaN is quiet).
        const std::uint32_t payload = mantissa << (23 - f.mantissa_bits);
        return from_f32_bits(sign << 31 | 0x7F800000u | payload);
    }
    // Subnormal (exponent 0): mantissa * 2^(1 - bias - mantissa_bits);
    // normal: (2^mantissa_bits + mantissa) * 2^(exponent - bias - mantissa_bits).
    const int scale = (exponent == 0 ? 1 : static_cast<int>(exponent)) - f.bias - f.mantissa_bits;
    const std::uint32_t significand = exponent == 0 ? mantissa : mantissa | 1u << f.mantissa_bits;
    const float magnitude = std::ldexp(static_cast<float>(significand), scale);
    return sign != 0 ? -magnitude : magnitude;
}

std::uint32_t encode(const Format& f, double value)
{
    const std::uint32_t sign = std::signbit(value) ? 1u << (f.exponent_bits + f.mantissa_bits) : 0;
    const std::uint32_t all_ones = (1u << f.exponent_bits) - 1;
    const std::uint32_t unit = 1u << f.mantissa_bits;  // the implicit leading one
    // E4M3's NaN is S.1111.111; the IEEE formats get the quiet NaN.
    const std::uint32_t nan = f.infinities ? all_ones << f.mantissa_bits | unit >> 1
                                           : all_ones << f.mantissa_bits | (unit - 1);
    if (std::isnan(value)) {
        if (!f.infinities) return sign | nan;
        // Keep the payload's top bits (FP32 and double keep theirs on top).
        std::uint64_t bits = std::bit_cast<std::uint64_t>(value);
        const auto payload =
            static_cast<std::uint32_t>((bits >> (52 - f.mantissa_bits)) & (unit - 1));
        return sign | nan | payload;
    }
    const std::uint32_t overflow = f.infinities ? sign | all_ones << f.mantissa_bits : sign | nan;
    const double magnitude = std::fabs(value);
    if (std::isinf(magnitude)) return overflow;
    if (magnitude == 0.0) return sign;
    const int min_exponent = 1 - f.bias;  // of the smallest normal, unbiased
    int binade = 0;
    std::frexp(magnitude, &binade);  // magnitude in [2^(binade-1), 2^binade)
    int exponent = std::max(binade - 1, min_exponent);
    // The quantum of that binade is 2^(exponent - mantissa_bits); scaling by a
    // power of two is exact, so nearbyint rounds the exact value once.
    const double units = std::nearbyint(std::ldexp(magnitude, f.mantissa_bits - exponent));
    auto significand = static_cast<std::uint64_t>(units);
    if (significand == 0) return sign;               // below half the smallest subnormal
    if (significand < unit) return sign | static_cast<std::uint32_t>(significand);  // subnormal
    if (significand == 2ull * unit) {  // rounded up into the next binade
        significand = unit;
        ++exponent;
    }
    const auto biased = static_cast<std::uint32_t>(exponent + f.bias);
    const auto mantissa = static_cast<std::uint32_t>(significand) - unit;
    const std::uint32_t largest_biased = f.infinities ? all_ones - 1 : all_ones;
    if (biased > largest_biased) return overflow;
    const std::uint32_t bits = biased << f.mantissa_bits | mantissa;
    if (!f.infinities && bits == (nan & ~sign)) return overflow;  // E4M3 past 448
    return sign | bits;
}

std::uint32_t load_bits(const Format& f, const std::byte* in, std::uint64_t i)
{
    if (f.bytes == 1) return std::to_integer<std::uint32_t>(in[i]);
    std::uint16_t bits;
    std::memcpy(&bits, in + i * 2, 2);
    return bits;
}

void store_bits(const Format& f, std::byte* out, std::uint64_t i, std::uint32_t bits)
{
    if (f.bytes == 1) {
        out[i] = static_cast<std::byte>(bits);
        return;
    }
    const auto half = static_cast<std::uint16_t>(bits);
    std::memcpy(out + i * 2, &half, 2);
}

// BF16 from FP32: the upper half rounded to nearest even by adding just
// under half a BF16 unit plus the kept half's lowest bit; a carry into the
// exponent is the correct next binade (or infinity).
std::uint16_t bf16_of(float value)
{
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    if (std::isnan(value)) return static_cast<std::uint16_t>(bits >> 16 | 0x0040u);  // quiet
    const std::uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1u);
    return static_cast<std::uint16_t>(rounded >> 16);
}

// FP16 from its bits without the generic decoder: the exponent and mantissa
// moved to FP32's places are the value times 2^-112 (subnormals included, as
// FP32 subnormals), so one exact multiplication by 2^112 rebiases them;
// exponent 31 (infinity, NaN) maps to FP32's 255 directly. No branches.
float fp16_to_float(std::uint32_t half)
{
    const std::uint32_t sign = (half & 0x8000u) << 16;
    const std::uint32_t moved = (half & 0x7FFFu) << 13;
    const float rebiased = std::bit_cast<float>(moved) * 0x1p112f;
    const std::uint32_t magnitude =
        moved >= 0x0F800000u ? moved + 0x70000000u : std::bit_cast<std::uint32_t>(rebiased);
    return from_f32_bits(sign | magnitude);
}

// FP16 from FP32, rounded to nearest even, the generic encoder's result for
// every input (tests/cpu/test_cpu_half.cpp compares them). Normals: rebias
// and add just under half an FP16 unit plus the kept lowest bit, so the
// carry rounds ties to even. Below 2^-14: adding 0.5 makes the FP32 unit
// 2^-24, the FP16 subnormal quantum, so the FPU rounds to it (to nearest
// even, the default mode); the count of quanta above 0.5 is the encoding,
// 0x400 being the smallest normal.
std::uint16_t fp16_of(float value)
{
    std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
    bits &= 0x7FFFFFFFu;
    if (bits > 0x7F800000u)  // NaN: quiet, the payload's top bits kept
        return static_cast<std::uint16_t>(sign | 0x7E00u | ((bits >> 13) & 0x3FFu));
    if (bits >= 0x477FF000u) return sign | 0x7C00u;  // 65520 and up (infinity included)
    if (bits < 0x38800000u) {
        const float shifted = std::bit_cast<float>(bits) + 0.5f;
        const std::uint32_t quanta = std::bit_cast<std::uint32_t>(shifted) - 0x3F000000u;
        return static_cast<std::uint16_t>(sign | quanta);
    }
    const std::uint32_t odd = (bits >> 13) & 1u;
    return static_cast<std::uint16_t>(sign | ((bits + 0xC8000FFFu + odd) >> 13));
}

// The 256 values of an FP8 format, decoded once.
const float* fp8_table(DType dtype)
{
    static const auto build = [](const Format& f) {
        std::array<float, 256> table{};
        for (std::uint32_t bits = 0; bits < 256; ++bits) table[bits] = decode(f, bits);
        return table;
    };
    static const std::array<float, 256> e4m3 = build(e4m3_format);
    static const std::array<float, 256> e5m2 = build(e5m2_format);
    return dtype == DType::fp8e4m3 ? e4m3.data() : e5m2.data();
}

bool is_integer(DType dtype)
{
    return dtype == DType::int8 || dtype == DType::int16 || dtype == DType::int32;
}

std::int64_t load_integer(DType dtype, const std::byte* in, std::uint64_t i)
{
    switch (dtype) {
    case DType::int8: return static_cast<std::int8_t>(std::to_integer<std::uint8_t>(in[i]));
    case DType::int16: {
        std::int16_t v;
        std::memcpy(&v, in + i * 2, 2);
        return v;
    }
    default: {
        std::int32_t v;
        std::memcpy(&v, in + i * 4, 4);
        return v;
    }
    }
}

}  // namespace

bool is_narrow_float(DType dtype)
{
    return dtype == DType::fp16 || dtype == DType::bf16 || dtype == DType::fp8e4m3 ||
           dtype == DType::fp8e5m2;
}

bool is_float(DType dtype) { return dtype == DType::fp32 || is_narrow_float(dtype); }

float widen_bits(DType dtype, std::uint32_t bits)
{
    if (dtype == DType::bf16) return from_f32_bits((bits & 0xFFFFu) << 16);
    if (dtype == DType::fp16) return fp16_to_float(bits & 0xFFFFu);
    return fp8_table(dtype)[bits & 0xFFu];
}

std::uint32_t narrow_bits(DType dtype, double value)
{
    return encode(format_of(dtype), value);
}

void widen(DType dtype, const std::byte* in, float* out, std::uint64_t count)
{
    const Format& f = format_of(dtype);
    if (dtype == DType::bf16) {
        for (std::uint64_t i = 0; i < count; ++i)
            out[i] = from_f32_bits(load_bits(f, in, i) << 16);
        return;
    }
    if (dtype == DType::fp16) {
        for (std::uint64_t i = 0; i < count; ++i) out[i] = fp16_to_float(load_bits(f, in, i));
        return;
    }
    const float* table = fp8_table(dtype);
    for (std::uint64_t i = 0; i < count; ++i) out[i] = table[load_bits(f, in, i)];
}

void narrow(DType dtype, const float* in, std::byte* out, std::uint64_t count)
{
    const Format& f = format_of(dtype);
    if (dtype == DType::bf16) {
        for (std::uint64_t i = 0; i < count; ++i) store_bits(f, out, i, bf16_of(in[i]));
        return;
    }
    if (dtype == DType::fp16) {
        for (std::uint64_t i = 0; i < count; ++i) store_bits(f, out, i, fp16_of(in[i]));
        return;
    }
    for (std::uint64_t i = 0; i < count; ++i) store_bits(f, out, i, encode(f, in[i]));
}

float read_float(DType dtype, const std::uint8_t* bytes)
{
    if (dtype == DType::fp32) {
        float value;
        std::memcpy(&value, bytes, 4);
        return value;
    }
    const Format& f = format_of(dtype);
    const std::uint32_t bits =
        f.bytes == 1 ? bytes[0] : static_cast<std::uint32_t>(bytes[0] | bytes[1] << 8);
    return widen_bits(dtype, bits);
}

void cast_narrow(DType from, const std::byte* in, DType to, std::byte* out, std::uint64_t count)
{
    if (is_integer(from)) {  // INT8/16/32 -> FP16 or BF16: exact in double, one rounding
        const Format& f = format_of(to);
        for (std::uint64_t i = 0; i < count; ++i)
            store_bits(f, out, i, encode(f, static_cast<double>(load_integer(from, in, i))));
        return;
    }
    // Narrow to FP32 or an integer: widen exactly in chunks, then the FP32
    // CAST (which rounds to integers as docs/operators.md says).
    constexpr std::uint64_t chunk = 256;
    float wide[chunk];
    const std::uint64_t out_bytes = tosa::dtype_bytes(to);
    for (std::uint64_t done = 0; done < count; done += chunk) {
        const std::uint64_t n = std::min(chunk, count - done);
        if (from == DType::fp32) {
            std::memcpy(wide, in + done * 4, n * 4);
        } else {
            widen(from, in + done * tosa::dtype_bytes(from), wide, n);
        }
        std::byte* target = out + done * out_bytes;
        if (is_narrow_float(to)) narrow(to, wide, target, n);
        else cast(DType::fp32, reinterpret_cast<const std::byte*>(wide), to, target, n);
    }
}

}  // namespace vaccel::backend::cpu
