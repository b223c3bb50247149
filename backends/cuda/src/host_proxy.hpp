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
//    contexts go on;
//  - a host is not trusted (it runs a client's kernels in a CUDA context a
//    fault or a driver bug may have corrupted): a call it does not answer
//    within its deadline (HostDeadlines), a request it does not take within
//    one, and any message that breaks the protocol (a field out of range, a
//    reply nobody waits for, an event completed twice or after its
//    submission was refused) end it: the proxy kills it (SIGKILL) and reaps
//    it, and its context is lost as above, with the reason. The window it
//    shares is sealed at its size, and nothing the daemon reads from it is
//    parsed. Every call a blocked host holds up (the engine's device thread
//    for one) waits at most that deadline.
// The host program is an argument: vacceld passes vaccel-cuda-host
// (CudaOptions::host_program, $VACCEL_CUDA_HOST), tests a host of their
// own (tests/cuda/hostile_host.cpp).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>

#include "objects.hpp"

namespace vaccel::backend::cuda {

// How long a host may take to answer, by kind of call. Past it the host is
// taken as hung: killed (SIGKILL, reaped) and its context lost. Generous:
// they bound a host that stopped, and are no performance target. A load
// may JIT a large PTX module; an allocation pins and zeroes up to the
// device's memory, a free or unload may wait for the device to drain the
// context's work; everything else (queues, gates, submissions, which are
// accepted at once, one 16 MiB chunk of a transfer, a cancel) is quick. A
// context whose single call legitimately takes longer (a free the driver
// makes wait behind a kernel of that context that runs for minutes) is
// lost, as a hung one is. Not configurable: nothing but tests needs other
// values.
struct HostDeadlines {
    std::chrono::milliseconds start{60'000};    // the hello: driver init and the CUDA context
    std::chrono::milliseconds load{300'000};    // load: the driver's JIT of PTX
    std::chrono::milliseconds memory{120'000};  // allocate, free, unload: pinning, zeroing
    std::chrono::milliseconds brief{30'000};    // every other request, and every send
    // Not an answer's bound: how long one submission or launch may keep the
    // device to its tenant before the scheduler lets others' work go out
    // beside it (scheduler.hpp). Long enough for any one run of a real
    // network; short enough that a kernel that never ends blocks the other
    // tenants for no longer.
    std::chrono::milliseconds device_hold{100};
};

// The proxy of `core`'s device; `host_program` is the vaccel-cuda-host to
// start. `deadlines` other than the default are for tests only.
std::unique_ptr<Backend> open_host_proxy(std::shared_ptr<DeviceCore> core,
                                         std::filesystem::path host_program,
                                         HostDeadlines deadlines = {});

}  // namespace vaccel::backend::cuda
