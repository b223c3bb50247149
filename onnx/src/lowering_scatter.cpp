// lowering_scatter.cpp - GatherND, ScatterND, ScatterElements and Scatter
// with TOSA GATHER and SCATTER (lowering.hpp lists what each becomes).
//
// Decides:
//  - every index becomes one position in the data flattened to [N, K, C]
//    (TOSA's layout: N batches, K positions of C elements each): GatherND's
//    and ScatterND's index tuples address K = the product of the dims they
//    index, C the dims after; ScatterElements' indices address single
//    elements (C = 1), the position of each element of `indices` along
//    the other axes its own (a constant made at import) and along `axis`
//    the index;
//  - a negative index component counts from the end of its axis, computed
//    in the graph (INT32 SELECT, MUL, ADD), so indices may be computed at
//    run time; an index outside its axis at run time is the device's to
//    refuse (TOSA requires 0 <= position < K);
//  - the scatters write with reduction "none" only: TOSA SCATTER writes
//    each position once (ONNX leaves duplicate indices undefined there),
//    so the add, mul, max and min reductions, which combine duplicates, are
//    refused.
#include <numeric>

#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

using tosa::DType;

std::int64_t product(const Dims& dims, std::size_t from, std::size_t to)
{
    return std::accumulate(dims.begin() + static_cast<std::ptrdiff_t>(from),
                           dims.begin() + static_cast<std::ptrdiff_t>(to), std::int64_t{1},
                           std::multiplies<>());
}

// INT32 arithmetic on index tensors, whatever the node's own type.
struct IndexMath {
    Lowering& l;
    Value k(std::int64_t c, std::size_t rank) const { return l.constant_ints(Dims(rank, 1), {c}, DType::int32); }
    Value op(Op o, Value a, Value b, const Dims& dims) const
    {
        if (o == Op::mul) {
            Value out = l.tensor_of(dims, DType::int32);
            l.builder().op(Op::mul, {l.to_rank(a, dims.size()).tensor, l.to_rank(b, dims.size()).tensor, l.mul_shift()},
                           {out.tensor});
            return out;
        }
        return l.apply(o, {a, b}, dims, DType::int32);
    }
    // i, or i + extent where i < 0.
    Value from_start(Value i, std::int64_t extent) const
    {
        const std::size_t rank = i.dims.size();
        Value negative = l.apply(Op::greater, {k(0, rank), i}, i.dims, DType::boolean);
        return l.apply(Op::select, {negative, op(Op::add, i, k(extent, rank), i.dims), i}, i.dims, DType::int32);
    }
};

// The INT32 indices (input 1) of `node`.
Result<Value> indices_of(Lowering& l, const Node& node)
{
    auto i = l.input(node, 1);
    if (!i) return fail(i.error());
    if (i->dtype != DType::int32) return fail(l.refuse(node, "its indices are not integers"));
    return *i;
}

// The flat position in data dims [first, first + m) of each index tuple
// (the last dim of `indices`, m long): an INT32 tensor of indices' dims
// less the last.
Value tuple_positions(Lowering& l, const Value& indices, const Dims& data, std::size_t first)
{
    const IndexMath im{l};
    const std::size_t m = static_cast<std::size_t>(indices.dims.back());
    Dims rows = indices.dims;
    rows.back() = 1;
    Dims start(indices.dims.size(), 0);
    Value position;
    for (std::size_t j = 0; j < m; ++j) {
        start.back() = static_cast<std::int64_t>(j);
        Value part = im.from_start(l.slice(indices, start, rows), data[first + j]);
        const std::int64_t stride = product(data, first + j + 1, first + m);
        if (stride != 1) part = im.op(Op::mul, part, im.k(stride, rows.size()), rows);
        position = j == 0 ? part : im.op(Op::add, position, part, rows);
    }
    Dims out(indices.dims.begin(), indices.dims.end() - 1);
    return l.reshape(position, out);
}

