// raw_wire.cpp - the test's own connection to the daemon, and the malformed
// messages sent on it.
//
// Owns: the catalogue of malformed messages. Decides: each one breaks
// exactly one rule of the wire format (uapi/vaccel.h "Wire protocol"), the
// others being kept, so a refusal can only be for that rule; the random
// case uses a fixed seed, so every run sends the same bytes.
#include "raw_wire.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include "e2e_client.hpp"
#include "modes.hpp"
#include "vaccel/common/codec.hpp"

namespace vaccel::e2e {

RawConnection RawConnection::open(const char* socket_path)
{
    const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    E2E_EXPECT(fd >= 0, "socket: {}", std::strerror(errno));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    E2E_EXPECT(std::strlen(socket_path) < sizeof address.sun_path, "socket path too long");
    std::strcpy(address.sun_path, socket_path);
    E2E_EXPECT(connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0,
               "connect to {}: {}", socket_path, std::strerror(errno));
    return RawConnection(fd);
}

RawConnection::~RawConnection()
{
    if (fd_ >= 0) close(fd_);
}

bool RawConnection::send(std::span<const std::byte> bytes)
{
    const ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && (errno == EPIPE || errno == ECONNRESET)) return false;
    E2E_EXPECT(sent == ssize_t(bytes.size()), "send of {} bytes: {}", bytes.size(),
               sent < 0 ? std::strerror(errno) : std::to_string(sent));
    return true;
}

RawConnection::Received RawConnection::receive(int timeout_ms)
{
    pollfd ready{fd_, POLLIN, 0};
    const int polled = poll(&ready, 1, timeout_ms);
    E2E_EXPECT(polled >= 0, "poll: {}", std::strerror(errno));
    if (polled == 0) return {Received::Kind::timeout, {}};
    std::vector<std::byte> bytes(VACCEL_MSG_INLINE_MAX + 4096);
    const ssize_t got = recv(fd_, bytes.data(), bytes.size(), 0);
    if (got == 0 || (got < 0 && errno == ECONNRESET)) return {Received::Kind::closed, {}};
    E2E_EXPECT(got > 0, "recv: {}", std::strerror(errno));
    bytes.resize(std::size_t(got));
    return {Received::Kind::message, std::move(bytes)};
}

namespace {

std::uint64_t next_seq = 1;

template <class Args>
Args expect_response(RawConnection& connection, std::uint32_t opcode, std::uint64_t seq,
                     std::vector<std::byte>* payload = nullptr)
{
    const auto received = connection.receive(5000);
    E2E_EXPECT(received.kind == RawConnection::Received::Kind::message,
               "no response to opcode {:#x} (the connection {})", opcode,
               received.kind == RawConnection::Received::Kind::closed ? "was closed" : "timed out");
    auto message = decode_response(received.bytes);
    E2E_EXPECT(message.has_value(), "undecodable response: {}", describe(message.error()));
    E2E_EXPECT(message->header.opcode == opcode && message->header.seq == seq,
               "response opcode {:#x} seq {} for opcode {:#x} seq {}", message->header.opcode,
               message->header.seq, opcode, seq);
    if (payload) payload->assign(message->payload.begin(), message->payload.end());
    auto args = args_as<Args>(*message);
    E2E_EXPECT(args.has_value(), "response args: {}", describe(args.error()));
    return *args;
}

}  // namespace

void RawConnection::expect_served()
{
    const struct vaccel_get_version args{};
    const std::uint64_t seq = next_seq++;
    E2E_EXPECT(send(encode_request(VACCEL_OP_GET_VERSION, seq, 0, bytes_of(args), {})),
               "the daemon closed a new connection");
    const auto reply =
        expect_response<struct vaccel_get_version>(*this, VACCEL_OP_GET_VERSION, seq);
    E2E_EXPECT(reply.status.error == VACCEL_OK && reply.major == VACCEL_ABI_MAJOR,
               "GET_VERSION: {} major {}", vaccel_error_name(reply.status.error), reply.major);
}

