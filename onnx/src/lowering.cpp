// lowering.cpp - ONNX nodes to TOSA operators (lowering.hpp): the shared
// helpers, the one table of op types and the walk over the graph.
#include "folding.hpp"
#include "lowering_context.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace vaccel::onnx {

namespace lowering {

// ---- Lowering's helpers ----

Result<Value> Lowering::input(const Node& node, int i)
{
    if (i >= node.input_size() || node.input(i).empty())
        return fail(refuse(node, fmt::format("input {} is missing", i)));
    const std::string& name = node.input(i);
    if (auto it = values_.find(name); it != values_.end()) return it->second;
    if (const ConstantData* data = constant_of(name)) {
        auto v = constant_data(*data, name);
        if (!v) return fail(refuse(node, v.error().note));
        values_.emplace(name, *v);
        return *v;
    }
    return fail(refuse(node, fmt::format("input '{}' is produced by nothing before it", name)));
}

Result<Lowering::Operands> Lowering::operands(const Node& node, int count)
{
    Operands ops;
    for (int i = 0; i < count; ++i) {
        auto v = input(node, i);
        if (!v) return fail(v.error());
        ops.in.push_back(*v);
    }
    auto dims = output_dims(node);
    if (!dims) return fail(dims.error());
    ops.dims = std::move(*dims);
    return ops;
}

Value Lowering::slice(Value v, const Dims& start, const Dims& size)
{
    Value out = tensor_of(size, v.dtype);
    g_.op(Op::slice, {v.tensor, shape_operand(start), shape_operand(size)}, {out.tensor});
    return out;
}

Value Lowering::tile(Value v, const Dims& multiples)
{
    if (std::ranges::all_of(multiples, [](std::int64_t m) { return m == 1; })) return v;
    Dims dims = v.dims;
    for (std::size_t i = 0; i < dims.size(); ++i) dims[i] *= multiples[i];
    Value out = tensor_of(dims, v.dtype);
    g_.op(Op::tile, {v.tensor, shape_operand(multiples)}, {out.tensor});
    return out;
}

Result<Dims> Lowering::output_dims(const Node& node, int i) const
{
    const auto type = model_.type_of(node.output(i));
    if (!type)
        return fail(refuse(node, fmt::format("shape inference left the shape of output '{}' "
                                             "unknown; give the inputs' shapes with "
                                             "--input-shape NAME=D0,D1,...",
                                             node.output(i))));
    if (!carrier_of(type->elem))
        return fail(refuse(node, fmt::format("output '{}' is {}, which no TOSA 1.0 type carries",
                                             node.output(i), onnx_type_name(type->elem))));
    return type->dims;
}

Result<tosa::DType> Lowering::output_type(const Node& node, int i) const
{
    auto dims = output_dims(node, i);
    if (!dims) return fail(dims.error());
    return *carrier_of(model_.type_of(node.output(i))->elem);
}

Value Lowering::tensor_of(const Dims& dims, tosa::DType dtype, std::string name)
{
    if (name.empty() || values_.contains(name)) name = fresh(name.empty() ? "t" : name);
    return Value{g_.tensor(std::move(name), dims, dtype), dims, dtype};
}

Status Lowering::bind(const Node& node, int i, Value v)
{
    values_[node.output(i)] = std::move(v);
    return {};
}

Value Lowering::constant_typed(const Dims& dims, std::vector<float> values, tosa::DType dtype)
{
    Value v{0, dims, dtype};
    if (dtype == tosa::DType::fp16) {
        v.tensor = g_.constant_f16(fresh("const"), dims, values);
    } else if (dtype == tosa::DType::int32 || dtype == tosa::DType::boolean) {
        return constant_ints(dims, std::vector<std::int64_t>(values.begin(), values.end()), dtype);
    } else {
        v.tensor = g_.constant_f32(fresh("const"), dims, values);
        v.dtype = tosa::DType::fp32;
    }
    g_.op(Op::const_, {}, {v.tensor});
    return v;
}

Value Lowering::constant_ints(const Dims& dims, const std::vector<std::int64_t>& values, tosa::DType dtype)
{
    const std::size_t width = dtype == tosa::DType::boolean || dtype == tosa::DType::int8 ? 1
                              : dtype == tosa::DType::int16                              ? 2
                                                                                         : 4;
    std::vector<std::uint8_t> bytes(values.size() * width);
    for (std::size_t i = 0; i < values.size(); ++i) {
        const auto v = static_cast<std::int32_t>(dtype == tosa::DType::boolean ? values[i] != 0 : values[i]);
        std::memcpy(bytes.data() + i * width, &v, width);  // little-endian: the low bytes
    }
    Value c{g_.tensor(fresh("const"), dims, dtype, std::move(bytes)), dims, dtype};
    g_.op(Op::const_, {}, {c.tensor});
    return c;
}

Result<Value> Lowering::constant_data(const ConstantData& data, const std::string& name)
{
    // The model's type for the value wins over the data's (folding keeps
    // floats as FLOAT).
    const auto known = model_.type_of(name);
    const std::int32_t elem = known ? known->elem : data.type.elem;
    const auto dtype = carrier_of(elem);
    if (!dtype)
        return fail(Error::of(Errc::unsupported)
                        .with_note(fmt::format("'{}' is a {} constant, which no TOSA 1.0 type "
                                               "carries",
                                               name, onnx_type_name(elem))));
    if (*dtype == tosa::DType::fp32 || *dtype == tosa::DType::fp16 || *dtype == tosa::DType::bf16) {
        if (data.floats.size() != static_cast<std::size_t>(elements(data.type.dims)))
            return fail(Error::of(Errc::unsupported)
                            .with_note(fmt::format("'{}' is a {} constant made from integers",
                                                   name, onnx_type_name(elem))));
        if (*dtype == tosa::DType::bf16)
            return fail(Error::of(Errc::unsupported)
                            .with_note(fmt::format("'{}' is a BFLOAT16 constant; BFLOAT16 "
                                                   "constants are not imported yet",
                                                   name)));
        const tosa::DType was = type_;
        type_ = *dtype;
        Value v = constant(data.type.dims, data.floats);
        type_ = was;
        return v;
    }
    std::vector<std::int64_t> ints = data.ints;
    if (ints.empty() && !data.floats.empty())
        for (float f : data.floats) ints.push_back(static_cast<std::int64_t>(f));
    for (std::int64_t x : ints)
        if (x < INT32_MIN || x > INT32_MAX)
            return fail(Error::of(Errc::unsupported)
                            .with_note(fmt::format("constant '{}' holds {}, outside the INT32 "
                                                   "that carries {} values",
                                                   name, x, onnx_type_name(elem))));
    return constant_ints(data.type.dims, ints, *dtype);
}

Value Lowering::transpose(Value v, std::vector<std::int32_t> perm)
{
    Dims dims;
    for (std::int32_t p : perm) dims.push_back(v.dims[static_cast<std::size_t>(p)]);
    Value out = tensor_of(dims, v.dtype);
    g_.op(Op::transpose, {v.tensor}, {out.tensor}, tosa::transpose_attr(std::move(perm)));
    return out;
}

std::uint32_t Lowering::shape_operand(const Dims& values)
{
    std::vector<std::uint8_t> data(values.size() * 8);
    if (!values.empty()) std::memcpy(data.data(), values.data(), data.size());
    const std::uint32_t shape = g_.tensor(fresh("shape"), {static_cast<std::int64_t>(values.size())},
                                          tosa::DType::shape, data);
    g_.op(Op::const_shape, {}, {shape});
    return shape;
}

Value Lowering::reshape(Value v, const Dims& dims)
{
    if (v.dims == dims) return v;
    const std::uint32_t shape = shape_operand(dims);
    Value out = tensor_of(dims, v.dtype);
    g_.op(Op::reshape, {v.tensor, shape}, {out.tensor});
    return out;
}

Value Lowering::to_rank(Value v, std::size_t rank)
{
    if (v.dims.size() >= rank) return v;
    Dims dims(rank - v.dims.size(), 1);
    dims.insert(dims.end(), v.dims.begin(), v.dims.end());
    return reshape(v, dims);
}

std::uint32_t Lowering::mul_shift()
{
    if (!shift_) {
        shift_ = g_.tensor("mul_shift", {1}, tosa::DType::int8, {0});
        g_.op(Op::const_, {}, {*shift_});
    }
    return *shift_;
}

std::uint32_t Lowering::zero_point()
{
    auto it = zeros_.find(type_);
    if (it == zeros_.end()) it = zeros_.emplace(type_, constant({1}, {0.0f}).tensor).first;
    return it->second;
}

Value Lowering::unary(Op op, Value x, const Dims& dims, tosa::Attributes attrs)
{
    if (auto moved = in_channels_last(op, {x}, dims, [&](std::vector<Value> v, const Dims& d) {
            return unary(op, v[0], d, attrs);
        }))
        return *moved;
    Value out = tensor(dims);
    if (op == Op::negate)
        g_.op(op, {x.tensor, zero_point(), zero_point()}, {out.tensor});
    else
        g_.op(op, {x.tensor}, {out.tensor}, std::move(attrs));
    return out;
}

Value Lowering::binary(Op op, Value a, Value b, const Dims& dims)
{
    if (auto moved = in_channels_last(op, {a, b}, dims, [&](std::vector<Value> v, const Dims& d) {
            return binary(op, v[0], v[1], d);
        }))
        return *moved;
    a = to_rank(a, dims.size());
    b = to_rank(b, dims.size());
    Value out = tensor(dims);
    if (op == Op::mul) {
        g_.op(op, {a.tensor, b.tensor, mul_shift()}, {out.tensor});
    } else if (op == Op::maximum || op == Op::minimum) {
        tosa::Attributes attrs;
        attrs.present = true;
        attrs.nan_mode = nan_propagate;
        g_.op(op, {a.tensor, b.tensor}, {out.tensor}, attrs);
    } else {
        g_.op(op, {a.tensor, b.tensor}, {out.tensor});
    }
    return out;
}

Value Lowering::mul(Value a, Value b, const Dims& dims) { return binary(Op::mul, a, b, dims); }

Value Lowering::apply(Op op, std::vector<Value> operands, const Dims& dims, tosa::DType dtype,
                      tosa::Attributes attrs)
{
    std::vector<std::uint32_t> tensors;
    for (Value& v : operands) tensors.push_back(to_rank(v, dims.size()).tensor);
    Value out = tensor_of(dims, dtype);
    g_.op(op, std::move(tensors), {out.tensor}, std::move(attrs));
    return out;
}

// Refuses a node with a computed input or an output whose carrier its op
// type's lowering does not handle. Constant inputs are left to the lowering:
// most are read at import (a shape, axes, pads), and one it takes as a
// tensor is made in the node's type (constant_data).
Status Lowering::check_kinds(const Node& node, std::uint8_t kinds) const
{
    auto kind_of = [](tosa::DType d) -> std::uint8_t {
        switch (d) {
        case tosa::DType::fp32: return fp32_values;
        case tosa::DType::fp16: return fp16_values;
        case tosa::DType::int32: return int_values;
        case tosa::DType::boolean: return bool_values;
        case tosa::DType::bf16: return bf16_values;
        default: return 0;
        }
    };
    auto check = [&](const std::string& name) -> Status {
        if (name.empty()) return {};
        auto type = model_.type_of(name);
        if (!type)
            if (const ConstantData* data = constant_of(name)) type = data->type;
        if (!type) return {};
        const auto carrier = carrier_of(type->elem);
        if (!carrier)
            return fail(refuse(node, fmt::format("'{}' is {}, which no TOSA 1.0 type carries",
                                                 name, onnx_type_name(type->elem))));
        if ((kind_of(*carrier) & kinds) == 0)
            return fail(refuse(node, fmt::format("'{}' is {}; {} values are not imported for "
                                                 "this op type",
                                                 name, onnx_type_name(type->elem),
                                                 onnx_type_name(type->elem))));
        return {};
    };
    const std::vector<int>& parameters = parameter_inputs(node.op_type());
    for (int i = 0; i < node.input_size(); ++i) {
        const std::string& name = node.input(i);
        if (name.empty() || constant_of(name)) continue;
        if (std::ranges::find(parameters, i) != parameters.end())
            return fail(refuse(node, fmt::format("input {} ('{}') sets a shape or an attribute, "
                                                 "so its value must be known at import; it is "
                                                 "computed at run time here: give its value "
                                                 "(vaccelctl run --input {}=FILE.npy folds it)",
                                                 i, name, name)));
        if (auto ok = check(name); !ok) return ok;
    }
    for (const auto& name : node.output())
        if (auto ok = check(name); !ok) return ok;
    return {};
}

const Table& table()
{
    static const Table lowerings = [] {
        Table t;
        add_elementwise(t);
        add_logic(t);
        add_tensor(t);
        add_nn(t);
        add_data(t);
        add_cast(t);
        add_loss(t);
        add_gather(t);
        add_resize(t);
        add_conv_transpose(t);
        add_quantize(t);
        add_math(t);
        add_norm(t);
        add_indicator(t);
        add_scatter(t);
        add_integer(t);
        add_recurrent(t);
        return t;
    }();
    return lowerings;
}

Result<Imported> Lowering::run()
{
    const auto& graph = model_.graph();
    Imported imported;
    for (const auto& input : graph.input()) {
        if (model_.constant(input.name()) != nullptr || model_.is_initializer(input.name())) continue;
        const auto type = model_.type_of(input.name());
        if (!type)
            return fail(Error::of(Errc::invalid_argument)
                            .with_note(fmt::format("input '{}' has no static shape; give it with "
                                                   "--input-shape {}=D0,D1,...",
                                                   input.name(), input.name())));
        const auto dtype = carrier_of(type->elem);
        if (!dtype)
            return fail(Error::of(Errc::unsupported)
                            .with_note(fmt::format("input '{}' is {}, which no TOSA 1.0 type "
                                                   "carries",
                                                   input.name(), onnx_type_name(type->elem))));
        Value v = tensor_of(type->dims, *dtype, input.name());
        values_[input.name()] = v;
        g_.input(v.tensor);
        imported.inputs.push_back(Port{input.name(), type->elem, type->dims, *dtype});
    }
    for (const auto& node : graph.node()) {
        if (node.domain() != "" && node.domain() != "ai.onnx")
            return fail(refuse(node, fmt::format("its domain '{}' is not the default ONNX one",
                                                 node.domain())));
        if (node.op_type() == "Constant") continue;  // read as data (Model)
        const ConstantLookup lookup = [this](const std::string& n) { return constant_of(n); };
        if (auto folded = fold(node, model_, lookup)) {
            folded_.emplace(node.output(0), std::move(*folded));
            continue;
        }
        const auto found = table().find(node.op_type());
        if (found == table().end())
            return fail(refuse(node, "this op type is not imported yet"));
        if (auto ok = check_kinds(node, found->second.kinds); !ok) return fail(ok.error());
        type_ = tosa::DType::fp32;
        if (node.output_size() > 0)
            if (const auto t = model_.type_of(node.output(0)))
                type_ = carrier_of(t->elem).value_or(tosa::DType::fp32);
        if (auto ok = found->second.lower(*this, node); !ok) return fail(ok.error());
    }
    for (const auto& output : graph.output()) {
        auto it = values_.find(output.name());
        if (it == values_.end()) {
            // A constant output (folded, or an initializer): written by CONST
            // and an IDENTITY, as any output is written by an operator.
            if (const ConstantData* data = constant_of(output.name())) {
                auto c = constant_data(*data, output.name());
                if (!c) return fail(c.error());
                type_ = c->dtype;
                values_[output.name()] = unary(Op::identity, *c, c->dims);
                it = values_.find(output.name());
            }
        }
        if (it == values_.end())
            return fail(Error::of(Errc::unsupported)
                            .with_note(fmt::format("output '{}' is not computed by the graph's "
                                                   "nodes (a constant output is not imported)",
                                                   output.name())));
        // An output is a tensor of its own, written by an operator other
        // than CONST: an input, a constant (EyeLike's, a window's) or a
        // value that is also another output gets an IDENTITY.
        Value v = it->second;
        auto named = [&](const Port& p) { return p.name == output.name(); };
        const bool is_input = std::ranges::any_of(imported.inputs, named);
        const bool taken = std::ranges::any_of(imported.outputs, named);
        const bool constant = !g_.block().tensors[v.tensor].data.empty();
        type_ = v.dtype;
        if (is_input || taken || constant) v = unary(Op::identity, v, v.dims);
        const auto type = model_.type_of(output.name());
        const std::int32_t elem = type ? type->elem : ::onnx::TensorProto::FLOAT;
        if (carrier_of(elem) != v.dtype)
            return fail(Error::of(Errc::unsupported)
                            .with_note(fmt::format("output '{}' is {} and its lowering made {}",
                                                   output.name(), onnx_type_name(elem),
                                                   tosa::dtype_name(v.dtype))));
        // The output carries the model's name where no other tensor does.
        auto& tensors = g_.block().tensors;
        if (std::ranges::none_of(tensors, [&](const auto& t) { return t.name == output.name(); }))
            tensors[v.tensor].name = output.name();
        g_.output(v.tensor);
        imported.outputs.push_back(Port{output.name(), elem, v.dims, v.dtype});
    }
    imported.graph = g_.finish();
    prune(imported.graph);
    return imported;
}

}  // namespace lowering

Result<Imported> lower_model(const Model& model, bool transpose_per_node)
{
    return lowering::Lowering(model, transpose_per_node).run();
}

}  // namespace vaccel::onnx
