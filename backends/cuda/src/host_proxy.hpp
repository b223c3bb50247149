// host_proxy.hpp - a CUDA device whose contexts each live in a
// vaccel-cuda-host process (docs/adr/0018-cuda-backend.md, "One process per
// vaccel context").
//
// Decides:
//  - create_context starts a host (fork + exec, the socketpair and the
//    transfer window on fds 3 and 4) and waits for its hello; destroying
//    the context closes the socket, and the host exits;
//  - every other call is one request to the context's host and its reply
//    (host_protocol.hpp); object ids are the daemon's, so a completion can
//    arrive before the reply of its submission and still find its event;
//  - the proxy keeps what the engine asks without a request: the counters,
//    each buffer's in-flight submissions, each gate's value, each event's
//    state;
//  - a host that dies (killed, crashed) fails its context: pending calls and
//    events end with DeviceLost naming how it ended; the device and the other
//    contexts go on.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>

#include "objects.hpp"

namespace vaccel::backend::cuda {

// How long a host may take to answer, by kind of call. Past it the host is
// taken as hung: killed (SIGKILL, reaped) and its context lost.
struct HostDeadlines {
    std::chrono::milliseconds start{60'000};    // the hello: driver init and the CUDA context
    std::chrono::milliseconds load{300'000};    // load: the driver's JIT of PTX
    std::chrono::milliseconds memory{120'000};  // allocate, free, unload: pinning, zeroing
    std::chrono::milliseconds brief{30'000};    // every other request, and every send
};

// The proxy of `core`'s device; `host_program` is the vaccel-cuda-host to
// start. `deadlines` other than the default are for tests only.
std::unique_ptr<Backend> open_host_proxy(std::shared_ptr<DeviceCore> core,
                                         std::filesystem::path host_program,
                                         HostDeadlines deadlines = {});

}  // namespace vaccel::backend::cuda
