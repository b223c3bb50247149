// plan.cpp - compiling an admitted TOSA block into the CPU backend's plan.
//
// Decides: each operator's output shape is inferred from its operands with
// TOSA 1.0 rules and must equal the declared shape; operands that were
// attributes before TOSA 1.0 (MUL shift, MATMUL and CONV2D zero points,
// RESHAPE shape, SLICE start/size, PAD padding and pad_const, TILE multiples,
// NEGATE zero points) must be constants and are read here, once; every
// intermediate gets its own arena range (no lifetime packing: simple and
// sized once at load). Values are stored by dtype (plan.hpp): FP32 and INT32
// in 4 bytes, BOOL in one byte (0 or 1), each range at a multiple of 64 bytes.
// A graph TOSA 1.0 itself forbids is InvalidArgument / D_TOSA_MALFORMED, as
// the reference design reports what its TOSA analysis pass refuses before lowering
// (LoweringError::Analysis -> InvalidArgument): declared shapes that
// disagree with the operator (BAD_SHAPE), a RESHAPE shape with an inferred
// -1 dimension (BAD_SHAPE: TOSA 1.0 takes the complete output shape), a
// nan_mode other than PROPAGATE or IGNORE (BAD_ATTRIBUTE), an axis outside
// the rank, perms that are no permutation, SLICE/PAD/TILE shape operands
// that are not constants, have the wrong length or values TOSA 1.0 forbids
// (negative start or padding, size or multiples below 1, a slice past the
// end) (BAD_ATTRIBUTE).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "admission.hpp"
#include "gemm.hpp"
#include "plan.hpp"

namespace vaccel::backend::cpu {

using tosa::DType;
using tosa::Op;

namespace {

// NanPropagationMode (tosa.fbs): 0 is UNKNOWN, which TOSA 1.0 does not admit.
constexpr std::uint32_t nan_propagate = 1;
constexpr std::uint32_t nan_ignore = 2;

std::string shape_text(std::span<const std::int64_t> shape)
{
    return fmt::format("[{}]", fmt::join(shape, ","));
}

class Compiler {
public:
    explicit Compiler(const tosa::Block& block, const ExecutionOrder& order)
        : block_(block), order_(order), value_of_(block.tensors.size(), none)
    {
    }

    Status check_shapes(std::uint32_t index);
    Result<std::shared_ptr<const Plan>> build();

private:
    static constexpr std::uint32_t none = UINT32_MAX;

    const tosa::Tensor& in(const tosa::Operator& op, std::size_t i) const
    {
        return block_.tensors[op.inputs[i]];
    }
    const tosa::Tensor& out(const tosa::Operator& op) const { return block_.tensors[op.outputs[0]]; }

    Error bad_shape(std::uint32_t index, std::string why) const
    {
        return malformed(VACCEL_TOSA_BAD_SHAPE,
                         fmt::format("operator {} ({}): {}", index,
                                     tosa::op_name(block_.operators[index].op), why));
    }
    Error bad_attribute(std::uint32_t index, std::string why) const
    {
        return malformed(VACCEL_TOSA_BAD_ATTRIBUTE,
                         fmt::format("operator {} ({}): {}", index,
                                     tosa::op_name(block_.operators[index].op), why));
    }
    Status expect_output(std::uint32_t index, const std::vector<std::int64_t>& inferred) const
    {
        const tosa::Tensor& output = out(block_.operators[index]);
        if (output.shape != inferred)
            return fail(bad_shape(index, fmt::format("output '{}' is declared {} but the operands "
                                                     "give {}",
                                                     output.name, shape_text(output.shape),
                                                     shape_text(inferred))));
        return {};
    }
    // A zero-point or shift operand: a constant whose every element is zero.
    Status expect_zero_constant(std::uint32_t index, std::size_t operand, std::string_view what) const;