Status lower_gather_nd(Lowering& l, const Node& node)
{
    auto data = l.input(node, 0);
    if (!data) return fail(data.error());
    auto indices = indices_of(l, node);
    if (!indices) return fail(indices.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    const auto b = static_cast<std::size_t>(int_attr(node, "batch_dims", 0));
    const Dims& d = data->dims;
    const Dims& i = indices->dims;
    if (i.empty() || b >= i.size() || b + static_cast<std::size_t>(i.back()) > d.size())
        return fail(l.refuse(node, "its index tuples are longer than the data has dims after batch_dims"));
    const std::size_t m = static_cast<std::size_t>(i.back());
    const std::int64_t n = product(d, 0, b), k = product(d, b, b + m), c = product(d, b + m, d.size());
    const std::int64_t w = product(i, b, i.size() - 1);
    Value at = l.reshape(tuple_positions(l, *indices, d, b), {n, w});
    Value out = l.tensor_of({n, w, c}, data->dtype);
    l.builder().op(Op::gather, {l.reshape(*data, {n, k, c}).tensor, at.tensor}, {out.tensor});
    return l.bind(node, 0, l.reshape(out, *dims));
}

// A scatter's data, indices and updates (inputs 0, 1, 2), refusing a
// reduction and indices that are not integers.
Result<Lowering::Operands> scatter_operands(Lowering& l, const Node& node)
{
    const auto* reduction = attribute(node, "reduction");
    if (reduction != nullptr && reduction->s() != "none")
        return fail(l.refuse(node, fmt::format("reduction {} combines writes to one position, which "
                                               "TOSA SCATTER does not; only reduction none is imported",
                                               reduction->s())));
    auto ops = l.operands(node, 3);
    if (!ops) return fail(ops.error());
    if (ops->in[1].dtype != DType::int32) return fail(l.refuse(node, "its indices are not integers"));
    return ops;
}

// SCATTER of `updates` [1, W, C] into data [1, K, C] at `positions` [1, W].
Status scatter(Lowering& l, const Node& node, const Value& data, Value positions, const Value& updates,
               std::int64_t k, std::int64_t w, std::int64_t c)
{
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    Value out = l.tensor_of({1, k, c}, data.dtype);
    l.builder().op(Op::scatter,
                   {l.reshape(data, {1, k, c}).tensor, l.reshape(positions, {1, w}).tensor,
                    l.reshape(updates, {1, w, c}).tensor},
                   {out.tensor});
    return l.bind(node, 0, l.reshape(out, *dims));
}

Status lower_scatter_nd(Lowering& l, const Node& node)
{
    auto ops = scatter_operands(l, node);
    if (!ops) return fail(ops.error());
    const Value &data = ops->in[0], &indices = ops->in[1], &updates = ops->in[2];
    const Dims& d = data.dims;
    const Dims& i = indices.dims;
    if (i.empty() || static_cast<std::size_t>(i.back()) > d.size())
        return fail(l.refuse(node, "its index tuples are longer than the data's rank"));
    const auto m = static_cast<std::size_t>(i.back());
    const std::int64_t k = product(d, 0, m), c = product(d, m, d.size()), w = product(i, 0, i.size() - 1);
    if (elements(updates.dims) != w * c) return fail(l.refuse(node, "its updates are not one block per index tuple"));
    return scatter(l, node, data, tuple_positions(l, indices, d, 0), updates, k, w, c);
}

// ScatterElements (and Scatter, its name before opset 11) along `axis`.
Status lower_scatter_elements(Lowering& l, const Node& node)
{
    auto ops = scatter_operands(l, node);
    if (!ops) return fail(ops.error());
    const Value &data = ops->in[0], &indices = ops->in[1], &updates = ops->in[2];
    const Dims& d = data.dims;
    const Dims& i = indices.dims;
    const std::size_t rank = d.size();
    std::int64_t axis = int_attr(node, "axis", 0);
    if (axis < 0) axis += static_cast<std::int64_t>(rank);
    if (axis < 0 || axis >= static_cast<std::int64_t>(rank) || i.size() != rank || updates.dims != i)
        return fail(l.refuse(node, "its axis, indices and updates do not fit its data"));
    const auto a = static_cast<std::size_t>(axis);
    for (std::size_t x = 0; x < rank; ++x)
        if (i[x] > d[x]) return fail(l.refuse(node, "its indices run past the data"));
    // Each element's position along the other axes, made here.
    std::vector<std::int64_t> base(static_cast<std::size_t>(elements(i)));
    for (std::size_t e = 0; e < base.size(); ++e) {
        std::int64_t rest = static_cast<std::int64_t>(e), position = 0;
        for (std::size_t x = rank; x-- > 0;) {
            const std::int64_t coordinate = rest % i[x];
            rest /= i[x];
            if (x != a) position += coordinate * product(d, x + 1, rank);
        }
        base[e] = position;
    }
    const IndexMath im{l};
    Value along = im.from_start(indices, d[a]);
    if (const std::int64_t stride = product(d, a + 1, rank); stride != 1)
        along = im.op(Op::mul, along, im.k(stride, rank), i);
    Value positions = im.op(Op::add, l.constant_ints(i, base, DType::int32), along, i);
    return scatter(l, node, data, positions, updates, elements(d), elements(i), 1);
}

}  // namespace

void add_scatter(Table& table)
{
    // GATHER and SCATTER take FP32, FP16 and integer values (not BOOL).
    table.emplace("GatherND", Entry(lower_gather_nd, number_values));
    table.emplace("ScatterND", Entry(lower_scatter_nd, number_values));
    table.emplace("ScatterElements", Entry(lower_scatter_elements, number_values));
    table.emplace("Scatter", Entry(lower_scatter_elements, number_values));
}

}  // namespace vaccel::onnx::lowering
