// daemon_input.hpp - how a fuzz_daemon input is laid out, shared by the
// target and the seeds it writes.
//
// Decides: an input is a sequence of records, each a little-endian u16
// length followed by that many bytes: one datagram as a client would send it
// on one connection. A session's handles are new in every input (their tag
// comes from a process-wide counter), so an input names them by order of
// issue: any 8-byte word after the message header (at an offset that is a
// multiple of 8 from the end of the header) whose upper 48 bits are all ones
// stands for the handle issued (k mod issued) where k is its low 16 bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vaccel::fuzz {

inline constexpr std::uint64_t handle_placeholder_mask = 0xFFFF'FFFF'FFFF'0000ull;
inline constexpr std::size_t max_records = 64;

// "The k-th handle issued in this input".
constexpr std::uint64_t issued_handle(std::uint16_t k)
{
    return handle_placeholder_mask | k;
}

// Appends one record holding `datagram`.
inline void append_record(std::vector<std::byte>& input, const std::vector<std::byte>& datagram)
{
    const std::size_t size = datagram.size();
    input.push_back(static_cast<std::byte>(size & 0xff));
    input.push_back(static_cast<std::byte>((size >> 8) & 0xff));
    input.insert(input.end(), datagram.begin(), datagram.end());
}

// Writes the seed inputs into `directory`; false if a file cannot be written.
bool write_daemon_seeds(const char* directory);

}  // namespace vaccel::fuzz
