// capability.hpp - what a TOSA tier admits, and admission of a graph against it.
//
// Owns: the capability descriptor (a target identity, the dtypes it takes in
// each tensor role, the operators it runs with their constraints, and the
// graph envelope), the three floating-point tiers the Vulkan backend
// advertises (FP32, FP16, FP8), and admit(), which decides whether an
// analyzed graph lies inside a descriptor. Decides:
//  - descriptors are plain values (vectors, no static slices), compared
//    field by field; list order is part of the value;
//  - admission does not use which dtype each operator takes (the backend's
//    lowering decides that); it only checks which dtypes may appear in which
//    role and which operators may appear at all. A backend whose table says
//    which dtypes each operator takes may state them in
//    OperatorCapability::dtypes, for people and tools to read (the tiers
//    leave it empty; docs/adr/0014-tosa-descriptors.md);
//  - SHAPE values (DType::shape, the operands of RESHAPE/PAD/SLICE/TILE...)
//    are not tensors to a descriptor: no role check applies to them;
//  - control flow (COND_IF, WHILE_LOOP) is admitted only when the target
//    carries VACCEL_TOSA_EXT_CONTROLFLOW, variables only with
//    VACCEL_TOSA_EXT_VARIABLE: the extension is the permission.
//
// The three tiers (see capability.cpp for the tables):
//
//   tier | target (TOSA 1.0, level 8K)        | dtypes (roles)                         | operators
//   -----+------------------------------------+----------------------------------------+-----------
//   FP32 | profile FP, no extensions          | FP32 BOOL INT32: all roles;            | the 42 below
//        |                                    | INT8: constant, parameter only         |
//   FP16 | the FP32 tier's target (same)      | FP32 FP16 BOOL INT32: all roles;       | the same 42
//        |                                    | INT8: constant, parameter only         |
//   FP8  | profile FP, ext FP8E4M3 + FP8E5M2  | FP8E4M3 FP8E5M2 FP16 INT32: all roles  | 11 (below)
//
//   Envelope of all three: one region, one block, no dynamic shapes, no
//   runtime conditions (POW's domain excepted, see admit()).
//
//   The 42 (FP32 and FP16), in the reference design's order; constraints in brackets:
//     ARGMAX, MATMUL [zero zero-points], MAX_POOL2D, CLAMP, ERF, SIGMOID, TANH,
//     ADD, LOGICAL_AND, LOGICAL_OR, LOGICAL_XOR, MAXIMUM, MINIMUM,
//     MUL [zero shift], POW, SUB, ABS, CEIL, COS, EXP, FLOOR, LOG, LOGICAL_NOT,
//     NEGATE [zero zero-points], RECIPROCAL, RSQRT, SIN, SELECT, EQUAL,
//     GREATER, GREATER_EQUAL, REDUCE_MAX, REDUCE_MIN, REDUCE_PRODUCT,
//     REDUCE_SUM, CONCAT, RESHAPE [constant parameters], REVERSE, TRANSPOSE,
//     CONST, CONST_SHAPE, IDENTITY
//   The FP8 11: MATMUL [zero zero-points], CONCAT, RESHAPE [constant
//     parameters], REVERSE, TRANSPOSE, CONST, CONST_SHAPE, IDENTITY, CAST,
//     MAX_POOL2D, ARGMAX
//
// The integer target (TOSA 1.0, profile INT, level 8K, no extensions) is
// declared but has no descriptor: nothing is admitted for it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vaccel.h"
#include "vaccel/common/error.hpp"
#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::tosa {

// A TOSA target identity, the value form of struct vaccel_tosa_target.
struct Target {
    std::uint16_t major = 0;
    std::uint16_t minor = 0;
    std::uint32_t profiles = 0;    // VACCEL_TOSA_PRO_*
    std::uint32_t level = VACCEL_TOSA_LEVEL_NONE;  // enum vaccel_tosa_level
    std::uint64_t extensions = 0;  // VACCEL_TOSA_EXT_*

    bool has_extension(std::uint64_t ext) const { return (extensions & ext) == ext; }
    bool is_zero() const { return *this == Target{}; }
    vaccel_tosa_target to_uapi() const;

    friend bool operator==(const Target&, const Target&) = default;
};

// Reads a uapi target. Refused (Incompatible, VACCEL_D_TARGET, arg0 =
// the unknown profile bits, arg1 = the unknown extension bits) when it
// names profiles, extensions or a level this build does not know, a
// non-zero pad, or no profile at all; an all-zero target is returned as is
// (it means "the device default" in VACCEL_IOCTL_PROGRAM_LOAD).
Result<Target> target_from_uapi(const vaccel_tosa_target& target);

