// importer.hpp - ONNX models to TOSA 1.0 (docs/adr/0031-onnx-import.md).
//
// Owns: turning one ONNX ModelProto into one TOSA graph the devices run.
// Runs in the client (vaccelctl, the client library), never in vacceld:
// the daemon only ever receives TOSA.
// Decides:
//  - shapes: every graph input gets a static shape, from ImportOptions or
//    from the model (a symbolic or unknown dimension without an option is
//    refused, naming the input); ONNX shape inference (with data
//    propagation) then gives every value a static shape, and a node whose
//    output it cannot resolve is refused;
//  - initializers become CONST tensors; inputs that are also initializers
//    (models of IR version < 4) are constants, not graph inputs;
//  - names: the TOSA graph's inputs and outputs carry the model's own names,
//    in the model's order and layout;
//  - operators: each supported node lowers to a few TOSA operators
//    (lowering.hpp lists them); anything else is refused with the node's
//    name, its op type and why.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "vaccel/common/error.hpp"
#include "vaccel/onnx/ports.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::onnx {

struct ImportOptions {
    // Shapes for graph inputs by ONNX name (vaccelctl's --input-shape);
    // they override the model's own.
    std::map<std::string, std::vector<std::int64_t>> input_shapes;
    // Inputs given as values (a Reshape's shape, a Slice's starts, an
    // Expand's shape as integers; a Resize's scales as floats): folded into
    // the graph as constants, so the shapes they determine are static; they
    // are then not inputs of the imported graph. `floating`: the values are
    // `floats` (a FLOAT input), else `values` (INT64).
    struct Values {
        std::vector<std::int64_t> dims;
        std::vector<std::int64_t> values;
        bool floating = false;
        std::vector<float> floats;
    };
    std::map<std::string, Values> input_values;
    // Each convolution and pool between TRANSPOSEs of its own, the layout
    // of every value NCHW: what the graph was before values kept their NHWC
    // twins (lowering_layout.cpp). For comparing the two (bench_onnx_layout).
    bool transpose_per_node = false;
};

struct Imported {
    tosa::Graph graph;
    std::vector<Port> inputs;   // in graph input order
    std::vector<Port> outputs;  // in graph output order
};

// `model`: the bytes of a .onnx file.
Result<Imported> import_model(std::span<const std::byte> model, const ImportOptions& options = {});

// The graph inputs whose values set a shape or an attribute (a Reshape's
// shape, a Resize's scales, a Slice's starts, or what such an operand is
// computed from, up to a Shape): the importer needs them in
// ImportOptions::input_values. Every other input is bound at run time.
Result<std::vector<std::string>> value_inputs(std::span<const std::byte> model);

}  // namespace vaccel::onnx
