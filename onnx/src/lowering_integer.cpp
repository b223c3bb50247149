// lowering_integer.cpp - ONNX's integer MatMul and Conv: MatMulInteger,
// ConvInteger, QLinearMatMul, QLinearConv (lowering.hpp lists what each
// becomes).
//
// Decides:
//  - the products are TOSA 1.0's INT8 MATMUL and CONV2D with zero points,
//    accumulating exactly in INT32. UINT8 values (carried as INT32,
//    ports.hpp) are shifted by -128 into INT8 and so are their zero points,
//    which leaves every difference x - zero_point, and so the result, as
//    it was;
//  - the zero points must be known at import (value_inputs: as in every
//    quantized model, initializers) and be one value per tensor: TOSA's
//    zero point operands are single values. A per-row or per-channel zero
//    point is refused;
//  - QLinearMatMul and QLinearConv are their definition: the INT32 result
//    in FP32 times x_scale * w_scale, quantized by y_scale and y_zero_point
//    as QuantizeLinear is (`quantize`, lowering_quantize.cpp: rounding
//    half to even, saturated). A QLinearConv's bias is INT32 in the
//    accumulator's scale, added before. The scales may be computed; one
//    value each, or w_scale one per output channel.
#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

using tosa::DType;
using T = ::onnx::TensorProto;

// The ONNX type of `node`'s input i (UINT8 where inference left it out).
std::int32_t onnx_type_of(const Lowering& l, const Node& node, int i)
{
    const auto type = l.model().type_of(node.input(i));
    return type ? type->elem : T::UINT8;
}

// Input `i` of `node` (UINT8 or INT8) as INT8.
Result<Value> int8_operand(Lowering& l, const Node& node, int i)
{
    auto v = l.input(node, i);
    if (!v) return fail(v.error());
    const std::int32_t type = onnx_type_of(l, node, i);
    if (v->dtype != DType::int32 || (type != T::UINT8 && type != T::INT8))
        return fail(l.refuse(node, fmt::format("its input {} is {}; vaccel imports UINT8 and INT8 operands", i,
                                               onnx_type_name(type))));
    Value x = *v;
    if (type == T::UINT8)
        x = l.apply(Op::sub, {x, l.constant_ints(Dims(x.dims.size(), 1), {128}, DType::int32)}, x.dims, DType::int32);
    return l.apply(Op::cast, {x}, x.dims, DType::int8);
}

// The zero point (input `i`, absent: 0) of operand `of`, shifted as the
// operand is, as TOSA's INT8 [1] zero point.
Result<std::uint32_t> int8_zero(Lowering& l, const Node& node, int i, int of)
{
    std::int64_t zero = 0;
    if (node.input_size() > i && !node.input(i).empty()) {
        const ConstantData* c = l.constant_of(node.input(i));
        if (c == nullptr)
            return fail(l.refuse(node, fmt::format("its zero point '{}' is not known at import (give its value: "
                                                   "it is a TOSA operator's operand)",
                                                   node.input(i))));
        if (c->ints.size() != 1)
            return fail(l.refuse(node, fmt::format("its zero point '{}' holds {} values; TOSA takes one per "
                                                   "operand",
                                                   node.input(i), c->ints.size())));
        zero = c->ints[0];
    }
    if (onnx_type_of(l, node, of) == T::UINT8) zero -= 128;
    return l.constant_ints({1}, {zero}, DType::int8).tensor;
}

struct Int8Pair {
    Value a, b;
    Int8Zeros zeros;
};

// Operands `a` and `b` and the zero points at `za` and `zb`.
Result<Int8Pair> int8_pair(Lowering& l, const Node& node, int a, int b, int za, int zb)
{
    auto av = int8_operand(l, node, a);
    if (!av) return fail(av.error());
    auto bv = int8_operand(l, node, b);
    if (!bv) return fail(bv.error());
    auto zav = int8_zero(l, node, za, a);
    if (!zav) return fail(zav.error());
    auto zbv = int8_zero(l, node, zb, b);
    if (!zbv) return fail(zbv.error());
    return Int8Pair{*av, *bv, {*zav, *zbv}};
}

