// gate.cpp - host gates on a CUDA device (gate.hpp).
#include "gate.hpp"

#include <utility>

namespace vaccel::backend::cuda {

GateState::GateState(std::shared_ptr<ContextState> o) : owner(std::move(o))
{
    owner->gates.fetch_add(1);
    owner->device->counters.gates.fetch_add(1);
}

GateState::~GateState()
{
    owner->gates.fetch_sub(1);
    owner->device->counters.gates.fetch_sub(1);
}

std::uint64_t GateState::value() const
{
    std::lock_guard lock(mutex_);
    return value_;
}

bool GateState::park(std::shared_ptr<SubmissionState> submission, std::uint64_t value)
{
    std::lock_guard lock(mutex_);
    if (value_ >= value) return false;
    waiting_.push_back({std::move(submission), value});
    return true;
}

std::vector<std::shared_ptr<SubmissionState>> GateState::raise(std::uint64_t value)
{
    std::vector<std::shared_ptr<SubmissionState>> released;
    std::lock_guard lock(mutex_);
    if (value <= value_) return released;
    value_ = value;
    std::erase_if(waiting_, [&](Waiter& w) {
        if (w.value > value_) return false;
        released.push_back(std::move(w.submission));
        return true;
    });
    return released;
}

std::vector<GateState::Waiter> GateState::close()
{
    std::lock_guard lock(mutex_);
    open_ = false;
    return std::exchange(waiting_, {});
}

std::vector<GateState::Waiter> GateState::take()
{
    std::lock_guard lock(mutex_);
    return std::exchange(waiting_, {});
}

}  // namespace vaccel::backend::cuda
