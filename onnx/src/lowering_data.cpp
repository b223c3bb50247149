// lowering_data.cpp - ONNX's data-movement ops and LayerNormalization.
//
// Decides:
//  - Slice (opset 10 on: starts, ends, axes, steps constant), step 1 only:
//    TOSA SLICE with the start and size ONNX's clamping rules give;
//  - Split: consecutive SLICEs of the sizes shape inference found;
//  - Pad, mode "constant" only, non-negative pads: TOSA PAD;
//  - Expand and Tile: TOSA TILE (Expand's multiples are the broadcast
//    factors of the input reshaped to the result's rank);
//  - LayerNormalization (opset 17): mean and variance over the axes from
//    `axis` on, (x - mean) * rsqrt(var + epsilon) * scale + B;
//  - Trilu: SELECT between the input and zero by a BOOL mask of its last
//    two dims, made at import (its k must be constant).
#include <algorithm>

#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

// A constant integer input (starts, pads, repeats, ...); nullopt when absent.
Result<std::optional<Dims>> ints_input(Lowering& l, const Node& node, int i)
{
    if (node.input_size() <= i || node.input(i).empty()) return std::optional<Dims>{};
    const ConstantData* c = l.constant_of(node.input(i));
    if (c == nullptr || c->type.elem == ::onnx::TensorProto::FLOAT)
        return fail(l.refuse(node, fmt::format("its input '{}' is not an integer constant (give "
                                               "its value when running: it determines a shape)",
                                               node.input(i))));
    return std::optional<Dims>{c->ints};
}

Status lower_slice(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    auto starts = ints_input(l, node, 1);
    if (!starts) return fail(starts.error());
    auto axes = ints_input(l, node, 3);
    if (!axes) return fail(axes.error());
    auto steps = ints_input(l, node, 4);
    if (!steps) return fail(steps.error());
    if (!*starts) return fail(l.refuse(node, "Slice before opset 10 (starts as an attribute) is not imported"));
    const std::size_t rank = x->dims.size();
    Dims which = axes->value_or(Dims{});
    if (which.empty())
        for (std::size_t a = 0; a < (*starts)->size(); ++a) which.push_back(static_cast<std::int64_t>(a));
    if (which.size() != (*starts)->size() || (*steps && (*steps)->size() != which.size()))
        return fail(l.refuse(node, "its starts, axes and steps differ in length"));
    Dims start(rank, 0);
    for (std::size_t k = 0; k < which.size(); ++k) {
        std::int64_t a = which[k] < 0 ? which[k] + static_cast<std::int64_t>(rank) : which[k];
        if (a < 0 || a >= static_cast<std::int64_t>(rank))
            return fail(l.refuse(node, "an axis is outside the input's rank"));
        if (*steps && (**steps)[k] != 1)
            return fail(l.refuse(node, "a step other than 1 is not imported yet"));
        const std::int64_t d = x->dims[static_cast<std::size_t>(a)];
        std::int64_t s = (**starts)[k];
        if (s < 0) s += d;
        start[static_cast<std::size_t>(a)] = std::clamp<std::int64_t>(s, 0, d);
    }
    for (std::size_t a = 0; a < rank; ++a)
        if (start[a] + (*dims)[a] > x->dims[a])
            return fail(l.refuse(node, "the inferred result runs past the input"));
    return l.bind(node, 0, l.slice(*x, start, *dims));
}

Status lower_split(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    std::int64_t axis = int_attr(node, "axis", 0);
    if (axis < 0) axis += static_cast<std::int64_t>(x->dims.size());
    if (axis < 0 || axis >= static_cast<std::int64_t>(x->dims.size()))
        return fail(l.refuse(node, "its axis is outside the input's rank"));
    Dims start(x->dims.size(), 0);
    for (int o = 0; o < node.output_size(); ++o) {
        auto dims = l.output_dims(node, o);
        if (!dims) return fail(dims.error());
        if (auto ok = l.bind(node, o, l.slice(*x, start, *dims)); !ok) return ok;
        start[static_cast<std::size_t>(axis)] += (*dims)[static_cast<std::size_t>(axis)];
    }
    return {};
}

Status lower_pad(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    const auto* mode = attribute(node, "mode");
    if (mode != nullptr && mode->s() != "constant")
        return fail(l.refuse(node, fmt::format("mode {} is not imported yet (only constant)", mode->s())));
    auto pads = ints_input(l, node, 1);
    if (!pads) return fail(pads.error());
    Dims given = pads->value_or(ints_attr(node, "pads").value_or(Dims{}));
    const std::size_t rank = x->dims.size();
    if (given.size() != 2 * rank) return fail(l.refuse(node, "its pads are not two per axis"));
    Dims padding;
    for (std::size_t a = 0; a < rank; ++a) {
        if (given[a] < 0 || given[a + rank] < 0)
            return fail(l.refuse(node, "negative pads (cropping) are not imported yet"));
        padding.push_back(given[a]);
        padding.push_back(given[a + rank]);
    }
    float value = float_attr(node, "value", 0.0f);
    if (node.input_size() > 2 && !node.input(2).empty()) {
        const ConstantData* c = l.constant_of(node.input(2));
        if (c == nullptr || c->floats.size() != 1)
            return fail(l.refuse(node, "its constant_value is not a FLOAT constant scalar"));
        value = c->floats[0];
    }
    Value out = l.tensor(*dims);
    l.builder().op(Op::pad, {x->tensor, l.shape_operand(padding), l.constant({1}, {value}).tensor},
                   {out.tensor});
    return l.bind(node, 0, out);
}

