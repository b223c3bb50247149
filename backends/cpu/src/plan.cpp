// plan.cpp - compiling an admitted TOSA block into the CPU backend's plan.
//
// Decides: each operator's output shape is inferred from its operands with
// TOSA 1.0 rules and must equal the declared shape; operands that were
// attributes before TOSA 1.0 (MUL shift, MATMUL, CONV2D, DEPTHWISE_CONV2D,
// TRANSPOSE_CONV2D, CONV3D and AVG_POOL2D zero points,
// RESHAPE shape, SLICE start/size, PAD padding and pad_const, TILE multiples,
// NEGATE zero points) must be constants and are read here, once; every
// intermediate gets its own arena range (no lifetime packing: simple and
// sized once at load). Values are stored by dtype (plan.hpp): FP32 and INT32
// in 4 bytes, BOOL (0 or 1) and INT8 in one byte, INT48 in 6, each range at a
// multiple of 64 bytes; INT4 constants are unpacked here into INT8 values.
// A graph TOSA 1.0 itself forbids is InvalidArgument / D_TOSA_MALFORMED, as
// the reference design reports what its TOSA analysis pass refuses before lowering
// (LoweringError::Analysis -> InvalidArgument): declared shapes that
// disagree with the operator (BAD_SHAPE), a RESHAPE shape with an inferred
// -1 dimension (BAD_SHAPE: TOSA 1.0 takes the complete output shape), a
// nan_mode other than PROPAGATE or IGNORE (BAD_ATTRIBUTE), an axis outside
// the rank, perms that are no permutation, SLICE/PAD/TILE shape operands
// that are not constants, have the wrong length or values TOSA 1.0 forbids
// (negative start or padding, size or multiples below 1, a slice past the
// end) (BAD_ATTRIBUTE), and for pools and convolutions: kernel, stride,
// dilation below 1, pads below 0 (pools: not below the kernel; TRANSPOSE_CONV2D
// out_pad: not above minus the kernel), an acc_type TOSA 1.0 does not define
// for the data (FP32: FP32; FP16: FP16 or FP32; BF16: FP32; FP8: FP16; integer
// data: the one TOSA 1.0 pairs with the dtype), a non-zero zero point of an
// operand that is not INT8, and a
// padded extent the stride does not divide exactly (BAD_ATTRIBUTE; a kernel
// larger than the padded input is BAD_SHAPE).
// GATHER/SCATTER need [N,K,C] values and [N,W] indices (SCATTER: W <= K,
// since each row is written at most once; BAD_SHAPE); RESIZE reads its
// scale/offset/border SHAPE constants here and refuses what TOSA 1.0's
// ERROR_IF forbids (BAD_ATTRIBUTE), the output size following exactly;
// FFT2D/RFFT2D need H and W powers of two and check both outputs' shapes
// (BAD_SHAPE). Their index values are only known at run time (execute.cpp).
// The integer operators (RESCALE, TABLE, integer MUL and NEGATE, ...) read
// their constant operands here and refuse what TOSA 1.0's ERROR_IF forbids,
// and the REQUIREs on those constants, with BAD_ATTRIBUTE (see "Integer
// operators" below).
// FP16, BF16 and FP8 constant operands and CLAMP bounds are read in their own
// encoding and widened to FP32 exactly (float_formats.hpp); a step that
// touches a narrow value is marked to run widened (Step::narrow_float).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "admission.hpp"
#include "float_formats.hpp"
#include "gemm.hpp"
#include "plan.hpp"
#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/plan.hpp"

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

class ProgramCompiler;

class Compiler {
public:
    Compiler(const tosa::Block& block, const ExecutionOrder& order, ProgramCompiler& program,
             tosa::BlockRef ref)
        : block_(block), order_(order), program_(program), ref_(ref),
          value_of_(block.tensors.size(), none)
    {
    }

    Status check_shapes(std::uint32_t index);
    // The block's plan, arena offsets relative to the block's own arena.
    Result<Plan> build();

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
    // The convolutions' shared rules: a bias of [channels] or [1]; pad,
    // stride and dilation with `spatial` dimensions (pads twice that), pads
    // >= 0, stride and dilation >= 1.
    Status check_conv_bias(std::uint32_t index, std::int64_t channels,
                           std::string_view what = "") const;
    Status check_conv_window(std::uint32_t index, std::size_t spatial) const;
    // Integer data: its zero points and accumulator; float: the accumulator
    // (unless `accumulator` is false) and zero zero points. Operands 3 and 4.
    Status check_conv_operands(std::uint32_t index, bool accumulator = true);
    Status check_nan_mode(std::uint32_t index) const;
    Status check_axis(std::uint32_t index, std::size_t rank) const;
    Status check_select(std::uint32_t index);
    Status check_argmax(std::uint32_t index);
    Status check_concat(std::uint32_t index);
    Status check_slice(std::uint32_t index);
    Status check_pad(std::uint32_t index);
    Status check_tile(std::uint32_t index);
    // Pools and the convolutions beyond CONV2D (kernels_spatial.hpp).
    Status check_pool2d(std::uint32_t index);
    Status check_depthwise_conv2d(std::uint32_t index);
    Status check_transpose_conv2d(std::uint32_t index);
    Status check_conv3d(std::uint32_t index);
    Status check_accumulator(std::uint32_t index) const;
    // The output extent along `axis` of a pool or strided convolution:
    // span / stride + 1, where TOSA 1.0 requires span >= 0 and an exact division.
    Result<std::int64_t> strided_extent(std::uint32_t index, std::string_view axis,
                                        std::int64_t span, std::int64_t stride) const;
    // Indexing, resampling and Fourier operators.
    Status check_gather(std::uint32_t index);
    Status check_scatter(std::uint32_t index);
    Status check_resize(std::uint32_t index);
    Status check_fft(std::uint32_t index);
    // Integer operators (kernels_int.hpp): which operators take the integer
    // path, their checks, and their steps.
    bool integer_operator(const tosa::Operator& op) const;
    Status check_integer(std::uint32_t index);
    Status check_rescale(std::uint32_t index);
    Status check_table(std::uint32_t index);
    Status check_int_mul(std::uint32_t index);
    Status check_int_negate(std::uint32_t index);
    Status check_int_clamp(std::uint32_t index);
    // The values of an integer constant operand, sign-extended.
    Result<std::vector<std::int64_t>> integer_constant(std::uint32_t index, std::size_t operand,
                                                       std::string_view what) const;
    void build_integer_step(std::uint32_t index, Step& step);
    // The values of a SHAPE operand, which must be a constant with `count` elements.
    Result<std::vector<std::int64_t>> shape_operand(std::uint32_t index, std::size_t operand,
                                                    std::string_view what,
                                                    std::size_t count) const;

    // Integer tensor operators (kernels_qconv.hpp): MATMUL, the convolutions
    // and AVG_POOL2D on INT8/INT16 data.
    bool integer_data(std::uint32_t index) const;
    // Checks acc_type and the zero points at operands `first_zp` and
    // `second_zp` (constants of one element; non-zero only for INT8, as TOSA
    // 1.0's ERROR_IF has it) and records them in quant_[index].
    Status check_int_operands(std::uint32_t index, std::size_t first_zp, std::size_t second_zp);
    Result<std::int64_t> zero_point(std::uint32_t index, std::size_t operand,
                                    std::string_view what) const;
    // An INT4 constant, unpacked into an INT8 value of Plan::constants.
    std::uint32_t unpacked_int4(std::uint32_t tensor);

    std::uint32_t value_for(std::uint32_t tensor);
    std::uint32_t add_value(Value value);
    // Whether a step touches an FP16, BF16 or FP8 value and so runs widened
    // to FP32 (execute.cpp); steps that move bytes of any dtype do not.
    bool runs_widened(const Step& step) const;

    // COND_IF / WHILE_LOOP: the blocks the operator runs, compiled once each.
    Status add_control_flow(std::uint32_t index, Step& step);

    const tosa::Block& block_;
    const ExecutionOrder& order_;
    ProgramCompiler& program_;
    tosa::BlockRef ref_;
    const tosa::Analysis* analysis_ = nullptr;  // set by build()
    std::vector<std::uint32_t> value_of_;  // tensor -> value index
    const tosa::ProgramPlan* layout_ = nullptr;  // the shared plan, during build()
    Plan plan_;
    std::vector<Conv2dGeometry> conv_;     // per operator index, filled by check_conv2d
    // Per operator index, filled by check_slice / check_pad: SLICE start or
    // PAD padding before each dimension, and PAD's pad_const.
    std::vector<std::vector<std::int64_t>> start_;
    std::vector<std::array<std::byte, 4>> pad_value_;
    // Per operator index, sized and filled by check_pool2d / check_conv3d.
    std::vector<Pool2dGeometry> pool_;
    std::vector<Conv3dGeometry> conv3d_;
    std::vector<ResizeGeometry> resize_;  // per operator index, filled by check_resize
    std::vector<IntOperands> quant_;      // per operator index, filled by check_int_operands
    std::vector<IntegerParams> integer_;  // per operator index, filled by check_integer
};

// Compiles one program: its first block and every block control flow runs
// from it, each once (a block never runs itself: analyze() refuses that),
// then lays their arenas end to end so one arena serves a whole run.
class ProgramCompiler {
public:
    ProgramCompiler(const tosa::Graph& graph, bool control_flow)
        : graph_(graph), control_flow_(control_flow)
    {
    }

