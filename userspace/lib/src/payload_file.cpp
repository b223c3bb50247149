// payload_file.cpp - memfd creation, sizing, whole-payload writes and reads.
//
// Decides: a short write or read is retried from where it stopped; EINTR is
// retried; any other failure is OutOfMemory (the only way a memfd fails
// here is the system running out of memory or of descriptors), with the
// errno in the note.
#include "payload_file.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
#include <utility>

namespace vaccel::lib {

namespace {

std::unexpected<Error> memfd_failure(const char* what, int error)
{
    return fail(Error::of(Errc::out_of_memory)
                    .with_note(std::string("payload memfd: ") + what + ": " + std::strerror(error)));
}

}  // namespace

Result<PayloadFile> PayloadFile::create()
{
    const int fd = memfd_create("vaccel-payload", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return memfd_failure("memfd_create", errno);
    // The file only ever grows: the daemon may then map it and copy
    // straight between it and a buffer (a file that cannot shrink cannot
    // fault its reader), and a reused file keeps its pages.
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
        const int error = errno;
        close(fd);
        return memfd_failure("sealing", error);
    }
    return PayloadFile(fd);
}

PayloadFile::PayloadFile(PayloadFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(std::exchange(other.size_, 0))
{
}

PayloadFile& PayloadFile::operator=(PayloadFile&& other) noexcept
{
    if (this != &other) {
        if (fd_ >= 0)
            close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

PayloadFile::~PayloadFile()
{
    if (fd_ >= 0)
        close(fd_);
}

Status PayloadFile::resize(std::uint64_t bytes)
{
    // Sealed against shrinking: a smaller payload uses the front of the file.
    if (bytes <= size_)
        return {};
    int rc;
    do
        rc = ftruncate(fd_, static_cast<off_t>(bytes));
    while (rc < 0 && errno == EINTR);
    if (rc < 0)
        return memfd_failure("ftruncate", errno);
    size_ = bytes;
    return {};
}

Status PayloadFile::store(std::span<const std::byte> bytes)
{
    if (auto sized = resize(bytes.size()); !sized)
        return sized;
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = pwrite(fd_, bytes.data() + done, bytes.size() - done,
                                 static_cast<off_t>(done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return memfd_failure("pwrite", n < 0 ? errno : ENOSPC);
        done += static_cast<std::size_t>(n);
    }
    return {};
}

Status PayloadFile::load(std::span<std::byte> out) const
{
    return read_passed_file(fd_, out);
}

Status read_passed_file(int fd, std::span<std::byte> out)
{
    std::size_t done = 0;
    while (done < out.size()) {
        const ssize_t n = pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return memfd_failure("pread", errno);
        if (n == 0)  // the file is shorter than the payload it should hold
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_SIZE, done, out.size())
                            .with_note("the daemon's payload file is shorter than announced"));
        done += static_cast<std::size_t>(n);
    }
    return {};
}

Result<PayloadFile> PayloadFiles::borrow()
{
    {
        std::lock_guard lock(mutex_);
        if (kept_) {
            PayloadFile file = std::move(*kept_);
            kept_.reset();
            return file;
        }
    }
    return PayloadFile::create();
}

void PayloadFiles::give_back(PayloadFile file)
{
    if (file.size() > kept_file_max)
        return;  // closed here
    std::lock_guard lock(mutex_);
    if (!kept_)
        kept_.emplace(std::move(file));
}

}  // namespace vaccel::lib
