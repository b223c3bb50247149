// tosa_names.cpp - the TOSA 1.0 Op and DType name tables (message text only).
#include "tosa_names.hpp"

#include <array>

namespace vaccel::tosa_names {
namespace {

// Index = the TOSA 1.0 Op value (the Op enum of tosa/schema/tosa.fbs).
constexpr std::array<std::string_view, 76> op_names = {
    "UNKNOWN", "ARGMAX", "AVG_POOL2D", "CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "FFT2D",
    "MATMUL", "MAX_POOL2D", "RFFT2D", "TRANSPOSE_CONV2D", "CLAMP", "ERF", "SIGMOID", "TANH",
    "ADD", "ARITHMETIC_RIGHT_SHIFT", "BITWISE_AND", "BITWISE_OR", "BITWISE_XOR", "INTDIV",
    "LOGICAL_AND", "LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT", "LOGICAL_OR", "LOGICAL_XOR",
    "MAXIMUM", "MINIMUM", "MUL", "POW", "SUB", "TABLE", "ABS", "BITWISE_NOT", "CEIL",
    "CLZ", "COS", "EXP", "FLOOR", "LOG", "LOGICAL_NOT", "NEGATE", "RECIPROCAL", "RSQRT",
    "SIN", "SELECT", "EQUAL", "GREATER", "GREATER_EQUAL", "REDUCE_ALL", "REDUCE_ANY",
    "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PRODUCT", "REDUCE_SUM", "CONCAT", "PAD", "RESHAPE",
    "REVERSE", "SLICE", "TILE", "TRANSPOSE", "GATHER", "SCATTER", "RESIZE", "CAST",
    "RESCALE", "CONST", "IDENTITY", "CUSTOM", "COND_IF", "WHILE_LOOP", "VARIABLE",
    "VARIABLE_WRITE", "VARIABLE_READ", "CONST_SHAPE",
};

// Index = the TOSA 1.0 DType value.
constexpr std::array<std::string_view, 13> dtype_names = {
    "UNKNOWN", "BOOL", "INT4", "INT8", "INT16", "INT32", "INT48",
    "FP32", "FP16", "BF16", "SHAPE", "FP8E4M3", "FP8E5M2",
};

}  // namespace

std::string_view op(std::uint64_t value)
{
    return value < op_names.size() ? op_names[value] : std::string_view{};
}

std::string_view dtype(std::uint64_t value)
{
    return value < dtype_names.size() ? dtype_names[value] : std::string_view{};
}

}  // namespace vaccel::tosa_names
