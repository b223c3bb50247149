// admission.cpp - the CPU backend's admitted TOSA set and execution order.
//
// Decides: which operator runs on which dtype (the table below, keyed by the
// operator's output dtype; docs/operators.md lists it), the dtype of every
// operand, the operand counts (CONCAT: one or more, all FP32), and that graph
// inputs and outputs are FP32, BOOL or INT32. An operator/dtype outside the
// table is Unsupported / D_TOSA_OPERATOR (arg0 op, arg1 dtype); an operand
// of another dtype is Unsupported / D_TOSA_DTYPE (arg0 dtype, arg1 op); a
// wrong operand count is InvalidArgument / D_TOSA_MALFORMED / TOSA_ARITY.
#include "admission.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <ranges>

namespace vaccel::backend::cpu {

using tosa::DType;
using tosa::Op;

Error malformed(std::uint32_t reason, std::string note)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED, reason)
        .with_note(std::move(note));
}

namespace {

// One admitted operator: the dtype its output carries, its operand counts
// and the dtype each input must have (in order).
struct Admitted {
    Op op;
    DType dtype;
    std::vector<DType> inputs;  // variadic: any number >= 1, each of inputs[0]
    std::size_t outputs;
    bool variadic = false;
};

const std::vector<Admitted>& admitted_set()
{
    static const std::vector<Admitted> set = [] {
        const DType f = DType::fp32;
        return std::vector<Admitted>{
            {Op::add, f, {f, f}, 1},
            {Op::sub, f, {f, f}, 1},
            {Op::mul, f, {f, f, DType::int8}, 1},
            {Op::matmul, f, {f, f, f, f}, 1},
            {Op::reshape, f, {f, DType::shape}, 1},
            {Op::transpose, f, {f}, 1},
            {Op::const_, f, {}, 1},
            {Op::const_, DType::int8, {}, 1},
            {Op::const_, DType::shape, {}, 1},
            {Op::const_shape, DType::shape, {}, 1},
            {Op::identity, f, {f}, 1},
            {Op::clamp, f, {f}, 1},
            {Op::sigmoid, f, {f}, 1},
            {Op::tanh, f, {f}, 1},
            {Op::reduce_sum, f, {f}, 1},
            {Op::conv2d, f, {f, f, f, f, f}, 1},
            {Op::const_, DType::boolean, {}, 1},
            {Op::maximum, f, {f, f}, 1},
            {Op::minimum, f, {f, f}, 1},
            {Op::pow, f, {f, f}, 1},
            {Op::equal, DType::boolean, {f, f}, 1},
            {Op::greater, DType::boolean, {f, f}, 1},
            {Op::greater_equal, DType::boolean, {f, f}, 1},
            {Op::select, f, {DType::boolean, f, f}, 1},
            {Op::abs, f, {f}, 1},
            {Op::negate, f, {f, f, f}, 1},  // input, input_zp, output_zp
            {Op::exp, f, {f}, 1},
            {Op::log, f, {f}, 1},
            {Op::reciprocal, f, {f}, 1},
            {Op::rsqrt, f, {f}, 1},
            {Op::ceil, f, {f}, 1},
            {Op::floor, f, {f}, 1},
            {Op::sin, f, {f}, 1},
            {Op::cos, f, {f}, 1},
            {Op::erf, f, {f}, 1},
            {Op::reduce_max, f, {f}, 1},
            {Op::reduce_min, f, {f}, 1},
            {Op::reduce_product, f, {f}, 1},
            {Op::argmax, DType::int32, {f}, 1},
            {Op::concat, f, {f}, 1, true},
            {Op::slice, f, {f, DType::shape, DType::shape}, 1},  // input, start, size
            {Op::pad, f, {f, DType::shape, f}, 1},               // input, padding, pad_const
            {Op::tile, f, {f, DType::shape}, 1},                 // input, multiples
            {Op::reverse, f, {f}, 1},
        };
    }();
    return set;
}

// The dtype an operator is admitted on: its first output's, else its first input's.
DType operator_dtype(const tosa::Block& block, const tosa::Operator& op)
{
    if (!op.outputs.empty() && op.outputs[0] < block.tensors.size())
        return block.tensors[op.outputs[0]].dtype;
    if (!op.inputs.empty() && op.inputs[0] < block.tensors.size())
        return block.tensors[op.inputs[0]].dtype;
    return DType::unknown;
}

Error unsupported_dtype(DType dtype, Op op, std::string_view where)
{
    return Error::of(Errc::unsupported, VACCEL_D_TOSA_DTYPE, static_cast<std::uint32_t>(dtype),
                     static_cast<std::uint32_t>(op))
        .with_note(fmt::format("{} of dtype {} is not supported by the CPU backend (it runs FP32 "
                               "graphs); convert the model to FP32",
                               where, tosa::dtype_name(dtype)));
}

// The dtypes a graph input or output may have: the ones values are stored in.
bool slot_dtype(DType dtype)
{
    return dtype == DType::fp32 || dtype == DType::boolean || dtype == DType::int32;
}

}  // namespace

