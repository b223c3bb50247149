// lowering.cpp - TOSA operators to GPU kernel dispatches (lowering.hpp).
#include "vaccel/gpu/lowering.hpp"
#include "vaccel/gpu/lowering_epilogue.hpp"
#include "vaccel/gpu/lowering_operands.hpp"
#include "vaccel/gpu/lowering_spatial.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>

namespace vaccel::backend::gpu {
namespace {

using tosa::DType;
using tosa::Op;

constexpr std::size_t rank6 = 6;
// The reduce kernel's teams (reduce.comp, reduce.cu: TEAM): 32 invocations
// per result when the axis is at least 64 long and there are at most 64 Ki
// results (beyond that one thread per result fills the device already).
constexpr std::uint32_t reduce_team_size = 32;
constexpr std::uint64_t reduce_team_min_axis = 64;
constexpr std::uint64_t reduce_team_max_results = 65536;
// Element offsets and strides are 32-bit signed specialization constants.
constexpr std::uint64_t max_kernel_elements = 0x7fffffff;

}  // namespace

// The helpers lowering_operands.hpp shares with lowering_spatial.cpp.
const tosa::Tensor& tensor(const tosa::OperatorView& view, std::uint32_t index)
{
    return view.block->tensors[index];
}

Error dtype_refusal(const tosa::OperatorView& view, DType dtype)
{
    return Error::of(Errc::unsupported, VACCEL_D_TOSA_DTYPE, static_cast<std::uint64_t>(dtype),
                     static_cast<std::uint64_t>(view.op->op))
        .with_note(fmt::format("operator {} of the block: the device has no kernel for "
                               "{} on {} (docs/operators.md lists the dtypes it runs); run the "
                               "program on the cpu device",
                               view.op_index, tosa::op_name(view.op->op),
                               tosa::dtype_name(dtype)));
}

Result<Operand> operand(const tosa::OperatorView& view, std::uint32_t index)
{
    const tosa::Location& where = view.location(index);
    const tosa::Tensor& t = tensor(view, index);
    if (t.element_count() > max_kernel_elements)
        return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_BAD_SHAPE,
                              t.element_count())
                        .with_note(fmt::format("operator {}: tensor \"{}\" has {} elements; the "
                                               "kernels address at most {}",
                                               view.op_index, t.name, t.element_count(),
                                               max_kernel_elements)));
    const auto arena = static_cast<std::uint32_t>(view.block->inputs.size() +
                                                  view.block->outputs.size());
    if (where.is_slot()) return Operand{where.slot, 0};
    if (where.is_arena()) {
        // Arena offsets are multiples of tosa::arena_alignment, so whole
        // words and whole elements of every dtype.
        const std::uint64_t base = where.offset / element_bytes(t.dtype);
        if (base > max_kernel_elements)
            return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_BAD_SHAPE, base)
                            .with_note(fmt::format("operator {}: the program's arena is too "
                                                   "large for the kernels' 32-bit "
                                                   "offsets",
                                                   view.op_index)));
        return Operand{arena, static_cast<std::uint32_t>(base)};
    }
    return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_REGIONS)
                    .with_note(fmt::format("operator {}: tensor \"{}\" has no location in the "
                                           "plan",
                                           view.op_index, t.name)));
}

namespace {

std::array<std::int64_t, rank6> padded_shape(const std::vector<std::int64_t>& shape)
{
    std::array<std::int64_t, rank6> out{1, 1, 1, 1, 1, 1};
    std::copy(shape.begin(), shape.end(), out.begin() + (rank6 - shape.size()));
    return out;
}

std::array<std::int64_t, rank6> strides_of(const std::array<std::int64_t, rank6>& shape)
{
    std::array<std::int64_t, rank6> strides{};
    std::int64_t stride = 1;
    for (std::size_t d = rank6; d-- > 0;) {
        strides[d] = stride;
        stride *= shape[d];
    }
    return strides;
}

// The elementwise kernel's specialization words (constant_id 1..47).
struct ElementSpec {
    ElementOp op = ElementOp::copy32;
    std::array<std::int64_t, rank6> dims{1, 1, 1, 1, 1, 1};
    struct Access {
        Operand where;
        std::int64_t base_adjust = 0;
        std::array<std::int64_t, rank6> strides{};
    };
    std::array<Access, 4> operands{};  // result, then up to three inputs
    float p0 = 0, p1 = 0;
    std::array<DType, 4> dtypes{DType::fp32, DType::fp32, DType::fp32, DType::fp32};
    bool nan_ignore = false;  // MAXIMUM, MINIMUM, CLAMP: nan_mode IGNORE
    Epilogue epilogue;        // stages applied to each result before its store

