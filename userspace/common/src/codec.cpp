// codec.cpp - strict decoding and plain encoding of wire messages.
//
// Decides the order of the decoding checks (codec.hpp lists it). Encoding
// writes exactly what it is given; decoding is where the rules are enforced.
#include "vaccel/common/codec.hpp"

#include <bit>
#include <cstddef>

#include "vaccel/common/requests.hpp"

namespace vaccel {

static_assert(std::endian::native == std::endian::little,
              "the vaccel wire is little-endian and this codec copies structs as they lie");
static_assert(sizeof(vaccel_msg_header) == 32, "the wire header is 32 bytes");

namespace {

constexpr std::uint16_t known_header_flags =
    VACCEL_MSG_RESPONSE | VACCEL_MSG_PAYLOAD_FD | VACCEL_MSG_PASSES_FD;

enum class Direction { request, response };

// The payload bytes a message moves: payload_bytes, or for a BUFFER_READ
// request the length its answer will carry (inline or into the passed file).
std::uint64_t fd_payload_size(const vaccel_msg_header& h, std::span<const std::byte> args,
                              Direction direction)
{
    if (direction == Direction::request && h.opcode == VACCEL_OP_BUFFER_READ) {
        std::uint64_t length = 0;
        std::memcpy(&length, args.data() + offsetof(vaccel_buffer_transfer, length),
                    sizeof length);
        return length;
    }
    return h.payload_bytes;
}

Result<MessageView> decode(std::span<const std::byte> bytes, Direction direction)
{
    // 1. A whole header.
    if (bytes.size() < sizeof(vaccel_msg_header))
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, bytes.size(),
                    sizeof(vaccel_msg_header));
    MessageView view{};
    std::memcpy(&view.header, bytes.data(), sizeof(vaccel_msg_header));
    const vaccel_msg_header& h = view.header;

    // 2. Magic.
    if (h.magic != VACCEL_MSG_MAGIC)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                    offsetof(vaccel_msg_header, magic), h.magic);

    // 3. Flags: known bits, and the response bit matching the direction.
    if (const std::uint16_t unknown = h.flags & ~known_header_flags; unknown != 0)
        return fail(Errc::invalid_argument, VACCEL_D_UNKNOWN_FLAGS, unknown);
    const bool is_response = (h.flags & VACCEL_MSG_RESPONSE) != 0;
    if (is_response != (direction == Direction::response))
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                    offsetof(vaccel_msg_header, flags), h.flags);
    // Only SESSION_NOTIFY's and BUFFER_MAP's answers pass a descriptor that
    // is no payload.
    if ((h.flags & VACCEL_MSG_PASSES_FD) != 0 &&
        (!is_response ||
         (h.opcode != VACCEL_OP_SESSION_NOTIFY && h.opcode != VACCEL_OP_BUFFER_MAP) ||
         (h.flags & VACCEL_MSG_PAYLOAD_FD) != 0))
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                    offsetof(vaccel_msg_header, flags), h.flags);

    // 4. Opcode.
    const std::size_t expected_args = args_size(h.opcode);
    if (expected_args == 0)
        return fail(Errc::invalid_argument, VACCEL_D_UNKNOWN_OPCODE, h.opcode);

    // 5. The op's struct, exactly.
    if (h.args_bytes != expected_args)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, h.args_bytes, expected_args);

    // 6. Total size, exactly (64-bit sum: the two u32 fields cannot overflow).
    //    A PAYLOAD_FD message carries nothing after its struct.
    const bool in_fd = (h.flags & VACCEL_MSG_PAYLOAD_FD) != 0;
    if (in_fd && !payload_may_use_fd(h.opcode, is_response))
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                    offsetof(vaccel_msg_header, flags), h.flags);
    const std::uint64_t inline_bytes = in_fd ? 0 : h.payload_bytes;
    const std::uint64_t announced =
        std::uint64_t{sizeof(vaccel_msg_header)} + h.args_bytes + inline_bytes;
    if (bytes.size() != announced)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, bytes.size(), announced);
    view.args = bytes.subspan(sizeof(vaccel_msg_header), h.args_bytes);
    view.payload = bytes.subspan(sizeof(vaccel_msg_header) + h.args_bytes, inline_bytes);

    // 7. The payload the op requires, and where it travels: inline up to
    //    VACCEL_MSG_INLINE_MAX, in a memfd above it.
    if (payload_is_document(h.opcode)) {
        if (h.payload_bytes > max_payload_bytes)
            return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, h.payload_bytes,
                        max_payload_bytes);
    } else {
        auto required = direction == Direction::request
                            ? request_payload_size(h.opcode, view.args)
                            : response_payload_size(h.opcode, view.args);
        if (!required)
            return fail(std::move(required.error()));
        if (h.payload_bytes != *required)
            return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, h.payload_bytes, *required);
    }
    //    A BUFFER_READ request names the size of its answer in `length`:
    //    inline up to the maximum, into the passed file above it (and never
    //    more than max_payload_bytes).
    const std::uint64_t travelling = fd_payload_size(h, view.args, direction);
    if (travelling > max_payload_bytes)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, travelling, max_payload_bytes);
    if (in_fd ? travelling <= VACCEL_MSG_INLINE_MAX : travelling > VACCEL_MSG_INLINE_MAX)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, travelling, VACCEL_MSG_INLINE_MAX);

    // 8. The struct's own rules.
    auto checked = direction == Direction::request ? check_request_wire(h.opcode, view.args)
                                                   : check_response(h.opcode, view.args);
    if (!checked)
        return fail(std::move(checked.error()));
    return view;
}

