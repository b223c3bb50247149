// lowering_spatial.cpp - CONV2D, DEPTHWISE_CONV2D, AVG_POOL2D, RESIZE,
// GATHER, PAD, SLICE and TILE to GPU kernel dispatches
// (lowering_spatial.hpp says what is decided here and why).
#include "vaccel/gpu/lowering_spatial.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "vaccel/gpu/lowering.hpp"
#include "vaccel/gpu/lowering_operands.hpp"

namespace vaccel::backend::gpu {
namespace {

using tosa::DType;
using tosa::Op;

using Requests = std::vector<tosa::DispatchRequest>;

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }

std::string shape_text(const std::vector<std::int64_t>& shape)
{
    return fmt::format("[{}]", fmt::join(shape, ","));
}

Error bad(const tosa::OperatorView& view, std::uint32_t reason, std::string why)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_TOSA_GRAPH, reason,
                     static_cast<std::uint64_t>(view.op->op))
        .with_note(fmt::format("operator {} ({}): {}", view.op_index,
                               tosa::op_name(view.op->op), why));
}
Error bad_shape(const tosa::OperatorView& view, std::string why)
{
    return bad(view, VACCEL_TOSA_BAD_SHAPE, std::move(why));
}
Error bad_attribute(const tosa::OperatorView& view, std::string why)
{
    return bad(view, VACCEL_TOSA_BAD_ATTRIBUTE, std::move(why));
}

// Every tensor listed has dtype `want`, else the dtype refusal.
Status expect_dtype(const tosa::OperatorView& view, std::initializer_list<std::uint32_t> tensors,
                    DType want)
{
    for (std::uint32_t t : tensors)
        if (tensor(view, t).dtype != want) return fail(dtype_refusal(view, tensor(view, t).dtype));
    return {};
}

// The values of SHAPE operand `position` (a serialized constant, which the
// descriptor's constant_parameters makes admission require), `count` of them.
Result<std::vector<std::int64_t>> shape_operand(const tosa::OperatorView& view,
                                                std::size_t position, const char* what,
                                                std::size_t count)
{
    const tosa::Tensor& t = view.block->tensors[view.op->inputs[position]];
    if (t.element_count() != count || t.data.size() != count * 8)
        return fail(bad_attribute(view, fmt::format("{} '{}' must be a constant of {} "
                                                    "values, is {}",
                                                    what, t.name, count, shape_text(t.shape))));
    std::vector<std::int64_t> values(count);
    if (count != 0) std::memcpy(values.data(), t.data.data(), count * 8);
    return values;
}

// TOSA 1.0 divides the padded extent by the stride exactly (as the CPU device).
Result<std::int64_t> strided_extent(const tosa::OperatorView& view, const char* axis,
                                    std::int64_t span, std::int64_t stride)
{
    if (span < 0)
        return fail(bad_shape(view, fmt::format("along the {} the kernel is larger than the "
                                                "padded input",
                                                axis)));
    if (span % stride != 0)
        return fail(bad_attribute(view, fmt::format("along the {} the padded input less the "
                                                    "kernel extent is {}, not a multiple of the "
                                                    "stride {}; TOSA 1.0 requires an exact "
                                                    "division: change the padding",
                                                    axis, span, stride)));
    return span / stride + 1;
}

Status expect_output(const tosa::OperatorView& view, const std::vector<std::int64_t>& inferred)
{
    const tosa::Tensor& out = tensor(view, view.outputs[0]);
    if (out.shape != inferred)
        return fail(bad_shape(view, fmt::format("output '{}' is {}; the operands give {}",
                                                out.name, shape_text(out.shape),
                                                shape_text(inferred))));
    return {};
}

// acc_type as TOSA 1.0 allows it for `data` (the CPU device's rules): FP32
// for FP32 data (CONV2D with FP32 data runs whatever it says, as on the
// CPU device), FP16 or FP32 for FP16, FP32 for BF16. The kernels always
// accumulate in FP32, which FP16 accumulation allows.
Status expect_accumulator(const tosa::OperatorView& view, DType data)
{
    const DType acc = view.op->attributes.acc_type;
    if (data == DType::fp32 && view.op->op == Op::conv2d) return {};
    if (acc == DType::fp32 || (acc == DType::fp16 && data == DType::fp16)) return {};
    return fail(bad_attribute(view, fmt::format("acc_type is {}; TOSA 1.0 allows {} for {} data",
                                                tosa::dtype_name(acc),
                                                data == DType::fp16 ? "FP16 or FP32"
                                                                    : "only FP32",
                                                tosa::dtype_name(data))));
}