    // elementwise.comp's DENSE: 4 or 1 when every operand the operator
    // reads or writes is 32-bit and laid out densely in `dims` (strides of
    // dimensions of extent 1 never matter); 4 when every base is also a
    // whole number of 16-byte quads. 0: the general path.
    std::uint32_t dense() const
    {
        const auto u = static_cast<std::uint32_t>(op);
        const bool binary = u >= static_cast<std::uint32_t>(ElementOp::add) &&
                            u <= static_cast<std::uint32_t>(ElementOp::pow);
        const bool unary = u >= static_cast<std::uint32_t>(ElementOp::abs) &&
                           u <= static_cast<std::uint32_t>(ElementOp::clamp);
        if (!binary && !unary && op != ElementOp::copy32 && op != ElementOp::cast) return 0;
        const std::size_t used = binary ? 3 : 2;
        const auto dense_strides = strides_of(dims);
        bool quads = true;
        for (std::size_t k = 0; k < used; ++k) {
            if (dtypes[k] != DType::fp32 && dtypes[k] != DType::int32) return 0;
            for (std::size_t d = 0; d < rank6; ++d)
                if (dims[d] != 1 && operands[k].strides[d] != dense_strides[d]) return 0;
            quads = quads && (operands[k].where.base + operands[k].base_adjust) % 4 == 0;
        }
        return quads ? 4 : 1;
    }

    tosa::KernelSpec kernel() const
    {
        tosa::KernelSpec spec;
        spec.kernel = static_cast<std::uint32_t>(KernelId::elementwise);
        spec.spec.push_back(static_cast<std::uint32_t>(op));
        std::uint64_t work = 1;
        for (auto d : dims) {
            spec.spec.push_back(static_cast<std::uint32_t>(d));
            work *= static_cast<std::uint64_t>(d);
        }
        for (const Access& a : operands) {
            spec.spec.push_back(a.where.buffer);
            spec.spec.push_back(static_cast<std::uint32_t>(a.where.base + a.base_adjust));
            for (auto s : a.strides) spec.spec.push_back(static_cast<std::uint32_t>(s));
        }
        spec.spec.push_back(std::bit_cast<std::uint32_t>(p0));
        spec.spec.push_back(std::bit_cast<std::uint32_t>(p1));
        bool narrow = false;
        for (DType d : dtypes) {
            spec.spec.push_back(kernel_dtype(d).value_or(0));
            narrow = narrow || needs_narrow_storage(d);
        }
        spec.spec.push_back(nan_ignore ? 1 : 0);
        const std::uint32_t dense_path = dense();
        spec.spec.push_back(dense_path);
        epilogue_words(spec.spec, epilogue);
        if (narrow) spec.kernel = static_cast<std::uint32_t>(KernelId::elementwise_narrow);
        // The dense path's quads: an invocation per 4 elements.
        spec.work = dense_path == 4 ? (work + 3) / 4 : work;
        return spec;
    }
};

// TOSA nan_mode IGNORE (2); PROPAGATE (1) and operators without the
// attribute (0) propagate NaN.
bool ignores_nan(const tosa::OperatorView& view) { return view.op->attributes.nan_mode == 2; }

// Strides of an input read at the result's coordinates with TOSA
// broadcasting (same rank; a dimension of 1 repeats).
std::array<std::int64_t, rank6> broadcast_strides(const std::vector<std::int64_t>& input)
{
    const auto shape = padded_shape(input);
    auto strides = strides_of(shape);
    for (std::size_t d = 0; d < rank6; ++d)
        if (shape[d] == 1) strides[d] = 0;
    return strides;
}

}  // namespace

