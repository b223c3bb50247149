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
#ifdef VACCEL_HAS_ONNX
#include "vaccel/onnx/ports.hpp"
#endif

namespace vaccel::ctl {

// A path that names an ONNX model (ends in .onnx).
inline bool is_onnx_path(const std::string& path) { return path.ends_with(".onnx"); }

// "NAME=D0,D1,..." as --input-shape takes it.
Result<std::pair<std::string, std::vector<std::int64_t>>> parse_input_shape(const std::string& text);

struct OnnxImport {
    std::map<std::string, std::vector<std::int64_t>> shapes;
    // Inputs given by value (folded into the graph): integers (.npy i8, i4)
    // or floats (f4).
    std::map<std::string, npy::Array> values;
};

struct ImportedModel {
    std::vector<std::uint8_t> tosa;
    std::vector<std::string> inputs, outputs;  // ONNX names
    std::size_t operators = 0;
#ifdef VACCEL_HAS_ONNX
    std::vector<onnx::Port> input_ports, output_ports;
#endif
};

#ifdef VACCEL_HAS_ONNX
// The graph inputs of the ONNX model in `bytes` whose values the import
// needs (onnx::value_inputs; read from `path`, for messages).
Result<std::vector<std::string>> onnx_value_inputs(const std::string& path,
                                                   const std::vector<std::uint8_t>& bytes);
// The .npy dtype of ONNX element type `onnx_type`, where NumPy has one.
std::optional<npy::DType> npy_dtype_of_onnx(std::int32_t onnx_type);
// Input `port`'s data, given as a .npy array of the model's own type (read
// from `file`), in the graph's type (`slot_dtype`): INT64 token ids
// narrowed to INT32 with a range check, small integers widened.
Result<npy::Array> to_graph_array(const onnx::Port& port, const npy::Array& given,
                                  npy::DType slot_dtype, const std::string& file);
// Output `port`'s data as the graph wrote it, in the model's own type.
Result<npy::Array> to_model_array(const onnx::Port& port, const npy::Array& got);
#endif

// Imports the ONNX model in `bytes` (read from `path`, for messages).
Result<ImportedModel> import_onnx(const std::string& path, const std::vector<std::uint8_t>& bytes,
                                  const OnnxImport& how);

}  // namespace vaccel::ctl