// The kernels' DT_* code of an element dtype the lowering already checked.
std::uint32_t dt_code(DType dtype) { return kernel_dtype(dtype).value_or(0); }

tosa::DispatchRequest request(KernelId kernel, std::vector<std::uint32_t> spec,
                              std::uint64_t work, std::vector<std::uint32_t> reads,
                              std::uint32_t write)
{
    tosa::KernelSpec k;
    k.kernel = static_cast<std::uint32_t>(kernel);
    k.spec = std::move(spec);
    k.work = work;
    return tosa::DispatchRequest{std::move(k), std::move(reads), {write}};
}

// ----- CONV2D, DEPTHWISE_CONV2D -------------------------------------------------

Result<Requests> lower_conv(const tosa::OperatorView& view, const ConvGemmLowerer& conv_gemm,
                            const Epilogue& epilogue, bool& applied)
{
    const bool depthwise = view.op->op == Op::depthwise_conv2d;
    // The data operands: input, weight, bias (zero points are compile-time).
    if (view.inputs.size() != 3)
        return fail(bad_attribute(view, "the zero points must be serialized constants"));
    const std::uint32_t in = view.inputs[0], w = view.inputs[1], b = view.inputs[2];
    const std::uint32_t out = view.outputs[0];
    // Input, weight, bias and result share one float dtype (lowering_storage.hpp).
    const DType dtype = tensor(view, in).dtype;
    if (!arithmetic_dtype(dtype)) return fail(dtype_refusal(view, dtype));
    if (auto ok = expect_dtype(view, {w, b, out}, dtype); !ok) return fail(ok.error());
    if (auto ok = expect_accumulator(view, dtype); !ok) return fail(ok.error());
    const auto& input = tensor(view, in).shape;
    const auto& weight = tensor(view, w).shape;
    const auto& bias = tensor(view, b).shape;
    const auto& a = view.op->attributes;
    // CONV2D weight [OC,KH,KW,C]; DEPTHWISE_CONV2D weight [KH,KW,C,M].
    const bool ranks = input.size() == 4 && weight.size() == 4;
    if (!ranks || (depthwise ? weight[2] != input[3] : weight[3] != input[3]))
        return fail(bad_shape(view, fmt::format("input {} and weight {} are not [N,H,W,C] and {}",
                                                shape_text(input), shape_text(weight),
                                                depthwise ? "[KH,KW,C,M]" : "[OC,KH,KW,C]")));
    const std::int64_t oc = depthwise ? weight[2] * weight[3] : weight[0];
    const std::int64_t kh = depthwise ? weight[0] : weight[1];
    const std::int64_t kw = depthwise ? weight[1] : weight[2];
    if (bias.size() != 1 || (bias[0] != oc && bias[0] != 1))
        return fail(bad_shape(view, fmt::format("bias {} must be [{}] or [1]", shape_text(bias),
                                                oc)));
    if (a.pad.size() != 4 || a.stride.size() != 2 || a.dilation.size() != 2)
        return fail(bad_attribute(view, "pad needs 4 values, stride and dilation 2 each"));
    if (std::ranges::any_of(a.pad, [](std::int32_t v) { return v < 0; }) ||
        std::ranges::any_of(a.stride, [](std::int32_t v) { return v < 1; }) ||
        std::ranges::any_of(a.dilation, [](std::int32_t v) { return v < 1; }))
        return fail(bad_attribute(view, "pad must be >= 0, stride and dilation >= 1"));
    auto oh = strided_extent(view, "height",
                             input[1] - 1 + a.pad[0] + a.pad[1] - (kh - 1) * a.dilation[0],
                             a.stride[0]);
    if (!oh) return fail(oh.error());
    auto ow = strided_extent(view, "width",
                             input[2] - 1 + a.pad[2] + a.pad[3] - (kw - 1) * a.dilation[1],
                             a.stride[1]);
    if (!ow) return fail(ow.error());
    if (auto ok = expect_output(view, {input[0], *oh, *ow, oc}); !ok) return fail(ok.error());
    auto pi = operand(view, in);
    auto pw = operand(view, w);
    auto pb = operand(view, b);
    auto po = operand(view, out);
    for (const auto* p : {&pi, &pw, &pb, &po})
        if (!*p) return fail(p->error());
    if (!depthwise && conv_gemm) {
        ConvGemm g;
        g.n = u32(input[0]), g.ih = u32(input[1]), g.iw = u32(input[2]), g.ic = u32(input[3]);
        g.oh = u32(*oh), g.ow = u32(*ow), g.oc = u32(oc), g.kh = u32(kh), g.kw = u32(kw);
        g.stride_y = u32(a.stride[0]), g.stride_x = u32(a.stride[1]);
        g.dilation_y = u32(a.dilation[0]), g.dilation_x = u32(a.dilation[1]);
        g.pad_top = u32(a.pad[0]), g.pad_left = u32(a.pad[2]);
        g.bias_per_channel = bias[0] == oc;
        g.out = *po, g.in = *pi, g.weight = *pw, g.bias = *pb;
        g.dtype = tensor(view, in).dtype;
        g.epilogue = &epilogue;
        if (auto k = conv_gemm(view, g)) {
            applied = k->applies_epilogue;
            return Requests{tosa::DispatchRequest{std::move(k->kernel), {in, w, b}, {out}}};
        }
    }
    const std::int64_t multiplier = depthwise ? std::max<std::int64_t>(weight[3], 1) : 1;
    std::vector<std::uint32_t> spec{
        depthwise ? 1u : 0u, u32(input[0]), u32(input[1]), u32(input[2]), u32(input[3]),
        u32(*oh), u32(*ow), u32(oc), u32(kh), u32(kw),
        u32(a.stride[0]), u32(a.stride[1]), u32(a.dilation[0]), u32(a.dilation[1]),
        u32(a.pad[0]), u32(a.pad[2]), u32(multiplier), bias[0] == oc ? 1u : 0u,
        po->buffer, po->base, pi->buffer, pi->base, pw->buffer, pw->base, pb->buffer, pb->base,
        dt_code(dtype)};
    const auto work = static_cast<std::uint64_t>(input[0] * *oh * *ow * oc);
    return Requests{request(KernelId::conv2d, std::move(spec), work, {in, w, b}, out)};
}