std::optional<ElementOp> element_op(Op op)
{
    switch (op) {
    case Op::add: return ElementOp::add;
    case Op::sub: return ElementOp::sub;
    case Op::mul: return ElementOp::mul;
    case Op::maximum: return ElementOp::maximum;
    case Op::minimum: return ElementOp::minimum;
    case Op::pow: return ElementOp::pow;
    case Op::equal: return ElementOp::equal;
    case Op::greater: return ElementOp::greater;
    case Op::greater_equal: return ElementOp::greater_equal;
    case Op::abs: return ElementOp::abs;
    case Op::negate: return ElementOp::negate;
    case Op::exp: return ElementOp::exp;
    case Op::log: return ElementOp::log;
    case Op::reciprocal: return ElementOp::reciprocal;
    case Op::rsqrt: return ElementOp::rsqrt;
    case Op::ceil: return ElementOp::ceil;
    case Op::floor: return ElementOp::floor;
    case Op::sin: return ElementOp::sin;
    case Op::cos: return ElementOp::cos;
    case Op::sigmoid: return ElementOp::sigmoid;
    case Op::tanh: return ElementOp::tanh;
    case Op::erf: return ElementOp::erf;
    case Op::clamp: return ElementOp::clamp;
    case Op::select: return ElementOp::select;
    case Op::logical_and: return ElementOp::logical_and;
    case Op::logical_or: return ElementOp::logical_or;
    case Op::logical_xor: return ElementOp::logical_xor;
    case Op::logical_not: return ElementOp::logical_not;
    default: return std::nullopt;
    }
}

namespace {

// The dtype each data operand must have: `data` (FP32, FP16 or BF16) for
// arithmetic, BOOL for logic and SELECT's condition.
DType operand_dtype(ElementOp op, std::size_t input, DType data)
{
    if (op >= ElementOp::logical_and) return DType::boolean;
    if (op == ElementOp::select && input == 0) return DType::boolean;
    return data;
}
DType result_dtype(ElementOp op, DType data)
{
    if (op >= ElementOp::logical_and) return DType::boolean;
    if (op >= ElementOp::equal && op <= ElementOp::greater_equal) return DType::boolean;
    return data;
}

tosa::DispatchRequest request(tosa::KernelSpec spec, std::vector<std::uint32_t> reads,
                              std::uint32_t write)
{
    return tosa::DispatchRequest{std::move(spec), std::move(reads), {write}};
}

// Float arithmetic computes its result in FP32 before the store, where
// an epilogue's stages follow (`epilogue` applied: the caller adds no pass).
bool takes_epilogue(ElementOp op)
{
    return (op >= ElementOp::add && op <= ElementOp::pow) ||
           (op >= ElementOp::abs && op <= ElementOp::clamp);
}

Result<std::vector<tosa::DispatchRequest>> lower_elementwise(const tosa::OperatorView& view,
                                                             ElementOp op, const Epilogue& epilogue,
                                                             bool& applied)
{
    const std::uint32_t out = view.outputs[0];
    const tosa::Tensor& result = tensor(view, out);
    // The data dtype: the compared operands' for comparisons, SELECT's
    // choices', else the result's.
    const bool compares = op >= ElementOp::equal && op <= ElementOp::greater_equal;
    const std::size_t data_input = compares ? 0 : (op == ElementOp::select ? 1 : SIZE_MAX);
    const DType data = data_input < view.inputs.size()
                           ? tensor(view, view.inputs[data_input]).dtype
                           : result.dtype;
    if (op < ElementOp::logical_and && !arithmetic_dtype(data))
        return fail(dtype_refusal(view, data));
    if (result.dtype != result_dtype(op, data)) return fail(dtype_refusal(view, result.dtype));
    ElementSpec spec;
    spec.op = op;
    spec.dtypes[0] = result.dtype;
    spec.dims = padded_shape(result.shape);
    spec.nan_ignore = ignores_nan(view);
    auto where = operand(view, out);
    if (!where) return fail(where.error());
    spec.operands[0] = {*where, 0, strides_of(spec.dims)};
    for (std::size_t i = 0; i < view.inputs.size() && i < 3; ++i) {
        const tosa::Tensor& in = tensor(view, view.inputs[i]);
        if (in.dtype != operand_dtype(op, i, data)) return fail(dtype_refusal(view, in.dtype));
        spec.dtypes[i + 1] = in.dtype;
        auto at = operand(view, view.inputs[i]);
        if (!at) return fail(at.error());
        spec.operands[i + 1] = {*at, 0, broadcast_strides(in.shape)};
    }
    if (op == ElementOp::clamp) {
        // The bounds are one element of the operand's own dtype, widened.
        const auto& a = view.op->attributes;
        const auto lo = attribute_float(data, a.min_val);
        const auto hi = attribute_float(data, a.max_val);
        if (!lo || !hi)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_TOSA_GRAPH,
                                  VACCEL_TOSA_BAD_ATTRIBUTE, static_cast<std::uint64_t>(Op::clamp))
                            .with_note(fmt::format("operator {}: CLAMP's min_val and max_val "
                                                   "must each be one {}-byte {} value",
                                                   view.op_index, element_bytes(data),
                                                   tosa::dtype_name(data))));
        spec.p0 = *lo;
        spec.p1 = *hi;
    }
    if (takes_epilogue(op)) {
        spec.epilogue = epilogue;
        applied = true;
    }
    return std::vector{request(spec.kernel(), view.inputs, out)};
}

