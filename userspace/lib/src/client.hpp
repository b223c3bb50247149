// client.hpp - what a vaccel_client is, and the per-thread last status.
//
// Owns: the definition of struct vaccel_client (one transport, hence one
// session) and the thread-local record of the last call's outcome.
// Decides: every public call ends by recording its outcome (success clears
// it), so vaccel_last_status() always describes the calling thread's most
// recent call.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <span>
#include <string>

#include "transport.hpp"
#include "vaccel/vaccel.h"

struct vaccel_client {
    std::unique_ptr<vaccel::lib::Transport> transport;
    // Buffers this client mapped (vaccel_buffer_map), by handle. Ownership:
    // the mappings are the client's; unmapped by vaccel_buffer_unmap, by
    // vaccel_buffer_free, and when the client closes.
    std::mutex maps_mutex;
    std::unordered_map<std::uint64_t, vaccel::lib::Mapping> maps;

    ~vaccel_client();
};

namespace vaccel::lib {

// Records a transport's answer: status as the struct carries it.
void record_status(const vaccel_status& status);
// Records a refusal made by the library itself (before any transport), with
// the sentence to show; returns its negative errno.
int record_local(Errc code, std::string message);
// Records `status` with the library's own sentence for it (the status keeps
// its detail and arguments); returns its negative errno.
int record_explained(const vaccel_status& status, std::string message);

// Unmaps `buffer` if this client mapped it (a no-op otherwise).
void forget_mapping(vaccel_client* client, std::uint64_t buffer);

// Runs one op through the client's transport and records the outcome.
// Zeroes the struct's status first (the library owns the struct).
template <class T>
int invoke(vaccel_client* client, std::uint32_t opcode, T& args,
           std::span<const std::byte> in = {}, std::span<std::byte> out = {})
{
    if (client == nullptr)
        return record_local(Errc::invalid_argument, "no client: pass the vaccel_client that "
                                                    "vaccel_client_open() returned");
    args.status = vaccel_status{};
    const int rc = client->transport->call(opcode, &args, sizeof args, in, out);
    record_status(args.status);
    return rc;
}

}  // namespace vaccel::lib
