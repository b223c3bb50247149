// lowering_storage.cpp - dtype storage and the dtype rules of the GPU
// kernels (lowering_storage.hpp).
#include "vaccel/gpu/lowering_storage.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace vaccel::backend::gpu {

using tosa::DType;

std::optional<std::uint32_t> kernel_dtype(DType dtype)
{
    // The numbers of common.glsl's DT_* constants.
    switch (dtype) {
    case DType::fp32: return 0;
    case DType::int32: return 1;
    case DType::boolean: return 2;
    case DType::fp16: return 3;
    case DType::bf16: return 4;
    case DType::fp8e4m3: return 5;
    case DType::fp8e5m2: return 6;
    case DType::int8: return 7;
    case DType::int16: return 8;
    default: return std::nullopt;
    }
}

std::uint32_t element_bytes(DType dtype)
{
    switch (dtype) {
    case DType::fp16:
    case DType::bf16:
    case DType::int16: return 2;
    case DType::boolean:
    case DType::int8:
    case DType::fp8e4m3:
    case DType::fp8e5m2: return 1;
    default: return 4;
    }
}

bool needs_narrow_storage(DType dtype) { return dtype != DType::boolean && element_bytes(dtype) < 4; }

bool arithmetic_dtype(DType dtype)
{
    return dtype == DType::fp32 || dtype == DType::fp16 || dtype == DType::bf16;
}

bool pool_dtype(DType dtype)
{
    return arithmetic_dtype(dtype) || dtype == DType::fp8e4m3 || dtype == DType::fp8e5m2;
}

bool copy_dtype(DType dtype)
{
    return pool_dtype(dtype) || dtype == DType::int32 || dtype == DType::boolean;
}

namespace {

bool is_integer(DType d) { return d == DType::int8 || d == DType::int16 || d == DType::int32; }
bool is_fp8(DType d) { return d == DType::fp8e4m3 || d == DType::fp8e5m2; }
bool is_wide_float(DType d) { return arithmetic_dtype(d); }  // FP32, FP16, BF16

}  // namespace

bool cast_pair(DType from, DType to)
{
    if (from == to) return false;
    // The CPU's CAST rows (backends/cpu/src/admission.cpp): BOOL and the
    // integers among themselves, integers and FP32/FP16/BF16 both ways, FP32
    // and FP16/BF16 both ways, FP8 and FP32/FP16/BF16 both ways.
    const bool from_int = is_integer(from) || from == DType::boolean;
    const bool to_int = is_integer(to) || to == DType::boolean;
    if (from_int && to_int) return true;
    if ((is_integer(from) && is_wide_float(to)) || (is_wide_float(from) && is_integer(to)))
        return true;
    if ((from == DType::fp32 && (to == DType::fp16 || to == DType::bf16)) ||
        (to == DType::fp32 && (from == DType::fp16 || from == DType::bf16)))
        return true;
    return (is_fp8(from) && is_wide_float(to)) || (is_wide_float(from) && is_fp8(to));
}

std::optional<float> attribute_float(DType dtype, const std::vector<std::uint8_t>& bytes)
{
    if (bytes.size() != element_bytes(dtype) || !pool_dtype(dtype)) return std::nullopt;
    std::uint32_t bits = 0;
    std::memcpy(&bits, bytes.data(), bytes.size());  // little-endian, as TOSA stores them
    if (dtype == DType::fp32) return std::bit_cast<float>(bits);
    if (dtype == DType::bf16) return std::bit_cast<float>(bits << 16);
    // FP16 and FP8: sign, exponent, mantissa (common.glsl's widen_bits).
    const int mantissa_bits = dtype == DType::fp16 ? 10 : (dtype == DType::fp8e4m3 ? 3 : 2);
    const int exponent_bits = dtype == DType::fp8e4m3 ? 4 : 5;
    const int bias = dtype == DType::fp8e4m3 ? 7 : 15;
    const bool infinities = dtype != DType::fp8e4m3;
    const std::uint32_t all_ones = (1u << exponent_bits) - 1;
    const bool negative = ((bits >> (exponent_bits + mantissa_bits)) & 1u) != 0;
    const std::uint32_t exponent = (bits >> mantissa_bits) & all_ones;
    const std::uint32_t mantissa = bits & ((1u << mantissa_bits) - 1);
    float magnitude = 0;
    if (exponent == all_ones && (infinities || mantissa == (1u << mantissa_bits) - 1))
        magnitude = mantissa == 0 && infinities ? INFINITY : NAN;
    else if (exponent == 0)
        magnitude = std::ldexp(static_cast<float>(mantissa), 1 - bias - mantissa_bits);
    else
        magnitude = std::ldexp(static_cast<float>(mantissa | 1u << mantissa_bits),
                               static_cast<int>(exponent) - bias - mantissa_bits);
    return negative ? -magnitude : magnitude;
}

