// refusal.hpp - how vaccelctl's own steps fail.
//
// Owns: the error type of vaccelctl's internal functions. Decides: a refusal
// is one finished sentence for a person (what was refused, why, what to do);
// main() prints it after "vaccelctl: " and exits non-zero. Nothing in
// vaccelctl throws.
#pragma once

#include <expected>
#include <string>

namespace vaccel::ctl {

struct Refusal {
    std::string message;
};

template <class T>
using Result = std::expected<T, Refusal>;

inline std::unexpected<Refusal> refuse(std::string message)
{
    return std::unexpected(Refusal{std::move(message)});
}

}  // namespace vaccel::ctl
