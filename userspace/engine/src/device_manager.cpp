// device_manager.cpp - opening the backends and signalling completions.
//
// Owns: the list of backends a DeviceManager opens and their order.
// Decides: the CPU backend is always last, so that accelerators (appended
// before it once their backends exist) get the low indices and "device 0"
// is the best device present.
#include "vaccel/engine/device_manager.hpp"

#include <utility>

#ifdef VACCEL_ENGINE_HAS_CPU
#include "vaccel/backend/cpu.hpp"
#endif

namespace vaccel::engine {

void CompletionSignal::notify()
{
    {
        std::lock_guard lock(mutex_);
        ++generation_;
        if (listener_)
            listener_();
    }
    changed_.notify_all();
}

void CompletionSignal::set_listener(std::function<void()> listener)
{
    std::lock_guard lock(mutex_);
    listener_ = std::move(listener);
}

std::uint64_t CompletionSignal::generation() const
{
    std::lock_guard lock(mutex_);
    return generation_;
}

bool CompletionSignal::wait_for_change(
    std::uint64_t seen, std::optional<std::chrono::steady_clock::time_point> deadline)
{
    std::unique_lock lock(mutex_);
    auto moved = [&] { return generation_ != seen; };
    if (!deadline) {
        changed_.wait(lock, moved);
        return true;
    }
    // steady_clock is CLOCK_MONOTONIC on Linux, the clock of the contract's
    // absolute timeouts.
    return changed_.wait_until(lock, *deadline, moved);
}

Device::Device(std::uint32_t index, std::unique_ptr<backend::Backend> backend)
    : index_(index),
      backend_(std::move(backend)),
      info_(backend_->device_info()),
      contexts_(info_.limits)
{
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
    : completions_(std::make_shared<CompletionSignal>())
{
    for (auto& backend : backends) {
        // Ownership: the notifier holds the signal alive for as long as the
        // backend may call it.
        backend->set_completion_notifier([signal = completions_] { signal->notify(); });
        devices_.push_back(
            std::make_unique<Device>(static_cast<std::uint32_t>(devices_.size()), std::move(backend)));
    }
}

DeviceManager::~DeviceManager() = default;

Result<std::shared_ptr<DeviceManager>> DeviceManager::open(const DeviceOptions& options)
{
    std::vector<std::unique_ptr<backend::Backend>> backends;
    // Accelerator backends (vulkan, cuda) are appended here, before the CPU.
#ifdef VACCEL_ENGINE_HAS_CPU
    if (options.cpu)
        backends.push_back(backend::open_cpu_backend(backend::CpuOptions{options.cpu_threads}));
#else
    (void)options;
#endif
    if (backends.empty())
        return fail(Error::of(Errc::unsupported, VACCEL_D_NO_DEVICE, 0, 0)
                        .with_note("no backend could be opened in this build"));
    return std::make_shared<DeviceManager>(std::move(backends));
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
    return caps & VACCEL_CAP_ALL;
}

}  // namespace vaccel::engine
