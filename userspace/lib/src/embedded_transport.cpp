// embedded_transport.cpp - the "embedded" transport: the engine in process.
//
// Owns: the process's DeviceManager (created on first use, never destroyed:
// backends' worker threads must not be torn down by static destructors while
// another static destructor may still close a client) and one Session per
// client. Decides: the session's identity is the calling process; limits
// are the devices' own (there is no policy without a daemon).
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>

#include "transport.hpp"
#include "vaccel/engine/notify_fd.hpp"
#include "vaccel/engine/session.hpp"

namespace vaccel::lib {

namespace {

Result<std::shared_ptr<engine::DeviceManager>> process_devices()
{
    static std::mutex mutex;
    // Ownership: intentionally never freed (see the file comment); reachable
    // from this static, so leak checkers do not report it.
    static std::shared_ptr<engine::DeviceManager>* devices = nullptr;
    std::lock_guard lock(mutex);
    if (devices == nullptr) {
        auto opened = engine::DeviceManager::open();
        if (!opened)
            return std::unexpected(std::move(opened.error()));
        devices = new std::shared_ptr<engine::DeviceManager>(std::move(*opened));
    }
    return *devices;
}

class EmbeddedTransport final : public Transport {
public:
    explicit EmbeddedTransport(std::shared_ptr<engine::DeviceManager> devices)
        : session_(std::move(devices), options())
    {
    }

    const char* name() const override { return "embedded"; }

    int call(std::uint32_t opcode, void* args, std::size_t args_size,
             std::span<const std::byte> in, std::span<std::byte> out) override
    {
        // The daemon's part for the notify file: cleared before the look.
        if (opcode == VACCEL_OP_EVENT_POLL || opcode == VACCEL_OP_EVENT_WAIT)
            if (auto notify = std::atomic_load(&notify_))
                notify->clear();
        std::span<std::byte> bytes(static_cast<std::byte*>(args), args_size);
        Status status = session_.call(opcode, bytes, in, out);
        if (status)
            return 0;
        if (args_size >= sizeof(vaccel_status)) {
            const vaccel_status wire = status.error().to_status();
            std::memcpy(args, &wire, sizeof wire);
        }
        return error_errno(status.error().code);
    }

    int notify_fd(vaccel_status& status) override
    {
        std::lock_guard lock(notify_mutex_);
        if (auto notify = std::atomic_load(&notify_))
            return notify->fd();
        auto notify = std::make_shared<engine::NotifyFd>();
        if (notify->fd() < 0) {
            const int error = errno;
            status = Error::of(Errc::external, VACCEL_D_NONE, 1, error)
                         .with_note("no eventfd could be made")
                         .to_status();
            return -error;
        }
        session_.set_completion_listener(notify);
        std::atomic_store(&notify_, notify);
        return notify->fd();
    }

    // The buffer's own memory: nothing is mapped, nothing to unmap.
    int map_buffer(struct vaccel_buffer_map& args, Mapping& mapping) override
    {
        auto memory = session_.buffer_mapping(args.buffer);
        if (!memory) {
            args.status = memory.error().to_status();
            return error_errno(memory.error().code);
        }
        if (memory->fd >= 0)
            close(memory->fd);
        args.map_offset = memory->offset;
        args.map_bytes = memory->bytes;
        mapping = Mapping{memory->address, nullptr, 0};
        return 0;
    }

private:
    std::mutex notify_mutex_;  // serialises the first notify_fd()
    // Set once; read by call() without the mutex (atomic shared_ptr access).
    std::shared_ptr<engine::NotifyFd> notify_;

    static engine::SessionOptions options()
    {
        engine::SessionOptions options;
        options.identity.pid = getpid();
        options.identity.uid = getuid();
        options.identity.gid = getgid();
        return options;
    }

    engine::Session session_;
};

}  // namespace

Result<std::unique_ptr<Transport>> open_embedded_transport()
{
    auto devices = process_devices();
    if (!devices)
        return std::unexpected(std::move(devices.error()));
    return std::make_unique<EmbeddedTransport>(std::move(*devices));
}

}  // namespace vaccel::lib
