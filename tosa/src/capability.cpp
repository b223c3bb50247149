// capability.cpp - the tiers' tables and admission of a graph against a descriptor.
//
// Decides: the order of admission (capability.hpp lists it) and the wording
// of its notes: "operator 3 (INTDIV) of block 'main' (region 'main'): ...".
#include "vaccel/tosa/capability.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <span>
#include <string>

namespace vaccel::tosa {

namespace {

constexpr std::uint32_t known_profiles = VACCEL_TOSA_PRO_INT | VACCEL_TOSA_PRO_FP;
constexpr std::uint64_t known_extensions = (VACCEL_TOSA_EXT_DYNAMIC << 1) - 1;

constexpr std::uint64_t u(Op op) { return static_cast<std::uint64_t>(op); }
constexpr std::uint64_t u(DType dtype) { return static_cast<std::uint64_t>(dtype); }

// ----- the tables -----------------------------------------------------------

DTypeCapability any_role(DType dtype) { return {dtype, all_roles, false}; }
DTypeCapability parameter(DType dtype) { return {dtype, role_bit(Role::constant), true}; }

OperatorCapability plain(Op op) { return {op, 0, {}}; }
OperatorCapability with(Op op, OperatorConstraint c) { return {op, constraint_bit(c), {}}; }

// The operators shared with the Core ML and OpenVINO FP32 tiers (the reference design's
// order). NaN modes and pool padding are free: the kernels do both modes.
std::vector<OperatorCapability> float_operators()
{
    using C = OperatorConstraint;
    return {
        plain(Op::argmax),
        with(Op::matmul, C::zero_zero_points),
        plain(Op::max_pool2d),
        plain(Op::clamp),
        plain(Op::erf),
        plain(Op::sigmoid),
        plain(Op::tanh),
        plain(Op::add),
        plain(Op::logical_and),
        plain(Op::logical_or),
        plain(Op::logical_xor),
        plain(Op::maximum),
        plain(Op::minimum),
        with(Op::mul, C::zero_shift),
        plain(Op::pow),
        plain(Op::sub),
        plain(Op::abs),
        plain(Op::ceil),
        plain(Op::cos),
        plain(Op::exp),
        plain(Op::floor),
        plain(Op::log),
        plain(Op::logical_not),
        with(Op::negate, C::zero_zero_points),
        plain(Op::reciprocal),
        plain(Op::rsqrt),
        plain(Op::sin),
        plain(Op::select),
        plain(Op::equal),
        plain(Op::greater),
        plain(Op::greater_equal),
        plain(Op::reduce_max),
        plain(Op::reduce_min),
        plain(Op::reduce_product),
        plain(Op::reduce_sum),
        plain(Op::concat),
        with(Op::reshape, C::constant_parameters),
        plain(Op::reverse),
        plain(Op::transpose),
        plain(Op::const_),
        plain(Op::const_shape),
        plain(Op::identity),
    };
}

// MATMUL and the data movement around it. The reference design's table lists CAST,
// MAX_POOL2D and ARGMAX although its comment calls them absent; the table is
// what admission consults, so they are here.
std::vector<OperatorCapability> fp8_operators()
{
    using C = OperatorConstraint;
    return {
        with(Op::matmul, C::zero_zero_points),
        plain(Op::concat),
        with(Op::reshape, C::constant_parameters),
        plain(Op::reverse),
        plain(Op::transpose),
        plain(Op::const_),
        plain(Op::const_shape),
        plain(Op::identity),
        plain(Op::cast),
        plain(Op::max_pool2d),
        plain(Op::argmax),
    };
}

GraphEnvelope single_block()
{
    return GraphEnvelope{1, 1, false, RuntimeConditionSupport::none};
}

// ----- operand positions ----------------------------------------------------

// Operands TOSA 1.0 defines as compile-time constants (zero points, shifts,
// shapes, tables, rescale parameters).
std::span<const std::uint32_t> compile_time_operands(Op op)
{
    static constexpr std::uint32_t one[] = {1};
    static constexpr std::uint32_t two[] = {2};
    static constexpr std::uint32_t one_two[] = {1, 2};
    static constexpr std::uint32_t two_three[] = {2, 3};
    static constexpr std::uint32_t three_four[] = {3, 4};
    static constexpr std::uint32_t one_to_three[] = {1, 2, 3};
    static constexpr std::uint32_t one_to_four[] = {1, 2, 3, 4};
    switch (op) {
    case Op::avg_pool2d: return one_two;
    case Op::conv2d:
    case Op::conv3d:
    case Op::depthwise_conv2d:
    case Op::transpose_conv2d: return three_four;
    case Op::matmul: return two_three;
    case Op::mul: return two;
    case Op::table: return one;
    case Op::negate: return one_two;
    case Op::pad: return one_two;
    case Op::reshape: return one;
    case Op::slice: return one_two;
    case Op::tile: return one;
    case Op::resize: return one_to_three;
    case Op::rescale: return one_to_four;
    default: return {};
    }
}

std::span<const std::uint32_t> zero_point_operands(Op op)
{
    static constexpr std::uint32_t one_two[] = {1, 2};
    static constexpr std::uint32_t two_three[] = {2, 3};
    static constexpr std::uint32_t three_four[] = {3, 4};
    switch (op) {
    case Op::avg_pool2d:
    case Op::negate: return one_two;
    case Op::matmul: return two_three;
    case Op::conv2d:
    case Op::conv3d:
    case Op::depthwise_conv2d:
    case Op::transpose_conv2d:
    case Op::rescale: return three_four;
    default: return {};
    }
}

std::span<const std::uint32_t> shape_operands(Op op)
{
    static constexpr std::uint32_t one[] = {1};
    static constexpr std::uint32_t one_two[] = {1, 2};
    static constexpr std::uint32_t one_to_three[] = {1, 2, 3};
    switch (op) {
    case Op::reshape:
    case Op::pad:
    case Op::tile: return one;
    case Op::slice: return one_two;
    case Op::resize: return one_to_three;
    default: return {};
    }
}

bool contains(std::span<const std::uint32_t> list, std::uint32_t value)
{
    return std::ranges::find(list, value) != list.end();
}

bool has_nan_mode(Op op)
{
    switch (op) {
    case Op::argmax:
    case Op::max_pool2d:
    case Op::clamp:
    case Op::maximum:
    case Op::minimum:
    case Op::reduce_max:
    case Op::reduce_min: return true;
    default: return false;
    }
}

constexpr std::uint32_t nan_propagate = 1;

// Every element zero; for floating-point dtypes the sign bit is ignored.
bool all_zero(DType dtype, const std::vector<std::uint8_t>& data)
{
    if (data.empty()) return false;
    std::size_t width = 1;
    std::uint8_t sign_mask = 0xff;  // mask of the most significant byte
    switch (dtype) {
    case DType::fp32: width = 4; sign_mask = 0x7f; break;
    case DType::fp16:
    case DType::bf16: width = 2; sign_mask = 0x7f; break;
    case DType::fp8e4m3:
    case DType::fp8e5m2: width = 1; sign_mask = 0x7f; break;
    default: break;
    }
    if (data.size() % width != 0) return false;
    for (std::size_t i = 0; i < data.size(); ++i) {
        const bool top = (i % width) == width - 1;  // little-endian: last byte holds the sign
        const std::uint8_t mask = top ? sign_mask : 0xff;
        if ((data[i] & mask) != 0) return false;
    }
    return true;
}

// ----- refusals -------------------------------------------------------------

std::string where(const Graph& graph, BlockRef ref)
{
    const Region& region = graph.regions[ref.region];
    return fmt::format("block '{}' (region '{}')", region.blocks[ref.block].name, region.name);
}

std::string where(const Graph& graph, BlockRef ref, std::uint32_t index)
{
    const Operator& op = graph.regions[ref.region].blocks[ref.block].operators[index];
    return fmt::format("operator {} ({}) of {}", index, op_name(op.op), where(graph, ref));
}

std::unexpected<Error> refuse(Errc code, std::uint32_t detail, std::uint64_t arg0,
                              std::uint64_t arg1, std::string note)
{
    return fail(Error::of(code, detail, arg0, arg1).with_note(std::move(note)));
}

std::unexpected<Error> envelope(std::uint32_t reason, std::uint64_t arg1, std::string note)
{
    return refuse(Errc::unsupported, VACCEL_D_TOSA_GRAPH, reason, arg1, std::move(note));
}

// The dtype an operator is judged on: its first result's, else its first operand's.
DType operator_dtype(const Block& block, const Operator& op)
{
    if (!op.outputs.empty() && op.outputs[0] < block.tensors.size())
        return block.tensors[op.outputs[0]].dtype;
    if (!op.inputs.empty() && op.inputs[0] < block.tensors.size())
        return block.tensors[op.inputs[0]].dtype;
    return DType::unknown;
}

bool is_block_output(const BlockAnalysis& info, std::uint32_t tensor)
{
    return std::ranges::find(info.outputs, tensor) != info.outputs.end();
}

// Serialized data known before the block runs: a constant, or a copy of an
// enclosing block's constant (a captured tensor carries its data).
bool is_constant(const Block& block, const BlockAnalysis& info, std::uint32_t tensor)
{
    const ValueKind kind = info.values[tensor].kind;
    return kind == ValueKind::constant ||
           (kind == ValueKind::captured && !block.tensors[tensor].data.empty());
}

// The role of a tensor as an operator reads or writes it.
Role role_of(const Block& block, const BlockAnalysis& info, std::uint32_t tensor)
{
    if (info.values[tensor].kind == ValueKind::block_input) return Role::input;
    if (is_constant(block, info, tensor)) return Role::constant;
    return is_block_output(info, tensor) ? Role::output : Role::intermediate;
}

// A runtime condition of one operator, if it has one the tiers count.
const char* runtime_condition(const Block& block, const Operator& op)
{
    switch (op.op) {
    case Op::arithmetic_right_shift:
    case Op::logical_left_shift:
    case Op::logical_right_shift: return "its shift amount must be in range at run time";
    case Op::intdiv: return "its divisor must be non-zero at run time";
    case Op::mul:
        if (!op.inputs.empty() && op.inputs[0] < block.tensors.size() &&
            block.tensors[op.inputs[0]].dtype == DType::int32)
            return "its INT32 product must fit after the shift at run time";
        return nullptr;
    case Op::gather: return "its indices must be in range at run time";
    case Op::scatter: return "its indices must be in range and unique at run time";
    case Op::variable_read:
    case Op::variable_write: return "it reads or writes variable state at run time";
    case Op::custom: return "a CUSTOM operator's conditions are unknown";
    default: return nullptr;  // POW's domain: an IEEE kernel yields NaN
    }
}

struct Admission {
    const Graph& graph;
    const Analysis& analysis;
    const CapabilityDescriptor& d;

