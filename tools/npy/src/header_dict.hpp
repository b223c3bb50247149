// header_dict.hpp - the Python dictionary literal of a .npy header.
//
// Owns: parsing the header text into its three fields. Decides: exactly the
// keys 'descr', 'fortran_order' and 'shape', each once, with the value types
// NumPy writes (a string, True/False, a tuple of non-negative integers);
// anything else is refused, never guessed at.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vaccel/npy/npy.hpp"

namespace vaccel::npy::detail {

struct HeaderDict {
    std::string descr;
    bool fortran_order = false;
    std::vector<std::int64_t> shape;
};

// `text` is the header after the length field (dictionary, padding, '\n').
Result<HeaderDict> parse_header_dict(std::string_view text, std::string_view origin);

}  // namespace vaccel::npy::detail
