// lowering_elementwise.cpp - elementwise ONNX ops and Softmax
// (lowering.hpp lists what each becomes).
#include "lowering_context.hpp"

#include <algorithm>
#include <limits>

namespace vaccel::onnx::lowering {

namespace {


Lower elementwise(Op op)
{
    return [op](Lowering& l, const Node& node) -> Status {
        auto ops = l.operands(node, 2);
        if (!ops) return fail(ops.error());
        return l.bind(node, 0, l.binary(op, ops->in[0], ops->in[1], ops->dims));
    };
}

// Max and Min take one or more inputs.
Lower variadic(Op op)
{
    return [op](Lowering& l, const Node& node) -> Status {
        auto dims = l.output_dims(node);
        if (!dims) return fail(dims.error());
        auto acc = l.input(node, 0);
        if (!acc) return fail(acc.error());
        Value v = l.to_rank(*acc, dims->size());
        for (int i = 1; i < node.input_size(); ++i) {
            auto next = l.input(node, i);
            if (!next) return fail(next.error());
            v = l.binary(op, v, *next, *dims);
        }
        if (node.input_size() == 1) v = l.unary(Op::identity, l.reshape(v, *dims), *dims);
        return l.bind(node, 0, v);
    };
}

Lower unary_op(Op op, tosa::Attributes attrs = {})
{
    return [op, attrs](Lowering& l, const Node& node) -> Status {
        auto x = l.input(node, 0);
        if (!x) return fail(x.error());
        auto dims = l.output_dims(node);
        if (!dims) return fail(dims.error());
        return l.bind(node, 0, l.unary(op, *x, *dims, attrs));
    };
}

Status lower_div(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 2);
    if (!ops) return fail(ops.error());
    const Value &a = ops->in[0], &b = ops->in[1];
    // Integers: INTDIV, which truncates toward zero as ONNX does.
    if (a.dtype == tosa::DType::int32) return l.bind(node, 0, l.binary(Op::intdiv, a, b, ops->dims));
    return l.bind(node, 0, l.mul(a, l.unary(Op::reciprocal, b, b.dims), ops->dims));
}

// Mod: a - b * trunc(a / b), the remainder with the dividend's sign (C's
// fmod, ONNX's fmod = 1; floats must ask for it); integers with fmod = 0
// take the divisor's sign instead (Python's %): a remainder of the other
// sign has b added.
Status lower_mod(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 2);
    if (!ops) return fail(ops.error());
    const Value* a = &ops->in[0];
    const Value* b = &ops->in[1];
    const Dims* dims = &ops->dims;
    const bool fmod = int_attr(node, "fmod", 0) != 0;
    const tosa::DType type = a->dtype;
    const std::size_t rank = dims->size();
    if (type != tosa::DType::int32) {
        if (!fmod) return fail(l.refuse(node, "a floating Mod must set fmod = 1"));
        Value q = l.mul(*a, l.unary(Op::reciprocal, *b, b->dims), *dims);
        Value up = l.apply(Op::greater_equal, {q, l.scalar_like(0.0f, rank)}, *dims, tosa::DType::boolean);
        Value whole = l.apply(Op::select, {up, l.unary(Op::floor, q, *dims), l.unary(Op::ceil, q, *dims)},
                              *dims, type);
        return l.bind(node, 0, l.binary(Op::sub, *a, l.mul(*b, whole, *dims), *dims));
    }
    Value q = l.binary(Op::intdiv, *a, *b, *dims);
    Value r = l.binary(Op::sub, *a, l.mul(*b, q, *dims), *dims);
    if (fmod) return l.bind(node, 0, r);
    const Value zero = l.scalar_like(0.0f, rank);
    // Over v's own dims (b may broadcast): XOR broadcasts the two.
    auto negative = [&](const Value& v) {
        return l.apply(Op::greater, {zero, v}, l.to_rank(v, rank).dims, tosa::DType::boolean);
    };
    Value nonzero = l.apply(Op::logical_not, {l.apply(Op::equal, {r, zero}, *dims, tosa::DType::boolean)},
                            *dims, tosa::DType::boolean);
    Value differ = l.apply(Op::logical_xor, {negative(r), negative(*b)}, *dims, tosa::DType::boolean);
    Value fix = l.apply(Op::logical_and, {nonzero, differ}, *dims, tosa::DType::boolean);
    Value shifted = l.binary(Op::add, r, *b, *dims);
    return l.bind(node, 0, l.apply(Op::select, {fix, shifted, r}, *dims, type));
}

