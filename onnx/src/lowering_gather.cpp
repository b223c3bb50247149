// lowering_gather.cpp - Gather and GatherElements on indices computed at
// run time (an embedding's token ids), with TOSA GATHER; both fold at
// import where data and indices are known (folding.hpp). Compress and
// ReverseSequence are GATHERs too.
//
// Decides:
//  - TOSA GATHER reads values [N, K, C] at indices [N, W] (one row of W
//    indices per N) into [N, W, C];
//  - Gather(axis): N is the product of the data's dims before the axis, K
//    the axis, C the product of those after; the indices, the same for every
//    N, are tiled to [N, W];
//  - GatherElements(axis): the axis is moved last (TRANSPOSE) in the data
//    and the indices, the data sliced to the indices' other dims, so N is
//    the product of those, K the axis, C 1 and W the indices' extent along
//    the axis; the result is moved back;
//  - a negative index counts from the end, as in ONNX: constant indices are
//    fixed at import (one outside the axis is refused, naming it); computed
//    ones by SELECT(0 > i, i + K, i). An index outside the axis at run time
//    is the device's to refuse (TOSA GATHER requires 0 <= i < K).
#include <algorithm>
#include <numeric>

#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

using tosa::DType;

// The indices as INT32 counted from the axis' start: constant ones checked
// and fixed here, computed ones fixed in the graph.
Result<Value> from_start(Lowering& l, const Node& node, std::int64_t extent)
{
    if (node.input_size() < 2) return fail(l.refuse(node, "it has no indices"));
    const ConstantData* c = l.constant_of(node.input(1));
    if (c != nullptr) {
        std::vector<std::int64_t> fixed;
        for (std::int64_t i : c->ints) {
            if (i < -extent || i >= extent)
                return fail(l.refuse(node, fmt::format("index {} is outside the axis of {} "
                                                       "elements",
                                                       i, extent)));
            fixed.push_back(i < 0 ? i + extent : i);
        }
        return l.constant_ints(c->type.dims, fixed, DType::int32);
    }
    auto i = l.input(node, 1);
    if (!i) return fail(i.error());
    if (i->dtype != DType::int32) return fail(l.refuse(node, "its indices are not integers"));
    const std::size_t rank = i->dims.size();
    Value zero = l.constant_ints(Dims(rank, 1), {0}, DType::int32);
    Value k = l.constant_ints(Dims(rank, 1), {extent}, DType::int32);
    Value negative = l.apply(Op::greater, {zero, *i}, i->dims, DType::boolean);
    Value shifted = l.apply(Op::add, {*i, k}, i->dims, DType::int32);
    return l.apply(Op::select, {negative, shifted, *i}, i->dims, DType::int32);
}

Value gather(Lowering& l, Value values, Value indices, std::int64_t n, std::int64_t w, std::int64_t c)
{
    Value out = l.tensor_of({n, w, c}, values.dtype);
    l.builder().op(Op::gather, {values.tensor, indices.tensor}, {out.tensor});
    return out;
}

std::optional<std::size_t> axis_of(const Node& node, std::size_t rank)
{
    std::int64_t axis = int_attr(node, "axis", 0);
    if (axis < 0) axis += static_cast<std::int64_t>(rank);
    if (axis < 0 || axis >= static_cast<std::int64_t>(rank)) return std::nullopt;
    return static_cast<std::size_t>(axis);
}

std::int64_t product(const Dims& dims, std::size_t from, std::size_t to)
{
    return std::accumulate(dims.begin() + static_cast<std::ptrdiff_t>(from),
                           dims.begin() + static_cast<std::ptrdiff_t>(to), std::int64_t{1},
                           std::multiplies<>());
}

