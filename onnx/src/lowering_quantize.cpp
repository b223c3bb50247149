// lowering_quantize.cpp - QuantizeLinear and DequantizeLinear (per tensor
// and per axis) and DynamicQuantizeLinear, in the carriers of ports.hpp:
// FP32 values, and the quantized INT8 / UINT8 / INT32 values as INT32.
//
// Decides:
//  - scale and zero point may be constants (as in most quantized models)
//    or computed at run time (DynamicQuantizeLinear's expansion); one
//    value, or one per index of dimension `axis`, brought to the input's
//    rank;
//  - QuantizeLinear is saturate(round(x / scale) + zero_point), rounding
//    half to even (TOSA's CAST from float to integer). TOSA 1.0 has no
//    float division, so x / scale is x * (1 / scale): 1 / scale computed
//    in float at import for a constant scale, RECIPROCAL for a computed
//    one. Equal where the scale is a power of two; else one Newton step
//    with an exact remainder (corrected_quotient) brings the quotient to
//    within a fraction of an ulp of x / scale, so it falls on the same
//    side of a half as the division does. The saturation is applied to the float before the CAST
//    (the bounds are whole numbers, so clamping before or after rounding
//    agree), so no value reaches the CAST out of range;
//  - DequantizeLinear is (x - zero_point) * scale: the subtraction in
//    INT32, exact for the 8-bit types, then one CAST and one MUL.

#include <algorithm>
#include <cmath>

#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

using tosa::DType;
using T = ::onnx::TensorProto;

// The scale (input 1) and zero point (input 2) of `node`, whose other side
// has dims `x_dims`: one value, or one per index of dimension `axis`.
Result<QuantParams> params(Lowering& l, const Node& node, const Dims& x_dims,
                           std::int32_t quantized)
{
    const std::size_t rank = x_dims.size();
    QuantParams p;
    p.quantized = quantized;
    if (p.quantized != T::UINT8 && p.quantized != T::INT8 && p.quantized != T::INT32)
        return fail(l.refuse(node, fmt::format("its quantized type is {}; vaccel imports INT8, "
                                               "UINT8 and INT32",
                                               onnx_type_name(p.quantized))));
    auto scale = l.input(node, 1);
    if (!scale) return fail(scale.error());
    if (scale->dtype != DType::fp32)
        return fail(l.refuse(node, "its scale is not FLOAT; vaccel imports FLOAT scales"));
    const std::int64_t count = elements(scale->dims);
    p.dims = Dims(rank, 1);
    if (count > 1) {  // per axis; one value broadcasts whatever its rank
        std::int64_t axis = int_attr(node, "axis", 1);
        if (axis < 0) axis += static_cast<std::int64_t>(rank);
        if (axis < 0 || axis >= static_cast<std::int64_t>(rank))
            return fail(l.refuse(node, fmt::format("axis {} is outside its input's {} dims",
                                                   int_attr(node, "axis", 1), rank)));
        if (scale->dims.size() != 1 || x_dims[axis] != count)
            return fail(l.refuse(node, fmt::format("its scale holds {} values for dimension {} "
                                                   "of {}; give one, or one per index",
                                                   count, axis, x_dims[axis])));
        p.dims[axis] = count;
    }
    p.scale = l.reshape(*scale, p.dims);
    p.scale_data = l.constant_of(node.input(1));
    if (p.scale_data != nullptr)
        for (float s : p.scale_data->floats)
            if (!(s > 0.0f) || !std::isfinite(s))
                return fail(l.refuse(node, fmt::format("its scale holds {}; a scale is a "
                                                       "positive finite number",
                                                       s)));
    if (node.input_size() > 2 && !node.input(2).empty()) {
        auto zero = l.input(node, 2);
        if (!zero) return fail(zero.error());
        if (zero->dtype != DType::int32 || elements(zero->dims) != count)
            return fail(l.refuse(node, fmt::format("its zero point is not an integer of as many "
                                                   "values as its scale ({})",
                                                   count)));
        p.zero = l.reshape(*zero, p.dims);
    }
    return p;
}

