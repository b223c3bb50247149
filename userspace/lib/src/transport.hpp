// transport.hpp - how libvaccel reaches an engine.
//
// Owns nothing. Decides the one seam every transport (embedded now; socket
// and kernel later) implements: run one contract op on the op's uapi struct
// with its payload carried separately, exactly as on the wire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "vaccel/common/error.hpp"

namespace vaccel::lib {

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
};

// The engine in this process. The devices are opened once per process, on
// the first open, and shared by every embedded client; each client gets a
// session of its own.
Result<std::unique_ptr<Transport>> open_embedded_transport();

}  // namespace vaccel::lib
