// drm_node.hpp - the DRM render node of a PCI device, through libdrm.
//
// Decides: the node is found by the device's PCI location among the DRM
// devices libdrm lists (drmGetDevices2); none (no /dev/dri, no PCI location,
// a device without a render node) is not an error, just no node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace vaccel::backend::vulkan {

struct PciLocation {
    std::uint32_t domain = 0;
    std::uint32_t bus = 0;
    std::uint32_t device = 0;
    std::uint32_t function = 0;
};

// "/dev/dri/renderD128", or nullopt.
std::optional<std::string> render_node_for(const PciLocation& pci);

// VK_EXT_physical_device_drm's render minor as a node path when that node
// exists ("/dev/dri/renderD<minor>"), else nullopt.
std::optional<std::string> render_node_for_minor(std::int64_t minor);

}  // namespace vaccel::backend::vulkan