// The copy operators move elements' bits unchanged, at their own width.
Result<ElementOp> copy_op(const tosa::OperatorView& view, DType dtype)
{
    if (!copy_dtype(dtype)) return fail(dtype_refusal(view, dtype));
    const std::uint32_t bytes = element_bytes(dtype);
    return bytes == 4 ? ElementOp::copy32 : (bytes == 2 ? ElementOp::copy16 : ElementOp::copy8);
}

// IDENTITY and RESHAPE that the plan could not make views: a flat copy.
Result<std::vector<tosa::DispatchRequest>> lower_copy(const tosa::OperatorView& view)
{
    const std::uint32_t in = view.inputs[0], out = view.outputs[0];
    auto op = copy_op(view, tensor(view, out).dtype);
    if (!op) return fail(op.error());
    if (tensor(view, in).dtype != tensor(view, out).dtype ||
        tensor(view, in).element_count() != tensor(view, out).element_count())
        return fail(dtype_refusal(view, tensor(view, in).dtype));
    auto src = operand(view, in);
    auto dst = operand(view, out);
    if (!src) return fail(src.error());
    if (!dst) return fail(dst.error());
    ElementSpec spec;
    spec.op = *op;
    spec.dtypes = {tensor(view, out).dtype, tensor(view, out).dtype, DType::fp32, DType::fp32};
    spec.dims[5] = static_cast<std::int64_t>(tensor(view, out).element_count());
    spec.operands[0] = {*dst, 0, {0, 0, 0, 0, 0, 1}};
    spec.operands[1] = {*src, 0, {0, 0, 0, 0, 0, 1}};
    return std::vector{request(spec.kernel(), {in}, out)};
}

