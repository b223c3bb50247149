// lowering_nn.cpp - ONNX's network ops: convolutions, pools, batch
// normalization, reductions, activations with parameters, Concat.
//
// Decides:
//  - layout: ONNX is NCHW, TOSA's CONV2D and pools NHWC; each such node is
//    a TRANSPOSE in, the operator, a TRANSPOSE out (the graph's own inputs
//    and outputs stay NCHW);
//  - Conv: 2-D, group 1 (CONV2D, weights reordered OIHW -> OHWI at import)
//    or depthwise (group = input channels, one weight channel each:
//    DEPTHWISE_CONV2D, weights to [KH, KW, C, M/C]); other groups are
//    refused; constant weights are reordered at import, others by a
//    TRANSPOSE in the graph;
//  - padding: ONNX pads [top, left, bottom, right] (or auto_pad's SAME_*)
//    become TOSA's [top, bottom, left, right]; the bottom and right pads
//    are then set so the window count is exactly the inferred result's
//    (TOSA needs the division exact: floor and ceil_mode both land there);
//    input rows or columns past the last window (a stride that does not
//    divide the input, as ResNet's 1x1 stride-2 shortcut) are cut off by a
//    SLICE first, since TOSA's pads cannot be negative;
//  - BatchNormalization (inference): folded into one MUL and one ADD by
//    per-channel constants (scale / sqrt(var + eps), bias - mean * that);
//  - Reduce{Sum,Mean,Max,Min,Prod,SumSquare,L1,L2,LogSum,LogSumExp}: one
//    TOSA reduction per axis (they keep the axis), then a RESHAPE when
//    keepdims is 0;
//  - Clip (CLAMP), LeakyRelu (x + (alpha - 1) min(x, 0)), HardSigmoid,
//    HardSwish, Dropout (its output is its input; the mask is refused).
#include <cmath>
#include <limits>

#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

constexpr float infinity = std::numeric_limits<float>::infinity();

Value to_nhwc(Lowering& l, Value v) { return l.to_channels_last(v); }
Value to_nchw(Lowering& l, Value v) { return l.to_channels_first(v); }

// The window of a 2-D convolution or pool in TOSA's terms.
struct Window {
    std::vector<std::int32_t> kernel, stride, dilation, pad;  // pad: top, bottom, left, right
    std::int64_t crop[2] = {0, 0};  // input rows, columns past the last window
};

// The NHWC input without the rows and columns no window reads.
Value cropped(Lowering& l, Value nhwc, const Window& w)
{
    if (w.crop[0] == 0 && w.crop[1] == 0) return nhwc;
    Dims size = nhwc.dims;
    size[1] -= w.crop[0];
    size[2] -= w.crop[1];
    return l.slice(nhwc, Dims(4, 0), size);
}

Result<Window> window_of(Lowering& l, const Node& node, const Dims& in, const Dims& out,
                         const Dims& kernel)
{
    Window w;
    // A 1-D window (a 3-D input the caller gave a height of 1) is the 2-D
    // window of height 1: each 1-D attribute gets that axis.
    Dims strides = ints_attr(node, "strides").value_or(Dims{1, 1});
    Dims dilations = ints_attr(node, "dilations").value_or(Dims{1, 1});
    Dims pads = ints_attr(node, "pads").value_or(Dims{0, 0, 0, 0});
    Dims lifted = kernel;
    if (lifted.size() == 1) lifted = {1, kernel[0]};
    if (strides.size() == 1) strides = {1, strides[0]};
    if (dilations.size() == 1) dilations = {1, dilations[0]};
    if (pads.size() == 2) pads = {0, pads[0], 0, pads[1]};
    if (lifted.size() != 2 || strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
        return fail(l.refuse(node, "only 1-D and 2-D windows are imported"));
    const auto* auto_pad = attribute(node, "auto_pad");
    const std::string mode = auto_pad != nullptr ? auto_pad->s() : "NOTSET";
    for (std::size_t a = 0; a < 2; ++a) {
        const std::int64_t k = (lifted[a] - 1) * dilations[a] + 1;
        // What the inferred result needs padded in all along this axis.
        const std::int64_t total = (out[a + 2] - 1) * strides[a] + k - in[a + 2];
        if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
            const std::int64_t t = std::max<std::int64_t>(total, 0);
            pads[a] = mode == "SAME_UPPER" ? t / 2 : t - t / 2;
        } else if (mode == "VALID") {
            pads[a] = 0;
        } else if (mode != "NOTSET") {
            return fail(l.refuse(node, fmt::format("auto_pad {} is not an ONNX mode", mode)));
        }
        const std::int64_t end = total - pads[a];
        if (end < 0 && -end >= in[a + 2])
            return fail(l.refuse(node, "no window of the inferred result reads the input"));
        pads[a + 2] = std::max<std::int64_t>(end, 0);
        w.crop[a] = std::max<std::int64_t>(-end, 0);
        w.kernel.push_back(static_cast<std::int32_t>(lifted[a]));
        w.stride.push_back(static_cast<std::int32_t>(strides[a]));
        w.dilation.push_back(static_cast<std::int32_t>(dilations[a]));
    }
    w.pad = {static_cast<std::int32_t>(pads[0]), static_cast<std::int32_t>(pads[2]),
             static_cast<std::int32_t>(pads[1]), static_cast<std::int32_t>(pads[3])};
    return w;
}