std::size_t append(std::vector<std::byte>& out, std::uint32_t opcode, std::uint16_t flags,
                   std::uint64_t seq, std::uint64_t session, std::span<const std::byte> args,
                   std::span<const std::byte> payload)
{
    vaccel_msg_header header{};
    header.magic = VACCEL_MSG_MAGIC;
    header.opcode = static_cast<std::uint16_t>(opcode);
    header.flags = flags;
    header.args_bytes = static_cast<std::uint32_t>(args.size());
    header.payload_bytes = static_cast<std::uint32_t>(payload.size());
    header.seq = seq;
    header.session = session;

    const std::size_t total = sizeof(header) + args.size() + payload.size();
    const std::size_t at = out.size();
    out.resize(at + total);
    std::byte* p = out.data() + at;
    std::memcpy(p, &header, sizeof(header));
    if (!args.empty())
        std::memcpy(p + sizeof(header), args.data(), args.size());
    if (!payload.empty())
        std::memcpy(p + sizeof(header) + args.size(), payload.data(), payload.size());
    return total;
}

}  // namespace

Result<MessageView> decode_request(std::span<const std::byte> bytes)
{
    return decode(bytes, Direction::request);
}

Result<MessageView> decode_response(std::span<const std::byte> bytes)
{
    return decode(bytes, Direction::response);
}

std::size_t append_request(std::vector<std::byte>& out, std::uint32_t opcode, std::uint64_t seq,
                           std::uint64_t session, std::span<const std::byte> args,
                           std::span<const std::byte> payload)
{
    return append(out, opcode, 0, seq, session, args, payload);
}

std::size_t append_response(std::vector<std::byte>& out, std::uint32_t opcode,
                            std::uint64_t seq, std::uint64_t session,
                            std::span<const std::byte> args, std::span<const std::byte> payload)
{
    return append(out, opcode, VACCEL_MSG_RESPONSE, seq, session, args, payload);
}

std::size_t append_request_fd(std::vector<std::byte>& out, std::uint32_t opcode,
                              std::uint64_t seq, std::uint64_t session,
                              std::span<const std::byte> args, std::uint32_t payload_bytes)
{
    const std::size_t at = out.size();
    const std::size_t total = append(out, opcode, VACCEL_MSG_PAYLOAD_FD, seq, session, args, {});
    std::memcpy(out.data() + at + offsetof(vaccel_msg_header, payload_bytes), &payload_bytes,
                sizeof payload_bytes);
    return total;
}

std::size_t append_response_fd(std::vector<std::byte>& out, std::uint32_t opcode,
                               std::uint64_t seq, std::uint64_t session,
                               std::span<const std::byte> args, std::uint32_t payload_bytes)
{
    const std::size_t at = out.size();
    const std::size_t total = append(out, opcode, VACCEL_MSG_RESPONSE | VACCEL_MSG_PAYLOAD_FD, seq,
                                     session, args, {});
    std::memcpy(out.data() + at + offsetof(vaccel_msg_header, payload_bytes), &payload_bytes,
                sizeof payload_bytes);
    return total;
}

std::size_t append_response_passing_fd(std::vector<std::byte>& out, std::uint32_t opcode,
                                       std::uint64_t seq, std::uint64_t session,
                                       std::span<const std::byte> args)
{
    return append(out, opcode, VACCEL_MSG_RESPONSE | VACCEL_MSG_PASSES_FD, seq, session, args, {});
}

std::vector<std::byte> encode_request(std::uint32_t opcode, std::uint64_t seq,
                                      std::uint64_t session, std::span<const std::byte> args,
                                      std::span<const std::byte> payload)
{
    std::vector<std::byte> out;
    out.reserve(sizeof(vaccel_msg_header) + args.size() + payload.size());
    append_request(out, opcode, seq, session, args, payload);
    return out;
}

std::vector<std::byte> encode_response(std::uint32_t opcode, std::uint64_t seq,
                                       std::uint64_t session, std::span<const std::byte> args,
                                       std::span<const std::byte> payload)
{
    std::vector<std::byte> out;
    out.reserve(sizeof(vaccel_msg_header) + args.size() + payload.size());
    append_response(out, opcode, seq, session, args, payload);
    return out;
}

}  // namespace vaccel
