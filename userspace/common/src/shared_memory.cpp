// shared_memory.cpp - memfd-backed host memory at a chosen alignment.
//
// Decides: the memfd is sealed against any change of size (F_SEAL_SHRINK,
// F_SEAL_GROW) and against further sealing (F_SEAL_SEAL) as soon as it is
// sized, before it is mapped or shared. A client that maps the buffer holds
// the same file (BUFFER_MAP passes it); were it able to truncate it, the
// daemon's next access to the mapping would die of SIGBUS. Writes stay
// allowed: sharing the bytes is the point.
#include "vaccel/common/shared_memory.hpp"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace vaccel {

namespace {

Error system_error(const char* what, std::uint64_t bytes, int error)
{
    return Error::of(error == ENOMEM ? Errc::out_of_memory : Errc::external, VACCEL_D_NONE, bytes,
                     static_cast<std::uint64_t>(error))
        .with_note(fmt::format("{} of {} bytes of shareable host memory failed: {}", what, bytes,
                               std::strerror(error)));
}

}  // namespace

Result<SharedMemory> SharedMemory::create(std::uint64_t bytes, std::uint64_t alignment,
                                          const char* name)
{
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    if (alignment < page)
        alignment = page;
    SharedMemory memory;
    memory.mapped_bytes_ = (bytes + page - 1) / page * page;
    memory.fd_ = ::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (memory.fd_ < 0)
        return fail(system_error("memfd_create", bytes, errno));
    if (::ftruncate(memory.fd_, static_cast<off_t>(memory.mapped_bytes_)) != 0)
        return fail(system_error("ftruncate", bytes, errno));
    // Invariant: from here on nobody holding the file can change its size,
    // so the daemon's mapping of it can never fault.
    if (::fcntl(memory.fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        return fail(system_error("sealing", bytes, errno));
    // Reserve room for the alignment, map the file at the aligned address
    // inside it, and give the slack on both sides back.
    const std::uint64_t reserved = memory.mapped_bytes_ + alignment - page;
    void* range = ::mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                         -1, 0);
    if (range == MAP_FAILED)
        return fail(system_error("reserving", bytes, errno));
    const auto start = reinterpret_cast<std::uintptr_t>(range);
    const std::uintptr_t aligned = (start + alignment - 1) & ~(alignment - 1);
    void* mapped = ::mmap(reinterpret_cast<void*>(aligned), memory.mapped_bytes_,
                          PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, memory.fd_, 0);
    if (mapped == MAP_FAILED) {
        const int error = errno;
        ::munmap(range, reserved);
        return fail(system_error("mmap", bytes, error));
    }
    if (aligned > start)
        ::munmap(range, aligned - start);
    const std::uintptr_t end = aligned + memory.mapped_bytes_;
    if (start + reserved > end)
        ::munmap(reinterpret_cast<void*>(end), start + reserved - end);
    memory.data_ = static_cast<std::byte*>(mapped);
    return memory;
}

SharedMemory::~SharedMemory() { release(); }

SharedMemory::SharedMemory(SharedMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)),
      fd_(std::exchange(other.fd_, -1))
{
}

SharedMemory& SharedMemory::operator=(SharedMemory&& other) noexcept
{
    if (this != &other) {
        release();
        data_ = std::exchange(other.data_, nullptr);
        mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

void SharedMemory::release() noexcept
{
    if (data_ != nullptr)
        ::munmap(data_, mapped_bytes_);
    // Invariant: freed memory is returned to the system now, even while a
    // client still maps the memfd (BUFFER_MAP passed it on): punching the
    // whole file out removes its pages from every mapping of it, so bytes
    // that are no longer charged to anyone cannot stay alive (ADR 0024).
    // A client touching its stale mapping afterwards gets zero pages that
    // the kernel charges to that client's own memory cgroup.
    if (fd_ >= 0 && mapped_bytes_ != 0)
        (void)::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
                          static_cast<off_t>(mapped_bytes_));
    if (fd_ >= 0)
        ::close(fd_);
    data_ = nullptr;
    fd_ = -1;
}

}  // namespace vaccel
