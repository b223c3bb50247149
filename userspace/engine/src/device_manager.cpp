// device_manager.cpp - opening the devices and calling them (see device_manager.hpp).
#include "vaccel/engine/device_manager.hpp"

#include <fmt/format.h>

#include <utility>

namespace vaccel::engine {

Device::Device(std::uint32_t index, std::unique_ptr<backend::Backend> backend)
    : index_(index),
      backend_(std::move(backend)),
      info_(backend_->device_info()),
      // The device's own limit binds every tenant alike: its refusal says so.
      contexts_(info_.limits, nullptr,
                [index](Error& refusal) {
                    refusal.scope = VACCEL_SCOPE_MAKE(VACCEL_SCOPE_DEVICE, index, 0);
                })
{
    const auto descriptors = backend_->tosa_descriptors();
    for (const tosa::CapabilityDescriptor& descriptor : descriptors) {
        vaccel_tosa_descriptor& uapi = descriptors_.emplace_back(tosa::to_uapi(descriptor));
        uapi.descriptor_count = static_cast<std::uint32_t>(descriptors.size());
    }
}

Status Device::usable() const
{
    if (backend_->state() != backend::DeviceState::lost)
        return {};
    return fail(Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE, index_)
                    .with_note(fmt::format("device {} (\"{}\") was lost; release its objects and "
                                           "use another device",
                                           index_, info_.name)));
}

backend::LiveCounters Device::live()
{
    return call([](backend::Backend& backend) { return backend.live(); });
}

DeviceStats Device::stats()
{
    DeviceStats stats;
    stats.live = live();
    stats.sessions = sessions_.load(std::memory_order_relaxed);
    stats.submissions = submissions_.load(std::memory_order_relaxed);
    return stats;
}

DeviceManager::DeviceManager(std::vector<std::unique_ptr<backend::Backend>> backends)
{
    for (auto& backend : backends)
        devices_.push_back(
            std::make_unique<Device>(static_cast<std::uint32_t>(devices_.size()), std::move(backend)));
}

DeviceManager::~DeviceManager() = default;

Result<std::shared_ptr<DeviceManager>> DeviceManager::open(const backend::Selection& selection)
{
    auto backends = backend::open_devices(selection);
    if (!backends)
        return fail(std::move(backends.error()));
    return std::make_shared<DeviceManager>(std::move(*backends));
}

Device* DeviceManager::device(std::uint32_t index)
{
    return index < devices_.size() ? devices_[index].get() : nullptr;
}

Result<Device*> DeviceManager::lookup(std::uint32_t index)
{
    if (index >= devices_.size())
        return fail(Errc::invalid_argument, VACCEL_D_NO_DEVICE, index, devices_.size());
    return devices_[index].get();
}

std::uint64_t DeviceManager::capabilities() const
{
    std::uint64_t caps = 0;
    for (const auto& device : devices_) {
        caps |= device->info().flags;
        if (device->info().formats & VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA))
            caps |= VACCEL_CAP_TOSA;
        if (device->info().formats & VACCEL_FORMAT_BIT(VACCEL_FORMAT_CUDA_PTX))
            caps |= VACCEL_CAP_CUDA_PTX;
    }
    // The engine serves VACCEL_IOCTL_DEVICE_TOSA and RUN for every device,
    // and BUFFER_MAP (whose answer may still be Unsupported for a device
    // that cannot share its host memory).
    caps |= VACCEL_CAP_TOSA_DESCRIPTORS | VACCEL_CAP_RUN | VACCEL_CAP_BUFFER_MAP;
    return caps & VACCEL_CAP_ALL;
}

}  // namespace vaccel::engine
