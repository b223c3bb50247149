// model.cpp - reading a model and inferring its shapes (model.hpp).
#include "model.hpp"

#include <fmt/format.h>
#include <onnx/shape_inference/implementation.h>

#include <cstring>

#include "vaccel/onnx/ports.hpp"
#include "vaccel/tosa/builder.hpp"

namespace vaccel::onnx {

namespace {

Error malformed(std::string note)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_NONE).with_note(std::move(note));
}

std::optional<ValueType> static_type(const ::onnx::TypeProto& type)
{
    if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::nullopt;
    ValueType out;
    out.elem = type.tensor_type().elem_type();
    for (const auto& dim : type.tensor_type().shape().dim()) {
        if (!dim.has_dim_value() || dim.dim_value() < 0) return std::nullopt;
        out.dims.push_back(dim.dim_value());
    }
    return out;
}

}  // namespace

Result<ConstantData> decode_tensor(const ::onnx::TensorProto& t)
{
    ConstantData out;
    out.type.elem = t.data_type();
    std::uint64_t count = 1;
    for (std::int64_t d : t.dims()) {
        if (d < 0) return fail(malformed(fmt::format("tensor '{}' has a negative dimension", t.name())));
        out.type.dims.push_back(d);
        count *= static_cast<std::uint64_t>(d);
    }
    if (t.has_data_location() && t.data_location() == ::onnx::TensorProto::EXTERNAL)
        return fail(Error::of(Errc::unsupported)
                        .with_note(fmt::format("tensor '{}' keeps its data in an external file; "
                                               "save the model with its data inside it",
                                               t.name())));
    const std::string& raw = t.raw_data();
    auto raw_as = [&]<class T>(std::vector<T>& into, std::size_t width, auto convert) -> Status {
        if (raw.size() != count * width)
            return fail(malformed(fmt::format("tensor '{}' holds {} bytes of data for {} elements",
                                              t.name(), raw.size(), count)));
        into.resize(count);
        for (std::uint64_t i = 0; i < count; ++i) into[i] = convert(raw.data() + i * width);
        return {};
    };
    // Each element read as T from raw bytes, then widened.
    auto le = []<class T>(T) {
        return [](const char* p) {
            T v;
            std::memcpy(&v, p, sizeof(T));
            return v;
        };
    };
    auto half = [](const char* p) {
        std::uint16_t bits;
        std::memcpy(&bits, p, 2);
        return tosa::f16_value(bits);
    };
    auto bfloat = [](const char* p) {
        std::uint16_t bits;
        std::memcpy(&bits, p, 2);
        const std::uint32_t wide = std::uint32_t{bits} << 16;
        float v;
        std::memcpy(&v, &wide, 4);
        return v;
    };
    auto integers = [&]<class T>(T, const auto& typed) -> Status {
        if (!raw.empty()) return raw_as(out.ints, sizeof(T), [&](const char* p) { return std::int64_t(le(T{})(p)); });
        out.ints.assign(typed.begin(), typed.end());
        return {};
    };
    auto bits16 = [&](auto convert) -> Status {
        if (!raw.empty()) return raw_as(out.floats, 2, convert);
        for (std::int32_t b : t.int32_data()) {
            const auto bits = static_cast<std::uint16_t>(b);
            char p[2];
            std::memcpy(p, &bits, 2);
            out.floats.push_back(convert(p));
        }
        return {};
    };
    Status decoded;
    using P = ::onnx::TensorProto;
    switch (t.data_type()) {
    case P::FLOAT:
        if (raw.empty()) out.floats.assign(t.float_data().begin(), t.float_data().end());
        else decoded = raw_as(out.floats, 4, le(float{}));
        break;
    case P::DOUBLE:  // read for folding; no TOSA 1.0 type carries it (ports.hpp)
        if (raw.empty()) out.floats.assign(t.double_data().begin(), t.double_data().end());
        else decoded = raw_as(out.floats, 8, [&](const char* p) { return float(le(double{})(p)); });
        break;
    case P::FLOAT16: decoded = bits16(half); break;
    case P::BFLOAT16: decoded = bits16(bfloat); break;
    case P::INT64: decoded = integers(std::int64_t{}, t.int64_data()); break;
    case P::INT32: decoded = integers(std::int32_t{}, t.int32_data()); break;
    case P::INT16: decoded = integers(std::int16_t{}, t.int32_data()); break;
    case P::INT8: decoded = integers(std::int8_t{}, t.int32_data()); break;
    case P::UINT16: decoded = integers(std::uint16_t{}, t.int32_data()); break;
    case P::UINT8: decoded = integers(std::uint8_t{}, t.int32_data()); break;
    case P::BOOL: decoded = integers(std::uint8_t{}, t.int32_data()); break;
    case P::UINT32: decoded = integers(std::uint32_t{}, t.uint64_data()); break;
    case P::UINT64: decoded = integers(std::uint64_t{}, t.uint64_data()); break;
    default:
        return fail(Error::of(Errc::unsupported)
                        .with_note(fmt::format("tensor '{}' is {}, which the importer does not "
                                               "read",
                                               t.name(), onnx_type_name(t.data_type()))));
    }
    if (!decoded) return fail(decoded.error());
    const std::size_t have = out.floats.size() + out.ints.size();
    if (have != count)
        return fail(malformed(fmt::format("tensor '{}' holds {} values for {} elements", t.name(),
                                          have, count)));
    return out;
}

