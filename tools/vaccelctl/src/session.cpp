// session.cpp - opening the client and asking it about devices.
//
// Note on includes: "vaccel.h" (the uapi contract) is included before
// "vaccel/vaccel.h" everywhere in vaccelctl, so the contract's structs are
// defined whatever the include search finds for the library header's own
// #include "vaccel.h".
#include "session.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

namespace vaccel::ctl {

Refusal call_refusal(int rc, std::string_view doing)
{
    std::string detail = vaccel_last_error_message();
    if (detail.empty())
        detail = vaccel_strerror(rc);
    return Refusal{fmt::format("{}: {}", doing, detail)};
}

std::string daemon_socket_path()
{
    const char* env = std::getenv("VACCEL_SOCKET");
    return env != nullptr && env[0] != '\0' ? env : VACCEL_SOCKET_DEFAULT;
}

std::string kernel_device_path()
{
    const char* env = std::getenv("VACCEL_DEVICE");
    return env != nullptr && env[0] != '\0' ? env : VACCEL_DEVICE_DEFAULT;
}

Result<Session> Session::open(bool verbose, bool announce_fallback)
{
    vaccel_client* client = nullptr;
    int rc = vaccel_client_open(nullptr, &client);
    if (rc < 0)
        return std::unexpected(call_refusal(rc, "cannot open a vaccel client"));
    const std::string_view transport = vaccel_client_transport(client);
    const char* forced = std::getenv("VACCEL_TRANSPORT");
    const bool automatic = forced == nullptr || forced[0] == '\0';
    if (announce_fallback && automatic && transport == VACCEL_TRANSPORT_EMBEDDED)
        fmt::print(stderr, "vaccelctl: no daemon at {}; running in process (embedded)\n",
                   daemon_socket_path());
    if (verbose)
        fmt::print(stderr, "vaccelctl: transport {}{}\n", transport,
                   transport == VACCEL_TRANSPORT_SOCKET   ? " (" + daemon_socket_path() + ")"
                   : transport == VACCEL_TRANSPORT_KERNEL ? " (" + kernel_device_path() + ")"
                                                          : std::string());
    return Session(client);
}

Result<Session> Session::open_daemon(bool verbose, std::string_view what)
{
    vaccel_client* client = nullptr;
    int rc = vaccel_client_open(VACCEL_TRANSPORT_SOCKET, &client);
    if (rc == -ENODEV)
        return refuse(fmt::format("no daemon at {}: '{}' asks vacceld, through its admin "
                                  "channel; start vacceld, or name its socket with --socket PATH "
                                  "(or VACCEL_SOCKET)",
                                  daemon_socket_path(), what));
    if (rc < 0)
        return std::unexpected(call_refusal(rc, "cannot open a client of the daemon"));
    if (verbose)
        fmt::print(stderr, "vaccelctl: transport {} ({})\n", vaccel_client_transport(client),
                   daemon_socket_path());
    return Session(client);
}

Result<std::string> Session::admin(std::uint32_t command, const std::string& request,
                                   std::string_view what) const
{
    char* response = nullptr;
    std::size_t bytes = 0;
    int rc = vaccel_admin(client(), command, request.empty() ? nullptr : request.c_str(),
                          &response, &bytes);
    if (rc < 0)
        return std::unexpected(call_refusal(rc, fmt::format("the daemon refused '{}'", what)));
    std::string text(response, bytes);
    vaccel_free(response);
    return text;
}

Result<struct vaccel_get_version> Session::version() const
{
    struct vaccel_get_version version {};
    int rc = vaccel_get_version(client(), &version);
    if (rc < 0)
        return std::unexpected(call_refusal(rc, "cannot query the vaccel ABI version"));
    return version;
}

Result<std::vector<vaccel_tosa_descriptor>> Session::tosa_descriptors(std::uint32_t device) const
{
    std::vector<vaccel_tosa_descriptor> all;
    // A daemon before ABI 1.2 does not know the query: it has nothing to say.
    auto version = this->version();
    if (!version)
        return std::unexpected(version.error());
    if ((version->capabilities & VACCEL_CAP_TOSA_DESCRIPTORS) == 0)
        return all;
    for (std::uint32_t index = 0;; ++index) {
        vaccel_tosa_descriptor descriptor{};
        const int rc = vaccel_device_tosa(client(), device, index, &descriptor);
        // The first index past the last: the device has no more (none at all
        // for a device that runs no TOSA programs).
        if (rc == -EINVAL && vaccel_last_status()->detail == VACCEL_D_NO_TOSA_DESCRIPTOR)
            return all;
        if (rc < 0)
            return std::unexpected(call_refusal(
                rc, fmt::format("cannot query TOSA descriptor {} of device {}", index, device)));
        all.push_back(descriptor);
        if (all.size() >= descriptor.descriptor_count)
            return all;
    }
}

Result<std::vector<DeviceRecord>> Session::devices() const
{
    std::uint32_t count = 0;
    int rc = vaccel_device_count(client(), &count);
    if (rc < 0)
        return std::unexpected(call_refusal(rc, "cannot count the devices"));
    std::vector<DeviceRecord> devices;
    for (std::uint32_t index = 0; index < count; ++index) {
        DeviceRecord record;
        record.index = index;
        rc = vaccel_device_info(client(), index, &record.info);
        if (rc < 0)
            return std::unexpected(call_refusal(rc, fmt::format("cannot query device {}", index)));
        if (auto tosa = tosa_descriptors(index); tosa)
            record.tosa = std::move(*tosa);
        else
            return std::unexpected(tosa.error());
        devices.push_back(record);
    }
    return devices;
}

}  // namespace vaccel::ctl
