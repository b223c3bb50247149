// device_info.hpp - what a CUDA device is and what it allows
// (docs/adr/0018-cuda-backend.md).
//
// Decides: identity is the driver's (name, UUID as nvidia-smi prints it,
// PCI location from the device attributes, PCI device id from sysfs when
// readable); memory domains are Device (cuMemAlloc), Host (pinned host
// memory mapped into the device) and Shared (managed memory, where the
// device supports it); the limits are the backend's own per-context caps,
// with memory bounded by the device's.
#pragma once

#include "objects.hpp"

namespace vaccel::backend::cuda {

inline constexpr std::uint32_t max_contexts = 32;  // each is a CUDA context: device memory and a time slice
inline constexpr std::uint32_t max_buffers_per_context = 1024;
inline constexpr std::uint32_t max_queues_per_context = 16;  // each is a stream
// Binding offsets of TOSA submissions: the widest load the kernels make.
inline constexpr std::uint64_t binding_alignment = 16;

// Reads the device's facts and description; an error names what failed.
Result<std::pair<DeviceFacts, vaccel_device_info>> describe_device(const Driver& cu,
                                                                   CUdevice device);

}  // namespace vaccel::backend::cuda
