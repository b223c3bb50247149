// requests.hpp - the per-opcode rules of the contract's argument structs.
//
// Owns nothing. Decides, for every enum vaccel_op, the size of its struct,
// which of its fields are status, pad/reserved, flags and user pointers, what
// flags are defined, and how many payload bytes a message must carry (the
// wire rules in uapi/vaccel.h). Shared by the daemon, the embedded transport
// and the kernel path, so it knows nothing about any transport.
//
// Field ids: where a refusal uses VACCEL_D_BAD_VALUE, arg0 is the byte offset
// of the field inside the op's struct (its field id) and arg1 the value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "vaccel.h"
#include "vaccel/common/error.hpp"

namespace vaccel {

// The most payload one message may carry (1 GiB). Larger transfers are split
// by the caller; a request announcing more is InvalidArgument (D_BAD_SIZE,
// arg0 = announced bytes, arg1 = max_payload_bytes).
inline constexpr std::size_t max_payload_bytes = std::size_t{1} << 30;

// sizeof the op's struct; 0 for an unknown opcode.
std::size_t args_size(std::uint32_t opcode);
// "SUBMIT", "BUFFER_WRITE", ...; "UNKNOWN" for an unknown opcode.
std::string_view op_name(std::uint32_t opcode);

// True for VACCEL_OP_ADMIN: its request and response payloads are documents
// whose size is the header's payload_bytes (up to max_payload_bytes), not a
// size the struct fixes; request_payload_size()/response_payload_size()
// return 0 for it.
bool payload_is_document(std::uint32_t opcode);

// Whether a message of `opcode` may carry VACCEL_MSG_PAYLOAD_FD: requests of
// BUFFER_WRITE, PROGRAM_LOAD, BUFFER_READ (the file to receive the data) and
// ADMIN; responses of BUFFER_READ and ADMIN.
bool payload_may_use_fd(std::uint32_t opcode, bool response);

// The flags an op defines (VACCEL_WAIT_ALL on EVENT_WAIT; 0 elsewhere).
std::uint32_t op_known_flags(std::uint32_t opcode);

// A request's struct as a caller hands it in, in this order:
//  - opcode known (InvalidArgument, D_UNKNOWN_OPCODE, arg0 = opcode);
//  - size exact (InvalidArgument, D_BAD_SIZE, arg0 = given, arg1 = expected);
//  - the leading vaccel_status all zero, then every pad/reserved field zero
//    (InvalidArgument, D_RESERVED_NONZERO, arg0 = offset of the first
//    non-zero byte in the struct);
//  - no unknown flag bits (InvalidArgument, D_UNKNOWN_FLAGS, arg0 = bits).
// Output fields are not looked at; user pointers are allowed (an ioctl
// carries them); see check_request_wire() for the wire.
Status check_request(std::uint32_t opcode, std::span<const std::byte> args);

// check_request() plus: every user-pointer field (data, payload, bindings,
// events) is zero, as the wire requires (InvalidArgument,
// D_RESERVED_NONZERO, arg0 = offset of the pointer field).
Status check_request_wire(std::uint32_t opcode, std::span<const std::byte> args);

// A response's struct: opcode known, size exact, status well formed (error,
// detail and limit inside their enums, status.scope's kind known and zero
// unless the detail is VACCEL_D_LIMIT), pad/reserved fields
// zero, flags known (responses echo the request's flags).
Status check_response(std::uint32_t opcode, std::span<const std::byte> args);

// The payload a request must carry (args must be the right size):
//  - BUFFER_WRITE: length; PROGRAM_LOAD: payload_bytes; both capped at
//    max_payload_bytes;
//  - SUBMIT, SUBMIT_AFTER: binding_count * sizeof(vaccel_binding);
//    binding_count 0 is InvalidArgument (D_BAD_VALUE), above
//    VACCEL_MAX_BINDINGS ResourceLimit (VACCEL_LIMIT_BINDINGS, arg0 =
//    VACCEL_MAX_BINDINGS, arg1 = count);
//  - LAUNCH: binding_count * sizeof(vaccel_binding) + argv_bytes; above
//    VACCEL_MAX_BINDINGS or VACCEL_MAX_KERNEL_ARGS_BYTES ResourceLimit
//    (VACCEL_LIMIT_BINDINGS / VACCEL_LIMIT_KERNEL_ARGS_BYTES);
//  - EVENT_WAIT: count * 8, count 1..VACCEL_MAX_WAIT_EVENTS else
//    InvalidArgument (D_BAD_VALUE);
//  - every other op: 0.
Result<std::size_t> request_payload_size(std::uint32_t opcode, std::span<const std::byte> args);

// The payload a response must carry: BUFFER_READ that succeeded (status.error
// == VACCEL_OK): length (capped like requests); everything else: 0.
Result<std::size_t> response_payload_size(std::uint32_t opcode, std::span<const std::byte> args);

}  // namespace vaccel
