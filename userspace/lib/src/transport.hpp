// transport.hpp - how libvaccel reaches an engine.
//
// Owns nothing. Decides the one seam every transport (embedded, socket,
// kernel) implements: run one contract op on the op's uapi struct
// with its payload carried separately, exactly as on the wire; and, for a
// transport with a daemon behind it, one admin exchange.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vaccel.h"
#include "vaccel/common/error.hpp"

namespace vaccel::lib {

// A buffer mapped into this process (vaccel_buffer_map()).
struct Mapping {
    void* address = nullptr;  // the buffer's first byte
    void* base = nullptr;     // what munmap() takes (length 0: nothing to unmap)
    std::size_t length = 0;
};

// mmap()s `bytes` of `fd` at `offset` (page-aligned) shared and writable;
// the refusal (a status) when the kernel says no.
int map_shared(int fd, std::uint64_t offset, std::uint64_t bytes, Mapping& mapping,
               vaccel_status& status);

class Transport {
public:
    virtual ~Transport() = default;

    // "embedded", "socket", "kernel".
    virtual const char* name() const = 0;

    // Runs one op. `args` points at the op's struct (args_size bytes, status
    // zero, user-pointer fields zero); `in` is the request payload, `out`
    // the BUFFER_READ destination. Writes the outcome into the struct's
    // status and returns 0 or the negative errno of the contract error.
    // Thread-safety: may be called from several threads at once.
    virtual int call(std::uint32_t opcode, void* args, std::size_t args_size,
                     std::span<const std::byte> in, std::span<std::byte> out) = 0;

    // The session's pollable completion descriptor (vaccel_client_fd()):
    // made on the first call, then the same one; owned by the transport.
    // Negative errno when the transport cannot offer one, with `status`
    // saying why.
    virtual int notify_fd(vaccel_status& status) = 0;

    // BUFFER_MAP: maps buffer `args.buffer` into this process. On success
    // `mapping` is where it is; `mapping.length` 0 means there is nothing
    // to munmap (the memory is the buffer's own, embedded). Writes the
    // outcome into args.status and returns like call().
    virtual int map_buffer(struct vaccel_buffer_map& args, Mapping& mapping) = 0;

    // Whether admin() reaches a daemon (only the daemon has sessions of
    // other processes, a policy and metrics to administer).
    virtual bool has_admin_channel() const { return false; }

    // Runs one VACCEL_OP_ADMIN exchange: `args` carries the command,
    // `request` the document; the answer's document replaces `response`.
    // Returns like call(). Only meaningful when has_admin_channel().
    virtual int admin(struct vaccel_admin& args, std::span<const std::byte> request,
                      std::vector<std::byte>& response)
    {
        (void)request;
        response.clear();
        args.status = Error::of(Errc::unsupported).to_status();
        return error_errno(Errc::unsupported);
    }
};

// The engine in this process. The devices are opened once per process, on
// the first open, and shared by every embedded client; each client gets a
// session of its own.
Result<std::unique_ptr<Transport>> open_embedded_transport();

// The daemon's socket: $VACCEL_SOCKET if set and not empty, else
// VACCEL_SOCKET_DEFAULT.
std::string daemon_socket_path();

// A connection to the daemon at `path`, one session. When nobody accepts
// there, the Error is DeviceLost / VACCEL_D_PEER_GONE and *connect_errno
// (if given) the connect() failure.
Result<std::unique_ptr<Transport>> open_socket_transport(const std::string& path,
                                                         int* connect_errno = nullptr);

// The kernel module's client node: $VACCEL_DEVICE if set and not empty, else
// VACCEL_DEVICE_DEFAULT.
std::string kernel_device_path();

// A session on the kernel module's node at `path` (open blocks until the
// daemon has accepted it). When the node is missing or no daemon serves it,
// the Error is DeviceLost / VACCEL_D_PEER_GONE; *open_errno (if given) is
// the open() failure.
Result<std::unique_ptr<Transport>> open_kernel_transport(const std::string& path,
                                                         int* open_errno = nullptr);

}  // namespace vaccel::lib