Result<Model> Model::read(std::span<const std::byte> bytes, const ImportOptions& options)
{
    Model m;
    if (bytes.size() > static_cast<std::size_t>(INT32_MAX) ||
        !m.model_.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return fail(malformed("the file is not an ONNX model (its protobuf does not parse)"));
    for (const auto& opset : m.model_.opset_import())
        if (opset.domain().empty() || opset.domain() == "ai.onnx") m.opset_ = opset.version();
    if (m.opset_ == 0)
        return fail(malformed("the model imports no version of the default ONNX operator set"));
    ::onnx::GraphProto& graph = *m.model_.mutable_graph();
    for (const auto& init : graph.initializer()) {
        auto data = decode_tensor(init);
        if (!data) {
            if (data.error().code == Errc::unsupported) continue;  // refused where a node uses it
            return fail(data.error());
        }
        m.constants_.emplace(init.name(), std::move(*data));
    }
    for (const auto& [name, given] : options.input_values) {
        auto* inputs = graph.mutable_input();
        auto it = std::find_if(inputs->begin(), inputs->end(), [&](const auto& i) { return i.name() == name; });
        if (it == inputs->end())
            return fail(Error::of(Errc::invalid_argument)
                            .with_note(fmt::format("a value is given for '{}', which is not an "
                                                   "input of the model",
                                                   name)));
        auto* init = graph.add_initializer();
        init->set_name(name);
        // Integers keep the type the input declares where it is one of
        // int32_data's (a QuantizeLinear's UINT8 zero point sets the type
        // of its output; a BOOL stays BOOL, 0 or 1); others are INT64,
        // floats FLOAT.
        using T = ::onnx::TensorProto;
        const std::int32_t declared = it->type().tensor_type().elem_type();
        const auto narrow = declared == T::BOOL ? std::optional(std::pair<std::int64_t, std::int64_t>{0, 1})
                                                : int32_range(declared);
        init->set_data_type(given.floating ? T::FLOAT : narrow ? declared : T::INT64);
        for (std::int64_t d : given.dims) init->add_dims(d);
        for (std::int64_t v : given.values) {
            if (!narrow) {
                init->add_int64_data(v);
                continue;
            }
            if (v < narrow->first || v > narrow->second)
                return fail(Error::of(Errc::out_of_bounds)
                                .with_note(fmt::format("the value given for '{}' holds {}, "
                                                       "outside its type {} ({} to {})",
                                                       name, v, T::DataType_Name(static_cast<T::DataType>(declared)),
                                                       narrow->first, narrow->second)));
            init->add_int32_data(static_cast<std::int32_t>(v));
        }
        for (float v : given.floats) init->add_float_data(v);
        auto data = decode_tensor(*init);
        if (!data) return fail(data.error());
        m.constants_.emplace(name, std::move(*data));
        inputs->erase(it);
    }
    for (auto& input : *graph.mutable_input()) {
        if (m.constants_.contains(input.name())) continue;
        auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
        if (auto given = options.input_shapes.find(input.name()); given != options.input_shapes.end()) {
            shape->clear_dim();
            for (std::int64_t d : given->second) shape->add_dim()->set_dim_value(d);
        }
    }
    for (const auto& [name, dims] : options.input_shapes)
        if (std::none_of(graph.input().begin(), graph.input().end(),
                         [&](const auto& i) { return i.name() == name; }))
            return fail(Error::of(Errc::invalid_argument)
                            .with_note(fmt::format("--input-shape names '{}', which is not an "
                                                   "input of the model",
                                                   name)));
    if (auto ok = m.infer_shapes(); !ok) return fail(ok.error());
    return m;
}

Status Model::infer_shapes()
{
    try {
        ::onnx::ShapeInferenceOptions inference{true, 1, true};
        ::onnx::shape_inference::InferShapes(model_, ::onnx::OpSchemaRegistry::Instance(),
                                             inference);
    } catch (const std::exception& e) {
        return fail(Error::of(Errc::invalid_argument)
                        .with_note(fmt::format("ONNX shape inference refused the model: {}",
                                               e.what())));
    }
    const ::onnx::GraphProto& graph = model_.graph();
    auto note = [this](const ::onnx::ValueInfoProto& v) {
        if (auto t = static_type(v.type())) types_[v.name()] = std::move(*t);
    };
    for (const auto& v : graph.input()) note(v);
    for (const auto& v : graph.value_info()) note(v);
    for (const auto& v : graph.output()) note(v);
    for (const auto& [name, data] : constants_) types_[name] = data.type;
    for (const auto& node : graph.node()) {
        if (node.op_type() != "Constant" || node.output_size() != 1) continue;
        for (const auto& a : node.attribute())
            if (a.name() == "value" && a.has_t()) {
                auto data = decode_tensor(a.t());
                if (!data) return fail(data.error());
                types_[node.output(0)] = data->type;
                constants_.emplace(node.output(0), std::move(*data));
            }
    }
    return {};
}

void Model::make_constant(int node, const ConstantData& data)
{
    ::onnx::NodeProto& n = *model_.mutable_graph()->mutable_node(node);
    const std::string output = n.output(0);
    n.Clear();
    n.set_op_type("Constant");
    n.set_name(output);
    n.add_output(output);
    ::onnx::AttributeProto& value = *n.add_attribute();
    value.set_name("value");
    value.set_type(::onnx::AttributeProto::TENSOR);
    ::onnx::TensorProto& t = *value.mutable_t();
    t.set_name(output);
    for (std::int64_t d : data.type.dims) t.add_dims(d);
    if (data.type.elem == ::onnx::TensorProto::FLOAT) {
        t.set_data_type(::onnx::TensorProto::FLOAT);
        for (float f : data.floats) t.add_float_data(f);
    } else {
        // Integers and BOOL as INT64 values of the value's own type: the
        // typed field decode_tensor reads for each.
        t.set_data_type(data.type.elem);
        for (std::int64_t v : data.ints) {
            if (data.type.elem == ::onnx::TensorProto::INT64) t.add_int64_data(v);
            else if (data.type.elem == ::onnx::TensorProto::UINT64 ||
                     data.type.elem == ::onnx::TensorProto::UINT32)
                t.add_uint64_data(static_cast<std::uint64_t>(v));
            else t.add_int32_data(static_cast<std::int32_t>(v));
        }
    }
    constants_.insert_or_assign(output, data);
    types_[output] = data.type;
}

std::optional<ValueType> Model::type_of(const std::string& name) const
{
    if (auto it = types_.find(name); it != types_.end()) return it->second;
    return std::nullopt;
}

const ConstantData* Model::constant(const std::string& name) const
{
    auto it = constants_.find(name);
    return it == constants_.end() ? nullptr : &it->second;
}

bool Model::is_initializer(const std::string& name) const
{
    const auto& inits = model_.graph().initializer();
    return std::any_of(inits.begin(), inits.end(), [&](const auto& i) { return i.name() == name; });
}

}  // namespace vaccel::onnx
