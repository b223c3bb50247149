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
//       Selu, Softplus, Softsign, PRelu, Shrink, Celu, ThresholdedRelu,
//       BitShift; Softmax and LogSoftmax over one axis;
//     - lowering_tensor.cpp: Reshape, Flatten, Squeeze, Unsqueeze (one
//       RESHAPE to the inferred shape), Transpose, DepthToSpace,
//       SpaceToDepth, MatMul (rank 2 and up, equal batch dimensions), Gemm;
//     - lowering_nn.cpp: Conv, MaxPool, AveragePool, GlobalMaxPool,
//       GlobalAveragePool, BatchNormalization, the Reduce* family, Clip,
//       LeakyRelu, HardSigmoid, HardSwish, Dropout, Concat, ArgMax and
//       ArgMin (ARGMAX; INT32 indices);
//     - lowering_data.cpp: Slice, Split, Pad, Expand, Tile, Trilu;
//     - lowering_resize.cpp: Resize, Upsample; lowering_conv_transpose.cpp:
//       ConvTranspose;
//     - lowering_logic.cpp: Equal, Greater, GreaterOrEqual, Less,
//       LessOrEqual (BOOL results), Not, And, Or, Xor, Where (SELECT);
//     - lowering_math.cpp: Tan, the inverse trigonometric and the
//       hyperbolic ops, Sign, IsNaN, IsInf;
//     - lowering_norm.cpp: LayerNormalization, InstanceNormalization,
//       MeanVarianceNormalization, LRN;
//     - lowering_indicator.cpp: Hardmax, OneHot, EyeLike, TopK, the
//       window functions;
//     - lowering_gather.cpp: Gather, GatherElements, Compress,
//       ReverseSequence; lowering_scatter.cpp: GatherND, ScatterND,
//       ScatterElements, Scatter;
//     - lowering_recurrent.cpp: RNN, GRU, LSTM (unrolled);
//     - lowering_integer.cpp: MatMulInteger, ConvInteger, QLinearMatMul,
//       QLinearConv; lowering_quantize.cpp: QuantizeLinear,
//       DequantizeLinear, DynamicQuantizeLinear;
//  - values are typed (ports.hpp): FLOAT as FP32, FLOAT16 as FP16, BOOL as
//    BOOL, every integer as INT32. Each entry names the types it handles
//    (Entry::kinds; FP32 unless it says more): Add, Sub, Mul, Max, Min, Abs
//    and Neg take numbers, ArgMax and ArgMin FLOAT and integers; Identity, the reshaping ops, Transpose, Concat,
//    Slice, Split, Expand, Tile, the comparisons and Where take any type;
//    a node with a computed value of another type is refused naming it;
//  - a node of any other op type, or one an entry cannot express, is
//    refused naming the node, its op type and why.
// Div of floats is a * (1 / b): the quotient can differ from IEEE division
// in its last bit.
#pragma once

#include "model.hpp"

namespace vaccel::onnx {

// `transpose_per_node`: ImportOptions's.
Result<Imported> lower_model(const Model& model, bool transpose_per_node = false);

// The inputs of `op` whose values set a shape or an attribute (a Reshape's
// shape, a Resize's scales): they must be known at import
// (value_inputs.cpp; importer.hpp's value_inputs walks up from them).
const std::vector<int>& parameter_inputs(std::string_view op);

}  // namespace vaccel::onnx
