// session.cpp - opening the client and asking it about devices.
//
// Note on includes: "vaccel.h" (the uapi contract) is included before
// "vaccel/vaccel.h" everywhere in vaccelctl, so the contract's structs are
// defined whatever the include search finds for the library header's own
// #include "vaccel.h".
#include "session.hpp"

#include <fmt/format.h>

namespace vaccel::ctl {

Refusal call_refusal(int rc, std::string_view doing)
{
    std::string detail = vaccel_last_error_message();
    if (detail.empty())
        detail = vaccel_strerror(rc);
    return Refusal{fmt::format("{}: {}", doing, detail)};
}

Result<Session> Session::open(bool verbose)
{
    vaccel_client* client = nullptr;
    int rc = vaccel_client_open(nullptr, &client);
    if (rc < 0)
        return std::unexpected(call_refusal(rc, "cannot open a vaccel client"));
    if (verbose)
        fmt::print(stderr, "vaccelctl: transport {}\n", vaccel_client_transport(client));
    return Session(client);
}

Result<struct vaccel_get_version> Session::version() const
{
    struct vaccel_get_version version {};
    int rc = vaccel_get_version(client(), &version);
    if (rc < 0)
        return std::unexpected(call_refusal(rc, "cannot query the vaccel ABI version"));
    return version;
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
        devices.push_back(record);
    }
    return devices;
}

}  // namespace vaccel::ctl