// ----- AVG_POOL2D ---------------------------------------------------------------

Result<Requests> lower_avg_pool(const tosa::OperatorView& view)
{
    const std::uint32_t in = view.inputs[0], out = view.outputs[0];
    const DType dtype = tensor(view, in).dtype;
    if (!arithmetic_dtype(dtype)) return fail(dtype_refusal(view, dtype));
    if (auto ok = expect_dtype(view, {out}, dtype); !ok) return fail(ok.error());
    const auto& input = tensor(view, in).shape;
    const auto& a = view.op->attributes;
    if (input.size() != 4)
        return fail(bad_shape(view, fmt::format("input {} is not [N,H,W,C]", shape_text(input))));
    // Without rows or columns every window would be padding only.
    if (input[1] < 1 || input[2] < 1)
        return fail(bad_shape(view, fmt::format("input {} has no rows or no columns to pool",
                                                shape_text(input))));
    if (a.kernel.size() != 2 || a.stride.size() != 2 || a.pad.size() != 4)
        return fail(bad_attribute(view, "kernel and stride need 2 values each, pad 4"));
    if (std::ranges::any_of(a.kernel, [](std::int32_t v) { return v < 1; }) ||
        std::ranges::any_of(a.stride, [](std::int32_t v) { return v < 1; }) ||
        std::ranges::any_of(a.pad, [](std::int32_t v) { return v < 0; }))
        return fail(bad_attribute(view, "kernel and stride must be >= 1, pad >= 0"));
    // A pad as large as the kernel would make a window of padding only,
    // whose count (the divisor) is zero.
    if (a.pad[0] >= a.kernel[0] || a.pad[1] >= a.kernel[0] || a.pad[2] >= a.kernel[1] ||
        a.pad[3] >= a.kernel[1])
        return fail(bad_attribute(view, fmt::format("pad [{}] must be below the kernel [{}]",
                                                    fmt::join(a.pad, ","),
                                                    fmt::join(a.kernel, ","))));
    if (auto ok = expect_accumulator(view, dtype); !ok) return fail(ok.error());
    auto oh = strided_extent(view, "height", input[1] + a.pad[0] + a.pad[1] - a.kernel[0],
                             a.stride[0]);
    if (!oh) return fail(oh.error());
    auto ow = strided_extent(view, "width", input[2] + a.pad[2] + a.pad[3] - a.kernel[1],
                             a.stride[1]);
    if (!ow) return fail(ow.error());
    if (auto ok = expect_output(view, {input[0], *oh, *ow, input[3]}); !ok)
        return fail(ok.error());
    auto src = operand(view, in);
    auto dst = operand(view, out);
    if (!src) return fail(src.error());
    if (!dst) return fail(dst.error());
    std::vector<std::uint32_t> spec{
        u32(input[0]), u32(input[1]), u32(input[2]), u32(input[3]), u32(*oh), u32(*ow),
        u32(a.kernel[0]), u32(a.kernel[1]), u32(a.stride[0]), u32(a.stride[1]),
        u32(a.pad[0]), u32(a.pad[2]), dst->buffer, dst->base, src->buffer, src->base,
        dt_code(dtype)};
    const auto work = static_cast<std::uint64_t>(input[0] * *oh * *ow * input[3]);
    return Requests{request(KernelId::avg_pool2d, std::move(spec), work, {in}, out)};
}

