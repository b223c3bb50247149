// onnx_model.cpp - ONNX models in vaccelctl (onnx_model.hpp).
#include "onnx_model.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstring>

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
        for (std::size_t i = 0; i < n; ++i) {
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
    return model;
}

}  // namespace vaccel::ctl