// Conv's weights for TOSA: reordered at import when they are FLOAT
// constants, by a TRANSPOSE in the graph when they are computed, given as
// inputs or integers.
Result<Value> conv_weights(Lowering& l, const Node& node, const Value* w, const ConstantData* data, bool depthwise,
                           std::int64_t c)
{
    const std::int64_t m = w->dims[0], cg = w->dims[1], kh = w->dims[2], kw = w->dims[3];
    if (data == nullptr) {
        if (!depthwise) return l.transpose(*w, {0, 2, 3, 1});  // OIHW -> OHWI
        return l.transpose(l.reshape(*w, {c, m / c, kh, kw}), {2, 3, 0, 1});
    }
    if (static_cast<std::int64_t>(data->floats.size()) != elements(w->dims))
        return fail(l.refuse(node, "its constant weights are not FLOAT values"));
    std::vector<float> reordered(data->floats.size());
    const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
    if (!depthwise) {  // OIHW -> OHWI
        for (std::int64_t o = 0; o < m; ++o)
            for (std::int64_t i = 0; i < cg; ++i)
                for (std::int64_t y = 0; y < kh; ++y)
                    for (std::int64_t z = 0; z < kw; ++z)
                        reordered[at(((o * kh + y) * kw + z) * cg + i)] =
                            data->floats[at(((o * cg + i) * kh + y) * kw + z)];
        return l.constant({m, kh, kw, cg}, std::move(reordered));
    }
    const std::int64_t mult = m / c;  // [C * mult, 1, KH, KW] -> [KH, KW, C, mult]
    for (std::int64_t ch = 0; ch < c; ++ch)
        for (std::int64_t j = 0; j < mult; ++j)
            for (std::int64_t y = 0; y < kh; ++y)
                for (std::int64_t z = 0; z < kw; ++z)
                    reordered[at(((y * kw + z) * c + ch) * mult + j)] =
                        data->floats[at(((ch * mult + j) * kh + y) * kw + z)];
    return l.constant({kh, kw, c, mult}, std::move(reordered));
}

}  // namespace

// [N, C, W] as [N, C, 1, W] (a 1-D window's input, result or weights).
Dims lift_dims(const Dims& d) { return {d[0], d[1], 1, d[2]}; }
Value lift_1d(Lowering& l, const Value& v) { return l.reshape(v, lift_dims(v.dims)); }

Result<Value> conv2d(Lowering& l, const Node& node, const Value& x, const Value& w, const ConstantData* w_data,
                     const std::optional<Value>& bias, const Int8Zeros* zeros)
{
    auto out = l.output_dims(node);
    if (!out) return fail(out.error());
    // 1-D (3-D input and weights): the 2-D convolution of height 1.
    if (x.dims.size() == 3 && w.dims.size() == 3 && out->size() == 3) {
        auto y = conv2d(l, node, lift_1d(l, x), lift_1d(l, w), w_data, bias, zeros, lift_dims(*out));
        if (!y) return fail(y.error());
        return l.reshape(*y, *out);
    }
    return conv2d(l, node, x, w, w_data, bias, zeros, *out);
}

