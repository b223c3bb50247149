// model.hpp - an ONNX model read, its shapes fixed and inferred
// (importer.hpp says what is decided).
//
// Owns: the parsed ModelProto and what the lowering asks of it: each
// value's static shape and element type after shape inference, and the
// constant data of initializers and Constant nodes.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vaccel/common/error.hpp"
#include "vaccel/onnx/importer.hpp"
#include "vaccel/onnx/ports.hpp"

namespace vaccel::onnx {

// A value's static type: ONNX element type (TensorProto::DataType) and dims.
struct ValueType {
    std::int32_t elem = 0;
    std::vector<std::int64_t> dims;
};

// Constant data of an initializer or a Constant node, decoded to host
// values (floats as float, integers as int64).
struct ConstantData {
    ValueType type;
    std::vector<float> floats;
    std::vector<std::int64_t> ints;
};

class Model {
public:
    // Parses `bytes`, applies the options' input shapes, runs shape inference.
    static Result<Model> read(std::span<const std::byte> bytes, const ImportOptions& options);

    const ::onnx::GraphProto& graph() const { return model_.graph(); }
    std::int64_t opset() const { return opset_; }
    // The value's static type; nullopt when inference left it unknown.
    std::optional<ValueType> type_of(const std::string& name) const;
    const ConstantData* constant(const std::string& name) const;
    bool is_initializer(const std::string& name) const;

    // ONNX shape inference again (after make_constant), noting every static
    // type and Constant node's data.
    Status infer_shapes();
    // Graph node `node` becomes a Constant node holding `data` (its value,
    // computed at import), with the same output name.
    void make_constant(int node, const ConstantData& data);

private:
    ::onnx::ModelProto model_;
    std::int64_t opset_ = 0;
    std::map<std::string, ValueType> types_;
    std::map<std::string, ConstantData> constants_;
};

// Decodes a TensorProto (raw_data or the typed fields) to host values.
Result<ConstantData> decode_tensor(const ::onnx::TensorProto& tensor);


}  // namespace vaccel::onnx