    Status envelope_checks() const;
    Status runtime_conditions() const;
    Status block(BlockRef ref) const;
    Status dtype_in_role(BlockRef ref, std::uint32_t tensor, Role role, Op op, bool parameter,
                         const std::string& what) const;
    Status constraints(BlockRef ref, std::uint32_t index, const OperatorCapability& cap) const;
};

Status Admission::envelope_checks() const
{
    std::size_t blocks = 0;
    for (const Region& region : graph.regions) blocks += region.blocks.size();
    if (graph.regions.empty() || graph.regions.size() > d.graph.max_regions)
        return envelope(VACCEL_TOSA_REGIONS, 0,
                        fmt::format("the graph has {} regions; {} admits 1 to {}",
                                    graph.regions.size(), target_text(d.target),
                                    d.graph.max_regions));
    if (blocks == 0 || blocks > d.graph.max_blocks)
        return envelope(VACCEL_TOSA_REGIONS, 0,
                        fmt::format("the graph has {} blocks; {} admits 1 to {}", blocks,
                                    target_text(d.target), d.graph.max_blocks));

    auto each_block = [&](auto&& visit) -> Status {
        for (std::uint32_t r = 0; r < graph.regions.size(); ++r)
            for (std::uint32_t b = 0; b < graph.regions[r].blocks.size(); ++b)
                if (auto s = visit(BlockRef{r, b}, graph.regions[r].blocks[b]); !s) return s;
        return {};
    };

    if (!d.allows_control_flow()) {
        auto s = each_block([&](BlockRef ref, const Block& block) -> Status {
            for (std::uint32_t i = 0; i < block.operators.size(); ++i) {
                const Op op = block.operators[i].op;
                if (op == Op::cond_if || op == Op::while_loop)
                    return envelope(VACCEL_TOSA_CONTROL_FLOW, u(op),
                                    fmt::format("{}: control flow needs the CONTROLFLOW "
                                                "extension, which {} does not have",
                                                where(graph, ref, i), target_text(d.target)));
            }
            return {};
        });
        if (!s) return s;
    }
    if (!d.allows_variables()) {
        auto s = each_block([&](BlockRef ref, const Block& block) -> Status {
            for (std::uint32_t i = 0; i < block.operators.size(); ++i) {
                const Op op = block.operators[i].op;
                if (op == Op::variable || op == Op::variable_read || op == Op::variable_write)
                    return envelope(VACCEL_TOSA_VARIABLES, u(op),
                                    fmt::format("{}: variables need the VARIABLE extension, "
                                                "which {} does not have",
                                                where(graph, ref, i), target_text(d.target)));
            }
            for (const Tensor& tensor : block.tensors)
                if (tensor.variable)
                    return envelope(VACCEL_TOSA_VARIABLES, u(Op::variable),
                                    fmt::format("tensor '{}' of {} is a variable; variables "
                                                "need the VARIABLE extension, which {} does not "
                                                "have",
                                                tensor.name, where(graph, ref),
                                                target_text(d.target)));
            return {};
        });
        if (!s) return s;
    }
    if (!d.graph.dynamic_shapes) {
        auto s = each_block([&](BlockRef ref, const Block& block) -> Status {
            for (const Tensor& tensor : block.tensors)
                for (std::int64_t dim : tensor.shape)
                    if (dim < 0)
                        return envelope(VACCEL_TOSA_BAD_SHAPE, 0,
                                        fmt::format("tensor '{}' of {} has a dynamic dimension; "
                                                    "{} admits static shapes only",
                                                    tensor.name, where(graph, ref),
                                                    target_text(d.target)));
            return {};
        });
        if (!s) return s;
    }
    return {};
}

Status Admission::runtime_conditions() const
{
    // REQUIRE conditions are advisory; the only mandatory ones come from
    // dynamic compile-time operands, which analyze() has already refused.
    if (d.graph.runtime_conditions == RuntimeConditionSupport::advisory_only) return {};
    for (std::uint32_t r = 0; r < graph.regions.size(); ++r) {
        for (std::uint32_t b = 0; b < graph.regions[r].blocks.size(); ++b) {
            const Block& block = graph.regions[r].blocks[b];
            for (std::uint32_t i = 0; i < block.operators.size(); ++i) {
                const Operator& op = block.operators[i];
                const char* condition = runtime_condition(block, op);
                if (condition == nullptr) continue;
                const DType dtype = operator_dtype(block, op);
                return refuse(Errc::unsupported, VACCEL_D_TOSA_OPERATOR, u(op.op), u(dtype),
                              fmt::format("{}: {}, a check {} does not perform",
                                          where(graph, BlockRef{r, b}, i), condition,
                                          target_text(d.target)));
            }
        }
    }
    return {};
}

Status Admission::dtype_in_role(BlockRef ref, std::uint32_t tensor, Role role, Op op,
                                bool parameter, const std::string& what) const
{
    const Tensor& t = graph.regions[ref.region].blocks[ref.block].tensors[tensor];
    if (t.dtype == DType::shape) return {};  // shape values are not tensors to a descriptor
    const DTypeCapability* cap = d.dtype(t.dtype);
    std::string why;
    if (cap == nullptr)
        why = "no role";
    else if (!cap->allows(role))
        why = fmt::format("no {} role", role_name(role));
    else if (cap->parameter_only && !parameter)
        why = "only compile-time operator parameters";
    else
        return {};
    return refuse(Errc::unsupported, VACCEL_D_TOSA_DTYPE, u(t.dtype), u(op),
                  fmt::format("{} '{}' is {}, which {} admits in {}", what, t.name,
                              dtype_name(t.dtype), target_text(d.target), why));
}

Status Admission::constraints(BlockRef ref, std::uint32_t index,
                              const OperatorCapability& cap) const
{
    const Block& block = graph.regions[ref.region].blocks[ref.block];
    const BlockAnalysis& info = analysis.block(ref);
    const Operator& op = block.operators[index];
    auto broken = [&](std::string what) {
        return refuse(Errc::unsupported, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_BAD_ATTRIBUTE,
                      u(op.op),
                      fmt::format("{}: {}, as {} requires", where(graph, ref, index), what,
                                  target_text(d.target)));
    };
    auto zero_constant = [&](std::uint32_t position) {
        if (position >= op.inputs.size()) return false;
        const std::uint32_t t = op.inputs[position];
        return is_constant(block, info, t) &&
               all_zero(block.tensors[t].dtype, block.tensors[t].data);
    };
    if (cap.has(OperatorConstraint::propagating_nan) && has_nan_mode(op.op) &&
        op.attributes.nan_mode != nan_propagate)
        return broken(fmt::format("nan_mode is {}, not PROPAGATE", op.attributes.nan_mode));
    if (cap.has(OperatorConstraint::zero_padding) &&
        (op.op == Op::max_pool2d || op.op == Op::avg_pool2d) &&
        std::ranges::any_of(op.attributes.pad, [](std::int32_t p) { return p != 0; }))
        return broken("its padding is not zero");
    if (cap.has(OperatorConstraint::constant_parameters))
        for (std::uint32_t position : shape_operands(op.op))
            if (position < op.inputs.size() && !is_constant(block, info, op.inputs[position]))
                return broken(fmt::format("operand {} ('{}') is not a serialized constant",
                                          position, block.tensors[op.inputs[position]].name));
    if (cap.has(OperatorConstraint::zero_zero_points))
        for (std::uint32_t position : zero_point_operands(op.op))
            if (position < op.inputs.size() && !zero_constant(position))
                return broken(fmt::format("zero point operand {} ('{}') is not a serialized zero",
                                          position, block.tensors[op.inputs[position]].name));
    if (cap.has(OperatorConstraint::zero_shift) && op.op == Op::mul && op.inputs.size() > 2 &&
        !zero_constant(2))
        return broken(fmt::format("the shift operand ('{}') is not a serialized zero",
                                  block.tensors[op.inputs[2]].name));
    return {};
}

Status Admission::block(BlockRef ref) const
{
    const Block& block = graph.regions[ref.region].blocks[ref.block];
    const BlockAnalysis& info = analysis.block(ref);

    // The boundary first: inputs, then outputs, in declared order.
    for (std::uint32_t tensor : info.inputs) {
        Op consumer = Op::unknown;
        for (std::uint32_t index : info.live_order) {
            const Operator& op = block.operators[index];
            if (contains(op.inputs, tensor) ||
                contains(info.operators[index].implicit_inputs, tensor)) {
                consumer = op.op;
                break;
            }
        }
        if (auto s = dtype_in_role(ref, tensor, Role::input, consumer, false,
                                   fmt::format("input of {}", where(graph, ref)));
            !s)
            return s;
    }
    for (std::uint32_t tensor : info.outputs) {
        const std::uint32_t producer = info.values[tensor].producer;
        const Op op = producer == no_operator ? Op::unknown : block.operators[producer].op;
        if (auto s = dtype_in_role(ref, tensor, Role::output, op, false,
                                   fmt::format("output of {}", where(graph, ref)));
            !s)
            return s;
    }

    for (std::uint32_t index : info.live_order) {
        const Operator& op = block.operators[index];
        if (op.op == Op::const_ || op.op == Op::const_shape) continue;
        const OperatorCapability* cap = d.operator_capability(op.op);
        if (cap == nullptr) {
            const DType dtype = operator_dtype(block, op);
            return refuse(Errc::unsupported, VACCEL_D_TOSA_OPERATOR, u(op.op), u(dtype),
                          fmt::format("{}: {} on {} is not among the operators {} admits",
                                      where(graph, ref, index), op_name(op.op),
                                      dtype_name(dtype), target_text(d.target)));
        }
        const auto ctc = compile_time_operands(op.op);
        for (std::uint32_t position = 0; position < op.inputs.size(); ++position) {
            const std::uint32_t tensor = op.inputs[position];
            const Role role = role_of(block, info, tensor);
            const bool parameter = role == Role::constant && contains(ctc, position);
            if (auto s = dtype_in_role(ref, tensor, role, op.op, parameter,
                                       fmt::format("{}: operand {}", where(graph, ref, index),
                                                   position));
                !s)
                return s;
        }
        for (std::uint32_t position = 0; position < op.outputs.size(); ++position) {
            const std::uint32_t tensor = op.outputs[position];
            const Role role = is_block_output(info, tensor) ? Role::output : Role::intermediate;
            if (auto s = dtype_in_role(ref, tensor, role, op.op, false,
                                       fmt::format("{}: result {}", where(graph, ref, index),
                                                   position));
                !s)
                return s;
        }
        if (auto s = constraints(ref, index, *cap); !s) return s;
    }
    return {};
}

}  // namespace

// ----- targets --------------------------------------------------------------

vaccel_tosa_target Target::to_uapi() const
{
    vaccel_tosa_target t{};
    t.major = major;
    t.minor = minor;
    t.profiles = profiles;
    t.level = level;
    t.pad = 0;
    t.extensions = extensions;
    return t;
}

Result<Target> target_from_uapi(const vaccel_tosa_target& t)
{
    const Target target{t.major, t.minor, t.profiles, t.level, t.extensions};
    if (target.is_zero() && t.pad == 0) return target;
    const std::uint64_t bad_profiles = t.profiles & ~std::uint64_t{known_profiles};
    const std::uint64_t bad_extensions = t.extensions & ~known_extensions;
    if (bad_profiles != 0 || bad_extensions != 0 || t.profiles == 0 ||
        t.level > VACCEL_TOSA_LEVEL_8K || t.pad != 0)
        return fail(Error::of(Errc::incompatible, VACCEL_D_TARGET, bad_profiles, bad_extensions)
                        .with_note(fmt::format("the target (profiles {:#x}, level {}, extensions "
                                               "{:#x}, pad {}) names what this build does not "
                                               "know, or no profile",
                                               t.profiles, t.level, t.extensions, t.pad)));
    return target;
}

std::string target_text(const Target& t)
{
    std::string text = fmt::format("TOSA {}.{}", t.major, t.minor);
    if (t.profiles & VACCEL_TOSA_PRO_INT) text += " INT";
    if (t.profiles & VACCEL_TOSA_PRO_FP) text += " FP";
    text += t.level == VACCEL_TOSA_LEVEL_8K ? " level 8K" : " no level";
    static constexpr std::pair<std::uint64_t, const char*> names[] = {
        {VACCEL_TOSA_EXT_INT16, "INT16"},         {VACCEL_TOSA_EXT_INT4, "INT4"},
        {VACCEL_TOSA_EXT_BF16, "BF16"},           {VACCEL_TOSA_EXT_FP8E4M3, "FP8E4M3"},
        {VACCEL_TOSA_EXT_FP8E5M2, "FP8E5M2"},     {VACCEL_TOSA_EXT_FFT, "FFT"},
        {VACCEL_TOSA_EXT_VARIABLE, "VARIABLE"},   {VACCEL_TOSA_EXT_CONTROLFLOW, "CONTROLFLOW"},
        {VACCEL_TOSA_EXT_DOUBLEROUND, "DOUBLEROUND"},
        {VACCEL_TOSA_EXT_INEXACTROUND, "INEXACTROUND"},
        {VACCEL_TOSA_EXT_DYNAMIC, "DYNAMIC"},
    };
    for (const auto& [bit, name] : names)
        if (t.extensions & bit) text += fmt::format(" +{}", name);
    return text;
}

std::string_view role_name(Role role)
{
    switch (role) {
    case Role::input: return "input";
    case Role::output: return "output";
    case Role::constant: return "constant";
    case Role::intermediate: return "intermediate";
    }
    return "unknown";
}

Target fp32_target() { return {1, 0, VACCEL_TOSA_PRO_FP, VACCEL_TOSA_LEVEL_8K, 0}; }

Target fp8_target()
{
    return {1, 0, VACCEL_TOSA_PRO_FP, VACCEL_TOSA_LEVEL_8K,
            VACCEL_TOSA_EXT_FP8E4M3 | VACCEL_TOSA_EXT_FP8E5M2};
}

Target integer_target() { return {1, 0, VACCEL_TOSA_PRO_INT, VACCEL_TOSA_LEVEL_8K, 0}; }

// ----- descriptors ----------------------------------------------------------

const DTypeCapability* CapabilityDescriptor::dtype(DType which) const
{
    const auto it = std::ranges::find(dtypes, which, &DTypeCapability::dtype);
    return it == dtypes.end() ? nullptr : &*it;
}

const OperatorCapability* CapabilityDescriptor::operator_capability(Op which) const
{
    const auto it = std::ranges::find(operators, which, &OperatorCapability::op);
    return it == operators.end() ? nullptr : &*it;
}

bool CapabilityDescriptor::supports_dtype(DType which, Role role) const
{
    const DTypeCapability* cap = dtype(which);
    return cap != nullptr && cap->allows(role);
}

CapabilityDescriptor fp32_tier()
{
    return CapabilityDescriptor{
        fp32_target(),
        {any_role(DType::fp32), any_role(DType::boolean), any_role(DType::int32),
         // MUL's shift: an INT8 constant consumed at admission, never a tensor.
         parameter(DType::int8)},
        float_operators(),
        single_block(),
    };
}

CapabilityDescriptor fp16_tier()
{
    return CapabilityDescriptor{
        fp32_target(),
        {any_role(DType::fp32), any_role(DType::fp16), any_role(DType::boolean),
         any_role(DType::int32), parameter(DType::int8)},
        float_operators(),
        single_block(),
    };
}

CapabilityDescriptor fp8_tier()
{
    return CapabilityDescriptor{
        fp8_target(),
        {any_role(DType::fp8e4m3), any_role(DType::fp8e5m2), any_role(DType::fp16),
         any_role(DType::int32)},
        fp8_operators(),
        single_block(),
    };
}

// ----- admission ------------------------------------------------------------

Status admit(const Graph& graph, const Analysis& analysis, const CapabilityDescriptor& descriptor)
{
    const Target& target = descriptor.target;
    if (graph.version.major != target.major || graph.version.minor != target.minor)
        return fail(Error::of(Errc::incompatible, VACCEL_D_TARGET,
                              static_cast<std::uint64_t>(
                                  static_cast<std::uint32_t>(graph.version.major)),
                              static_cast<std::uint64_t>(
                                  static_cast<std::uint32_t>(graph.version.minor)))
                        .with_note(fmt::format("the graph is TOSA {}.{}; the target is {}",
                                               graph.version.major, graph.version.minor,
                                               target_text(target))));
    if (analysis.regions.size() != graph.regions.size())
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
                        .with_note("the analysis does not belong to this graph"));
    for (std::size_t r = 0; r < graph.regions.size(); ++r)
        if (analysis.regions[r].blocks.size() != graph.regions[r].blocks.size())
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
                            .with_note("the analysis does not belong to this graph"));

    const Admission admission{graph, analysis, descriptor};
    if (auto s = admission.envelope_checks(); !s) return s;
    if (auto s = admission.runtime_conditions(); !s) return s;
    for (std::uint32_t r = 0; r < graph.regions.size(); ++r)
        for (std::uint32_t b = 0; b < graph.regions[r].blocks.size(); ++b)
            if (auto s = admission.block(BlockRef{r, b}); !s) return s;
    return {};
}

