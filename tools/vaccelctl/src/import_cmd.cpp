// import_cmd.cpp - `vaccelctl import MODEL.onnx [-o MODEL.tosa]
// [--input-shape NAME=D0,D1,...]`: the TOSA file of an ONNX model, made
// here in the client (onnx_model.hpp). Prints one line: what was written,
// the model's inputs and outputs by name, and the operator count.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "commands.hpp"
#include "onnx_model.hpp"

namespace vaccel::ctl {

Result<void> import_command(const ImportCommandOptions& options)
{
    std::ifstream in(options.model, std::ios::binary);
    if (!in)
        return refuse(fmt::format("cannot open model {}: {}", options.model, std::strerror(errno)));
    const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in),
                                          std::istreambuf_iterator<char>()};
    OnnxImport how;
    for (const std::string& text : options.input_shapes) {
        auto shape = parse_input_shape(text);
        if (!shape) return std::unexpected(shape.error());
        how.shapes[shape->first] = std::move(shape->second);
    }
    auto imported = import_onnx(options.model, bytes, how);
    if (!imported) return std::unexpected(imported.error());
    std::string output = options.output;
    if (output.empty())
        output = std::filesystem::path(options.model).replace_extension(".tosa").string();
    std::FILE* file = std::fopen(output.c_str(), "wb");
    if (file == nullptr)
        return refuse(fmt::format("cannot write {}: {}", output, std::strerror(errno)));
    const bool written =
        std::fwrite(imported->tosa.data(), 1, imported->tosa.size(), file) == imported->tosa.size();
    if (std::fclose(file) != 0 || !written)
        return refuse(fmt::format("cannot write {}: {}", output, std::strerror(errno)));
    fmt::print("wrote {}: inputs {}, outputs {}, {} TOSA operators\n", output,
               fmt::join(imported->inputs, " "), fmt::join(imported->outputs, " "),
               imported->operators);
    return {};
}

}  // namespace vaccel::ctl