namespace {

// The dtypes each operator takes as an operand or result on a device with
// narrow storage (the rules in lowering_storage.hpp), ascending.
std::vector<DType> operator_dtypes(tosa::Op op)
{
    using tosa::Op;
    std::vector<DType> d;
    const auto floats = {DType::fp32, DType::fp16, DType::bf16};
    const auto fp8 = {DType::fp8e4m3, DType::fp8e5m2};
    switch (op) {
    case Op::logical_and:
    case Op::logical_or:
    case Op::logical_xor:
    case Op::logical_not: d = {DType::boolean}; break;
    case Op::equal:
    case Op::greater:
    case Op::greater_equal:
    case Op::select: d = {DType::boolean}; d.insert(d.end(), floats); break;
    case Op::matmul: d = {DType::fp32}; break;
    case Op::argmax:
    case Op::max_pool2d:
        d = floats;
        d.insert(d.end(), fp8);
        if (op == Op::argmax) d.push_back(DType::int32);
        break;
    case Op::identity:
    case Op::reshape:
    case Op::transpose:
    case Op::reverse:
    case Op::concat:
        d = floats;
        d.insert(d.end(), fp8);
        d.push_back(DType::int32);
        d.push_back(DType::boolean);
        if (op == Op::reshape) d.push_back(DType::shape);
        break;
    case Op::const_:
    case Op::cast:
        d = {DType::boolean, DType::int8, DType::int16, DType::int32};
        d.insert(d.end(), floats);
        d.insert(d.end(), fp8);
        break;
    case Op::const_shape: d = {DType::shape}; break;
    default:  // arithmetic, CLAMP, REDUCE_*; MUL's shift is an INT8 constant
        d = floats;
        if (op == Op::mul) d.push_back(DType::int8);
        break;
    }
    std::ranges::sort(d);
    return d;
}

}  // namespace

tosa::CapabilityDescriptor with_storage(tosa::CapabilityDescriptor fp32, StorageFeatures features)
{
    if (!features.narrow()) return fp32;
    const std::uint8_t all = tosa::role_bit(tosa::Role::input) | tosa::role_bit(tosa::Role::output) |
                             tosa::role_bit(tosa::Role::constant) |
                             tosa::role_bit(tosa::Role::intermediate);
    // INT8 was a parameter only (MUL's shift) and FP16 MATMUL's alone; CAST
    // and the narrow kernels make them tensor dtypes of every operator.
    const auto narrow = {DType::int8, DType::int16, DType::fp16, DType::bf16, DType::fp8e4m3,
                         DType::fp8e5m2};
    std::erase_if(fp32.dtypes, [&](const tosa::DTypeCapability& c) {
        return std::ranges::find(narrow, c.dtype) != narrow.end();
    });
    for (DType d : narrow) fp32.dtypes.push_back({d, all, false});
    std::ranges::sort(fp32.dtypes, {}, &tosa::DTypeCapability::dtype);
    fp32.operators.push_back({tosa::Op::cast, 0, {}});
    std::ranges::sort(fp32.operators, {}, &tosa::OperatorCapability::op);
    // Each operator states its dtypes, so the descriptor says which
    // operators run the narrow ones (admission itself reads only the roles).
    // The spatial operators list theirs (add_narrow_spatial_dtypes()).
    for (tosa::OperatorCapability& c : fp32.operators)
        if (c.dtypes.empty()) c.dtypes = operator_dtypes(c.op);
    // As the CPU derives its target (ADR 0014): the integer-only CASTs (BOOL
    // and the integers among themselves) are of PRO_INT; BF16, FP8 and INT16
    // need their extensions.
    fp32.target.profiles |= VACCEL_TOSA_PRO_INT;
    fp32.target.extensions |= VACCEL_TOSA_EXT_BF16 | VACCEL_TOSA_EXT_FP8E4M3 |
                              VACCEL_TOSA_EXT_FP8E5M2 | VACCEL_TOSA_EXT_INT16;
    return fp32;
}

}  // namespace vaccel::backend::gpu
