// lowering_norm.cpp - the ONNX normalizations (lowering.hpp lists what each
// becomes).
//
// Decides:
//  - LayerNormalization (opset 17), InstanceNormalization and
//    MeanVarianceNormalization share one rule: the mean and the variance
//    (the mean of the centred squares, which cannot go negative) over a set
//    of axes, by REDUCE_SUM per axis times 1 / count;
//  - LayerNormalization normalizes over the axes from `axis` on:
//    (x - mean) * rsqrt(var + epsilon) * scale + B, and gives the mean and
//    the inverse deviation where asked;
//  - InstanceNormalization over each (n, c)'s spatial axes, its scale and B
//    per channel;
//  - MeanVarianceNormalization over `axes` (default 0, 2, 3), as ONNX's
//    function body: (x - mean) / (sqrt(var) + 1e-9);
//  - BatchNormalization in training mode normalizes by the batch's
//    moments and updates the running ones (batch_norm_training);
//  - LRN: the squares summed over a window of `size` channels (the input
//    padded with zeros by (size - 1) / 2 below, the rest above: one SLICE
//    per offset, added), then x * (bias + alpha / size * sum) ^ -beta.
#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

// The moments of `x` over `axes` (each in range, none twice); both keep
// x's rank, the reduced axes of size 1.
struct Moments {
    Value mean, centred, variance;
};

Value mean_over(Lowering& l, Value v, const std::vector<std::int64_t>& axes)
{
    std::int64_t count = 1;
    for (std::int64_t a : axes) {
        Dims reduced = v.dims;
        count *= reduced[static_cast<std::size_t>(a)];
        reduced[static_cast<std::size_t>(a)] = 1;
        v = l.unary(Op::reduce_sum, v, reduced, tosa::axis_attr(static_cast<std::int32_t>(a)));
    }
    return l.mul(v, l.scalar_like(1.0f / static_cast<float>(count), v.dims.size()), v.dims);
}

Moments moments(Lowering& l, const Value& x, const std::vector<std::int64_t>& axes)
{
    Moments m;
    m.mean = mean_over(l, x, axes);
    m.centred = l.binary(Op::sub, x, m.mean, x.dims);
    m.variance = mean_over(l, l.mul(m.centred, m.centred, x.dims), axes);
    return m;
}

// rsqrt(var + eps).
Value inverse_deviation(Lowering& l, const Value& variance, float eps)
{
    return l.unary(Op::rsqrt, l.binary(Op::add, variance, l.scalar_like(eps, variance.dims.size()), variance.dims),
                   variance.dims);
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
    std::vector<std::int64_t> axes;
    for (std::int64_t a = axis; a < rank; ++a) axes.push_back(a);
    const Moments m = moments(l, *x, axes);
    const Value inv = inverse_deviation(l, m.variance, float_attr(node, "epsilon", 1e-5f));
    Value y = l.mul(m.centred, inv, *dims);
    auto scale = l.input(node, 1);
    if (!scale) return fail(scale.error());
    y = l.mul(y, *scale, *dims);
    if (node.input_size() > 2 && !node.input(2).empty()) {
        auto bias = l.input(node, 2);
        if (!bias) return fail(bias.error());
        y = l.binary(Op::add, y, *bias, *dims);
    }
    // Mean and InvStdDev, when asked for: the input's dims with those from
    // the axis on reduced to 1, as the moments leave them.
    for (int o = 1; o < node.output_size() && o < 3; ++o) {
        if (node.output(o).empty()) continue;
        auto stat_dims = l.output_dims(node, o);
        if (!stat_dims) return fail(stat_dims.error());
        const Value& stat = o == 1 ? m.mean : inv;
        if (*stat_dims != stat.dims)
            return fail(l.refuse(node, fmt::format("output {} is not of the reduced input's shape", o)));
        if (auto bound = l.bind(node, o, stat); !bound) return bound;
    }
    return l.bind(node, 0, y);
}

// A per-channel operand [C] as [1, C, 1, ...] of `rank`.
Value per_channel(Lowering& l, const Value& v, std::size_t rank)
{
    Dims dims(rank, 1);
    dims[1] = elements(v.dims);
    return l.reshape(v, dims);
}

Status lower_instance_norm(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 3);
    if (!ops) return fail(ops.error());
    const Value& x = ops->in[0];
    const std::size_t rank = x.dims.size();
    if (rank < 3) return fail(l.refuse(node, "its input has no spatial axes (fewer than 3 dimensions)"));
    for (int i = 1; i < 3; ++i)
        if (elements(ops->in[i].dims) != x.dims[1])
            return fail(l.refuse(node, fmt::format("input {} does not hold one value per channel", i)));
    std::vector<std::int64_t> axes;
    for (std::size_t a = 2; a < rank; ++a) axes.push_back(static_cast<std::int64_t>(a));
    const Moments m = moments(l, x, axes);
    Value y = l.mul(m.centred, inverse_deviation(l, m.variance, float_attr(node, "epsilon", 1e-5f)), x.dims);
    y = l.mul(y, per_channel(l, ops->in[1], rank), x.dims);
    return l.bind(node, 0, l.binary(Op::add, y, per_channel(l, ops->in[2], rank), x.dims));
}

