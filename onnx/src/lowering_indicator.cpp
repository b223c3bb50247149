// lowering_indicator.cpp - ONNX ops whose result marks positions: Hardmax,
// OneHot, EyeLike, TopK, and the window functions (lowering.hpp lists what
// each becomes).
//
// Decides: a position along an axis is compared with an INT32 iota
// constant of that axis (EQUAL), and the BOOL result SELECTs between the
// two values: Hardmax's 1 and 0 at its ARGMAX (TOSA's ARGMAX gives the
// first of equal maxima, as ONNX asks), OneHot's on and off values at each
// index (a negative index counts from depth; one outside [-depth, depth)
// marks nothing). EyeLike's result depends only on its input's shape, and
// HannWindow's, HammingWindow's and BlackmanWindow's on their size, so
// those are constants (computed in double, rounded once). TopK takes its k
// largest (or smallest) one at a time: ARGMAX and REDUCE_MAX, then the
// element found masked to -inf, so equal values come lowest index first,
// as ONNX sorts them.
#include "lowering_context.hpp"

#include <cmath>
#include <limits>
#include <numbers>

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

// HannWindow, HammingWindow, BlackmanWindow of `size` (input 0, known):
// a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic, the
// default) or size - 1.
Lower window(double a0, double a1, double a2)
{
    return [a0, a1, a2](Lowering& l, const Node& node) -> Status {
        const ConstantData* size = node.input_size() > 0 ? l.constant_of(node.input(0)) : nullptr;
        if (size == nullptr || size->ints.size() != 1 || size->ints[0] < 1)
            return fail(l.refuse(node, "its size is not one known positive integer (give its value: it "
                                       "determines a shape)"));
        auto dims = l.output_dims(node);
        if (!dims) return fail(dims.error());
        auto type = l.output_type(node);
        if (!type) return fail(type.error());
        const std::int64_t n = size->ints[0];
        const double period = static_cast<double>(int_attr(node, "periodic", 1) != 0 ? n : n - 1);
        std::vector<float> values;
        for (std::int64_t i = 0; i < n; ++i) {
            const double phase = 2.0 * std::numbers::pi * static_cast<double>(i) / (period == 0 ? 1 : period);
            values.push_back(static_cast<float>(a0 - a1 * std::cos(phase) + a2 * std::cos(2 * phase)));
        }
        if (elements(*dims) != n) return fail(l.refuse(node, "its result is not `size` long"));
        return l.bind(node, 0, l.constant_typed(*dims, std::move(values), *type));
    };
}

// TopK (FLOAT): values and INT32 indices of the k largest (largest = 1)
// or smallest along `axis`, sorted.
Status lower_top_k(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    if (x->dtype != DType::fp32) return fail(l.refuse(node, "its input is not FLOAT; vaccel imports TopK of FLOAT"));
    const ConstantData* given = node.input_size() > 1 ? l.constant_of(node.input(1)) : nullptr;
    if (given == nullptr || given->ints.size() != 1)
        return fail(l.refuse(node, "its k is not one known integer (give its value: it determines a shape)"));
    const auto rank = static_cast<std::int64_t>(x->dims.size());
    std::int64_t axis = int_attr(node, "axis", -1);
    if (axis < -rank || axis >= rank) return fail(l.refuse(node, fmt::format("axis {} is outside rank {}", axis, rank)));
    if (axis < 0) axis += rank;
    const auto a = static_cast<std::size_t>(axis);
    const std::int64_t k = given->ints[0], length = x->dims[a];
    constexpr std::int64_t max_k = 64;  // one ARGMAX, REDUCE_MAX and SELECT each
    if (k < 1 || k > length || k > max_k)
        return fail(l.refuse(node, fmt::format("its k {} is not within 1 to {} (the axis, at most {})", k, length, max_k)));
    const bool largest = int_attr(node, "largest", 1) != 0;
    Value v = largest ? *x : l.unary(Op::negate, *x, x->dims);
    Dims kept = x->dims, reduced = x->dims;
    kept[a] = 1;
    reduced.erase(reduced.begin() + axis);
    const Value positions = iota(l, x->dims.size(), a, length);
    const Value masked = l.constant(Dims(x->dims.size(), 1), {-std::numeric_limits<float>::infinity()});
    auto attr = tosa::axis_attr(static_cast<std::int32_t>(axis));
    attr.nan_mode = nan_propagate;
    std::vector<std::uint32_t> values, indices;
    for (std::int64_t i = 0; i < k; ++i) {
        Value index = l.tensor_of(reduced, DType::int32);
        l.builder().op(Op::argmax, {v.tensor}, {index.tensor}, attr);
        Value top = l.unary(Op::reduce_max, v, kept, attr);
        Value at = l.reshape(index, kept);
        values.push_back(top.tensor);
        indices.push_back(at.tensor);
        if (i + 1 < k)
            v = l.apply(Op::select, {l.apply(Op::equal, {positions, at}, x->dims, DType::boolean), masked, v}, x->dims,
                        x->dtype);
    }
    Dims out = x->dims;
    out[a] = k;
    Value y = l.tensor_of(out, x->dtype), idx = l.tensor_of(out, DType::int32);
    const auto along = tosa::axis_attr(static_cast<std::int32_t>(axis));
    l.builder().op(Op::concat, values, {y.tensor}, along);
    l.builder().op(Op::concat, indices, {idx.tensor}, along);
    if (!largest) y = l.unary(Op::negate, y, out);
    if (auto bound = l.bind(node, 1, idx); !bound) return bound;
    return l.bind(node, 0, y);
}

}  // namespace

void add_indicator(Table& table)
{
    table.emplace("Hardmax", Entry(lower_hardmax, float_values));
    table.emplace("OneHot", Entry(lower_one_hot, number_values));
    table.emplace("EyeLike", Entry(lower_eye_like, any_values));
    table.emplace("TopK", Entry(lower_top_k, fp32_values | int_values));  // INT32 indices
    table.emplace("HannWindow", Entry(window(0.5, 0.5, 0.0), every_carrier));
    table.emplace("HammingWindow", Entry(window(25.0 / 46.0, 21.0 / 46.0, 0.0), every_carrier));
    table.emplace("BlackmanWindow", Entry(window(0.42, 0.5, 0.08), every_carrier));
}

}  // namespace vaccel::onnx::lowering
