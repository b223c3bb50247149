// lowering_conv_transpose.cpp - ONNX's ConvTranspose as TOSA's
// TRANSPOSE_CONV2D.
//
// Decides:
//  - 2-D (and 1-D, as 2-D of height 1); 3-D is refused. A group other
//    than 1 is one TRANSPOSE_CONV2D per group over its slice of the input
//    channels and its block of the weights, CONCATenated along the
//    channels;
//  - geometry: ONNX places input pixel i's kernel tap k at output
//    i * stride + k * dilation - pad_begin, TOSA at i * stride + k +
//    out_pad_top, so out_pad = -pad_begin at the start and -pad_end +
//    output_padding at the end (TOSA allows a negative out_pad down to
//    minus the kernel); the pads come from `pads`, from `output_shape`
//    (its total split as ONNX says: the larger half at the start unless
//    auto_pad is SAME_UPPER; an output_shape larger than the taps reach
//    gets the rows past them as zeros at the end, as output_padding would)
//    or from auto_pad SAME_* (output = input * stride); the result must
//    have the dims shape inference gave;
//  - weights [C, M, KH, KW] become TOSA's [M, KH, KW, C] (no flip: both
//    place tap k the same way); dilation inserts zero taps into constant
//    weights at import (a dilated kernel is the kernel with d - 1 zeros
//    between taps); computed weights are transposed in the graph and
//    dilated there (each tap row padded with d - 1 zero rows, the last
//    ones sliced off).
#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

// [M, KH, KW, C] weights with d - 1 zero taps between taps along axis 1
// (`axis` 1) or 2: each tap gets d - 1 zero neighbours after it, and the
// ones after the last tap are cut off.
Value dilate(Lowering& l, Value w, std::size_t axis, std::int64_t d)
{
    if (d == 1) return w;
    Dims split = w.dims;
    split.insert(split.begin() + static_cast<std::ptrdiff_t>(axis) + 1, 1);
    Value spread = l.reshape(w, split);
    Dims padding(2 * split.size(), 0);
    padding[2 * (axis + 1) + 1] = d - 1;
    Dims padded = split;
    padded[axis + 1] = d;
    Value out = l.tensor(padded);
    l.builder().op(Op::pad, {spread.tensor, l.shape_operand(padding), l.constant({1}, {0.0f}).tensor},
                   {out.tensor});
    Dims joined = w.dims;
    joined[axis] *= d;
    Dims size = w.dims;
    size[axis] = (w.dims[axis] - 1) * d + 1;
    return l.slice(l.reshape(out, joined), Dims(4, 0), size);
}