// Expand's and Tile's result: a TILE, or an IDENTITY when nothing repeats
// (the node's output is a tensor of its own).
Value tile(Lowering& l, Value x, const Dims& multiples, const Dims& dims)
{
    if (std::ranges::all_of(multiples, [](std::int64_t m) { return m == 1; }))
        return l.unary(Op::identity, l.reshape(x, dims), dims);
    return l.reshape(l.tile(x, multiples), dims);
}

Status lower_expand(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    Value v = l.to_rank(*x, dims->size());
    if (v.dims.size() != dims->size())
        return fail(l.refuse(node, "the input has more dimensions than the inferred result"));
    Dims multiples;
    for (std::size_t a = 0; a < dims->size(); ++a) {
        if (v.dims[a] != 1 && v.dims[a] != (*dims)[a])
            return fail(l.refuse(node, "the input does not broadcast to the inferred result"));
        multiples.push_back(v.dims[a] == 1 ? (*dims)[a] : 1);
    }
    return l.bind(node, 0, tile(l, v, multiples, *dims));
}

Status lower_tile(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    auto repeats = ints_input(l, node, 1);
    if (!repeats) return fail(repeats.error());
    if (!*repeats || (*repeats)->size() != x->dims.size())
        return fail(l.refuse(node, "its repeats are not one per axis"));
    return l.bind(node, 0, tile(l, *x, **repeats, *dims));
}

Status lower_layer_norm(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    const auto rank = static_cast<std::int64_t>(dims->size());
    std::int64_t axis = int_attr(node, "axis", -1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return fail(l.refuse(node, "its axis is outside the input's rank"));
    const float eps = float_attr(node, "epsilon", 1e-5f);
    auto mean_of = [&](Value v) {
        std::int64_t count = 1;
        for (std::int64_t a = axis; a < rank; ++a) {
            Dims reduced = v.dims;
            count *= reduced[static_cast<std::size_t>(a)];
            reduced[static_cast<std::size_t>(a)] = 1;
            v = l.unary(Op::reduce_sum, v, reduced, tosa::axis_attr(static_cast<std::int32_t>(a)));
        }
        return l.mul(v, l.scalar_like(1.0f / static_cast<float>(count), v.dims.size()), v.dims);
    };
    const Value mean = mean_of(*x);
    Value centred = l.binary(Op::sub, *x, mean, *dims);
    Value var = mean_of(l.mul(centred, centred, *dims));
    Value inv = l.unary(Op::rsqrt, l.binary(Op::add, var, l.scalar_like(eps, var.dims.size()), var.dims),
                        var.dims);
    Value y = l.mul(centred, inv, *dims);
    auto scale = l.input(node, 1);
    if (!scale) return fail(scale.error());
    y = l.mul(y, *scale, *dims);
    if (node.input_size() > 2 && !node.input(2).empty()) {
        auto bias = l.input(node, 2);
        if (!bias) return fail(bias.error());
        y = l.binary(Op::add, y, *bias, *dims);
    }
    // Mean and InvStdDev, when asked for: the input's dims with those from
    // the axis on reduced to 1, as mean_of leaves them.
    for (int o = 1; o < node.output_size() && o < 3; ++o) {
        if (node.output(o).empty()) continue;
        auto stat_dims = l.output_dims(node, o);
        if (!stat_dims) return fail(stat_dims.error());
        const Value& stat = o == 1 ? mean : inv;
        if (*stat_dims != stat.dims)
            return fail(l.refuse(node, fmt::format("output {} is not of the reduced input's shape", o)));
        if (auto bound = l.bind(node, o, stat); !bound) return bound;
    }
    return l.bind(node, 0, y);
}

// Trilu keeps the elements (i, j) of each matrix with j - i >= k (upper)
// or j - i <= k (lower) and zeroes the rest.
Status lower_trilu(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    if (dims->size() < 2) return fail(l.refuse(node, "its input has fewer than 2 dimensions"));
    auto k_input = ints_input(l, node, 1);
    if (!k_input) return fail(k_input.error());
    const std::int64_t k = *k_input && !(*k_input)->empty() ? (**k_input)[0] : 0;
    const bool upper = int_attr(node, "upper", 1) != 0;
    const std::int64_t rows = (*dims)[dims->size() - 2], cols = dims->back();
    std::vector<std::int64_t> keep(static_cast<std::size_t>(rows * cols));
    for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j)
            keep[static_cast<std::size_t>(i * cols + j)] = upper ? j - i >= k : j - i <= k;
    Dims mask_dims(dims->size() - 2, 1);
    mask_dims.push_back(rows);
    mask_dims.push_back(cols);
    Value mask = l.constant_ints(mask_dims, keep, tosa::DType::boolean);
    Value zero = l.constant_typed(Dims(dims->size(), 1), {0.0f}, x->dtype);
    return l.bind(node, 0, l.apply(Op::select, {mask, *x, zero}, *dims, x->dtype));
}

}  // namespace

void add_data(Table& table)
{
    table.emplace("Slice", Entry(lower_slice, any_values));
    table.emplace("Split", Entry(lower_split, any_values));
    table.emplace("Pad", lower_pad);
    table.emplace("Expand", Entry(lower_expand, any_values));
    table.emplace("Tile", Entry(lower_tile, any_values));
    table.emplace("LayerNormalization", lower_layer_norm);
    table.emplace("Trilu", Entry(lower_trilu, any_values));
}

}  // namespace vaccel::onnx::lowering