std::vector<AdmittedOperator> admitted_operators()
{
    std::vector<AdmittedOperator> rows;
    for (const Admitted& a : admitted_set()) rows.push_back({a.op, a.dtype, a.inputs, a.variadic});
    return rows;
}

bool admitted_slot_dtype(DType dtype)
{
    return slot_dtype(dtype);
}

Status admit_block(const tosa::Block& block)
{
    for (std::size_t index = 0; index < block.operators.size(); ++index) {
        const tosa::Operator& op = block.operators[index];
        for (std::uint32_t tensor : op.inputs)
            if (tensor >= block.tensors.size())
                return fail(malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                      fmt::format("operator {} ({}) reads tensor index {}, which "
                                                  "does not exist",
                                                  index, tosa::op_name(op.op), tensor)));
        for (std::uint32_t tensor : op.outputs)
            if (tensor >= block.tensors.size())
                return fail(malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                      fmt::format("operator {} ({}) writes tensor index {}, "
                                                  "which does not exist",
                                                  index, tosa::op_name(op.op), tensor)));
        const DType dtype = operator_dtype(block, op);
        const auto& set = admitted_set();
        const auto entry = std::ranges::find_if(
            set, [&](const Admitted& a) { return a.op == op.op && a.dtype == dtype; });
        if (entry == set.end())
            return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_OPERATOR,
                                  static_cast<std::uint32_t>(op.op),
                                  static_cast<std::uint32_t>(dtype))
                            .with_note(fmt::format("TOSA operator {} on {} is not supported by "
                                                   "the CPU backend",
                                                   tosa::op_name(op.op),
                                                   tosa::dtype_name(dtype))));
        const bool arity_ok = entry->variadic ? !op.inputs.empty()
                                              : op.inputs.size() == entry->inputs.size();
        if (!arity_ok || op.outputs.size() != entry->outputs)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED,
                                  VACCEL_TOSA_ARITY)
                            .with_note(fmt::format("operator {} ({}) has {} inputs and {} "
                                                   "outputs; TOSA 1.0 defines {} and {}",
                                                   index, tosa::op_name(op.op), op.inputs.size(),
                                                   op.outputs.size(),
                                                   entry->variadic
                                                       ? std::string("one or more")
                                                       : std::to_string(entry->inputs.size()),
                                                   entry->outputs)));
        for (std::size_t i = 0; i < op.inputs.size(); ++i) {
            const tosa::Tensor& tensor = block.tensors[op.inputs[i]];
            if (tensor.dtype != entry->inputs[entry->variadic ? 0 : i])
                return fail(unsupported_dtype(
                    tensor.dtype, op.op,
                    fmt::format("input {} ('{}') of operator {} ({})", i, tensor.name, index,
                                tosa::op_name(op.op))));
        }
    }
    for (std::uint32_t tensor : block.inputs) {
        if (tensor >= block.tensors.size())
            return fail(malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                  fmt::format("block input index {} names no tensor", tensor)));
        if (!slot_dtype(block.tensors[tensor].dtype))
            return fail(unsupported_dtype(block.tensors[tensor].dtype, Op::unknown,
                                          fmt::format("graph input '{}'",
                                                      block.tensors[tensor].name)));
    }
    for (std::uint32_t tensor : block.outputs) {
        if (tensor >= block.tensors.size())
            return fail(malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                  fmt::format("block output index {} names no tensor", tensor)));
        if (!slot_dtype(block.tensors[tensor].dtype))
            return fail(unsupported_dtype(block.tensors[tensor].dtype, Op::unknown,
                                          fmt::format("graph output '{}'",
                                                      block.tensors[tensor].name)));
    }
    return {};
}