Status lower_sqrt(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    return l.bind(node, 0, l.binary(Op::pow, *x, l.scalar_like(0.5f, dims->size()), *dims));
}

}  // namespace

Value softmax_along(Lowering& l, Value x, const Dims& dims, std::int64_t axis, bool log)
{
    Dims reduced = dims;
    reduced[static_cast<std::size_t>(axis)] = 1;
    auto attr = tosa::axis_attr(static_cast<std::int32_t>(axis));
    attr.nan_mode = nan_propagate;
    Value max = l.unary(Op::reduce_max, x, reduced, attr);
    Value shifted = l.binary(Op::sub, x, max, dims);
    Value e = l.unary(Op::exp, shifted, dims);
    Value sum = l.unary(Op::reduce_sum, e, reduced, attr);
    if (log) return l.binary(Op::sub, shifted, l.unary(Op::log, sum, reduced), dims);
    return l.mul(e, l.unary(Op::reciprocal, sum, reduced), dims);
}

namespace {

// Softmax and LogSoftmax over the node's axis.
Lower softmax(bool log)
{
    return [log](Lowering& l, const Node& node) -> Status {
        auto x = l.input(node, 0);
        if (!x) return fail(x.error());
        auto dims = l.output_dims(node);
        if (!dims) return fail(dims.error());
        const auto rank = static_cast<std::int64_t>(dims->size());
        std::int64_t axis = int_attr(node, "axis", l.model().opset() >= 13 ? -1 : 1);
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= rank) return fail(l.refuse(node, "its axis is outside the input's rank"));
        if (l.model().opset() < 13 && axis != rank - 1)
            return fail(l.refuse(node, "before opset 13 it flattens the dimensions from its axis "
                                       "on; only the last axis is imported"));
        return l.bind(node, 0, softmax_along(l, *x, *dims, axis, log));
    };
}

// Sum and Mean of one or more inputs, broadcast.
Lower sum_of(bool mean)
{
    return [mean](Lowering& l, const Node& node) -> Status {
        auto dims = l.output_dims(node);
        if (!dims) return fail(dims.error());
        auto first = l.input(node, 0);
        if (!first) return fail(first.error());
        Value v = l.to_rank(*first, dims->size());
        for (int i = 1; i < node.input_size(); ++i) {
            auto next = l.input(node, i);
            if (!next) return fail(next.error());
            v = l.binary(Op::add, v, *next, *dims);
        }
        if (mean)
            v = l.mul(v, l.scalar_like(1.0f / static_cast<float>(node.input_size()), dims->size()), *dims);
        if (v.dims != *dims || node.input_size() == 1) v = l.unary(Op::identity, l.reshape(v, *dims), *dims);
        return l.bind(node, 0, v);
    };
}

// Elu, Selu: gamma * (x > 0 ? x : alpha * (exp(x) - 1)), as
// gamma * (max(x, 0) + alpha * (exp(min(x, 0)) - 1)).
Lower exponential_unit(bool selu)
{
    return [selu](Lowering& l, const Node& node) -> Status {
        auto x = l.input(node, 0);
        if (!x) return fail(x.error());
        auto dims = l.output_dims(node);
        if (!dims) return fail(dims.error());
        const float alpha = float_attr(node, "alpha", selu ? 1.67326319217681884765625f : 1.0f);
        const float gamma = selu ? float_attr(node, "gamma", 1.05070102214813232421875f) : 1.0f;
        const std::size_t rank = dims->size();
        Value zero = l.scalar_like(0.0f, rank);
        Value pos = l.binary(Op::maximum, *x, zero, *dims);
        Value e = l.unary(Op::exp, l.binary(Op::minimum, *x, zero, *dims), *dims);
        Value neg = l.mul(l.binary(Op::sub, e, l.scalar_like(1.0f, rank), *dims), l.scalar_like(alpha, rank), *dims);
        Value y = l.binary(Op::add, pos, neg, *dims);
        if (gamma != 1.0f) y = l.mul(y, l.scalar_like(gamma, rank), *dims);
        return l.bind(node, 0, y);
    };
}

