// descriptor.cpp - deriving the CPU's capability descriptor from its admitted set.
//
// Decides the derivation descriptor.hpp lists. The one piece of knowledge
// that is not in the admitted set is which operand values the compiler
// requires to be constants or zeros (plan.cpp): operand_constraints() below,
// keyed by operator, so that it never lists an operator on its own.
#include "descriptor.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace vaccel::backend::cpu {

using tosa::DType;
using tosa::Op;
using tosa::OperatorConstraint;
using tosa::Role;

namespace {

bool is_float(DType d)
{
    return d == DType::fp32 || d == DType::fp16 || d == DType::bf16 || d == DType::fp8e4m3 ||
           d == DType::fp8e5m2;
}

bool is_integer(DType d)
{
    return d == DType::int4 || d == DType::int8 || d == DType::int16 || d == DType::int32 ||
           d == DType::int48;
}

// CONST and CONST_SHAPE carry data; they compute nothing.
bool carries_data(Op op) { return op == Op::const_ || op == Op::const_shape; }

// What plan.cpp requires of an admitted operator's operand values, for every
// dtype it takes; 0 for operators it takes with any operand values. Zero
// points and MUL's shift must be zero only on floats: an operator that also
// takes integers (whose zero points and shifts may be anything TOSA allows)
// carries no such constraint, since a constraint holds for all its dtypes.
std::uint16_t operand_constraints(Op op, bool takes_integers)
{
    using C = OperatorConstraint;
    switch (op) {
    case Op::mul: return takes_integers ? 0 : tosa::constraint_bit(C::zero_shift);
    case Op::matmul:
    case Op::conv2d:
    case Op::conv3d:
    case Op::depthwise_conv2d:
    case Op::transpose_conv2d:
    case Op::avg_pool2d:
    case Op::negate: return takes_integers ? 0 : tosa::constraint_bit(C::zero_zero_points);
    case Op::reshape:
    case Op::slice:
    case Op::pad:
    case Op::tile: return tosa::constraint_bit(C::constant_parameters);
    default: return 0;
    }
}

// The extension a dtype needs beyond the base profiles, 0 if none.
std::uint64_t dtype_extension(DType d)
{
    switch (d) {
    case DType::int16: return VACCEL_TOSA_EXT_INT16;
    case DType::int4: return VACCEL_TOSA_EXT_INT4;
    case DType::bf16: return VACCEL_TOSA_EXT_BF16;
    case DType::fp8e4m3: return VACCEL_TOSA_EXT_FP8E4M3;
    case DType::fp8e5m2: return VACCEL_TOSA_EXT_FP8E5M2;
    default: return 0;
    }
}

// The extension an operator needs beyond the base profiles, 0 if none.
std::uint64_t operator_extension(Op op)
{
    switch (op) {
    case Op::fft2d:
    case Op::rfft2d: return VACCEL_TOSA_EXT_FFT;
    case Op::cond_if:
    case Op::while_loop: return VACCEL_TOSA_EXT_CONTROLFLOW;
    case Op::variable:
    case Op::variable_read:
    case Op::variable_write: return VACCEL_TOSA_EXT_VARIABLE;
    default: return 0;
    }
}

}  // namespace

tosa::CapabilityDescriptor derive_descriptor(std::span<const AdmittedOperator> rows,
                                             bool (*slot_dtype)(DType))
{
    // Ordered containers: the descriptor lists ascend by enum value.
    std::map<Op, std::set<DType>> operator_dtypes;
    std::set<DType> seen, produced, consumed, constants;
    std::uint32_t profiles = 0;
    std::uint64_t extensions = 0;
    for (const AdmittedOperator& row : rows) {
        std::set<DType>& takes = operator_dtypes[row.op];
        takes.insert(row.dtype);
        takes.insert(row.inputs.begin(), row.inputs.end());
        seen.insert(takes.begin(), takes.end());
        extensions |= operator_extension(row.op);
        if (carries_data(row.op)) {
            constants.insert(row.dtype);
            continue;
        }
        produced.insert(row.dtype);
        consumed.insert(row.inputs.begin(), row.inputs.end());
        const bool float_operand =
            is_float(row.dtype) || std::ranges::any_of(row.inputs, is_float);
        const bool integer_only =
            is_integer(row.dtype) && std::ranges::all_of(row.inputs, [](DType d) {
                return is_integer(d) || d == DType::boolean || d == DType::shape;
            });
        if (float_operand) profiles |= VACCEL_TOSA_PRO_FP;
        if (integer_only) profiles |= VACCEL_TOSA_PRO_INT;
    }

    tosa::CapabilityDescriptor d;
    for (DType dtype : seen) extensions |= dtype_extension(dtype);
    d.target = tosa::Target{1, 0, profiles, VACCEL_TOSA_LEVEL_8K, extensions};
    // Blocks run by COND_IF/WHILE_LOOP in any number; an index, divisor or
    // shift TOSA leaves to run time is checked while running (docs/operators.md).
    const bool control_flow = (extensions & VACCEL_TOSA_EXT_CONTROLFLOW) != 0;
    d.graph = tosa::GraphEnvelope{control_flow ? UINT32_MAX : 1u, control_flow ? UINT32_MAX : 1u,
                                  false, tosa::RuntimeConditionSupport::advisory_only};

    for (DType dtype : seen) {
        if (dtype == DType::shape) continue;
        std::uint8_t roles = 0;
        // A block input or output must be one the table can also read or
        // write: a dtype nothing in the table touches is not admitted at all.
        if (slot_dtype(dtype)) roles |= tosa::role_bit(Role::input) | tosa::role_bit(Role::output);
        if (constants.contains(dtype)) roles |= tosa::role_bit(Role::constant);
        if (produced.contains(dtype) && consumed.contains(dtype))
            roles |= tosa::role_bit(Role::intermediate);
        if (roles == 0) continue;
        d.dtypes.push_back({dtype, roles, roles == tosa::role_bit(Role::constant)});
    }
    for (const auto& [op, takes] : operator_dtypes) {
        const bool integer_results = std::ranges::any_of(rows, [&](const AdmittedOperator& row) {
            return row.op == op && is_integer(row.dtype);
        });
        d.operators.push_back({op, operand_constraints(op, integer_results),
                               std::vector<DType>(takes.begin(), takes.end())});
    }
    return d;
}

const tosa::CapabilityDescriptor& cpu_descriptor()
{
    static const tosa::CapabilityDescriptor descriptor =
        derive_descriptor(admitted_operators(), admitted_slot_dtype);
    return descriptor;
}

}  // namespace vaccel::backend::cpu
