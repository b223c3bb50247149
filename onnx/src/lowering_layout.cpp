// lowering_layout.cpp - the model's NCHW layout and TOSA's NHWC operators
// (lowering_context.hpp: to_channels_last, to_channels_first), and the
// pruning of what the graph computes but never uses.
//
// Decides:
//  - each NHWC value brought back to NCHW (after a CONV2D or a pool) is
//    remembered with its NCHW twin, so a convolution reading that NCHW
//    value takes the NHWC one without a TRANSPOSE;
//  - the NHWC form made for an NCHW value is remembered too, so a value
//    two convolutions read is TRANSPOSEd once;
//  - an elementwise operator (layout_free) of 4-D results one of whose
//    operands has an NHWC twin runs in NHWC, and its NCHW result is a
//    TRANSPOSE of that, remembered the same way. The other operands come
//    as their twins, as RESHAPEs where they hold at most one dimension
//    above 1 (a per-channel scale, a scalar: the same elements in the same
//    order in either layout), else TRANSPOSEd. The chain Conv ->
//    BatchNormalization -> Relu -> Add (of the block's input) -> Relu ->
//    Conv so stays in NHWC;
//  - the TRANSPOSEs no one reads afterwards, like any operator whose
//    results are unused, are removed by `prune` once the graph is built.
#include <algorithm>

#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

// Operators that act on each element alone, so they commute with a
// TRANSPOSE of all their operands.
bool layout_free(Op op)
{
    switch (op) {
    case Op::add: case Op::sub: case Op::mul: case Op::maximum: case Op::minimum: case Op::pow:
    case Op::clamp: case Op::sigmoid: case Op::tanh: case Op::erf: case Op::exp: case Op::log:
    case Op::abs: case Op::negate: case Op::reciprocal: case Op::rsqrt: case Op::floor:
    case Op::ceil: case Op::sin: case Op::cos:
        return true;
    default:
        return false;
    }
}

Dims nhwc_dims(const Dims& d) { return {d[0], d[2], d[3], d[1]}; }

}  // namespace

Value Lowering::to_channels_last(Value nchw)
{
    if (auto it = channels_last_.find(nchw.tensor); it != channels_last_.end()) return it->second;
    Value nhwc = transpose(nchw, {0, 2, 3, 1});
    if (!transpose_per_node_) channels_last_.emplace(nchw.tensor, nhwc);
    return nhwc;
}

Value Lowering::to_channels_first(Value nhwc)
{
    Value nchw = transpose(nhwc, {0, 3, 1, 2});
    if (!transpose_per_node_) channels_last_.emplace(nchw.tensor, nhwc);
    return nchw;
}

std::optional<Value> Lowering::in_channels_last(Op op, const std::vector<Value>& operands, const Dims& dims,
                                                const std::function<Value(std::vector<Value>, const Dims&)>& emit)
{
    if (dims.size() != 4 || !layout_free(op)) return std::nullopt;
    std::vector<Value> moved;
    bool any = false;
    for (const Value& v : operands) {
        if (auto it = channels_last_.find(v.tensor); it != channels_last_.end()) {
            moved.push_back(it->second);
            any = true;
        } else if (std::ranges::count_if(v.dims, [](std::int64_t d) { return d != 1; }) <= 1) {
            // One dimension above 1 at most: the same elements in the same
            // order in either layout, so a RESHAPE.
            Dims four(4 - std::min<std::size_t>(v.dims.size(), 4), 1);
            four.insert(four.end(), v.dims.begin(), v.dims.end());
            moved.push_back(reshape(v, nhwc_dims(four)));
        } else {
            moved.push_back(v);  // a full NCHW value: TRANSPOSEd below, if another is NHWC
        }
    }
    if (!any) return std::nullopt;  // the RESHAPEs made above are pruned
    for (std::size_t i = 0; i < moved.size(); ++i)
        if (moved[i].tensor == operands[i].tensor && moved[i].dims.size() == 4) moved[i] = to_channels_last(moved[i]);
    return to_channels_first(emit(std::move(moved), nhwc_dims(dims)));
}

void prune(tosa::Graph& graph)
{
    for (auto& region : graph.regions)
        for (auto& block : region.blocks) {
            std::vector<bool> used(block.tensors.size(), false);
            for (std::uint32_t t : block.outputs) used[t] = true;
            std::vector<bool> live(block.operators.size(), false);
            for (std::size_t i = block.operators.size(); i-- > 0;) {
                const tosa::Operator& op = block.operators[i];
                live[i] = std::ranges::any_of(op.outputs, [&](std::uint32_t t) { return used[t]; });
                if (live[i])
                    for (std::uint32_t t : op.inputs) used[t] = true;
            }
            for (std::uint32_t t : block.inputs) used[t] = true;
            std::vector<std::uint32_t> index(block.tensors.size(), 0);
            std::vector<tosa::Tensor> tensors;
            for (std::size_t t = 0; t < block.tensors.size(); ++t)
                if (used[t]) {
                    index[t] = static_cast<std::uint32_t>(tensors.size());
                    tensors.push_back(std::move(block.tensors[t]));
                }
            std::vector<tosa::Operator> operators;
            for (std::size_t i = 0; i < block.operators.size(); ++i) {
                if (!live[i]) continue;
                tosa::Operator op = std::move(block.operators[i]);
                for (std::uint32_t& t : op.inputs) t = index[t];
                for (std::uint32_t& t : op.outputs) t = index[t];
                operators.push_back(std::move(op));
            }
            for (std::uint32_t& t : block.inputs) t = index[t];
            for (std::uint32_t& t : block.outputs) t = index[t];
            block.tensors = std::move(tensors);
            block.operators = std::move(operators);
        }
}

}  // namespace vaccel::onnx::lowering
