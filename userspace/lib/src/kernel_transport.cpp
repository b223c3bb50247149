// kernel_transport.cpp - the "kernel" transport: ioctls on /dev/vaccel,
// which vaccel.ko forwards to vacceld.
//
// Owns: one open file of the device node (one kernel session) and, made on
// the first admin call, one socket connection to the daemon for the admin
// channel. Decides:
//  - a call is exactly the ioctl of its op with the uapi struct; the struct's
//    user-pointer fields (data, payload, bindings, events) are filled from
//    the spans the call carries and point at the caller's own memory: the
//    module pins those pages and the daemon copies the bytes once, so no
//    payload is copied here. The fields are zeroed again afterwards (the
//    struct leaves as it came, user pointers zero);
//  - except a payload the module refuses to copy because it lies in a file
//    mapping (vaccel.ko moves payloads only from anonymous, shmem or hugetlb
//    memory, ADR 0021: a FUSE file that never answers must not stall the
//    daemon): the bytes are then staged once in anonymous memory and the
//    ioctl made again, so an np.memmap or an mmap'ed model file works as
//    any other memory does;
//  - the ioctl's result is the call's result: the negative errno, and the
//    status the module or the daemon wrote into the struct. Where the kernel
//    refused before writing a status (a struct it could not read, a size it
//    does not know), the status is made here from the errno, so a caller
//    always sees a contract error;
//  - admin (vaccel_admin) is not an ioctl: the admin channel lives on the
//    daemon's socket, so a kernel client reaches it through a socket
//    connection of its own ($VACCEL_SOCKET, else VACCEL_SOCKET_DEFAULT),
//    opened on first use and kept for the client's life. Without a daemon
//    socket the admin call fails with DeviceLost / PEER_GONE.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "transport.hpp"
#include "vaccel/vaccel.h"

namespace vaccel::lib {

namespace {

// The contract error of an errno the kernel returned without a status.
Errc errno_code(int error)
{
    switch (error) {
    case EOPNOTSUPP: return Errc::unsupported;
    case ENOTTY: return Errc::unsupported;
    case ENOEXEC: return Errc::incompatible;
    case ERANGE: return Errc::out_of_bounds;
    case ENOMEM: return Errc::out_of_memory;
    case EDQUOT: return Errc::resource_limit;
    case ENODEV: return Errc::device_lost;
    case ENXIO: return Errc::device_lost;
    case EBUSY: return Errc::busy;
    case EACCES: return Errc::permission_denied;
    case EPERM: return Errc::permission_denied;
    case ETIME: return Errc::deadline_expired;
    case EIO: return Errc::external;
    case ECANCELED: return Errc::cancelled;
    default: return Errc::invalid_argument;  // EINVAL, EFAULT and the rest
    }
}

// The struct's user-pointer field for `opcode`, or nullptr when it has none.
__u64* pointer_field(std::uint32_t opcode, void* args)
{
    switch (opcode) {
    case VACCEL_OP_BUFFER_WRITE:
    case VACCEL_OP_BUFFER_READ: return &static_cast<struct vaccel_buffer_transfer*>(args)->data;
    case VACCEL_OP_PROGRAM_LOAD: return &static_cast<struct vaccel_program_load*>(args)->payload;
    case VACCEL_OP_SUBMIT: return &static_cast<struct vaccel_submit*>(args)->bindings;
    case VACCEL_OP_RUN: return &static_cast<struct vaccel_run*>(args)->bindings;
    case VACCEL_OP_SUBMIT_AFTER:
        return &static_cast<struct vaccel_submit_after*>(args)->bindings;
    case VACCEL_OP_LAUNCH: return &static_cast<struct vaccel_launch*>(args)->payload;
    case VACCEL_OP_EVENT_WAIT: return &static_cast<struct vaccel_event_wait*>(args)->events;
    }
    return nullptr;
}

class KernelTransport final : public Transport {
public:
    explicit KernelTransport(int fd) : fd_(fd) {}
    ~KernelTransport() override { ::close(fd_); }  // the module closes the session
    KernelTransport(const KernelTransport&) = delete;
    KernelTransport& operator=(const KernelTransport&) = delete;

    const char* name() const override { return VACCEL_TRANSPORT_KERNEL; }
    bool has_admin_channel() const override { return true; }

    // /dev/vaccel itself: the module's poll() reports the session's notify
    // file, which the daemon clears when EVENT_POLL or EVENT_WAIT arrives.
    int notify_fd(vaccel_status& status) override
    {
        (void)status;
        return fd_;
    }

    // The module maps the buffer's pages at the offset it answers with, on
    // this session's own file.
    int map_buffer(struct vaccel_buffer_map& args, Mapping& mapping) override
    {
        const int rc = call(VACCEL_OP_BUFFER_MAP, &args, sizeof args, {}, {});
        if (rc != 0)
            return rc;
        return map_shared(fd_, args.map_offset, args.map_bytes, mapping, args.status);
    }

