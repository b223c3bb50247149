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
        if (data->type.elem != ::onnx::TensorProto::FLOAT)
            return fail(refuse(node, fmt::format("input '{}' is a {} constant; only FLOAT values "
                                                 "are imported so far",
                                                 name, elem_name(data->type.elem))));
        Value v = constant(data->type.dims, data->floats);
        values_.emplace(name, v);
        return v;
    }
    return fail(refuse(node, fmt::format("input '{}' is produced by nothing before it", name)));
}

Result<Dims> Lowering::output_dims(const Node& node, int i) const
{
    const auto type = model_.type_of(node.output(i));
    if (!type)
        return fail(refuse(node, fmt::format("shape inference left the shape of output '{}' "
                                             "unknown; give the inputs' shapes with "
                                             "--input-shape NAME=D0,D1,...",
                                             node.output(i))));
    if (type->elem != ::onnx::TensorProto::FLOAT)
        return fail(refuse(node, fmt::format("output '{}' is {}; only FLOAT values are imported "
                                             "so far",
                                             node.output(i), elem_name(type->elem))));
    return type->dims;
}

Value Lowering::tensor(const Dims& dims, std::string name)
{
    if (name.empty() || values_.contains(name)) name = fresh(name.empty() ? "t" : name);
    return Value{g_.tensor(std::move(name), dims, tosa::DType::fp32), dims};
}

Status Lowering::bind(const Node& node, int i, Value v)
{
    values_[node.output(i)] = std::move(v);
    return {};
}

Value Lowering::constant(const Dims& dims, std::vector<float> values)
{
    Value v{g_.constant_f32(fresh("const"), dims, values), dims};
    g_.op(Op::const_, {}, {v.tensor});
    return v;
}

Value Lowering::transpose(Value v, std::vector<std::int32_t> perm)
{
    Dims dims;
    for (std::int32_t p : perm) dims.push_back(v.dims[static_cast<std::size_t>(p)]);
    Value out = tensor(dims);
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
    Value out = tensor(dims);
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
    if (!zero_) zero_ = constant({1}, {0.0f}).tensor;
    return *zero_;
}

Value Lowering::unary(Op op, Value x, const Dims& dims, tosa::Attributes attrs)
{
    Value out = tensor(dims);
    if (op == Op::negate)
        g_.op(op, {x.tensor, zero_point(), zero_point()}, {out.tensor});
    else
        g_.op(op, {x.tensor}, {out.tensor}, std::move(attrs));
    return out;
}

Value Lowering::binary(Op op, Value a, Value b, const Dims& dims)
{
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

const Table& table()
{
    static const Table lowerings = [] {
        Table t;
        add_elementwise(t);
        add_tensor(t);
        add_nn(t);
        add_data(t);
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
        if (type->elem != ::onnx::TensorProto::FLOAT)
            return fail(Error::of(Errc::unsupported)
                            .with_note(fmt::format("input '{}' is {}; only FLOAT inputs are "
                                                   "imported so far",
                                                   input.name(), elem_name(type->elem))));
        Value v = tensor(type->dims, input.name());
        values_[input.name()] = v;
        g_.input(v.tensor);
        imported.inputs.push_back(input.name());
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
        if (auto ok = found->second(*this, node); !ok) return fail(ok.error());
    }
    for (const auto& output : graph.output()) {
        auto it = values_.find(output.name());
        if (it == values_.end()) {
            // A constant output (folded, or an initializer): written by CONST
            // and an IDENTITY, as any output is written by an operator.
            if (const ConstantData* data = constant_of(output.name());
                data != nullptr && data->type.elem == ::onnx::TensorProto::FLOAT) {
                Value c = constant(data->type.dims, data->floats);
                values_[output.name()] = unary(Op::identity, c, c.dims);
                it = values_.find(output.name());
            }
        }
        if (it == values_.end())
            return fail(Error::of(Errc::unsupported)
                            .with_note(fmt::format("output '{}' is not computed by the graph's "
                                                   "nodes (a constant output is not imported)",
                                                   output.name())));
        // An output is a tensor of its own, written by an operator: an input
        // or a value that is also another output gets an IDENTITY.
        Value v = it->second;
        const bool is_input = std::ranges::find(imported.inputs, output.name()) != imported.inputs.end();
        const bool taken = std::ranges::find(imported.outputs, output.name()) != imported.outputs.end();
        if (is_input || taken) v = unary(Op::identity, v, v.dims);
        // The output carries the model's name where no other tensor does.
        auto& tensors = g_.block().tensors;
        if (std::ranges::none_of(tensors, [&](const auto& t) { return t.name == output.name(); }))
            tensors[v.tensor].name = output.name();
        g_.output(v.tensor);
        imported.outputs.push_back(output.name());
    }
    imported.graph = g_.finish();
    return imported;
}

}  // namespace lowering

Result<Imported> lower_model(const Model& model) { return lowering::Lowering(model).run(); }

}  // namespace vaccel::onnx
