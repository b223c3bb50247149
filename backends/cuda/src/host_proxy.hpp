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

#include <filesystem>
#include <memory>

#include "objects.hpp"

namespace vaccel::backend::cuda {

// The proxy of `core`'s device; `host_program` is the vaccel-cuda-host to start.
std::unique_ptr<Backend> open_host_proxy(std::shared_ptr<DeviceCore> core,
                                         std::filesystem::path host_program);

}  // namespace vaccel::backend::cuda
