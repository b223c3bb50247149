// onnx_model.hpp - ONNX models in vaccelctl: `import`, and `run` of a .onnx
// file (docs/onnx.md). Importing happens here, in the client; the daemon
// only receives the TOSA it makes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "refusal.hpp"
#include "vaccel/npy/npy.hpp"

namespace vaccel::ctl {

// A path that names an ONNX model (ends in .onnx).
inline bool is_onnx_path(const std::string& path) { return path.ends_with(".onnx"); }

// "NAME=D0,D1,..." as --input-shape takes it.
Result<std::pair<std::string, std::vector<std::int64_t>>> parse_input_shape(const std::string& text);

struct OnnxImport {
    std::map<std::string, std::vector<std::int64_t>> shapes;
    // Integer inputs given by value (folded into the graph).
    std::map<std::string, npy::Array> values;
};

struct ImportedModel {
    std::vector<std::uint8_t> tosa;
    std::vector<std::string> inputs, outputs;  // ONNX names
    std::size_t operators = 0;
};

// Imports the ONNX model in `bytes` (read from `path`, for messages).
Result<ImportedModel> import_onnx(const std::string& path, const std::vector<std::uint8_t>& bytes,
                                  const OnnxImport& how);

}  // namespace vaccel::ctl
