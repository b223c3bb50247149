// socket_transport.cpp - the "socket" transport: the engine inside vacceld,
// reached over its SOCK_SEQPACKET socket.
//
// Owns: one SocketConnection (one daemon session) and its payload memfds
// (payload_file.hpp: one kept per connection, a fresh one for a call that
// finds it borrowed). Decides how a call becomes a message:
//  - the struct is checked first (wire_frames.hpp), so a bad argument is
//    refused here with the engine's own error instead of reaching the daemon
//    as a malformed message (which would end the session);
//  - a payload up to VACCEL_MSG_INLINE_MAX bytes travels inline; a larger
//    one in a memfd (VACCEL_MSG_PAYLOAD_FD);
//  - a BUFFER_READ of more than VACCEL_MSG_INLINE_MAX bytes passes a memfd
//    of exactly `length` bytes (header flag VACCEL_MSG_PAYLOAD_FD,
//    payload_bytes 0) that the daemon fills; the client reads it after the
//    response;
//  - the daemon gone: DeviceLost / VACCEL_D_PEER_GONE, -ENODEV.
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <cstring>
#include <optional>

#include "payload_file.hpp"
#include "socket_connection.hpp"
#include "transport.hpp"
#include "vaccel/vaccel.h"
#include "wire_frames.hpp"

namespace vaccel::lib {

namespace {

// Writes `error` into the struct's leading status; returns its errno.
int refuse(std::span<std::byte> args, const Error& error)
{
    if (args.size() >= sizeof(vaccel_status)) {
        const vaccel_status status = error.to_status();
        std::memcpy(args.data(), &status, sizeof status);
    }
    return error_errno(error.code);
}

// The errno of the status the daemon wrote into the struct.
int outcome(std::span<const std::byte> args)
{
    vaccel_status status;
    std::memcpy(&status, args.data(), sizeof status);
    return error_errno(Error::from_status(status).code);
}

class SocketTransport final : public Transport {
public:
    explicit SocketTransport(std::unique_ptr<SocketConnection> connection)
        : connection_(std::move(connection))
    {
    }

    const char* name() const override { return VACCEL_TRANSPORT_SOCKET; }
    bool has_admin_channel() const override { return true; }

    int call(std::uint32_t opcode, void* args, std::size_t args_size,
             std::span<const std::byte> in, std::span<std::byte> out) override
    {
        const std::span<std::byte> arg_bytes(static_cast<std::byte*>(args), args_size);
        const bool large_read = opcode == VACCEL_OP_BUFFER_READ && out.size() > VACCEL_MSG_INLINE_MAX;
        Incoming incoming{arg_bytes, large_read ? std::span<std::byte>{} : out, nullptr, 0, 0};
        return exchange(opcode, arg_bytes, in, incoming, large_read ? out.size() : 0, out);
    }

    int admin(struct vaccel_admin& args, std::span<const std::byte> request,
              std::vector<std::byte>& response) override
    {
        const std::span<std::byte> arg_bytes(reinterpret_cast<std::byte*>(&args), sizeof args);
        response.clear();
        Incoming incoming{arg_bytes, {}, &response, 0, 0};
        return exchange(VACCEL_OP_ADMIN, arg_bytes, request, incoming, 0, {});
    }

    int notify_fd(vaccel_status& status) override
    {
        std::lock_guard lock(notify_mutex_);
        if (notify_ >= 0)
            return notify_;
        struct vaccel_session_notify args{};
        const std::span<std::byte> arg_bytes(reinterpret_cast<std::byte*>(&args), sizeof args);
        int passed = -1;
        Incoming incoming{arg_bytes, {}, nullptr, 0, 0, &passed};
        const int rc = exchange(VACCEL_OP_SESSION_NOTIFY, arg_bytes, {}, incoming, 0, {});
        status = args.status;
        if (rc != 0) {
            if (passed >= 0)
                close(passed);
            return rc;
        }
        notify_ = passed;
        return notify_;
    }