Status admit(const Graph& graph, const Analysis& analysis, const CapabilityDescriptor& descriptor,
             const Target& requested)
{
    if (!requested.is_zero() && requested != descriptor.target)
        return fail(Error::of(Errc::incompatible, VACCEL_D_TARGET)
                        .with_note(fmt::format("the program asks for {}; this tier is {}",
                                               target_text(requested),
                                               target_text(descriptor.target))));
    return admit(graph, analysis, descriptor);
}

// ----- the uapi form (VACCEL_IOCTL_DEVICE_TOSA) -----------------------------

// The uapi numbers are the value type's own bits: one conversion, no table.
static_assert(role_bit(Role::input) == VACCEL_TOSA_ROLE_INPUT);
static_assert(role_bit(Role::output) == VACCEL_TOSA_ROLE_OUTPUT);
static_assert(role_bit(Role::constant) == VACCEL_TOSA_ROLE_CONSTANT);
static_assert(role_bit(Role::intermediate) == VACCEL_TOSA_ROLE_INTERMEDIATE);
static_assert(all_roles == VACCEL_TOSA_ROLE_ALL);
static_assert(constraint_bit(OperatorConstraint::propagating_nan) ==
              VACCEL_TOSA_OPC_PROPAGATING_NAN);
static_assert(constraint_bit(OperatorConstraint::zero_padding) == VACCEL_TOSA_OPC_ZERO_PADDING);
static_assert(constraint_bit(OperatorConstraint::constant_parameters) ==
              VACCEL_TOSA_OPC_CONSTANT_PARAMETERS);