Result<std::vector<tosa::DispatchRequest>> lower_transpose_or_reverse(
    const tosa::OperatorView& view)
{
    const std::uint32_t in = view.inputs[0], out = view.outputs[0];
    const tosa::Tensor& source = tensor(view, in);
    auto op = copy_op(view, source.dtype);
    if (!op) return fail(op.error());
    if (tensor(view, out).dtype != source.dtype)
        return fail(dtype_refusal(view, tensor(view, out).dtype));
    auto src = operand(view, in);
    auto dst = operand(view, out);
    if (!src) return fail(src.error());
    if (!dst) return fail(dst.error());
    ElementSpec spec;
    spec.op = *op;
    spec.dtypes = {source.dtype, source.dtype, DType::fp32, DType::fp32};
    spec.dims = padded_shape(tensor(view, out).shape);
    spec.operands[0] = {*dst, 0, strides_of(spec.dims)};
    const auto in_shape = padded_shape(source.shape);
    const auto in_strides = strides_of(in_shape);
    const std::size_t lead = rank6 - source.shape.size();
    ElementSpec::Access read{*src, 0, in_strides};
    const auto& attributes = view.op->attributes;
    if (view.op->op == Op::transpose) {
        // Result dimension i is source dimension perms[i].
        for (std::size_t i = 0; i < attributes.perms.size(); ++i)
            read.strides[lead + i] = in_strides[lead + static_cast<std::size_t>(attributes.perms[i])];
    } else {
        const std::size_t axis = lead + static_cast<std::size_t>(attributes.axis);
        read.base_adjust = (in_shape[axis] - 1) * in_strides[axis];
        read.strides[axis] = -in_strides[axis];
    }
    spec.operands[1] = read;
    return std::vector{request(spec.kernel(), {in}, out)};
}

// One dispatch per input, each writing its slab of the result.
Result<std::vector<tosa::DispatchRequest>> lower_concat(const tosa::OperatorView& view)
{
    const std::uint32_t out = view.outputs[0];
    const tosa::Tensor& result = tensor(view, out);
    auto op = copy_op(view, result.dtype);
    if (!op) return fail(op.error());
    auto dst = operand(view, out);
    if (!dst) return fail(dst.error());
    const auto out_strides = strides_of(padded_shape(result.shape));
    const std::size_t axis =
        rank6 - result.shape.size() + static_cast<std::size_t>(view.op->attributes.axis);
    std::vector<tosa::DispatchRequest> requests;
    std::int64_t along = 0;
    for (std::uint32_t in : view.inputs) {
        const tosa::Tensor& part = tensor(view, in);
        if (part.dtype != result.dtype) return fail(dtype_refusal(view, part.dtype));
        auto src = operand(view, in);
        if (!src) return fail(src.error());
        ElementSpec spec;
        spec.op = *op;
        spec.dtypes = {result.dtype, result.dtype, DType::fp32, DType::fp32};
        spec.dims = padded_shape(part.shape);
        spec.operands[0] = {*dst, along * out_strides[axis], out_strides};
        spec.operands[1] = {*src, 0, strides_of(spec.dims)};
        along += spec.dims[axis];
        requests.push_back(request(spec.kernel(), {in}, out));
    }
    return requests;
}

// CAST: a flat elementwise pass converting each element (common.glsl and
// elementwise.comp hold the rounding and saturation rules).
Result<std::vector<tosa::DispatchRequest>> lower_cast(const tosa::OperatorView& view)
{
    const std::uint32_t in = view.inputs[0], out = view.outputs[0];
    const DType from = tensor(view, in).dtype, to = tensor(view, out).dtype;
    // Refused as the CPU refuses a pair it does not run (docs/operators.md, CAST).
    if (!cast_pair(from, to))
        return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_OPERATOR,
                              static_cast<std::uint64_t>(Op::cast), static_cast<std::uint64_t>(to))
                        .with_note(fmt::format("operator {} of the block: the device has "
                                               "no CAST from {} to {} (TOSA 1.0 defines no such "
                                               "pair, or docs/operators.md lists it as CPU "
                                               "only); run the program on the cpu device",
                                               view.op_index, tosa::dtype_name(from),
                                               tosa::dtype_name(to))));
    if (tensor(view, in).element_count() != tensor(view, out).element_count())
        return fail(dtype_refusal(view, from));
    auto src = operand(view, in);
    auto dst = operand(view, out);
    if (!src) return fail(src.error());
    if (!dst) return fail(dst.error());
    ElementSpec spec;
    spec.op = ElementOp::cast;
    spec.dtypes = {to, from, DType::fp32, DType::fp32};
    spec.dims[5] = static_cast<std::int64_t>(tensor(view, out).element_count());
    spec.operands[0] = {*dst, 0, {0, 0, 0, 0, 0, 1}};
    spec.operands[1] = {*src, 0, {0, 0, 0, 0, 0, 1}};
    return std::vector{request(spec.kernel(), {in}, out)};
}

