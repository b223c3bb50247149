// tensor_files.hpp - which .npy file feeds each input slot, and where each
// output goes.
//
// Owns: the meaning of `--input` arguments, the TOSA dtype -> NumPy dtype
// mapping, and output file names. Decides:
//  - `--input NAME=FILE.npy` binds the block input named NAME; an argument
//    without '=' (or whose text before '=' names no input but is an existing
//    file) is positional and fills the inputs not bound by name, in block order;
//  - every input must be bound exactly once, and a missing one is named;
//  - FP32 f4, FP16 f2, INT8 i1, INT16 i2, INT32 i4, BOOL b1; other TOSA
//    dtypes cannot cross a .npy file and are refused;
//  - an output file is `<tensor name>.npy` with every character outside
//    [A-Za-z0-9._+-] replaced by '_' (and a leading '.' too), `output_<slot>`
//    for a name left empty, and `_<slot>` appended when two names collide.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "refusal.hpp"
#include "vaccel/npy/npy.hpp"

namespace vaccel::ctl {

// "FP32", "INT8", ...; "DType(n)" for a number TOSA 1.0 does not define.
std::string tosa_dtype_name(std::uint32_t tosa_dtype);

// The .npy dtype that carries a slot of this TOSA dtype, or a refusal that
// names the tensor and its dtype.
Result<npy::DType> npy_dtype_for(std::uint32_t tosa_dtype, std::string_view tensor_name);

// For each input name (block order), the file bound to it. `is_file` says
// whether a path names an existing file (only asked for arguments that
// contain '=' but name no input).
Result<std::vector<std::string>>
assign_inputs(std::span<const std::string> arguments, std::span<const std::string> input_names,
              const std::function<bool(const std::string&)>& is_file);

struct OutputFile {
    std::string file_name;  // "<sanitized name>.npy", no directory
    bool renamed = false;   // file_name is not "<tensor name>.npy"
};

std::vector<OutputFile> output_file_names(std::span<const std::string> tensor_names);

}  // namespace vaccel::ctl