// Softplus log(exp(x) + 1); Softsign x / (1 + |x|).
Status lower_softplus(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    Value e = l.unary(Op::exp, *x, *dims);
    return l.bind(node, 0, l.unary(Op::log, l.binary(Op::add, e, l.scalar_like(1.0f, dims->size()), *dims), *dims));
}

Status lower_softsign(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    Value d = l.binary(Op::add, l.unary(Op::abs, *x, *dims), l.scalar_like(1.0f, dims->size()), *dims);
    return l.bind(node, 0, l.mul(*x, l.unary(Op::reciprocal, d, *dims), *dims));
}

// Round, half to even: where |x| < 2^23 a CAST to INT32 (TOSA rounds half
// to even) and back, keeping a negative x's zero negative (-0.4 gives
// -0, as in ONNX); elsewhere x itself, already whole (or NaN, or
// infinite).
Status lower_round(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    const std::size_t rank = dims->size();
    using tosa::DType;
    Value whole = l.apply(Op::cast, {l.apply(Op::cast, {*x}, *dims, DType::int32)}, *dims, DType::fp32);
    Value zero = l.scalar_like(0.0f, rank);
    Value negative_zero = l.apply(Op::logical_and,
                                  {l.apply(Op::greater, {zero, *x}, *dims, DType::boolean),
                                   l.apply(Op::equal, {whole, zero}, *dims, DType::boolean)},
                                  *dims, DType::boolean);
    whole = l.apply(Op::select, {negative_zero, l.scalar_like(-0.0f, rank), whole}, *dims, DType::fp32);
    Value small = l.apply(Op::greater, {l.scalar_like(8388608.0f, rank), l.unary(Op::abs, *x, *dims)},
                          *dims, DType::boolean);
    return l.bind(node, 0, l.apply(Op::select, {small, whole, *x}, *dims, DType::fp32));
}

// Pow. FLOAT to a FLOAT or integer exponent: POW (the exponent CAST to
// FP32). An integer to an integer exponent: square and multiply over the
// exponent's bits in INT32 (wrapping as the INT32 result does), as many
// bits as a known exponent needs, else 31; a negative exponent gives 0.
// An integer to a FLOAT exponent: POW in FP32, CAST back (exact while the
// result is below 2^24).
Status lower_pow(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 2);
    if (!ops) return fail(ops.error());
    const Value &a = ops->in[0], &b = ops->in[1];
    const Dims& dims = ops->dims;
    using tosa::DType;
    auto as_float = [&](const Value& v) { return v.dtype == DType::fp32 ? v : l.apply(Op::cast, {v}, v.dims, DType::fp32); };
    auto float_pow = [&] {
        Value out = l.tensor_of(dims, DType::fp32);
        l.builder().op(Op::pow, {l.to_rank(as_float(a), dims.size()).tensor, l.to_rank(as_float(b), dims.size()).tensor},
                       {out.tensor});
        return out;
    };
    if (a.dtype == DType::fp32) return l.bind(node, 0, float_pow());
    if (a.dtype != DType::int32) return fail(l.refuse(node, "its base is neither FLOAT nor an integer"));
    if (b.dtype != DType::int32) return l.bind(node, 0, l.apply(Op::cast, {float_pow()}, dims, DType::int32));
    int bits = 31;
    if (const ConstantData* known = l.constant_of(node.input(1)); known != nullptr && !known->ints.empty()) {
        const std::int64_t top = *std::ranges::max_element(known->ints);
        bits = 1;
        while (bits < 31 && (std::int64_t{1} << bits) <= top) ++bits;
    }
    const Dims ones(dims.size(), 1);
    auto k = [&](std::int64_t c) { return l.constant_ints(ones, {c}, DType::int32); };
    auto int_op = [&](Op op, Value x, Value y) {
        Value out = l.tensor_of(dims, DType::int32);
        std::vector<std::uint32_t> in{l.to_rank(x, dims.size()).tensor, l.to_rank(y, dims.size()).tensor};
        if (op == Op::mul) in.push_back(l.mul_shift());
        l.builder().op(op, in, {out.tensor});
        return out;
    };
    Value result = l.tile(k(1), dims), square = l.to_rank(a, dims.size());
    for (int bit = 0; bit < bits; ++bit) {
        Value set = l.apply(Op::equal, {int_op(Op::bitwise_and, int_op(Op::arithmetic_right_shift, b, k(bit)), k(1)), k(1)},
                            dims, DType::boolean);
        result = l.apply(Op::select, {set, int_op(Op::mul, result, square), result}, dims, DType::int32);
        if (bit + 1 < bits) square = int_op(Op::mul, square, square);
    }
    Value negative = l.apply(Op::greater, {k(0), b}, dims, DType::boolean);
    return l.bind(node, 0, l.apply(Op::select, {negative, k(0), result}, dims, DType::int32));
}