// A grouped convolution (neither 1 nor depthwise) is one CONV2D per group
// over its slice of the NHWC input's channels and its block of output
// channels (contiguous in OIHW weights: constant ones are sliced at
// import), CONCATenated along the channels.
Result<Value> conv2d(Lowering& l, const Node& node, const Value& x, const Value& w, const ConstantData* w_data,
                     const std::optional<Value>& bias, const Int8Zeros* zeros, const Dims& out_dims)
{
    const Dims* dims = &out_dims;
    if (x.dims.size() != 4 || w.dims.size() != 4)
        return fail(l.refuse(node, "only 1-D and 2-D convolutions (3-D or 4-D input and weights) are imported"));
    const std::int64_t group = int_attr(node, "group", 1), c = x.dims[1];
    const std::int64_t m = w.dims[0], cg = w.dims[1];
    const bool depthwise = group != 1 && group == c && cg == 1 && m % c == 0;
    if (group < 1 || c % group != 0 || m % group != 0 || cg * group != c)
        return fail(l.refuse(node, fmt::format("group {} does not divide its {} input channels and {} output "
                                               "channels into groups of {} weight channels",
                                               group, c, m, cg)));
    auto win = window_of(l, node, x.dims, *dims, {w.dims[2], w.dims[3]});
    if (!win) return fail(win.error());
    const tosa::DType acc = zeros != nullptr ? tosa::DType::int32 : tosa::DType::fp32;
    Value b = zeros != nullptr ? l.constant_ints({m}, std::vector<std::int64_t>(static_cast<std::size_t>(m), 0), acc)
                               : l.constant({m}, std::vector<float>(static_cast<std::size_t>(m), 0.0f));
    if (bias) {
        if (bias->dims != Dims{m}) return fail(l.refuse(node, "its bias is not one value per output channel"));
        b = *bias;
    }
    const Value xt = cropped(l, to_nhwc(l, x), *win);
    const std::uint32_t x_zero = zeros != nullptr ? zeros->a : l.zero_point();
    const std::uint32_t w_zero = zeros != nullptr ? zeros->b : l.zero_point();
    const tosa::DType out_type = zeros != nullptr ? acc : l.element_type();
    const auto attrs = tosa::conv_attr(win->pad, win->stride, win->dilation, acc);
    const std::int64_t groups = depthwise ? 1 : group, mg = m / groups;
    std::vector<std::uint32_t> parts;
    for (std::int64_t g = 0; g < groups; ++g) {
        Value xg = xt, wg = w, bg = b;
        std::optional<ConstantData> wg_data;
        if (groups > 1) {
            xg = l.slice(xt, {0, 0, 0, g * cg}, {xt.dims[0], xt.dims[1], xt.dims[2], cg});
            wg = l.slice(w, {g * mg, 0, 0, 0}, {mg, cg, w.dims[2], w.dims[3]});
            bg = l.slice(b, {g * mg}, {mg});
            if (w_data != nullptr && !w_data->floats.empty()) {
                const auto block = static_cast<std::size_t>(elements(wg.dims));
                wg_data = ConstantData{{w_data->type.elem, wg.dims},
                                       {w_data->floats.begin() + static_cast<std::ptrdiff_t>(g) * static_cast<std::ptrdiff_t>(block),
                                        w_data->floats.begin() + static_cast<std::ptrdiff_t>(g + 1) * static_cast<std::ptrdiff_t>(block)},
                                       {}};
            }
        }
        const ConstantData* data = groups > 1 ? (wg_data ? &*wg_data : nullptr) : w_data;
        auto weights = conv_weights(l, node, &wg, data, depthwise, c);
        if (!weights) return fail(weights.error());
        Value yg = l.tensor_of({(*dims)[0], (*dims)[2], (*dims)[3], mg}, out_type);
        l.builder().op(depthwise ? Op::depthwise_conv2d : Op::conv2d, {xg.tensor, weights->tensor, bg.tensor, x_zero, w_zero},
                       {yg.tensor}, attrs);
        parts.push_back(yg.tensor);
    }
    Value yt = l.tensor_of({(*dims)[0], (*dims)[2], (*dims)[3], m}, out_type);
    if (parts.size() == 1) yt.tensor = parts[0];
    else l.builder().op(Op::concat, parts, {yt.tensor}, tosa::axis_attr(3));
    return to_nchw(l, yt);
}

