// payload_file.hpp - memfds that carry payloads too large for one message.
//
// Owns: the memfds of one connection. Decides (uapi/vaccel.h, "Large
// payloads"): a payload over VACCEL_MSG_INLINE_MAX is written at offset 0 of
// a memfd whose size is exactly the payload, and the fd goes with the
// message; a large BUFFER_READ passes a memfd of exactly `length` bytes that
// the daemon writes and the client then reads.
//
// Reuse: ONE memfd per connection is kept between calls (PayloadFiles), so a
// repeated large transfer does not allocate and fault in fresh pages each
// time. A call borrows it for its whole exchange; a call that finds it
// borrowed by another thread makes a memfd of its own for that call (never
// waits), and gives it back to be kept if the slot is empty then. Files
// larger than kept_file_max are closed after their call instead of kept, so
// an idle client holds at most that much memory in its payload file.
// Invariant: a borrowed file is touched only by the borrowing call, from
// the moment it is lent until it is returned; the daemon touches it only
// between the request and the response of that call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>

#include "vaccel/common/error.hpp"

namespace vaccel::lib {

// One memfd (MFD_CLOEXEC). Move-only; closes on destruction.
class PayloadFile {
public:
    static Result<PayloadFile> create();

    PayloadFile(PayloadFile&& other) noexcept;
    PayloadFile& operator=(PayloadFile&& other) noexcept;
    PayloadFile(const PayloadFile&) = delete;
    PayloadFile& operator=(const PayloadFile&) = delete;
    ~PayloadFile();

    int fd() const { return fd_; }
    std::uint64_t size() const { return size_; }

    // Makes the file at least `bytes` long (it never shrinks).
    Status resize(std::uint64_t bytes);
    // resize(bytes.size()), then writes `bytes` at offset 0.
    Status store(std::span<const std::byte> bytes);
    // Reads out.size() bytes from offset 0 (the file must hold them).
    Status load(std::span<std::byte> out) const;

private:
    explicit PayloadFile(int fd) : fd_(fd) {}
    int fd_ = -1;
    std::uint64_t size_ = 0;
};

// Reads `bytes` bytes at offset 0 of a file the daemon passed (an admin
// document); the fd stays the caller's.
Status read_passed_file(int fd, std::span<std::byte> out);

// The connection's kept memfd and the borrowing rule above.
class PayloadFiles {
public:
    // The most bytes a kept file may hold (256 MiB).
    static constexpr std::uint64_t kept_file_max = std::uint64_t{256} << 20;

    // The kept file if free, else a new one.
    Result<PayloadFile> borrow();
    // Keeps `file` if the slot is empty and it is small enough; else closes it.
    void give_back(PayloadFile file);

private:
    std::mutex mutex_;  // guards kept_
    std::optional<PayloadFile> kept_;
};

}  // namespace vaccel::lib
