// vulkan.hpp - opening the Vulkan backend's devices.
//
// Owns nothing beyond the entry point. Decides (docs/adr/0013-vulkan-backend.md):
// every physical device with Vulkan 1.3, synchronization2, timeline
// semaphores and a compute queue is served, ranked discrete > integrated >
// virtual > CPU (ties keep the loader's order); the others are refused with
// the reason in the log and in the probe report. A machine without a Vulkan
// driver has no Vulkan device, which is not an error. The backend allocates
// and transfers buffers, runs FP32 TOSA programs, launches SPIR-V kernels
// and imports host memory (import_host_buffer).
#pragma once

#include <filesystem>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vaccel/backend/backend.hpp"
#include "vaccel/common/error.hpp"

namespace vaccel::backend {

struct VulkanOptions {
    // On a device with one memory heap (integrated GPU, software driver) the
    // Device domain prefers a host-visible type, so its transfers are a
    // mapped copy ([devices.vulkan] unified_memory = 0 keeps the
    // discrete-GPU preference).
    bool unified_memory = true;
    // Tests only: every write_buffer/read_buffer goes through the bounded
    // staging buffer and copy commands, even into mapped memory, so the
    // staging path runs on devices whose every memory type is host-visible.
    bool stage_all_transfers = false;
    // The daemon's state directory ([daemon] state_dir): each device keeps
    // its pipeline cache in <state_dir>/vulkan/. Empty: nothing is kept
    // across restarts.
    std::filesystem::path state_dir;
    // Fault injection, for tests ([devices.vulkan] inject_loss_after and
    // inject_loss_device): device vulkan:<inject_loss_device> is lost while
    // accepting the submission that comes after this many (it is accepted
    // indeterminately, as a real loss at that moment would leave it), and
    // then behaves as a lost device does. UINT64_MAX: never.
    std::uint64_t inject_loss_after = UINT64_MAX;
    std::uint32_t inject_loss_device = 0;
    // The device time a segment of a run aims at, in microseconds
    // ([devices.vulkan] slice_us; docs/adr/0026-gpu-device-scheduler.md):
    // the scheduler cuts long runs and long MATMUL / CONV2D dispatches into
    // segments of about this much, so a waiting tenant gets the device
    // within about two of them. 0: runs are never cut.
    std::uint32_t slice_us = default_slice_us;
    // How long batch work waits for a latency tenant's next item once its
    // last one ended, in microseconds ([devices.vulkan] latency_hold_us;
    // docs/adr/0026-gpu-device-scheduler.md). 0: never.
    std::uint32_t latency_hold_us = default_latency_hold_us;
};

// What the probe found about one physical device.
struct VulkanProbeLine {
    std::string name;
    bool served = false;
    std::string reason;  // why it was refused; empty when served
};

struct VulkanDevices {
    std::vector<std::unique_ptr<Backend>> devices;  // vulkan:0, vulkan:1, ... in rank order
    std::vector<VulkanProbeLine> probe;             // every physical device, loader order
    std::string unavailable;  // why there is no Vulkan at all (no driver, ...); else empty
};

// Never fails: no loader driver or no usable device gives no devices, and
// `unavailable` / `probe` say why.
VulkanDevices open_vulkan_devices(const VulkanOptions& options = {});

// Host memory import (VK_EXT_external_memory_host; docs/adr/0013): the
// alignment a pointer and a length must have, or nothing when `device` is
// not a Vulkan device or cannot import.
std::optional<std::uint64_t> vulkan_host_import_alignment(const Backend& device);

// A buffer of `context` over caller-owned host memory [memory, memory +
// bytes), imported rather than copied: what the host writes there is the
// buffer's contents, and what the device writes the host reads there. It is
// otherwise a buffer of `desc` (bound, transferred, freed as any other);
// its domain is HOST or SHARED. The memory must stay mapped until the
// buffer is freed and no submission binding it is in flight. Refused:
// Unsupported when the device cannot import or the domain is DEVICE;
// InvalidArgument (D_BAD_VALUE) when memory or bytes is not a multiple of
// the import alignment or desc.bytes exceeds bytes; the buffer and memory
// limits as for allocate_buffer.
Result<std::unique_ptr<Buffer>> import_host_buffer(Backend& device, Context& context,
                                                   const BufferDesc& desc, void* memory,
                                                   std::uint64_t bytes, BufferInfo& info);

}  // namespace vaccel::backend
