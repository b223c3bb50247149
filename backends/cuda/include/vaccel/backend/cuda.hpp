// cuda.hpp - opening the CUDA backend's devices.
//
// Owns nothing beyond the entry point. Decides (docs/adr/0018-cuda-backend.md):
// every device the CUDA driver reports is served, in the driver's order, as
// cuda:0, cuda:1, ...; the driver is loaded at run time (libcuda.so.1), so a
// machine without it has no CUDA device, which is not an error. A device
// runs TOSA programs (the shared GPU lowering on kernels/cuda), launches
// PTX and cubin kernels, and gives every vaccel context its own CUDA
// context, so a kernel that faults fails its own context only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "vaccel/backend/backend.hpp"

namespace vaccel::backend {

struct CudaOptions {
    // The daemon's state directory ([daemon] state_dir): PTX compiled for a
    // device is kept in <state_dir>/cuda/, so a program loads once per
    // driver and device. Empty: nothing is kept across restarts.
    std::filesystem::path state_dir;
    // Fault injection, for tests ([devices.cuda] inject_loss_after and
    // inject_loss_device): device cuda:<inject_loss_device> is lost while
    // accepting the submission that comes after this many (accepted
    // indeterminately), then behaves as a lost device does. UINT64_MAX: never.
    std::uint64_t inject_loss_after = UINT64_MAX;
    std::uint32_t inject_loss_device = 0;
};

struct CudaDevices {
    std::vector<std::unique_ptr<Backend>> devices;  // cuda:0, cuda:1, ... in driver order
    std::vector<std::string> refused;               // devices not served, each with why
    std::string unavailable;  // why there is no CUDA at all (no driver, ...); else empty
};

// Never fails: no driver or no device gives no devices, and `unavailable`
// says why.
CudaDevices open_cuda_devices(const CudaOptions& options = {});

}  // namespace vaccel::backend
