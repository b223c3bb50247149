// lowering.hpp - ONNX nodes to TOSA operators (importer.hpp).
//
// Owns: the TOSA graph under construction and, per ONNX value, the TOSA
// tensor that holds it. Decides, per supported op type (the table in
// lowering.cpp is the one list):
//  - Add, Sub, Mul, Div, Pow, Max, Min: ONNX's multidirectional
//    broadcasting becomes TOSA's (operands reshaped to the result's rank,
//    size-1 dimensions broadcast); Div of floats is a * (1 / b) (RECIPROCAL
//    then MUL: the quotient can differ from IEEE division in its last bit);
//  - Relu (CLAMP to [0, +inf]), Abs, Neg, Exp, Log, Reciprocal, Sigmoid,
//    Tanh, Erf, Floor, Ceil, Sqrt (POW x 0.5), Identity;
//  - MatMul with numpy's rules for rank 2 and up (equal batch dimensions;
//    the batch is flattened into TOSA MATMUL's N), Gemm (transA, transB,
//    alpha, beta, C broadcast);
//  - Transpose; Reshape, Flatten, Squeeze, Unsqueeze as one RESHAPE to the
//    shape inference found (the shape operand itself is never read);
//  - Softmax over one axis (opset 13's; older opsets' flattening form is
//    refused), as exp(x - max) * (1 / sum).
// Only FLOAT (FP32) values are lowered so far; any other element type is
// refused naming the value.
#pragma once

#include <map>
#include <string>

#include "model.hpp"
#include "vaccel/tosa/builder.hpp"

namespace vaccel::onnx {

Result<Imported> lower_model(const Model& model);

}  // namespace vaccel::onnx