// ----- RESIZE ---------------------------------------------------------------------

// The CPU device's checks (TOSA 1.0's ERROR_IF limits, in its order).
Result<Requests> lower_resize(const tosa::OperatorView& view)
{
    const std::uint32_t in = view.inputs[0], out = view.outputs[0];
    if (auto ok = expect_dtype(view, {in, out}, DType::fp32); !ok) return fail(ok.error());
    const auto& input = tensor(view, in).shape;
    const auto& output = tensor(view, out).shape;
    if (input.size() != 4 || output.size() != 4)
        return fail(bad_shape(view, fmt::format("input {} and output {} must be [N,H,W,C]",
                                                shape_text(input), shape_text(output))));
    if (input[1] < 1 || input[2] < 1)
        return fail(bad_shape(view, fmt::format("input {} has no rows or columns to sample",
                                                shape_text(input))));
    const std::uint32_t mode = view.op->attributes.resize_mode;
    if (mode != 1 && mode != 2)  // ResizeMode (tosa.fbs): NEAREST 1, BILINEAR 2
        return fail(bad_attribute(view, fmt::format("mode {} is neither NEAREST_NEIGHBOR (1) "
                                                    "nor BILINEAR (2)",
                                                    mode)));
    auto scale = shape_operand(view, 1, "scale", 4);
    if (!scale) return fail(scale.error());
    auto offset = shape_operand(view, 2, "offset", 2);
    if (!offset) return fail(offset.error());
    auto border = shape_operand(view, 3, "border", 2);
    if (!border) return fail(border.error());
    const std::int64_t syn = (*scale)[0], syd = (*scale)[1], sxn = (*scale)[2], sxd = (*scale)[3];
    const std::int64_t oy = (*offset)[0], ox = (*offset)[1], by = (*border)[0], bx = (*border)[1];
    const std::string given = fmt::format("scale {}, offset {}, border {}", shape_text(*scale),
                                          shape_text(*offset), shape_text(*border));
    const auto limit = [&](bool violated, const char* rule) -> Status {
        if (violated)
            return fail(bad_attribute(view, fmt::format("{}: TOSA 1.0 requires {}", given, rule)));
        return {};
    };
    for (const Status& ok :
         {limit(syn <= 0 || syd <= 0 || sxn <= 0 || sxd <= 0, "every scale value > 0"),
          limit(syn > 2048 || sxn > 2048, "scale_y_n, scale_x_n <= 2048"),
          limit(syd >= 16 * syn || sxd >= 16 * sxn,
                "scale_d < 16 * scale_n (at most a 1/16 downscale)"),
          limit(oy < -syn || oy >= 16 * syn || ox < -sxn || ox >= 16 * sxn,
                "-scale_n <= offset < 16 * scale_n"),
          limit(by < -16 * syn || by >= syn || bx < -16 * sxn || bx >= sxn,
                "-16 * scale_n <= border < scale_n")})
        if (!ok) return fail(ok.error());
    if (std::max({input[1], input[2], output[1], output[2]}) >= 16384)
        return fail(bad_shape(view, fmt::format("input {} or output {} has a height or width "
                                                "of 16384 or more; TOSA 1.0 allows less",
                                                shape_text(input), shape_text(output))));
    const std::int64_t span_y = (input[1] - 1) * syn - oy + by;
    const std::int64_t span_x = (input[2] - 1) * sxn - ox + bx;
    if (auto ok = limit(span_y % syd != 0 || span_x % sxd != 0,
                        "(IH - 1) * scale_y_n - offset_y + border_y to be a multiple of "
                        "scale_y_d, and likewise along x");
        !ok)
        return fail(ok.error());
    const std::int64_t oh = span_y / syd + 1, ow = span_x / sxd + 1;
    if (oh < 1 || ow < 1)
        return fail(bad_attribute(view, fmt::format("{} give an output of {} x {} for input {}",
                                                    given, oh, ow, shape_text(input))));
    if (auto ok = expect_output(view, {input[0], oh, ow, input[3]}); !ok) return fail(ok.error());
    auto src = operand(view, in);
    auto dst = operand(view, out);
    if (!src) return fail(src.error());
    if (!dst) return fail(dst.error());
    // Within these limits (OH < 16384, scale_d < 32768, |offset| < 32768)
    // y = oy * scale_d + offset stays inside the kernel's 32-bit int.
    std::vector<std::uint32_t> spec{
        mode == 2 ? 1u : 0u, u32(input[0]), u32(input[1]), u32(input[2]), u32(input[3]),
        u32(oh), u32(ow), u32(syn), u32(syd), u32(sxn), u32(sxd), u32(oy), u32(ox),
        dst->buffer, dst->base, src->buffer, src->base};
    const auto work = static_cast<std::uint64_t>(input[0] * oh * ow * input[3]);
    return Requests{request(KernelId::resize, std::move(spec), work, {in}, out)};
}