    const tosa::Graph& graph() const { return graph_; }
    // analyze(graph), once. Run after the CPU backend's own checks of a
    // plain block, so their refusals (the ones its users know) come first.
    Result<const tosa::Analysis*> analysis();
    bool control_flow() const { return control_flow_; }

    // Compiles block `ref` (admission, order, shapes, plan).
    Result<Plan> compile_block(tosa::BlockRef ref);
    // The index in Plan::nested of block `ref`, compiled on first use.
    Result<std::uint32_t> nested(tosa::BlockRef ref);
    // The program-wide index of a variable, by name (the identity across blocks).
    std::uint32_t variable(const std::string& name, const tosa::Tensor& tensor);
    // The main plan with the nested plans and variables, arenas laid out.
    std::shared_ptr<const Plan> finish(Plan main);
    std::size_t block_count() const { return nested_refs_.size() + 1; }

private:
    const tosa::Graph& graph_;
    std::optional<tosa::Analysis> analysis_;
    bool control_flow_;  // several blocks or variables: plans with control flow
    std::vector<tosa::BlockRef> nested_refs_;
    std::vector<Plan> nested_;
    std::vector<VariableInfo> variables_;
};

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
    // Floats compare as a number (so -0.0 is zero), in their own encoding
    // (FP16, BF16, FP8 included); INT8 by its byte.
    bool zero = false;
    if (is_float(t.dtype)) {
        zero = t.data.size() >= element_bytes(t.dtype) &&
               read_float(t.dtype, t.data.data()) == 0.0f;
    } else {
        zero = t.data[0] == 0;
    }
    if (!zero)
        return fail(bad_attribute(index, fmt::format("{} '{}' must be zero for {}", what, t.name,
                                                     is_narrow_float(t.dtype)
                                                         ? tosa::dtype_name(t.dtype)
                                                         : "FP32")));
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
    if (op.op == Op::mul && in(op, 0).dtype == DType::fp32) {  // integer MUL: check_int_mul
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
    if (integer_data(index)) {
        if (auto q = check_int_operands(index, 2, 3); !q) return q;
    } else {
        if (auto zero = expect_zero_constant(index, 2, "A_zp"); !zero) return zero;
        if (auto zero = expect_zero_constant(index, 3, "B_zp"); !zero) return zero;
    }
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
    // The bounds are raw bytes of one element of the operator's dtype.
    const DType dtype = in(op, 0).dtype;
    if (attributes.min_val.size() < element_bytes(dtype) ||
        attributes.max_val.size() < element_bytes(dtype))
        return fail(bad_attribute(index, fmt::format("min_val and max_val must each hold one {} "
                                                     "value",
                                                     tosa::dtype_name(dtype))));
    const float min = read_float(dtype, attributes.min_val.data());
    const float max = read_float(dtype, attributes.max_val.data());
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
    std::memcpy(pad_value_[index].data(), value.data.data(), element_bytes(value.dtype));
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

// ---- Indexing, resampling and Fourier operators ---------------------------

Status Compiler::check_gather(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& values = in(op, 0).shape;
    const auto& indices = in(op, 1).shape;
    if (values.size() != 3 || indices.size() != 2 || values[0] != indices[0])
        return fail(bad_shape(index, fmt::format("values {} and indices {} are not [N,K,C] and "
                                                 "[N,W]",
                                                 shape_text(values), shape_text(indices))));
    return expect_output(index, {values[0], indices[1], values[2]});
}

Status Compiler::check_scatter(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& values = in(op, 0).shape;
    const auto& indices = in(op, 1).shape;
    const auto& input = in(op, 2).shape;
    if (values.size() != 3 || indices.size() != 2 || input.size() != 3 ||
        values[0] != indices[0] || input != std::vector<std::int64_t>{indices[0], indices[1],
                                                                       values[2]})
        return fail(bad_shape(index, fmt::format("values_in {}, indices {} and input {} are not "
                                                 "[N,K,C], [N,W] and [N,W,C]",
                                                 shape_text(values), shape_text(indices),
                                                 shape_text(input))));
    // Each index may be written once per batch, so W > K cannot run.
    if (indices[1] > values[1] && values[0] > 0)
        return fail(bad_shape(index, fmt::format("indices {} write {} rows into {} rows per "
                                                 "batch; TOSA 1.0 SCATTER writes each row at "
                                                 "most once",
                                                 shape_text(indices), indices[1], values[1])));
    return expect_output(index, values);
}

// TOSA 1.0 RESIZE: scale [y_n, y_d, x_n, x_d], offset [y, x] and border [y, x]
// are SHAPE constants; the output size follows from them exactly.
Status Compiler::check_resize(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& input = in(op, 0).shape;
    const auto& output = out(op).shape;
    if (input.size() != 4 || output.size() != 4)
        return fail(bad_shape(index, fmt::format("input {} and output {} must be [N,H,W,C]",
                                                 shape_text(input), shape_text(output))));
    // Every output samples the input: an empty image has nothing to sample.
    if (input[1] < 1 || input[2] < 1)
        return fail(bad_shape(index, fmt::format("input {} has no rows or columns to sample",
                                                 shape_text(input))));
    const std::uint32_t mode = op.attributes.resize_mode;
    if (mode != 1 && mode != 2)  // ResizeMode (tosa.fbs): NEAREST 1, BILINEAR 2
        return fail(bad_attribute(index, fmt::format("mode {} is neither NEAREST_NEIGHBOR (1) "
                                                     "nor BILINEAR (2)",
                                                     mode)));
    auto scale = shape_operand(index, 1, "scale", 4);
    if (!scale) return fail(scale.error());
    auto offset = shape_operand(index, 2, "offset", 2);
    if (!offset) return fail(offset.error());
    auto border = shape_operand(index, 3, "border", 2);
    if (!border) return fail(border.error());
    ResizeGeometry g;
    g.n = input[0], g.ih = input[1], g.iw = input[2], g.c = input[3];
    g.scale_y_n = (*scale)[0], g.scale_y_d = (*scale)[1];
    g.scale_x_n = (*scale)[2], g.scale_x_d = (*scale)[3];
    g.offset_y = (*offset)[0], g.offset_x = (*offset)[1];
    g.bilinear = mode == 2;
    const std::int64_t border_y = (*border)[0];
    const std::int64_t border_x = (*border)[1];
    const std::string given = fmt::format("scale {}, offset {}, border {}", shape_text(*scale),
                                          shape_text(*offset), shape_text(*border));
    // The limits TOSA 1.0 sets (ERROR_IF), in its order.
    const auto limit = [&](bool violated, std::string_view rule) -> Status {
        if (violated)
            return fail(bad_attribute(index, fmt::format("{}: TOSA 1.0 requires {}", given, rule)));
        return {};
    };
    if (auto ok = limit(g.scale_y_n <= 0 || g.scale_y_d <= 0 || g.scale_x_n <= 0 ||
                            g.scale_x_d <= 0,
                        "every scale value > 0");
        !ok)
        return ok;
    if (auto ok = limit(g.scale_y_n > 2048 || g.scale_x_n > 2048, "scale_y_n, scale_x_n <= 2048");
        !ok)
        return ok;
    if (auto ok = limit(g.scale_y_d >= 16 * g.scale_y_n || g.scale_x_d >= 16 * g.scale_x_n,
                        "scale_d < 16 * scale_n (at most a 1/16 downscale)");
        !ok)
        return ok;
    if (auto ok = limit(g.offset_y < -g.scale_y_n || g.offset_y >= 16 * g.scale_y_n ||
                            g.offset_x < -g.scale_x_n || g.offset_x >= 16 * g.scale_x_n,
                        "-scale_n <= offset < 16 * scale_n");
        !ok)
        return ok;
    if (auto ok = limit(border_y < -16 * g.scale_y_n || border_y >= g.scale_y_n ||
                            border_x < -16 * g.scale_x_n || border_x >= g.scale_x_n,
                        "-16 * scale_n <= border < scale_n");
        !ok)
        return ok;
    if (std::max({g.ih, g.iw, output[1], output[2]}) >= 16384)
        return fail(bad_shape(index, fmt::format("input {} or output {} has a height or width "
                                                 "of 16384 or more; TOSA 1.0 allows less",
                                                 shape_text(input), shape_text(output))));
    const std::int64_t span_y = (g.ih - 1) * g.scale_y_n - g.offset_y + border_y;
    const std::int64_t span_x = (g.iw - 1) * g.scale_x_n - g.offset_x + border_x;
    if (auto ok = limit(span_y % g.scale_y_d != 0 || span_x % g.scale_x_d != 0,
                        "(IH - 1) * scale_y_n - offset_y + border_y to be a multiple of "
                        "scale_y_d, and likewise along x");
        !ok)
        return ok;
    g.oh = span_y / g.scale_y_d + 1;
    g.ow = span_x / g.scale_x_d + 1;
    if (g.oh < 1 || g.ow < 1)
        return fail(bad_attribute(index, fmt::format("{} give an output of {} x {} for input {}",
                                                     given, g.oh, g.ow, shape_text(input))));
    resize_[index] = g;
    return expect_output(index, {g.n, g.oh, g.ow, g.c});
}

// FFT2D: real and imaginary [N,H,W] -> two [N,H,W]; RFFT2D: [N,H,W] -> two
// [N,H,W/2+1]. H and W must be powers of two.
Status Compiler::check_fft(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& input = in(op, 0).shape;
    if (input.size() != 3)
        return fail(bad_shape(index, fmt::format("input {} must be [N,H,W]", shape_text(input))));
    if (op.op == Op::fft2d && in(op, 1).shape != input)
        return fail(bad_shape(index, fmt::format("input_real {} and input_imag {} differ",
                                                 shape_text(input),
                                                 shape_text(in(op, 1).shape))));
    for (const std::int64_t dim : {input[1], input[2]})
        if (dim < 1 || (dim & (dim - 1)) != 0)
            return fail(bad_shape(index, fmt::format("input {}: height and width must be powers "
                                                     "of two, {} is not",
                                                     shape_text(input), dim)));
    const std::vector<std::int64_t> result =
        op.op == Op::fft2d ? input
                           : std::vector<std::int64_t>{input[0], input[1], input[2] / 2 + 1};
    if (auto real = expect_output(index, result); !real) return real;
    const tosa::Tensor& imag = block_.tensors[op.outputs[1]];
    if (imag.shape != result)
        return fail(bad_shape(index, fmt::format("output '{}' is declared {} but the operands "
                                                 "give {}",
                                                 imag.name, shape_text(imag.shape),
                                                 shape_text(result))));
    return {};
}

// ---- Integer operators (kernels_int.hpp) -----------------------------------
//
// TOSA 1.0's ERROR_IF rules, and the REQUIREs on constant operands (RESCALE's
// shift and multiplier, MUL's shift), are refused here with BAD_ATTRIBUTE;
// the REQUIREs on data are decided by the kernels (docs/operators.md).

bool is_integer(DType dtype)
{
    return dtype == DType::int8 || dtype == DType::int16 || dtype == DType::int32;
}

// Operators TOSA 1.0 defines only on integers, and those whose FP32 form has
// its own path, when their data is integer (SELECT: integer or BOOL).
bool Compiler::integer_operator(const tosa::Operator& op) const
{
    switch (op.op) {
    case Op::rescale:
    case Op::table:
    case Op::intdiv:
    case Op::arithmetic_right_shift:
    case Op::logical_left_shift:
    case Op::logical_right_shift:
    case Op::bitwise_and:
    case Op::bitwise_or:
    case Op::bitwise_xor:
    case Op::bitwise_not:
    case Op::clz: return true;
    case Op::mul:
    case Op::abs:
    case Op::negate:
    case Op::clamp:
    case Op::reduce_sum:
    case Op::reduce_max:
    case Op::reduce_min:
    case Op::argmax: return is_integer(in(op, 0).dtype);
    case Op::select: return out(op).dtype != DType::fp32;
    default: return false;
    }
}

Result<std::vector<std::int64_t>> Compiler::integer_constant(std::uint32_t index,
                                                             std::size_t operand,
                                                             std::string_view what) const
{
    const std::uint32_t tensor = block_.operators[index].inputs[operand];
    const tosa::Tensor& t = block_.tensors[tensor];
    if (!order_.constant[tensor])
        return fail(bad_attribute(index, fmt::format("{} '{}' must be a constant", what, t.name)));
    const std::size_t size = tosa::dtype_bytes(t.dtype);
    const std::uint64_t count = t.element_count();
    std::vector<std::int64_t> values(count);
    for (std::uint64_t i = 0; i < count; ++i) {
        // Little-endian bytes, sign-extended from the dtype's width.
        std::uint64_t bits = 0;
        for (std::size_t k = 0; k < size; ++k)
            bits |= static_cast<std::uint64_t>(t.data[i * size + k]) << (8 * k);
        const unsigned spare = 64 - 8 * static_cast<unsigned>(size);
        values[i] = static_cast<std::int64_t>(bits << spare) >> spare;
    }
    return values;
}

Status Compiler::check_integer(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    IntegerParams& p = integer_[index];
    switch (op.op) {
    case Op::rescale: return check_rescale(index);
    case Op::table: return check_table(index);
    case Op::mul: return check_int_mul(index);
    case Op::negate: return check_int_negate(index);
    case Op::clamp: return check_int_clamp(index);
    case Op::reduce_sum:
    case Op::reduce_max:
    case Op::reduce_min:
        p.reduce = op.op == Op::reduce_sum ? Reduce::sum
                   : op.op == Op::reduce_max ? Reduce::max
                                             : Reduce::min;
        return check_reduce(index);
    case Op::argmax: return check_argmax(index);
    case Op::select: return check_select(index);
    case Op::abs:
    case Op::bitwise_not:
    case Op::clz:
        p.unary = op.op == Op::abs ? IntUnary::abs
                  : op.op == Op::clz ? IntUnary::clz
                                     : IntUnary::bitwise_not;
        return expect_output(index, in(op, 0).shape);
    default:
        break;
    }
    switch (op.op) {
    case Op::intdiv: p.binary = IntBinary::intdiv; break;
    case Op::arithmetic_right_shift:
        p.binary = IntBinary::arithmetic_right_shift;
        p.round = op.attributes.round;
        break;
    case Op::logical_left_shift: p.binary = IntBinary::logical_left_shift; break;
    case Op::logical_right_shift: p.binary = IntBinary::logical_right_shift; break;
    case Op::bitwise_and: p.binary = IntBinary::bitwise_and; break;
    case Op::bitwise_or: p.binary = IntBinary::bitwise_or; break;
    default: p.binary = IntBinary::bitwise_xor; break;
    }
    return check_broadcast(index);
}

// MUL on INT8/INT16/INT32: shift is an INT8 constant [1]; TOSA 1.0 requires
// 0..63 for INT32 and 0 otherwise (REQUIRE on a constant: refused here).
Status Compiler::check_int_mul(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const tosa::Tensor& shift = in(op, 2);
    if (shift.shape.size() != 1 || shift.element_count() != 1)
        return fail(bad_shape(index, fmt::format("shift '{}' must have shape [1], has {}",
                                                 shift.name, shape_text(shift.shape))));
    auto value = integer_constant(index, 2, "shift");
    if (!value) return fail(value.error());
    const std::int64_t amount = (*value)[0];
    const bool wide = in(op, 0).dtype == DType::int32;
    if (wide ? (amount < 0 || amount > 63) : amount != 0)
        return fail(bad_attribute(index, fmt::format("shift '{}' is {}; TOSA 1.0 requires {} "
                                                     "for {} operands",
                                                     shift.name, amount,
                                                     wide ? "0..63" : "0",
                                                     tosa::dtype_name(in(op, 0).dtype))));
    integer_[index].binary = IntBinary::mul;
    integer_[index].shift = static_cast<std::int32_t>(amount);
    return check_broadcast(index);
}

// NEGATE on integers: input1_zp and output_zp are constants [1] of the data's
// dtype; TOSA 1.0 allows them to be non-zero only for INT8 (ERROR_IF).
Status Compiler::check_int_negate(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const DType dtype = in(op, 0).dtype;
    std::int64_t zero_points[2] = {0, 0};
    for (std::size_t operand : {1, 2}) {
        const char* what = operand == 1 ? "input1_zp" : "output_zp";
        const tosa::Tensor& zp = in(op, operand);
        if (zp.element_count() != 1)
            return fail(bad_attribute(index, fmt::format("{} '{}' must have one element, has "
                                                         "shape {}",
                                                         what, zp.name, shape_text(zp.shape))));
        auto value = integer_constant(index, operand, what);
        if (!value) return fail(value.error());
        if (dtype != DType::int8 && (*value)[0] != 0)
            return fail(bad_attribute(index, fmt::format("{} '{}' is {}; TOSA 1.0 allows a "
                                                         "non-zero zero point only for INT8",
                                                         what, zp.name, (*value)[0])));
        zero_points[operand - 1] = (*value)[0];
    }
    integer_[index].unary = IntUnary::negate;
    integer_[index].input_zp = zero_points[0];
    integer_[index].output_zp = zero_points[1];
    return expect_output(index, in(op, 0).shape);
}

// CLAMP on INT8/INT16: min_val and max_val are the dtype's raw bytes.
Status Compiler::check_int_clamp(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const std::size_t size = tosa::dtype_bytes(in(op, 0).dtype);
    const auto& a = op.attributes;
    if (a.min_val.size() < size || a.max_val.size() < size)
        return fail(bad_attribute(index, fmt::format("min_val and max_val must each hold one {} "
                                                     "value",
                                                     tosa::dtype_name(in(op, 0).dtype))));
    const auto read = [size](const std::vector<std::uint8_t>& bytes) {
        std::int64_t value = size == 1 ? static_cast<std::int8_t>(bytes[0]) : 0;
        if (size == 2) {
            std::int16_t v;
            std::memcpy(&v, bytes.data(), 2);
            value = v;
        }
        return value;
    };
    IntegerParams& p = integer_[index];
    p.min = read(a.min_val);
    p.max = read(a.max_val);
    if (p.min > p.max)
        return fail(bad_attribute(index, fmt::format("bounds [{}, {}] need min <= max", p.min,
                                                     p.max)));
    return expect_output(index, in(op, 0).shape);
}

// TABLE: INT8 input with a [256] INT8 table, INT16 input with a [513] INT16
// table (TOSA 1.0 REQUIRE on the table's length: refused as a shape).
Status Compiler::check_table(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const tosa::Tensor& entries = in(op, 1);
    const std::int64_t length = in(op, 0).dtype == DType::int8 ? 256 : 513;
    if (entries.shape != std::vector<std::int64_t>{length})
        return fail(bad_shape(index, fmt::format("table '{}' is {}; an {} input needs [{}]",
                                                 entries.name, shape_text(entries.shape),
                                                 tosa::dtype_name(in(op, 0).dtype), length)));
    return expect_output(index, in(op, 0).shape);
}

// RESCALE: the attribute and zero-point rules of TOSA 1.0 (ERROR_IF), and
// its REQUIREs on the constant multiplier (>= 0) and shift (2..62).
Status Compiler::check_rescale(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& a = op.attributes;
    const DType from = in(op, 0).dtype;
    const DType to = out(op).dtype;
    const auto& shape = in(op, 0).shape;
    // RoundingMode (tosa.fbs): SINGLE_ROUND 1, INEXACT_ROUND 2, DOUBLE_ROUND 3.
    if (a.rounding_mode == 2)
        return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_OPERATOR,
                              static_cast<std::uint32_t>(op.op), static_cast<std::uint32_t>(to))
                        .with_note(fmt::format("operator {} (RESCALE): rounding_mode "
                                               "INEXACT_ROUND (TOSA 1.0 extension "
                                               "EXT-INEXACTROUND) is not supported by the CPU "
                                               "backend; use SINGLE_ROUND or DOUBLE_ROUND",
                                               index)));
    if (a.rounding_mode != 1 && a.rounding_mode != 3)
        return fail(bad_attribute(index, fmt::format("rounding_mode {} is none of SINGLE_ROUND "
                                                     "(1), INEXACT_ROUND (2), DOUBLE_ROUND (3)",
                                                     a.rounding_mode)));
    const DType multiplier_dtype = in(op, 1).dtype;
    if ((multiplier_dtype == DType::int32) != a.scale32)
        return fail(bad_attribute(index, fmt::format("multiplier '{}' is {}; TOSA 1.0 takes "
                                                     "INT32 with scale32 and INT16 without",
                                                     in(op, 1).name,
                                                     tosa::dtype_name(multiplier_dtype))));
    const auto refuse = [&](bool violated, std::string_view rule) -> Status {
        if (violated)
            return fail(bad_attribute(index, fmt::format("TOSA 1.0 forbids {}", rule)));
        return {};
    };
    if (auto ok = refuse(!a.scale32 && a.rounding_mode == 3, "DOUBLE_ROUND without scale32");
        !ok)
        return ok;
    if (auto ok = refuse(a.input_unsigned && a.output_unsigned,
                         "input_unsigned and output_unsigned together");
        !ok)
        return ok;
    if (auto ok = refuse((a.input_unsigned || a.output_unsigned) &&
                             (from == DType::int32 || to == DType::int32),
                         "input_unsigned or output_unsigned with an INT32 input or output");
        !ok)
        return ok;
    if (auto ok = refuse(a.per_channel && shape.empty(), "per_channel on a rank-0 input"); !ok)
        return ok;
    // One multiplier and shift, or one per channel of the last dimension.
    const std::int64_t channels = a.per_channel ? shape.back() : 1;
    for (std::size_t operand : {1, 2})
        if (in(op, operand).shape != std::vector<std::int64_t>{channels})
            return fail(bad_shape(index, fmt::format("{} '{}' is {}; {} needs [{}]",
                                                     operand == 1 ? "multiplier" : "shift",
                                                     in(op, operand).name,
                                                     shape_text(in(op, operand).shape),
                                                     a.per_channel ? "per_channel"
                                                                   : "a per-tensor scale",
                                                     channels)));
    auto multiplier = integer_constant(index, 1, "multiplier");
    if (!multiplier) return fail(multiplier.error());
    auto shift = integer_constant(index, 2, "shift");
    if (!shift) return fail(shift.error());
    RescaleParams& p = integer_[index].rescale;
    for (std::size_t c = 0; c < multiplier->size(); ++c) {
        if ((*multiplier)[c] < 0 || (*shift)[c] < 2 || (*shift)[c] > 62)
            return fail(bad_attribute(index, fmt::format("channel {} has multiplier {} and "
                                                         "shift {}; TOSA 1.0 requires "
                                                         "multiplier >= 0 and 2 <= shift <= 62",
                                                         c, (*multiplier)[c], (*shift)[c])));
        p.multiplier.push_back(static_cast<std::int32_t>((*multiplier)[c]));
        p.shift.push_back(static_cast<std::int32_t>((*shift)[c]));
    }
    // Zero points: one element each; non-zero only for INT8 (either
    // signedness) and unsigned INT16 (32768 only).
    for (std::size_t operand : {3, 4}) {
        const bool input = operand == 3;
        const char* what = input ? "input_zp" : "output_zp";
        const DType dtype = input ? from : to;
        const bool is_unsigned = input ? a.input_unsigned : a.output_unsigned;
        if (in(op, operand).element_count() != 1)
            return fail(bad_attribute(index, fmt::format("{} '{}' must have one element, has "
                                                         "shape {}",
                                                         what, in(op, operand).name,
                                                         shape_text(in(op, operand).shape))));
        auto zp = integer_constant(index, operand, what);
        if (!zp) return fail(zp.error());
        std::int64_t value = (*zp)[0];
        // An unsigned zero point is the element's bits read unsigned.
        if (is_unsigned && value < 0)
            value += std::int64_t{1} << (8 * tosa::dtype_bytes(dtype));
        const bool allowed = value == 0 || dtype == DType::int8 ||
                             (dtype == DType::int16 && is_unsigned && value == 32768);
        if (!allowed)
            return fail(bad_attribute(index, fmt::format("{} '{}' is {}; TOSA 1.0 allows a "
                                                         "non-zero zero point only for INT8, "
                                                         "and 32768 for unsigned INT16",
                                                         what, in(op, operand).name, value)));
        (input ? p.input_zp : p.output_zp) = value;
    }
    p.double_round = a.rounding_mode == 3;
    p.input_unsigned = a.input_unsigned;
    p.output_unsigned = a.output_unsigned;
    return expect_output(index, shape);
}

