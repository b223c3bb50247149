// codec.hpp - the wire codec: vaccel_msg_header + op struct + payload.
//
// Owns nothing: a decoded MessageView points into the caller's bytes.
// Decides what a well-formed message is. Decoding is the gate (strict, in this
// order; the first failure is returned):
//   1. at least a header (InvalidArgument, D_BAD_SIZE, arg0 = bytes,
//      arg1 = sizeof header);
//   2. magic == VACCEL_MSG_MAGIC (D_BAD_VALUE, arg0 = 0 (its offset),
//      arg1 = magic found);
//   3. flags: no unknown bit (D_UNKNOWN_FLAGS, arg0 = bits); the response bit
//      matches the direction (D_BAD_VALUE, arg0 = 6 (offset of flags),
//      arg1 = flags);
//   4. opcode known (D_UNKNOWN_OPCODE, arg0 = opcode);
//   5. args_bytes == args_size(opcode) (D_BAD_SIZE, arg0 = args_bytes,
//      arg1 = expected);
//   6. VACCEL_MSG_PAYLOAD_FD only on the ops payload_may_use_fd() names
//      (D_BAD_VALUE, arg0 = 6, arg1 = flags); header + args + inline payload
//      == bytes exactly, truncated or oversized (D_BAD_SIZE, arg0 = bytes,
//      arg1 = size the header announces); a PAYLOAD_FD message has no inline
//      payload;
//   7. payload_bytes == what the op's rules require (request_payload_size /
//      response_payload_size; D_BAD_SIZE, arg0 = payload_bytes,
//      arg1 = required), or their own refusal; an ADMIN document is free up
//      to max_payload_bytes. Then where it travels: inline only up to
//      VACCEL_MSG_INLINE_MAX, by memfd only above it (D_BAD_SIZE,
//      arg0 = the size, arg1 = VACCEL_MSG_INLINE_MAX) - one encoding per
//      message. For a BUFFER_READ request "the size" is `length`, the bytes
//      its answer carries (inline, or into the passed file): a read of more
//      than VACCEL_MSG_INLINE_MAX without a file is malformed, and so is any
//      size above max_payload_bytes (arg1 = max_payload_bytes);
//   8. check_request_wire() on request args / check_response() on response
//      args (status, reserved, flags, and user pointers zero in requests).
// Encoding trusts its caller: it writes exactly what it is given.
//
// Byte order: the wire is little-endian and this code assumes a
// little-endian host (static_assert in codec.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "vaccel.h"
#include "vaccel/common/error.hpp"

namespace vaccel {

// A decoded message. Ownership: args and payload point into the bytes given
// to decode_*(); the view is valid only while those bytes are. With
// VACCEL_MSG_PAYLOAD_FD in header.flags, payload is empty and the
// header.payload_bytes bytes are in the memfd that came with the message
// (passing and checking the descriptor is the transport's job).
struct MessageView {
    vaccel_msg_header header;
    std::span<const std::byte> args;
    std::span<const std::byte> payload;
};

Result<MessageView> decode_request(std::span<const std::byte> bytes);
Result<MessageView> decode_response(std::span<const std::byte> bytes);

std::vector<std::byte> encode_request(std::uint32_t opcode, std::uint64_t seq,
                                      std::uint64_t session, std::span<const std::byte> args,
                                      std::span<const std::byte> payload);
std::vector<std::byte> encode_response(std::uint32_t opcode, std::uint64_t seq,
                                       std::uint64_t session, std::span<const std::byte> args,
                                       std::span<const std::byte> payload);

// Append variants: write the message at the end of `out` (no allocation when
// its capacity suffices). Returns the message's size.
std::size_t append_request(std::vector<std::byte>& out, std::uint32_t opcode, std::uint64_t seq,
                           std::uint64_t session, std::span<const std::byte> args,
                           std::span<const std::byte> payload);
std::size_t append_response(std::vector<std::byte>& out, std::uint32_t opcode,
                            std::uint64_t seq, std::uint64_t session,
                            std::span<const std::byte> args, std::span<const std::byte> payload);

// PAYLOAD_FD variants: the header carries VACCEL_MSG_PAYLOAD_FD and
// `payload_bytes`, nothing follows the struct; the caller passes the memfd.
std::size_t append_request_fd(std::vector<std::byte>& out, std::uint32_t opcode,
                              std::uint64_t seq, std::uint64_t session,
                              std::span<const std::byte> args, std::uint32_t payload_bytes);
std::size_t append_response_fd(std::vector<std::byte>& out, std::uint32_t opcode,
                               std::uint64_t seq, std::uint64_t session,
                               std::span<const std::byte> args, std::uint32_t payload_bytes);

// SESSION_NOTIFY's answer: VACCEL_MSG_PASSES_FD, no payload; the caller
// passes the descriptor.
std::size_t append_response_passing_fd(std::vector<std::byte>& out, std::uint32_t opcode,
                                       std::uint64_t seq, std::uint64_t session,
                                       std::span<const std::byte> args);

// The bytes of a uapi struct (or array of them), for encode_*().
template <class S>
std::span<const std::byte> bytes_of(const S& value)
{
    static_assert(std::is_trivially_copyable_v<S>);
    return std::as_bytes(std::span<const S, 1>(&value, 1));
}
template <class S>
std::span<const std::byte> bytes_of(std::span<const S> values)
{
    static_assert(std::is_trivially_copyable_v<S>);
    return std::as_bytes(values);
}

// Copies a decoded message's args into the op's struct. The caller picks S
// for the opcode it decoded; a size mismatch returns D_BAD_SIZE.
template <class S>
Result<S> args_as(const MessageView& message)
{
    static_assert(std::is_trivially_copyable_v<S>);
    if (message.args.size() != sizeof(S))
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, message.args.size(), sizeof(S));
    S value;
    std::memcpy(&value, message.args.data(), sizeof(S));
    return value;
}

}  // namespace vaccel