namespace {

Status lower_conv(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto w = l.input(node, 1);
    if (!w) return fail(w.error());
    std::optional<Value> bias;
    if (node.input_size() > 2 && !node.input(2).empty()) {
        auto b = l.input(node, 2);
        if (!b) return fail(b.error());
        bias = *b;
    }
    auto y = conv2d(l, node, *x, *w, l.constant_of(node.input(1)), bias, nullptr);
    if (!y) return fail(y.error());
    return l.bind(node, 0, *y);
}

Status pool(Lowering& l, const Node& node, Op op, bool global)
{
    auto in = l.input(node, 0);
    if (!in) return fail(in.error());
    auto out = l.output_dims(node);
    if (!out) return fail(out.error());
    // A 1-D pool (3-D input) is the 2-D pool of height 1.
    const bool one_d = in->dims.size() == 3 && out->size() == 3;
    if (in->dims.size() != 4 && !one_d) return fail(l.refuse(node, "only 1-D and 2-D pools (3-D or 4-D input) are imported"));
    const std::optional<Value> x = one_d ? lift_1d(l, *in) : *in;
    const std::optional<Dims> dims = one_d ? lift_dims(*out) : *out;
    if (node.output_size() > 1 && !node.output(1).empty())
        return fail(l.refuse(node, "its Indices output is not imported"));
    Window win;
    if (global) {
        win = {{static_cast<std::int32_t>(x->dims[2]), static_cast<std::int32_t>(x->dims[3])},
               {1, 1}, {1, 1}, {0, 0, 0, 0}};
    } else {
        const Dims kernel = ints_attr(node, "kernel_shape").value_or(Dims{});
        if (const Dims d = ints_attr(node, "dilations").value_or(Dims{}); std::ranges::any_of(d, [](std::int64_t v) { return v != 1; }))
            return fail(l.refuse(node, "dilated pools are not imported"));
        auto w = window_of(l, node, x->dims, *dims, kernel);
        if (!w) return fail(w.error());
        win = *w;
    }
    Value xt = cropped(l, to_nhwc(l, *x), win);
    // TOSA averages over the input's own elements; counting the padding
    // in is averaging over an input padded with zeros beforehand.
    if (op == Op::avg_pool2d && int_attr(node, "count_include_pad", 0) != 0 &&
        std::ranges::any_of(win.pad, [](std::int32_t p) { return p != 0; })) {
        const Dims padding{0, 0, win.pad[0], win.pad[1], win.pad[2], win.pad[3], 0, 0};
        Dims padded = xt.dims;
        padded[1] += win.pad[0] + win.pad[1];
        padded[2] += win.pad[2] + win.pad[3];
        Value out = l.tensor(padded);
        l.builder().op(Op::pad, {xt.tensor, l.shape_operand(padding), l.constant({1}, {0.0f}).tensor}, {out.tensor});
        xt = out;
        win.pad = {0, 0, 0, 0};
    }
    // An 8-bit MaxPool (carried as INT32) runs on INT8: UINT8 shifted by
    // -128, which keeps the order, and back.
    const auto type = l.model().type_of(node.input(0));
    const bool narrow = x->dtype == tosa::DType::int32;
    const std::int64_t shift = type && type->elem == ::onnx::TensorProto::UINT8 ? 128 : 0;
    if (narrow) {
        if (op != Op::max_pool2d || !type ||
            (type->elem != ::onnx::TensorProto::UINT8 && type->elem != ::onnx::TensorProto::INT8))
            return fail(l.refuse(node, "of integers only an 8-bit MaxPool is imported"));
        const Dims ones(4, 1);
        if (shift != 0)
            xt = l.apply(Op::sub, {xt, l.constant_ints(ones, {shift}, tosa::DType::int32)}, xt.dims, tosa::DType::int32);
        xt = l.apply(Op::cast, {xt}, xt.dims, tosa::DType::int8);
    }
    Value yt = l.tensor_of({(*dims)[0], (*dims)[2], (*dims)[3], (*dims)[1]}, narrow ? tosa::DType::int8 : l.element_type());
    auto attrs = tosa::pool_attr(win.kernel, win.stride, win.pad, narrow ? tosa::DType::int32 : tosa::DType::fp32);
    if (op == Op::avg_pool2d)
        l.builder().op(op, {xt.tensor, l.zero_point(), l.zero_point()}, {yt.tensor}, attrs);
    else
        l.builder().op(op, {xt.tensor}, {yt.tensor}, attrs);
    if (narrow) {
        yt = l.apply(Op::cast, {yt}, yt.dims, tosa::DType::int32);
        if (shift != 0)
            yt = l.apply(Op::add, {yt, l.constant_ints(Dims(4, 1), {shift}, tosa::DType::int32)}, yt.dims, tosa::DType::int32);
    }
    Value y = to_nchw(l, yt);
    return l.bind(node, 0, one_d ? l.reshape(y, *out) : y);
}

Status lower_batch_norm(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    if (int_attr(node, "training_mode", 0) != 0) return batch_norm_training(l, node);
    if (node.output_size() > 1)
        return fail(l.refuse(node, "running statistics as outputs outside training mode (before opset 14) are not "
                                   "imported"));
    if (x->dims.size() < 2 || node.input_size() < 5)
        return fail(l.refuse(node, "it needs an input of rank 2 or more and four parameters"));
    const float eps = float_attr(node, "epsilon", 1e-5f);
    const std::int64_t channels = x->dims[1];
    Dims per_channel(x->dims.size(), 1);
    per_channel[1] = channels;
    // Known parameters fold to one scale and one shift per channel here;
    // computed ones make the same two in the graph.
    const ConstantData* p[4] = {};
    bool known = true;
    for (int i = 0; i < 4; ++i) {
        p[i] = l.constant_of(node.input(i + 1));
        known = known && p[i] != nullptr && p[i]->floats.size() == static_cast<std::size_t>(channels);
    }
    Value k, shift;
    if (known) {
        std::vector<float> kv(static_cast<std::size_t>(channels)), sv(kv.size());
        for (std::size_t i = 0; i < kv.size(); ++i) {
            kv[i] = p[0]->floats[i] / std::sqrt(p[3]->floats[i] + eps);
            sv[i] = p[1]->floats[i] - p[2]->floats[i] * kv[i];
        }
        k = l.constant(per_channel, std::move(kv));
        shift = l.constant(per_channel, std::move(sv));
    } else {
        Value q[4];
        for (int i = 0; i < 4; ++i) {
            auto v = l.input(node, i + 1);
            if (!v) return fail(v.error());
            if (elements(v->dims) != channels)
                return fail(l.refuse(node, "scale, B, mean and var must hold one value per channel"));
            q[i] = l.reshape(*v, per_channel);
        }
        Value inv = l.unary(Op::rsqrt, l.binary(Op::add, q[3], l.scalar_like(eps, per_channel.size()), per_channel),
                            per_channel);
        k = l.mul(q[0], inv, per_channel);
        shift = l.binary(Op::sub, q[1], l.mul(q[2], k, per_channel), per_channel);
    }
    Value scaled = l.mul(*x, k, *dims);
    return l.bind(node, 0, l.binary(Op::add, scaled, shift, *dims));
}

// The axes of a Reduce* node (attribute, or input 1 from opset 13's
// ReduceSum on), normalized and sorted; empty means every axis unless
// noop_with_empty_axes.
Result<Dims> reduce_axes(Lowering& l, const Node& node, std::size_t rank)
{
    Dims axes = ints_attr(node, "axes").value_or(Dims{});
    if (node.input_size() > 1 && !node.input(1).empty()) {
        const ConstantData* given = l.constant_of(node.input(1));
        if (given == nullptr) return fail(l.refuse(node, "its axes are not a constant"));
        axes = given->ints;
    }
    if (axes.empty() && int_attr(node, "noop_with_empty_axes", 0) == 0)
        for (std::size_t a = 0; a < rank; ++a) axes.push_back(static_cast<std::int64_t>(a));
    for (std::int64_t& a : axes) {
        if (a < 0) a += static_cast<std::int64_t>(rank);
        if (a < 0 || a >= static_cast<std::int64_t>(rank))
            return fail(l.refuse(node, "an axis is outside the input's rank"));
    }
    std::ranges::sort(axes);
    return axes;
}

enum class Reduction { sum, mean, max, min, prod, sum_square, l1, l2, log_sum, log_sum_exp };

Lower reduce(Reduction kind)
{
    return [kind](Lowering& l, const Node& node) -> Status {
        auto x = l.input(node, 0);
        if (!x) return fail(x.error());
        auto dims = l.output_dims(node);
        if (!dims) return fail(dims.error());
        auto axes = reduce_axes(l, node, x->dims.size());
        if (!axes) return fail(axes.error());
        Value v = *x;
        if (kind == Reduction::sum_square) v = l.mul(v, v, v.dims);
        if (kind == Reduction::l1 || kind == Reduction::l2) {
            v = l.unary(Op::abs, v, v.dims);
            if (kind == Reduction::l2) v = l.mul(v, v, v.dims);
        }
        if (kind == Reduction::log_sum_exp) v = l.unary(Op::exp, v, v.dims);
        const Op op = kind == Reduction::max    ? Op::reduce_max
                      : kind == Reduction::min  ? Op::reduce_min
                      : kind == Reduction::prod ? Op::reduce_product
                                                : Op::reduce_sum;
        std::int64_t count = 1;
        for (std::int64_t a : *axes) {
            Dims reduced = v.dims;
            count *= reduced[static_cast<std::size_t>(a)];
            reduced[static_cast<std::size_t>(a)] = 1;
            auto attr = tosa::axis_attr(static_cast<std::int32_t>(a));
            if (op == Op::reduce_max || op == Op::reduce_min) attr.nan_mode = nan_propagate;
            v = l.unary(op, v, reduced, attr);
        }
        if (kind == Reduction::mean)
            v = l.mul(v, l.scalar_like(1.0f / static_cast<float>(count), v.dims.size()), v.dims);
        if (kind == Reduction::l2) v = l.binary(Op::pow, v, l.scalar_like(0.5f, v.dims.size()), v.dims);
        if (kind == Reduction::log_sum || kind == Reduction::log_sum_exp)
            v = l.unary(Op::log, v, v.dims);
        Value out = l.reshape(v, *dims);
        if (out.tensor == x->tensor) out = l.unary(Op::identity, out, *dims);
        return l.bind(node, 0, out);
    };
}

// A bound of Clip: input `i` (opset 11 on) or the attribute (floats
// only); nullopt where neither is given.
Result<std::optional<double>> clip_bound(Lowering& l, const Node& node, int i, const char* name)
{
    if (node.input_size() > i && !node.input(i).empty()) {
        const ConstantData* c = l.constant_of(node.input(i));
        if (c == nullptr || c->floats.size() + c->ints.size() != 1)
            return fail(l.refuse(node, fmt::format("its {} is not a constant scalar", name)));
        return std::optional<double>(c->floats.empty() ? static_cast<double>(c->ints[0]) : c->floats[0]);
    }
    if (attribute(node, name) != nullptr) return std::optional<double>(float_attr(node, name, 0.0f));
    return std::optional<double>{};
}

// Clip: CLAMP for floats; for integers MAXIMUM and MINIMUM with the bounds
// given (an absent bound is the type's own, which its values already keep).
Status lower_clip(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    auto lo = clip_bound(l, node, 1, "min");
    if (!lo) return fail(lo.error());
    auto hi = clip_bound(l, node, 2, "max");
    if (!hi) return fail(hi.error());
    if (x->dtype != tosa::DType::int32)
        return l.bind(node, 0, l.unary(Op::clamp, *x, *dims,
                                       tosa::clamp_f32_attr(static_cast<float>(lo->value_or(-infinity)),
                                                            static_cast<float>(hi->value_or(infinity)))));
    Value y = l.to_rank(*x, dims->size());
    const Dims ones(dims->size(), 1);
    auto bound = [&](double b) { return l.constant_ints(ones, {static_cast<std::int64_t>(b)}, tosa::DType::int32); };
    if (*lo) y = l.binary(Op::maximum, y, bound(**lo), *dims);
    if (*hi) y = l.binary(Op::minimum, y, bound(**hi), *dims);
    if (y.tensor == x->tensor) y = l.unary(Op::identity, y, *dims);
    return l.bind(node, 0, y);
}

Status lower_leaky_relu(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    const float alpha = float_attr(node, "alpha", 0.01f);
    const std::size_t rank = dims->size();
    Value negative = l.binary(Op::minimum, *x, l.scalar_like(0.0f, rank), *dims);
    Value scaled = l.mul(negative, l.scalar_like(alpha - 1.0f, rank), *dims);
    return l.bind(node, 0, l.binary(Op::add, *x, scaled, *dims));
}

// max(0, min(1, alpha x + beta)), times x for HardSwish.
Lower hard_sigmoid(bool swish)
{
    return [swish](Lowering& l, const Node& node) -> Status {
        auto x = l.input(node, 0);
        if (!x) return fail(x.error());
        auto dims = l.output_dims(node);
        if (!dims) return fail(dims.error());
        const float alpha = swish ? 1.0f / 6.0f : float_attr(node, "alpha", 0.2f);
        const float beta = swish ? 0.5f : float_attr(node, "beta", 0.5f);
        const std::size_t rank = dims->size();
        Value y = l.mul(*x, l.scalar_like(alpha, rank), *dims);
        y = l.binary(Op::add, y, l.scalar_like(beta, rank), *dims);
        y = l.unary(Op::clamp, y, *dims, tosa::clamp_f32_attr(0.0f, 1.0f));
        if (swish) y = l.mul(*x, y, *dims);
        return l.bind(node, 0, y);
    };
}

// Dropout at inference: its input, and a mask of all true. In training
// mode (input 2 true) it draws random numbers unless its ratio is 0.
Status lower_dropout(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    auto known = [&](int i) -> const ConstantData* {
        return node.input_size() > i && !node.input(i).empty() ? l.constant_of(node.input(i)) : nullptr;
    };
    if (node.input_size() > 2 && !node.input(2).empty()) {
        const ConstantData* training = known(2);
        if (training == nullptr || training->ints.size() != 1)
            return fail(l.refuse(node, "its training_mode is not a constant (give its value when running)"));
        if (training->ints[0] != 0) {
            const ConstantData* ratio = known(1);
            const bool none_dropped = ratio != nullptr && ratio->floats.size() == 1 && ratio->floats[0] == 0.0f;
            if (!none_dropped)
                return fail(l.refuse(node, "in training mode with a ratio other than a constant 0 it "
                                           "drops random elements, which an imported graph cannot draw"));
        }
    }
    if (node.output_size() > 1 && !node.output(1).empty()) {
        auto mask = l.output_dims(node, 1);
        if (!mask) return fail(mask.error());
        std::vector<std::int64_t> all(static_cast<std::size_t>(elements(*mask)), 1);
        if (auto bound = l.bind(node, 1, l.constant_ints(*mask, all, tosa::DType::boolean)); !bound) return bound;
    }
    return l.bind(node, 0, l.unary(Op::identity, *x, *dims));
}

Status lower_concat(Lowering& l, const Node& node)
{
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    std::int64_t axis = int_attr(node, "axis", 0);
    if (axis < 0) axis += static_cast<std::int64_t>(dims->size());
    if (axis < 0 || axis >= static_cast<std::int64_t>(dims->size()))
        return fail(l.refuse(node, "its axis is outside the result's rank"));
    std::vector<std::uint32_t> inputs;
    for (int i = 0; i < node.input_size(); ++i) {
        auto v = l.input(node, i);
        if (!v) return fail(v.error());
        if (elements(v->dims) == 0) continue;  // adds nothing
        inputs.push_back(v->tensor);
    }
    Value out = l.tensor(*dims);
    l.builder().op(Op::concat, inputs, {out.tensor}, tosa::axis_attr(static_cast<std::int32_t>(axis)));
    return l.bind(node, 0, out);
}

// ArgMax, and ArgMin as the ArgMax of the order turned over (-x for
// floats, -1 - x for integers, which cannot overflow); the last index of
// ties (select_last_index) as the first of the axis reversed, counted back.
Lower arg_extreme(bool min)
{
    return [min](Lowering& l, const Node& node) -> Status {
        auto x = l.input(node, 0);
        if (!x) return fail(x.error());
        auto dims = l.output_dims(node);
        if (!dims) return fail(dims.error());
        const auto rank = static_cast<std::int64_t>(x->dims.size());
        std::int64_t axis = int_attr(node, "axis", 0);
        if (axis < -rank || axis >= rank)
            return fail(l.refuse(node, fmt::format("axis {} is outside rank {}", axis, rank)));
        if (axis < 0) axis += rank;
        const bool last = int_attr(node, "select_last_index", 0) != 0;
        const tosa::DType index_type = l.element_type();
        l.set_element_type(x->dtype);
        Value v = *x;
        if (min)
            v = x->dtype == tosa::DType::int32
                    ? l.binary(Op::sub, l.scalar_like(-1.0f, v.dims.size()), v, v.dims)
                    : l.unary(Op::negate, v, v.dims);
        const auto a = static_cast<std::int32_t>(axis);
        if (last) v = l.unary(Op::reverse, v, v.dims, tosa::axis_attr(a));
        l.set_element_type(index_type);
        Dims reduced = x->dims;
        const std::int64_t length = reduced[static_cast<std::size_t>(axis)];
        reduced.erase(reduced.begin() + axis);
        Value index = l.tensor(reduced);
        auto attr = tosa::axis_attr(a);
        attr.nan_mode = nan_propagate;
        l.builder().op(Op::argmax, {v.tensor}, {index.tensor}, attr);
        if (last)
            index = l.binary(Op::sub, l.constant_ints(Dims(reduced.size(), 1), {length - 1}, index_type),
                             index, reduced);
        return l.bind(node, 0, l.reshape(index, *dims));
    };
}

}  // namespace