    // The daemon passes the buffer's memfd with its answer; it is mapped
    // here and closed (the mapping keeps the pages).
    int map_buffer(struct vaccel_buffer_map& args, Mapping& mapping) override
    {
        const std::span<std::byte> arg_bytes(reinterpret_cast<std::byte*>(&args), sizeof args);
        int passed = -1;
        Incoming incoming{arg_bytes, {}, nullptr, 0, 0, &passed};
        const int rc = exchange(VACCEL_OP_BUFFER_MAP, arg_bytes, {}, incoming, 0, {});
        if (rc != 0) {
            if (passed >= 0)
                close(passed);
            return rc;
        }
        const int mapped = map_shared(passed, args.map_offset, args.map_bytes, mapping, args.status);
        close(passed);
        return mapped;
    }

    ~SocketTransport() override
    {
        if (notify_ >= 0)
            close(notify_);
    }

private:
    std::mutex notify_mutex_;
    int notify_ = -1;  // Ownership: this transport's, closed with it

    // One request and its response. `read_file_bytes` > 0: a large
    // BUFFER_READ whose data comes back in the passed memfd, into `out`.
    int exchange(std::uint32_t opcode, std::span<std::byte> args, std::span<const std::byte> in,
                 Incoming& incoming, std::size_t read_file_bytes, std::span<std::byte> out)
    {
        if (auto checked = check_outgoing(opcode, args, in.size()); !checked)
            return refuse(args, checked.error());

        Outgoing outgoing{opcode, 0, args, in, in.size(), -1};
        std::optional<PayloadFile> file;
        if (in.size() > VACCEL_MSG_INLINE_MAX || read_file_bytes > 0) {
            auto borrowed = files_.borrow();
            if (!borrowed)
                return refuse(args, borrowed.error());
            file.emplace(std::move(*borrowed));
            auto ready = read_file_bytes > 0 ? file->resize(read_file_bytes) : file->store(in);
            if (!ready)
                return finish(file, refuse(args, ready.error()));
            outgoing.flags = VACCEL_MSG_PAYLOAD_FD;
            outgoing.inline_payload = {};
            outgoing.payload_bytes = read_file_bytes > 0 ? 0 : in.size();
            outgoing.fd = file->fd();
        }

        if (auto done = connection_->exchange(outgoing, incoming); !done)
            return finish(file, refuse(args, done.error()));
        const int rc = outcome(args);
        if (rc == 0 && read_file_bytes > 0) {
            // The data is in our file: the response must say so.
            if ((incoming.flags & VACCEL_MSG_PAYLOAD_FD) == 0 ||
                incoming.payload_bytes != read_file_bytes)
                return finish(file, refuse(args, Error::of(Errc::invalid_argument,
                                                           VACCEL_D_BAD_SIZE,
                                                           incoming.payload_bytes,
                                                           read_file_bytes)));
            if (auto loaded = file->load(out); !loaded)
                return finish(file, refuse(args, loaded.error()));
        }
        return finish(file, rc);
    }

    int finish(std::optional<PayloadFile>& file, int rc)
    {
        if (file)
            files_.give_back(std::move(*file));
        return rc;
    }

    std::unique_ptr<SocketConnection> connection_;
    PayloadFiles files_;
};

}  // namespace

std::string daemon_socket_path()
{
    const char* env = std::getenv("VACCEL_SOCKET");
    return env != nullptr && env[0] != '\0' ? env : VACCEL_SOCKET_DEFAULT;
}

Result<std::unique_ptr<Transport>> open_socket_transport(const std::string& path,
                                                         int* connect_errno)
{
    auto connection = SocketConnection::connect(path, connect_errno);
    if (!connection)
        return std::unexpected(std::move(connection.error()));
    return std::make_unique<SocketTransport>(std::move(*connection));
}

}  // namespace vaccel::lib
