// lowering_indicator.cpp - ONNX ops whose result marks positions: Hardmax,
// OneHot, EyeLike (lowering.hpp lists what each becomes).
//
// Decides: a position along an axis is compared with an INT32 iota
// constant of that axis (EQUAL), and the BOOL result SELECTs between the
// two values: Hardmax's 1 and 0 at its ARGMAX (TOSA's ARGMAX gives the
// first of equal maxima, as ONNX asks), OneHot's on and off values at each
// index (a negative index counts from depth; one outside [-depth, depth)
// marks nothing). EyeLike's result depends only on its input's shape, so it
// is a constant.
#include "lowering_context.hpp"

#include <cmath>

namespace vaccel::onnx::lowering {

namespace {

using tosa::DType;

// 0 .. length - 1 along `axis` of a `rank`-dim INT32 constant, 1 elsewhere.
Value iota(Lowering& l, std::size_t rank, std::size_t axis, std::int64_t length)
{
    Dims dims(rank, 1);
    dims[axis] = length;
    std::vector<std::int64_t> values(static_cast<std::size_t>(length));
    for (std::int64_t i = 0; i < length; ++i) values[static_cast<std::size_t>(i)] = i;
    return l.constant_ints(dims, values, DType::int32);
}

// Hardmax: 1 at the first maximum along the axis, 0 elsewhere. Before
// opset 13 the input is seen as 2-D, [dims before axis, dims from it].
Status lower_hardmax(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 1);
    if (!ops) return fail(ops.error());
    const Value& x = ops->in[0];
    const Dims& dims = ops->dims;
    const bool coerced = l.model().opset() < 13;
    const auto rank = static_cast<std::int64_t>(dims.size());
    std::int64_t axis = int_attr(node, "axis", coerced ? 1 : -1);
    if (axis < -rank || axis >= rank) return fail(l.refuse(node, fmt::format("axis {} is outside rank {}", axis, rank)));
    if (axis < 0) axis += rank;
    Value v = x;
    if (coerced) {
        const auto split = dims.begin() + axis;
        v = l.reshape(x, {std::accumulate(dims.begin(), split, std::int64_t{1}, std::multiplies<>()),
                          std::accumulate(split, dims.end(), std::int64_t{1}, std::multiplies<>())});
        axis = 1;
    }
    Dims reduced = v.dims;
    const std::int64_t length = reduced[static_cast<std::size_t>(axis)];
    reduced[static_cast<std::size_t>(axis)] = 1;
    Dims argmax_dims = v.dims;
    argmax_dims.erase(argmax_dims.begin() + axis);
    Value index = l.tensor_of(argmax_dims, DType::int32);
    auto attr = tosa::axis_attr(static_cast<std::int32_t>(axis));
    attr.nan_mode = nan_propagate;
    l.builder().op(Op::argmax, {v.tensor}, {index.tensor}, attr);
    Value at = l.apply(Op::equal, {l.reshape(index, reduced), iota(l, v.dims.size(), static_cast<std::size_t>(axis), length)},
                       v.dims, DType::boolean);
    const Dims ones(v.dims.size(), 1);
    Value y = l.apply(Op::select, {at, l.constant_typed(ones, {1.0f}, x.dtype), l.constant_typed(ones, {0.0f}, x.dtype)},
                      v.dims, x.dtype);
    return l.bind(node, 0, coerced ? l.reshape(y, dims) : y);
}

// OneHot(indices, depth, values = [off, on]) along `axis` of the result
// (default -1: last). Floating indices are truncated toward zero.
Status lower_one_hot(Lowering& l, const Node& node)
{
    auto indices = l.input(node, 0);
    if (!indices) return fail(indices.error());
    auto values = l.input(node, 2);
    if (!values) return fail(values.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    const ConstantData* depth_data = node.input_size() > 1 ? l.constant_of(node.input(1)) : nullptr;
    if (depth_data == nullptr)
        return fail(l.refuse(node, "its depth is not a constant (give its value when running: it "
                                   "determines a shape)"));
    const bool float_depth = !depth_data->floats.empty();
    if ((float_depth ? depth_data->floats.size() : depth_data->ints.size()) != 1)
        return fail(l.refuse(node, "its depth is not one value"));
    const std::int64_t depth =
        float_depth ? static_cast<std::int64_t>(std::trunc(depth_data->floats[0])) : depth_data->ints[0];
    if (elements(values->dims) != 2) return fail(l.refuse(node, "its values are not two (off, on)"));
    const auto rank = static_cast<std::int64_t>(dims->size());
    std::int64_t axis = int_attr(node, "axis", -1);
    if (axis < -rank || axis >= rank) return fail(l.refuse(node, fmt::format("axis {} is outside rank {}", axis, rank)));
    if (axis < 0) axis += rank;
    if ((*dims)[static_cast<std::size_t>(axis)] != depth)
        return fail(l.refuse(node, fmt::format("its result's axis {} is {} long, not its depth {}", axis,
                                               (*dims)[static_cast<std::size_t>(axis)], depth)));
    Value index = *indices;
    if (index.dtype != DType::int32) {
        Value below = l.apply(Op::greater, {l.constant_typed(Dims(index.dims.size(), 1), {0.0f}, index.dtype), index},
                              index.dims, DType::boolean);
        Value whole = l.apply(Op::select, {below, l.unary(Op::ceil, index, index.dims), l.unary(Op::floor, index, index.dims)},
                              index.dims, index.dtype);
        index = l.apply(Op::cast, {whole}, index.dims, DType::int32);
    }
    const Dims ones(index.dims.size(), 1);
    Value negative = l.apply(Op::greater, {l.constant_ints(ones, {0}, DType::int32), index}, index.dims, DType::boolean);
    Value wrapped = l.apply(Op::add, {index, l.constant_ints(ones, {depth}, DType::int32)}, index.dims, DType::int32);
    index = l.apply(Op::select, {negative, wrapped, index}, index.dims, DType::int32);
    Dims spread = index.dims;
    spread.insert(spread.begin() + axis, 1);
    Value at = l.apply(Op::equal, {l.reshape(index, spread), iota(l, dims->size(), static_cast<std::size_t>(axis), depth)},
                       *dims, DType::boolean);
    const Dims one_each(dims->size(), 1);
    Value off = l.reshape(l.slice(*values, {0}, {1}), one_each), on = l.reshape(l.slice(*values, {1}, {1}), one_each);
    return l.bind(node, 0, l.apply(Op::select, {at, on, off}, *dims, values->dtype));
}

// EyeLike: ones on the k-th diagonal of a 2-D result of the input's shape.
Status lower_eye_like(Lowering& l, const Node& node)
{
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    auto type = l.output_type(node);
    if (!type) return fail(type.error());
    if (dims->size() != 2) return fail(l.refuse(node, "its input is not 2-D"));
    const std::int64_t k = int_attr(node, "k", 0), rows = (*dims)[0], cols = (*dims)[1];
    std::vector<float> values(static_cast<std::size_t>(rows * cols), 0.0f);
    for (std::int64_t i = 0; i < rows; ++i)
        if (i + k >= 0 && i + k < cols) values[static_cast<std::size_t>(i * cols + i + k)] = 1.0f;
    return l.bind(node, 0, l.constant_typed(*dims, std::move(values), *type));
}

}  // namespace

void add_indicator(Table& table)
{
    table.emplace("Hardmax", Entry(lower_hardmax, float_values));
    table.emplace("OneHot", Entry(lower_one_hot, number_values));
    table.emplace("EyeLike", Entry(lower_eye_like, any_values));
}

}  // namespace vaccel::onnx::lowering
