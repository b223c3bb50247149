// device_times.cpp - each tenant's time on each device, from the devices'
// schedulers (admin.hpp), for the SESSIONS and TENANTS documents and the
// metrics.
#include <algorithm>

#include "vaccel/daemon/admin.hpp"

namespace vaccel::daemon {

DeviceTimes device_times(engine::DeviceManager& devices)
{
    DeviceTimes times;
    for (std::uint32_t i = 0; i < devices.count(); ++i) {
        const std::optional<backend::DeviceService> service = devices.device(i)->service();
        if (!service) continue;
        const double window = static_cast<double>(service->share_window_ns) *
                              std::max<std::uint32_t>(service->servers, 1);
        for (const backend::FlowService& flow : service->flows) {
            if (flow.flow.empty()) continue;  // a context's own flow: no tenant yet
            times[flow.flow].push_back(
                {i, flow.charged_ns, flow.held_ns,
                 window > 0 ? std::min(1.0, static_cast<double>(flow.window_ns) / window) : 0.0});
        }
    }
    return times;
}

}  // namespace vaccel::daemon
