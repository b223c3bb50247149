// lowering_loss.cpp - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (the latter a LogSoftmax over the classes, then the former).
//
// Decides:
//  - the input is [N, C, d1, ...] (scores or log-probabilities), the target
//    [N, d1, ...] of class indices. Each element's class is picked by a
//    one-hot mask, EQUAL(target, 0..C-1) along the class axis: SELECT the
//    input where it holds, REDUCE_SUM over the classes. So no gather, and a
//    target outside 0..C-1 picks nothing, as an ignored one does;
//  - each element's weight is weight[target] (picked the same way), or 1;
//    0 where the target is ignore_index;
//  - loss = -picked * weight; reduction "none" keeps [N, d1, ...], "sum"
//    adds every element, "mean" divides that by the sum of the weights (the
//    count of elements not ignored when there are no weights), as ONNX does.
#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

using tosa::DType;

// Every axis of `v` summed, one at a time, then seen as a scalar.
Value sum_all(Lowering& l, Value v)
{
    Dims dims = v.dims;
    for (std::size_t a = 0; a < dims.size(); ++a) {
        if (dims[a] == 1) continue;
        dims[a] = 1;
        v = l.unary(Op::reduce_sum, v, dims, tosa::axis_attr(static_cast<std::int32_t>(a)));
    }
    return l.reshape(v, {});
}

// The loss of `input` ([N, C, ...], log-probabilities) at `target`, output 0
// of the node.
Status nll(Lowering& l, const Node& node, Value input, int target_at, int weight_at)
{
    if (input.dtype != DType::fp32 && input.dtype != DType::fp16)
        return fail(l.refuse(node, "its input is not of a floating type"));
    if (input.dims.size() < 2) return fail(l.refuse(node, "its input has fewer than 2 dimensions"));
    auto target = l.input(node, target_at);
    if (!target) return fail(target.error());
    if (target->dtype != DType::int32) return fail(l.refuse(node, "its target is not of integers"));
    const Dims& dims = input.dims;
    const std::int64_t classes = dims[1];
    Dims per_class(dims.size(), 1);  // [1, C, 1, ...]
    per_class[1] = classes;
    Dims picked_dims = dims;  // [N, 1, d1, ...]
    picked_dims[1] = 1;
    if (elements(target->dims) != elements(picked_dims) || target->dims.empty() ||
        target->dims[0] != dims[0])
        return fail(l.refuse(node, "its target is not of the input's dims without the classes"));
    Value at = l.reshape(*target, picked_dims);
    std::vector<std::int64_t> iota(static_cast<std::size_t>(classes));
    for (std::int64_t c = 0; c < classes; ++c) iota[static_cast<std::size_t>(c)] = c;
    Value hot = l.apply(Op::equal, {at, l.constant_ints(per_class, iota, DType::int32)}, dims,
                        DType::boolean);
    const std::size_t rank = dims.size();
    const Value zero = l.scalar_like(0.0f, rank);
    auto pick = [&](Value v) {
        return l.unary(Op::reduce_sum, l.apply(Op::select, {hot, v, zero}, dims, input.dtype),
                       picked_dims, tosa::axis_attr(1));
    };
    Value picked = pick(input);
    Value weight = l.scalar_like(1.0f, rank);
    const bool weighted = node.input_size() > weight_at && !node.input(weight_at).empty();
    if (weighted) {
        auto w = l.input(node, weight_at);
        if (!w) return fail(w.error());
        if (w->dims != Dims{classes}) return fail(l.refuse(node, "its weight is not one per class"));
        weight = pick(l.reshape(*w, per_class));
    }
    if (attribute(node, "ignore_index") != nullptr) {
        Value ignored = l.constant_ints(Dims(rank, 1), {int_attr(node, "ignore_index", 0)}, DType::int32);
        Value kept = l.apply(Op::logical_not, {l.apply(Op::equal, {at, ignored}, picked_dims, DType::boolean)},
                             picked_dims, DType::boolean);
        weight = l.apply(Op::select, {kept, weight, zero}, picked_dims, input.dtype);
    } else if (!weighted) {
        // Without weights or ignore_index every element counts once.
        weight = l.constant(picked_dims, std::vector<float>(static_cast<std::size_t>(elements(picked_dims)), 1.0f));
    }
    Value loss = l.unary(Op::negate, l.mul(picked, weight, picked_dims), picked_dims);
    const auto* reduction_attr = attribute(node, "reduction");
    const std::string reduction = reduction_attr != nullptr ? reduction_attr->s() : "mean";
    if (reduction == "none") {
        auto out = l.output_dims(node);
        if (!out) return fail(out.error());
        return l.bind(node, 0, l.reshape(loss, *out));
    }
    if (reduction != "sum" && reduction != "mean")
        return fail(l.refuse(node, fmt::format("its reduction \"{}\" is not none, sum or mean", reduction)));
    Value total = sum_all(l, loss);
    if (reduction == "mean")
        total = l.mul(total, l.unary(Op::reciprocal, sum_all(l, weight), {}), {});
    return l.bind(node, 0, total);
}

Status lower_nll(Lowering& l, const Node& node)
{
    auto input = l.input(node, 0);
    if (!input) return fail(input.error());
    return nll(l, node, *input, 1, 2);
}

Status lower_sce(Lowering& l, const Node& node)
{
    auto scores = l.input(node, 0);
    if (!scores) return fail(scores.error());
    if (scores->dims.size() < 2) return fail(l.refuse(node, "its scores have fewer than 2 dimensions"));
    Value log_prob = softmax_along(l, *scores, scores->dims, 1, true);
    if (node.output_size() > 1 && !node.output(1).empty())
        if (auto ok = l.bind(node, 1, log_prob); !ok) return ok;
    return nll(l, node, log_prob, 1, 2);
}

}  // namespace

void add_loss(Table& table)
{
    // Floating inputs and weights, integer targets (checked by the lowering).
    table.emplace("NegativeLogLikelihoodLoss", Entry(lower_nll, float_values | int_values));
    table.emplace("SoftmaxCrossEntropyLoss", Entry(lower_sce, float_values | int_values));
}

}  // namespace vaccel::onnx::lowering
