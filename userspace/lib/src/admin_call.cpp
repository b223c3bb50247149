// admin_call.cpp - vaccel_admin() and vaccel_free(): the daemon's admin
// channel as a C call.
//
// Owns: the response buffer until it is handed to the caller (Ownership:
// malloc'd here, NUL-terminated, freed by the caller with vaccel_free()).
// Decides the sentences of the admin refusals, which the shared error text
// does not know: over the embedded transport (no daemon, so nothing to
// administer), no daemon socket to carry it (a kernel client's admin calls
// go over a socket connection of their own), not admin (who is asking, and
// who may), and a refused document (where).
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "client.hpp"

using namespace vaccel;

namespace {

const char* command_name(std::uint32_t command)
{
    switch (command) {
    case VACCEL_ADMIN_DEVICES: return "devices";
    case VACCEL_ADMIN_SESSIONS: return "sessions";
    case VACCEL_ADMIN_LIMITS_GET: return "limits get";
    case VACCEL_ADMIN_LIMITS_SET: return "limits set";
    case VACCEL_ADMIN_LIMITS_RESET: return "limits reset";
    case VACCEL_ADMIN_METRICS: return "metrics";
    case VACCEL_ADMIN_CONTAINERS: return "containers";
    case VACCEL_ADMIN_CONTAINER_ADD: return "container add";
    case VACCEL_ADMIN_CONTAINER_REMOVE: return "container remove";
    }
    return "unknown";
}

int record_admin_refusal(const vaccel_status& status, std::uint32_t command)
{
    switch (status.detail) {
    case VACCEL_D_PEER_GONE:
        return lib::record_explained(
            status, "DeviceLost: the daemon's admin channel (" +
                        std::string(command_name(command)) + ") is its socket at " +
                        lib::daemon_socket_path() + ", and no daemon answers there; start "
                        "vacceld, or point VACCEL_SOCKET (vaccelctl --socket) at its socket");
    case VACCEL_D_NOT_ADMIN:
        return lib::record_explained(
            status, "PermissionDenied: the daemon's admin channel (" +
                        std::string(command_name(command)) + ") serves root and members of its "
                        "admin group on the host, never a process inside a container (whatever "
                        "its uid), and uid " + std::to_string(status.arg0) + " gid " +
                        std::to_string(status.arg1) + " here is neither; run it on the host as "
                        "root or join the admin group vacceld was started with (--admin-group)");
    case VACCEL_D_ADMIN_REQUEST:
        return lib::record_explained(
            status, "InvalidArgument: the daemon refused the " +
                        std::string(command_name(command)) + " request document at byte " +
                        std::to_string(status.arg0) +
                        "; fix the document (docs/protocol.md describes it)");
    }
    lib::record_status(status);
    return error_errno(Error::from_status(status).code);
}

}  // namespace

extern "C" {

int vaccel_admin(vaccel_client* client, uint32_t command, const char* request_json,
                 char** response, size_t* response_bytes)
{
    if (response == nullptr)
        return lib::record_local(Errc::invalid_argument,
                                 "vaccel_admin: the response out-parameter is NULL");
    *response = nullptr;
    if (response_bytes != nullptr)
        *response_bytes = 0;
    if (client == nullptr)
        return lib::record_local(Errc::invalid_argument, "no client: pass the vaccel_client that "
                                                         "vaccel_client_open() returned");
    if (!client->transport->has_admin_channel())
        return lib::record_local(
            Errc::unsupported,
            "the admin channel (" + std::string(command_name(command)) + ") needs the daemon, "
            "and this client runs over the '" + client->transport->name() +
                "' transport; start vacceld and open the client with the 'socket' transport");

    struct vaccel_admin args{};
    args.command = command;
    const std::size_t request_size = request_json != nullptr ? std::strlen(request_json) : 0;
    const std::span<const std::byte> request(reinterpret_cast<const std::byte*>(request_json),
                                             request_size);
    std::vector<std::byte> document;
    const int rc = client->transport->admin(args, request, document);
    if (rc != 0)
        return record_admin_refusal(args.status, command);

    char* out = static_cast<char*>(std::malloc(document.size() + 1));
    if (out == nullptr)
        return lib::record_local(Errc::out_of_memory,
                                 "vaccel_admin: out of memory for the " +
                                     std::to_string(document.size()) + "-byte response");
    if (!document.empty())
        std::memcpy(out, document.data(), document.size());
    out[document.size()] = '\0';
    *response = out;
    if (response_bytes != nullptr)
        *response_bytes = document.size();
    lib::record_status(vaccel_status{});
    return 0;
}

void vaccel_free(void* memory)
{
    std::free(memory);
}

}  // extern "C"
