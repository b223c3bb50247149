// vulkan.hpp - opening the Vulkan backend's devices.
//
// Owns nothing beyond the entry point. Decides (docs/adr/0013-vulkan-backend.md):
// every physical device with Vulkan 1.3, synchronization2, timeline
// semaphores and a compute queue is served, ranked discrete > integrated >
// virtual > CPU (ties keep the loader's order); the others are refused with
// the reason in the log and in the probe report. A machine without a Vulkan
// driver has no Vulkan device, which is not an error. The backend allocates
// and transfers buffers; it runs no programs yet.
#pragma once

#include <filesystem>
#include <memory>
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

}  // namespace vaccel::backend