void Compiler::build_integer_step(std::uint32_t index, Step& step)
{
    const tosa::Operator& op = block_.operators[index];
    step.integer = integer_[index];
    step.axis = op.attributes.axis;
    std::size_t data_operands = op.inputs.size();
    switch (op.op) {
    case Op::rescale: step.kind = StepKind::rescale, data_operands = 1; break;
    case Op::table: step.kind = StepKind::table; break;
    case Op::mul: step.kind = StepKind::int_binary, data_operands = 2; break;
    case Op::negate: step.kind = StepKind::int_unary, data_operands = 1; break;
    case Op::abs:
    case Op::bitwise_not:
    case Op::clz: step.kind = StepKind::int_unary; break;
    case Op::clamp: step.kind = StepKind::int_clamp; break;
    case Op::reduce_sum:
    case Op::reduce_max:
    case Op::reduce_min: step.kind = StepKind::int_reduce; break;
    case Op::argmax: step.kind = StepKind::int_argmax; break;
    case Op::select: step.kind = StepKind::select_any; break;
    default: step.kind = StepKind::int_binary; break;  // INTDIV, shifts, BITWISE_AND/OR/XOR
    }
    for (std::size_t i = 0; i < data_operands; ++i) step.inputs.push_back(value_for(op.inputs[i]));
    step.output = value_for(op.outputs[0]);
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

Status Compiler::check_conv_bias(std::uint32_t index, std::int64_t channels,
                                 std::string_view what) const
{
    const auto& bias = in(block_.operators[index], 2).shape;
    if (bias.size() != 1 || (bias[0] != channels && bias[0] != 1))
        return fail(bad_shape(index, fmt::format("bias {} must be [{}]{} or [1]", shape_text(bias),
                                                 channels, what)));
    return {};
}

Status Compiler::check_conv_window(std::uint32_t index, std::size_t spatial) const
{
    const auto& a = block_.operators[index].attributes;
    if (a.pad.size() != 2 * spatial || a.stride.size() != spatial ||
        a.dilation.size() != spatial)
        return fail(bad_attribute(index, fmt::format("pad needs {} values, stride and dilation "
                                                     "{} each",
                                                     2 * spatial, spatial)));
    if (std::ranges::any_of(a.pad, [](std::int32_t v) { return v < 0; }) ||
        std::ranges::any_of(a.stride, [](std::int32_t v) { return v < 1; }) ||
        std::ranges::any_of(a.dilation, [](std::int32_t v) { return v < 1; }))
        return fail(bad_attribute(index, "pad must be >= 0, stride and dilation >= 1"));
    return {};
}

Status Compiler::check_conv_operands(std::uint32_t index, bool accumulator)
{
    if (integer_data(index)) return check_int_operands(index, 3, 4);
    if (accumulator)
        if (auto acc = check_accumulator(index); !acc) return acc;
    if (auto zero = expect_zero_constant(index, 3, "input_zp"); !zero) return zero;
    return expect_zero_constant(index, 4, "weight_zp");
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
    if (auto checked = check_conv_bias(index, weight[0]); !checked) return checked;
    if (auto checked = check_conv_window(index, 2); !checked) return checked;
    // The GEMM's k is KH*KW*C (no overflow: a tensor has at most 2^40
    // elements); every dimension, OC among them, is below 2^31 already.
    if (weight[1] * weight[2] * weight[3] > gemm_max_dimension)
        return fail(bad_shape(index, fmt::format("weight {}: KH*KW*C must be at most {} (the "
                                                 "BLAS's 32-bit index); split the input "
                                                 "channels over several convolutions",
                                                 shape_text(weight), gemm_max_dimension)));
    // FP32 CONV2D has always run whatever acc_type says.
    if (auto checked = check_conv_operands(index, is_narrow_float(in(op, 0).dtype)); !checked)
        return checked;
    Conv2dGeometry g;
    g.n = input[0], g.ih = input[1], g.iw = input[2], g.ic = input[3];
    g.oc = weight[0], g.kh = weight[1], g.kw = weight[2];
    g.pad_top = a.pad[0], g.pad_left = a.pad[2];
    g.stride_y = a.stride[0], g.stride_x = a.stride[1];
    g.dilation_y = a.dilation[0], g.dilation_x = a.dilation[1];
    g.bias_per_channel = bias[0] == weight[0];
    // TOSA 1.0 divides the padded extent by the stride exactly (idiv_check).
    auto oh = strided_extent(index, "height",
                             g.ih - 1 + a.pad[0] + a.pad[1] - (g.kh - 1) * g.dilation_y,
                             g.stride_y);
    if (!oh) return fail(oh.error());
    auto ow = strided_extent(index, "width",
                             g.iw - 1 + a.pad[2] + a.pad[3] - (g.kw - 1) * g.dilation_x,
                             g.stride_x);
    if (!ow) return fail(ow.error());
    g.oh = *oh;
    g.ow = *ow;
    conv_[index] = g;
    return expect_output(index, {g.n, g.oh, g.ow, g.oc});
}

// ----- pools and the convolutions beyond CONV2D (TOSA 1.0 ERROR_IF rules)

Status Compiler::check_accumulator(std::uint32_t index) const
{
    const DType acc = block_.operators[index].attributes.acc_type;
    // The accumulators TOSA 1.0 defines per input dtype. The kernels always
    // accumulate in FP32; FP16 accumulation is allowed that higher precision
    // (docs/adr/0011-narrow-floats-on-the-cpu.md).
    const DType data = in(block_.operators[index], 0).dtype;
    if (is_narrow_float(data)) {
        const bool fp16_allowed = data != DType::bf16;
        const bool fp32_allowed = data == DType::fp16 || data == DType::bf16;
        if ((acc == DType::fp16 && fp16_allowed) || (acc == DType::fp32 && fp32_allowed))
            return {};
        return fail(bad_attribute(index, fmt::format("acc_type is {}; TOSA 1.0 allows {} for {} "
                                                     "data",
                                                     tosa::dtype_name(acc),
                                                     data == DType::fp16 ? "FP16 or FP32"
                                                     : fp32_allowed      ? "only FP32"
                                                                         : "only FP16",
                                                     tosa::dtype_name(data))));
    }
    if (acc != DType::fp32)
        return fail(bad_attribute(index, fmt::format("acc_type is {}; TOSA 1.0 allows only FP32 "
                                                     "for FP32 data",
                                                     tosa::dtype_name(acc))));
    return {};
}

Result<std::int64_t> Compiler::strided_extent(std::uint32_t index, std::string_view axis,
                                              std::int64_t span, std::int64_t stride) const
{
    if (span < 0)
        return fail(bad_shape(index, fmt::format("along the {} the kernel is larger than the "
                                                 "padded input",
                                                 axis)));
    if (span % stride != 0)
        return fail(bad_attribute(index, fmt::format("along the {} the padded input less the "
                                                     "kernel extent is {}, not a multiple of the "
                                                     "stride {}; TOSA 1.0 requires an exact "
                                                     "division: change the padding",
                                                     axis, span, stride)));
    return span / stride + 1;
}

// MAX_POOL2D and AVG_POOL2D.
Status Compiler::check_pool2d(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& input = in(op, 0).shape;
    const auto& a = op.attributes;
    if (input.size() != 4)
        return fail(bad_shape(index, fmt::format("input {} is not [N,H,W,C]", shape_text(input))));
    // Without rows or columns every window would be padding only.
    if (input[1] < 1 || input[2] < 1)
        return fail(bad_shape(index, fmt::format("input {} has no rows or no columns to pool",
                                                 shape_text(input))));
    if (a.kernel.size() != 2 || a.stride.size() != 2 || a.pad.size() != 4)
        return fail(bad_attribute(index, "kernel and stride need 2 values each, pad 4"));
    if (std::ranges::any_of(a.kernel, [](std::int32_t v) { return v < 1; }) ||
        std::ranges::any_of(a.stride, [](std::int32_t v) { return v < 1; }) ||
        std::ranges::any_of(a.pad, [](std::int32_t v) { return v < 0; }))
        return fail(bad_attribute(index, fmt::format("kernel [{}] and stride [{}] must be >= 1, "
                                                     "pad [{}] >= 0",
                                                     fmt::join(a.kernel, ","),
                                                     fmt::join(a.stride, ","),
                                                     fmt::join(a.pad, ","))));
    // A pad as large as the kernel would make windows of padding only.
    if (a.pad[0] >= a.kernel[0] || a.pad[1] >= a.kernel[0] || a.pad[2] >= a.kernel[1] ||
        a.pad[3] >= a.kernel[1])
        return fail(bad_attribute(index, fmt::format("pad [{}] must be below the kernel [{}] "
                                                     "(top and bottom below its height, left and "
                                                     "right below its width)",
                                                     fmt::join(a.pad, ","),
                                                     fmt::join(a.kernel, ","))));
    if (op.op == Op::max_pool2d) {
        if (auto mode = check_nan_mode(index); !mode) return mode;
    } else if (integer_data(index)) {
        if (auto q = check_int_operands(index, 1, 2); !q) return q;
    } else {
        if (auto acc = check_accumulator(index); !acc) return acc;
        if (auto zero = expect_zero_constant(index, 1, "input_zp"); !zero) return zero;
        if (auto zero = expect_zero_constant(index, 2, "output_zp"); !zero) return zero;
    }
    Pool2dGeometry g;
    g.n = input[0], g.ih = input[1], g.iw = input[2], g.c = input[3];
    g.kernel_y = a.kernel[0], g.kernel_x = a.kernel[1];
    g.stride_y = a.stride[0], g.stride_x = a.stride[1];
    g.pad_top = a.pad[0], g.pad_left = a.pad[2];
    auto oh = strided_extent(index, "height", g.ih + a.pad[0] + a.pad[1] - g.kernel_y, g.stride_y);
    if (!oh) return fail(oh.error());
    auto ow = strided_extent(index, "width", g.iw + a.pad[2] + a.pad[3] - g.kernel_x, g.stride_x);
    if (!ow) return fail(ow.error());
    g.oh = *oh, g.ow = *ow;
    pool_.resize(block_.operators.size());
    pool_[index] = g;
    return expect_output(index, {g.n, g.oh, g.ow, g.c});
}

Status Compiler::check_depthwise_conv2d(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& input = in(op, 0).shape;
    const auto& weight = in(op, 1).shape;
    const auto& bias = in(op, 2).shape;
    const auto& a = op.attributes;
    if (input.size() != 4 || weight.size() != 4 || weight[2] != input[3])
        return fail(bad_shape(index, fmt::format("input {} and weight {} are not [N,H,W,C] and "
                                                 "[KH,KW,C,M]",
                                                 shape_text(input), shape_text(weight))));
    const std::int64_t channels = weight[2] * weight[3];  // C * M
    if (auto checked = check_conv_bias(index, channels, " (C*M)"); !checked) return checked;
    if (auto checked = check_conv_window(index, 2); !checked) return checked;
    if (auto checked = check_conv_operands(index); !checked) return checked;
    Conv2dGeometry g;
    g.n = input[0], g.ih = input[1], g.iw = input[2], g.ic = input[3];
    g.oc = channels, g.kh = weight[0], g.kw = weight[1];
    g.pad_top = a.pad[0], g.pad_left = a.pad[2];
    g.stride_y = a.stride[0], g.stride_x = a.stride[1];
    g.dilation_y = a.dilation[0], g.dilation_x = a.dilation[1];
    g.bias_per_channel = bias[0] == channels;
    auto oh = strided_extent(index, "height",
                             g.ih - 1 + a.pad[0] + a.pad[1] - (g.kh - 1) * g.dilation_y,
                             g.stride_y);
    if (!oh) return fail(oh.error());
    auto ow = strided_extent(index, "width",
                             g.iw - 1 + a.pad[2] + a.pad[3] - (g.kw - 1) * g.dilation_x,
                             g.stride_x);
    if (!ow) return fail(ow.error());
    g.oh = *oh, g.ow = *ow;
    conv_[index] = g;
    return expect_output(index, {g.n, g.oh, g.ow, g.oc});
}

Status Compiler::check_transpose_conv2d(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& input = in(op, 0).shape;
    const auto& weight = in(op, 1).shape;
    const auto& bias = in(op, 2).shape;
    const auto& a = op.attributes;
    if (input.size() != 4 || weight.size() != 4 || weight[3] != input[3])
        return fail(bad_shape(index, fmt::format("input {} and weight {} are not [N,H,W,IC] and "
                                                 "[OC,KH,KW,IC]",
                                                 shape_text(input), shape_text(weight))));
    if (auto checked = check_conv_bias(index, weight[0]); !checked) return checked;
    if (a.out_pad.size() != 4 || a.stride.size() != 2)
        return fail(bad_attribute(index, "out_pad needs 4 values, stride 2"));
    if (std::ranges::any_of(a.stride, [](std::int32_t v) { return v < 1; }))
        return fail(bad_attribute(index, fmt::format("stride [{}] must be >= 1",
                                                     fmt::join(a.stride, ","))));
    const std::int64_t kh = weight[1];
    const std::int64_t kw = weight[2];
    // A negative out_pad crops the output; it may not crop a whole kernel.
    if (a.out_pad[0] <= -kh || a.out_pad[1] <= -kh || a.out_pad[2] <= -kw || a.out_pad[3] <= -kw)
        return fail(bad_attribute(index, fmt::format("out_pad [{}] must be above minus the "
                                                     "kernel size [{},{}] (top and bottom "
                                                     "against its height, left and right "
                                                     "against its width)",
                                                     fmt::join(a.out_pad, ","), kh, kw)));
    if (auto checked = check_conv_operands(index); !checked) return checked;
    Conv2dGeometry g;
    g.n = input[0], g.ih = input[1], g.iw = input[2], g.ic = input[3];
    g.oc = weight[0], g.kh = kh, g.kw = kw;
    g.pad_top = a.out_pad[0], g.pad_left = a.out_pad[2];
    g.stride_y = a.stride[0], g.stride_x = a.stride[1];
    g.bias_per_channel = bias[0] == weight[0];
    g.oh = (g.ih - 1) * g.stride_y + a.out_pad[0] + a.out_pad[1] + kh;
    g.ow = (g.iw - 1) * g.stride_x + a.out_pad[2] + a.out_pad[3] + kw;
    if (g.oh < 1 || g.ow < 1)
        return fail(bad_shape(index, fmt::format("out_pad [{}] crops the output to {}x{}",
                                                 fmt::join(a.out_pad, ","), g.oh, g.ow)));
    conv_[index] = g;
    return expect_output(index, {g.n, g.oh, g.ow, g.oc});
}

Status Compiler::check_conv3d(std::uint32_t index)
{
    const tosa::Operator& op = block_.operators[index];
    const auto& input = in(op, 0).shape;
    const auto& weight = in(op, 1).shape;
    const auto& bias = in(op, 2).shape;
    const auto& a = op.attributes;
    if (input.size() != 5 || weight.size() != 5 || weight[4] != input[4])
        return fail(bad_shape(index, fmt::format("input {} and weight {} are not [N,D,H,W,IC] and "
                                                 "[OC,KD,KH,KW,IC]",
                                                 shape_text(input), shape_text(weight))));
    if (auto checked = check_conv_bias(index, weight[0]); !checked) return checked;
    if (auto checked = check_conv_window(index, 3); !checked) return checked;
    if (auto checked = check_conv_operands(index); !checked) return checked;
    Conv3dGeometry g;
    g.n = input[0], g.id = input[1], g.ih = input[2], g.iw = input[3], g.ic = input[4];
    g.oc = weight[0], g.kd = weight[1], g.kh = weight[2], g.kw = weight[3];
    g.pad_front = a.pad[0], g.pad_top = a.pad[2], g.pad_left = a.pad[4];
    g.stride_d = a.stride[0], g.stride_y = a.stride[1], g.stride_x = a.stride[2];
    g.dilation_d = a.dilation[0], g.dilation_y = a.dilation[1], g.dilation_x = a.dilation[2];
    g.bias_per_channel = bias[0] == weight[0];
    auto od = strided_extent(index, "depth",
                             g.id - 1 + a.pad[0] + a.pad[1] - (g.kd - 1) * g.dilation_d,
                             g.stride_d);
    if (!od) return fail(od.error());
    auto oh = strided_extent(index, "height",
                             g.ih - 1 + a.pad[2] + a.pad[3] - (g.kh - 1) * g.dilation_y,
                             g.stride_y);
    if (!oh) return fail(oh.error());
    auto ow = strided_extent(index, "width",
                             g.iw - 1 + a.pad[4] + a.pad[5] - (g.kw - 1) * g.dilation_x,
                             g.stride_x);
    if (!ow) return fail(ow.error());
    g.od = *od, g.oh = *oh, g.ow = *ow;
    conv3d_.resize(block_.operators.size());
    conv3d_[index] = g;
    return expect_output(index, {g.n, g.od, g.oh, g.ow, g.oc});
}

// ---- Integer tensor operators (kernels_qconv.hpp; TOSA 1.0 ERROR_IF rules)

bool Compiler::integer_data(std::uint32_t index) const
{
    const DType data = in(block_.operators[index], 0).dtype;
    return data == DType::int8 || data == DType::int16;
}

Result<std::int64_t> Compiler::zero_point(std::uint32_t index, std::size_t operand,
                                          std::string_view what) const
{
    const std::uint32_t tensor = block_.operators[index].inputs[operand];
    const tosa::Tensor& t = block_.tensors[tensor];
    if (!order_.constant[tensor])
        return fail(bad_attribute(index, fmt::format("{} '{}' must be a constant", what, t.name)));
    if (t.element_count() != 1)
        return fail(bad_attribute(index, fmt::format("{} '{}' must have one element, has shape {}",
                                                     what, t.name, shape_text(t.shape))));
    // Admission gave the zero point the dtype of the operand it shifts.
    std::int64_t value = 0;
    if (t.dtype == DType::int16) {
        std::int16_t v;
        std::memcpy(&v, t.data.data(), sizeof v);
        value = v;
    } else if (t.dtype == DType::int4) {
        std::int8_t v;
        unpack_int4(t.data.data(), &v, 1);
        value = v;
    } else {
        value = static_cast<std::int8_t>(t.data[0]);
    }
    if (value != 0 && t.dtype != DType::int8)
        return fail(bad_attribute(index, fmt::format("{} '{}' is {}; TOSA 1.0 allows a non-zero "
                                                     "zero point only for INT8 operands, this one "
                                                     "is {}: set it to 0",
                                                     what, t.name, value,
                                                     tosa::dtype_name(t.dtype))));
    return value;
}

Status Compiler::check_int_operands(std::uint32_t index, std::size_t first_zp,
                                    std::size_t second_zp)
{
    const tosa::Operator& op = block_.operators[index];
    IntOperands q;
    q.input = in(op, 0).dtype;
    q.output = out(op).dtype;
    const bool matmul = op.op == Op::matmul;
    const bool pool = op.op == Op::avg_pool2d;
    if (!matmul) {
        // TOSA 1.0 accumulates INT8 data in INT32 and INT16 data in INT48,
        // except AVG_POOL2D, which accumulates both in INT32.
        const DType wanted = pool || q.input == DType::int8 ? DType::int32 : DType::int48;
        if (op.attributes.acc_type != wanted)
            return fail(bad_attribute(index, fmt::format("acc_type is {}; TOSA 1.0 accumulates "
                                                         "{} data of this operator in {}: set "
                                                         "acc_type to {}",
                                                         tosa::dtype_name(op.attributes.acc_type),
                                                         tosa::dtype_name(q.input),
                                                         tosa::dtype_name(wanted),
                                                         tosa::dtype_name(wanted))));
    }
    // INT4 weights are unpacked once, at load: they must be known then.
    if (!matmul && !pool && in(op, 1).dtype == DType::int4 && !order_.constant[op.inputs[1]])
        return fail(bad_attribute(index, fmt::format("INT4 weight '{}' must be a constant",
                                                     in(op, 1).name)));
    const auto [first, second] =
        matmul ? std::pair{"A_zp", "B_zp"}
               : pool ? std::pair{"input_zp", "output_zp"} : std::pair{"input_zp", "weight_zp"};
    auto first_value = zero_point(index, first_zp, first);
    if (!first_value) return fail(first_value.error());
    auto second_value = zero_point(index, second_zp, second);
    if (!second_value) return fail(second_value.error());
    q.input_zp = *first_value;
    q.weight_zp = *second_value;
    quant_.resize(block_.operators.size());
    quant_[index] = q;
    return {};
}

// An INT4 constant as INT8 values (low nibble first, kernels_qconv.hpp), in
// its own 64-byte aligned range of Plan::constants.
std::uint32_t Compiler::unpacked_int4(std::uint32_t tensor)
{
    const tosa::Tensor& t = block_.tensors[tensor];
    const std::uint64_t count = element_count(t.shape);
    Value value;
    value.home = Home::constant;
    value.dtype = DType::int8;
    value.shape = t.shape;
    value.offset = plan_.constants.size();
    plan_.constants.resize(value.offset + (count + 63) / 64 * 64);
    // The analysis checked that the data holds count / 2 rounded up bytes.
    if (t.data.size() >= count / 2 + count % 2)
        unpack_int4(t.data.data(),
                    reinterpret_cast<std::int8_t*>(plan_.constants.data() + value.offset), count);
    return add_value(std::move(value));
}

Status Compiler::check_shapes(std::uint32_t index)
{
    if (conv_.size() != block_.operators.size()) {
        conv_.resize(block_.operators.size());
        start_.resize(block_.operators.size());
        pad_value_.resize(block_.operators.size());
        resize_.resize(block_.operators.size());
        integer_.resize(block_.operators.size());
    }
    const tosa::Operator& op = block_.operators[index];
    for (std::uint32_t tensor : op.inputs)
        if (block_.tensors[tensor].shape.size() > VACCEL_MAX_RANK)
            return fail(bad_shape(index, fmt::format("tensor '{}' has rank {}; at most {} is "
                                                     "supported",
                                                     block_.tensors[tensor].name,
                                                     block_.tensors[tensor].shape.size(),
                                                     VACCEL_MAX_RANK)));
    if (integer_operator(op)) return check_integer(index);
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
    // Indexing, conversion, logical, resampling and Fourier operators.
    case Op::gather: return check_gather(index);
    case Op::scatter: return check_scatter(index);
    case Op::cast:
    case Op::logical_not: return expect_output(index, in(op, 0).shape);
    case Op::logical_and:
    case Op::logical_or:
    case Op::logical_xor: return check_broadcast(index);
    case Op::reduce_all:
    case Op::reduce_any: return check_reduce(index);
    case Op::resize: return check_resize(index);
    case Op::fft2d:
    case Op::rfft2d: return check_fft(index);
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
    // Pools and the convolutions beyond CONV2D.
    case Op::max_pool2d:
    case Op::avg_pool2d: return check_pool2d(index);
    case Op::depthwise_conv2d: return check_depthwise_conv2d(index);
    case Op::transpose_conv2d: return check_transpose_conv2d(index);
    case Op::conv3d: return check_conv3d(index);
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

bool Compiler::runs_widened(const Step& step) const
{
    // Steps that move whole elements by their size run on the narrow bytes.
    switch (step.kind) {
    case StepKind::copy:
    case StepKind::gather:
    case StepKind::scatter:
    case StepKind::transpose:
    case StepKind::concat:
    case StepKind::slice:
    case StepKind::pad:
    case StepKind::tile:
    case StepKind::reverse:
    case StepKind::select_any: return false;
    default: break;
    }
    const auto narrow = [&](std::uint32_t v) { return is_narrow_float(plan_.values[v].dtype); };
    return narrow(step.output) || std::ranges::any_of(step.inputs, narrow);
}

std::uint32_t Compiler::add_value(Value value)
{
    value.elements = element_count(value.shape);
    value.bytes = value.elements * element_bytes(value.dtype);
    plan_.values.push_back(std::move(value));
    return static_cast<std::uint32_t>(plan_.values.size() - 1);
}

// The value of a tensor, created on first use, where the shared plan put it
// (tosa/plan.hpp): a bound slot, or arena bytes (intermediates packed by
// lifetime, constants written when the arena is made, staged outputs). A
// constant the shared plan treats as compile-time but a step reads as data
// is copied into Plan::constants instead.
std::uint32_t Compiler::value_for(std::uint32_t tensor)
{
    if (value_of_[tensor] != none) return value_of_[tensor];
    const tosa::Tensor& t = block_.tensors[tensor];
    if (t.dtype == DType::int4) return value_of_[tensor] = unpacked_int4(tensor);
    const tosa::Location& where = layout_->locations[tensor];
    Value value;
    value.shape = t.shape;
    value.dtype = t.dtype;
    const std::uint64_t bytes = element_count(t.shape) * element_bytes(t.dtype);
    if (where.is_slot()) {
        value.home = Home::slot;
        value.slot = where.slot;
    } else if (where.kind == tosa::Location::Kind::state) {
        value.home = Home::state;
        value.slot = program_.variable(layout_->variables[where.slot], t);
    } else if (where.kind == tosa::Location::Kind::captured) {
        value.home = Home::captured;
        value.slot = where.slot;
    } else if (where.is_arena()) {
        value.home = Home::arena;
        value.offset = where.offset;
    } else {
        // Each range starts on a 64-byte boundary.
        const auto aligned = [](std::uint64_t n) { return (n + 63) / 64 * 64; };
        value.home = Home::constant;
        value.offset = plan_.constants.size();
        plan_.constants.resize(value.offset + aligned(bytes));
        std::memcpy(plan_.constants.data() + value.offset, t.data.data(),
                    std::min<std::uint64_t>(bytes, t.data.size()));
    }
    value_of_[tensor] = add_value(std::move(value));
    return value_of_[tensor];
}

Result<Plan> Compiler::build()
{
    // The shared plan places every tensor and orders the operators; staged
    // outputs keep the deadline rule (outputs are written in one final copy).
    tosa::PlanOptions options;
    options.stage_outputs = true;
    options.control_flow = program_.control_flow();
    auto analysis = program_.analysis();
    if (!analysis) return fail(analysis.error());
    analysis_ = *analysis;
    auto layout = tosa::plan_block(program_.graph(), **analysis, ref_, options);
    if (!layout) return fail(std::move(layout.error()));
    layout_ = &*layout;
    plan_.arena_bytes = layout->arena_bytes;
    plan_.arena_constants = std::move(layout->constants);
    for (std::uint32_t tensor : layout->captured)
        plan_.captured_names.push_back(block_.tensors[tensor].name);

    // Slots: graph inputs in declared order, then graph outputs.
    for (std::uint32_t tensor : block_.inputs) {
        const tosa::Tensor& t = block_.tensors[tensor];
        plan_.slots.push_back(SlotInfo{VACCEL_SLOT_INPUT, static_cast<std::uint32_t>(t.dtype),
                                       t.shape, element_count(t.shape) * element_bytes(t.dtype),
                                       t.name});
        plan_.slot_values.push_back(value_for(tensor));
    }
    plan_.input_count = static_cast<std::uint32_t>(plan_.slots.size());

    // The operators the plan dispatches, in its order (views and CONST have
    // no dispatch: a view is its source's bytes).
    std::vector<std::uint32_t> dispatched;
    for (const tosa::Dispatch& dispatch : layout->dispatches)
        if (dispatched.empty() || dispatched.back() != dispatch.op_index)
            dispatched.push_back(dispatch.op_index);
    for (std::uint32_t index : dispatched) {
        const tosa::Operator& op = block_.operators[index];
        Step step;
        step.op_index = index;
        if (integer_operator(op)) {
            build_integer_step(index, step);
            plan_.steps.push_back(std::move(step));
            continue;
        }
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
        // Indexing, conversion, logical, resampling and Fourier operators.
        case Op::gather: step.kind = StepKind::gather; break;
        case Op::scatter: step.kind = StepKind::scatter; break;
        case Op::cast: step.kind = StepKind::cast; break;
        case Op::logical_and: step.kind = StepKind::logical, step.logical = Logical::land; break;
        case Op::logical_or: step.kind = StepKind::logical, step.logical = Logical::lor; break;
        case Op::logical_xor: step.kind = StepKind::logical, step.logical = Logical::lxor; break;
        case Op::logical_not: step.kind = StepKind::logical_not; break;
        case Op::reduce_all: step.kind = StepKind::reduce_bool, step.reduce_all = true; break;
        case Op::reduce_any: step.kind = StepKind::reduce_bool, step.reduce_all = false; break;
        case Op::resize:
            step.kind = StepKind::resize;
            step.resize = resize_[index];
            break;
        case Op::fft2d:
            step.kind = StepKind::fft2d;
            step.inverse = op.attributes.inverse;
            break;
        case Op::rfft2d: step.kind = StepKind::rfft2d; break;
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
            step.min = read_float(in(op, 0).dtype, op.attributes.min_val.data());
            step.max = read_float(in(op, 0).dtype, op.attributes.max_val.data());
            break;
        case Op::sigmoid: step.kind = StepKind::unary, step.unary = Unary::sigmoid; break;
        case Op::tanh: step.kind = StepKind::unary, step.unary = Unary::tanh; break;
        case Op::reduce_sum: step.kind = StepKind::reduce, step.reduce = Reduce::sum; break;
        case Op::conv2d:
            step.kind = StepKind::conv2d;
            step.conv = conv_[index];
            break;
        // Pools and the convolutions beyond CONV2D.
        case Op::max_pool2d:
            step.kind = StepKind::max_pool2d;
            step.pool = pool_[index];
            break;
        case Op::avg_pool2d:
            step.kind = StepKind::avg_pool2d;
            step.pool = pool_[index];
            break;
        case Op::depthwise_conv2d:
            step.kind = StepKind::depthwise_conv2d;
            step.conv = conv_[index];
            break;
        case Op::transpose_conv2d:
            step.kind = StepKind::transpose_conv2d;
            step.conv = conv_[index];
            break;
        case Op::conv3d:
            step.kind = StepKind::conv3d;
            step.conv3d = conv3d_[index];
            break;
        // Control flow and state (a copy into or out of a variable: views
        // of variables do not exist, so IDENTITY reaches here for them).
        case Op::cond_if:
        case Op::while_loop:
            if (auto added = add_control_flow(index, step); !added) return fail(added.error());
            plan_.steps.push_back(std::move(step));
            continue;
        case Op::variable_read:
            step.kind = StepKind::copy;
            step.inputs.push_back(value_for(op.inputs[0]));
            step.output = value_for(op.outputs[0]);
            plan_.steps.push_back(std::move(step));
            continue;
        case Op::variable_write: {
            // Writes the variable among its operands with the other operand.
            step.kind = StepKind::copy;
            for (std::uint32_t tensor : op.inputs) {
                if (block_.tensors[tensor].variable) step.output = value_for(tensor);
                else step.inputs.push_back(value_for(tensor));
            }
            plan_.steps.push_back(std::move(step));
            continue;
        }
        default: continue;  // not admitted
        }
        // Attributes read by the operators that have them (checked above).
        if (index < quant_.size()) step.quant = quant_[index];  // integer tensor operators
        step.axis = op.attributes.axis;
        step.nan_propagate = op.attributes.nan_mode != nan_ignore;
        // Data operands: everything but shift, zero points, shapes and pad_const.
        std::size_t data_operands = op.inputs.size();
        if (op.op == Op::mul || op.op == Op::reshape) data_operands = op.inputs.size() - 1;
        if (op.op == Op::matmul) data_operands = 2;
        if (op.op == Op::conv2d) data_operands = 3;
        if (op.op == Op::depthwise_conv2d || op.op == Op::transpose_conv2d || op.op == Op::conv3d)
            data_operands = 3;  // input, weight, bias (not the zero points)
        if (op.op == Op::avg_pool2d) data_operands = 1;
        if (op.op == Op::negate || op.op == Op::slice || op.op == Op::pad || op.op == Op::tile ||
            op.op == Op::resize)
            data_operands = 1;
        for (std::size_t i = 0; i < data_operands; ++i) step.inputs.push_back(value_for(op.inputs[i]));
        step.output = value_for(op.outputs[0]);
        if (op.outputs.size() > 1) step.output_imag = value_for(op.outputs[1]);  // FFT2D, RFFT2D
        step.narrow_float = runs_widened(step);
        plan_.steps.push_back(std::move(step));
    }

    for (std::uint32_t tensor : block_.outputs) {
        const tosa::Tensor& t = block_.tensors[tensor];
        plan_.slots.push_back(SlotInfo{VACCEL_SLOT_OUTPUT, static_cast<std::uint32_t>(t.dtype),
                                       t.shape, element_count(t.shape) * element_bytes(t.dtype),
                                       t.name});
        plan_.slot_values.push_back(value_for(tensor));
    }
    return std::move(plan_);
}

Status Compiler::add_control_flow(std::uint32_t index, Step& step)
{
    const tosa::Operator& op = block_.operators[index];
    step.kind = op.op == Op::cond_if ? StepKind::cond_if : StepKind::while_loop;
    for (std::uint32_t tensor : op.inputs) step.inputs.push_back(value_for(tensor));
    for (std::uint32_t tensor : op.outputs) step.results.push_back(value_for(tensor));
    step.output = step.results.empty() ? 0 : step.results[0];
    // then, else / cond, body (analyze() resolved and checked them).
    for (const tosa::BlockRef child : analysis_->block(ref_).operators[index].blocks) {
        auto nested = program_.nested(child);
        if (!nested) return fail(nested.error());
        BlockCall call;
        call.block = *nested;
        // Each tensor the child reads by name is this block's tensor of that
        // name (analyze() made it an implicit input, so the plan placed it).
        const tosa::Block& child_block = program_.graph().regions[child.region].blocks[child.block];
        for (std::uint32_t tensor : analysis_->block(child).captured) {
            const std::string& name = child_block.tensors[tensor].name;
            const auto mine = std::ranges::find_if(block_.tensors, [&](const tosa::Tensor& t) {
                return t.name == name;
            });
            if (mine == block_.tensors.end())
                return fail(bad_attribute(index, fmt::format("block '{}' reads '{}', which this "
                                                             "block does not declare",
                                                             child_block.name, name)));
            call.captures.push_back(
                value_for(static_cast<std::uint32_t>(mine - block_.tensors.begin())));
        }
        step.calls.push_back(std::move(call));
    }
    return {};
}

}  // namespace

