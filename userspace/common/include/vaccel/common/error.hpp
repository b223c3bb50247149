// error.hpp - the contract's error taxonomy in C++.
//
// Owns: the Error value every layer returns (contract code + machine-readable
// detail + optional note), the Result/Status aliases, and the conversions to
// and from the uapi `struct vaccel_status` and errno. Decides: the name and
// the one-line meaning of every code; `describe()` turns an Error into the
// sentence a person reads.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "vaccel.h"

namespace vaccel {

enum class Errc : std::uint32_t {
    ok = VACCEL_OK,
    unsupported = VACCEL_E_UNSUPPORTED,
    incompatible = VACCEL_E_INCOMPATIBLE,
    invalid_argument = VACCEL_E_INVALID_ARGUMENT,
    out_of_bounds = VACCEL_E_OUT_OF_BOUNDS,
    out_of_memory = VACCEL_E_OUT_OF_MEMORY,
    resource_limit = VACCEL_E_RESOURCE_LIMIT,
    device_lost = VACCEL_E_DEVICE_LOST,
    busy = VACCEL_E_BUSY,
    permission_denied = VACCEL_E_PERMISSION_DENIED,
    deadline_expired = VACCEL_E_DEADLINE_EXPIRED,
    external = VACCEL_E_EXTERNAL,
    cancelled = VACCEL_E_CANCELLED,
};

// One refusal. `detail`, `limit`, `arg0`, `arg1` travel on every transport
// (they are `struct vaccel_status`); `note` is extra text that only exists
// in process and is never required to understand the error.
struct Error {
    Errc code = Errc::invalid_argument;
    std::uint32_t detail = VACCEL_D_NONE;  // enum vaccel_detail
    std::uint32_t limit = VACCEL_LIMIT_NONE;  // enum vaccel_limit_kind
    // For VACCEL_D_LIMIT: whose limit (VACCEL_SCOPE_MAKE: kind, device,
    // the tenant's sessions); 0 = a context's own cap.
    std::uint32_t scope = 0;
    std::uint64_t arg0 = 0;
    std::uint64_t arg1 = 0;
    std::string note;

    static Error of(Errc code, std::uint32_t detail = VACCEL_D_NONE, std::uint64_t arg0 = 0,
                    std::uint64_t arg1 = 0)
    {
        return Error{code, detail, VACCEL_LIMIT_NONE, 0, arg0, arg1, {}};
    }
    static Error limit_hit(std::uint32_t kind, std::uint64_t value, std::uint64_t used)
    {
        return Error{Errc::resource_limit, VACCEL_D_LIMIT, kind, 0, value, used, {}};
    }
    Error&& with_note(std::string text) &&
    {
        note = std::move(text);
        return std::move(*this);
    }

    vaccel_status to_status() const;
    static Error from_status(const vaccel_status& status);
};

template <class T>
using Result = std::expected<T, Error>;
using Status = std::expected<void, Error>;

inline std::unexpected<Error> fail(Errc code, std::uint32_t detail = VACCEL_D_NONE,
                                   std::uint64_t arg0 = 0, std::uint64_t arg1 = 0)
{
    return std::unexpected(Error::of(code, detail, arg0, arg1));
}
inline std::unexpected<Error> fail(Error error) { return std::unexpected(std::move(error)); }

// "ResourceLimit", "Busy", ...
std::string_view error_name(Errc code);
// One line: what the code means in general.
std::string_view error_meaning(Errc code);
// The negative errno an ioctl returns for this code (0 for ok).
int error_errno(Errc code);
// The limit's name as operators write it: "buffers", "memory bytes", ...
std::string_view limit_name(std::uint32_t kind);
// A sentence a person can act on: what was refused, why, what to do.
// A tenant's refusal (VACCEL_D_LIMIT with a tenant scope) names the
// tenant by its note ("uid 1000", "cgroup /a/b"), else by the scope kind
// and this process's own uid or gid.
std::string describe(const Error& error);
// "4096 bytes", "60.0 MiB": bytes as a person reads them.
std::string bytes_text(std::uint64_t bytes);

}  // namespace vaccel
