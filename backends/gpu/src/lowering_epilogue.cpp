// lowering_epilogue.cpp - elementwise chains as kernel epilogues
// (lowering_epilogue.hpp).
#include "vaccel/gpu/lowering_epilogue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <string_view>

#include "vaccel/gpu/lowering.hpp"
#include "vaccel/gpu/lowering_storage.hpp"

namespace vaccel::backend::gpu {
namespace {

using tosa::DType;
using tosa::Op;

// The operators a stage computes: float arithmetic of one or two operands.
bool stage_op(Op op)
{
    switch (op) {
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::maximum:
    case Op::minimum:
    case Op::pow:
    case Op::abs:
    case Op::negate:
    case Op::exp:
    case Op::log:
    case Op::reciprocal:
    case Op::rsqrt:
    case Op::ceil:
    case Op::floor:
    case Op::sin:
    case Op::cos:
    case Op::sigmoid:
    case Op::tanh:
    case Op::erf:
    case Op::clamp: return true;
    default: return false;
    }
}

// How a stage's other operand, of `shape`, is read at the result's index
// (result of `result` shape, same rank: TOSA broadcasting).
std::optional<EpilogueForm> form_of(const std::vector<std::int64_t>& shape,
                                    const std::vector<std::int64_t>& result)
{
    if (shape == result) return EpilogueForm::same;
    if (shape.size() != result.size()) return std::nullopt;
    if (std::ranges::all_of(shape, [](std::int64_t d) { return d == 1; }))
        return EpilogueForm::scalar;
    for (std::size_t d = 0; d + 1 < shape.size(); ++d)
        if (shape[d] != 1) return std::nullopt;
    if (!result.empty() && shape.back() == result.back()) return EpilogueForm::row;
    return std::nullopt;
}

// The data operands of operator `index` (compile-time ones left out).
std::vector<std::uint32_t> data_inputs(const tosa::Block& block, std::uint32_t index)
{
    const tosa::Operator& op = block.operators[index];
    std::vector<std::uint32_t> inputs;
    for (std::size_t i = 0; i < op.inputs.size(); ++i)
        if (!(block.tensors[op.inputs[i]].dtype == DType::shape ||
              (tosa::compile_time_operand(op.op, i) &&
               !block.tensors[op.inputs[i]].data.empty())))
            inputs.push_back(op.inputs[i]);
    return inputs;
}

}  // namespace

bool epilogue_link(const tosa::EpilogueLink& link)
{
    const tosa::Block& block = *link.block;
    const tosa::Operator& e = block.operators[link.consumer];
    if (link.stages >= max_epilogue_stages || !stage_op(e.op)) return false;
    const tosa::Tensor& result = block.tensors[e.outputs[0]];
    if (!arithmetic_dtype(result.dtype)) return false;
    // The row form's index is i % ROW: a 32-bit word of the result's last dimension.
    if (result.shape.empty() || result.shape.back() <= 0 || result.shape.back() > 0x7fffffff)
        return false;
    // MUL's shift is a compile-time zero for floats; NEGATE's zero points
    // likewise: only the data operands count.
    const auto inputs = data_inputs(block, link.consumer);
    if (inputs.size() > 2) return false;
    for (std::uint32_t tensor : inputs) {
        if (tensor == e.inputs[link.input]) continue;
        const tosa::Tensor& other = block.tensors[tensor];
        if (other.dtype != result.dtype || !form_of(other.shape, result.shape)) return false;
    }
    return true;
}

Result<bool> fusion_chosen()
{
    const char* value = std::getenv("VACCEL_GPU_FUSION");
    const std::string_view v = value != nullptr ? value : "";
    if (v.empty() || v == "1") return true;
    if (v == "0") return false;
    return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
                    .with_note(fmt::format("VACCEL_GPU_FUSION=\"{}\": valid values are 1 (fold "
                                           "elementwise chains into their producers, the "
                                           "default) and 0 (one dispatch per operator)",
                                           v)));
}

tosa::PlanOptions with_epilogues(tosa::PlanOptions base, bool fusion)
{
    if (fusion) base.epilogue = epilogue_link;
    return base;
}

Result<Epilogue> epilogue_of(const tosa::OperatorView& view)
{
    Epilogue epilogue;
    const tosa::Block& block = *view.block;
    std::uint32_t chained = view.op->outputs[0];
    for (std::uint32_t index : view.epilogue) {
        const tosa::Operator& e = block.operators[index];
        const tosa::Tensor& result = block.tensors[e.outputs[0]];
        EpilogueStage stage;
        stage.op = *element_code(e.op);
        stage.nan_ignore = e.attributes.nan_mode == 2;
        const auto inputs = data_inputs(block, index);
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            if (inputs[i] == chained) continue;
            stage.form = *form_of(block.tensors[inputs[i]].shape, result.shape);
            stage.operand_first = i == 0;
            auto at = operand(view, inputs[i]);
            if (!at) return fail(at.error());
            stage.operand = *at;
        }
        if (e.op == Op::clamp) {
            const auto lo = attribute_float(result.dtype, e.attributes.min_val);
            const auto hi = attribute_float(result.dtype, e.attributes.max_val);
            if (!lo || !hi)
                return fail(Error::of(Errc::invalid_argument, VACCEL_D_TOSA_GRAPH,
                                      VACCEL_TOSA_BAD_ATTRIBUTE,
                                      static_cast<std::uint64_t>(Op::clamp))
                                .with_note(fmt::format("operator {}: CLAMP's min_val and max_val "
                                                       "must each be one {}-byte {} value",
                                                       index, element_bytes(result.dtype),
                                                       tosa::dtype_name(result.dtype))));
            stage.p0 = *lo;
            stage.p1 = *hi;
        }
        epilogue.row = static_cast<std::uint32_t>(result.shape.back());
        epilogue.stages.push_back(stage);
        chained = e.outputs[0];
    }
    return epilogue;
}

void epilogue_words(std::vector<std::uint32_t>& spec, const Epilogue& epilogue)
{
    spec.push_back(static_cast<std::uint32_t>(epilogue.stages.size()));
    spec.push_back(epilogue.row);
    for (std::size_t s = 0; s < max_epilogue_stages; ++s) {
        if (s >= epilogue.stages.size()) {
            spec.insert(spec.end(), 6, 0u);
            continue;
        }
        const EpilogueStage& stage = epilogue.stages[s];
        spec.push_back(stage.op);
        spec.push_back(static_cast<std::uint32_t>(stage.form) | (stage.operand_first ? 16u : 0u) |
                       (stage.nan_ignore ? 32u : 0u));
        spec.push_back(stage.operand.buffer);
        spec.push_back(stage.operand.base);
        spec.push_back(std::bit_cast<std::uint32_t>(stage.p0));
        spec.push_back(std::bit_cast<std::uint32_t>(stage.p1));
    }
}

}  // namespace vaccel::backend::gpu
