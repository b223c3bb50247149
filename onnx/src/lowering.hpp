// lowering.hpp - ONNX nodes to TOSA operators (importer.hpp).
//
// Owns: the walk over the graph's nodes in order. Decides:
//  - a node whose inputs are all known at import is computed here instead
//    (folding.hpp: the shape subgraphs exporters write);
//  - every other node is lowered by its op type's entry in the one table
//    (lowering.cpp), which the families fill:
//     - lowering_elementwise.cpp: Add, Sub, Mul, Div, Pow, Max, Min, Sum,
//       Mean with ONNX broadcasting (operands reshaped to the result's
//       rank); Relu, Abs, Neg, Exp, Log, Reciprocal, Sigmoid, Tanh, Erf,
//       Floor, Ceil, Sqrt, Sin, Cos, Identity, Cast (FLOAT to FLOAT), Elu,
//       Selu, Softplus, Softsign; Softmax and LogSoftmax over one axis;
//     - lowering_tensor.cpp: Reshape, Flatten, Squeeze, Unsqueeze (one
//       RESHAPE to the inferred shape), Transpose, MatMul (rank 2 and up,
//       equal batch dimensions), Gemm;
//     - lowering_nn.cpp: Conv, MaxPool, AveragePool, GlobalMaxPool,
//       GlobalAveragePool, BatchNormalization, the Reduce* family, Clip,
//       LeakyRelu, HardSigmoid, HardSwish, Dropout, Concat;
//     - lowering_data.cpp: Slice, Split, Pad, Expand, Tile,
//       LayerNormalization;
//  - a node of any other op type, or one an entry cannot express, is
//    refused naming the node, its op type and why.
// Only FLOAT (FP32) values become TOSA tensors so far; an integer or BOOL
// value must fold (it is refused naming the value otherwise). Div of floats
// is a * (1 / b): the quotient can differ from IEEE division in its last
// bit.
#pragma once

#include "model.hpp"

namespace vaccel::onnx {

Result<Imported> lower_model(const Model& model);

}  // namespace vaccel::onnx
