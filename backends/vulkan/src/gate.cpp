// gate.cpp - host gates on a timeline semaphore (gate.hpp).
#include "gate.hpp"

#include <utility>

#include "transfer.hpp"

namespace vaccel::backend::vulkan {

Result<std::shared_ptr<GateState>> GateState::create(std::shared_ptr<ContextState> owner)
{
    DeviceCore& core = *owner->device;
    VkSemaphoreTypeCreateInfo type{};
    type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type.initialValue = 0;
    VkSemaphoreCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
    info.pNext = &type;
    VkSemaphore semaphore = VK_NULL_HANDLE;
    if (VkResult r = vkCreateSemaphore(core.device, &info, nullptr, &semaphore); r != VK_SUCCESS)
        return fail(vulkan_error(core, r, "creating a gate's timeline semaphore"));
    auto gate = std::make_shared<GateState>(std::move(owner));
    gate->semaphore = semaphore;
    gate->owner->gates.fetch_add(1);
    core.counters.gates.fetch_add(1);
    return gate;
}

// Runs once the gate is destroyed and every submission released from it
// (which holds it, having waited on the semaphore) has completed.
GateState::~GateState()
{
    DeviceCore& core = *owner->device;
    vkDestroySemaphore(core.device, semaphore, nullptr);
    owner->gates.fetch_sub(1);
    core.counters.gates.fetch_sub(1);
}

std::uint64_t GateState::value() const
{
    std::uint64_t value = 0;
    // Only the host signals it, so a failure here means a lost device; the
    // value then reads 0 as the interface cannot report it.
    if (vkGetSemaphoreCounterValue(owner->device->device, semaphore, &value) != VK_SUCCESS) return 0;
    return value;
}

bool GateState::park(std::shared_ptr<SubmissionState> submission, std::uint64_t awaited)
{
    std::lock_guard lock(mutex);
    if (value() >= awaited) return false;
    waiting.push_back({std::move(submission), awaited});
    return true;
}

Result<std::vector<std::shared_ptr<SubmissionState>>> GateState::raise(std::uint64_t to)
{
    std::vector<std::shared_ptr<SubmissionState>> released;
    std::lock_guard lock(mutex);
    // A timeline only increases: a value at or below the current one
    // changes nothing (backend.hpp), and vkSignalSemaphore must not see it.
    if (!open || to <= value()) return released;
    VkSemaphoreSignalInfo signal{};
    signal.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
    signal.semaphore = semaphore;
    signal.value = to;
    if (VkResult r = vkSignalSemaphore(owner->device->device, &signal); r != VK_SUCCESS)
        return fail(vulkan_error(*owner->device, r, "raising a gate"));
    std::erase_if(waiting, [&](Waiter& waiter) {
        if (waiter.value > to) return false;
        released.push_back(std::move(waiter.submission));
        return true;
    });
    return released;
}

std::vector<GateState::Waiter> GateState::close()
{
    std::lock_guard lock(mutex);
    open = false;
    return std::exchange(waiting, {});
}

std::vector<GateState::Waiter> GateState::take()
{
    std::lock_guard lock(mutex);
    return std::exchange(waiting, {});
}

}  // namespace vaccel::backend::vulkan
