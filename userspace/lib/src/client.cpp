// client.cpp - opening and closing clients, choosing the transport.
//
// Owns: the transport choice. Decides: an explicit name wins, then
// $VACCEL_TRANSPORT, then automatic: the kernel when /dev/vaccel opens (the
// module is loaded and a daemon serves it), else the socket when the
// daemon's socket accepts a connection, else embedded. A named transport
// that cannot be had is refused with a sentence naming it, never silently
// replaced by another: "socket" with no daemon and "kernel" with no node or
// no daemon behind it are -ENODEV (DeviceLost, PEER_GONE), a node the caller
// may not open -EACCES; unknown names are -EPROTONOSUPPORT.
// An endpoint given explicitly names a daemon: a socket path passed to
// vaccel_client_open_at() or in $VACCEL_SOCKET, a node in $VACCEL_DEVICE.
// The automatic choice then still takes the node first and the socket
// next (a container given both, through CDI, uses the node), but never
// falls back to embedded: a client that names a daemon means a daemon's
// limits and sharing, and is refused when none is there (as the named
// socket is, or the node when only it was named) rather than run
// unshared without anyone noticing.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <string>
#include <string_view>

#include "client.hpp"

#include <sys/mman.h>

using namespace vaccel;

namespace {

// Whether the environment variable `name` names an endpoint (set, not empty).
bool names_endpoint(const char* name)
{
    const char* value = std::getenv(name);
    return value != nullptr && value[0] != '\0';
}

int record_no_daemon(const std::string& path, int connect_errno)
{
    vaccel_status status{};
    status.error = VACCEL_E_DEVICE_LOST;
    status.detail = VACCEL_D_PEER_GONE;
    return lib::record_explained(
        status, "DeviceLost: no daemon accepts connections at " + path + " (" +
                    std::strerror(connect_errno) +
                    "); start vacceld, point VACCEL_SOCKET at its socket, or use the "
                    "'embedded' transport");
}

// `refused` is open_kernel_transport's Error for the open() failure.
int record_no_kernel(const std::string& path, const Error& refused, int open_errno)
{
    std::string advice;
    if (open_errno == ENOENT)
        advice = "load the kernel module (insmod vaccel.ko) and start vacceld, point "
                 "VACCEL_DEVICE at the node, or use the 'socket' transport";
    else if (open_errno == ENODEV || open_errno == ENXIO)
        advice = "no daemon serves the node: start vacceld, or use the 'socket' transport";
    else if (refused.code == Errc::permission_denied)
        advice = "ask for access to the node (vaccel.ko's client_mode and client_group), or "
                 "use the 'socket' transport";
    else
        advice = "the daemon refused the session; 'vaccelctl limits get' shows its rules";
    return lib::record_explained(refused.to_status(),
                                 std::string(error_name(refused.code)) + ": cannot open " + path +
                                     " (" + std::strerror(open_errno) + "); " + advice);
}

// The transport `name` names; "" = automatic. `socket_path` (socket only):
// the daemon's socket; "" = $VACCEL_SOCKET, else the default.
Result<std::unique_ptr<lib::Transport>> open_named(std::string_view name, int& rc,
                                                   std::string_view socket_path = {})
{
    rc = 0;
    if (name.empty()) {
        const bool socket_given = !socket_path.empty() || names_endpoint("VACCEL_SOCKET");
        const bool node_given = names_endpoint("VACCEL_DEVICE");
        int ignored = 0;
        if (auto kernel = lib::open_kernel_transport(lib::kernel_device_path(), &ignored))
            return kernel;
        if (node_given && !socket_given)  // only the node was named: its refusal
            return open_named(VACCEL_TRANSPORT_KERNEL, rc);
        if (socket_given)  // refused as the named socket is, never embedded
            return open_named(VACCEL_TRANSPORT_SOCKET, rc, socket_path);
        if (auto socket = lib::open_socket_transport(lib::daemon_socket_path(), &ignored))
            return socket;
        return lib::open_embedded_transport();
    }
    if (name == VACCEL_TRANSPORT_SOCKET) {
        const std::string path =
            socket_path.empty() ? lib::daemon_socket_path() : std::string(socket_path);
        int connect_errno = 0;
        auto socket = lib::open_socket_transport(path, &connect_errno);
        if (!socket)
            rc = record_no_daemon(path, connect_errno);
        return socket;
    }
    if (name == VACCEL_TRANSPORT_KERNEL) {
        const std::string path = lib::kernel_device_path();
        int open_errno = 0;
        auto kernel = lib::open_kernel_transport(path, &open_errno);
        if (!kernel)
            rc = record_no_kernel(path, kernel.error(), open_errno);
        return kernel;
    }
    if (name == VACCEL_TRANSPORT_EMBEDDED)
        return lib::open_embedded_transport();
    lib::record_local(Errc::unsupported,
                      "transport '" + std::string(name) +
                          "' is unknown; use 'kernel', 'socket' or 'embedded' (or unset "
                          "VACCEL_TRANSPORT for the automatic choice)");
    rc = -EPROTONOSUPPORT;
    return std::unexpected(Error::of(Errc::unsupported));
}

int open_client(std::string_view name, std::string_view socket_path, vaccel_client** client)
{
    int rc = 0;
    auto opened = open_named(name, rc, socket_path);
    if (!opened) {
        if (rc != 0)
            return rc;  // recorded with its own sentence
        lib::record_status(opened.error().to_status());
        return error_errno(opened.error().code);
    }
    auto* made = new (std::nothrow) vaccel_client;
    if (made != nullptr)
        made->transport = std::move(*opened);
    if (made == nullptr)
        return lib::record_local(Errc::out_of_memory, "vaccel_client_open: out of memory");
    *client = made;
    lib::record_status(vaccel_status{});
    return 0;
}

}  // namespace

extern "C" {

int vaccel_client_open(const char* transport, vaccel_client** client)
{
    return vaccel_client_open_at(transport, nullptr, client);
}

int vaccel_client_open_at(const char* transport, const char* socket_path, vaccel_client** client)
{
    if (client == nullptr)
        return lib::record_local(Errc::invalid_argument,
                                 "vaccel_client_open: the client out-parameter is NULL");
    *client = nullptr;
    std::string_view name = transport != nullptr ? transport : "";
    if (name.empty()) {
        const char* env = std::getenv("VACCEL_TRANSPORT");
        name = env != nullptr ? env : "";
    }
    return open_client(name, socket_path != nullptr ? socket_path : "", client);
}

}  // extern "C"

vaccel_client::~vaccel_client()
{
    // The mappings go before the session: the daemon frees the buffers.
    for (const auto& [buffer, mapping] : maps)
        if (mapping.length != 0)
            ::munmap(mapping.base, mapping.length);
}

extern "C" {

void vaccel_client_close(vaccel_client* client)
{
    delete client;  // the transport's session releases everything it owns
}

const char* vaccel_client_transport(const vaccel_client* client)
{
    return client != nullptr ? client->transport->name() : "";
}

int vaccel_client_fd(vaccel_client* client)
{
    if (client == nullptr)
        return lib::record_local(Errc::invalid_argument, "vaccel_client_fd: no client");
    vaccel_status status{};
    const int fd = client->transport->notify_fd(status);
    lib::record_status(status);
    return fd;
}

uint64_t vaccel_deadline_after_ns(uint64_t relative_ns)
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const uint64_t base = static_cast<uint64_t>(now.tv_sec) * 1000000000ull +
                          static_cast<uint64_t>(now.tv_nsec);
    return relative_ns > UINT64_MAX - base ? UINT64_MAX : base + relative_ns;
}

}  // extern "C"