// ----- GATHER -----------------------------------------------------------------------

Result<Requests> lower_gather(const tosa::OperatorView& view)
{
    const std::uint32_t values = view.inputs[0], indices = view.inputs[1];
    const std::uint32_t out = view.outputs[0];
    const DType dtype = tensor(view, out).dtype;
    if (dtype != DType::fp32 && dtype != DType::int32) return fail(dtype_refusal(view, dtype));
    if (auto ok = expect_dtype(view, {values}, dtype); !ok) return fail(ok.error());
    if (auto ok = expect_dtype(view, {indices}, DType::int32); !ok) return fail(ok.error());
    const auto& vs = tensor(view, values).shape;
    const auto& is = tensor(view, indices).shape;
    if (vs.size() != 3 || is.size() != 2 || vs[0] != is[0])
        return fail(bad_shape(view, fmt::format("values {} and indices {} are not [N,K,C] and "
                                                "[N,W]",
                                                shape_text(vs), shape_text(is))));
    if (auto ok = expect_output(view, {vs[0], is[1], vs[2]}); !ok) return fail(ok.error());
    auto pv = operand(view, values);
    auto pi = operand(view, indices);
    auto po = operand(view, out);
    for (const auto* p : {&pv, &pi, &po})
        if (!*p) return fail(p->error());
    std::vector<std::uint32_t> spec{u32(vs[0]), u32(vs[1]), u32(is[1]), u32(vs[2]),
                                    po->buffer, po->base, pv->buffer, pv->base,
                                    pi->buffer, pi->base};
    const auto work = static_cast<std::uint64_t>(vs[0] * is[1] * vs[2]);
    return Requests{request(KernelId::gather, std::move(spec), work, {values, indices}, out)};
}

// ----- PAD, SLICE, TILE ---------------------------------------------------------------

constexpr std::size_t rank6 = 6;

