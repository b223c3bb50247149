// cuda_backend.cpp - the CUDA backend: the Backend contract on one CUDA
// device (docs/adr/0018-cuda-backend.md).
//
// Owns: the device's core, its completion thread and the Backend calls.
// Decides:
//  - every vaccel context is its own CUDA context (cuCtxCreate); a sticky
//    fault (illegal address, trap) poisons every context of the process, so
//    vacceld runs each context in a vaccel-cuda-host of its own
//    (host_proxy.hpp) and this class serves that host; a faulted context
//    fails its work and refuses every later call with the fault; every
//    queue is a non-blocking stream;
//  - refusal order as the other backends': what the request is, then
//    limits, then state; limits are checked before any driver call;
//  - buffers: Device is cuMemAlloc, Host pinned host memory mapped into the
//    device, Shared managed memory; all start zeroed. Transfers of Device
//    buffers are cuMemcpy, of the others a memcpy on the host;
//  - TOSA submissions put the plan's kernels on the queue's stream, after
//    the program's previous run (runs share the arena), as one launch of
//    the CUDA graph recorded for the run's buffers (program.hpp); raw kernels are
//    checked against the device's and the function's limits and the
//    kernel's own parameter layout (cuFuncGetParamInfo) before launch.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>

#include "completion.hpp"
#include "slicing.hpp"
#include "device_info.hpp"
#include "dispatch.h"
#include "gate.hpp"
#include "host_proxy.hpp"
#include "kernels.hpp"
#include "program.hpp"
#include "vaccel/backend/cuda.hpp"
#include "vaccel/common/validation.hpp"

namespace vaccel::backend {

namespace cuda {
namespace {

Error in_flight_error(const CudaBuffer& buffer, std::string_view what)
{
    return Error::of(Errc::busy, VACCEL_D_IN_FLIGHT, buffer.identity(), buffer.in_flight())
        .with_note(fmt::format("{} refused: {} submission(s) in flight bind this buffer; wait "
                               "for their events first",
                               what, buffer.in_flight()));
}

// The largest power of two dividing `address`.
std::uint64_t address_alignment(std::uint64_t address)
{
    return address == 0 ? std::uint64_t{1} << 40 : address & (~address + 1);
}

class CudaBackend final : public Backend {
public:
    explicit CudaBackend(std::shared_ptr<DeviceCore> core)
        : core_(std::move(core)), completer_(core_)
    {
    }
    ~CudaBackend() override
    {
        std::vector<std::shared_ptr<SubmissionState>> held;
        {
            std::lock_guard lock(held_mutex_);
            held.swap(held_);
        }
        for (auto& s : held)
            completer_.end_unstarted(*s, EventState::cancelled,
                                     Error::of(Errc::cancelled)
                                         .with_note("the CUDA device closed before this work "
                                                    "was started; it never ran"));
    }

    const vaccel_device_info& device_info() const override { return core_->info; }
    std::vector<tosa::CapabilityDescriptor> tosa_descriptors() const override
    {
        return {cuda_descriptor()};
    }
    DeviceState state() const override
    {
        return core_->lost.load(std::memory_order_acquire) ? DeviceState::lost : DeviceState::ok;
    }

    Result<std::unique_ptr<Context>> create_context() override
    {
        if (auto ok = refuse_if_lost(); !ok) return fail(ok.error());
        const std::uint64_t used = core_->counters.contexts.load();
        if (used >= core_->info.limits.max_contexts)
            return fail(Error::limit_hit(VACCEL_LIMIT_CONTEXTS, core_->info.limits.max_contexts,
                                         used));
        auto context = std::make_shared<ContextState>(core_);
        // Blocking sync: a thread that waits sleeps rather than spins.
        if (CUresult r = core_->cu->cuCtxCreate(&context->context, nullptr,
                                                CU_CTX_SCHED_BLOCKING_SYNC, core_->device);
            r != CUDA_SUCCESS) {
            context->context = nullptr;
            return fail(core_->error(r, "creating a CUDA context"));
        }
        // cuCtxCreate leaves the new context current; the thread keeps what
        // it had (every call enters the context it needs).
        CUcontext created = nullptr;
        core_->cu->cuCtxPopCurrent(&created);
        core_->counters.contexts.fetch_add(1);
        return std::make_unique<CudaContext>(std::move(context));
    }

    Status destroy_context(std::unique_ptr<Context>& context) override
    {
        auto& state = *static_cast<CudaContext&>(*context).state;
        const std::uint64_t children =
            state.buffers + state.queues + state.programs.load() + state.gates.load();
        if (children != 0)
            return fail(Error::of(Errc::busy, VACCEL_D_IN_USE, children)
                            .with_note(fmt::format("the context still owns {} buffers, {} "
                                                   "programs, {} queues and {} gates; release "
                                                   "them first",
                                                   state.buffers, state.programs.load(),
                                                   state.queues, state.gates.load())));
        context.reset();
        return {};
    }

    Result<std::unique_ptr<Buffer>> allocate_buffer(Context& context, const BufferDesc& desc,
                                                    BufferInfo& info) override;
    Status free_buffer(std::unique_ptr<Buffer>& buffer) override
    {
        const auto& b = static_cast<const CudaBuffer&>(*buffer);
        if (b.in_flight() != 0) return fail(in_flight_error(b, "free"));
        buffer.reset();
        return {};
    }
    Status write_buffer(Buffer& buffer, std::uint64_t offset,
                        std::span<const std::byte> data) override
    {
        auto& target = static_cast<CudaBuffer&>(buffer);
        if (auto ok = check_transfer(target, VACCEL_USAGE_TRANSFER_DST, offset, data.size(),
                                     "write");
            !ok)
            return ok;
        if (target.host != nullptr) {
            std::memcpy(target.host + offset, data.data(), data.size());
            return {};
        }
        auto scope = target.owner->enter();
        if (!scope) return fail(scope.error());
        if (CUresult r = core_->cu->cuMemcpyHtoD(target.address + offset, data.data(), data.size());
            r != CUDA_SUCCESS)
            return fail(transfer_error(target, r, "writing the buffer"));
        return {};
    }
    Status read_buffer(Buffer& buffer, std::uint64_t offset, std::span<std::byte> data) override
    {
        auto& source = static_cast<CudaBuffer&>(buffer);
        if (auto ok = check_transfer(source, VACCEL_USAGE_TRANSFER_SRC, offset, data.size(),
                                     "read");
            !ok)
            return ok;
        if (source.host != nullptr) {
            std::memcpy(data.data(), source.host + offset, data.size());
            return {};
        }
        auto scope = source.owner->enter();
        if (!scope) return fail(scope.error());
        if (CUresult r = core_->cu->cuMemcpyDtoH(data.data(), source.address + offset, data.size());
            r != CUDA_SUCCESS)
            return fail(transfer_error(source, r, "reading the buffer"));
        return {};
    }