// "TOSA 1.0 FP level 8K +FP8E4M3+FP8E5M2", for notes.
std::string target_text(const Target& target);

// The roles a tensor plays in a block, as bits.
enum class Role : std::uint8_t {
    input = 1u << 0,         // a block input
    output = 1u << 1,        // a block output
    constant = 1u << 2,      // serialized data (CONST output or data nobody writes)
    intermediate = 1u << 3,  // written and read inside the block
};
inline constexpr std::uint8_t role_bit(Role role) { return static_cast<std::uint8_t>(role); }
inline constexpr std::uint8_t all_roles = 0x0f;

std::string_view role_name(Role role);  // "input", "output", "constant", "intermediate"

// One dtype and the roles it may take.
struct DTypeCapability {
    DType dtype = DType::unknown;
    std::uint8_t roles = 0;  // role_bit() values
    // Admitted only as a constant that an operator consumes as a
    // compile-time parameter (e.g. MUL's shift), never as a tensor the
    // graph computes with or exposes.
    bool parameter_only = false;

    bool allows(Role role) const { return (roles & role_bit(role)) != 0; }

    friend bool operator==(const DTypeCapability&, const DTypeCapability&) = default;
};

// Restrictions an operator carries in a tier (bits).
enum class OperatorConstraint : std::uint16_t {
    propagating_nan = 1u << 0,      // every nan_mode attribute is PROPAGATE
    zero_padding = 1u << 1,         // pool padding all zero
    constant_parameters = 1u << 2,  // shape operands are serialized constants
    zero_zero_points = 1u << 3,     // zero-point operands are serialized zeros
    zero_shift = 1u << 4,           // MUL's shift operand is a serialized zero
};
inline constexpr std::uint16_t constraint_bit(OperatorConstraint c)
{
    return static_cast<std::uint16_t>(c);
}

struct OperatorCapability {
    Op op = Op::unknown;
    std::uint16_t constraints = 0;  // constraint_bit() values
    // The dtypes the operator takes as an operand or result, ascending and
    // without repeats, where the backend states them; empty = not stated.
    // Informational: admit() does not consult it.
    std::vector<DType> dtypes{};

    bool has(OperatorConstraint c) const { return (constraints & constraint_bit(c)) != 0; }

    friend bool operator==(const OperatorCapability&, const OperatorCapability&) = default;
};

// What the tier does about conditions TOSA leaves to run time (a divisor
// of zero, a shift out of range, an index out of range, variable state, a
// CUSTOM operator's effects).
enum class RuntimeConditionSupport : std::uint8_t {
    none,           // a graph with any such condition is refused
    advisory_only,  // REQUIRE conditions may stay; error checks TOSA mandates may not
};

// The whole-graph boundary no operator bit expresses.
struct GraphEnvelope {
    std::uint32_t max_regions = 1;
    std::uint32_t max_blocks = 1;  // over all regions
    bool dynamic_shapes = false;
    RuntimeConditionSupport runtime_conditions = RuntimeConditionSupport::none;

    friend bool operator==(const GraphEnvelope&, const GraphEnvelope&) = default;
};

// What one exact target admits. Admission against it is authoritative for
// what it covers; shapes, operand agreement and resources are the
// backend's to check afterwards.
struct CapabilityDescriptor {
    Target target;
    std::vector<DTypeCapability> dtypes;
    std::vector<OperatorCapability> operators;
    GraphEnvelope graph;

    // nullptr when the dtype / operator is not listed.
    const DTypeCapability* dtype(DType dtype) const;
    const OperatorCapability* operator_capability(Op op) const;
    bool supports_dtype(DType dtype, Role role) const;
    bool supports_operator(Op op) const { return operator_capability(op) != nullptr; }
    bool allows_control_flow() const { return target.has_extension(VACCEL_TOSA_EXT_CONTROLFLOW); }
    bool allows_variables() const { return target.has_extension(VACCEL_TOSA_EXT_VARIABLE); }

    friend bool operator==(const CapabilityDescriptor&, const CapabilityDescriptor&) = default;
};

// The uapi form, struct vaccel_tosa_descriptor (VACCEL_IOCTL_DEVICE_TOSA):
// arrays indexed by the DType / Op value, descriptor_count left 0 (the
// device's count is the engine's to fill). Role and constraint bits are the
// same numbers as VACCEL_TOSA_ROLE_* / VACCEL_TOSA_OPC_*.
vaccel_tosa_descriptor to_uapi(const CapabilityDescriptor& descriptor);