// PRelu: x where x >= 0, slope * x below (slope broadcast to x).
Status lower_prelu(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 2);
    if (!ops) return fail(ops.error());
    const Value &x = ops->in[0], &slope = ops->in[1];
    const Dims& dims = ops->dims;
    Value zero = l.constant_typed(Dims(dims.size(), 1), {0.0f}, x.dtype);
    Value below = l.apply(Op::greater, {zero, x}, dims, tosa::DType::boolean);
    return l.bind(node, 0, l.apply(Op::select, {below, l.mul(x, slope, dims), x}, dims, x.dtype));
}

// ThresholdedRelu: x where x > alpha, else 0.
Status lower_thresholded_relu(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 1);
    if (!ops) return fail(ops.error());
    const Value& x = ops->in[0];
    const std::size_t rank = ops->dims.size();
    Value above = l.apply(Op::greater, {x, l.scalar_like(float_attr(node, "alpha", 1.0f), rank)}, ops->dims,
                          tosa::DType::boolean);
    return l.bind(node, 0, l.apply(Op::select, {above, x, l.scalar_like(0.0f, rank)}, ops->dims, x.dtype));
}

// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
Status lower_shrink(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 1);
    if (!ops) return fail(ops.error());
    const Value& x = ops->in[0];
    const Dims& dims = ops->dims;
    const float lambd = float_attr(node, "lambd", 0.5f), bias = float_attr(node, "bias", 0.0f);
    auto k = [&](float c) { return l.constant_typed(Dims(dims.size(), 1), {c}, x.dtype); };
    auto is_greater = [&](Value a, Value b) { return l.apply(Op::greater, {a, b}, dims, tosa::DType::boolean); };
    Value low = l.binary(Op::add, x, k(bias), dims), high = l.binary(Op::sub, x, k(bias), dims);
    Value y = l.apply(Op::select, {is_greater(x, k(lambd)), high, k(0.0f)}, dims, x.dtype);
    return l.bind(node, 0, l.apply(Op::select, {is_greater(k(-lambd), x), low, y}, dims, x.dtype));
}

// Celu: max(0, x) + min(0, alpha (exp(x / alpha) - 1)).
Status lower_celu(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 1);
    if (!ops) return fail(ops.error());
    const Value& x = ops->in[0];
    const Dims& dims = ops->dims;
    const std::size_t rank = dims.size();
    const float alpha = float_attr(node, "alpha", 1.0f);
    Value zero = l.scalar_like(0.0f, rank);
    Value e = l.unary(Op::exp, l.mul(x, l.scalar_like(1.0f / alpha, rank), dims), dims);
    Value neg = l.mul(l.binary(Op::sub, e, l.scalar_like(1.0f, rank), dims), l.scalar_like(alpha, rank), dims);
    return l.bind(node, 0, l.binary(Op::add, l.binary(Op::maximum, x, zero, dims),
                                    l.binary(Op::minimum, neg, zero, dims), dims));
}

