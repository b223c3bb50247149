// completion.cpp - the completion thread (completion.hpp).
#include "completion.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "slicing.hpp"

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
        pending_.push_back({std::move(submission)});
        ++wakes_;
    }
    changed_.notify_one();
}

void Completer::track_segment(std::shared_ptr<SubmissionState> submission, std::uint32_t index)
{
    {
        std::lock_guard lock(mutex_);
        pending_.push_back({std::move(submission), index});
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
    if (s.reported.exchange(true)) return;  // ended already (a fault, then a cancel)
    settle_run(*core_, s, state == EventState::complete);
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
    std::vector<Pending> batch;
    {
        std::lock_guard lock(mutex_);
        batch = pending_;
    }
    std::vector<const Pending*> finished;
    // Runs with an earlier entry not ended yet: their later ones wait, so
    // segments and the run's end are reported in order.
    std::vector<const SubmissionState*> waiting;
    const Driver& cu = *core_->cu;
    for (const Pending& p : batch) {
        const auto& s = p.submission;
        if (std::ranges::find(waiting, s.get()) != waiting.end()) continue;
        if (s->reported.load()) {  // failed by an earlier segment's fault
            finished.push_back(&p);
            continue;
        }
        ContextState& context = *s->queue->owner;
        if (core_->lost.load(std::memory_order_acquire)) {
            finish(*s, EventState::failed,
                   Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE)
                       .with_note(fmt::format("the CUDA device \"{}\" was lost while this work "
                                              "was on it; its outputs are undefined",
                                              core_->info.name)));
            finished.push_back(&p);
            continue;
        }
        const bool segment = p.segment != Pending::none;
        const CUevent event = segment ? s->marks[2 * p.segment + 1] : s->done;
        CUresult r = CUDA_ERROR_NOT_READY;
        if (const auto scope = context.enter()) r = cu.cuEventQuery(event);
        if (r == CUDA_ERROR_NOT_READY) {
            waiting.push_back(s.get());
            continue;
        }
        if (r == CUDA_SUCCESS) {
            if (segment) {
                if (s->sink) s->sink->segment_ended(p.segment);
            } else if (s->partial) {
                finish(*s, s->partial_state, *s->partial);
            } else {
                finish(*s, EventState::complete, {});
            }
        } else if (context_fault(r) || context.faulted.load()) {
            context.poison(r, s->launch ? "a kernel launched in this context"
                                        : "a program run in this context");
            finish(*s, EventState::failed, context.fault);
        } else {
            finish(*s, EventState::failed, core_->error(r, "waiting for the work"));
        }
        finished.push_back(&p);
    }
    if (finished.empty()) return false;
    std::lock_guard lock(mutex_);
    // pending_ only grew since the copy: its first batch.size() entries are
    // the batch's, in order.
    std::vector<Pending> kept;
    for (std::size_t i = 0; i < pending_.size(); ++i) {
        const bool done = i < batch.size() &&
                          std::ranges::find(finished, &batch[i]) != finished.end();
        if (!done) kept.push_back(std::move(pending_[i]));
    }
    pending_ = std::move(kept);
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
