// completion.cpp - the completion thread (completion.hpp).
#include "completion.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace vaccel::backend::cuda {
namespace {

// How long the thread keeps asking after the last activity before it
// sleeps: a little over a short kernel's round trip.
constexpr std::uint64_t spin_ns = 200'000;
constexpr auto sleep_limit = std::chrono::milliseconds(2);

}  // namespace

Completer::Completer(std::shared_ptr<DeviceCore> core)
    : core_(std::move(core)), thread_([this] { run(); })
{
}

Completer::~Completer()
{
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void Completer::track(std::shared_ptr<SubmissionState> submission)
{
    {
        std::lock_guard lock(mutex_);
        pending_.push_back(std::move(submission));
        ++wakes_;
    }
    changed_.notify_one();
}

void CUDA_CB Completer::wake(void* completer)
{
    auto* self = static_cast<Completer*>(completer);
    {
        std::lock_guard lock(self->mutex_);
        ++self->wakes_;
    }
    self->changed_.notify_one();
}

void Completer::end_unstarted(SubmissionState& submission, EventState state, Error why)
{
    finish(submission, state, std::move(why));
}

void Completer::finish(SubmissionState& s, EventState state, Error why)
{
    s.failure = std::move(why);
    s.state.store(static_cast<std::uint32_t>(state), std::memory_order_release);
    s.release();
    core_->counters.events_in_flight.fetch_sub(1);
    if (auto sink = std::move(s.sink)) {
        EventStatus status;
        status.state = state;
        if (state != EventState::complete) status.failure = s.failure;
        sink->completed(status);
    }
}

bool Completer::sweep()
{
    std::vector<std::shared_ptr<SubmissionState>> batch;
    {
        std::lock_guard lock(mutex_);
        batch = pending_;
    }
    std::vector<const SubmissionState*> finished;
    const Driver& cu = *core_->cu;
    for (const auto& s : batch) {
        ContextState& context = *s->queue->owner;
        if (core_->lost.load(std::memory_order_acquire)) {
            finish(*s, EventState::failed,
                   Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE)
                       .with_note(fmt::format("the CUDA device \"{}\" was lost while this work "
                                              "was on it; its outputs are undefined",
                                              core_->info.name)));
            finished.push_back(s.get());
            continue;
        }
        CUresult r = CUDA_ERROR_NOT_READY;
        if (const auto scope = context.enter()) r = cu.cuEventQuery(s->done);
        if (r == CUDA_ERROR_NOT_READY) continue;
        if (r == CUDA_SUCCESS) {
            if (s->partial)
                finish(*s, EventState::failed, *s->partial);
            else
                finish(*s, EventState::complete, {});
        } else if (context_fault(r) || context.faulted.load()) {
            context.poison(r, s->launch ? "a kernel launched in this context"
                                        : "a program run in this context");
            finish(*s, EventState::failed, context.fault);
        } else {
            finish(*s, EventState::failed, core_->error(r, "waiting for the work"));
        }
        finished.push_back(s.get());
    }
    if (finished.empty()) return false;
    std::lock_guard lock(mutex_);
    std::erase_if(pending_, [&](const auto& s) {
        return std::find(finished.begin(), finished.end(), s.get()) != finished.end();
    });
    return true;
}

void Completer::run()
{
    std::uint64_t active_at = monotonic_ns();
    for (;;) {
        std::uint64_t seen = 0;
        {
            std::unique_lock lock(mutex_);
            if (pending_.empty()) {
                if (stop_) return;
                changed_.wait(lock, [&] { return stop_ || !pending_.empty(); });
                active_at = monotonic_ns();
                continue;
            }
            seen = wakes_;
        }
        if (sweep()) {
            active_at = monotonic_ns();
            continue;
        }
        if (monotonic_ns() - active_at < spin_ns) {
            std::this_thread::yield();
            continue;
        }
        std::unique_lock lock(mutex_);
        changed_.wait_for(lock, sleep_limit, [&] { return wakes_ != seen; });
        if (wakes_ != seen) active_at = monotonic_ns();
    }
}

}  // namespace vaccel::backend::cuda