Status lower_mean_variance_norm(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 1);
    if (!ops) return fail(ops.error());
    const Value& x = ops->in[0];
    const auto rank = static_cast<std::int64_t>(x.dims.size());
    const Dims given = ints_attr(node, "axes").value_or(Dims{0, 2, 3});
    std::vector<std::int64_t> axes;
    for (std::int64_t a : given) {
        const std::int64_t axis = a < 0 ? a + rank : a;
        if (axis < 0 || axis >= rank || std::ranges::find(axes, axis) != axes.end())
            return fail(l.refuse(node, fmt::format("axis {} is outside rank {} or given twice", a, rank)));
        axes.push_back(axis);
    }
    const Moments m = moments(l, x, axes);
    const std::size_t r = m.variance.dims.size();
    Value deviation = l.binary(Op::pow, m.variance, l.scalar_like(0.5f, r), m.variance.dims);
    deviation = l.binary(Op::add, deviation, l.scalar_like(1e-9f, r), deviation.dims);
    return l.bind(node, 0, l.mul(m.centred, l.unary(Op::reciprocal, deviation, deviation.dims), x.dims));
}

Status lower_lrn(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 1);
    if (!ops) return fail(ops.error());
    const Value& x = ops->in[0];
    const Dims& dims = x.dims;
    const std::size_t rank = dims.size();
    const std::int64_t size = int_attr(node, "size", 0);
    if (rank < 3) return fail(l.refuse(node, "its input has no spatial axes (fewer than 3 dimensions)"));
    if (size < 1) return fail(l.refuse(node, "its size is missing or below 1"));
    const float alpha = float_attr(node, "alpha", 1e-4f), beta = float_attr(node, "beta", 0.75f);
    const float bias = float_attr(node, "bias", 1.0f);
    const std::int64_t below = (size - 1) / 2, above = size - 1 - below;
    Value squares = l.mul(x, x, dims);
    Dims padded_dims = dims;
    padded_dims[1] += size - 1;
    Dims padding(2 * rank, 0);
    padding[2] = below;
    padding[3] = above;
    Value padded = l.tensor(padded_dims);
    l.builder().op(Op::pad, {squares.tensor, l.shape_operand(padding), l.constant({1}, {0.0f}).tensor},
                   {padded.tensor});
    Value sum;
    for (std::int64_t offset = 0; offset < size; ++offset) {
        Dims start(rank, 0);
        start[1] = offset;
        Value part = l.slice(padded, start, dims);
        sum = offset == 0 ? part : l.binary(Op::add, sum, part, dims);
    }
    Value base = l.binary(Op::add, l.mul(sum, l.scalar_like(alpha / static_cast<float>(size), rank), dims),
                          l.scalar_like(bias, rank), dims);
    return l.bind(node, 0, l.mul(x, l.binary(Op::pow, base, l.scalar_like(-beta, rank), dims), dims));
}

}  // namespace

// BatchNormalization in training mode (opset 14 on): normalized by the
// batch's own moments over every axis but 1, and the running statistics
// updated: input_mean * momentum + mean * (1 - momentum), the same for the
// (population) variance, as ONNX's reference does.
Status batch_norm_training(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 5);
    if (!ops) return fail(ops.error());
    const Value& x = ops->in[0];
    const std::size_t rank = x.dims.size();
    if (rank < 2) return fail(l.refuse(node, "its input has no channel axis"));
    const std::int64_t channels = x.dims[1];
    Dims per_channel(rank, 1);
    per_channel[1] = channels;
    Value p[4];
    for (int i = 0; i < 4; ++i) {
        if (elements(ops->in[i + 1].dims) != channels)
            return fail(l.refuse(node, "scale, B, mean and var must hold one value per channel"));
        p[i] = l.reshape(ops->in[i + 1], per_channel);
    }
    std::vector<std::int64_t> axes{0};
    for (std::size_t a = 2; a < rank; ++a) axes.push_back(static_cast<std::int64_t>(a));
    const Moments m = moments(l, x, axes);
    Value y = l.mul(m.centred, inverse_deviation(l, m.variance, float_attr(node, "epsilon", 1e-5f)), x.dims);
    y = l.binary(Op::add, l.mul(y, p[0], x.dims), p[1], x.dims);
    const float momentum = float_attr(node, "momentum", 0.9f);
    auto running = [&](const Value& given, const Value& current) {
        const Value kept = l.mul(given, l.scalar_like(momentum, rank), per_channel);
        return l.binary(Op::add, kept, l.mul(current, l.scalar_like(1.0f - momentum, rank), per_channel), per_channel);
    };
    for (int o = 1; o < 3 && o < node.output_size(); ++o) {
        if (node.output(o).empty()) continue;
        auto dims = l.output_dims(node, o);
        if (!dims) return fail(dims.error());
        const Value stat = o == 1 ? running(p[2], m.mean) : running(p[3], m.variance);
        if (auto bound = l.bind(node, o, l.reshape(stat, *dims)); !bound) return bound;
    }
    return l.bind(node, 0, y);
}

namespace {

}  // namespace

void add_norm(Table& table)
{
    table.emplace("LayerNormalization", lower_layer_norm);
    table.emplace("InstanceNormalization", lower_instance_norm);
    table.emplace("MeanVarianceNormalization", lower_mean_variance_norm);
    table.emplace("LRN", lower_lrn);
}

}  // namespace vaccel::onnx::lowering