    Result<std::unique_ptr<Program>> load_program(Context& context,
                                                  const ProgramDesc& desc) override
    {
        if (desc.format != VACCEL_FORMAT_TOSA && desc.format != VACCEL_FORMAT_CUDA_PTX &&
            desc.format != VACCEL_FORMAT_CUDA_CUBIN)
            return fail(Error::of(Errc::unsupported, VACCEL_D_FORMAT, desc.format)
                            .with_note("the CUDA device loads TOSA 1.0 programs, PTX and cubin "
                                       "only; run other kernel programs on the device of "
                                       "their format"));
        if (desc.payload.size() > core_->info.limits.max_artifact_bytes)
            return fail(Error::limit_hit(VACCEL_LIMIT_ARTIFACT_BYTES,
                                         core_->info.limits.max_artifact_bytes,
                                         desc.payload.size()));
        auto& owner = static_cast<CudaContext&>(context).state;
        if (owner->programs.load() >= core_->info.limits.max_programs)
            return fail(Error::limit_hit(VACCEL_LIMIT_PROGRAMS, core_->info.limits.max_programs,
                                         owner->programs.load()));
        if (auto ok = owner->usable(); !ok) return fail(ok.error());
        auto program = desc.format == VACCEL_FORMAT_TOSA ? load_tosa(owner, desc)
                                                         : load_kernels(owner, desc);
        if (!program) return fail(program.error());
        owner->programs.fetch_add(1);
        return std::make_unique<CudaProgram>(std::move(*program));
    }
    Status unload_program(std::unique_ptr<Program>& program) override
    {
        auto& state = static_cast<CudaProgram&>(*program).state;
        if (const auto running = state->in_flight.load(std::memory_order_acquire); running != 0)
            return fail(Error::of(Errc::busy, VACCEL_D_IN_USE, running)
                            .with_note(fmt::format("the program has {} submission(s) in "
                                                   "flight; wait for their events first",
                                                   running)));
        state->owner->programs.fetch_sub(1);
        program.reset();
        return {};
    }

    Result<std::unique_ptr<Queue>> create_queue(Context& context) override
    {
        auto& owner = static_cast<CudaContext&>(context).state;
        const auto max = core_->info.limits.max_queues;
        if (owner->queues >= max)
            return fail(Error::limit_hit(VACCEL_LIMIT_QUEUES, max, owner->queues));
        if (auto ok = owner->usable(); !ok) return fail(ok.error());
        auto scope = owner->enter();
        if (!scope) return fail(scope.error());
        auto queue = std::make_shared<QueueState>(owner);
        if (CUresult r = core_->cu->cuStreamCreate(&queue->stream, CU_STREAM_NON_BLOCKING);
            r != CUDA_SUCCESS) {
            queue->stream = nullptr;
            return fail(core_->error(r, "creating a stream"));
        }
        owner->queues += 1;
        core_->counters.queues.fetch_add(1);
        return std::make_unique<CudaQueue>(std::move(queue));
    }
    Status destroy_queue(std::unique_ptr<Queue>& queue) override
    {
        // Submissions on it hold the QueueState until they are reported.
        queue.reset();
        return {};
    }

    Result<std::unique_ptr<Gate>> create_gate(Context& context) override
    {
        auto& owner = static_cast<CudaContext&>(context).state;
        const auto max = core_->info.limits.max_gates;
        if (owner->gates.load() >= max)
            return fail(Error::limit_hit(VACCEL_LIMIT_GATES, max, owner->gates.load()));
        if (auto ok = owner->usable(); !ok) return fail(ok.error());
        auto gate = std::make_shared<GateState>(owner);
        std::lock_guard lock(gates_mutex_);
        std::erase_if(live_gates_, [](const auto& weak) { return weak.expired(); });
        live_gates_.push_back(gate);
        return std::make_unique<CudaGate>(std::move(gate));
    }
    Status raise_gate(Gate& gate, std::uint64_t value) override
    {
        for (auto& submission : static_cast<CudaGate&>(gate).state->raise(value))
            start(std::move(submission));
        return {};
    }
    std::uint64_t gate_value(const Gate& gate) const override
    {
        return static_cast<const CudaGate&>(gate).state->value();
    }
    Status destroy_gate(std::unique_ptr<Gate>& gate) override
    {
        for (GateState::Waiter& waiter : static_cast<CudaGate&>(*gate).state->close())
            completer_.end_unstarted(
                *waiter.submission, EventState::cancelled,
                Error::of(Errc::cancelled, VACCEL_D_GATE_DESTROYED, 0, waiter.value)
                    .with_note(fmt::format("the gate this submission waited on was destroyed "
                                           "before it reached {}; the work never ran",
                                           waiter.value)));
        gate.reset();
        return {};
    }

    Result<Submitted> submit(const SubmitDesc& desc) override;
    Result<Submitted> launch(const LaunchDesc& desc) override;

    EventStatus poll(Event& event) override
    {
        const SubmissionState& s = *static_cast<CudaEvent&>(event).submission;
        EventStatus status;
        status.state = static_cast<EventState>(s.state.load(std::memory_order_acquire));
        if (status.state == EventState::failed || status.state == EventState::cancelled)
            status.failure = s.failure;
        return status;
    }
    Status destroy_event(std::unique_ptr<Event>& event) override
    {
        const SubmissionState& s = *static_cast<CudaEvent&>(*event).submission;
        if (s.state.load(std::memory_order_acquire) == VACCEL_EVENT_PENDING)
            return fail(Error::of(Errc::busy, VACCEL_D_NOT_COMPLETE)
                            .with_note("the event is still pending; wait for it first"));
        core_->counters.events.fetch_sub(1);
        event.reset();
        return {};
    }
    // Only submissions parked on a gate or held have not started.
    std::uint64_t cancel_pending(Context& context, const Error& why) override
    {
        const auto& owner = static_cast<CudaContext&>(context).state;
        std::vector<std::shared_ptr<SubmissionState>> held;
        {
            std::lock_guard lock(held_mutex_);
            auto moved = std::ranges::stable_partition(
                held_, [&](const auto& s) { return s->queue->owner != owner; });
            held.assign(std::make_move_iterator(moved.begin()), std::make_move_iterator(moved.end()));
            held_.erase(moved.begin(), moved.end());
        }
        std::erase_if(held, [](const auto& s) { return s->reported.load(); });
        for (auto& s : held) cut_short(s, EventState::cancelled, why);
        std::vector<std::shared_ptr<GateState>> gates;
        {
            std::lock_guard lock(gates_mutex_);
            for (const auto& weak : live_gates_)
                if (auto gate = weak.lock(); gate && gate->owner == owner)
                    gates.push_back(std::move(gate));
        }
        std::uint64_t cancelled = held.size();
        for (const auto& gate : gates)
            for (GateState::Waiter& waiter : gate->take()) {
                completer_.end_unstarted(*waiter.submission, EventState::cancelled, why);
                ++cancelled;
            }
        return cancelled;
    }