std::uint64_t element_bytes(DType dtype)
{
    return tosa::dtype_bytes(dtype);  // BOOL: one byte, 0 or 1
}

namespace {

// The order and constants of a block that has variables or runs in a
// program with control flow, from the analysis (order_block() would see a
// variable written after it is read as a cycle): a constant is serialized
// data nobody computes, or a captured copy of such a tensor.
ExecutionOrder analyzed_order(const tosa::Block& block, const tosa::BlockAnalysis& info)
{
    ExecutionOrder order;
    order.operators = info.live_order;
    order.constant.resize(block.tensors.size());
    for (std::size_t t = 0; t < block.tensors.size(); ++t)
        order.constant[t] = info.values[t].kind == tosa::ValueKind::constant ||
                            (info.values[t].kind == tosa::ValueKind::captured &&
                             !block.tensors[t].data.empty() && !block.tensors[t].variable);
    return order;
}

Result<const tosa::Analysis*> ProgramCompiler::analysis()
{
    if (!analysis_) {
        auto analyzed = tosa::analyze(graph_);
        if (!analyzed) return fail(std::move(analyzed.error()));
        analysis_ = std::move(*analyzed);
    }
    return &*analysis_;
}

Result<Plan> ProgramCompiler::compile_block(tosa::BlockRef ref)
{
    const tosa::Block& block = graph_.regions[ref.region].blocks[ref.block];
    if (auto admitted = admit_block(block); !admitted) return fail(admitted.error());
    ExecutionOrder order;
    if (control_flow_) {
        auto analyzed = analysis();
        if (!analyzed) return fail(analyzed.error());
        order = analyzed_order(block, (*analyzed)->block(ref));
    } else {
        auto ordered = order_block(block);
        if (!ordered) return fail(ordered.error());
        order = std::move(*ordered);
    }
    Compiler compiler(block, order, *this, ref);
    for (std::uint32_t index = 0; index < block.operators.size(); ++index)
        if (auto shapes = compiler.check_shapes(index); !shapes) return fail(shapes.error());
    return compiler.build();
}

Result<std::uint32_t> ProgramCompiler::nested(tosa::BlockRef ref)
{
    for (std::uint32_t i = 0; i < nested_refs_.size(); ++i)
        if (nested_refs_[i] == ref) return i;
    auto plan = compile_block(ref);
    if (!plan) return fail(plan.error());
    nested_refs_.push_back(ref);
    nested_.push_back(std::move(*plan));
    return static_cast<std::uint32_t>(nested_.size() - 1);
}

std::uint32_t ProgramCompiler::variable(const std::string& name, const tosa::Tensor& tensor)
{
    for (std::uint32_t i = 0; i < variables_.size(); ++i)
        if (variables_[i].name == name) return i;
    VariableInfo info;
    info.name = name;
    info.dtype = tensor.dtype;
    info.shape = tensor.shape;
    info.bytes = element_count(tensor.shape) * element_bytes(tensor.dtype);
    info.initial = tensor.data;
    info.initial.resize(info.bytes, 0);
    variables_.push_back(std::move(info));
    return static_cast<std::uint32_t>(variables_.size() - 1);
}

// Moves every arena offset of `plan` up by `base`.
void relocate(Plan& plan, std::uint64_t base)
{
    for (Value& value : plan.values)
        if (value.home == Home::arena) value.offset += base;
    for (tosa::ConstantPlan& constant : plan.arena_constants) constant.offset += base;
}

std::shared_ptr<const Plan> ProgramCompiler::finish(Plan main)
{
    // Arenas end to end, each from a multiple of the plan's alignment.
    const auto aligned = [](std::uint64_t n) {
        return (n + tosa::arena_alignment - 1) / tosa::arena_alignment * tosa::arena_alignment;
    };
    std::uint64_t end = aligned(main.arena_bytes);
    for (Plan& plan : nested_) {
        relocate(plan, end);
        end += aligned(plan.arena_bytes);
        main.arena_constants.insert(main.arena_constants.end(), plan.arena_constants.begin(),
                                    plan.arena_constants.end());
    }
    main.arena_bytes = end;
    main.nested = std::move(nested_);
    main.variables = std::move(variables_);
    return std::make_shared<const Plan>(std::move(main));
}

}  // namespace

