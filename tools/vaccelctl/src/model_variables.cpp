// model_variables.cpp - the model rewrite of `vaccelctl run --variable` (model_variables.hpp).
#include "model_variables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "tensor_files.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::ctl {
namespace {

std::string variable_name(const tosa::Tensor& tensor)
{
    return tensor.variable_name.empty() ? tensor.name : tensor.variable_name;
}

std::string plain(const std::string& name)
{
    std::string out = name;
    for (char& c : out)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' ||
              c == '-'))
            c = '_';
    return out;
}

std::string shape_text(const std::vector<std::int64_t>& shape)
{
    return fmt::format("[{}]", fmt::join(shape, ","));
}

// Sets every declaration of `name` to `value`; how many there were.
Result<int> set_initial(tosa::Graph& graph, const std::string& name, const npy::Array& value)
{
    int declarations = 0;
    for (tosa::Region& region : graph.regions)
        for (tosa::Block& block : region.blocks)
            for (tosa::Tensor& tensor : block.tensors) {
                if (!tensor.variable || variable_name(tensor) != name) continue;
                auto dtype = npy_dtype_for(static_cast<std::uint32_t>(tensor.dtype), name);
                if (!dtype) return std::unexpected(dtype.error());
                if (*dtype != value.dtype || value.shape != tensor.shape)
                    return refuse(fmt::format("variable '{}' is {} {} but the file holds {} {}; "
                                              "give a .npy file of exactly that dtype and shape",
                                              name, npy::dtype_name(*dtype),
                                              shape_text(tensor.shape),
                                              npy::dtype_name(value.dtype),
                                              shape_text(value.shape)));
                tensor.data = value.data;
                ++declarations;
            }
    return declarations;
}

}  // namespace

Result<std::pair<std::string, std::string>> variable_argument(const std::string& argument)
{
    const auto equals = argument.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == argument.size())
        return refuse(fmt::format("--variable '{}' is not NAME=FILE.npy", argument));
    return std::pair{argument.substr(0, equals), argument.substr(equals + 1)};
}

Result<ExposedModel> expose_variables(std::span<const std::uint8_t> model,
                                      const std::vector<std::pair<std::string, npy::Array>>& initial)
{
    ExposedModel exposed;
    auto graph = tosa::parse(std::as_bytes(model));
    const bool has_variables =
        graph && !graph->regions.empty() && !graph->regions[0].blocks.empty() &&
        std::ranges::any_of(graph->regions[0].blocks[0].tensors,
                            [](const tosa::Tensor& t) { return t.variable; });
    if (!has_variables) {
        // Nothing to expose: the device reads (and judges) the file as given.
        if (!initial.empty())
            return refuse(fmt::format("--variable {}: the model {}", initial.front().first,
                                      graph ? "declares no variables in its first block"
                                            : "cannot be read as TOSA 1.0 here (" +
                                                  graph.error().note + ")"));
        exposed.bytes.assign(model.begin(), model.end());
        return exposed;
    }
    for (const auto& [name, value] : initial) {
        auto set = set_initial(*graph, name, value);
        if (!set) return std::unexpected(set.error());
        if (*set == 0) {
            std::vector<std::string> known;
            for (const tosa::Tensor& t : graph->regions[0].blocks[0].tensors)
                if (t.variable) known.push_back("'" + variable_name(t) + "'");
            return refuse(fmt::format("--variable {}: the model has no variable of that name; "
                                      "its variables are {}",
                                      name, fmt::join(known, ", ")));
        }
    }
    tosa::Block& main = graph->regions[0].blocks[0];
    const std::size_t declared = main.tensors.size();
    for (std::uint32_t t = 0; t < declared; ++t) {
        if (!main.tensors[t].variable) continue;
        const std::string name = variable_name(main.tensors[t]);
        std::string output = "variable." + plain(name);
        while (std::ranges::any_of(main.tensors,
                                   [&](const tosa::Tensor& x) { return x.name == output; }))
            output += "_";
        tosa::Tensor result;
        result.name = output;
        result.shape = main.tensors[t].shape;
        result.dtype = main.tensors[t].dtype;
        main.tensors.push_back(std::move(result));
        const auto index = static_cast<std::uint32_t>(main.tensors.size() - 1);
        tosa::Operator read;
        read.op = tosa::Op::identity;
        read.attributes.present = true;
        read.inputs = {t};
        read.outputs = {index};
        main.operators.push_back(std::move(read));
        main.outputs.push_back(index);
        exposed.variables.emplace_back(name, output);
    }
    exposed.bytes = tosa::serialize(*graph);
    return exposed;
}

}  // namespace vaccel::ctl
