// notify_fd.cpp - the session's eventfd (see notify_fd.hpp).
#include "vaccel/engine/notify_fd.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

namespace vaccel::engine {

NotifyFd::NotifyFd() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

NotifyFd::~NotifyFd()
{
    if (fd_ >= 0)
        close(fd_);
}

void NotifyFd::wake() noexcept
{
    // A full counter (2^64 - 2 completions unread) stays readable: nothing
    // is lost by a write that would block.
    if (fd_ >= 0)
        (void)eventfd_write(fd_, 1);
}

void NotifyFd::clear() noexcept
{
    eventfd_t ignored;
    if (fd_ >= 0)
        (void)eventfd_read(fd_, &ignored);  // EAGAIN when already clear
}

}  // namespace vaccel::engine