namespace {

std::vector<std::byte> get_version_request()
{
    const struct vaccel_get_version args{};
    return encode_request(VACCEL_OP_GET_VERSION, 7, 0, bytes_of(args), {});
}

vaccel_msg_header& header_of(std::vector<std::byte>& message)
{
    return *reinterpret_cast<vaccel_msg_header*>(message.data());
}

// The malformed message `kind`, or nothing for an unknown kind.
std::optional<std::vector<std::byte>> malformed_message(std::string_view kind)
{
    auto message = get_version_request();
    if (kind == "truncated-header") {
        message.resize(sizeof(vaccel_msg_header) / 2);
    } else if (kind == "truncated-args") {
        message.resize(message.size() - 4);
    } else if (kind == "trailing-bytes") {
        message.resize(message.size() + 16);
    } else if (kind == "oversized") {
        // A BUFFER_WRITE whose inline payload is over VACCEL_MSG_INLINE_MAX,
        // every size field consistent with it.
        const std::uint64_t length = VACCEL_MSG_INLINE_MAX + 1;
        vaccel_buffer_transfer args{};
        args.buffer = 1;
        args.length = length;
        const std::vector<std::byte> payload(length, std::byte{0x5a});
        message = encode_request(VACCEL_OP_BUFFER_WRITE, 7, 0, bytes_of(args), payload);
    } else if (kind == "read-length-over-inline") {
        // A BUFFER_READ of 1 TiB asking for an inline answer: above
        // VACCEL_MSG_INLINE_MAX the requester must pass the file.
        vaccel_buffer_transfer args{};
        args.buffer = 1;
        args.length = std::uint64_t{1} << 40;
        message = encode_request(VACCEL_OP_BUFFER_READ, 7, 0, bytes_of(args), {});
    } else if (kind == "wrong-args-size") {
        // GET_VERSION with 8 bytes of args fewer than its struct, the
        // datagram as long as the header says.
        header_of(message).args_bytes -= 8;
        message.resize(message.size() - 8);
    } else if (kind == "reserved-bits") {
        struct vaccel_get_version args{};
        args.reserved[1] = 1;
        message = encode_request(VACCEL_OP_GET_VERSION, 7, 0, bytes_of(args), {});
    } else if (kind == "unknown-header-flags") {
        header_of(message).flags = 1u << 9;
    } else if (kind == "response-flag") {
        header_of(message).flags = VACCEL_MSG_RESPONSE;
    } else if (kind == "unknown-opcode") {
        header_of(message).opcode = 0x7e;
    } else if (kind == "payload-fd-without-fd") {
        vaccel_buffer_transfer args{};
        args.buffer = 1;
        args.length = 1u << 20;
        message.clear();
        append_request_fd(message, VACCEL_OP_BUFFER_WRITE, 7, 0, bytes_of(args), 1u << 20);
    } else if (kind == "random-bytes") {
        std::mt19937 random(20240531);
        message.resize(4096);
        for (std::byte& b : message) b = std::byte(random() & 0xff);
    } else {
        return std::nullopt;
    }
    return message;
}

}  // namespace

int malformed_mode(std::string_view kind)
{
    const char* socket_path = std::getenv("VACCEL_SOCKET");
    E2E_EXPECT(socket_path != nullptr, "VACCEL_SOCKET is not set");
    const auto message = malformed_message(kind);
    E2E_EXPECT(message.has_value(), "unknown malformed kind '{}'", kind);
    {
        RawConnection offender = RawConnection::open(socket_path);
        offender.expect_served();  // a session exists before the fault
        (void)offender.send(*message);
        const auto received = offender.receive(5000);
        E2E_EXPECT(received.kind == RawConnection::Received::Kind::closed,
                   "after the {} message the connection {}", kind,
                   received.kind == RawConnection::Received::Kind::timeout
                       ? "stayed open for 5 s"
                       : "got an answer instead of being closed");
    }
    RawConnection next = RawConnection::open(socket_path);
    next.expect_served();
    fmt::print("malformed: {}: that connection was closed; a new one is served\n", kind);
    return 0;
}

}  // namespace vaccel::e2e
