// tensor_files.cpp - binding --input files to slots and naming output files.
//
// Owns: the rules documented in tensor_files.hpp.
#include "tensor_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

namespace vaccel::ctl {
namespace {

// TOSA 1.0 DType numbering (tosa/include/vaccel/tosa/graph.hpp).
constexpr std::string_view tosa_names[] = {
    "UNKNOWN", "BOOL", "INT4", "INT8",  "INT16",   "INT32",   "INT48",
    "FP32",    "FP16", "BF16", "SHAPE", "FP8E4M3", "FP8E5M2",
};

std::string names_list(std::span<const std::string> names)
{
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += fmt::format("{}'{}'", i == 0 ? "" : ", ", names[i]);
    return out.empty() ? "(none)" : out;
}

std::optional<std::size_t> find_name(std::span<const std::string> names, std::string_view name)
{
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
        return std::nullopt;
    return static_cast<std::size_t>(it - names.begin());
}

bool allowed_in_file_name(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '+';
}

}  // namespace

std::string tosa_dtype_name(std::uint32_t tosa_dtype)
{
    if (tosa_dtype < std::size(tosa_names))
        return std::string(tosa_names[tosa_dtype]);
    return fmt::format("DType({})", tosa_dtype);
}

Result<npy::DType> npy_dtype_for(std::uint32_t tosa_dtype, std::string_view tensor_name)
{
    switch (tosa_dtype) {
    case 1:
        return npy::DType::b1;
    case 3:
        return npy::DType::i1;
    case 4:
        return npy::DType::i2;
    case 5:
        return npy::DType::i4;
    case 7:
        return npy::DType::f4;
    case 8:
        return npy::DType::f2;
    default:
        return refuse(fmt::format("tensor '{}' has TOSA dtype {}, which vaccelctl cannot carry "
                                  "in a .npy file (it carries FP32, FP16, INT8, INT16, INT32 and "
                                  "BOOL)",
                                  tensor_name, tosa_dtype_name(tosa_dtype)));
    }
}

Result<std::vector<std::string>>
assign_inputs(std::span<const std::string> arguments, std::span<const std::string> input_names,
              const std::function<bool(const std::string&)>& is_file)
{
    std::vector<std::string> files(input_names.size());
    std::vector<bool> bound(input_names.size(), false);
    std::vector<std::string> positional;
    for (const auto& argument : arguments) {
        auto eq = argument.find('=');
        if (eq == std::string::npos) {
            // `-i x` where x names an input and no file: the =FILE was forgotten.
            if (find_name(input_names, argument) && !is_file(argument))
                return refuse(fmt::format("--input {}: '{}' is the name of an input, not a file; "
                                          "write --input {}=FILE.npy",
                                          argument, argument, argument));
            positional.push_back(argument);
            continue;
        }
        std::string name = argument.substr(0, eq);
        auto slot = find_name(input_names, name);
        if (!slot) {
            if (is_file(argument)) {
                positional.push_back(argument);
                continue;
            }
            return refuse(fmt::format("--input {}: the model has no input named '{}'; its "
                                      "inputs are {}",
                                      argument, name, names_list(input_names)));
        }
        if (bound[*slot])
            return refuse(fmt::format("--input {}: input '{}' is already bound to {}; give each "
                                      "input once",
                                      argument, name, files[*slot]));
        std::string file = argument.substr(eq + 1);
        if (file.empty())
            return refuse(fmt::format("--input {}: no file after '='; write --input {}=FILE.npy",
                                      argument, name));
        files[*slot] = std::move(file);
        bound[*slot] = true;
    }
    std::size_t next = 0;
    for (const auto& file : positional) {
        while (next < bound.size() && bound[next])
            ++next;
        if (next == bound.size())
            return refuse(fmt::format("--input {}: the model has {} input{} ({}) and every one "
                                      "is already bound",
                                      file, input_names.size(), input_names.size() == 1 ? "" : "s",
                                      names_list(input_names)));
        files[next] = file;
        bound[next] = true;
    }
    for (std::size_t slot = 0; slot < bound.size(); ++slot) {
        if (!bound[slot])
            return refuse(fmt::format("input '{}' (slot {}) is missing: give --input {}=FILE.npy "
                                      "(the model's inputs are {})",
                                      input_names[slot], slot, input_names[slot],
                                      names_list(input_names)));
    }
    return files;
}

std::vector<OutputFile> output_file_names(std::span<const std::string> tensor_names)
{
    std::vector<OutputFile> out;
    std::set<std::string> taken;
    for (std::size_t slot = 0; slot < tensor_names.size(); ++slot) {
        std::string stem = tensor_names[slot];
        for (char& c : stem)
            if (!allowed_in_file_name(c))
                c = '_';
        if (!stem.empty() && stem.front() == '.')
            stem.front() = '_';
        if (stem.empty())
            stem = fmt::format("output_{}", slot);
        std::string name = stem + ".npy";
        for (unsigned n = 0; taken.contains(name); ++n)
            name = fmt::format("{}_{}{}.npy", stem, slot, n == 0 ? "" : fmt::format("_{}", n));
        taken.insert(name);
        out.push_back({name, name != tensor_names[slot] + ".npy"});
    }
    return out;
}

}  // namespace vaccel::ctl
