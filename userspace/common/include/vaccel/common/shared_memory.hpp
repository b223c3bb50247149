// shared_memory.hpp - host memory a client can map: a memfd mapped into
// this process at a chosen alignment.
//
// Owns: the memfd and the mapping; both end with the object, and so do the
// file's pages, in every process that maps it (they are punched out at
// the end, so a client's leftover mapping keeps nothing alive). Decides the
// size: the bytes asked rounded up to whole pages (what mmap shares), and
// the alignment: at least a page, any power of two up to 64 KiB
// (VACCEL_MAX_ALIGNMENT), by reserving a larger range and mapping the file
// at an aligned address inside it. The file's size is sealed
// (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) before it is mapped: whoever
// holds a copy of fd() (a client that mapped the buffer) cannot truncate it
// under this process's mapping.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vaccel/common/error.hpp"

namespace vaccel {

class SharedMemory {
public:
    // Zero-filled memory of at least `bytes` (> 0), aligned to `alignment`.
    // `name` names the memfd (visible in /proc/PID/fd).
    static Result<SharedMemory> create(std::uint64_t bytes, std::uint64_t alignment,
                                       const char* name);
    SharedMemory() = default;
    ~SharedMemory();
    SharedMemory(SharedMemory&& other) noexcept;
    SharedMemory& operator=(SharedMemory&& other) noexcept;
    SharedMemory(const SharedMemory&) = delete;
    SharedMemory& operator=(const SharedMemory&) = delete;

    std::byte* data() const { return data_; }
    int fd() const { return fd_; }
    std::uint64_t mapped_bytes() const { return mapped_bytes_; }

private:
    void release() noexcept;

    std::byte* data_ = nullptr;
    std::uint64_t mapped_bytes_ = 0;
    int fd_ = -1;
};

}  // namespace vaccel
