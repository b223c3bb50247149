// kernel_intake.cpp - taking a message the vaccel module delivered into a
// slot's buffer (uapi/vaccel_server.h).
//
// Decides that the kernel path is held to the socket's rules: the module
// checks every ioctl before forwarding it, and the daemon checks again
// (header, struct, payload size) with the same code the socket path uses
// (requests.hpp), trusting nothing it did not check itself. What differs
// from a datagram: flags are always 0 (no memfd; payloads stay on the
// slot), and a message that fails a check is answered with the refusal
// rather than ending anything - the slot must be answered exactly once.
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "vaccel/common/requests.hpp"
#include "vaccel/daemon/exchange.hpp"
#include "vaccel_server.h"

namespace vaccel::daemon {

Request kernel_echo(std::span<const std::byte> message, ServerSlot where)
{
    Request request;
    std::memcpy(&request.header, message.data(),
                std::min(message.size(), sizeof request.header));
    request.server_slot = where;
    request.server_slot->seq = request.header.seq;
    const auto after = message.size() > sizeof request.header
                           ? message.subspan(sizeof request.header)
                           : std::span<const std::byte>{};
    const std::size_t announced = std::min<std::size_t>(request.header.args_bytes, after.size());
    request.args.assign(after.begin(), after.begin() + static_cast<std::ptrdiff_t>(announced));
    // Invariant: refusal() writes a status at the front of args.
    if (request.args.size() < sizeof(vaccel_status))
        request.args.resize(sizeof(vaccel_status));
    std::memset(request.args.data(), 0, sizeof(vaccel_status));
    return request;
}

Result<Request> take_kernel_request(std::span<const std::byte> message, ServerSlot where)
{
    constexpr std::size_t header_bytes = sizeof(vaccel_msg_header);
    if (message.size() < header_bytes)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_SIZE, message.size(), header_bytes)
                        .with_note("the module delivered less than a message header"));
    Request request;
    std::memcpy(&request.header, message.data(), header_bytes);
    const vaccel_msg_header& h = request.header;
    // The payload position names the request by its seq (the slot's
    // generation): the one delivered in this very message.
    request.server_slot = where;
    request.server_slot->seq = h.seq;
    if (h.magic != VACCEL_MSG_MAGIC)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE, offsetof(vaccel_msg_header, magic),
                    h.magic);
    if (h.flags != 0)
        return fail(Errc::invalid_argument, VACCEL_D_UNKNOWN_FLAGS, h.flags);
    const std::size_t expected = args_size(h.opcode);
    if (expected == 0 || h.opcode == VACCEL_OP_ADMIN || h.opcode == VACCEL_OP_SESSION_NOTIFY)
        return fail(Errc::invalid_argument, VACCEL_D_UNKNOWN_OPCODE, h.opcode);
    if (h.args_bytes != expected)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, h.args_bytes, expected);
    if (message.size() != header_bytes + expected)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, message.size(),
                    header_bytes + expected);
    const auto args = message.subspan(header_bytes);
    if (auto checked = check_request_wire(h.opcode, args); !checked)
        return fail(std::move(checked.error()));
    auto required = request_payload_size(h.opcode, args);
    if (!required)
        return fail(std::move(required.error()));
    if (h.payload_bytes != *required)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, h.payload_bytes, *required);
    request.args.assign(args.begin(), args.end());
    if (h.opcode == VACCEL_OP_EVENT_WAIT || h.opcode == VACCEL_OP_SUBMIT ||
        h.opcode == VACCEL_OP_RUN) {
        // Invariant: at most VACCEL_MAX_WAIT_EVENTS handles or
        // VACCEL_MAX_BINDINGS bindings (request_payload_size bounded the
        // count): at most 2 KiB copied out of the module's pinned pages,
        // never a device wait. Read here so that a wait can park on the
        // reactor, a submit can be a short call (ADR 0007) and a run can park.
        auto handles = payload_of(request, *required);
        if (!handles)
            return fail(std::move(handles.error()));
        request.payload = std::move(*handles);
    }
    return request;
}

}  // namespace vaccel::daemon
