// size.hpp - byte sizes as operators write them: "2G", "512M", "4096".
//
// Owns nothing. Decides the grammar: decimal digits, optionally followed by
// one binary multiplier K, M, G or T (powers of 1024; "KiB", "MiB", "GiB",
// "TiB" also accepted), no sign, no spaces, no fractions; the value must fit
// in 64 bits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vaccel::daemon {

// The byte count `text` names, or nullopt if it is not a size.
std::optional<std::uint64_t> parse_size(std::string_view text);
// The shortest exact spelling: "2G" for 2 GiB, "1536M", "1000".
std::string format_size(std::uint64_t bytes);

}  // namespace vaccel::daemon