// REDUCE_* and ARGMAX: [outer, axis, inner] around the attribute's axis.
Result<std::vector<tosa::DispatchRequest>> lower_reduce(const tosa::OperatorView& view,
                                                        std::uint32_t code)
{
    const std::uint32_t in = view.inputs[0], out = view.outputs[0];
    const tosa::Tensor& source = tensor(view, in);
    const bool argmax = view.op->op == Op::argmax;
    // ARGMAX reads every float dtype; the reductions keep FP32, FP16, BF16.
    if (argmax ? !pool_dtype(source.dtype) : !arithmetic_dtype(source.dtype))
        return fail(dtype_refusal(view, source.dtype));
    const DType want = argmax ? DType::int32 : source.dtype;
    if (tensor(view, out).dtype != want) return fail(dtype_refusal(view, tensor(view, out).dtype));
    auto src = operand(view, in);
    auto dst = operand(view, out);
    if (!src) return fail(src.error());
    if (!dst) return fail(dst.error());
    const auto axis = static_cast<std::size_t>(view.op->attributes.axis);
    std::uint64_t outer = 1, inner = 1;
    for (std::size_t d = 0; d < axis; ++d) outer *= static_cast<std::uint64_t>(source.shape[d]);
    for (std::size_t d = axis + 1; d < source.shape.size(); ++d)
        inner *= static_cast<std::uint64_t>(source.shape[d]);
    tosa::KernelSpec spec;
    spec.kernel = static_cast<std::uint32_t>(needs_narrow_storage(source.dtype)
                                                 ? KernelId::reduce_narrow
                                                 : KernelId::reduce);
    spec.spec = {code,
                 static_cast<std::uint32_t>(outer),
                 static_cast<std::uint32_t>(source.shape[axis]),
                 static_cast<std::uint32_t>(inner),
                 dst->buffer, dst->base, src->buffer, src->base,
                 *kernel_dtype(source.dtype), *kernel_dtype(want), ignores_nan(view) ? 1u : 0u};
    // A long axis over few results (a transformer's row reductions: 128
    // rows of 768) leaves most of a GPU idle at one thread per result, each
    // walking the axis alone; a team of 32 per result reads it together.
    const auto length = static_cast<std::uint64_t>(source.shape[axis]);
    const bool teams = length >= reduce_team_min_axis && outer * inner <= reduce_team_max_results;
    spec.spec.push_back(teams ? reduce_team_size : 0u);
    // An empty axis has no first element to start from: nothing to read.
    spec.work = length == 0 ? 0 : outer * inner * (teams ? reduce_team_size : 1u);
    return std::vector{request(std::move(spec), {in}, out)};
}

