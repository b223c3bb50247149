// ports.hpp - an imported graph's inputs and outputs, and their data
// between the model's element types and the graph's (docs/onnx.md).
//
// Owns: which TOSA element type carries each ONNX one, and converting a
// tensor's bytes across that boundary. Decides:
//  - FLOAT, FLOAT16, BFLOAT16 and BOOL are carried as themselves (FP32, FP16,
//    BF16, BOOL);
//  - every integer type is carried as INT32, the type TOSA 1.0's integer
//    arithmetic works in: INT8, INT16, UINT8 and UINT16 widen exactly;
//    INT64, UINT32 and UINT64 data given to an input is narrowed with a
//    range check (a value outside INT32 is refused as OutOfBounds,
//    naming the input, the element and the value); an INT32 result
//    written to a narrower or unsigned output type keeps its low bits,
//    the wrap-around arithmetic of that type gives (uint8 200 + 100 is
//    44), and widens to INT64 exactly;
//  - DOUBLE, STRING, complex and the 4-bit and 8-bit float types have no
//    TOSA 1.0 carrier and are refused where a model uses them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vaccel/common/error.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::onnx {

// One input or output of an imported graph.
struct Port {
    std::string name;                // the model's name
    std::int32_t onnx_type = 0;      // ONNX TensorProto::DataType of the model's data
    std::vector<std::int64_t> dims;  // static, as imported
    tosa::DType dtype = tosa::DType::unknown;  // what the TOSA graph holds
};

// The TOSA type that carries ONNX element type `onnx_type`, if any.
std::optional<tosa::DType> carrier_of(std::int32_t onnx_type);
// Bytes one element of ONNX type `onnx_type` occupies (0 for none).
std::size_t onnx_element_size(std::int32_t onnx_type);
// "FLOAT", "INT64", ... for messages.
std::string onnx_type_name(std::int32_t onnx_type);
// The values of an integer type that fits INT32 (INT8, UINT8, INT16,
// UINT16, INT32: the types ONNX keeps in int32_data), if it is one.
std::optional<std::pair<std::int64_t, std::int64_t>> int32_range(std::int32_t onnx_type);

// Bytes of `port`'s data in the model's type, and in the graph's.
std::uint64_t model_bytes(const Port& port);
std::uint64_t graph_bytes(const Port& port);

// The model's data for input `port` (little-endian, the ONNX type's layout,
// as many elements as its dims hold) in the graph's layout.
Result<std::vector<std::byte>> to_graph(const Port& port, std::span<const std::byte> data);
// The graph's data for output `port` in the ONNX type's layout.
Result<std::vector<std::byte>> from_graph(const Port& port, std::span<const std::byte> data);

}  // namespace vaccel::onnx