// x / s from q = x * (1 / s), which can fall on the other side of a half
// than the division: one Newton step, q + (x - q * s) / s, with q * s
// taken exactly as p + e (Dekker's product of Veltkamp-split halves; the
// arithmetic is FP32 MULs and ADDs, none contracted), so the remainder is
// exact and the corrected quotient within a fraction of an ulp of x / s.
// q is first held within a step of [low, high], so nothing overflows.
Value corrected_quotient(Lowering& l, Value x, Value q, const QuantParams& p, Value inverse,
                         Value low, Value high, const Dims& dims)
{
    const std::size_t rank = dims.size();
    Value one = l.scalar_like(1.0f, rank);
    q = l.binary(Op::minimum, l.binary(Op::maximum, q, l.binary(Op::sub, low, one, p.dims), dims),
                 l.binary(Op::add, high, one, p.dims), dims);
    Value splitter = l.scalar_like(4097.0f, rank);  // 2^12 + 1: halves of 12 bits
    auto split = [&](Value a, const Dims& d) {
        Value c = l.mul(a, splitter, d);
        Value hi = l.binary(Op::sub, c, l.binary(Op::sub, c, a, d), d);
        return std::pair{hi, l.binary(Op::sub, a, hi, d)};
    };
    const auto [qh, ql] = split(q, dims);
    const auto [sh, sl] = split(p.scale, p.dims);
    Value product = l.mul(q, p.scale, dims);
    Value e = l.binary(Op::sub, l.mul(qh, sh, dims), product, dims);
    e = l.binary(Op::add, e, l.mul(qh, sl, dims), dims);
    e = l.binary(Op::add, e, l.mul(ql, sh, dims), dims);
    e = l.binary(Op::add, e, l.mul(ql, sl, dims), dims);
    Value remainder = l.binary(Op::sub, l.binary(Op::sub, x, product, dims), e, dims);
    return l.binary(Op::add, q, l.mul(remainder, inverse, dims), dims);
}

}  // namespace

Value quantize(Lowering& l, Value x, const QuantParams& p, Value inverse)
{
    const auto [lo, hi] = *int32_range(p.quantized);  // params() admits INT8, UINT8, INT32
    const Dims dims = x.dims;
    const std::size_t rank = dims.size();
    l.set_element_type(DType::fp32);  // the arithmetic before the CAST
    // round(x / s) + z within [lo, hi]  <=>  x / s within [lo - z, hi - z]
    Value low = l.scalar_like(static_cast<float>(lo), rank);
    Value high = l.scalar_like(static_cast<float>(hi), rank);
    if (p.zero) {
        Value z = l.apply(Op::cast, {*p.zero}, p.dims, DType::fp32);
        low = l.binary(Op::sub, low, z, p.dims);
        high = l.binary(Op::sub, high, z, p.dims);
    }
    Value scaled = l.mul(x, inverse, dims);
    const bool power_of_two = p.scale_data != nullptr &&
                              std::all_of(p.scale_data->floats.begin(), p.scale_data->floats.end(),
                                          [](float s) { int e; return std::frexp(s, &e) == 0.5f; });
    if (!power_of_two) scaled = corrected_quotient(l, x, scaled, p, inverse, low, high, dims);
    Value bounded = l.binary(Op::minimum, l.binary(Op::maximum, scaled, low, dims), high, dims);
    Value y = l.apply(Op::cast, {bounded}, dims, DType::int32);
    if (p.zero) y = l.apply(Op::add, {y, *p.zero}, dims, DType::int32);
    return y;
}

