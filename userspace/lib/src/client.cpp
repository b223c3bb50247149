// client.cpp - opening and closing clients, choosing the transport.
//
// Owns: the transport choice. Decides: an explicit name wins, then
// $VACCEL_TRANSPORT, then the default. Only "embedded" exists in this
// build; any other name is refused with -EPROTONOSUPPORT and a sentence
// naming it (never silently replaced by another transport).
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <new>
#include <string>
#include <string_view>

#include "client.hpp"

using namespace vaccel;

extern "C" {

int vaccel_client_open(const char* transport, vaccel_client** client)
{
    if (client == nullptr)
        return lib::record_local(Errc::invalid_argument,
                                 "vaccel_client_open: the client out-parameter is NULL");
    *client = nullptr;
    std::string_view name = transport != nullptr ? transport : "";
    if (name.empty()) {
        const char* env = std::getenv("VACCEL_TRANSPORT");
        name = env != nullptr && env[0] != '\0' ? env : VACCEL_TRANSPORT_EMBEDDED;
    }
    if (name != VACCEL_TRANSPORT_EMBEDDED) {
        lib::record_local(Errc::unsupported,
                          "transport '" + std::string(name) +
                              "' is not available in this build; use 'embedded' (or unset "
                              "VACCEL_TRANSPORT)");
        return -EPROTONOSUPPORT;
    }
    auto opened = lib::open_embedded_transport();
    if (!opened) {
        lib::record_status(opened.error().to_status());
        return error_errno(opened.error().code);
    }
    auto* made = new (std::nothrow) vaccel_client{std::move(*opened)};
    if (made == nullptr)
        return lib::record_local(Errc::out_of_memory, "vaccel_client_open: out of memory");
    *client = made;
    lib::record_status(vaccel_status{});
    return 0;
}

void vaccel_client_close(vaccel_client* client)
{
    delete client;  // the transport's session releases everything it owns
}

const char* vaccel_client_transport(const vaccel_client* client)
{
    return client != nullptr ? client->transport->name() : "";
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