// Reads a uapi descriptor back: dtypes and operators in ascending enum
// order (the uapi arrays carry no other order), descriptor_count ignored.
// Refused (InvalidArgument, VACCEL_D_BAD_VALUE, arg0 = the byte offset of
// the field in struct vaccel_tosa_descriptor, arg1 = its value) when a
// field holds what this build does not define: unknown role, constraint or
// dtype bits, a present flag or parameter_only other than 0/1, an entry
// past the DType/Op values TOSA 1.0 defines, an unknown runtime-condition
// value, a non-zero pad or reserved field; an unknown target is refused as
// target_from_uapi() refuses it.
Result<CapabilityDescriptor> descriptor_from_uapi(const vaccel_tosa_descriptor& descriptor);

// The tiers' targets.
Target fp32_target();     // TOSA 1.0, PRO_FP, level 8K, no extensions (FP16 shares it)
Target fp8_target();      // TOSA 1.0, PRO_FP, level 8K, EXT_FP8E4M3 | EXT_FP8E5M2
Target integer_target();  // TOSA 1.0, PRO_INT, level 8K: declared, no descriptor

// The tiers.
CapabilityDescriptor fp32_tier();
CapabilityDescriptor fp16_tier();
CapabilityDescriptor fp8_tier();

// Decides whether `graph` (with `analysis`, analyze(graph)'s result) lies
// inside `descriptor`. The first refusal is returned, in this order:
//  1. target: the graph's version is not the target's (Incompatible,
//     VACCEL_D_TARGET, arg0/arg1 = the graph's major/minor);
//  2. envelope (Unsupported, VACCEL_D_TOSA_GRAPH):
//     - no region or more than max_regions, then no block or more than
//       max_blocks in all: arg0 = VACCEL_TOSA_REGIONS, arg1 = 0;
//     - a COND_IF/WHILE_LOOP without the control-flow extension, then a
//       variable (a variable tensor or VARIABLE/VARIABLE_READ/VARIABLE_WRITE)
//       without the variable extension: arg0 = VACCEL_TOSA_REGIONS, arg1 = Op
//       (the uapi has no reason of their own yet);
//     - a dynamic (negative) dimension without dynamic_shapes:
//       arg0 = VACCEL_TOSA_BAD_SHAPE, arg1 = 0;
//  3. runtime conditions, every block, operators in declared order, dead
//     ones included: with `none`, an INTDIV (divisor), a shift
//     (ARITHMETIC_RIGHT_SHIFT, LOGICAL_LEFT/RIGHT_SHIFT), a MUL on INT32, a
//     GATHER/SCATTER (indices), a VARIABLE_READ/VARIABLE_WRITE (state) or a
//     CUSTOM is refused as an operator the tier cannot run (Unsupported,
//     VACCEL_D_TOSA_OPERATOR, arg0 = Op, arg1 = its dtype); POW's domain is
//     not counted (an IEEE kernel yields NaN, which is what the tiers do).
//     `advisory_only` keeps them all (no dynamic compile-time operand
//     reaches here: analyze() refuses dynamic shapes);
//  4. per block: the block inputs, then the block outputs, each dtype in
//     its role (Unsupported, VACCEL_D_TOSA_DTYPE, arg0 = DType, arg1 = the
//     Op of the input's first live consumer / the output's producer, else
//     0); then every live operator in execution order, CONST and
//     CONST_SHAPE excepted (they only carry data):
//     - listed in the descriptor, else Unsupported, VACCEL_D_TOSA_OPERATOR,
//       arg0 = Op, arg1 = the dtype looked at (its first output's, else its
//       first input's);
//     - each operand, then each result, of a dtype admitted in its role
//       (a parameter-only dtype only as a constant at a compile-time
//       operand), else Unsupported, VACCEL_D_TOSA_DTYPE, arg0 = DType,
//       arg1 = Op;
//     - its constraints, else Unsupported, VACCEL_D_TOSA_GRAPH,
//       arg0 = VACCEL_TOSA_BAD_ATTRIBUTE, arg1 = Op.
// Every note names the block, and the operator index where there is one.
Status admit(const Graph& graph, const Analysis& analysis, const CapabilityDescriptor& descriptor);

// As above, for a load that asked for `requested` (all zero: the
// descriptor's own). A target other than the descriptor's is refused first:
// Incompatible, VACCEL_D_TARGET, arg0 = arg1 = 0.
Status admit(const Graph& graph, const Analysis& analysis, const CapabilityDescriptor& descriptor,
             const Target& requested);

}  // namespace vaccel::tosa