namespace {

Status lower_quantize(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    if (x->dtype != DType::fp32)
        return fail(l.refuse(node, "its input is not FLOAT; vaccel quantizes FLOAT values"));
    const auto out = l.model().type_of(node.output(0));
    auto p = params(l, node, x->dims, out ? out->elem : T::UINT8);
    if (!p) return fail(p.error());
    l.set_element_type(DType::fp32);
    Value inverse = l.unary(Op::reciprocal, p->scale, p->dims);
    if (p->scale_data != nullptr) {
        std::vector<float> values;
        for (float s : p->scale_data->floats) values.push_back(1.0f / s);
        inverse = l.constant(p->dims, std::move(values));
    }
    return l.bind(node, 0, quantize(l, *x, *p, inverse));
}

// DynamicQuantizeLinear: UINT8 by the range of x widened to hold 0:
// scale = (max(x, 0) - min(x, 0)) / 255, zero point = saturate(round(
// -min / scale)), then quantize as QuantizeLinear does. Each division is
// the corrected quotient, so ties round as ONNX's reference does. A scale
// of 0 (every x 0) gives zero point 0 and y 0.
Status lower_dynamic_quantize(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    if (x->dtype != DType::fp32)
        return fail(l.refuse(node, "its input is not FLOAT; vaccel quantizes FLOAT values"));
    for (int o = 1; o < 3; ++o)
        if (node.output_size() <= o || node.output(o).empty())
            return fail(l.refuse(node, fmt::format("its output {} is missing", o)));
    l.set_element_type(DType::fp32);
    const std::size_t rank = x->dims.size();
    const Dims one(rank, 1);
    auto reduced = [&](Op op) {
        Value v = l.reshape(*x, {elements(x->dims)});
        Value r = l.tensor({1});
        auto attr = tosa::axis_attr(0);
        attr.nan_mode = nan_propagate;
        l.builder().op(op, {v.tensor}, {r.tensor}, attr);
        return l.reshape(r, one);
    };
    Value zero = l.constant(one, {0.0f});
    Value top = l.binary(Op::maximum, reduced(Op::reduce_max), zero, one);
    Value bottom = l.binary(Op::minimum, reduced(Op::reduce_min), zero, one);
    Value range = l.binary(Op::sub, top, bottom, one);
    // range / 255 and -bottom / scale, each corrected (corrected_quotient).
    auto divided = [&](Value numerator, Value divisor, Value inverse, float upper) {
        QuantParams by{one, divisor, nullptr, std::nullopt, T::UINT8};
        Value q = l.mul(numerator, inverse, one);
        return corrected_quotient(l, numerator, q, by, inverse, zero, l.constant(one, {upper}), one);
    };
    Value scale = divided(range, l.constant(one, {255.0f}), l.constant(one, {1.0f / 255.0f}), 3.0e38f);
    // Where the scale is 0, 1 / scale is inf: the quotients are taken by a
    // scale of 1 instead, which leaves zero point and y at 0.
    Value empty = l.apply(Op::equal, {scale, zero}, one, DType::boolean);
    Value divisor = l.apply(Op::select, {empty, l.constant(one, {1.0f}), scale}, one, DType::fp32);
    Value inverse = l.unary(Op::reciprocal, divisor, one);
    Value point = divided(l.unary(Op::negate, bottom, one), divisor, inverse, 255.0f);
    point = l.binary(Op::minimum, l.binary(Op::maximum, point, zero, one), l.constant(one, {255.0f}), one);
    Value zero_point = l.apply(Op::cast, {point}, one, DType::int32);
    QuantParams p{one, divisor, nullptr, zero_point, T::UINT8};
    Value y = quantize(l, *x, p, inverse);
    auto scalar_dims = [&](int o) { return l.output_dims(node, o); };
    for (int o = 1; o < 3; ++o) {
        auto dims = scalar_dims(o);
        if (!dims) return fail(dims.error());
        if (elements(*dims) != 1) return fail(l.refuse(node, fmt::format("its output {} is not one value", o)));
        Value stat = l.reshape(o == 1 ? scale : zero_point, *dims);
        if (stat.tensor == (o == 1 ? scale : zero_point).tensor) stat = l.unary(Op::identity, stat, *dims);
        if (auto bound = l.bind(node, o, stat); !bound) return bound;
    }
    return l.bind(node, 0, y);
}

Status lower_dequantize(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    if (x->dtype != DType::int32) return fail(l.refuse(node, "its input is not an integer"));
    const auto in = l.model().type_of(node.input(0));
    auto p = params(l, node, x->dims, in ? in->elem : T::UINT8);
    if (!p) return fail(p.error());
    const Dims& dims = x->dims;
    Value centred = p->zero ? l.apply(Op::sub, {*x, *p->zero}, dims, DType::int32) : *x;
    Value widened = l.apply(Op::cast, {centred}, dims, DType::fp32);
    return l.bind(node, 0, l.mul(widened, p->scale, dims));
}

}  // namespace

void add_quantize(Table& table)
{
    table.emplace("QuantizeLinear", Entry(lower_quantize, fp32_values | int_values));
    table.emplace("DequantizeLinear", Entry(lower_dequantize, fp32_values | int_values));
    table.emplace("DynamicQuantizeLinear", Entry(lower_dynamic_quantize, fp32_values | int_values));
}

}  // namespace vaccel::onnx::lowering
