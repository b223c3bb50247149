// wire_frames.hpp - the socket transport's use of the wire codec.
//
// Owns nothing. Decides what the client checks and frames around the shared
// codec (vaccel/common/codec.hpp, the one definition of a well-formed
// message):
//  - before sending, the request's struct and payload size are checked as
//    the engine checks them first (check_request_wire(), the payload rules),
//    so a caller's bad argument is refused here exactly as the embedded
//    transport refuses it, instead of reaching the daemon as a malformed
//    message (which ends the session);
//  - a request is framed by the codec: inline payload, or the PAYLOAD_FD
//    form whose bytes travel in a memfd;
//  - a response must decode (decode_response()) and echo the opcode of the
//    request whose seq it carries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "vaccel.h"
#include "vaccel/common/codec.hpp"
#include "vaccel/common/error.hpp"

namespace vaccel::lib {

// The request's struct and the payload the caller hands over (`payload_bytes`),
// checked as the engine would. ADMIN documents may be any size up to
// max_payload_bytes.
Status check_outgoing(std::uint32_t opcode, std::span<const std::byte> args,
                      std::size_t payload_bytes);

// Writes header + struct (+ `inline_payload`) into `out` (cleared first).
// With `by_file`, the header carries VACCEL_MSG_PAYLOAD_FD and
// `payload_bytes` (0 for a BUFFER_READ), and nothing follows the struct.
void frame_request(std::vector<std::byte>& out, std::uint32_t opcode, std::uint64_t seq,
                   std::span<const std::byte> args, std::span<const std::byte> inline_payload,
                   bool by_file, std::size_t payload_bytes);

// The received bytes as a response to a request of `opcode`, or why not.
Result<MessageView> decode_reply(std::span<const std::byte> bytes, std::uint32_t opcode);

}  // namespace vaccel::lib