    LiveCounters live() const override { return core_->counters.snapshot(); }

private:
    Status refuse_if_lost() const
    {
        if (core_->lost.load(std::memory_order_acquire))
            return fail(Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE)
                            .with_note(fmt::format("the CUDA device \"{}\" was lost; use another "
                                                   "device",
                                                   core_->info.name)));
        return {};
    }
    Error transfer_error(CudaBuffer& buffer, CUresult r, std::string_view what)
    {
        if (context_fault(r)) {
            buffer.owner->poison(r, what);
            return buffer.owner->fault;
        }
        return core_->error(r, what);
    }
    Status check_transfer(const CudaBuffer& buffer, std::uint32_t usage, std::uint64_t offset,
                          std::uint64_t length, std::string_view what) const
    {
        if ((buffer.desc().usage & usage) == 0)
            return fail(Error::of(Errc::permission_denied, VACCEL_D_USAGE, usage,
                                  buffer.desc().usage)
                            .with_note(fmt::format("{} refused: the buffer was allocated "
                                                   "without the {} usage",
                                                   what,
                                                   usage == VACCEL_USAGE_TRANSFER_DST
                                                       ? "TRANSFER_DST"
                                                       : "TRANSFER_SRC")));
        if (buffer.in_flight() != 0) return fail(in_flight_error(buffer, what));
        auto end = validate::range(buffer.desc().bytes, offset, length);
        if (!end) return fail(end.error());
        return buffer.owner->usable();
    }
    // The checks submit and launch share, after the binding rules: each
    // buffer is of the queue's context, and the in-flight rules (a buffer
    // written by an unfinished submission binds nowhere; one read by one
    // is not written).
    Status check_bindings(std::span<const Binding> bindings, const ContextState& owner,
                          std::uint64_t alignment) const
    {
        for (std::size_t i = 0; i < bindings.size(); ++i) {
            const Binding& b = bindings[i];
            const auto& buffer = static_cast<const CudaBuffer&>(*b.buffer);
            if (buffer.owner.get() != &owner)
                return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT, i)
                                .with_note(fmt::format("binding {} names a buffer of another "
                                                       "context",
                                                       i)));
            if (b.offset % alignment != 0)
                return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                                      offsetof(vaccel_binding, offset), b.offset)
                                .with_note(fmt::format("binding {}: offset {} is not a multiple "
                                                       "of {} bytes, the widest access of the "
                                                       "CUDA kernels; bind at an aligned offset",
                                                       i, b.offset, alignment)));
        }
        for (const Binding& b : bindings) {
            const auto& buffer = static_cast<const CudaBuffer&>(*b.buffer);
            const bool writes = (b.access & VACCEL_ACCESS_WRITE) != 0;
            if (buffer.writers.load(std::memory_order_acquire) != 0 ||
                (writes && buffer.in_flight() != 0))
                return fail(in_flight_error(buffer, writes ? "binding a buffer for writing"
                                                           : "binding a buffer for reading"));
        }
        return {};
    }
    // An accepted submission: holds its buffers and program, counts the
    // event; the caller starts or parks it.
    std::shared_ptr<SubmissionState> accept(const std::shared_ptr<QueueState>& queue,
                                            const std::shared_ptr<ProgramState>& program,
                                            std::span<const Binding> bindings,
                                            std::shared_ptr<EventSink> sink)
    {
        auto s = std::make_shared<SubmissionState>();
        s->queue = queue;
        s->program = program;
        program->in_flight.fetch_add(1);
        for (const Binding& b : bindings) {
            auto* buffer = static_cast<CudaBuffer*>(b.buffer);
            const bool writes = (b.access & VACCEL_ACCESS_WRITE) != 0;
            (writes ? buffer->writers : buffer->readers).fetch_add(1);
            s->held.push_back({buffer, writes});
        }
        s->sink = std::move(sink);
        core_->counters.events.fetch_add(1);
        core_->counters.events_in_flight.fetch_add(1);
        return s;
    }
    // Puts an accepted submission on its stream; false (and the submission
    // reported) when it cannot go.
    Status enqueue(SubmissionState& s);
    // Starts a submission its gate (or the daemon's scheduler) released;
    // one that cannot start fails, since it was accepted already.
    void start(std::shared_ptr<SubmissionState> s, std::string_view waited_for = "its gate")
    {
        ContextState& owner = *s->queue->owner;
        if (s->next_segment != 0) {  // a later segment: the run is under way
            if (auto ok = owner.usable(); !ok) {
                cut_short(std::move(s), EventState::failed, ok.error());
                return;
            }
        } else if (auto ok = owner.usable(); !ok) {
            completer_.end_unstarted(*s, EventState::failed, ok.error());
            return;
        } else if (s->deadline_ns != 0 && monotonic_ns() >= s->deadline_ns) {
            completer_.end_unstarted(
                *s, EventState::failed,
                Error::of(Errc::deadline_expired, VACCEL_D_DEADLINE)
                    .with_note(fmt::format("the deadline passed while the submission waited "
                                           "for {}; the work never ran",
                                           waited_for)));
            return;
        }
        const std::uint32_t segment = s->next_segment;
        if (auto ok = enqueue(*s); !ok) {
            if (segment == 0)
                completer_.end_unstarted(*s, EventState::failed, ok.error());
            else
                cut_short(std::move(s), EventState::failed, ok.error());
            return;
        }
        go_on(std::move(s), segment);
    }
    // `segment` of `s` is on its stream: the completion thread waits for
    // it, and a run with more segments waits in held_ for its next
    // start_held().
    void go_on(std::shared_ptr<SubmissionState> s, std::uint32_t segment)
    {
        if (segments_left(*s) == 0) {
            completer_.track(std::move(s));
            return;
        }
        completer_.track_segment(s, segment);
        std::lock_guard lock(held_mutex_);
        held_.push_back(std::move(s));
    }
    // Ends a run cut into segments before its last one went: what is on the
    // stream runs, and the event ends as `state` for `why` after it (never
    // before: its buffers are in use until then). A run that has not
    // started ends at once.
    void cut_short(std::shared_ptr<SubmissionState> s, EventState state, Error why)
    {
        if (s->next_segment == 0) {
            completer_.end_unstarted(*s, state, std::move(why));
            return;
        }
        s->partial = std::move(why);
        s->partial_state = state;
        s->next_segment = static_cast<std::uint32_t>(s->cut->segments.size());  // no more go
        const Driver& cu = *core_->cu;
        const auto scope = s->queue->owner->enter();
        // `done` was made as the first segment went (enqueue).
        if (!scope || s->done == nullptr ||
            cu.cuEventRecord(s->done, s->queue->stream) != CUDA_SUCCESS) {
            // Nothing can wait on the stream: wait for it here.
            if (scope) cu.cuStreamSynchronize(s->queue->stream);
            completer_.end_unstarted(*s, state, *s->partial);
            return;
        }
        cu.cuLaunchHostFunc(s->queue->stream, &Completer::wake, &completer_);
        completer_.track(std::move(s));
    }
    // Accepted: parked on its gate, or on its stream. Fault injection makes
    // the accepted submission indeterminate and the device lost.
    Result<Submitted> accept_and_go(std::shared_ptr<SubmissionState> s, GateState* gate,
                                    std::uint64_t after_value)
    {
        Submitted out;
        out.event = std::make_unique<CudaEvent>(s);
        if (++core_->accepted > core_->inject_loss_after) {
            core_->lost.store(true, std::memory_order_release);
            Error lost = Error::of(Errc::device_lost, VACCEL_D_INDETERMINATE)
                             .with_note(fmt::format("the CUDA device \"{}\" was lost while "
                                                    "accepting this work (injected fault)",
                                                    core_->info.name));
            completer_.end_unstarted(*s, EventState::failed, lost);
            out.indeterminate = lost;
            return out;
        }
        if (gate != nullptr && gate->park(s, after_value)) return out;
        s->gate.reset();
        if (core_->options.hold_starts) {
            std::lock_guard lock(held_mutex_);
            held_.push_back(std::move(s));
            return out;
        }
        if (auto ok = enqueue(*s); !ok) {
            // Nothing reached the stream: refused, nothing retained.
            s->release();
            s->sink.reset();
            s->state.store(VACCEL_EVENT_FAILED);
            core_->counters.events_in_flight.fetch_sub(1);
            core_->counters.events.fetch_sub(1);
            return fail(ok.error());
        }
        go_on(std::move(s), 0);  // not cut: hold_starts is off
        return out;
    }