void add_nn(Table& table)
{
    table.emplace("Conv", lower_conv);
    table.emplace("MaxPool", Entry([](Lowering& l, const Node& n) { return pool(l, n, Op::max_pool2d, false); },
                                   fp32_values | int_values));
    table.emplace("AveragePool", [](Lowering& l, const Node& n) { return pool(l, n, Op::avg_pool2d, false); });
    table.emplace("GlobalMaxPool", [](Lowering& l, const Node& n) { return pool(l, n, Op::max_pool2d, true); });
    table.emplace("GlobalAveragePool", [](Lowering& l, const Node& n) { return pool(l, n, Op::avg_pool2d, true); });
    table.emplace("BatchNormalization", lower_batch_norm);
    table.emplace("ReduceSum", reduce(Reduction::sum));
    table.emplace("ReduceMean", reduce(Reduction::mean));
    table.emplace("ReduceMax", reduce(Reduction::max));
    table.emplace("ReduceMin", reduce(Reduction::min));
    table.emplace("ReduceProd", reduce(Reduction::prod));
    table.emplace("ReduceSumSquare", reduce(Reduction::sum_square));
    table.emplace("ReduceL1", reduce(Reduction::l1));
    table.emplace("ReduceL2", reduce(Reduction::l2));
    table.emplace("ReduceLogSum", reduce(Reduction::log_sum));
    table.emplace("ReduceLogSumExp", reduce(Reduction::log_sum_exp));
    table.emplace("ArgMax", Entry(arg_extreme(false), fp32_values | int_values));
    table.emplace("ArgMin", Entry(arg_extreme(true), fp32_values | int_values));
    table.emplace("Clip", Entry(lower_clip, fp32_values | int_values));
    table.emplace("LeakyRelu", lower_leaky_relu);
    table.emplace("HardSigmoid", hard_sigmoid(false));
    table.emplace("HardSwish", hard_sigmoid(true));
    table.emplace("Dropout", Entry(lower_dropout, float_values | bool_values));  // BOOL: training_mode, the mask
    table.emplace("Concat", Entry(lower_concat, any_values));
}

}  // namespace vaccel::onnx::lowering