static_assert(constraint_bit(OperatorConstraint::zero_zero_points) ==
              VACCEL_TOSA_OPC_ZERO_ZERO_POINTS);
static_assert(constraint_bit(OperatorConstraint::zero_shift) == VACCEL_TOSA_OPC_ZERO_SHIFT);
static_assert(op_count <= VACCEL_TOSA_MAX_OPS);

namespace {

// The last DType value TOSA 1.0 defines (tosa.fbs): FP8E5M2.
constexpr std::uint32_t dtype_count = u(DType::fp8e5m2) + 1;
static_assert(dtype_count <= VACCEL_TOSA_MAX_DTYPES);
static_assert(VACCEL_TOSA_MAX_DTYPES <= 32, "vaccel_tosa_op_caps.dtypes is a 32-bit mask");

Error bad_descriptor_field(std::size_t offset, std::uint64_t value, std::string_view what)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, offset, value)
        .with_note(fmt::format("the TOSA descriptor's {} holds {} ({:#x}), which this build "
                               "does not define; update the library to the daemon's ABI "
                               "version",
                               what, value, value));
}

}  // namespace

vaccel_tosa_descriptor to_uapi(const CapabilityDescriptor& d)
{
    vaccel_tosa_descriptor out{};
    out.target = d.target.to_uapi();
    out.envelope.max_regions = d.graph.max_regions;
    out.envelope.max_blocks = d.graph.max_blocks;
    out.envelope.dynamic_shapes = d.graph.dynamic_shapes ? 1 : 0;
    out.envelope.runtime_conditions = d.graph.runtime_conditions ==
                                              RuntimeConditionSupport::advisory_only
                                          ? VACCEL_TOSA_RUNTIME_ADVISORY
                                          : VACCEL_TOSA_RUNTIME_NONE;
    for (const DTypeCapability& c : d.dtypes) {
        if (u(c.dtype) >= VACCEL_TOSA_MAX_DTYPES) continue;  // the enum never gets there
        out.dtypes[u(c.dtype)].roles = c.roles;
        out.dtypes[u(c.dtype)].parameter_only = c.parameter_only ? 1 : 0;
    }
    for (const OperatorCapability& c : d.operators) {
        if (u(c.op) >= VACCEL_TOSA_MAX_OPS) continue;
        vaccel_tosa_op_caps& entry = out.operators[u(c.op)];
        entry.present = 1;
        entry.constraints = c.constraints;
        for (DType dtype : c.dtypes)
            if (u(dtype) < VACCEL_TOSA_MAX_DTYPES) entry.dtypes |= 1u << u(dtype);
    }
    return out;
}