public:
    // Takes `event`'s submission out of the held ones; null when not held.
    std::shared_ptr<SubmissionState> take_held(Event& event)
    {
        const SubmissionState* wanted = static_cast<CudaEvent&>(event).submission.get();
        std::lock_guard lock(held_mutex_);
        auto it = std::ranges::find_if(held_, [&](const auto& s) { return s.get() == wanted; });
        if (it == held_.end()) return nullptr;
        std::shared_ptr<SubmissionState> s = std::move(*it);
        held_.erase(it);
        if (s->reported.load()) return nullptr;  // a segment faulted: it ended
        return s;
    }
    void start_held(std::shared_ptr<SubmissionState> s) { start(std::move(s), "the device"); }
    void end_held(std::shared_ptr<SubmissionState> s, EventState state, const Error& why)
    {
        cut_short(std::move(s), state, why);
    }

private:
    std::shared_ptr<DeviceCore> core_;
    std::mutex gates_mutex_;  // guards live_gates_
    std::vector<std::weak_ptr<GateState>> live_gates_;
    // hold_starts: accepted submissions waiting for start_held(), oldest
    // first (a host holds at most what the daemon's scheduler keeps queued).
    std::mutex held_mutex_;
    std::vector<std::shared_ptr<SubmissionState>> held_;
    // Declared last: destroyed first, so every accepted submission is
    // reported while the device still exists.
    Completer completer_;
};

Result<std::unique_ptr<Buffer>> CudaBackend::allocate_buffer(Context& context,
                                                             const BufferDesc& desc,
                                                             BufferInfo& info)
{
    const auto& device = core_->info;
    if (auto valid = validate::buffer_desc(device, desc.bytes, desc.alignment, desc.domain,
                                           desc.usage, desc.access);
        !valid)
        return fail(valid.error());
    auto& owner = static_cast<CudaContext&>(context).state;
    if (owner->buffers >= device.limits.max_buffers)
        return fail(Error::limit_hit(VACCEL_LIMIT_BUFFERS, device.limits.max_buffers,
                                     owner->buffers));
    // Whole 256-byte units: cuMemAlloc's granule, so what is counted is
    // what the device gives.
    const std::uint64_t rounded = (desc.bytes + 255) / 256 * 256;
    if (owner->memory_bytes.load() + rounded > device.limits.max_memory_bytes)
        return fail(Error::limit_hit(VACCEL_LIMIT_MEMORY_BYTES, device.limits.max_memory_bytes,
                                     owner->memory_bytes.load()));
    if (auto ok = owner->usable(); !ok) return fail(ok.error());
    auto scope = owner->enter();
    if (!scope) return fail(scope.error());
    const Driver& cu = *core_->cu;
    auto buffer = std::make_unique<CudaBuffer>(owner, desc);
    CUresult r = CUDA_SUCCESS;
    if (desc.domain == VACCEL_DOMAIN_HOST) {
        void* host = nullptr;
        r = cu.cuMemHostAlloc(&host, rounded, CU_MEMHOSTALLOC_DEVICEMAP);
        if (r == CUDA_SUCCESS) {
            buffer->host = static_cast<std::byte*>(host);
            r = cu.cuMemHostGetDevicePointer(&buffer->address, host, 0);
            if (r == CUDA_SUCCESS) std::memset(host, 0, rounded);
        }
    } else if (desc.domain == VACCEL_DOMAIN_SHARED) {
        r = cu.cuMemAllocManaged(&buffer->address, rounded, CU_MEM_ATTACH_GLOBAL);
        if (r == CUDA_SUCCESS) {
            buffer->host = reinterpret_cast<std::byte*>(buffer->address);
            std::memset(buffer->host, 0, rounded);
        }
    } else {
        r = cu.cuMemAlloc(&buffer->address, rounded);
        if (r == CUDA_SUCCESS) r = cu.cuMemsetD8(buffer->address, 0, rounded);
    }
    if (r != CUDA_SUCCESS)
        return fail(core_->error(r, fmt::format("allocating {} bytes", rounded)));
    const std::uint64_t alignment = address_alignment(buffer->address);
    if (desc.alignment != 0 && alignment < desc.alignment)
        return fail(Error::of(Errc::resource_limit, VACCEL_D_BAD_VALUE,
                              offsetof(vaccel_buffer_alloc, alignment), desc.alignment)
                        .with_note(fmt::format("the device gave an allocation aligned to {} "
                                               "bytes, less than the {} asked for",
                                               alignment, desc.alignment)));
    buffer->allocation_bytes = rounded;
    buffer->serial = core_->next_identity++;
    buffer->counted = true;
    owner->buffers += 1;
    owner->memory_bytes += rounded;
    core_->counters.buffers.fetch_add(1);
    core_->counters.buffer_bytes.fetch_add(rounded);
    info.allocation_bytes = rounded;
    info.measured_alignment = alignment;
    info.properties = VACCEL_PROP_DIRECT_BINDING;
    if (desc.domain == VACCEL_DOMAIN_DEVICE || desc.domain == VACCEL_DOMAIN_SHARED)
        info.properties |= VACCEL_PROP_DEVICE_LOCAL;
    if (buffer->host != nullptr) info.properties |= VACCEL_PROP_HOST_VISIBLE | VACCEL_PROP_COHERENT;
    return std::unique_ptr<Buffer>(std::move(buffer));
}

