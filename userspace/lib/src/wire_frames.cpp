// wire_frames.cpp - request checks and framing, response decoding, for the
// socket transport (wire_frames.hpp says what each decides).
#include "wire_frames.hpp"

#include "vaccel/common/requests.hpp"

namespace vaccel::lib {

Status check_outgoing(std::uint32_t opcode, std::span<const std::byte> args,
                      std::size_t payload_bytes)
{
    if (auto checked = check_request_wire(opcode, args); !checked)
        return checked;
    if (payload_is_document(opcode)) {
        if (payload_bytes > max_payload_bytes)
            return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, payload_bytes,
                        max_payload_bytes);
        return {};
    }
    auto required = request_payload_size(opcode, args);
    if (!required)
        return fail(std::move(required.error()));
    if (*required != payload_bytes)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, payload_bytes, *required);
    return {};
}

void frame_request(std::vector<std::byte>& out, std::uint32_t opcode, std::uint64_t seq,
                   std::span<const std::byte> args, std::span<const std::byte> inline_payload,
                   bool by_file, std::size_t payload_bytes)
{
    out.clear();
    if (by_file)
        append_request_fd(out, opcode, seq, 0, args, static_cast<std::uint32_t>(payload_bytes));
    else
        append_request(out, opcode, seq, 0, args, inline_payload);
}

Result<MessageView> decode_reply(std::span<const std::byte> bytes, std::uint32_t opcode)
{
    auto message = decode_response(bytes);
    if (!message)
        return message;
    if (message->header.opcode != opcode)
        return fail(Errc::invalid_argument, VACCEL_D_UNKNOWN_OPCODE, message->header.opcode);
    return message;
}

}  // namespace vaccel::lib
