// payload_files.cpp - the memfd check of payload descriptors, and the
// thread that closes descriptors whose close may never return.
//
// Owns: the descriptor closer thread (started on first use, never joined:
// it may be stuck in a close() for good; it owns only its queue).
#include "vaccel/daemon/payload_files.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "vaccel.h"

namespace vaccel::daemon {

namespace {

constexpr std::uint64_t flags_field = offsetof(vaccel_msg_header, flags);

Error not_a_memfd(std::uint64_t what, const std::string& found)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, flags_field, what)
        .with_note(fmt::format("the payload descriptor is {}, not a memfd: the daemon reads "
                               "payloads only from memory that cannot stall it; pass a memfd "
                               "(memfd_create without MFD_HUGETLB)",
                               found));
}

// Shared memory files: F_GET_SEALS is answered by the kernel from the
// file's inode, for shmem and hugetlbfs files only (EINVAL otherwise).
bool is_shared_memory(int fd) { return ::fcntl(fd, F_GET_SEALS) >= 0; }

// Ownership: the queue's descriptors are closed by the thread, in order.
class DescriptorCloser {
public:
    void close_later(UniqueFd fd)
    {
        std::lock_guard lock(mutex_);
        if (!started_) {
            std::thread([this] { run(); }).detach();
            started_ = true;
        }
        queue_.push_back(std::move(fd));
        ready_.notify_one();
    }

private:
    void run()
    {
        for (;;) {
            UniqueFd fd;
            {
                std::unique_lock lock(mutex_);
                ready_.wait(lock, [this] { return !queue_.empty(); });
                fd = std::move(queue_.front());
                queue_.pop_front();
            }
            fd.reset();  // may block for as long as the file's filesystem wants
        }
    }

    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<UniqueFd> queue_;
    bool started_ = false;
};

// Invariant: never destroyed (the thread may still be closing at exit).
DescriptorCloser& closer()
{
    static DescriptorCloser* const instance = new DescriptorCloser;
    return *instance;
}

}  // namespace

Status check_payload_file(int fd)
{
    if (!is_shared_memory(fd))
        return fail(not_a_memfd(0, "not a shared memory file (a file on another filesystem, a "
                                   "pipe, a socket or a device)"));
    // From here on the file is shmem or hugetlbfs: fstat and fstatfs are
    // answered from memory.
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return fail(not_a_memfd(st.st_mode & S_IFMT, "not a regular file"));
    struct statfs fs {};
    if (::fstatfs(fd, &fs) != 0 || static_cast<std::uint64_t>(fs.f_type) != TMPFS_MAGIC)
        return fail(not_a_memfd(static_cast<std::uint64_t>(fs.f_type),
                                static_cast<std::uint64_t>(fs.f_type) == HUGETLBFS_MAGIC
                                    ? "a hugetlbfs file (MFD_HUGETLB)"
                                    : "on a filesystem that is not tmpfs"));
    return {};
}

void release_descriptor(UniqueFd fd)
{
    if (!fd)
        return;
    if (is_shared_memory(fd.get())) {
        fd.reset();  // shmem has no flush: close returns at once
        return;
    }
    closer().close_later(std::move(fd));
}

void release_descriptors(std::vector<UniqueFd>& fds)
{
    for (UniqueFd& fd : fds)
        release_descriptor(std::move(fd));
    fds.clear();
}

}  // namespace vaccel::daemon