Result<std::vector<tosa::DispatchRequest>> lower_max_pool(const tosa::OperatorView& view)
{
    const std::uint32_t in = view.inputs[0], out = view.outputs[0];
    const DType dtype = tensor(view, in).dtype;
    if (!pool_dtype(dtype)) return fail(dtype_refusal(view, dtype));
    if (tensor(view, out).dtype != dtype) return fail(dtype_refusal(view, tensor(view, out).dtype));
    const auto& attr = view.op->attributes;
    if (attr.kernel.size() != 2 || attr.stride.size() != 2 || attr.pad.size() != 4)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_TOSA_GRAPH,
                              VACCEL_TOSA_BAD_ATTRIBUTE, static_cast<std::uint64_t>(Op::max_pool2d))
                        .with_note(fmt::format("operator {}: MAX_POOL2D needs a 2-entry kernel "
                                               "and stride and a 4-entry pad",
                                               view.op_index)));
    const auto& is = tensor(view, in).shape;
    const auto& os = tensor(view, out).shape;
    // analyze() leaves pools unchecked: the kernel indexes by these, so
    // every relation it relies on is checked here.
    bool fits = is.size() == 4 && os.size() == 4 && os[0] == is[0] && os[3] == is[3];
    for (std::size_t i = 0; fits && i < 2; ++i) {
        const std::int64_t k = attr.kernel[i], s = attr.stride[i];
        const std::int64_t before = attr.pad[2 * i], after = attr.pad[2 * i + 1];
        // Every window holds a real element: padding smaller than the kernel.
        fits = k >= 1 && s >= 1 && before >= 0 && after >= 0 && before < k && after < k &&
               is[1 + i] + before + after >= k &&
               os[1 + i] == (is[1 + i] + before + after - k) / s + 1;
    }
    if (!fits)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_BAD_SHAPE,
                              static_cast<std::uint64_t>(Op::max_pool2d))
                        .with_note(fmt::format("operator {}: MAX_POOL2D's NHWC input, kernel, "
                                               "stride, pad and output shape do not agree "
                                               "(output = (input + pads - kernel) / stride + 1, "
                                               "pads below the kernel)",
                                               view.op_index)));
    auto src = operand(view, in);
    auto dst = operand(view, out);
    if (!src) return fail(src.error());
    if (!dst) return fail(dst.error());
    auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    tosa::KernelSpec spec;
    spec.kernel = static_cast<std::uint32_t>(needs_narrow_storage(dtype) ? KernelId::max_pool2d_narrow
                                                                         : KernelId::max_pool2d);
    spec.spec = {u(is[0]), u(is[1]), u(is[2]), u(is[3]), u(os[1]), u(os[2]),
                 u(attr.kernel[0]), u(attr.kernel[1]), u(attr.stride[0]), u(attr.stride[1]),
                 u(attr.pad[0]), u(attr.pad[2]), dst->buffer, dst->base, src->buffer, src->base,
                 *kernel_dtype(dtype), ignores_nan(view) ? 1u : 0u};
    spec.work = static_cast<std::uint64_t>(os[0] * os[1] * os[2] * os[3]);
    return std::vector{request(std::move(spec), {in}, out)};
}

}  // namespace

std::optional<std::uint32_t> element_code(Op op)
{
    const auto e = element_op(op);
    if (!e) return std::nullopt;
    return static_cast<std::uint32_t>(*e);
}

Result<tosa::DispatchRequest> epilogue_pass(const tosa::OperatorView& view,
                                            const Epilogue& epilogue)
{
    // The chain's result: where every result of the chain lives. The first
    // stage is the pass's own operation (the elementwise kernel's
    // specialised loop, as its unfused dispatch would run), the rest its
    // epilogue; the result is seen as [count / ROW, ROW] so a row operand
    // is a stride.
    const std::uint32_t out = view.outputs[0];
    const DType dtype = tensor(view, out).dtype;
    auto where = operand(view, out);
    if (!where) return fail(where.error());
    const EpilogueStage& first = epilogue.stages.front();
    const auto count = static_cast<std::int64_t>(tensor(view, out).element_count());
    const std::int64_t row = epilogue.row;
    ElementSpec spec;
    spec.op = static_cast<ElementOp>(first.op);
    spec.dtypes = {dtype, dtype, dtype, DType::fp32};
    spec.dims[4] = count / row;
    spec.dims[5] = row;
    spec.nan_ignore = first.nan_ignore;
    spec.p0 = first.p0;
    spec.p1 = first.p1;
    const ElementSpec::Access result{*where, 0, {0, 0, 0, 0, row, 1}};
    spec.operands[0] = result;
    if (first.form == EpilogueForm::none) {
        spec.operands[1] = result;
    } else {
        ElementSpec::Access other{first.operand, 0, {0, 0, 0, 0, 0, 0}};
        if (first.form == EpilogueForm::same) other.strides = result.strides;
        if (first.form == EpilogueForm::row) other.strides[5] = 1;
        spec.operands[1] = first.operand_first ? other : result;
        spec.operands[2] = first.operand_first ? result : other;
    }
    spec.epilogue.row = epilogue.row;
    spec.epilogue.stages.assign(epilogue.stages.begin() + 1, epilogue.stages.end());
    // Reads and writes the result in place; the plan adds the stages' operands.
    return request(spec.kernel(), {out}, out);
}

