// drm_node.cpp - render node lookup (see drm_node.hpp).
#include "drm_node.hpp"

#include <xf86drm.h>

#include <fmt/format.h>

#include <filesystem>
#include <vector>

namespace vaccel::backend::vulkan {

std::optional<std::string> render_node_for(const PciLocation& pci)
{
    const int count = drmGetDevices2(0, nullptr, 0);
    if (count <= 0)
        return std::nullopt;  // no DRM device on this machine (no /dev/dri)
    std::vector<drmDevicePtr> devices(static_cast<std::size_t>(count));
    const int listed = drmGetDevices2(0, devices.data(), count);
    std::optional<std::string> node;
    for (int i = 0; i < listed; ++i) {
        const drmDevicePtr d = devices[static_cast<std::size_t>(i)];
        if (d->bustype != DRM_BUS_PCI || (d->available_nodes & (1 << DRM_NODE_RENDER)) == 0)
            continue;
        const drmPciBusInfo& bus = *d->businfo.pci;
        if (bus.domain == pci.domain && bus.bus == pci.bus && bus.dev == pci.device &&
            bus.func == pci.function) {
            node = d->nodes[DRM_NODE_RENDER];
            break;
        }
    }
    if (listed > 0)
        drmFreeDevices(devices.data(), listed);
    return node;
}

std::optional<std::string> render_node_for_minor(std::int64_t minor)
{
    const std::string path = fmt::format("/dev/dri/renderD{}", minor);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return std::nullopt;
    return path;
}

}  // namespace vaccel::backend::vulkan