Result<Submitted> CudaBackend::submit(const SubmitDesc& desc)
{
    auto& queue = static_cast<CudaQueue&>(*desc.queue).state;
    auto& program = static_cast<CudaProgram&>(*desc.program).state;
    if (auto ok = refuse_if_lost(); !ok) return fail(ok.error());
    if (program->format != VACCEL_FORMAT_TOSA)
        return fail(Error::of(Errc::incompatible, VACCEL_D_FORMAT, program->format)
                        .with_note("a kernel program is run with vaccel_launch, not submitted"));
    if (program->owner != queue->owner)
        return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT)
                        .with_note("the program belongs to another context than the queue"));
    auto* gate = static_cast<CudaGate*>(desc.after);
    if (gate != nullptr && gate->state->owner != queue->owner)
        return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT)
                        .with_note("the gate belongs to another context than the queue"));
    for (std::size_t i = 0; i < desc.bindings.size(); ++i)
        if (desc.bindings[i].buffer == nullptr)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE, 0)
                            .with_note(fmt::format("binding {} names no buffer", i)));
    std::vector<validate::SlotSpec> slots;
    for (const SlotInfo& slot : program->slots) slots.push_back({slot.role, slot.bytes});
    std::vector<validate::BindingFacts> facts;
    for (const Binding& b : desc.bindings) {
        const auto& buffer = static_cast<const CudaBuffer&>(*b.buffer);
        facts.push_back({b.slot, b.access, buffer.identity(), buffer.desc().bytes,
                         buffer.desc().usage, buffer.desc().access, b.offset, b.bytes});
    }
    if (auto ok = validate::bindings(slots, facts, core_->info.limits.max_bindings); !ok)
        return fail(ok.error());
    if (auto ok = check_bindings(desc.bindings, *queue->owner, binding_alignment); !ok)
        return fail(ok.error());
    if (auto ok = queue->owner->usable(); !ok) return fail(ok.error());
    if (desc.deadline_ns != 0 && monotonic_ns() >= desc.deadline_ns)
        return fail(Error::of(Errc::deadline_expired, VACCEL_D_DEADLINE)
                        .with_note("the deadline had already passed when the work was "
                                   "submitted"));
    auto s = accept(queue, program, desc.bindings, desc.sink);
    s->buffers.assign(program->slots.size() + (program->arena != 0 ? 1 : 0), 0);
    for (const Binding& b : desc.bindings)
        s->buffers[b.slot] = static_cast<const CudaBuffer&>(*b.buffer).address + b.offset;
    if (program->arena != 0) s->buffers.back() = program->arena;
    s->deadline_ns = desc.deadline_ns;
    plan_run(*core_, *s);
    if (gate != nullptr) {
        s->gate = gate->state;
        s->after_value = desc.after_value;
    }
    return accept_and_go(std::move(s), gate != nullptr ? gate->state.get() : nullptr,
                         desc.after_value);
}