Result<std::shared_ptr<const Plan>> compile(const tosa::Graph& graph)
{
    std::size_t blocks = 0;
    for (const tosa::Region& region : graph.regions) blocks += region.blocks.size();
    if (graph.regions.empty() || graph.regions[0].blocks.empty())
        return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_REGIONS)
                        .with_note("the graph has no block to run"));
    // Control flow and variables take the analysis' order and the plan's
    // state and captured locations (ProgramCompiler::compile_block).
    bool variables = false;
    for (const tosa::Region& region : graph.regions)
        for (const tosa::Block& block : region.blocks)
            variables = variables || std::ranges::any_of(block.tensors, [](const tosa::Tensor& t) {
                            return t.variable;
                        });
    ProgramCompiler program(graph, blocks > 1 || variables);
    auto main = program.compile_block({0, 0});
    if (!main) return fail(main.error());
    if (program.block_count() != blocks)
        return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_REGIONS)
                        .with_note(fmt::format("the graph has {} blocks but its first block "
                                               "runs only {} of them (itself included); the CPU "
                                               "backend runs the first block of the first region "
                                               "and the blocks its COND_IF/WHILE_LOOP operators "
                                               "run",
                                               blocks, program.block_count())));
    return program.finish(std::move(*main));
}

}  // namespace vaccel::backend::cpu
