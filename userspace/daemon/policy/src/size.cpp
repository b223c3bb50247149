// size.cpp - parse_size()/format_size(), the grammar in size.hpp.
#include "vaccel/daemon/size.hpp"

#include <array>
#include <charconv>
#include <cstdint>

namespace vaccel::daemon {

namespace {

struct Unit {
    char letter;
    unsigned shift;
};
// Largest first, for format_size().
constexpr std::array<Unit, 4> units{{{'T', 40}, {'G', 30}, {'M', 20}, {'K', 10}}};

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text)
{
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
        ++digits;
    if (digits == 0)
        return std::nullopt;
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, value);
    if (ec != std::errc{} || end != text.data() + digits)
        return std::nullopt;  // out of range
    std::string_view suffix = text.substr(digits);
    if (suffix.empty())
        return value;
    if (suffix.size() == 3 && suffix.substr(1) == "iB")
        suffix = suffix.substr(0, 1);
    if (suffix.size() != 1)
        return std::nullopt;
    for (const Unit& unit : units) {
        if (suffix[0] != unit.letter)
            continue;
        if (value > (UINT64_MAX >> unit.shift))
            return std::nullopt;
        return value << unit.shift;
    }
    return std::nullopt;
}

std::string format_size(std::uint64_t bytes)
{
    if (bytes != 0)
        for (const Unit& unit : units) {
            const std::uint64_t mask = (std::uint64_t{1} << unit.shift) - 1;
            if ((bytes & mask) == 0)
                return std::to_string(bytes >> unit.shift) + unit.letter;
        }
    return std::to_string(bytes);
}

}  // namespace vaccel::daemon
