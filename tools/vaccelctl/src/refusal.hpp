// refusal.hpp - how vaccelctl's own steps fail.
//
// Owns: the error type of vaccelctl's internal functions. Decides: a refusal
// is one finished sentence for a person (what was refused, why, what to do);
// main() prints it after "vaccelctl: " and exits with its status: 1, or
// 130 for a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
// Nothing in vaccelctl throws.
#pragma once

#include <expected>
#include <string>

namespace vaccel::ctl {

inline constexpr int refusal_status = 1;
inline constexpr int interrupted_status = 130;

struct Refusal {
    std::string message;
    int exit_status = refusal_status;
};

template <class T>
using Result = std::expected<T, Refusal>;

inline std::unexpected<Refusal> refuse(std::string message, int exit_status = refusal_status)
{
    return std::unexpected(Refusal{std::move(message), exit_status});
}

}  // namespace vaccel::ctl
