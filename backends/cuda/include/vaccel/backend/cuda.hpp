// cuda.hpp - opening the CUDA backend's devices.
//
// Owns nothing beyond the entry point. Decides (docs/adr/0018-cuda-backend.md):
// every device the CUDA driver reports is served, in the driver's order, as
// cuda:0, cuda:1, ...; the driver is loaded at run time (libcuda.so.1), so a
// machine without it has no CUDA device, which is not an error. A device
// runs TOSA programs (the shared GPU lowering on kernels/cuda) and launches
// PTX and cubin kernels. CUDA makes a kernel's fault sticky for the whole
// process, so by default every vaccel context runs in a process of its own
// (vaccel-cuda-host): a kernel that faults fails its own context only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "vaccel/backend/backend.hpp"

namespace vaccel::backend {

enum class CudaIsolation {
    // Each context in its own vaccel-cuda-host process: a fault stays there.
    process,
    // Contexts in the calling process: a fault in one ends every context of
    // the process. For the host itself, and for tests of the backend's own
    // code.
    none,
};

// How FP32 operands are multiplied ([devices.cuda] fp32_math).
enum class Fp32Math {
    // "fp32", the default: TOSA's FP32 rules, FP32 products on the FP32
    // cores.
    fp32,
    // "tf32": FP32 CONV2D and MATMUL multiply on the tensor cores with their
    // operands rounded to TF32 (10 mantissa bits), summed in FP32. Faster,
    // and outside TOSA's FP32 precision rules: an opt-in, off in every
    // conformance test (docs/adr/0028-tf32-opt-in.md).
    tf32,
};

struct CudaOptions {
    CudaIsolation isolation = CudaIsolation::process;
    // The host program (process isolation). Empty: $VACCEL_CUDA_HOST, else
    // vaccel-cuda-host beside the running executable, else the installed one
    // (<prefix>/sbin), else, in a tree with the tests, the one this build
    // made.
    std::filesystem::path host_program;
    // The daemon's state directory ([daemon] state_dir): PTX compiled for a
    // device is kept in <state_dir>/cuda/, so a program loads once per
    // driver and device. Empty: nothing is kept across restarts.
    std::filesystem::path state_dir;
    Fp32Math fp32_math = Fp32Math::fp32;
    // Fault injection, for tests ([devices.cuda] inject_loss_after and
    // inject_loss_device): device cuda:<inject_loss_device> is lost while
    // accepting the submission that comes after this many (accepted
    // indeterminately), then behaves as a lost device does. UINT64_MAX: never.
    // A device loss is the device's, not a context's, so with injection set
    // the devices run their contexts in the calling process (as isolation
    // none), where one device object sees every submission.
    std::uint64_t inject_loss_after = UINT64_MAX;
    std::uint32_t inject_loss_device = 0;
    // vaccel-cuda-host only (isolation none): accepted work does not go on
    // its stream until start_held() says so, since vacceld's device
    // scheduler decides when each context's work reaches the device
    // (docs/adr/0026-gpu-device-scheduler.md). A held submission is accepted
    // (checked, its buffers held) like any other; SUBMIT_AFTER is not used
    // with it (the daemon keeps gates itself).
    bool hold_starts = false;
    // The device time a segment of a run aims at, in microseconds
    // ([devices.cuda] slice_us; docs/adr/0026-gpu-device-scheduler.md). With
    // hold_starts, a TOSA run is cut into segments of about this much (an
    // FP32 MATMUL over its k), each released by vacceld's scheduler on its
    // own, so a waiting tenant gets the device within about two of them.
    // 0, or without hold_starts: runs are never cut.
    std::uint32_t slice_us = default_slice_us;
    // How long batch work waits for a latency tenant's next item once its
    // last one ended, in microseconds ([devices.cuda] latency_hold_us;
    // docs/adr/0026-gpu-device-scheduler.md). 0: never.
    std::uint32_t latency_hold_us = default_latency_hold_us;
};

struct CudaDevices {
    std::vector<std::unique_ptr<Backend>> devices;  // cuda:0, cuda:1, ... in driver order
    std::vector<std::string> refused;               // devices not served, each with why
    std::string unavailable;  // why there is no CUDA at all (no driver, ...); else empty
};

// Never fails: no driver or no device gives no devices, and `unavailable`
// says why. With process isolation a device whose host program cannot be
// found is refused, with the path it looked for.
CudaDevices open_cuda_devices(const CudaOptions& options = {});

// A device opened with hold_starts: puts the held work of `event` on its
// stream now (or fails it, when its context failed or its deadline passed
// while it was held). False when `event` is not held (it ended already, or
// `device` is no such device).
bool start_held(Backend& device, Event& event);
// How many segments the held work of `event` goes out in: each
// start_held() puts the next one on its stream (the first, then the rest
// as the daemon's scheduler releases them), and the event's sink hears of
// each but the last through EventSink::segment_ended(). 1 for work that is
// not cut, and for an event that is not held.
std::uint32_t held_segments(Backend& device, Event& event);
// Ends the held work of `event` unstarted, as `state` (failed or
// cancelled) for `why`; false when it is not held, or part of it ran.
bool end_held(Backend& device, Event& event, EventState state, const Error& why);

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", the device's UUID as
// nvidia-smi prints it.
std::string cuda_uuid_text(const vaccel_device_info& info);

}  // namespace vaccel::backend
