// lowering_cast.cpp - Cast and CastLike between the carriers of ONNX types
// (ports.hpp: FP32, FP16, BF16, BOOL, and INT32 for every integer type).
//
// Decides:
//  - float to integer truncates toward zero, as ONNX does (TOSA CAST rounds
//    to nearest): SELECT(x >= 0, FLOOR(x), CEIL(x)), then CAST;
//  - to BOOL is x != 0 (a NaN is true, as in ONNX): NOT(EQUAL(x, 0));
//  - from BOOL goes through INT32 (TOSA casts BOOL to integers only);
//  - the arithmetic of the first two, and casts between FP16 and BF16, run
//    in FP32, to which both widen exactly;
//  - a cast to INT8, UINT8, INT16 or UINT16 wraps the INT32 carrier into
//    that type's range inside the graph (the low bits, as ONNX's integer
//    casts keep them), so later ops see the narrow type's value; INT64,
//    UINT32 and UINT64 keep the INT32 value, narrowed at the ports.
#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

using tosa::DType;

bool is_float(DType d) { return d == DType::fp32 || d == DType::fp16 || d == DType::bf16; }

Value widened(Lowering& l, Value x, const Dims& dims)
{
    return x.dtype == DType::fp32 || !is_float(x.dtype) ? x : l.apply(Op::cast, {x}, dims, DType::fp32);
}

// A zero of `dtype` (FP32 or INT32) of rank `rank`.
Value zero(Lowering& l, DType dtype, std::size_t rank) { return l.constant_typed(Dims(rank, 1), {0.0f}, dtype); }

// The INT32 carrier of an integer wrapped into ONNX type `to`'s range.
Value wrapped(Lowering& l, Value x, const Dims& dims, std::int32_t to)
{
    using T = ::onnx::TensorProto;
    std::int64_t mask = 0, sign = 0;
    switch (to) {
    case T::INT8: mask = 0xff, sign = 0x80; break;
    case T::UINT8: mask = 0xff; break;
    case T::INT16: mask = 0xffff, sign = 0x8000; break;
    case T::UINT16: mask = 0xffff; break;
    default: return x;
    }
    const std::size_t rank = dims.size();
    Value low = l.apply(Op::bitwise_and, {x, l.constant_ints(Dims(rank, 1), {mask}, DType::int32)},
                        dims, DType::int32);
    if (sign == 0) return low;
    Value sign_c = l.constant_ints(Dims(rank, 1), {sign}, DType::int32);
    return l.apply(Op::sub, {l.apply(Op::bitwise_xor, {low, sign_c}, dims, DType::int32), sign_c},
                   dims, DType::int32);
}

Value cast(Lowering& l, Value x, const Dims& dims, DType to, std::int32_t onnx_to)
{
    const std::size_t rank = dims.size();
    if (to == DType::boolean) {
        if (x.dtype == DType::boolean) return l.apply(Op::identity, {x}, dims, to);
        Value v = widened(l, x, dims);
        Value is_zero = l.apply(Op::equal, {v, zero(l, v.dtype, rank)}, dims, DType::boolean);
        return l.apply(Op::logical_not, {is_zero}, dims, DType::boolean);
    }
    if (x.dtype == DType::boolean) x = l.apply(Op::cast, {x}, dims, DType::int32);
    if (is_float(x.dtype) && to == DType::int32) {
        Value v = widened(l, x, dims);
        Value up = l.apply(Op::greater_equal, {v, zero(l, DType::fp32, rank)}, dims, DType::boolean);
        Value whole = l.apply(Op::select,
                              {up, l.apply(Op::floor, {v}, dims, DType::fp32),
                               l.apply(Op::ceil, {v}, dims, DType::fp32)},
                              dims, DType::fp32);
        return wrapped(l, l.apply(Op::cast, {whole}, dims, DType::int32), dims, onnx_to);
    }
    if (x.dtype == DType::int32 && to == DType::int32) {
        Value w = wrapped(l, x, dims, onnx_to);
        return w.tensor == x.tensor ? l.apply(Op::identity, {x}, dims, to) : w;
    }
    if (x.dtype == to) return l.apply(Op::identity, {x}, dims, to);
    // Between floats, or an integer to a float: directly where TOSA has
    // the pair, else through FP32.
    const bool direct = x.dtype == DType::fp32 || to == DType::fp32 ||
                        (x.dtype == DType::int32 && to == DType::fp16);
    if (!direct) x = l.apply(Op::cast, {x}, dims, DType::fp32);
    return l.apply(Op::cast, {x}, dims, to);
}

Status lower_cast(Lowering& l, const Node& node, std::int32_t onnx_to)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    auto to = l.output_type(node);
    if (!to) return fail(to.error());
    return l.bind(node, 0, cast(l, *x, *dims, *to, onnx_to));
}

}  // namespace

void add_cast(Table& table)
{
    table.emplace("Cast", Entry(
                              [](Lowering& l, const Node& node) {
                                  return lower_cast(l, node, static_cast<std::int32_t>(
                                                                 int_attr(node, "to", 0)));
                              },
                              every_carrier));
    // CastLike: to the type of its second input.
    table.emplace("CastLike", Entry(
                                  [](Lowering& l, const Node& node) -> Status {
                                      const auto like = node.input_size() > 1
                                                            ? l.model().type_of(node.input(1))
                                                            : std::nullopt;
                                      if (!like)
                                          return fail(l.refuse(node, "the type of its second "
                                                                     "input is unknown"));
                                      return lower_cast(l, node, like->elem);
                                  },
                                  every_carrier));
}

}  // namespace vaccel::onnx::lowering