Result<Submitted> CudaBackend::launch(const LaunchDesc& desc)
{
    auto& queue = static_cast<CudaQueue&>(*desc.queue).state;
    auto& program = static_cast<CudaProgram&>(*desc.program).state;
    if (auto ok = refuse_if_lost(); !ok) return fail(ok.error());
    if (program->format != VACCEL_FORMAT_CUDA_PTX && program->format != VACCEL_FORMAT_CUDA_CUBIN)
        return fail(Error::of(Errc::incompatible, VACCEL_D_FORMAT, program->format)
                        .with_note("a TOSA program is run with vaccel_submit, not launched"));
    if (program->owner != queue->owner)
        return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT)
                        .with_note("the program belongs to another context than the queue"));
    for (std::size_t i = 0; i < desc.bindings.size(); ++i)
        if (desc.bindings[i].buffer == nullptr)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE, 0)
                            .with_note(fmt::format("binding {} names no buffer", i)));
    std::vector<validate::BindingFacts> facts;
    std::vector<vaccel_binding> wire;
    for (const Binding& b : desc.bindings) {
        const auto& buffer = static_cast<const CudaBuffer&>(*b.buffer);
        facts.push_back({b.slot, b.access, buffer.identity(), buffer.desc().bytes,
                         buffer.desc().usage, buffer.desc().access, b.offset, b.bytes});
        vaccel_binding w{};
        w.slot = b.slot;
        w.access = b.access;
        w.offset = b.offset;
        w.bytes = b.bytes;
        wire.push_back(w);
    }
    if (auto ok = validate::launch_bindings(facts, core_->info.limits.max_bindings); !ok)
        return fail(ok.error());
    if (auto ok = check_bindings(desc.bindings, *queue->owner, 1); !ok) return fail(ok.error());
    if (auto ok = queue->owner->usable(); !ok) return fail(ok.error());
    auto scope = queue->owner->enter();
    if (!scope) return fail(scope.error());
    // The entry, resolved once per program.
    CUfunction function = nullptr;
    {
        std::lock_guard lock(program->functions_mutex);
        const std::string entry(desc.entry);
        if (auto found = program->functions.find(entry); found != program->functions.end()) {
            function = found->second;
        } else {
            if (CUresult r = core_->cu->cuModuleGetFunction(&function, program->module,
                                                            entry.c_str());
                r != CUDA_SUCCESS)
                return fail(Error::of(Errc::invalid_argument, VACCEL_D_KERNEL_ENTRY)
                                .with_note(fmt::format("the module has no kernel \"{}\" ({}); "
                                                       "name an extern \"C\" __global__ "
                                                       "function",
                                                       entry, core_->cu->describe(r))));
            program->functions.emplace(entry, function);
        }
    }
    // The launch shape against the device and the function.
    const vaccel_launch_dims& dims = desc.dims;
    const DeviceFacts& f = core_->facts;
    auto dims_error = [](std::size_t field, std::uint64_t value, std::string note) {
        return Error::of(Errc::invalid_argument, VACCEL_D_LAUNCH_DIMS,
                         offsetof(vaccel_launch, dims) + field, value)
            .with_note(std::move(note));
    };
    for (int i = 0; i < 3; ++i) {
        if (dims.grid[i] > static_cast<std::uint32_t>(f.max_grid[i]))
            return fail(dims_error(offsetof(vaccel_launch_dims, grid) + 4 * i, dims.grid[i],
                                   fmt::format("grid dimension {} is {}; the device allows {}",
                                               i, dims.grid[i], f.max_grid[i])));
        if (dims.block[i] > static_cast<std::uint32_t>(f.max_block[i]))
            return fail(dims_error(offsetof(vaccel_launch_dims, block) + 4 * i, dims.block[i],
                                   fmt::format("block dimension {} is {}; the device allows {}",
                                               i, dims.block[i], f.max_block[i])));
    }
    int function_threads = 0, static_shared = 0;
    core_->cu->cuFuncGetAttribute(&function_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                  function);
    core_->cu->cuFuncGetAttribute(&static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function);
    const std::uint64_t threads =
        std::uint64_t{dims.block[0]} * dims.block[1] * dims.block[2];
    if (threads > static_cast<std::uint64_t>(function_threads))
        return fail(dims_error(offsetof(vaccel_launch_dims, block), threads,
                               fmt::format("a block of {} threads; kernel \"{}\" runs at most {} "
                                           "per block on this device (its registers)",
                                           threads, desc.entry, function_threads)));
    const std::uint64_t shared = std::uint64_t{dims.shared_bytes} + static_cast<std::uint64_t>(static_shared);
    if (shared > static_cast<std::uint64_t>(f.max_shared_optin))
        return fail(dims_error(offsetof(vaccel_launch_dims, shared_bytes), dims.shared_bytes,
                               fmt::format("{} bytes of shared memory per block ({} static); "
                                           "the device has {}",
                                           shared, static_shared, f.max_shared_optin)));
    // The parameter block, pointers resolved to device addresses.
    auto block = kernel_args::lay_out(desc.args, wire, [&](std::size_t i) {
        const Binding& b = desc.bindings[i];
        return static_cast<const CudaBuffer&>(*b.buffer).address + b.offset;
    });
    if (!block) return fail(block.error());
    // The kernel's own parameter layout must be the one given.
    std::size_t index = 0;
    for (;; ++index) {
        std::size_t offset = 0, size = 0;
        if (core_->cu->cuFuncGetParamInfo(function, index, &offset, &size) != CUDA_SUCCESS) break;
        if (index >= block->offsets.size() || offset != block->offsets[index] ||
            size != kernel_args::value_bytes(desc.args[index].tag))
            return fail(Error::of(Errc::incompatible, VACCEL_D_KERNEL_SIGNATURE, index)
                            .with_note(fmt::format("kernel \"{}\" takes its parameter {} at "
                                                   "offset {} ({} bytes); the arguments given "
                                                   "put {} there; pass the kernel's own "
                                                   "parameter list",
                                                   desc.entry, index, offset, size,
                                                   index < block->offsets.size()
                                                       ? fmt::format("{} bytes at {}",
                                                                     kernel_args::value_bytes(
                                                                         desc.args[index].tag),
                                                                     block->offsets[index])
                                                       : std::string("nothing"))));
    }
    if (index != block->offsets.size())
        return fail(Error::of(Errc::incompatible, VACCEL_D_KERNEL_SIGNATURE, index)
                        .with_note(fmt::format("kernel \"{}\" takes {} parameters; {} were "
                                               "given",
                                               desc.entry, index, block->offsets.size())));
    if (dims.shared_bytes > 48 * 1024)
        if (CUresult r = core_->cu->cuFuncSetAttribute(
                function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                static_cast<int>(dims.shared_bytes));
            r != CUDA_SUCCESS)
            return fail(core_->error(r, "giving the kernel its shared memory"));
    if (desc.deadline_ns != 0 && monotonic_ns() >= desc.deadline_ns)
        return fail(Error::of(Errc::deadline_expired, VACCEL_D_DEADLINE)
                        .with_note("the deadline had already passed when the work was "
                                   "launched"));
    auto s = accept(queue, program, desc.bindings, desc.sink);
    s->launch = KernelLaunch{function, dims, std::move(block->bytes)};
    s->deadline_ns = desc.deadline_ns;
    return accept_and_go(std::move(s), nullptr, 0);
}

namespace {

// Segment `segment` of run `s` of `program` as one graph launch on
// `stream` (the whole run when it has no cut): the graph recorded for its
// buffers and cut, or, the first time, `launch_all` captured into a new one
// (the least recently used of max_recorded_runs destroyed to make room).
// The context is current.
CUresult run_recorded(const Driver& cu, ProgramState& program, const SubmissionState& s,
                      std::uint32_t segment, CUstream stream,
                      const std::function<CUresult(std::size_t&)>& launch_all)
{
    std::lock_guard lock(program.graphs_mutex);
    auto& recorded = program.recorded;
    auto found = std::ranges::find_if(recorded, [&](const ProgramState::RecordedRun& r) {
        return r.buffers == s.buffers && r.cut == s.cut;
    });
    if (found == recorded.end()) {
        if (recorded.size() == ProgramState::max_recorded_runs) {
            for (CUgraphExec exec : recorded.front().segments)
                if (exec != nullptr) cu.cuGraphExecDestroy(exec);
            recorded.erase(recorded.begin());
        }
        const std::size_t segments = s.cut ? s.cut->segments.size() : 1;
        recorded.push_back({s.buffers, s.cut, std::vector<CUgraphExec>(segments, nullptr)});
        found = recorded.end() - 1;
    } else {
        std::rotate(found, found + 1, recorded.end());  // most recently used last
        found = recorded.end() - 1;
    }
    CUgraphExec& exec = found->segments[segment];
    if (exec != nullptr) return cu.cuGraphLaunch(exec, stream);
    // Thread-local capture: only this thread's calls are restricted.
    if (CUresult r = cu.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
        r != CUDA_SUCCESS)
        return r;
    std::size_t launched = 0;
    const CUresult launch = launch_all(launched);
    CUgraph graph = nullptr;
    const CUresult end = cu.cuStreamEndCapture(stream, &graph);
    if (launch != CUDA_SUCCESS || end != CUDA_SUCCESS) {
        if (graph != nullptr) cu.cuGraphDestroy(graph);
        return launch != CUDA_SUCCESS ? launch : end;
    }
    const CUresult made = cu.cuGraphInstantiateWithFlags(&exec, graph, 0);
    cu.cuGraphDestroy(graph);  // the exec keeps what it needs
    if (made != CUDA_SUCCESS) {
        exec = nullptr;
        return made;
    }
    return cu.cuGraphLaunch(exec, stream);
}

// Waits for a profiled run's end (its last event) and adds each kernel's
// time; a run whose events cannot be read is left out of the profile.
void add_profiled_run(const Driver& cu, ProgramProfile& profile)
{
    if (cu.cuEventSynchronize(profile.events.back()) != CUDA_SUCCESS) return;
    std::vector<double> ms(profile.total_ms.size());
    for (std::size_t i = 0; i < ms.size(); ++i) {
        float elapsed = 0.0f;
        if (cu.cuEventElapsedTime(&elapsed, profile.events[i], profile.events[i + 1]) !=
            CUDA_SUCCESS)
            return;
        ms[i] = elapsed;
    }
    for (std::size_t i = 0; i < ms.size(); ++i) profile.total_ms[i] += ms[i];
    ++profile.runs;
}

}  // namespace