// One pad_tile dispatch: the result has `result` shape; its source along
// dimension d is c - before[d] (PAD, SLICE) or c mod the input's (TILE).
Result<Requests> pad_tile(const tosa::OperatorView& view, bool tile,
                          const std::vector<std::int64_t>& before, std::uint32_t fill)
{
    const std::uint32_t in = view.inputs[0], out = view.outputs[0];
    const auto& input = tensor(view, in).shape;
    const auto& result = tensor(view, out).shape;
    if (result.size() > rank6)
        return fail(bad_shape(view, fmt::format("rank {} is above the 6 dimensions the GPU "
                                                "kernels index",
                                                result.size())));
    auto src = operand(view, in);
    auto dst = operand(view, out);
    if (!src) return fail(src.error());
    if (!dst) return fail(dst.error());
    // Leading dimensions of size 1 (PAD and SLICE: nothing before them).
    const std::size_t lead = rank6 - result.size();
    std::array<std::uint32_t, rank6> dims{1, 1, 1, 1, 1, 1}, in_dims{1, 1, 1, 1, 1, 1};
    std::array<std::uint32_t, rank6> shift{};
    std::uint64_t work = 1;
    for (std::size_t d = 0; d < result.size(); ++d) {
        dims[lead + d] = u32(result[d]);
        in_dims[lead + d] = u32(input[d]);
        shift[lead + d] = tile ? 0u : static_cast<std::uint32_t>(static_cast<std::int32_t>(before[d]));
        work *= static_cast<std::uint64_t>(result[d]);
    }
    std::vector<std::uint32_t> spec{tile ? 1u : 0u, dt_code(tensor(view, out).dtype)};
    spec.insert(spec.end(), dims.begin(), dims.end());
    spec.insert(spec.end(), in_dims.begin(), in_dims.end());
    spec.insert(spec.end(), shift.begin(), shift.end());
    spec.insert(spec.end(), {fill, dst->buffer, dst->base, src->buffer, src->base});
    return Requests{request(KernelId::pad_tile, std::move(spec), work, {in}, out)};
}

// The copies' dtypes (lowering_storage.hpp's copy_dtype), the same in and out.
Status expect_copy_dtype(const tosa::OperatorView& view)
{
    const DType dtype = tensor(view, view.outputs[0]).dtype;
    if (!copy_dtype(dtype)) return fail(dtype_refusal(view, dtype));
    return expect_dtype(view, {view.inputs[0]}, dtype);
}

Result<Requests> lower_slice(const tosa::OperatorView& view)
{
    if (auto ok = expect_copy_dtype(view); !ok) return fail(ok.error());
    const auto& shape = tensor(view, view.inputs[0]).shape;
    auto start = shape_operand(view, 1, "start", shape.size());
    if (!start) return fail(start.error());
    auto size = shape_operand(view, 2, "size", shape.size());
    if (!size) return fail(size.error());
    for (std::size_t d = 0; d < shape.size(); ++d)
        if ((*start)[d] < 0 || (*size)[d] < 1 || (*start)[d] > shape[d] - (*size)[d])
            return fail(bad_attribute(view, fmt::format("start {} and size {} do not lie within "
                                                        "the input {} (dimension {})",
                                                        shape_text(*start), shape_text(*size),
                                                        shape_text(shape), d)));
    if (auto ok = expect_output(view, *size); !ok) return fail(ok.error());
    std::vector<std::int64_t> before(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) before[d] = -(*start)[d];
    return pad_tile(view, false, before, 0);
}

Result<Requests> lower_pad(const tosa::OperatorView& view)
{
    if (auto ok = expect_copy_dtype(view); !ok) return fail(ok.error());
    const auto& shape = tensor(view, view.inputs[0]).shape;
    auto padding = shape_operand(view, 1, "padding", shape.size() * 2);
    if (!padding) return fail(padding.error());
    if (std::ranges::any_of(*padding, [](std::int64_t v) { return v < 0; }))
        return fail(bad_attribute(view, fmt::format("padding {} must be >= 0",
                                                    shape_text(*padding))));
    // pad_const: a compile-time [1] of the result's dtype, so not a data input.
    const tosa::Tensor& value = view.block->tensors[view.op->inputs[2]];
    const DType dtype = tensor(view, view.outputs[0]).dtype;
    if (view.inputs.size() != 1 || value.dtype != dtype || value.shape.size() != 1 ||
        value.element_count() != 1 || value.data.size() != element_bytes(dtype))
        return fail(bad_attribute(view, fmt::format("pad_const '{}' must be a constant of shape "
                                                    "[1] and the input's dtype, is {}",
                                                    value.name, shape_text(value.shape))));
    std::uint32_t fill = 0;
    std::memcpy(&fill, value.data.data(), value.data.size());
    std::vector<std::int64_t> before(shape.size()), result(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) {
        before[d] = (*padding)[2 * d];
        result[d] = shape[d] + (*padding)[2 * d] + (*padding)[2 * d + 1];
    }
    if (auto ok = expect_output(view, result); !ok) return fail(ok.error());
    return pad_tile(view, false, before, fill);
}