    Status check_broadcast(std::uint32_t index);
    Status check_matmul(std::uint32_t index);
    Status check_reshape(std::uint32_t index);
    Status check_transpose(std::uint32_t index);
    Status check_clamp(std::uint32_t index);
    Status check_reduce(std::uint32_t index);
    Status check_conv2d(std::uint32_t index);
    Status check_nan_mode(std::uint32_t index) const;
    Status check_axis(std::uint32_t index, std::size_t rank) const;
    Status check_select(std::uint32_t index);
    Status check_argmax(std::uint32_t index);
    Status check_concat(std::uint32_t index);
    Status check_slice(std::uint32_t index);
    Status check_pad(std::uint32_t index);
    Status check_tile(std::uint32_t index);
    // The values of a SHAPE operand, which must be a constant with `count` elements.
    Result<std::vector<std::int64_t>> shape_operand(std::uint32_t index, std::size_t operand,
                                                    std::string_view what,
                                                    std::size_t count) const;

    std::uint32_t value_for(std::uint32_t tensor);
    std::uint32_t add_value(Value value);

    const tosa::Block& block_;
    const ExecutionOrder& order_;
    std::vector<std::uint32_t> value_of_;  // tensor -> value index
    Plan plan_;
    std::vector<Conv2dGeometry> conv_;     // per operator index, filled by check_conv2d
    // Per operator index, filled by check_slice / check_pad: SLICE start or
    // PAD padding before each dimension, and PAD's pad_const.
    std::vector<std::vector<std::int64_t>> start_;
    std::vector<float> pad_value_;
};

// The first element of an FP32 constant (PAD's pad_const).
float first_float(const tosa::Tensor& t)
{
    float value = 0.0f;
    std::memcpy(&value, t.data.data(), sizeof value);
    return value;
}

Status Compiler::expect_zero_constant(std::uint32_t index, std::size_t operand,
                                      std::string_view what) const
{
    const std::uint32_t tensor = block_.operators[index].inputs[operand];
    const tosa::Tensor& t = block_.tensors[tensor];
    if (!order_.constant[tensor])
        return fail(bad_attribute(index, fmt::format("{} '{}' must be a constant", what, t.name)));
    if (t.element_count() != 1)
        return fail(bad_attribute(index, fmt::format("{} '{}' must have one element, has shape {}",
                                                     what, t.name, shape_text(t.shape))));
    // FP32 compares as a number (so -0.0 is zero); INT8 by its byte.
    bool zero = false;
    if (t.dtype == DType::fp32) {
        float value;
        std::memcpy(&value, t.data.data(), sizeof value);
        zero = value == 0.0f;
    } else {
        zero = t.data[0] == 0;
    }
    if (!zero)
        return fail(bad_attribute(index, fmt::format("{} '{}' must be zero for FP32", what, t.name)));
    return {};
}

Status Compiler::check_broadcast(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& a = in(op, 0).shape;
    const auto& b = in(op, 1).shape;
    if (a.size() != b.size())
        return fail(bad_shape(index, fmt::format("operands {} and {} differ in rank; TOSA "
                                                 "broadcasting needs equal ranks",
                                                 shape_text(a), shape_text(b))));
    std::vector<std::int64_t> shape(a.size());
    for (std::size_t d = 0; d < a.size(); ++d) {
        if (a[d] != b[d] && a[d] != 1 && b[d] != 1)
            return fail(bad_shape(index, fmt::format("operands {} and {} do not broadcast "
                                                     "(dimension {})",
                                                     shape_text(a), shape_text(b), d)));
        shape[d] = a[d] == 1 ? b[d] : a[d];
    }
    if (op.op == Op::maximum || op.op == Op::minimum)
        if (auto mode = check_nan_mode(index); !mode) return mode;
    if (op.op == Op::mul) {
        const tosa::Tensor& shift = in(op, 2);
        if (shift.shape.size() != 1)
            return fail(bad_shape(index, fmt::format("shift '{}' must have rank 1, has shape {}",
                                                     shift.name, shape_text(shift.shape))));
        if (auto zero = expect_zero_constant(index, 2, "shift"); !zero) return zero;
    }
    return expect_output(index, shape);
}

Status Compiler::check_matmul(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& a = in(op, 0).shape;
    const auto& b = in(op, 1).shape;
    if (a.size() != 3 || b.size() != 3 || a[0] != b[0] || a[2] != b[1])
        return fail(bad_shape(index, fmt::format("A {} and B {} are not [N,H,C] and [N,C,W]",
                                                 shape_text(a), shape_text(b))));
    if (auto zero = expect_zero_constant(index, 2, "A_zp"); !zero) return zero;
    if (auto zero = expect_zero_constant(index, 3, "B_zp"); !zero) return zero;
    return expect_output(index, {a[0], a[1], b[2]});
}

Status Compiler::check_reshape(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const std::uint32_t shape_tensor = op.inputs[1];
    const tosa::Tensor& shape = block_.tensors[shape_tensor];
    if (!order_.constant[shape_tensor])
        return fail(bad_attribute(index, fmt::format("shape '{}' must be a constant (CONST_SHAPE)",
                                                     shape.name)));
    const std::uint64_t rank = shape.element_count();
    if (rank > VACCEL_MAX_RANK || shape.data.size() < rank * 8)
        return fail(bad_attribute(index, fmt::format("shape '{}' has {} elements", shape.name, rank)));
    std::vector<std::int64_t> target(rank);
    std::memcpy(target.data(), shape.data.data(), rank * 8);
    const tosa::Tensor& output = out(op);
    if (output.shape.size() != rank)
        return fail(bad_shape(index, fmt::format("output '{}' is declared {} but the shape operand "
                                                 "is {}",
                                                 output.name, shape_text(output.shape),
                                                 shape_text(target))));
    // TOSA 1.0 RESHAPE takes the complete output shape: -1 (a dimension
    // inferred from the element count, as TOSA 0.80 allowed) is refused like
    // any other value that differs from the declared output.
    for (std::size_t d = 0; d < rank; ++d) {
        if (target[d] == output.shape[d]) continue;
        if (target[d] == -1)
            return fail(bad_shape(index, fmt::format("shape operand '{}' is {}: TOSA 1.0 RESHAPE "
                                                     "takes the complete output shape {} (no "
                                                     "-1 dimension)",
                                                     shape.name, shape_text(target),
                                                     shape_text(output.shape))));
        return fail(bad_shape(index, fmt::format("output '{}' is declared {} but the shape "
                                                 "operand is {}",
                                                 output.name, shape_text(output.shape),
                                                 shape_text(target))));
    }
    if (in(op, 0).element_count() != output.element_count())
        return fail(bad_shape(index, fmt::format("reshape from {} to {} changes the element count",
                                                 shape_text(in(op, 0).shape),
                                                 shape_text(output.shape))));
    return {};
}

Status Compiler::check_transpose(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& shape = in(op, 0).shape;
    const auto& perms = op.attributes.perms;
    if (perms.size() != shape.size())
        return fail(bad_attribute(index, fmt::format("perms has {} entries for rank {}",
                                                     perms.size(), shape.size())));
    std::vector<bool> seen(shape.size(), false);
    std::vector<std::int64_t> result(shape.size());
    for (std::size_t i = 0; i < perms.size(); ++i) {
        const std::int32_t p = perms[i];
        if (p < 0 || static_cast<std::size_t>(p) >= shape.size() || seen[static_cast<std::size_t>(p)])
            return fail(bad_attribute(index, fmt::format("perms [{}] is not a permutation of "
                                                         "0..{}",
                                                         fmt::join(perms, ","), shape.size() - 1)));
        seen[static_cast<std::size_t>(p)] = true;
        result[i] = shape[static_cast<std::size_t>(p)];
    }
    return expect_output(index, result);
}

Status Compiler::check_clamp(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& attributes = op.attributes;
    if (attributes.min_val.size() < 4 || attributes.max_val.size() < 4)
        return fail(bad_attribute(index, "min_val and max_val must each hold one FP32 value"));
    float min;
    float max;
    std::memcpy(&min, attributes.min_val.data(), 4);
    std::memcpy(&max, attributes.max_val.data(), 4);
    if (std::isnan(min) || std::isnan(max) || min > max)
        return fail(bad_attribute(index, fmt::format("bounds [{}, {}] must be numbers with "
                                                     "min <= max",
                                                     min, max)));
    if (auto mode = check_nan_mode(index); !mode) return mode;
    return expect_output(index, in(op, 0).shape);
}

Status Compiler::check_nan_mode(std::uint32_t index) const
{
    const std::uint32_t mode = block_.operators[index].attributes.nan_mode;
    if (mode != nan_propagate && mode != nan_ignore)
        return fail(bad_attribute(index, fmt::format("nan_mode {} is neither PROPAGATE (1) nor "
                                                     "IGNORE (2)",
                                                     mode)));
    return {};
}

Status Compiler::check_axis(std::uint32_t index, std::size_t rank) const
{
    const std::int32_t axis = block_.operators[index].attributes.axis;
    if (axis < 0 || static_cast<std::size_t>(axis) >= rank)
        return fail(bad_attribute(index, fmt::format("axis {} is outside rank {}", axis, rank)));
    return {};
}

Status Compiler::check_select(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& c = in(op, 0).shape;
    const auto& a = in(op, 1).shape;
    const auto& b = in(op, 2).shape;
    if (c.size() != a.size() || a.size() != b.size())
        return fail(bad_shape(index, fmt::format("operands {}, {} and {} differ in rank; TOSA "
                                                 "broadcasting needs equal ranks",
                                                 shape_text(c), shape_text(a), shape_text(b))));
    std::vector<std::int64_t> shape(a.size(), 1);
    for (std::size_t d = 0; d < a.size(); ++d) {
        for (std::int64_t dim : {c[d], a[d], b[d]}) {
            if (dim == 1) continue;
            if (shape[d] != 1 && shape[d] != dim)
                return fail(bad_shape(index, fmt::format("operands {}, {} and {} do not "
                                                         "broadcast (dimension {})",
                                                         shape_text(c), shape_text(a),
                                                         shape_text(b), d)));
            shape[d] = dim;
        }
    }
    return expect_output(index, shape);
}

Status Compiler::check_argmax(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    std::vector<std::int64_t> shape = in(op, 0).shape;
    if (auto axis = check_axis(index, shape.size()); !axis) return axis;
    if (auto mode = check_nan_mode(index); !mode) return mode;
    shape.erase(shape.begin() + op.attributes.axis);
    return expect_output(index, shape);
}

Status Compiler::check_concat(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    std::vector<std::int64_t> shape = in(op, 0).shape;
    if (auto axis = check_axis(index, shape.size()); !axis) return axis;
    const auto a = static_cast<std::size_t>(op.attributes.axis);
    for (std::size_t i = 1; i < op.inputs.size(); ++i) {
        const auto& other = in(op, i).shape;
        bool fits = other.size() == shape.size();
        for (std::size_t d = 0; fits && d < shape.size(); ++d)
            fits = d == a || other[d] == shape[d];
        if (!fits)
            return fail(bad_shape(index, fmt::format("input {} {} does not match input 0 {} "
                                                     "but along axis {}",
                                                     i, shape_text(other),
                                                     shape_text(in(op, 0).shape), a)));
        shape[a] += other[a];
    }
    return expect_output(index, shape);
}

Result<std::vector<std::int64_t>> Compiler::shape_operand(std::uint32_t index,
                                                          std::size_t operand,
                                                          std::string_view what,
                                                          std::size_t count) const
{
    const std::uint32_t tensor = block_.operators[index].inputs[operand];
    const tosa::Tensor& t = block_.tensors[tensor];
    if (!order_.constant[tensor])
        return fail(bad_attribute(index, fmt::format("{} '{}' must be a constant (CONST_SHAPE)",
                                                     what, t.name)));
    if (t.element_count() != count || t.data.size() < count * 8)
        return fail(bad_attribute(index, fmt::format("{} '{}' has {} elements; the input's rank "
                                                     "needs {}",
                                                     what, t.name, t.element_count(), count)));
    std::vector<std::int64_t> values(count);
    if (count != 0) std::memcpy(values.data(), t.data.data(), count * 8);
    return values;
}

Status Compiler::check_slice(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& shape = in(op, 0).shape;
    auto start = shape_operand(index, 1, "start", shape.size());
    if (!start) return fail(start.error());
    auto size = shape_operand(index, 2, "size", shape.size());
    if (!size) return fail(size.error());
    for (std::size_t d = 0; d < shape.size(); ++d)
        if ((*start)[d] < 0 || (*size)[d] < 1 || (*start)[d] > shape[d] - (*size)[d])
            return fail(bad_attribute(index, fmt::format("start {} and size {} do not lie "
                                                         "within the input {} (dimension {})",
                                                         shape_text(*start), shape_text(*size),
                                                         shape_text(shape), d)));
    start_[index] = std::move(*start);
    return expect_output(index, *size);
}

Status Compiler::check_pad(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& shape = in(op, 0).shape;
    auto padding = shape_operand(index, 1, "padding", shape.size() * 2);
    if (!padding) return fail(padding.error());
    if (std::ranges::any_of(*padding, [](std::int64_t v) { return v < 0; }))
        return fail(bad_attribute(index, fmt::format("padding {} must be >= 0",
                                                     shape_text(*padding))));
    const std::uint32_t value_tensor = op.inputs[2];
    const tosa::Tensor& value = block_.tensors[value_tensor];
    if (!order_.constant[value_tensor] || value.element_count() != 1 || value.shape.size() != 1)
        return fail(bad_attribute(index, fmt::format("pad_const '{}' must be a constant of shape "
                                                     "[1], is {}",
                                                     value.name, shape_text(value.shape))));
    std::vector<std::int64_t> result(shape.size());
    std::vector<std::int64_t> before(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) {
        before[d] = (*padding)[2 * d];
        if (__builtin_add_overflow(shape[d], (*padding)[2 * d], &result[d]) ||
            __builtin_add_overflow(result[d], (*padding)[2 * d + 1], &result[d]))
            return fail(bad_attribute(index, fmt::format("padding {} overflows the shape",
                                                         shape_text(*padding))));
    }
    start_[index] = std::move(before);
    pad_value_[index] = first_float(value);
    return expect_output(index, result);
}

Status Compiler::check_tile(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& shape = in(op, 0).shape;
    auto multiples = shape_operand(index, 1, "multiples", shape.size());
    if (!multiples) return fail(multiples.error());
    std::vector<std::int64_t> result(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if ((*multiples)[d] < 1)
            return fail(bad_attribute(index, fmt::format("multiples {} must each be >= 1",
                                                         shape_text(*multiples))));
        if (__builtin_mul_overflow(shape[d], (*multiples)[d], &result[d]))
            return fail(bad_attribute(index, fmt::format("multiples {} overflow the shape",
                                                         shape_text(*multiples))));
    }
    return expect_output(index, result);
}

Status Compiler::check_reduce(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    std::vector<std::int64_t> shape = in(op, 0).shape;
    const std::int32_t axis = op.attributes.axis;
    if (auto checked = check_axis(index, shape.size()); !checked) return checked;
    if (op.op == Op::reduce_max || op.op == Op::reduce_min)
        if (auto mode = check_nan_mode(index); !mode) return mode;
    shape[static_cast<std::size_t>(axis)] = 1;
    return expect_output(index, shape);
}

Status Compiler::check_conv2d(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& input = in(op, 0).shape;
    const auto& weight = in(op, 1).shape;
    const auto& bias = in(op, 2).shape;
    const auto& a = op.attributes;
    if (input.size() != 4 || weight.size() != 4 || input[3] != weight[3])
        return fail(bad_shape(index, fmt::format("input {} and weight {} are not [N,H,W,C] and "
                                                 "[OC,KH,KW,C]",
                                                 shape_text(input), shape_text(weight))));
    if (bias.size() != 1 || (bias[0] != weight[0] && bias[0] != 1))
        return fail(bad_shape(index, fmt::format("bias {} must be [{}] or [1]", shape_text(bias),
                                                 weight[0])));
    if (a.pad.size() != 4 || a.stride.size() != 2 || a.dilation.size() != 2)
        return fail(bad_attribute(index, "pad needs 4 values, stride and dilation 2 each"));
    if (std::ranges::any_of(a.pad, [](std::int32_t v) { return v < 0; }) ||
        std::ranges::any_of(a.stride, [](std::int32_t v) { return v < 1; }) ||
        std::ranges::any_of(a.dilation, [](std::int32_t v) { return v < 1; }))
        return fail(bad_attribute(index, "pad must be >= 0, stride and dilation >= 1"));
    // The GEMM's k is KH*KW*C (no overflow: a tensor has at most 2^40
    // elements); every dimension, OC among them, is below 2^31 already.
    if (weight[1] * weight[2] * weight[3] > gemm_max_dimension)
        return fail(bad_shape(index, fmt::format("weight {}: KH*KW*C must be at most {} (the "
                                                 "BLAS's 32-bit index); split the input "
                                                 "channels over several convolutions",
                                                 shape_text(weight), gemm_max_dimension)));
    if (auto zero = expect_zero_constant(index, 3, "input_zp"); !zero) return zero;
    if (auto zero = expect_zero_constant(index, 4, "weight_zp"); !zero) return zero;
    Conv2dGeometry g;
    g.n = input[0], g.ih = input[1], g.iw = input[2], g.ic = input[3];
    g.oc = weight[0], g.kh = weight[1], g.kw = weight[2];
    g.pad_top = a.pad[0], g.pad_left = a.pad[2];
    g.stride_y = a.stride[0], g.stride_x = a.stride[1];
    g.dilation_y = a.dilation[0], g.dilation_x = a.dilation[1];
    g.bias_per_channel = bias[0] == weight[0];
    const std::int64_t span_y = g.ih - 1 + a.pad[0] + a.pad[1] - (g.kh - 1) * g.dilation_y;
    const std::int64_t span_x = g.iw - 1 + a.pad[2] + a.pad[3] - (g.kw - 1) * g.dilation_x;
    if (span_y < 0 || span_x < 0)
        return fail(bad_shape(index, "the kernel is larger than the padded input"));
    g.oh = span_y / g.stride_y + 1;
    g.ow = span_x / g.stride_x + 1;
    conv_[index] = g;
    return expect_output(index, {g.n, g.oh, g.ow, g.oc});
}

Status Compiler::check_shapes(std::uint32_t index)
{
    if (conv_.size() != block_.operators.size()) {
        conv_.resize(block_.operators.size());
        start_.resize(block_.operators.size());
        pad_value_.resize(block_.operators.size());
    }
    const tosa::Operator& op = block_.operators[index];
    for (std::uint32_t tensor : op.inputs)
        if (block_.tensors[tensor].shape.size() > VACCEL_MAX_RANK)
            return fail(bad_shape(index, fmt::format("tensor '{}' has rank {}; at most {} is "
                                                     "supported",
                                                     block_.tensors[tensor].name,
                                                     block_.tensors[tensor].shape.size(),
                                                     VACCEL_MAX_RANK)));
    switch (op.op) {
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::maximum:
    case Op::minimum:
    case Op::pow:
    case Op::equal:
    case Op::greater:
    case Op::greater_equal: return check_broadcast(index);
    case Op::select: return check_select(index);
    case Op::reduce_max:
    case Op::reduce_min:
    case Op::reduce_product: return check_reduce(index);
    case Op::argmax: return check_argmax(index);
    case Op::concat: return check_concat(index);
    case Op::slice: return check_slice(index);
    case Op::pad: return check_pad(index);
    case Op::tile: return check_tile(index);
    case Op::reverse:
        if (auto axis = check_axis(index, in(op, 0).shape.size()); !axis) return axis;
        return expect_output(index, in(op, 0).shape);
    case Op::negate:
        if (auto zero = expect_zero_constant(index, 1, "input1_zp"); !zero) return zero;
        if (auto zero = expect_zero_constant(index, 2, "output_zp"); !zero) return zero;
        return expect_output(index, in(op, 0).shape);
    case Op::matmul: return check_matmul(index);
    case Op::reshape: return check_reshape(index);
    case Op::transpose: return check_transpose(index);
    case Op::clamp: return check_clamp(index);
    case Op::reduce_sum: return check_reduce(index);
    case Op::conv2d: return check_conv2d(index);
    case Op::abs:
    case Op::exp:
    case Op::log:
    case Op::reciprocal:
    case Op::rsqrt:
    case Op::ceil:
    case Op::floor:
    case Op::sin:
    case Op::cos:
    case Op::erf:
    case Op::identity:
    case Op::sigmoid:
    case Op::tanh: return expect_output(index, in(op, 0).shape);
    case Op::const_:
    case Op::const_shape:
        if (!order_.constant[op.outputs[0]])
            return fail(malformed(VACCEL_TOSA_BAD_DATA,
                                  fmt::format("operator {} ({}) output '{}' carries no data",
                                              index, tosa::op_name(op.op), out(op).name)));
        return {};
    default: return {};  // not admitted: refused before shapes are looked at
    }
}

std::uint32_t Compiler::add_value(Value value)
{
    value.elements = element_count(value.shape);
    value.bytes = value.elements * element_bytes(value.dtype);
    plan_.values.push_back(std::move(value));
    return static_cast<std::uint32_t>(plan_.values.size() - 1);
}

// The value of a tensor, created on first use: constants are copied into the
// plan, everything else (written by a step) gets an arena range.
std::uint32_t Compiler::value_for(std::uint32_t tensor)
{
    if (value_of_[tensor] != none) return value_of_[tensor];
    const tosa::Tensor& t = block_.tensors[tensor];
    Value value;
    value.shape = t.shape;
    value.dtype = t.dtype;
    const std::uint64_t bytes = element_count(t.shape) * element_bytes(t.dtype);
    // Each range starts on a 64-byte boundary.
    const auto aligned = [](std::uint64_t n) { return (n + 63) / 64 * 64; };
    if (order_.constant[tensor]) {
        value.home = Home::constant;
        value.offset = plan_.constants.size();
        plan_.constants.resize(value.offset + aligned(bytes));
        std::memcpy(plan_.constants.data() + value.offset, t.data.data(),
                    std::min<std::uint64_t>(bytes, t.data.size()));
    } else {
        value.home = Home::arena;
        value.offset = plan_.arena_bytes;
        plan_.arena_bytes += aligned(bytes);
    }
    value_of_[tensor] = add_value(std::move(value));
    return value_of_[tensor];
}

Result<std::shared_ptr<const Plan>> Compiler::build()
{
    // Slots: graph inputs in declared order, then graph outputs.
    for (std::uint32_t tensor : block_.inputs) {
        const tosa::Tensor& t = block_.tensors[tensor];
        const auto slot = static_cast<std::uint32_t>(plan_.slots.size());
        plan_.slots.push_back(SlotInfo{VACCEL_SLOT_INPUT, static_cast<std::uint32_t>(t.dtype),
                                       t.shape, element_count(t.shape) * element_bytes(t.dtype),
                                       t.name});
        if (value_of_[tensor] == none) {
            Value value;
            value.home = Home::slot;
            value.dtype = t.dtype;
            value.slot = slot;
            value.shape = t.shape;
            value_of_[tensor] = add_value(std::move(value));
        }
        plan_.slot_values.push_back(value_of_[tensor]);
    }
    plan_.input_count = static_cast<std::uint32_t>(plan_.slots.size());

    for (std::uint32_t index : order_.operators) {
        const tosa::Operator& op = block_.operators[index];
        Step step;
        step.op_index = index;
        switch (op.op) {
        case Op::const_:
        case Op::const_shape: continue;  // their outputs are constants of the plan
        case Op::add: step.kind = StepKind::binary, step.binary = Binary::add; break;
        case Op::sub: step.kind = StepKind::binary, step.binary = Binary::sub; break;
        case Op::mul: step.kind = StepKind::binary, step.binary = Binary::mul; break;
        case Op::maximum: step.kind = StepKind::binary, step.binary = Binary::maximum; break;
        case Op::minimum: step.kind = StepKind::binary, step.binary = Binary::minimum; break;
        case Op::pow: step.kind = StepKind::binary, step.binary = Binary::pow; break;
        case Op::equal: step.kind = StepKind::compare, step.compare = Compare::equal; break;
        case Op::greater: step.kind = StepKind::compare, step.compare = Compare::greater; break;
        case Op::greater_equal:
            step.kind = StepKind::compare, step.compare = Compare::greater_equal;
            break;
        case Op::select: step.kind = StepKind::select; break;
        case Op::abs: step.kind = StepKind::unary, step.unary = Unary::abs; break;
        case Op::negate: step.kind = StepKind::unary, step.unary = Unary::negate; break;
        case Op::exp: step.kind = StepKind::unary, step.unary = Unary::exp; break;
        case Op::log: step.kind = StepKind::unary, step.unary = Unary::log; break;
        case Op::reciprocal: step.kind = StepKind::unary, step.unary = Unary::reciprocal; break;
        case Op::rsqrt: step.kind = StepKind::unary, step.unary = Unary::rsqrt; break;
        case Op::ceil: step.kind = StepKind::unary, step.unary = Unary::ceil; break;
        case Op::floor: step.kind = StepKind::unary, step.unary = Unary::floor; break;
        case Op::sin: step.kind = StepKind::unary, step.unary = Unary::sin; break;
        case Op::cos: step.kind = StepKind::unary, step.unary = Unary::cos; break;
        case Op::erf: step.kind = StepKind::unary, step.unary = Unary::erf; break;
        case Op::reduce_max: step.kind = StepKind::reduce, step.reduce = Reduce::max; break;
        case Op::reduce_min: step.kind = StepKind::reduce, step.reduce = Reduce::min; break;
        case Op::reduce_product:
            step.kind = StepKind::reduce, step.reduce = Reduce::product;
            break;
        case Op::argmax: step.kind = StepKind::argmax; break;
        case Op::concat: step.kind = StepKind::concat; break;
        case Op::slice:
            step.kind = StepKind::slice;
            step.start = start_[index];
            break;
        case Op::pad:
            step.kind = StepKind::pad;
            step.start = start_[index];
            step.pad_value = pad_value_[index];
            break;
        case Op::tile: step.kind = StepKind::tile; break;
        case Op::reverse: step.kind = StepKind::reverse; break;
        case Op::matmul: step.kind = StepKind::matmul; break;
        case Op::reshape:
        case Op::identity: step.kind = StepKind::copy; break;
        case Op::transpose:
            step.kind = StepKind::transpose;
            step.perms = op.attributes.perms;
            break;
        case Op::clamp:
            step.kind = StepKind::clamp;
            std::memcpy(&step.min, op.attributes.min_val.data(), 4);
            std::memcpy(&step.max, op.attributes.max_val.data(), 4);
            break;
        case Op::sigmoid: step.kind = StepKind::unary, step.unary = Unary::sigmoid; break;
        case Op::tanh: step.kind = StepKind::unary, step.unary = Unary::tanh; break;
        case Op::reduce_sum: step.kind = StepKind::reduce, step.reduce = Reduce::sum; break;
        case Op::conv2d:
            step.kind = StepKind::conv2d;
            step.conv = conv_[index];
            break;
        default: continue;  // not admitted
        }
        // Attributes read by the operators that have them (checked above).
        step.axis = op.attributes.axis;
        step.nan_propagate = op.attributes.nan_mode != nan_ignore;
        // Data operands: everything but shift, zero points, shapes and pad_const.
        std::size_t data_operands = op.inputs.size();
        if (op.op == Op::mul || op.op == Op::reshape) data_operands = op.inputs.size() - 1;
        if (op.op == Op::matmul) data_operands = 2;
        if (op.op == Op::conv2d) data_operands = 3;
        if (op.op == Op::negate || op.op == Op::slice || op.op == Op::pad || op.op == Op::tile)
            data_operands = 1;
        for (std::size_t i = 0; i < data_operands; ++i) step.inputs.push_back(value_for(op.inputs[i]));
        step.output = value_for(op.outputs[0]);
        plan_.steps.push_back(std::move(step));
    }

    for (std::uint32_t tensor : block_.outputs) {
        const tosa::Tensor& t = block_.tensors[tensor];
        plan_.slots.push_back(SlotInfo{VACCEL_SLOT_OUTPUT, static_cast<std::uint32_t>(t.dtype),
                                       t.shape, element_count(t.shape) * element_bytes(t.dtype),
                                       t.name});
        plan_.slot_values.push_back(value_for(tensor));
    }
    return std::make_shared<const Plan>(std::move(plan_));
}

}  // namespace

std::uint64_t element_bytes(DType dtype)
{
    return tosa::dtype_bytes(dtype);  // BOOL: one byte, 0 or 1
}

Result<std::shared_ptr<const Plan>> compile(const tosa::Graph& graph)
{
    std::size_t blocks = 0;
    for (const tosa::Region& region : graph.regions) blocks += region.blocks.size();
    if (graph.regions.size() != 1 || blocks != 1)
        return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_REGIONS)
                        .with_note(fmt::format("the graph has {} regions and {} blocks; the CPU "
                                               "backend runs graphs of exactly one region with "
                                               "one block (no control flow)",
                                               graph.regions.size(), blocks)));
    const tosa::Block& block = graph.regions[0].blocks[0];
    if (auto admitted = admit_block(block); !admitted) return fail(admitted.error());
    auto order = order_block(block);
    if (!order) return fail(order.error());
    Compiler compiler(block, *order);
    for (std::uint32_t index = 0; index < block.operators.size(); ++index)
        if (auto shapes = compiler.check_shapes(index); !shapes) return fail(shapes.error());
    return compiler.build();
}

}  // namespace vaccel::backend::cpu
