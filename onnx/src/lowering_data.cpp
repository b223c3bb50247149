// lowering_data.cpp - ONNX's data-movement ops.
//
// Decides:
//  - Slice (opset 10 on: starts, ends, axes, steps constant): TOSA SLICE
//    with the start and size ONNX's clamping rules give; an axis of
//    another step is strided by stride_axis (REVERSE first for a negative
//    one);
//  - Split: consecutive SLICEs of the sizes shape inference found;
//  - Pad: negative pads crop (SLICE); mode constant is TOSA PAD, edge,
//    reflect and wrap SLICE, REVERSE or TILE, and CONCAT per axis;
//  - Expand and Tile: TOSA TILE (Expand's multiples are the broadcast
//    factors of the input reshaped to the result's rank);
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

// Elements first, first + step, ... (count of them) of `v` along `axis`,
// step > 1: a SLICE of count * step elements (padded with zeros where the
// axis ends sooner), a RESHAPE that splits the axis into [count, step],
// a SLICE of the step's first index and a RESHAPE back.
Value stride_axis(Lowering& l, Value v, std::size_t axis, std::int64_t first, std::int64_t step,
                  std::int64_t count)
{
    const std::int64_t span = count * step, available = v.dims[axis] - first;
    Dims start(v.dims.size(), 0), size = v.dims;
    start[axis] = first;
    size[axis] = std::min(span, available);
    v = l.slice(v, start, size);
    if (available < span) {
        Dims padding(2 * v.dims.size(), 0);
        padding[2 * axis + 1] = span - available;
        Dims padded = v.dims;
        padded[axis] = span;
        Value out = l.tensor_of(padded, v.dtype);
        l.builder().op(Op::pad, {v.tensor, l.shape_operand(padding),
                                 l.constant_typed({1}, {0.0f}, v.dtype).tensor}, {out.tensor});
        v = out;
    }
    Dims split = v.dims;
    split[axis] = count;
    split.insert(split.begin() + static_cast<std::ptrdiff_t>(axis) + 1, step);
    Dims first_of_step = split;
    first_of_step[axis + 1] = 1;
    Value picked = l.slice(l.reshape(v, split), Dims(split.size(), 0), first_of_step);
    Dims result = v.dims;
    result[axis] = count;
    return l.reshape(picked, result);
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
    // Unit steps: one SLICE from `start`, of the inferred size. Other
    // steps keep their whole axis in it, then stride_axis takes every
    // step-th element (a negative step reverses the axis first).
    Dims start(rank, 0), size = *dims;
    struct Strided {
        std::size_t axis;
        std::int64_t first, step;
    };
    std::vector<Strided> strided;
    for (std::size_t k = 0; k < which.size(); ++k) {
        std::int64_t a = which[k] < 0 ? which[k] + static_cast<std::int64_t>(rank) : which[k];
        if (a < 0 || a >= static_cast<std::int64_t>(rank))
            return fail(l.refuse(node, "an axis is outside the input's rank"));
        const auto axis = static_cast<std::size_t>(a);
        const std::int64_t step = *steps ? (**steps)[k] : 1;
        if (step == 0) return fail(l.refuse(node, "a step is 0"));
        const std::int64_t d = x->dims[axis];
        std::int64_t s = (**starts)[k];
        if (s < 0) s += d;
        if (step == 1) {
            start[axis] = std::clamp<std::int64_t>(s, 0, d);
            continue;
        }
        size[axis] = d;
        // ONNX clamps a negative step's start to [0, d - 1].
        const std::int64_t first = step > 0 ? std::clamp<std::int64_t>(s, 0, d) : std::clamp<std::int64_t>(s, 0, d - 1);
        strided.push_back({axis, step > 0 ? first : d - 1 - first, step});
    }
    for (std::size_t a = 0; a < rank; ++a)
        if (start[a] + size[a] > x->dims[a])
            return fail(l.refuse(node, "the inferred result runs past the input"));
    Value v = l.slice(*x, start, size);
    for (const Strided& s : strided) {
        if (s.step < 0) v = l.unary(Op::reverse, v, v.dims, tosa::axis_attr(static_cast<std::int32_t>(s.axis)));
        v = stride_axis(l, v, s.axis, s.first, std::abs(s.step), (*dims)[s.axis]);
    }
    return l.bind(node, 0, v);
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

// One axis of Pad's edge, reflect or wrap modes: the parts before and
// after `v` along `axis`, CONCATenated with it. Edge repeats the outer
// element, reflect mirrors the elements next to it (not repeating it),
// wrap takes the other end's.
Value pad_axis(Lowering& l, Value v, std::size_t axis, std::int64_t before, std::int64_t after,
               std::string_view mode)
{
    const std::int64_t n = v.dims[axis];
    auto part = [&](std::int64_t from, std::int64_t count) {
        Dims start(v.dims.size(), 0), size = v.dims;
        start[axis] = from;
        size[axis] = count;
        return l.slice(v, start, size);
    };
    auto mirrored = [&](Value p) {
        return l.unary(Op::reverse, p, p.dims, tosa::axis_attr(static_cast<std::int32_t>(axis)));
    };
    auto repeated = [&](Value p, std::int64_t times) {
        Dims multiples(v.dims.size(), 1);
        multiples[axis] = times;
        return l.tile(p, multiples);
    };
    std::vector<std::uint32_t> parts;
    Dims dims = v.dims;
    dims[axis] += before + after;
    if (before > 0)
        parts.push_back((mode == "edge" ? repeated(part(0, 1), before)
                         : mode == "reflect" ? mirrored(part(1, before))
                                             : part(n - before, before)).tensor);
    parts.push_back(v.tensor);
    if (after > 0)
        parts.push_back((mode == "edge" ? repeated(part(n - 1, 1), after)
                         : mode == "reflect" ? mirrored(part(n - 1 - after, after))
                                             : part(0, after)).tensor);
    Value out = l.tensor_of(dims, v.dtype);
    l.builder().op(Op::concat, parts, {out.tensor}, tosa::axis_attr(static_cast<std::int32_t>(axis)));
    return out;
}

// Pad: negative pads crop first (a SLICE); then mode constant is one TOSA
// PAD, the others pad_axis per padded axis. Reflect needs more elements
// than it pads on each side, wrap at least as many.
Status lower_pad(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    const auto* mode_attr = attribute(node, "mode");
    const std::string mode = mode_attr != nullptr ? mode_attr->s() : "constant";
    if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
        return fail(l.refuse(node, fmt::format("mode {} is none of constant, edge, reflect and wrap", mode)));
    auto pads = ints_input(l, node, 1);
    if (!pads) return fail(pads.error());
    Dims given = pads->value_or(ints_attr(node, "pads").value_or(Dims{}));
    const std::size_t rank = x->dims.size();
    if (given.size() != 2 * rank) return fail(l.refuse(node, "its pads are not two per axis"));
    Value v = *x;
    Dims start(rank, 0), size = x->dims;
    bool crops = false;
    for (std::size_t a = 0; a < rank; ++a) {
        const std::int64_t cut = std::max<std::int64_t>(0, -given[a]) + std::max<std::int64_t>(0, -given[a + rank]);
        if (cut == 0) continue;
        if (cut > size[a]) return fail(l.refuse(node, fmt::format("its pads crop axis {} below nothing", a)));
        start[a] = std::max<std::int64_t>(0, -given[a]);
        size[a] -= cut;
        crops = true;
    }
    if (crops) v = l.slice(v, start, size);
    Dims padding;
    for (std::size_t a = 0; a < rank; ++a) {
        padding.push_back(std::max<std::int64_t>(0, given[a]));
        padding.push_back(std::max<std::int64_t>(0, given[a + rank]));
    }
    if (mode != "constant") {
        for (std::size_t a = 0; a < rank; ++a) {
            const std::int64_t before = padding[2 * a], after = padding[2 * a + 1];
            if (before == 0 && after == 0) continue;
            const std::int64_t n = v.dims[a];
            if (n == 0 || (mode == "reflect" && std::max(before, after) >= n) ||
                (mode == "wrap" && std::max(before, after) > n))
                return fail(l.refuse(node, fmt::format("mode {} pads axis {} of {} elements by {} and {}", mode,
                                                       a, n, before, after)));
            v = pad_axis(l, v, a, before, after, mode);
        }
        if (v.tensor == x->tensor) v = l.unary(Op::identity, v, *dims);
        return l.bind(node, 0, v);
    }
    double value = float_attr(node, "value", 0.0f);
    if (node.input_size() > 2 && !node.input(2).empty()) {
        const ConstantData* c = l.constant_of(node.input(2));
        if (c == nullptr || c->floats.size() + c->ints.size() != 1)
            return fail(l.refuse(node, "its constant_value is not a constant scalar"));
        value = c->floats.empty() ? static_cast<double>(c->ints[0]) : c->floats[0];
    }
    Value out = l.tensor(*dims);
    Value fill = x->dtype == tosa::DType::int32
                     ? l.constant_ints({1}, {static_cast<std::int64_t>(value)}, tosa::DType::int32)
                     : l.constant({1}, {static_cast<float>(value)});
    l.builder().op(Op::pad, {v.tensor, l.shape_operand(padding), fill.tensor}, {out.tensor});
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
    table.emplace("Pad", Entry(lower_pad, fp32_values | int_values));
    table.emplace("Expand", Entry(lower_expand, any_values));
    table.emplace("Tile", Entry(lower_tile, any_values));
    table.emplace("Trilu", Entry(lower_trilu, any_values));
}

}  // namespace vaccel::onnx::lowering
