// names.cpp - the names and element sizes of TOSA 1.0 dtypes and operators.
//
// Owns: the spelling of every Op and DType as the TOSA specification writes
// it, and the bytes one element of each dtype takes in TOSA 1.0 tensor data
// (BOOL one, INT48 six, SHAPE eight; INT4 packs two per byte and reports 0).
// Decides: values outside the 1.0 enums are named "UNKNOWN".
#include <array>

#include "vaccel/tosa/graph.hpp"

namespace vaccel::tosa {
namespace {

// Invariant: entry N is the name of Op N; op_count entries.
constexpr std::array<std::string_view, op_count> op_names = {
    "UNKNOWN", "ARGMAX", "AVG_POOL2D", "CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "FFT2D",
    "MATMUL", "MAX_POOL2D", "RFFT2D", "TRANSPOSE_CONV2D", "CLAMP", "ERF", "SIGMOID", "TANH",
    "ADD", "ARITHMETIC_RIGHT_SHIFT", "BITWISE_AND", "BITWISE_OR", "BITWISE_XOR", "INTDIV",
    "LOGICAL_AND", "LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT", "LOGICAL_OR", "LOGICAL_XOR",
    "MAXIMUM", "MINIMUM", "MUL", "POW", "SUB", "TABLE", "ABS", "BITWISE_NOT", "CEIL", "CLZ",
    "COS", "EXP", "FLOOR", "LOG", "LOGICAL_NOT", "NEGATE", "RECIPROCAL", "RSQRT", "SIN",
    "SELECT", "EQUAL", "GREATER", "GREATER_EQUAL", "REDUCE_ALL", "REDUCE_ANY", "REDUCE_MAX",
    "REDUCE_MIN", "REDUCE_PRODUCT", "REDUCE_SUM", "CONCAT", "PAD", "RESHAPE", "REVERSE",
    "SLICE", "TILE", "TRANSPOSE", "GATHER", "SCATTER", "RESIZE", "CAST", "RESCALE", "CONST",
    "IDENTITY", "CUSTOM", "COND_IF", "WHILE_LOOP", "VARIABLE", "VARIABLE_WRITE",
    "VARIABLE_READ", "CONST_SHAPE",
};

struct DTypeInfo {
    std::string_view name;
    std::size_t bytes;  // 0: packed below a byte (INT4) or no size (UNKNOWN)
};

// Invariant: entry N describes DType N.
constexpr std::array<DTypeInfo, 13> dtypes = {{
    {"UNKNOWN", 0}, {"BOOL", 1}, {"INT4", 0}, {"INT8", 1}, {"INT16", 2}, {"INT32", 4},
    {"INT48", 6}, {"FP32", 4}, {"FP16", 2}, {"BF16", 2}, {"SHAPE", 8}, {"FP8E4M3", 1},
    {"FP8E5M2", 1},
}};

}  // namespace

std::string_view op_name(Op op)
{
    const auto index = static_cast<std::uint32_t>(op);
    return index < op_names.size() ? op_names[index] : op_names[0];
}

std::string_view dtype_name(DType dtype)
{
    const auto index = static_cast<std::uint32_t>(dtype);
    return index < dtypes.size() ? dtypes[index].name : dtypes[0].name;
}

std::size_t dtype_bytes(DType dtype)
{
    const auto index = static_cast<std::uint32_t>(dtype);
    return index < dtypes.size() ? dtypes[index].bytes : 0;
}

}  // namespace vaccel::tosa
