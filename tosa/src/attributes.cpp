// attributes.cpp - the attribute union of TOSA 1.0 operators, both ways.
//
// Owns: the mapping between the per-operator attribute tables of the
// flatbuffer (union index = Op value) and the flat Attributes struct.
// Decides:
//  - an operator either carries no table (NONE: `present` false) or the
//    table of its own Op;
//  - one exception, because real producers write it: a table of another
//    operator is accepted when neither that table nor the operator's own has
//    fields (IDENTITY carrying VARIABLE_READ's empty table), since it then
//    carries nothing that could be misread;
//  - nan_mode, rounding and resize modes are kept as raw numbers (checking
//    them is admission's business, not the reader's).
#include <fmt/format.h>

#include "flatbuffer.hpp"

namespace vaccel::tosa::detail {
namespace {

using Ints = flatbuffers::Vector<std::int32_t>;
using Bytes = flatbuffers::Vector<std::uint8_t>;

std::vector<std::int32_t> ints_of(const Ints* vector)
{
    return vector == nullptr ? std::vector<std::int32_t>{}
                             : std::vector<std::int32_t>(vector->begin(), vector->end());
}

std::vector<std::uint8_t> bytes_of(const Bytes* vector)
{
    return vector == nullptr ? std::vector<std::uint8_t>{}
                             : std::vector<std::uint8_t>(vector->begin(), vector->end());
}

std::string text_of(const flatbuffers::String* text)
{
    return text == nullptr ? std::string{} : text->str();
}

// ----- decoding, one function per table layout ----------------------------

template <class Table>
void read_convolution(const Table& t, Attributes& a)  // CONV2D, CONV3D, DEPTHWISE_CONV2D
{
    a.pad = ints_of(t.pad());
    a.stride = ints_of(t.stride());
    a.dilation = ints_of(t.dilation());
    a.local_bound = t.local_bound();
    a.acc_type = static_cast<DType>(t.acc_type());
}

template <class Table>
void read_axis(const Table& t, Attributes& a)  // REDUCE_*, CONCAT, REVERSE
{
    a.axis = t.axis();
}

template <class Table>
void read_axis_nan(const Table& t, Attributes& a)  // ARGMAX, REDUCE_MAX, REDUCE_MIN
{
    a.axis = t.axis();
    a.nan_mode = static_cast<std::uint32_t>(t.nan_mode());
}

template <class Table>
void read_nan(const Table& t, Attributes& a)  // MAXIMUM, MINIMUM
{
    a.nan_mode = static_cast<std::uint32_t>(t.nan_mode());
}

void read_table(const fb::TosaOperator& s, Op op, Attributes& a)
{
    switch (op) {
    case Op::argmax: return read_axis_nan(*s.attribute_as_ArgMaxAttribute(), a);
    case Op::avg_pool2d: {
        const auto& t = *s.attribute_as_AvgPool2dAttribute();
        a.kernel = ints_of(t.kernel());
        a.stride = ints_of(t.stride());
        a.pad = ints_of(t.pad());
        a.acc_type = static_cast<DType>(t.acc_type());
        return;
    }
    case Op::conv2d: return read_convolution(*s.attribute_as_Conv2dAttribute(), a);
    case Op::conv3d: return read_convolution(*s.attribute_as_Conv3dAttribute(), a);
    case Op::depthwise_conv2d:
        return read_convolution(*s.attribute_as_DepthwiseConv2dAttribute(), a);
    case Op::fft2d: {
        const auto& t = *s.attribute_as_FFT2dAttribute();
        a.inverse = t.inverse();
        a.local_bound = t.local_bound();
        return;
    }
    case Op::max_pool2d: {
        const auto& t = *s.attribute_as_MaxPool2dAttribute();
        a.kernel = ints_of(t.kernel());
        a.stride = ints_of(t.stride());
        a.pad = ints_of(t.pad());
        a.nan_mode = static_cast<std::uint32_t>(t.nan_mode());
        return;
    }
    case Op::rfft2d: a.local_bound = s.attribute_as_RFFT2dAttribute()->local_bound(); return;
    case Op::transpose_conv2d: {
        const auto& t = *s.attribute_as_TransposeConv2dAttribute();
        a.out_pad = ints_of(t.out_pad());
        a.stride = ints_of(t.stride());
        a.local_bound = t.local_bound();
        a.acc_type = static_cast<DType>(t.acc_type());
        return;
    }
    case Op::clamp: {
        const auto& t = *s.attribute_as_ClampAttribute();
        a.min_val = bytes_of(t.min_val());
        a.max_val = bytes_of(t.max_val());
        a.nan_mode = static_cast<std::uint32_t>(t.nan_mode());
        return;
    }
    case Op::arithmetic_right_shift:
        a.round = s.attribute_as_ArithmeticRightShiftAttribute()->round();
        return;
    case Op::maximum: return read_nan(*s.attribute_as_MaximumAttribute(), a);
    case Op::minimum: return read_nan(*s.attribute_as_MinimumAttribute(), a);
    case Op::reduce_all: return read_axis(*s.attribute_as_ReduceAllAttribute(), a);
    case Op::reduce_any: return read_axis(*s.attribute_as_ReduceAnyAttribute(), a);
    case Op::reduce_max: return read_axis_nan(*s.attribute_as_ReduceMaxAttribute(), a);
    case Op::reduce_min: return read_axis_nan(*s.attribute_as_ReduceMinAttribute(), a);
    case Op::reduce_product: return read_axis(*s.attribute_as_ReduceProductAttribute(), a);
    case Op::reduce_sum: return read_axis(*s.attribute_as_ReduceSumAttribute(), a);
    case Op::concat: return read_axis(*s.attribute_as_ConcatAttribute(), a);
    case Op::reverse: return read_axis(*s.attribute_as_ReverseAttribute(), a);
    case Op::transpose: a.perms = ints_of(s.attribute_as_TransposeAttribute()->perms()); return;
    case Op::resize:
        a.resize_mode = static_cast<std::uint32_t>(s.attribute_as_ResizeAttribute()->mode());
        return;
    case Op::rescale: {
        const auto& t = *s.attribute_as_RescaleAttribute();
        a.scale32 = t.scale32();
        a.rounding_mode = static_cast<std::uint32_t>(t.rounding_mode());
        a.per_channel = t.per_channel();
        a.input_unsigned = t.input_unsigned();
        a.output_unsigned = t.output_unsigned();
        return;
    }
    case Op::custom: {
        const auto& t = *s.attribute_as_CustomAttribute();
        a.operator_name = text_of(t.operator_name());
        a.domain_name = text_of(t.domain_name());
        a.implementation_attrs = bytes_of(t.implementation_attrs());
        return;
    }
    case Op::cond_if: {
        const auto& t = *s.attribute_as_CondIfAttribute();
        a.then_graph = text_of(t.then_graph());
        a.else_graph = text_of(t.else_graph());
        return;
    }
    case Op::while_loop: {
        const auto& t = *s.attribute_as_WhileLoopAttribute();
        a.cond_graph = text_of(t.cond_graph());
        a.body_graph = text_of(t.body_graph());
        return;
    }
    default: return;  // a table without fields
    }
}

// ----- encoding -----------------------------------------------------------

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

Offset<Ints> ints(FlatBufferBuilder& b, const std::vector<std::int32_t>& values)
{
    return b.CreateVector(values);
}

// Attribute bytes are element values, 8-aligned as TOSA 1.0 serializes them.
Offset<Bytes> aligned_bytes(FlatBufferBuilder& b, const std::vector<std::uint8_t>& values)
{
    b.ForceVectorAlignment(values.size(), sizeof(std::uint8_t), 8);
    return b.CreateVector(values);
}

template <class Builder>
Offset<void> write_convolution(FlatBufferBuilder& b, const Attributes& a)
{
    const auto pad = ints(b, a.pad);
    const auto stride = ints(b, a.stride);
    const auto dilation = ints(b, a.dilation);
    Builder t(b);
    t.add_pad(pad);
    t.add_stride(stride);
    t.add_dilation(dilation);
    t.add_local_bound(a.local_bound);
    t.add_acc_type(static_cast<fb::DType>(a.acc_type));
    return t.Finish().Union();
}

template <class Builder>
Offset<void> write_axis(FlatBufferBuilder& b, const Attributes& a)
{
    Builder t(b);
    t.add_axis(a.axis);
    return t.Finish().Union();
}

template <class Builder>
Offset<void> write_axis_nan(FlatBufferBuilder& b, const Attributes& a)
{
    Builder t(b);
    t.add_axis(a.axis);
    t.add_nan_mode(static_cast<fb::NanPropagationMode>(a.nan_mode));
    return t.Finish().Union();
}

template <class Builder>
Offset<void> write_nan(FlatBufferBuilder& b, const Attributes& a)
{
    Builder t(b);
    t.add_nan_mode(static_cast<fb::NanPropagationMode>(a.nan_mode));
    return t.Finish().Union();
}

Offset<void> write_pool(FlatBufferBuilder& b, Op op, const Attributes& a)
{
    const auto kernel = ints(b, a.kernel);
    const auto stride = ints(b, a.stride);
    const auto pad = ints(b, a.pad);
    if (op == Op::avg_pool2d) {
        return fb::CreateAvgPool2dAttribute(b, kernel, stride, pad,
                                            static_cast<fb::DType>(a.acc_type))
            .Union();
    }
    return fb::CreateMaxPool2dAttribute(b, kernel, stride, pad,
                                        static_cast<fb::NanPropagationMode>(a.nan_mode))
        .Union();
}

Offset<void> write_transpose_conv2d(FlatBufferBuilder& b, const Attributes& a)
{
    const auto out_pad = ints(b, a.out_pad);
    const auto stride = ints(b, a.stride);
    return fb::CreateTransposeConv2dAttribute(b, out_pad, stride, a.local_bound,
                                              static_cast<fb::DType>(a.acc_type))
        .Union();
}

Offset<void> write_clamp(FlatBufferBuilder& b, const Attributes& a)
{
    const auto min_val = aligned_bytes(b, a.min_val);
    const auto max_val = aligned_bytes(b, a.max_val);
    return fb::CreateClampAttribute(b, min_val, max_val,
                                    static_cast<fb::NanPropagationMode>(a.nan_mode))
        .Union();
}

Offset<void> write_rescale(FlatBufferBuilder& b, const Attributes& a)
{
    return fb::CreateRescaleAttribute(b, a.scale32,
                                      static_cast<fb::RoundingMode>(a.rounding_mode),
                                      a.per_channel, a.input_unsigned, a.output_unsigned)
        .Union();
}

Offset<void> write_custom(FlatBufferBuilder& b, const Attributes& a)
{
    const auto operator_name = b.CreateString(a.operator_name);
    const auto domain_name = b.CreateString(a.domain_name);
    const auto implementation = b.CreateVector(a.implementation_attrs);
    return fb::CreateCustomAttribute(b, operator_name, domain_name, implementation).Union();
}

Offset<void> write_region_pair(FlatBufferBuilder& b, Op op, const Attributes& a)
{
    if (op == Op::cond_if) {
        const auto then_graph = b.CreateString(a.then_graph);
        const auto else_graph = b.CreateString(a.else_graph);
        return fb::CreateCondIfAttribute(b, then_graph, else_graph).Union();
    }
    const auto cond_graph = b.CreateString(a.cond_graph);
    const auto body_graph = b.CreateString(a.body_graph);
    return fb::CreateWhileLoopAttribute(b, cond_graph, body_graph).Union();
}

// A table without fields: the same bytes whatever its type.
Offset<void> write_empty(FlatBufferBuilder& b)
{
    const auto start = b.StartTable();
    return Offset<void>(b.EndTable(start));
}

}  // namespace

bool attribute_has_fields(std::uint32_t type)
{
    switch (static_cast<Op>(type)) {
    case Op::argmax: case Op::avg_pool2d: case Op::conv2d: case Op::conv3d:
    case Op::depthwise_conv2d: case Op::fft2d: case Op::max_pool2d: case Op::rfft2d:
    case Op::transpose_conv2d: case Op::clamp: case Op::arithmetic_right_shift:
    case Op::maximum: case Op::minimum: case Op::reduce_all: case Op::reduce_any:
    case Op::reduce_max: case Op::reduce_min: case Op::reduce_product: case Op::reduce_sum:
    case Op::concat: case Op::reverse: case Op::transpose: case Op::resize: case Op::rescale:
    case Op::custom: case Op::cond_if: case Op::while_loop:
        return true;
    default:
        return false;
    }
}

Result<Attributes> decode_attributes(const fb::TosaOperator& source, Op op)
{
    Attributes attributes;
    const auto type = static_cast<std::uint32_t>(source.attribute_type());
    if (type == 0) return attributes;
    const auto own = static_cast<std::uint32_t>(op);
    const bool interchangeable = type < op_count && !attribute_has_fields(type) &&
                                 !attribute_has_fields(own);
    if (type != own && !interchangeable) {
        return malformed(VACCEL_TOSA_BAD_ATTRIBUTE,
                         fmt::format("{} operator refused: it carries attribute table {} ({}); "
                                     "an operator carries its own attribute table or none",
                                     op_name(op), type,
                                     type < op_count ? op_name(static_cast<Op>(type))
                                                     : std::string_view{"not a TOSA 1.0 table"}));
    }
    // Invariant: the verifier checked a table exists only when its type is
    // known; a missing one (absent field) is refused rather than dereferenced.
    if (source.attribute() == nullptr) {
        return malformed(VACCEL_TOSA_BAD_ATTRIBUTE,
                         fmt::format("{} operator refused: its attribute type is set but the "
                                     "table is missing",
                                     op_name(op)));
    }
    attributes.present = true;
    if (type == own) read_table(source, op, attributes);
    return attributes;
}

flatbuffers::Offset<void> encode_attributes(FlatBufferBuilder& b, Op op, const Attributes& a)
{
    switch (op) {
    case Op::argmax: return write_axis_nan<fb::ArgMaxAttributeBuilder>(b, a);
    case Op::avg_pool2d: case Op::max_pool2d: return write_pool(b, op, a);
    case Op::conv2d: return write_convolution<fb::Conv2dAttributeBuilder>(b, a);
    case Op::conv3d: return write_convolution<fb::Conv3dAttributeBuilder>(b, a);
    case Op::depthwise_conv2d:
        return write_convolution<fb::DepthwiseConv2dAttributeBuilder>(b, a);
    case Op::fft2d: return fb::CreateFFT2dAttribute(b, a.inverse, a.local_bound).Union();
    case Op::rfft2d: return fb::CreateRFFT2dAttribute(b, a.local_bound).Union();
    case Op::transpose_conv2d: return write_transpose_conv2d(b, a);
    case Op::clamp: return write_clamp(b, a);
    case Op::arithmetic_right_shift:
        return fb::CreateArithmeticRightShiftAttribute(b, a.round).Union();
    case Op::maximum: return write_nan<fb::MaximumAttributeBuilder>(b, a);
    case Op::minimum: return write_nan<fb::MinimumAttributeBuilder>(b, a);
    case Op::reduce_all: return write_axis<fb::ReduceAllAttributeBuilder>(b, a);
    case Op::reduce_any: return write_axis<fb::ReduceAnyAttributeBuilder>(b, a);
    case Op::reduce_max: return write_axis_nan<fb::ReduceMaxAttributeBuilder>(b, a);
    case Op::reduce_min: return write_axis_nan<fb::ReduceMinAttributeBuilder>(b, a);
    case Op::reduce_product: return write_axis<fb::ReduceProductAttributeBuilder>(b, a);
    case Op::reduce_sum: return write_axis<fb::ReduceSumAttributeBuilder>(b, a);
    case Op::concat: return write_axis<fb::ConcatAttributeBuilder>(b, a);
    case Op::reverse: return write_axis<fb::ReverseAttributeBuilder>(b, a);
    case Op::transpose: {
        const auto perms = ints(b, a.perms);
        return fb::CreateTransposeAttribute(b, perms).Union();
    }
    case Op::resize:
        return fb::CreateResizeAttribute(b, static_cast<fb::ResizeMode>(a.resize_mode)).Union();
    case Op::rescale: return write_rescale(b, a);
    case Op::custom: return write_custom(b, a);
    case Op::cond_if: case Op::while_loop: return write_region_pair(b, op, a);
    default: return write_empty(b);
    }
}

}  // namespace vaccel::tosa::detail