Status CudaBackend::enqueue(SubmissionState& s)
{
    ContextState& owner = *s.queue->owner;
    const Driver& cu = *core_->cu;
    auto scope = owner.enter();
    if (!scope) return fail(scope.error());
    const CUstream stream = s.queue->stream;
    // Made as the first segment goes; recorded after the last.
    if (s.done == nullptr)
        if (CUresult r = cu.cuEventCreate(&s.done, CU_EVENT_DISABLE_TIMING); r != CUDA_SUCCESS) {
            s.done = nullptr;
            return fail(core_->error(r, "creating the submission's event"));
        }
    auto refused = [&](CUresult r, std::string_view what) -> Error {
        if (context_fault(r)) {
            owner.poison(r, what);
            return owner.fault;
        }
        if (r == CUDA_ERROR_OUT_OF_MEMORY || r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
            return Error::of(Errc::resource_limit, VACCEL_D_NONE, static_cast<std::uint64_t>(r))
                .with_note(fmt::format("{}: {}", what, cu.describe(r)));
        return core_->error(r, what);
    };
    bool any = false;  // something is on the stream: later failures are partial
    if (s.launch) {
        const KernelLaunch& k = *s.launch;
        std::size_t bytes = k.params.size();
        void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, const_cast<std::byte*>(k.params.data()),
                         CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes, CU_LAUNCH_PARAM_END};
        if (CUresult r = cu.cuLaunchKernel(k.function, k.dims.grid[0], k.dims.grid[1],
                                           k.dims.grid[2], k.dims.block[0], k.dims.block[1],
                                           k.dims.block[2], k.dims.shared_bytes, stream, nullptr,
                                           bytes == 0 ? nullptr : extra);
            r != CUDA_SUCCESS)
            return fail(refused(r, "launching the kernel"));
        any = true;
        s.next_segment = 1;  // a raw kernel is one segment: none is left (segments_left)
    } else {
        ProgramState& program = *s.program;
        // One segment of a run cut into segments (slicing.hpp), else the
        // whole run.
        const std::uint32_t segment = s.next_segment;
        const bool last = segments_left(s) <= 1;
        // After the program's previous run: they share the arena. A run's
        // later segments follow its first on the one stream, and the
        // device's scheduler releases no other run of the context between
        // them (it releases a flow's work in order, a run's segments first).
        if (segment == 0)
            if (CUresult r = cu.cuStreamWaitEvent(stream, program.last_run, 0); r != CUDA_SUCCESS)
                return fail(refused(r, "ordering the run after the program's previous one"));
        if (s.measures_costs && program.cost_events.empty()) {
            program.cost_events.assign(program.launches.size() + 1, nullptr);
            for (CUevent& e : program.cost_events)
                if (CUresult r = cu.cuEventCreate(&e, CU_EVENT_DEFAULT); r != CUDA_SUCCESS)
                    return fail(refused(r, "creating the events that time the program"));
        }
        if (s.cut) {
            for (CUevent* e : {&s.marks[2 * segment], &s.marks[2 * segment + 1]})
                if (CUresult r = cu.cuEventCreate(e, CU_EVENT_DEFAULT); r != CUDA_SUCCESS)
                    return fail(refused(r, "creating the events around a segment"));
            cu.cuEventRecord(s.marks[2 * segment], stream);
        }
        // The segment's kernels onto the stream; how many went is `launched`.
        // A profiled run marks each kernel's start and the run's end, as a
        // run that measures the program's costs does.
        ProgramProfile* const profile = program.profile.get();
        const std::vector<CUevent>* const timing =
            profile != nullptr ? &profile->events
                               : (s.measures_costs ? &program.cost_events : nullptr);
        const std::vector<sched::Piece> pieces = segment_pieces(s, segment);
        auto launch_all = [&](std::size_t& launched) -> CUresult {
            vaccel_cuda_dispatch d{};
            std::copy(s.buffers.begin(), s.buffers.end(), d.buffer);
            void* params[] = {&d};
            for (const sched::Piece& piece : pieces) {
                const PlannedLaunch& l = program.launches[piece.dispatch];
                if (timing != nullptr) cu.cuEventRecord((*timing)[piece.dispatch], stream);
                if (l.kernel.work == 0) continue;  // an empty result: nothing to compute
                std::fill(std::begin(d.spec), std::end(d.spec), 0u);
                std::copy(l.kernel.spec.begin(), l.kernel.spec.end(), d.spec);
                d.work = l.kernel.work;
                // A part over k takes the kernel's ranged entry; a whole
                // launch the entry without the range.
                const bool ranged = piece.k_end != 0 && l.k_function != nullptr;
                const std::uint32_t step = ranged ? k_step_of(l) : 0;
                d.k_first = piece.k_first * step;
                d.k_end = piece.k_end * step;
                if (CUresult r = cu.cuLaunchKernel(ranged ? l.k_function : l.function, l.grid, 1, 1,
                                                   l.block, 1, 1,
                                                   l.shared_bytes, stream, params, nullptr);
                    r != CUDA_SUCCESS)
                    return r;
                ++launched;
            }
            if (timing != nullptr) cu.cuEventRecord(timing->back(), stream);
            return CUDA_SUCCESS;
        };
        if (program.use_graphs && !s.measures_costs) {
            // One graph launch; nothing of it runs when it is refused.
            if (CUresult r = run_recorded(cu, program, s, segment, stream, launch_all);
                r != CUDA_SUCCESS)
                return fail(refused(r, "launching the program's recorded run"));
            any = true;
        } else {
            std::unique_lock<std::mutex> profiling;
            if (profile != nullptr) profiling = std::unique_lock(profile->mutex);
            std::size_t launched = 0;
            const CUresult r = launch_all(launched);
            if (r != CUDA_SUCCESS) {
                if (launched == 0 && segment == 0)
                    return fail(refused(r, "launching the program's first kernel"));
                s.partial = refused(r, "launching one of the program's kernels");
            }
            any = any || launched != 0;
            if (profile != nullptr && r == CUDA_SUCCESS) add_profiled_run(cu, *profile);
        }
        if (s.cut) cu.cuEventRecord(s.marks[2 * segment + 1], stream);
        ++s.next_segment;
        if (!last) {
            if (s.partial) {  // a launch was refused: the run ends after what went
                s.next_segment = static_cast<std::uint32_t>(s.cut->segments.size());
                cu.cuEventRecord(program.last_run, stream);
            } else {
                cu.cuLaunchHostFunc(stream, &Completer::wake, &completer_);
                return {};
            }
        } else {
            cu.cuEventRecord(program.last_run, stream);
        }
    }
    if (CUresult r = cu.cuEventRecord(s.done, stream); r != CUDA_SUCCESS) {
        // The work is on the stream but cannot be waited for by its event:
        // wait for the stream instead, so nothing is reported early.
        cu.cuStreamSynchronize(stream);
        s.partial = refused(r, "recording the submission's end");
        cu.cuEventDestroy(s.done);
        s.done = nullptr;
        cu.cuEventCreate(&s.done, CU_EVENT_DISABLE_TIMING);
        cu.cuEventRecord(s.done, stream);
    }
    // The completion thread is woken by the host function; a fault that
    // keeps it from running is seen by the thread's own polling.
    cu.cuLaunchHostFunc(stream, &Completer::wake, &completer_);
    return {};
}