Status lower_conv_transpose(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    auto w = l.input(node, 1);
    if (!w) return fail(w.error());
    const std::size_t rank = x->dims.size();
    if ((rank != 4 && rank != 3) || w->dims.size() != rank || dims->size() != rank)
        return fail(l.refuse(node, "only 1-D and 2-D transposed convolutions are imported"));
    // 1-D as 2-D of height 1: every per-axis list gets a leading entry.
    const bool one_d = rank == 3;
    const auto per_axis = [&](std::string_view name, std::int64_t otherwise) {
        Dims v = ints_attr(node, name).value_or(Dims(one_d ? 1 : 2, otherwise));
        if (one_d && v.size() == 1) v.insert(v.begin(), otherwise);
        return v;
    };
    const Dims in = one_d ? Dims{x->dims[0], x->dims[1], 1, x->dims[2]} : x->dims;
    const Dims out = one_d ? Dims{(*dims)[0], (*dims)[1], 1, (*dims)[2]} : *dims;
    const std::int64_t group = int_attr(node, "group", 1);
    // c input channels in all; m output channels per group.
    const std::int64_t c = w->dims[0], m = w->dims[1];
    if (group < 1 || c % group != 0)
        return fail(l.refuse(node, fmt::format("group {} does not divide its {} input channels", group, c)));
    const std::int64_t cg = c / group;
    const std::int64_t kernel[2] = {one_d ? 1 : w->dims[2], w->dims[rank - 1]};
    const Dims stride = per_axis("strides", 1), dilation = per_axis("dilations", 1);
    const Dims output_padding = per_axis("output_padding", 0);
    Dims pads = ints_attr(node, "pads").value_or(Dims(one_d ? 2 : 4, 0));
    if (one_d && pads.size() == 2) pads = {0, pads[0], 0, pads[1]};
    if (stride.size() != 2 || dilation.size() != 2 || output_padding.size() != 2 || pads.size() != 4 ||
        in[1] != c || out[1] != m * group)
        return fail(l.refuse(node, "its attributes do not fit its input and weights"));
    const auto* auto_pad = attribute(node, "auto_pad");
    const std::string mode = auto_pad != nullptr ? auto_pad->s() : "NOTSET";
    const auto output_shape = ints_attr(node, "output_shape");
    std::int32_t out_pad[4] = {};
    std::int64_t taps[2] = {};
    for (std::size_t a = 0; a < 2; ++a) {
        // A dilation past the output cannot place a second tap anywhere;
        // bounding it keeps the dilated kernel's size finite.
        if (stride[a] < 1 || dilation[a] < 1 || (kernel[a] > 1 && dilation[a] > out[a + 2]))
            return fail(l.refuse(node, fmt::format("stride {} or dilation {} along axis {} is "
                                                   "below 1 or past the output's {}",
                                                   stride[a], dilation[a], a + 2, out[a + 2])));
        taps[a] = (kernel[a] - 1) * dilation[a] + 1;
        const std::int64_t full = stride[a] * (in[a + 2] - 1) + output_padding[a] + taps[a];
        std::int64_t begin = pads[a], end = pads[a + 2];
        if (output_shape || mode == "SAME_UPPER" || mode == "SAME_LOWER") {
            // The total ONNX pads away to reach the wanted output.
            std::int64_t wanted = in[a + 2] * stride[a];
            if (output_shape) {
                const Dims& shape = *output_shape;
                wanted = shape[shape.size() - (one_d ? 1 : 2 - a)];
            }
            const std::int64_t total = full - wanted;
            begin = total < 0 ? 0 : mode == "SAME_UPPER" ? total / 2 : total - total / 2;
            end = total - begin;
        } else if (mode != "NOTSET" && mode != "VALID") {
            return fail(l.refuse(node, fmt::format("auto_pad {} is not an ONNX mode", mode)));
        }
        if (full - begin - end != out[a + 2])
            return fail(l.refuse(node, fmt::format("its output is {} along axis {} where shape "
                                                   "inference gave {}",
                                                   full - begin - end, a + 2, out[a + 2])));
        if (begin >= taps[a] || end - output_padding[a] >= taps[a])
            return fail(l.refuse(node, "its pads crop a whole kernel (TOSA 1.0 crops less)"));
        out_pad[2 * a] = static_cast<std::int32_t>(-begin);
        out_pad[2 * a + 1] = static_cast<std::int32_t>(output_padding[a] - end);
    }
    // Group g's weights [cg, M, KH, KW] (input channels g * cg on) ->
    // [M, KH', KW', cg], dilated by zero taps.
    const ConstantData* data = l.constant_of(node.input(1));
    if (data != nullptr && static_cast<std::int64_t>(data->floats.size()) != elements(w->dims))
        return fail(l.refuse(node, "its constant weights are not FLOAT values"));
    auto weights_of = [&](std::int64_t g) {
        if (data != nullptr) {
            const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
            std::vector<float> reordered(at(m * taps[0] * taps[1] * cg), 0.0f);
            for (std::int64_t ic = 0; ic < cg; ++ic)
                for (std::int64_t oc = 0; oc < m; ++oc)
                    for (std::int64_t y = 0; y < kernel[0]; ++y)
                        for (std::int64_t z = 0; z < kernel[1]; ++z)
                            reordered[at(((oc * taps[0] + y * dilation[0]) * taps[1] + z * dilation[1]) * cg + ic)] =
                                data->floats[at((((g * cg + ic) * m + oc) * kernel[0] + y) * kernel[1] + z)];
            return l.constant({m, taps[0], taps[1], cg}, std::move(reordered));
        }
        Value block = l.reshape(*w, {c, m, kernel[0], kernel[1]});
        if (group > 1) block = l.slice(block, {g * cg, 0, 0, 0}, {cg, m, kernel[0], kernel[1]});
        Value t = l.transpose(block, {1, 2, 3, 0});
        return dilate(l, dilate(l, t, 1, dilation[0]), 2, dilation[1]);
    };
    Value bias = l.constant({m * group}, std::vector<float>(static_cast<std::size_t>(m * group), 0.0f));
    if (node.input_size() > 2 && !node.input(2).empty()) {
        auto b = l.input(node, 2);
        if (!b) return fail(b.error());
        if (b->dims != Dims{m * group}) return fail(l.refuse(node, "its bias is not one value per output channel"));
        bias = *b;
    }
    const Value xt = l.to_channels_last(l.reshape(*x, in));
    const auto attrs = tosa::transpose_conv_attr({out_pad[0], out_pad[1], out_pad[2], out_pad[3]},
                                                 {static_cast<std::int32_t>(stride[0]), static_cast<std::int32_t>(stride[1])});
    std::vector<std::uint32_t> parts;
    for (std::int64_t g = 0; g < group; ++g) {
        const Value xg = group > 1 ? l.slice(xt, {0, 0, 0, g * cg}, {xt.dims[0], xt.dims[1], xt.dims[2], cg}) : xt;
        const Value bg = group > 1 ? l.slice(bias, {g * m}, {m}) : bias;
        const Value weights = weights_of(g);
        Value yg = l.tensor({out[0], out[2], out[3], m});
        l.builder().op(Op::transpose_conv2d, {xg.tensor, weights.tensor, bg.tensor, l.zero_point(), l.zero_point()},
                       {yg.tensor}, attrs);
        parts.push_back(yg.tensor);
    }
    Value yt{parts[0], {out[0], out[2], out[3], m * group}, l.element_type()};
    if (group > 1) {
        yt = l.tensor(yt.dims);
        l.builder().op(Op::concat, parts, {yt.tensor}, tosa::axis_attr(3));
    }
    return l.bind(node, 0, l.reshape(l.to_channels_first(yt), *dims));
}

}  // namespace

void add_conv_transpose(Table& table) { table.emplace("ConvTranspose", lower_conv_transpose); }

}  // namespace vaccel::onnx::lowering