Result<ExecutionOrder> order_block(const tosa::Block& block)
{
    const std::size_t tensor_count = block.tensors.size();
    const std::size_t op_count = block.operators.size();
    constexpr std::uint32_t none = UINT32_MAX;

    std::vector<std::uint32_t> producer(tensor_count, none);
    std::vector<bool> is_input(tensor_count, false);
    for (std::uint32_t tensor : block.inputs) is_input[tensor] = true;
    for (std::uint32_t index = 0; index < op_count; ++index) {
        for (std::uint32_t tensor : block.operators[index].outputs) {
            if (producer[tensor] != none || is_input[tensor])
                return fail(Error::of(Errc::invalid_argument, VACCEL_D_TOSA_GRAPH,
                                      VACCEL_TOSA_CYCLE)
                                .with_note(fmt::format(
                                    "tensor '{}' is written by operator {} but already {}; "
                                    "each tensor must have one producer",
                                    block.tensors[tensor].name, index,
                                    is_input[tensor] ? "a graph input"
                                                     : fmt::format("written by operator {}",
                                                                   producer[tensor]))));
            producer[tensor] = index;
        }
    }

    ExecutionOrder order;
    order.constant.assign(tensor_count, false);
    // Data makes a constant only where no computing operator writes the
    // tensor: the output of a CONST/CONST_SHAPE, or a tensor nobody writes.
    for (std::size_t t = 0; t < tensor_count; ++t) {
        const bool computed = producer[t] != none &&
                              block.operators[producer[t]].op != Op::const_ &&
                              block.operators[producer[t]].op != Op::const_shape;
        order.constant[t] = !block.tensors[t].data.empty() && !is_input[t] && !computed;
    }

    // A tensor is available when it is a graph input, or its producer ran.
    // A read of a tensor nobody writes is malformed.
    for (std::uint32_t index = 0; index < op_count; ++index)
        for (std::uint32_t tensor : block.operators[index].inputs)
            if (producer[tensor] == none && !is_input[tensor] && !order.constant[tensor])
                return fail(malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                      fmt::format("operator {} ({}) reads tensor '{}', which no "
                                                  "operator writes and which is not a graph "
                                                  "input",
                                                  index, tosa::op_name(block.operators[index].op),
                                                  block.tensors[tensor].name)));
    for (std::uint32_t tensor : block.outputs)
        if (producer[tensor] == none && !is_input[tensor] && !order.constant[tensor])
            return fail(malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                  fmt::format("graph output '{}' is written by no operator",
                                              block.tensors[tensor].name)));

    // Kahn's algorithm; the smallest ready operator index goes first, so the
    // order is the declared one whenever that order is valid.
    std::vector<std::uint32_t> waiting(op_count, 0);
    std::vector<std::vector<std::uint32_t>> consumers(op_count);
    for (std::uint32_t index = 0; index < op_count; ++index) {
        for (std::uint32_t tensor : block.operators[index].inputs) {
            if (producer[tensor] == none) continue;
            ++waiting[index];
            consumers[producer[tensor]].push_back(index);
        }
    }
    std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
    for (std::uint32_t index = 0; index < op_count; ++index)
        if (waiting[index] == 0) ready.push(index);
    std::vector<std::uint32_t> all;
    while (!ready.empty()) {
        const std::uint32_t index = ready.top();
        ready.pop();
        all.push_back(index);
        for (std::uint32_t consumer : consumers[index])
            if (--waiting[consumer] == 0) ready.push(consumer);
    }
    if (all.size() != op_count) {
        const auto stuck = std::ranges::find_if(
            std::views::iota(std::uint32_t{0}, static_cast<std::uint32_t>(op_count)),
            [&](std::uint32_t index) { return waiting[index] != 0; });
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_CYCLE)
                        .with_note(fmt::format("operator {} ({}) depends on its own output "
                                               "through a cycle; a TOSA graph must be acyclic",
                                               *stuck,
                                               tosa::op_name(block.operators[*stuck].op))));
    }

    // Live operators: those some graph output depends on.
    std::vector<bool> live(op_count, false);
    std::vector<std::uint32_t> stack;
    for (std::uint32_t tensor : block.outputs)
        if (producer[tensor] != none) stack.push_back(producer[tensor]);
    while (!stack.empty()) {
        const std::uint32_t index = stack.back();
        stack.pop_back();
        if (live[index]) continue;
        live[index] = true;
        for (std::uint32_t tensor : block.operators[index].inputs)
            if (producer[tensor] != none) stack.push_back(producer[tensor]);
    }
    for (std::uint32_t index : all)
        if (live[index]) order.operators.push_back(index);
    return order;
}

}  // namespace vaccel::backend::cpu
