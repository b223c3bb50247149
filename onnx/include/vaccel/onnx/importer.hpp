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
    // Integer inputs given as values (INT64 or INT32 data: a Reshape's
    // shape, a Slice's starts, an Expand's shape): folded into the graph as
    // constants, so the shapes they determine are static; they are then
    // not inputs of the imported graph.
    struct Values {
        std::vector<std::int64_t> dims;
        std::vector<std::int64_t> values;
    };
    std::map<std::string, Values> input_values;
};

struct Imported {
    tosa::Graph graph;
    std::vector<Port> inputs;   // in graph input order
    std::vector<Port> outputs;  // in graph output order
};

// `model`: the bytes of a .onnx file.
Result<Imported> import_model(std::span<const std::byte> model, const ImportOptions& options = {});

}  // namespace vaccel::onnx
