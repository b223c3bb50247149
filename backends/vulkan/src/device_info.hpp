// device_info.hpp - the Vulkan device's description (vaccel_device_info).
//
// Decides: identity comes from the driver (name, vendor/device ids, device
// UUID, PCI location when VK_EXT_pci_bus_info is offered); the driver field
// reads "vaccel-vulkan <driver> <driver info> [renderDN]" so `vaccelctl
// devices` shows the driver version and render node; a CPU-type device is
// VACCEL_CLASS_OTHER, every other type a GPU. No program format and no
// capability is advertised until the backend runs programs, so automatic
// device choice never picks this device for a program.
#pragma once

#include "instance.hpp"
#include "memory_plan.hpp"
#include "vaccel.h"

namespace vaccel::backend::vulkan {

// Limits this backend sets itself (the device's own are read from the driver).
inline constexpr std::uint32_t max_contexts = 64;
inline constexpr std::uint32_t max_buffers_per_context = 1024;
inline constexpr std::uint32_t max_queues_per_context = 16;

vaccel_device_info describe_device(const PhysicalRecord& record, const MemoryPlan& plan);

// "major.minor.patch" of a driver version, in the vendor's encoding.
std::string driver_version_text(std::uint32_t vendor_id, std::uint32_t version);

}  // namespace vaccel::backend::vulkan