    int call(std::uint32_t opcode, void* args, std::size_t args_size,
             std::span<const std::byte> in, std::span<std::byte> out) override
    {
        const int rc = call_once(opcode, args, args_size, in, out);
        if (!refused_file_payload(opcode, args, args_size, rc))
            return rc;
        // Staged in this process's heap (anonymous memory), then again.
        std::memset(args, 0, sizeof(vaccel_status));
        if (opcode == VACCEL_OP_BUFFER_READ) {
            std::vector<std::byte> staged(out.size());
            const int again = call_once(opcode, args, args_size, in, staged);
            if (again == 0)
                std::memcpy(out.data(), staged.data(), out.size());
            return again;
        }
        const std::vector<std::byte> staged(in.begin(), in.end());
        return call_once(opcode, args, args_size, staged, out);
    }

    int call_once(std::uint32_t opcode, void* args, std::size_t args_size,
                  std::span<const std::byte> in, std::span<std::byte> out)
    {
        __u64* pointer = pointer_field(opcode, args);
        if (pointer != nullptr) {
            const void* bytes = opcode == VACCEL_OP_BUFFER_READ
                                    ? static_cast<const void*>(out.data())
                                    : static_cast<const void*>(in.data());
            *pointer = reinterpret_cast<std::uintptr_t>(bytes);
        }
        // The uapi's numbers are _IOWR(VACCEL_IOCTL_BASE, op, struct): the
        // same number from the op and the struct's size.
        const unsigned long request =
            _IOC(_IOC_READ | _IOC_WRITE, VACCEL_IOCTL_BASE, opcode, args_size);
        const int rc = ::ioctl(fd_, request, args) == 0 ? 0 : -errno;
        if (pointer != nullptr)
            *pointer = 0;
        if (rc == 0 || args_size < sizeof(vaccel_status))
            return rc;
        auto* status = static_cast<vaccel_status*>(args);
        if (status->error == VACCEL_OK) {
            // Refused before any status was written: say it from the errno.
            Error error = Error::of(errno_code(-rc));
            if (rc == -ENODEV)
                error.detail = VACCEL_D_PEER_GONE;
            if (rc == -ENOTTY)
                error = Error::of(Errc::unsupported, VACCEL_D_UNKNOWN_OPCODE, opcode);
            *status = error.to_status();
        }
        return rc;
    }

    // The module's refusal of a payload in a file mapping: Unsupported,
    // VACCEL_D_BAD_VALUE, arg0 = the offset of the op's pointer field.
    static bool refused_file_payload(std::uint32_t opcode, void* args, std::size_t args_size,
                                     int rc)
    {
        __u64* pointer = pointer_field(opcode, args);
        if (rc != -EOPNOTSUPP || pointer == nullptr || args_size < sizeof(vaccel_status))
            return false;
        const auto* status = static_cast<const vaccel_status*>(args);
        const auto offset = static_cast<std::uint64_t>(reinterpret_cast<std::byte*>(pointer) -
                                                       static_cast<std::byte*>(args));
        return status->error == VACCEL_E_UNSUPPORTED && status->detail == VACCEL_D_BAD_VALUE &&
               status->arg0 == offset;
    }

    int admin(struct vaccel_admin& args, std::span<const std::byte> request,
              std::vector<std::byte>& response) override
    {
        std::lock_guard lock(admin_mutex_);
        if (!admin_channel_) {
            auto opened = open_socket_transport(daemon_socket_path());
            if (!opened) {
                response.clear();
                args.status = opened.error().to_status();
                return error_errno(opened.error().code);
            }
            admin_channel_ = std::move(*opened);
        }
        return admin_channel_->admin(args, request, response);
    }

private:
    int fd_;  // Ownership: this transport's; closing it ends the session
    std::mutex admin_mutex_;
    // Invariant: made once under admin_mutex_, then only used under it.
    std::unique_ptr<Transport> admin_channel_;
};

}  // namespace

std::string kernel_device_path()
{
    const char* env = std::getenv("VACCEL_DEVICE");
    return env != nullptr && env[0] != '\0' ? env : VACCEL_DEVICE_DEFAULT;
}

Result<std::unique_ptr<Transport>> open_kernel_transport(const std::string& path,
                                                         int* open_errno)
{
    // Blocks (killably) until the daemon has answered the session's opening.
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        if (open_errno != nullptr)
            *open_errno = error;
        Error refused = Error::of(errno_code(error));
        if (refused.code == Errc::device_lost)
            refused.detail = VACCEL_D_PEER_GONE;
        if (error == ENOENT)
            refused = Error::of(Errc::device_lost, VACCEL_D_PEER_GONE);
        return std::unexpected(std::move(refused));
    }
    return std::make_unique<KernelTransport>(fd);
}

}  // namespace vaccel::lib