namespace {

Result<std::vector<tosa::DispatchRequest>> lower_operator(const tosa::OperatorView& view,
                                                          const tosa::Lowerer& matmul,
                                                          const ConvGemmLowerer& conv_gemm,
                                                          const Epilogue& epilogue, bool& applied)
{
    const Op op = view.op->op;
    if (auto element = element_op(op)) return lower_elementwise(view, *element, epilogue, applied);
    switch (op) {
    case Op::identity:
    case Op::reshape: return lower_copy(view);
    case Op::transpose:
    case Op::reverse: return lower_transpose_or_reverse(view);
    case Op::concat: return lower_concat(view);
    case Op::cast: return lower_cast(view);
    case Op::reduce_sum: return lower_reduce(view, 0);
    case Op::reduce_max: return lower_reduce(view, 1);
    case Op::reduce_min: return lower_reduce(view, 2);
    case Op::reduce_product: return lower_reduce(view, 3);
    case Op::argmax: return lower_reduce(view, 4);
    case Op::matmul: return matmul(view);
    case Op::max_pool2d: return lower_max_pool(view);
    default: break;
    }
    if (auto spatial = lower_spatial(view, conv_gemm, epilogue, applied))
        return std::move(*spatial);
    return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_OPERATOR, static_cast<std::uint64_t>(op))
                    .with_note(fmt::format("operator {} ({}) has no kernel on this device; run the "
                                           "program on the cpu device",
                                           view.op_index, static_cast<unsigned>(op))));
}

}  // namespace

Result<std::vector<tosa::DispatchRequest>> lower(const tosa::OperatorView& view,
                                                 const tosa::Lowerer& matmul,
                                                 const ConvGemmLowerer& conv_gemm)
{
    Epilogue epilogue;
    if (!view.epilogue.empty()) {
        auto stages = epilogue_of(view);
        if (!stages) return fail(stages.error());
        epilogue = std::move(*stages);
    }
    bool applied = false;
    auto requests = lower_operator(view, matmul, conv_gemm, epilogue, applied);
    if (!requests || epilogue.empty() || applied) return requests;
    auto pass = epilogue_pass(view, epilogue);
    if (!pass) return fail(pass.error());
    requests->push_back(std::move(*pass));
    return requests;
}

tosa::CapabilityDescriptor gpu_descriptor(StorageFeatures features)
{
    tosa::CapabilityDescriptor descriptor = with_storage(gpu_descriptor(), features);
    if (features.narrow()) add_narrow_spatial_dtypes(descriptor);
    return descriptor;
}

tosa::CapabilityDescriptor gpu_descriptor()
{
    // Every FP32-tier operator is lowered above (CONST and CONST_SHAPE only
    // carry data); the filter keeps the descriptor honest if the tier grows.
    tosa::CapabilityDescriptor tier = tosa::fp32_tier();
    std::erase_if(tier.operators, [](const tosa::OperatorCapability& c) {
        switch (c.op) {
        case Op::const_:
        case Op::const_shape:
        case Op::identity:
        case Op::reshape:
        case Op::transpose:
        case Op::reverse:
        case Op::concat:
        case Op::cast:
        case Op::reduce_sum:
        case Op::reduce_max:
        case Op::reduce_min:
        case Op::reduce_product:
        case Op::argmax:
        case Op::matmul:
        case Op::max_pool2d: return false;
        default: return !element_op(c.op).has_value();
        }
    });
    add_spatial_operators(tier);
    // FP16 for MATMUL only (each backend's MATMUL reads it without the
    // 16-bit storage feature, so every device runs it); the lowerer
    // refuses FP16 on the other operators at load.
    tier.dtypes.push_back({DType::fp16, tosa::all_roles, false});
    for (tosa::OperatorCapability& c : tier.operators)
        if (c.op == Op::matmul) c.dtypes = {DType::fp32, DType::fp16};
    return tier;
}

}  // namespace vaccel::backend::gpu
