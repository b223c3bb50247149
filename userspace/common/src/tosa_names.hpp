// tosa_names.hpp - TOSA 1.0 operator and data type names, for messages only.
//
// Owns: a private copy of the Op and DType numbering of TOSA 1.0 (the enums
// of tosa/schema/tosa.fbs), so that common can name an operator in an error
// sentence without depending on the tosa library. Decides nothing else.
#pragma once

#include <cstdint>
#include <string_view>

namespace vaccel::tosa_names {

// "CONV2D", "ADD", ...; empty for a number TOSA 1.0 does not define.
std::string_view op(std::uint64_t value);
// "FP32", "INT8", ...; empty for a number TOSA 1.0 does not define.
std::string_view dtype(std::uint64_t value);

}  // namespace vaccel::tosa_names
