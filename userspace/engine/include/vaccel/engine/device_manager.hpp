// device_manager.hpp - the devices the engine serves, and who may call them.
//
// Owns: every opened Backend (one Device each; the device index is its
// position) and the device-wide context accounting (max_contexts is a limit
// per device across all sessions).
//
// Decides:
//  - which devices are opened: the backend registry's selection
//    (vaccel/backend/registry.hpp); the engine names no backend.
//  - how backends are called: a Backend takes calls from one thread at a
//    time (backend.hpp), so every call goes through Device::call(), which
//    holds the device's mutex for exactly the duration of the call. The one
//    exception is Device::load(), which compiles a program without that
//    mutex (backend.hpp allows it), so one session's compilation never
//    stalls the device for the others.
//  - device loss: usable() refuses with DeviceLost once the backend reports
//    its device lost; calls that release objects still go through, so
//    clients and session teardown can clean up.
//
// Completions are per event (event_watch.hpp), not device-wide.
//
// Lock order (engine-wide): Session mutex -> Device mutex -> an EventWatch's
// mutex (a leaf: backends complete events from their own threads and take
// only that).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <mutex>
#include <vector>

#include "vaccel.h"
#include "vaccel/backend/backend.hpp"
#include "vaccel/backend/registry.hpp"
#include "vaccel/common/error.hpp"
#include "vaccel/common/limits.hpp"

namespace vaccel::engine {

// A device's use, all sessions together, for the admin channel and metrics.
struct DeviceStats {
    backend::LiveCounters live;    // what the backend holds now
    std::uint64_t sessions = 0;     // sessions with at least one context here
    std::uint64_t submissions = 0;  // submissions accepted since the device opened
};

// One backend and the mutex that serialises calls into it.
class Device {
public:
    Device(std::uint32_t index, std::unique_ptr<backend::Backend> backend);

    std::uint32_t index() const { return index_; }
    // Immutable after opening: readable without the device mutex. `state`
    // in it is what it was at opening; state() is current.
    const vaccel_device_info& info() const { return info_; }
    // The backend's TOSA capability descriptors in their uapi form, read
    // once at opening (descriptor_count filled in): immutable like info().
    std::span<const vaccel_tosa_descriptor> tosa_descriptors() const { return descriptors_; }
    backend::DeviceState state() const { return backend_->state(); }
    // DeviceLost (VACCEL_D_DEVICE_STATE, arg0 = index) once the device is lost.
    Status usable() const;

    // Runs f(Backend&) under the device mutex and returns what f returns.
    template <class F>
    auto call(F&& f)
    {
        std::lock_guard lock(mutex_);
        return f(*backend_);
    }

    // load_program without the device mutex (see the top of this file). The
    // caller holds the session lock of the context's session.
    Result<std::unique_ptr<backend::Program>> load(backend::Context& context,
                                                   const backend::ProgramDesc& desc)
    {
        return backend_->load_program(context, desc);
    }

    backend::LiveCounters live();
    // What the device's scheduler served (Backend::device_service()): no
    // device mutex, the backend locks its own.
    std::optional<backend::DeviceService> service() const { return backend_->device_service(); }

    // Contexts alive on this device, all sessions together, against the
    // device's own max_contexts. Accounting locks itself.
    Accounting& contexts() { return contexts_; }

    // Takes the device mutex (live counters): not for a thread that must
    // never block.
    DeviceStats stats();
    // Bookkeeping the engine does as sessions come and go (any thread).
    void session_arrived() { sessions_.fetch_add(1, std::memory_order_relaxed); }
    void session_left() { sessions_.fetch_sub(1, std::memory_order_relaxed); }
    void submission_accepted() { submissions_.fetch_add(1, std::memory_order_relaxed); }

private:
    std::uint32_t index_;
    std::mutex mutex_;  // guards every call into backend_
    std::unique_ptr<backend::Backend> backend_;
    vaccel_device_info info_;
    std::vector<vaccel_tosa_descriptor> descriptors_;
    Accounting contexts_;
    std::atomic<std::uint64_t> sessions_{0};
    std::atomic<std::uint64_t> submissions_{0};
};

class DeviceManager {
public:
    // Opens the devices `selection` names (default: every device of every
    // backend in this build). Fails as backend::open_devices() does.
    static Result<std::shared_ptr<DeviceManager>> open(const backend::Selection& selection = {});

    // Takes backends already opened (tests, embedders); index = position.
    explicit DeviceManager(std::vector<std::unique_ptr<backend::Backend>> backends);
    ~DeviceManager();
    DeviceManager(const DeviceManager&) = delete;
    DeviceManager& operator=(const DeviceManager&) = delete;

    std::uint32_t count() const { return static_cast<std::uint32_t>(devices_.size()); }
    // nullptr when index >= count().
    Device* device(std::uint32_t index);
    // InvalidArgument, VACCEL_D_NO_DEVICE (arg0 = index, arg1 = count).
    Result<Device*> lookup(std::uint32_t index);

    // VACCEL_CAP_* offered by at least one device.
    std::uint64_t capabilities() const;

private:
    std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace vaccel::engine