Result<CapabilityDescriptor> descriptor_from_uapi(const vaccel_tosa_descriptor& in)
{
    using D = vaccel_tosa_descriptor;
    CapabilityDescriptor d;
    auto target = target_from_uapi(in.target);
    if (!target) return fail(std::move(target.error()));
    d.target = *target;
    if (in.pad != 0) return fail(bad_descriptor_field(offsetof(D, pad), in.pad, "pad"));
    for (std::size_t i = 0; i < std::size(in.reserved); ++i)
        if (in.reserved[i] != 0)
            return fail(bad_descriptor_field(offsetof(D, reserved) + i * sizeof in.reserved[0],
                                             in.reserved[i], "reserved field"));
    const vaccel_tosa_envelope& e = in.envelope;
    if (e.dynamic_shapes > 1)
        return fail(bad_descriptor_field(offsetof(D, envelope.dynamic_shapes), e.dynamic_shapes,
                                         "dynamic_shapes"));
    if (e.runtime_conditions > VACCEL_TOSA_RUNTIME_ADVISORY)
        return fail(bad_descriptor_field(offsetof(D, envelope.runtime_conditions),
                                         e.runtime_conditions, "runtime_conditions"));
    d.graph = GraphEnvelope{e.max_regions, e.max_blocks, e.dynamic_shapes == 1,
                            e.runtime_conditions == VACCEL_TOSA_RUNTIME_ADVISORY
                                ? RuntimeConditionSupport::advisory_only
                                : RuntimeConditionSupport::none};

    for (std::uint32_t v = 0; v < VACCEL_TOSA_MAX_DTYPES; ++v) {
        const vaccel_tosa_dtype_caps& c = in.dtypes[v];
        const std::size_t at = offsetof(D, dtypes) + v * sizeof c;
        if (c.roles == 0 && c.parameter_only == 0) continue;
        if (v == 0 || v >= dtype_count)
            return fail(bad_descriptor_field(at, v, "dtype entry (no such TOSA 1.0 dtype)"));
        if ((c.roles & ~std::uint32_t{VACCEL_TOSA_ROLE_ALL}) != 0)
            return fail(bad_descriptor_field(at + offsetof(vaccel_tosa_dtype_caps, roles),
                                             c.roles, "role bits"));
        if (c.parameter_only > 1)
            return fail(bad_descriptor_field(at + offsetof(vaccel_tosa_dtype_caps, parameter_only),
                                             c.parameter_only, "parameter_only"));
        d.dtypes.push_back({static_cast<DType>(v), static_cast<std::uint8_t>(c.roles),
                            c.parameter_only == 1});
    }

    for (std::uint32_t v = 0; v < VACCEL_TOSA_MAX_OPS; ++v) {
        const vaccel_tosa_op_caps& c = in.operators[v];
        const std::size_t at = offsetof(D, operators) + v * sizeof c;
        if (c.present == 0 && c.pad == 0 && c.constraints == 0 && c.dtypes == 0) continue;
        if (c.present != 1)
            return fail(bad_descriptor_field(at + offsetof(vaccel_tosa_op_caps, present),
                                             c.present, "operator present flag"));
        if (v == 0 || v >= op_count)
            return fail(bad_descriptor_field(at, v, "operator entry (no such TOSA 1.0 operator)"));
        if (c.pad != 0)
            return fail(bad_descriptor_field(at + offsetof(vaccel_tosa_op_caps, pad), c.pad,
                                             "operator pad"));
        if ((c.constraints & ~std::uint32_t{VACCEL_TOSA_OPC_ALL}) != 0)
            return fail(bad_descriptor_field(at + offsetof(vaccel_tosa_op_caps, constraints),
                                             c.constraints, "constraint bits"));
        if ((c.dtypes & ~((std::uint32_t{1} << dtype_count) - 1)) != 0 || (c.dtypes & 1u) != 0)
            return fail(bad_descriptor_field(at + offsetof(vaccel_tosa_op_caps, dtypes), c.dtypes,
                                             "operator dtype bits"));
        OperatorCapability op{static_cast<Op>(v), c.constraints, {}};
        for (std::uint32_t t = 1; t < dtype_count; ++t)
            if (c.dtypes & (1u << t)) op.dtypes.push_back(static_cast<DType>(t));
        d.operators.push_back(std::move(op));
    }
    return d;
}

}  // namespace vaccel::tosa
