// raw_wire.hpp - a client connection without libvaccel: the test's own
// SOCK_SEQPACKET socket to the daemon, for what libvaccel never sends
// (malformed messages).
//
// Owns: one socket. Decides: messages are built with the project's codec
// (userspace/common codec.hpp) when they are meant to be well formed, and
// byte by byte when they are not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "vaccel.h"

namespace vaccel::e2e {

class RawConnection {
public:
    // Connects to the daemon's socket; fails the check if it cannot.
    static RawConnection open(const char* socket_path);
    RawConnection(RawConnection&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    RawConnection(const RawConnection&) = delete;
    RawConnection& operator=(const RawConnection&) = delete;
    ~RawConnection();

    // Sends one datagram; false if the daemon had already closed it.
    bool send(std::span<const std::byte> bytes);
    // What came back within `timeout_ms`.
    struct Received {
        enum class Kind { message, closed, timeout } kind;
        std::vector<std::byte> bytes;
    };
    Received receive(int timeout_ms);

    // A GET_VERSION round trip that must succeed (the daemon is serving).
    void expect_served();

private:
    explicit RawConnection(int fd) : fd_(fd) {}
    int fd_ = -1;
};

}  // namespace vaccel::e2e