// BitShift of unsigned integers (carried as INT32): LOGICAL_LEFT_SHIFT or
// LOGICAL_RIGHT_SHIFT, a left shift of UINT8 or UINT16 masked to its
// width, as ONNX's wraps. Shift amounts are 0 to 31 (TOSA's bound); the
// results of UINT32 and UINT64 must fit INT32, as every value of the graph
// does (ports.hpp).
Status lower_bit_shift(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 2);
    if (!ops) return fail(ops.error());
    const auto* direction = attribute(node, "direction");
    const bool left = direction != nullptr && direction->s() == "LEFT";
    if (!left && (direction == nullptr || direction->s() != "RIGHT"))
        return fail(l.refuse(node, "its direction is neither LEFT nor RIGHT"));
    const Dims& dims = ops->dims;
    Value y = l.binary(left ? Op::logical_left_shift : Op::logical_right_shift, ops->in[0], ops->in[1], dims);
    const auto type = l.model().type_of(node.output(0));
    using T = ::onnx::TensorProto;
    if (left && type && (type->elem == T::UINT8 || type->elem == T::UINT16)) {
        const std::int64_t mask = type->elem == T::UINT8 ? 0xff : 0xffff;
        y = l.binary(Op::bitwise_and, y, l.constant_ints(Dims(dims.size(), 1), {mask}, tosa::DType::int32), dims);
    }
    return l.bind(node, 0, y);
}

}  // namespace

void add_elementwise(Table& table)
{
    table.emplace("Round", lower_round);
    table.emplace("Add", Entry(elementwise(Op::add), number_values));
    table.emplace("Sub", Entry(elementwise(Op::sub), number_values));
    table.emplace("Mul", Entry(elementwise(Op::mul), number_values));
    table.emplace("Pow", Entry(lower_pow, fp32_values | int_values));
    table.emplace("Div", Entry(lower_div, number_values));
    table.emplace("Mod", Entry(lower_mod, number_values));
    table.emplace("Max", Entry(variadic(Op::maximum), number_values));
    table.emplace("Min", Entry(variadic(Op::minimum), number_values));
    table.emplace("Relu", unary_op(Op::clamp, tosa::clamp_f32_attr(0.0f, std::numeric_limits<float>::infinity())));
    table.emplace("Abs", Entry(unary_op(Op::abs), number_values));
    table.emplace("Neg", Entry(unary_op(Op::negate), number_values));
    table.emplace("Exp", unary_op(Op::exp));
    table.emplace("Log", unary_op(Op::log));
    table.emplace("Reciprocal", unary_op(Op::reciprocal));
    table.emplace("Sigmoid", unary_op(Op::sigmoid));
    table.emplace("Tanh", unary_op(Op::tanh));
    table.emplace("Erf", unary_op(Op::erf));
    table.emplace("Floor", unary_op(Op::floor));
    table.emplace("Ceil", unary_op(Op::ceil));
    table.emplace("Identity", Entry(unary_op(Op::identity), any_values));
    table.emplace("Sqrt", lower_sqrt);
    table.emplace("Softmax", softmax(false));
    table.emplace("LogSoftmax", softmax(true));
    table.emplace("Sum", sum_of(false));
    table.emplace("Mean", sum_of(true));
    table.emplace("Elu", exponential_unit(false));
    table.emplace("Selu", exponential_unit(true));
    table.emplace("Softplus", lower_softplus);
    table.emplace("Softsign", lower_softsign);
    table.emplace("Sin", unary_op(Op::sin));
    table.emplace("Cos", unary_op(Op::cos));
    table.emplace("PRelu", Entry(lower_prelu, number_values));
    table.emplace("ThresholdedRelu", lower_thresholded_relu);
    table.emplace("Shrink", Entry(lower_shrink, number_values));
    table.emplace("Celu", lower_celu);
    table.emplace("BitShift", Entry(lower_bit_shift, int_values));
}

}  // namespace vaccel::onnx::lowering