Status lower_matmul_integer(Lowering& l, const Node& node)
{
    auto p = int8_pair(l, node, 0, 1, 2, 3);
    if (!p) return fail(p.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    auto y = matmul(l, node, p->a, p->b, *dims, &p->zeros);
    if (!y) return fail(y.error());
    return l.bind(node, 0, *y);
}

Status lower_conv_integer(Lowering& l, const Node& node)
{
    auto p = int8_pair(l, node, 0, 1, 2, 3);
    if (!p) return fail(p.error());
    auto y = conv2d(l, node, p->a, p->b, nullptr, std::nullopt, &p->zeros);
    if (!y) return fail(y.error());
    return l.bind(node, 0, *y);
}

// A FLOAT scale (input i): one value, or (`per_channel`) one per index of
// dim 1 of a result of `rank` dims; as [1, ...] or [1, C, 1, ...].
Result<Value> scale_of(Lowering& l, const Node& node, int i, std::size_t rank, std::int64_t channels)
{
    auto s = l.input(node, i);
    if (!s) return fail(s.error());
    if (s->dtype != DType::fp32) return fail(l.refuse(node, fmt::format("its scale {} is not FLOAT", i)));
    const std::int64_t count = elements(s->dims);
    Dims dims(rank, 1);
    if (count != 1) {
        if (channels == 0 || count != channels)
            return fail(l.refuse(node, fmt::format("its scale {} holds {} values; one, or one per output channel "
                                                   "of a QLinearConv's weights",
                                                   i, count)));
        dims[1] = count;
    }
    return l.reshape(*s, dims);
}

// y = quantize(acc * x_scale * w_scale) by y_scale (input 6) and
// y_zero_point (input 7); `channels` > 0 admits a per-channel w_scale.
Status requantize(Lowering& l, const Node& node, Value acc, std::int64_t channels)
{
    const Dims dims = acc.dims;
    const std::size_t rank = dims.size();
    auto xs = scale_of(l, node, 1, rank, 0);
    if (!xs) return fail(xs.error());
    auto ws = scale_of(l, node, 4, rank, channels);
    if (!ws) return fail(ws.error());
    auto ys = scale_of(l, node, 6, rank, 0);
    if (!ys) return fail(ys.error());
    l.set_element_type(DType::fp32);
    Value real = l.mul(l.mul(l.apply(Op::cast, {acc}, dims, DType::fp32), *xs, dims), *ws, dims);
    const auto out = l.model().type_of(node.output(0));
    QuantParams p{Dims(rank, 1), *ys, l.constant_of(node.input(6)), std::nullopt, out ? out->elem : T::UINT8};
    if (node.input_size() > 7 && !node.input(7).empty()) {
        auto zero = l.input(node, 7);
        if (!zero) return fail(zero.error());
        if (zero->dtype != DType::int32 || elements(zero->dims) != 1)
            return fail(l.refuse(node, "its y_zero_point is not one integer"));
        p.zero = l.reshape(*zero, p.dims);
    }
    if (p.quantized != T::UINT8 && p.quantized != T::INT8)
        return fail(l.refuse(node, fmt::format("its result is {}; vaccel imports UINT8 and INT8", onnx_type_name(p.quantized))));
    return l.bind(node, 0, quantize(l, real, p, l.unary(Op::reciprocal, *ys, p.dims)));
}

Status lower_qlinear_matmul(Lowering& l, const Node& node)
{
    auto p = int8_pair(l, node, 0, 3, 2, 5);
    if (!p) return fail(p.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    auto acc = matmul(l, node, p->a, p->b, *dims, &p->zeros);
    if (!acc) return fail(acc.error());
    return requantize(l, node, *acc, 0);
}

Status lower_qlinear_conv(Lowering& l, const Node& node)
{
    auto p = int8_pair(l, node, 0, 3, 2, 5);
    if (!p) return fail(p.error());
    std::optional<Value> bias;
    if (node.input_size() > 8 && !node.input(8).empty()) {
        auto b = l.input(node, 8);
        if (!b) return fail(b.error());
        if (b->dtype != DType::int32) return fail(l.refuse(node, "its bias is not INT32"));
        bias = *b;
    }
    auto acc = conv2d(l, node, p->a, p->b, nullptr, bias, &p->zeros);
    if (!acc) return fail(acc.error());
    return requantize(l, node, *acc, p->b.dims[0]);
}

}  // namespace

void add_integer(Table& table)
{
    table.emplace("MatMulInteger", Entry(lower_matmul_integer, int_values));
    table.emplace("ConvInteger", Entry(lower_conv_integer, int_values));
    table.emplace("QLinearMatMul", Entry(lower_qlinear_matmul, fp32_values | int_values));
    table.emplace("QLinearConv", Entry(lower_qlinear_conv, fp32_values | int_values));
}

}  // namespace vaccel::onnx::lowering