// The vaccel-cuda-host to start (CudaOptions::host_program says where it
// is looked for); empty when there is none.
std::filesystem::path find_host_program(const CudaOptions& options, std::string& looked)
{
    namespace fs = std::filesystem;
    std::vector<fs::path> candidates;
    if (!options.host_program.empty()) {
        candidates.push_back(options.host_program);
    } else {
        if (const char* env = std::getenv("VACCEL_CUDA_HOST"); env != nullptr && *env != '\0')
            candidates.emplace_back(env);
        std::error_code ec;
        const fs::path self = fs::read_symlink("/proc/self/exe", ec);
        if (!ec) candidates.push_back(self.parent_path() / "vaccel-cuda-host");
#ifdef VACCEL_CUDA_HOST_INSTALLED
        candidates.emplace_back(VACCEL_CUDA_HOST_INSTALLED);
#endif
#ifdef VACCEL_CUDA_HOST_BUILT
        candidates.emplace_back(VACCEL_CUDA_HOST_BUILT);
#endif
    }
    for (const fs::path& p : candidates) {
        if (access(p.c_str(), X_OK) == 0) return p;
        looked += (looked.empty() ? "" : ", ") + p.string();
    }
    return {};
}

}  // namespace
}  // namespace cuda

bool start_held(Backend& device, Event& event)
{
    auto* cuda = dynamic_cast<cuda::CudaBackend*>(&device);
    if (cuda == nullptr) return false;
    auto s = cuda->take_held(event);
    if (!s) return false;
    cuda->start_held(std::move(s));
    return true;
}

bool end_held(Backend& device, Event& event, EventState state, const Error& why)
{
    auto* cuda = dynamic_cast<cuda::CudaBackend*>(&device);
    if (cuda == nullptr) return false;
    auto s = cuda->take_held(event);
    if (!s) return false;
    cuda->end_held(std::move(s), state, why);
    return true;
}

std::uint32_t held_segments(Backend& device, Event& event)
{
    if (dynamic_cast<cuda::CudaBackend*>(&device) == nullptr) return 1;
    const auto& s = static_cast<cuda::CudaEvent&>(event).submission;
    return s && s->cut ? static_cast<std::uint32_t>(s->cut->segments.size()) : 1;
}

std::string cuda_uuid_text(const vaccel_device_info& info)
{
    const auto* u = info.uuid;
    return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
                       "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                       u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
                       u[12], u[13], u[14], u[15]);
}

CudaDevices open_cuda_devices(const CudaOptions& options)
{
    CudaDevices out;
    const cuda::Driver* cu = cuda::load_driver(out.unavailable);
    if (cu == nullptr) {
        spdlog::debug("cuda: no CUDA device: {}", out.unavailable);
        return out;
    }
    int count = 0;
    if (CUresult r = cu->cuDeviceGetCount(&count); r != CUDA_SUCCESS || count == 0) {
        out.unavailable = r != CUDA_SUCCESS ? fmt::format("cuDeviceGetCount failed: {}",
                                                          cu->describe(r))
                                            : "the CUDA driver reports no device";
        spdlog::debug("cuda: no CUDA device: {}", out.unavailable);
        return out;
    }
    // Fault injection (a device's loss) needs every context in one device
    // object: in process.
    const bool isolated = options.isolation == CudaIsolation::process &&
                          options.inject_loss_after == UINT64_MAX;
    std::filesystem::path host;
    if (isolated) {
        std::string looked;
        host = cuda::find_host_program(options, looked);
        if (host.empty()) {
            out.unavailable = fmt::format("vaccel-cuda-host, which runs each context of a CUDA "
                                          "device in a process of its own, was not found "
                                          "(looked for {}); install it beside vacceld or set "
                                          "VACCEL_CUDA_HOST",
                                          looked);
            spdlog::warn("cuda: {}", out.unavailable);
            return out;
        }
    }
    for (int i = 0; i < count; ++i) {
        CUdevice device = 0;
        if (CUresult r = cu->cuDeviceGet(&device, i); r != CUDA_SUCCESS) {
            out.refused.push_back(fmt::format("CUDA device {}: {}", i, cu->describe(r)));
            continue;
        }
        auto described = cuda::describe_device(*cu, device);
        if (!described) {
            out.refused.push_back(fmt::format("CUDA device {}: {}", i, described.error().note));
            continue;
        }
        auto core = std::make_shared<cuda::DeviceCore>();
        core->cu = cu;
        core->device = device;
        core->ordinal = static_cast<std::uint32_t>(i);
        core->facts = described->first;
        core->info = described->second;
        core->options = options;
        if (out.devices.size() == options.inject_loss_device)
            core->inject_loss_after = options.inject_loss_after;
        if (isolated)
            out.devices.push_back(cuda::open_host_proxy(std::move(core), host));
        else
            out.devices.push_back(std::make_unique<cuda::CudaBackend>(std::move(core)));
    }
    for (const auto& line : out.refused) spdlog::warn("cuda: {}", line);
    return out;
}

}  // namespace vaccel::backend