Status lower_gather(Lowering& l, const Node& node)
{
    auto data = l.input(node, 0);
    if (!data) return fail(data.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    const auto axis = axis_of(node, data->dims.size());
    if (!axis) return fail(l.refuse(node, "its axis is outside the data's rank"));
    const std::int64_t k = data->dims[*axis];
    auto indices = from_start(l, node, k);
    if (!indices) return fail(indices.error());
    const std::int64_t n = product(data->dims, 0, *axis);
    const std::int64_t c = product(data->dims, *axis + 1, data->dims.size());
    const std::int64_t w = elements(indices->dims);
    const Value rows = l.tile(l.reshape(*indices, {1, w}), {n, 1});
    Value out = gather(l, l.reshape(*data, {n, k, c}), rows, n, w, c);
    return l.bind(node, 0, l.reshape(out, *dims));
}

Status lower_gather_elements(Lowering& l, const Node& node)
{
    auto data = l.input(node, 0);
    if (!data) return fail(data.error());
    auto dims = l.output_dims(node);  // the indices' dims
    if (!dims) return fail(dims.error());
    const std::size_t rank = data->dims.size();
    const auto axis = axis_of(node, rank);
    if (!axis) return fail(l.refuse(node, "its axis is outside the data's rank"));
    if (dims->size() != rank) return fail(l.refuse(node, "its indices are not of the data's rank"));
    for (std::size_t a = 0; a < rank; ++a)
        if (a != *axis && (*dims)[a] > data->dims[a])
            return fail(l.refuse(node, "its indices run past the data outside the axis"));
    auto indices = from_start(l, node, data->dims[*axis]);
    if (!indices) return fail(indices.error());
    // The axis last: perm moves it, back undoes that.
    std::vector<std::int32_t> perm, back(rank);
    for (std::size_t a = 0; a < rank; ++a)
        if (a != *axis) perm.push_back(static_cast<std::int32_t>(a));
    perm.push_back(static_cast<std::int32_t>(*axis));
    for (std::size_t a = 0; a < rank; ++a) back[static_cast<std::size_t>(perm[a])] = static_cast<std::int32_t>(a);
    Value values = *data;
    Dims size = *dims;
    size[*axis] = data->dims[*axis];
    if (size != data->dims) values = l.slice(*data, Dims(rank, 0), size);
    const bool moves = *axis + 1 != rank;
    if (moves) values = l.transpose(values, perm);
    Value at = moves ? l.transpose(l.reshape(*indices, *dims), perm) : l.reshape(*indices, *dims);
    const std::int64_t k = data->dims[*axis], w = (*dims)[*axis];
    const std::int64_t n = elements(*dims) / std::max<std::int64_t>(w, 1);
    Value out = gather(l, l.reshape(values, {n, k, 1}), l.reshape(at, {n, w}), n, w, 1);
    Dims moved;
    for (std::int32_t p : perm) moved.push_back((*dims)[static_cast<std::size_t>(p)]);
    out = l.reshape(out, moved);
    if (moves) out = l.transpose(out, back);
    return l.bind(node, 0, out);
}

// Compress: the slices of `axis` (absent: of the data flattened) whose
// condition holds, as a Gather at those indices. The condition must be
// known at import: it sets the result's shape.
Status lower_compress(Lowering& l, const Node& node)
{
    auto data = l.input(node, 0);
    if (!data) return fail(data.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    const ConstantData* condition = node.input_size() > 1 ? l.constant_of(node.input(1)) : nullptr;
    if (condition == nullptr)
        return fail(l.refuse(node, "its condition is not known at import (give its value: it sets the result's "
                                   "shape)"));
    Value values = *data;
    std::size_t axis = 0;
    if (attribute(node, "axis") != nullptr) {
        const auto a = axis_of(node, data->dims.size());
        if (!a) return fail(l.refuse(node, "its axis is outside the data's rank"));
        axis = *a;
    } else {
        values = l.reshape(*data, {elements(data->dims)});
    }
    const std::int64_t k = values.dims[axis];
    std::vector<std::int64_t> kept;
    for (std::size_t i = 0; i < condition->ints.size() && static_cast<std::int64_t>(i) < k; ++i)
        if (condition->ints[i] != 0) kept.push_back(static_cast<std::int64_t>(i));
    const auto w = static_cast<std::int64_t>(kept.size());
    if (w == 0 || elements(*dims) == 0) return fail(l.refuse(node, "its condition keeps nothing (an empty result)"));
    const std::int64_t n = product(values.dims, 0, axis), c = product(values.dims, axis + 1, values.dims.size());
    const Value rows = l.tile(l.constant_ints({1, w}, kept, DType::int32), {n, 1});
    Value out = gather(l, l.reshape(values, {n, k, c}), rows, n, w, c);
    return l.bind(node, 0, l.reshape(out, *dims));
}

// ReverseSequence: along time_axis, the first sequence_lens[b] elements of
// each batch b reversed, the rest kept: a GATHER at index len - 1 - t where
// t < len, else t (computed in the graph, so the lengths may be too).
Status lower_reverse_sequence(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 2);
    if (!ops) return fail(ops.error());
    const Value& x = ops->in[0];
    const Value& lens = ops->in[1];
    const std::int64_t batch_axis = int_attr(node, "batch_axis", 1), time_axis = int_attr(node, "time_axis", 0);
    if (x.dims.size() < 2 || batch_axis + time_axis != 1 || (batch_axis != 0 && batch_axis != 1))
        return fail(l.refuse(node, "its batch and time axes are not 0 and 1"));
    if (lens.dtype != DType::int32) return fail(l.refuse(node, "its sequence_lens are not integers"));
    const bool time_first = time_axis == 0;
    std::vector<std::int32_t> swap{1, 0};  // batch first; its own inverse
    for (std::size_t a = 2; a < x.dims.size(); ++a) swap.push_back(static_cast<std::int32_t>(a));
    const Value v = time_first ? l.transpose(x, swap) : x;
    const std::int64_t n = v.dims[0], t = v.dims[1], c = product(v.dims, 2, v.dims.size());
    std::vector<std::int64_t> steps(static_cast<std::size_t>(t));
    std::iota(steps.begin(), steps.end(), std::int64_t{0});
    const Value time = l.constant_ints({1, t}, steps, DType::int32);
    const Value len = l.reshape(lens, {n, 1});
    const Value inside = l.apply(Op::greater, {len, time}, {n, t}, DType::boolean);
    const Value one = l.constant_ints({1, 1}, {1}, DType::int32);
    const Value back = l.apply(Op::sub, {l.apply(Op::sub, {len, one}, {n, 1}, DType::int32), time}, {n, t}, DType::int32);
    const Value at = l.apply(Op::select, {inside, back, l.tile(time, {n, 1})}, {n, t}, DType::int32);
    Value out = l.reshape(gather(l, l.reshape(v, {n, t, c}), at, n, t, c), v.dims);
    if (time_first) out = l.transpose(out, swap);
    return l.bind(node, 0, out);
}

}  // namespace

void add_gather(Table& table)
{
    // GATHER takes FP32, FP16 and integer values (not BOOL); indices INT32.
    table.emplace("Gather", Entry(lower_gather, number_values));
    table.emplace("GatherElements", Entry(lower_gather_elements, number_values));
    table.emplace("Compress", Entry(lower_compress, number_values | bool_values));  // a BOOL condition
    table.emplace("ReverseSequence", Entry(lower_reverse_sequence, number_values));
}

}  // namespace vaccel::onnx::lowering
