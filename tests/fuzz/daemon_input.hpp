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
//
// A record whose length has its top bit set (directive_flag) is no
// datagram but a directive of (length & 0x7fff) bytes: what the client does
// with shared memory between two requests. Its first byte is a Directive,
// the rest its operands (little-endian):
//  - attach_memfd: u8 seals (SealBits), u8 fill, u32 size, then the file's
//    first bytes: the next datagram goes with a new memfd of `size` bytes
//    (at most max_payload_file) holding them, the rest `fill`, sealed so;
//    it stays the input's payload file;
//  - attach_other: u8 OtherFile: the next datagram goes with a descriptor
//    that is no memfd;
//  - reattach: the next datagram goes with the payload file again;
//  - resize_payload: u32 size: ftruncate of the payload file (a seal may
//    refuse it);
//  - rewrite_payload: u32 offset, then bytes: pwrite into it;
//  - resize_mapping: u32 size: ftruncate of the memfd the last BUFFER_MAP
//    passed, which must be refused (a buffer's file never changes size);
//  - write_mapping: u32 offset, then bytes: written through a mapping of
//    that memfd, as a client using its mapped buffer does;
//  - punch_mapping: u32 offset, u32 bytes: a hole punched into it.
// Datagrams are therefore at most 0x7fff bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vaccel::fuzz {

inline constexpr std::uint64_t handle_placeholder_mask = 0xFFFF'FFFF'FFFF'0000ull;
inline constexpr std::size_t max_records = 64;

inline constexpr std::size_t directive_flag = 0x8000;
inline constexpr std::size_t max_payload_file = 1u << 20;

enum class Directive : std::uint8_t {
    attach_memfd = 0,
    attach_other = 1,
    reattach = 2,
    resize_payload = 3,
    rewrite_payload = 4,
    resize_mapping = 5,
    write_mapping = 6,
    punch_mapping = 7,
};
inline constexpr std::uint8_t directive_count = 8;

// attach_memfd's seals byte.
enum SealBits : std::uint8_t {
    seal_shrink = 1,
    seal_grow = 2,
    seal_write = 4,
    seal_future_write = 8,
    seal_seal = 16,
};

// attach_other's kind (taken modulo the count).
enum class OtherFile : std::uint8_t { pipe = 0, regular = 1, socket = 2, dev_null = 3 };
inline constexpr std::uint8_t other_file_count = 4;

// Appends one directive record.
inline void append_directive(std::vector<std::byte>& input, Directive directive,
                             const std::vector<std::byte>& operands)
{
    const std::size_t size = (1 + operands.size()) | directive_flag;
    input.push_back(static_cast<std::byte>(size & 0xff));
    input.push_back(static_cast<std::byte>((size >> 8) & 0xff));
    input.push_back(static_cast<std::byte>(directive));
    input.insert(input.end(), operands.begin(), operands.end());
}

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