Result<Requests> lower_tile(const tosa::OperatorView& view)
{
    if (auto ok = expect_copy_dtype(view); !ok) return fail(ok.error());
    const auto& shape = tensor(view, view.inputs[0]).shape;
    auto multiples = shape_operand(view, 1, "multiples", shape.size());
    if (!multiples) return fail(multiples.error());
    std::vector<std::int64_t> result(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if ((*multiples)[d] < 1)
            return fail(bad_attribute(view, fmt::format("multiples {} must each be >= 1",
                                                        shape_text(*multiples))));
        result[d] = shape[d] * (*multiples)[d];
    }
    if (auto ok = expect_output(view, result); !ok) return fail(ok.error());
    return pad_tile(view, true, {}, 0);
}

tosa::OperatorCapability capability(Op op, tosa::OperatorConstraint constraint,
                                    std::vector<DType> dtypes)
{
    return {op, tosa::constraint_bit(constraint), std::move(dtypes)};
}

}  // namespace

Result<bool> conv_gemm_chosen(const tosa::OperatorView& view, const char* variable)
{
    const char* value = std::getenv(variable);
    const std::string_view v = value != nullptr ? value : "";
    if (v.empty() || v == "gemm") return true;
    if (v == "direct") return false;
    return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, 0,
                          static_cast<std::uint64_t>(view.op->op))
                    .with_note(fmt::format("operator {} of the block: {}=\"{}\" names no "
                                           "CONV2D kernel choice; valid: gemm (the default), "
                                           "direct",
                                           view.op_index, variable, v)));
}

std::optional<Result<Requests>> lower_spatial(const tosa::OperatorView& view,
                                              const ConvGemmLowerer& conv_gemm,
                                              const Epilogue& epilogue, bool& applied)
{
    switch (view.op->op) {
    case Op::conv2d:
    case Op::depthwise_conv2d: return lower_conv(view, conv_gemm, epilogue, applied);
    case Op::avg_pool2d: return lower_avg_pool(view);
    case Op::resize: return lower_resize(view);
    case Op::gather: return lower_gather(view);
    case Op::pad: return lower_pad(view);
    case Op::slice: return lower_slice(view);
    case Op::tile: return lower_tile(view);
    default: return std::nullopt;
    }
}

void add_spatial_operators(tosa::CapabilityDescriptor& descriptor)
{
    using C = tosa::OperatorConstraint;
    // dtypes ascending (DType order). FP16 needs no storage feature here:
    // these kernels load 16-bit elements from words and store them with
    // atomics where the device has no 16-bit views (as MATMUL reads FP16).
    const std::vector<DType> floats{DType::fp32, DType::fp16};
    const std::vector<DType> copies{DType::boolean, DType::int32, DType::fp32, DType::fp16};
    for (auto&& c : {
             capability(Op::conv2d, C::zero_zero_points, floats),
             capability(Op::depthwise_conv2d, C::zero_zero_points, floats),
             capability(Op::avg_pool2d, C::zero_zero_points, floats),
             capability(Op::resize, C::constant_parameters, {DType::fp32}),
             // Values and result FP32 or INT32, indices INT32.
             tosa::OperatorCapability{Op::gather, 0, {DType::int32, DType::fp32}},
             capability(Op::pad, C::constant_parameters, copies),
             capability(Op::slice, C::constant_parameters, copies),
             capability(Op::tile, C::constant_parameters, copies),
         })
        descriptor.operators.push_back(c);
    // GATHER's in-range indices are a REQUIRE condition the kernel does not
    // check (gather.comp: zeros, never an out-of-bounds read); the other
    // operators with run-time conditions are not in the descriptor, or (MUL
    // on INT32) refused at load for their dtype.
    descriptor.graph.runtime_conditions = tosa::RuntimeConditionSupport::advisory_only;
}

void add_narrow_spatial_dtypes(tosa::CapabilityDescriptor& descriptor)
{
    for (tosa::OperatorCapability& c : descriptor.operators) {
        switch (c.op) {
        case Op::conv2d:
        case Op::depthwise_conv2d:
        case Op::avg_pool2d: c.dtypes = {DType::fp32, DType::fp16, DType::bf16}; break;
        case Op::pad:
        case Op::slice:
        case Op::tile:
            c.dtypes = {DType::boolean, DType::int32, DType::fp32, DType::fp16, DType::bf16,
                        DType::fp8e4m3, DType::fp8e5m2};
            break;
        default: break;
        }
    }
}

}  // namespace vaccel::backend::gpu
