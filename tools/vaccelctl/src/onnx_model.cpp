// onnx_model.cpp - ONNX models in vaccelctl (onnx_model.hpp).
#include "onnx_model.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstring>

#include <onnx/onnx_pb.h>

#include "vaccel/onnx/importer.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::ctl {

Result<std::pair<std::string, std::vector<std::int64_t>>> parse_input_shape(const std::string& text)
{
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
        return refuse(fmt::format("--input-shape {}: write NAME=D0,D1,... (for example "
                                  "input=1,3,224,224)",
                                  text));
    std::vector<std::int64_t> dims;
    std::string_view rest = std::string_view(text).substr(eq + 1);
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        const std::string_view part = rest.substr(0, comma);
        std::int64_t d = -1;
        const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
        if (ec != std::errc{} || end != part.data() + part.size() || d < 0)
            return refuse(fmt::format("--input-shape {}: '{}' is not a dimension (a whole number "
                                      "from 0)",
                                      text, part));
        dims.push_back(d);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
        if (rest.empty())
            return refuse(fmt::format("--input-shape {}: a dimension is missing after the last "
                                      "comma",
                                      text));
    }
    return std::make_pair(text.substr(0, eq), std::move(dims));
}

Result<ImportedModel> import_onnx(const std::string& path, const std::vector<std::uint8_t>& bytes,
                                  const OnnxImport& how)
{
    onnx::ImportOptions options;
    options.input_shapes = how.shapes;
    for (const auto& [name, array] : how.values) {
        onnx::ImportOptions::Values v;
        v.dims = array.shape;
        const std::size_t n = array.element_count();
        if (array.dtype == npy::DType::f4) {
            v.floating = true;
            v.floats.resize(n);
            std::memcpy(v.floats.data(), array.data.data(), n * 4);
        } else if (array.dtype != npy::DType::i8 && array.dtype != npy::DType::i4) {
            return refuse(fmt::format("input '{}' sets a shape or an attribute of {}, so it is "
                                      "folded into the model: give it as int64, int32 or "
                                      "float32, not {}",
                                      name, path, npy::dtype_name(array.dtype)));
        }
        for (std::size_t i = 0; i < n && !v.floating; ++i) {
            if (array.dtype == npy::DType::i8) {
                std::int64_t x;
                std::memcpy(&x, array.data.data() + i * 8, 8);
                v.values.push_back(x);
            } else {
                std::int32_t x;
                std::memcpy(&x, array.data.data() + i * 4, 4);
                v.values.push_back(x);
            }
        }
        options.input_values.emplace(name, std::move(v));
    }
    auto imported = onnx::import_model(std::as_bytes(std::span(bytes)), options);
    if (!imported) return refuse(fmt::format("cannot import {}: {}", path, imported.error().note));
    ImportedModel model;
    for (const auto& block : imported->graph.regions.front().blocks)
        model.operators += block.operators.size();
    model.tosa = tosa::serialize(imported->graph);
    for (const onnx::Port& port : imported->inputs) model.inputs.push_back(port.name);
    for (const onnx::Port& port : imported->outputs) model.outputs.push_back(port.name);
    model.input_ports = imported->inputs;
    model.output_ports = imported->outputs;
    return model;
}

Result<std::vector<std::string>> onnx_value_inputs(const std::string& path,
                                                   const std::vector<std::uint8_t>& bytes)
{
    auto names = onnx::value_inputs(std::as_bytes(std::span(bytes)));
    if (!names) return refuse(fmt::format("cannot import {}: {}", path, names.error().note));
    return std::move(*names);
}

std::optional<npy::DType> npy_dtype_of_onnx(std::int32_t onnx_type)
{
    using T = ::onnx::TensorProto;
    switch (onnx_type) {
    case T::FLOAT: return npy::DType::f4;
    case T::FLOAT16: return npy::DType::f2;
    case T::DOUBLE: return npy::DType::f8;
    case T::INT8: return npy::DType::i1;
    case T::INT16: return npy::DType::i2;
    case T::INT32: return npy::DType::i4;
    case T::INT64: return npy::DType::i8;
    case T::UINT8: return npy::DType::u1;
    case T::UINT16: return npy::DType::u2;
    case T::UINT32: return npy::DType::u4;
    case T::UINT64: return npy::DType::u8;
    case T::BOOL: return npy::DType::b1;
    default: return std::nullopt;
    }
}

Result<npy::Array> to_graph_array(const onnx::Port& port, const npy::Array& given,
                                  npy::DType slot_dtype, const std::string& file)
{
    auto converted = onnx::to_graph(port, std::as_bytes(std::span(given.data)));
    if (!converted)
        return refuse(fmt::format("{}: {}", file, converted.error().note));
    npy::Array out{slot_dtype, given.shape, {}};
    const auto* p = reinterpret_cast<const std::uint8_t*>(converted->data());
    out.data.assign(p, p + converted->size());
    return out;
}

Result<npy::Array> to_model_array(const onnx::Port& port, const npy::Array& got)
{
    const auto dtype = npy_dtype_of_onnx(port.onnx_type);
    if (!dtype) return got;  // no .npy dtype of its own (BFLOAT16): as the graph holds it
    auto converted = onnx::from_graph(port, std::as_bytes(std::span(got.data)));
    if (!converted)
        return refuse(fmt::format("output '{}': {}", port.name, converted.error().note));
    npy::Array out{*dtype, got.shape, {}};
    const auto* p = reinterpret_cast<const std::uint8_t*>(converted->data());
    out.data.assign(p, p + converted->size());
    return out;
}

}  // namespace vaccel::ctl
