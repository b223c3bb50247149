// service_notify.cpp - sd_notify(3) for vacceld.
//
// Normal builds use libsystemd's sd_notify(). The static build
// (VACCEL_STATIC: libsystemd has no static archive) sends the same
// datagram itself: one SOCK_DGRAM sendto() to $NOTIFY_SOCKET, a path or an
// abstract name written with a leading '@' (systemd's own forms; vsock
// addresses are not supported there).
#include "service_notify.hpp"

#include <string>

#if VACCEL_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#else
#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "vaccel/daemon/unique_fd.hpp"
#endif

namespace vaccel::daemon {

#if VACCEL_HAVE_LIBSYSTEMD

void notify_service(std::string_view state)
{
    (void)sd_notify(0, std::string(state).c_str());
}

#else

void notify_service(std::string_view state)
{
    const char* where = std::getenv("NOTIFY_SOCKET");
    if (where == nullptr || (where[0] != '/' && where[0] != '@'))
        return;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::size_t length = std::strlen(where);
    if (length < 2 || length >= sizeof address.sun_path)
        return;
    std::memcpy(address.sun_path, where, length);
    if (where[0] == '@')
        address.sun_path[0] = '\0';  // an abstract name: no NUL terminator counts
    const auto address_bytes =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length + (where[0] == '/' ? 1 : 0));
    UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd)
        return;
    (void)::sendto(fd.get(), state.data(), state.size(), MSG_NOSIGNAL,
                   reinterpret_cast<const sockaddr*>(&address), address_bytes);
}

#endif

}  // namespace vaccel::daemon
