// cpu_backend.cpp - the CPU backend: the Backend contract over host memory.
//
// Owns: the backend state shared with every object, and the scheduler (the
// worker threads). Decides the order of each call's refusals (the reference design's
// order: what the request is, then limits, then in-flight state) and that
// a submission is either rejected with nothing retained or accepted with its
// buffer gates held until its event is terminal. Host gates, cancellation
// and device loss move submissions as submission.hpp describes; TOSA
// programs run their plan, CPU_BUILTIN programs the built-in kernels.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "builtin_kernels.hpp"
#include "descriptor.hpp"
#include "device_info.hpp"
#include "gemm.hpp"
#include "parallel.hpp"
#include "objects.hpp"
#include "scheduler.hpp"
#include "submission.hpp"
#include "vaccel/backend/cpu.hpp"
#include "vaccel/common/recycling.hpp"
#include "vaccel/common/small_vector.hpp"
#include "vaccel/common/validation.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::backend {

namespace cpu {
namespace {

Error in_flight_error(std::uint64_t identity, std::uint64_t submissions, std::string_view what)
{
    return Error::of(Errc::busy, VACCEL_D_IN_FLIGHT, identity, submissions)
        .with_note(fmt::format("{} refused: {} submission(s) in flight bind this buffer; wait "
                               "for their events first",
                               what, submissions));
}

Status check_transfer(const CpuBuffer& buffer, std::uint32_t usage, std::uint64_t offset,
                      std::uint64_t length, std::string_view what)
{
    if ((buffer.desc().usage & usage) == 0)
        return fail(Error::of(Errc::permission_denied, VACCEL_D_USAGE, usage, buffer.desc().usage)
                        .with_note(fmt::format("{} refused: the buffer was allocated without "
                                               "the {} usage",
                                               what,
                                               usage == VACCEL_USAGE_TRANSFER_DST
                                                   ? "TRANSFER_DST"
                                                   : "TRANSFER_SRC")));
    if (buffer.allocation->gate.load(std::memory_order_acquire) != 0)
        return fail(in_flight_error(buffer.identity(), buffer.in_flight(), what));
    auto end = validate::range(buffer.allocation->bytes, offset, length);
    if (!end) return fail(end.error());
    return {};
}

bool is_zero(const vaccel_tosa_target& target)
{
    return target.major == 0 && target.minor == 0 && target.profiles == 0 && target.level == 0 &&
           target.pad == 0 && target.extensions == 0;
}

bool same_target(const vaccel_tosa_target& a, const vaccel_tosa_target& b)
{
    return a.major == b.major && a.minor == b.minor && a.profiles == b.profiles &&
           a.level == b.level && a.pad == b.pad && a.extensions == b.extensions;
}

// The buffers a submission binds, each with one in-flight gate: exclusive
// when any binding writes it. All or nothing: on the first gate that cannot
// be had, the others are given back and the buffer is named.
Status hold_buffers(Submission& submission, std::span<const Binding> bindings)
{
    for (const Binding& b : bindings) {
        auto& buffer = static_cast<CpuBuffer&>(*b.buffer);
        const bool writes = (b.access & VACCEL_ACCESS_WRITE) != 0;
        auto held = std::ranges::find_if(submission.held, [&](const Submission::Held& h) {
            return h.allocation == buffer.allocation;
        });
        if (held == submission.held.end())
            submission.held.push_back({buffer.allocation, writes});
        else
            held->exclusive = held->exclusive || writes;
    }
    for (std::size_t i = 0; i < submission.held.size(); ++i) {
        Submission::Held& held = submission.held[i];
        if (held.allocation->acquire(held.exclusive))
            continue;
        for (std::size_t j = 0; j < i; ++j)
            submission.held[j].allocation->release(submission.held[j].exclusive);
        const auto busy = std::ranges::find_if(bindings, [&](const Binding& b) {
            return static_cast<CpuBuffer&>(*b.buffer).allocation == held.allocation;
        });
        const auto& buffer = static_cast<const CpuBuffer&>(*busy->buffer);
        submission.held.clear();
        return fail(in_flight_error(buffer.identity(), buffer.in_flight(),
                                    held.exclusive ? "binding a buffer for writing"
                                                   : "binding a buffer for reading"));
    }
    for (Submission::Held& held : submission.held)
        held.allocation->submissions.fetch_add(1, std::memory_order_acq_rel);
    return {};
}

SmallVector<validate::BindingFacts, VACCEL_MAX_BINDINGS> binding_facts(
    std::span<const Binding> bindings)
{
    SmallVector<validate::BindingFacts, VACCEL_MAX_BINDINGS> facts;
    for (const Binding& b : bindings) {
        const auto& buffer = static_cast<const CpuBuffer&>(*b.buffer);
        facts.push_back({b.slot, b.access, buffer.identity(), buffer.desc().bytes,
                         buffer.desc().usage, buffer.desc().access, b.offset, b.bytes});
    }
    return facts;
}

class CpuBackend final : public Backend {
public:
    CpuBackend(const CpuOptions& options, unsigned threads)
        : state_(std::make_shared<BackendState>()), scheduler_(threads)
    {
        state_->info = describe_cpu(threads, options.instance);
        state_->inject_loss_after = options.inject_loss_after;
        inline_bound_ = std::chrono::microseconds(options.inline_us);
        // A worker may still drop a finished submission while the engine
        // makes the next: enough recycled blocks that a warm loop of
        // submissions never finds the lists empty.
        const std::size_t spare = 2 * std::size_t{threads} + 4;
        reserve_shared<Submission>(spare);
        BlockPool<sizeof(CpuEvent)>::reserve(spare);
    }

    const vaccel_device_info& device_info() const override { return state_->info; }
    std::vector<tosa::CapabilityDescriptor> tosa_descriptors() const override
    {
        return {cpu_descriptor()};
    }

    DeviceState state() const override
    {
        return state_->lost.load(std::memory_order_acquire) ? DeviceState::lost : DeviceState::ok;
    }

    Result<std::unique_ptr<Context>> create_context() override
    {
        const auto& limits = state_->info.limits;
        const std::uint64_t used = state_->counters.contexts.load();
        if (used >= limits.max_contexts)
            return fail(Error::limit_hit(VACCEL_LIMIT_CONTEXTS, limits.max_contexts, used));
        auto context = std::make_shared<ContextState>();
        context->backend = state_;
        return std::make_unique<CpuContext>(std::move(context));
    }

    Status destroy_context(std::unique_ptr<Context>& context) override
    {
        auto& cpu_context = static_cast<CpuContext&>(*context);
        const std::uint64_t children = cpu_context.state->children();
        if (children != 0)
            return fail(Error::of(Errc::busy, VACCEL_D_IN_USE, children)
                            .with_note(fmt::format("the context still owns {} buffers, {} "
                                                   "programs, {} queues and {} gates; release "
                                                   "them first",
                                                   cpu_context.state->buffers,
                                                   cpu_context.state->programs,
                                                   cpu_context.state->queues,
                                                   cpu_context.state->gates)));
        context.reset();
        return {};
    }

    void set_context_schedule(Context& context, const ContextSchedule& schedule) override
    {
        ContextState& state = *static_cast<CpuContext&>(context).state;
        // The tenant's flow, made by its first context here and kept while
        // any of its contexts lives (the map holds it weakly). Only before
        // the context has queues: a lane keeps the flow it was made with.
        if (!schedule.flow.empty() && state.queues == 0) {
            const std::lock_guard held(tenant_flows_mutex_);
            std::erase_if(tenant_flows_, [](const auto& entry) { return entry.second.expired(); });
            std::weak_ptr<Flow>& shared = tenant_flows_[schedule.flow];
            if (auto existing = shared.lock())
                state.flow = std::move(existing);
            else
                shared = state.flow;
        }
        scheduler_.set_schedule(*state.flow, schedule.weight, schedule.latency,
                                schedule.share_permille);
    }

    // The tenants' flows (every context of a session has one); a context's
    // own flow before its tenant is named serves only that moment.
    std::optional<DeviceService> device_service() const override
    {
        std::vector<std::pair<std::string, std::shared_ptr<Flow>>> flows;
        {
            const std::lock_guard held(tenant_flows_mutex_);
            for (const auto& [key, weak] : tenant_flows_)
                if (auto flow = weak.lock()) flows.emplace_back(key, std::move(flow));
        }
        return scheduler_.report(flows);
    }

    Result<std::unique_ptr<Buffer>> allocate_buffer(Context& context, const BufferDesc& desc,
                                                     BufferInfo& info) override
    {
        const auto& device = state_->info;
        if (auto valid = validate::buffer_desc(device, desc.bytes, desc.alignment, desc.domain,
                                               desc.usage, desc.access);
            !valid)
            return fail(valid.error());
        // DEVICE is refused above: the device reports no DEVICE_LOCAL memory.
        auto& owner = static_cast<CpuContext&>(context).state;
        if (owner->buffers >= device.limits.max_buffers)
            return fail(Error::limit_hit(VACCEL_LIMIT_BUFFERS, device.limits.max_buffers,
                                         owner->buffers));
        const std::uint64_t alignment =
            std::max<std::uint64_t>(desc.alignment, min_buffer_alignment);
        const std::uint64_t allocation_bytes = (desc.bytes + alignment - 1) / alignment * alignment;
        if (owner->memory_bytes + allocation_bytes > device.limits.max_memory_bytes)
            return fail(Error::limit_hit(VACCEL_LIMIT_MEMORY_BYTES, device.limits.max_memory_bytes,
                                         owner->memory_bytes));
        auto allocation = std::make_shared<Allocation>();
        allocation->data = static_cast<std::byte*>(std::aligned_alloc(alignment, allocation_bytes));
        if (allocation->data == nullptr)
            return fail(Error::of(Errc::out_of_memory)
                            .with_note(fmt::format("{} bytes aligned to {} could not be allocated",
                                                   allocation_bytes, alignment)));
        std::memset(allocation->data, 0, allocation_bytes);
        allocation->bytes = desc.bytes;
        allocation->allocation_bytes = allocation_bytes;
        const auto address = reinterpret_cast<std::uintptr_t>(allocation->data);
        info.allocation_bytes = allocation_bytes;
        info.measured_alignment = address & (~address + 1);  // lowest set bit
        info.properties = VACCEL_PROP_HOST_VISIBLE | VACCEL_PROP_COHERENT |
                          VACCEL_PROP_DIRECT_BINDING;
        return std::make_unique<CpuBuffer>(owner, desc, std::move(allocation));
    }

    Status free_buffer(std::unique_ptr<Buffer>& buffer) override
    {
        auto& cpu_buffer = static_cast<CpuBuffer&>(*buffer);
        if (cpu_buffer.allocation->gate.load(std::memory_order_acquire) != 0)
            return fail(in_flight_error(cpu_buffer.identity(), cpu_buffer.in_flight(), "free"));
        buffer.reset();
        return {};
    }

    Status write_buffer(Buffer& buffer, std::uint64_t offset,
                        std::span<const std::byte> data) override
    {
        auto& cpu_buffer = static_cast<CpuBuffer&>(buffer);
        if (auto ok = check_transfer(cpu_buffer, VACCEL_USAGE_TRANSFER_DST, offset, data.size(),
                                     "write");
            !ok)
            return ok;
        std::memcpy(cpu_buffer.allocation->data + offset, data.data(), data.size());
        return {};
    }

    Status read_buffer(Buffer& buffer, std::uint64_t offset, std::span<std::byte> data) override
    {
        auto& cpu_buffer = static_cast<CpuBuffer&>(buffer);
        if (auto ok = check_transfer(cpu_buffer, VACCEL_USAGE_TRANSFER_SRC, offset, data.size(),
                                     "read");
            !ok)
            return ok;
        std::memcpy(data.data(), cpu_buffer.allocation->data + offset, data.size());
        return {};
    }

    // The first map moves the bytes into a memfd (nothing binds the buffer
    // then, and the device serialisation keeps submissions out meanwhile);
    // from then on the buffer lives there.
    Result<MappableMemory> map_buffer(Buffer& buffer) override
    {
        auto& cpu_buffer = static_cast<CpuBuffer&>(buffer);
        Allocation& allocation = *cpu_buffer.allocation;
        if (allocation.shared.data() == nullptr) {
            if (allocation.gate.load(std::memory_order_acquire) != 0)
                return fail(in_flight_error(cpu_buffer.identity(), cpu_buffer.in_flight(), "map"));
            const std::uint64_t alignment =
                std::max<std::uint64_t>(cpu_buffer.desc().alignment, min_buffer_alignment);
            auto memory = SharedMemory::create(allocation.allocation_bytes, alignment,
                                               "vaccel-buffer");
            if (!memory)
                return fail(std::move(memory.error()));
            std::memcpy(memory->data(), allocation.data, allocation.allocation_bytes);
            std::free(allocation.data);
            allocation.shared = std::move(*memory);
            allocation.data = allocation.shared.data();
        }
        return MappableMemory{allocation.data, allocation.shared.fd(), 0};
    }

    // Called without the device serialisation (backend.hpp): touches only
    // the context (its session's) and atomics; parsing and compiling share
    // nothing.
    Result<std::unique_ptr<Program>> load_program(Context& context,
                                                  const ProgramDesc& desc) override
    {
        const auto& device = state_->info;
        if (desc.format != VACCEL_FORMAT_TOSA && desc.format != VACCEL_FORMAT_CPU_BUILTIN)
            return fail(Error::of(Errc::unsupported, VACCEL_D_FORMAT, desc.format)
                            .with_note("the CPU device loads TOSA 1.0 programs and its built-in "
                                       "kernels (VACCEL_FORMAT_CPU_BUILTIN) only"));
        const bool tosa = desc.format == VACCEL_FORMAT_TOSA;
        if (!is_zero(desc.target) && (!tosa || !same_target(desc.target, device.tosa_targets[0])))
            return fail(Error::of(Errc::incompatible, VACCEL_D_TARGET)
                            .with_note(tosa ? fmt::format("TOSA target {}.{} profiles {:#x} "
                                                          "level {} extensions {:#x} is not the "
                                                          "CPU's ({}); pass an all-zero target "
                                                          "for the device default",
                                                          desc.target.major, desc.target.minor,
                                                          desc.target.profiles, desc.target.level,
                                                          desc.target.extensions,
                                                          tosa::target_text(
                                                              cpu_descriptor().target))
                                            : std::string("kernel programs take no TOSA target; "
                                                          "pass an all-zero target")));
        if (desc.payload.size() > device.limits.max_artifact_bytes)
            return fail(Error::limit_hit(VACCEL_LIMIT_ARTIFACT_BYTES,
                                         device.limits.max_artifact_bytes, desc.payload.size()));
        auto& owner = static_cast<CpuContext&>(context).state;
        if (owner->programs >= device.limits.max_programs)
            return fail(Error::limit_hit(VACCEL_LIMIT_PROGRAMS, device.limits.max_programs,
                                         owner->programs));
        auto program = std::make_shared<ProgramState>();
        program->format = desc.format;
        if (tosa) {
            auto graph = tosa::parse(desc.payload);
            if (!graph) return fail(graph.error());
            auto plan = compile(*graph);
            if (!plan) return fail(plan.error());
            program->plan = std::move(*plan);
            // The program's first arena, made now so a run never allocates one
            // unless it runs beside another run of the same program.
            program->arenas = std::make_unique<ArenaPool>(program->plan);
            ArenaPool::Arena first = program->arenas->take();
            if (!first)
                return fail(Error::of(Errc::out_of_memory, VACCEL_D_EXECUTION, 0)
                                .with_note(fmt::format("the program's {}-byte working arena "
                                                       "could not be allocated",
                                                       program->plan->arena_bytes)));
            program->arenas->give(std::move(first));
            for (const VariableInfo& variable : program->plan->variables) {
                const auto* initial = reinterpret_cast<const std::byte*>(variable.initial.data());
                program->variables.emplace_back(initial, initial + variable.initial.size());
            }
        } else {
            const std::string_view name(reinterpret_cast<const char*>(desc.payload.data()),
                                        desc.payload.size());
            if (name != builtin_library)
                return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                                      offsetof(vaccel_program_load, payload), desc.payload.size())
                                .with_note(fmt::format("the CPU's built-in kernel library is "
                                                       "named \"{}\" (payload without NUL)",
                                                       builtin_library)));
        }
        return std::make_unique<CpuProgram>(owner, std::move(program));
    }

    Status unload_program(std::unique_ptr<Program>& program) override
    {
        auto& cpu_program = static_cast<CpuProgram&>(*program);
        const std::uint64_t in_flight = cpu_program.state->in_flight.load(std::memory_order_acquire);
        if (in_flight != 0)
            return fail(Error::of(Errc::busy, VACCEL_D_IN_USE, in_flight)
                            .with_note(fmt::format("{} submission(s) of this program are in "
                                                   "flight; wait for their events first",
                                                   in_flight)));
        program.reset();
        return {};
    }

    Result<std::unique_ptr<Queue>> create_queue(Context& context) override
    {
        auto& owner = static_cast<CpuContext&>(context).state;
        const auto max = state_->info.limits.max_queues;
        if (owner->queues >= max)
            return fail(Error::limit_hit(VACCEL_LIMIT_QUEUES, max, owner->queues));
        return std::make_unique<CpuQueue>(owner);
    }

    // Ownership: submissions already accepted keep the queue's lane alive and
    // still run; destroying a queue never waits and never fails.
    Status destroy_queue(std::unique_ptr<Queue>& queue) override
    {
        queue.reset();
        return {};
    }

    Result<std::unique_ptr<Gate>> create_gate(Context& context) override
    {
        auto& owner = static_cast<CpuContext&>(context).state;
        const auto max = state_->info.limits.max_gates;
        if (owner->gates >= max)
            return fail(Error::limit_hit(VACCEL_LIMIT_GATES, max, owner->gates));
        auto gate = std::make_unique<CpuGate>(owner);
        std::lock_guard lock(state_->gates_mutex);
        std::erase_if(state_->live_gates, [](const auto& weak) { return weak.expired(); });
        state_->live_gates.push_back(gate->state);
        return gate;
    }

    Status raise_gate(Gate& gate, std::uint64_t value) override
    {
        for (auto& submission : raise(*static_cast<CpuGate&>(gate).state, value))
            scheduler_.enqueue(submission->lane, submission);
        return {};
    }

    std::uint64_t gate_value(const Gate& gate) const override
    {
        GateState& state = *static_cast<const CpuGate&>(gate).state;
        std::lock_guard lock(state.mutex);
        return state.value;
    }

    Status destroy_gate(std::unique_ptr<Gate>& gate) override
    {
        auto& cpu_gate = static_cast<CpuGate&>(*gate);
        for (const GateState::Waiter& waiter : close(*cpu_gate.state)) {
            const std::shared_ptr<Submission> one[] = {waiter.submission};
            end_unstarted(one, EventState::cancelled,
                          Error::of(Errc::cancelled, VACCEL_D_GATE_DESTROYED, 0, waiter.value)
                              .with_note(fmt::format("the gate this submission waited on was "
                                                     "destroyed before it reached {}; the work "
                                                     "never ran",
                                                     waiter.value)));
        }
        gate.reset();
        return {};
    }

    Result<Submitted> submit(const SubmitDesc& desc) override;
    Result<Submitted> launch(const LaunchDesc& desc) override;

    EventStatus poll(Event& event) override
    {
        const Submission& submission = *static_cast<CpuEvent&>(event).submission;
        const auto state = submission.state.load(std::memory_order_acquire);
        EventStatus status;
        status.state = static_cast<EventState>(state);
        if (state == VACCEL_EVENT_FAILED || state == VACCEL_EVENT_CANCELLED)
            status.failure = submission.failure;
        return status;
    }

    Status destroy_event(std::unique_ptr<Event>& event) override
    {
        auto& cpu_event = static_cast<CpuEvent&>(*event);
        if (cpu_event.submission->state.load(std::memory_order_acquire) == VACCEL_EVENT_PENDING)
            return fail(Error::of(Errc::busy, VACCEL_D_NOT_COMPLETE)
                            .with_note("the event is still pending; wait for it first"));
        event.reset();
        return {};
    }

    std::uint64_t cancel_pending(Context& context, const Error& why) override
    {
        auto& owner = *static_cast<CpuContext&>(context).state;
        return end_unstarted(unfinished_of(owner), EventState::cancelled, why);
    }

    LiveCounters live() const override { return state_->counters.snapshot(); }

private:
    Status refuse_if_lost() const
    {
        if (state_->lost.load(std::memory_order_acquire))
            return fail(device_lost_error(state_->info));
        return {};
    }
    Status check_deadline_and_events(const ContextState& context, std::uint64_t deadline_ns) const;
    template <class Rules>
    Status check_work(const CpuQueue& queue, const CpuProgram& program,
                      std::span<const Binding> bindings, Rules&& rules) const;
    // Accepts a prepared submission: counts it, makes its event, and queues
    // it, parks it on `after`, or (fault injection) loses the device with it.
    Submitted accept(std::shared_ptr<Submission> submission, Queue& queue, Gate* after,
                     std::uint64_t after_value);
    // The device is lost: gated submissions fail now; queued ones fail when
    // a worker takes them (run_submission).
    void lose_device();

    std::shared_ptr<BackendState> state_;
    std::chrono::nanoseconds inline_bound_{0};  // CpuOptions::inline_us; 0: never inline
    // Declared last: destroyed first, so workers drain while the state lives.
    Scheduler scheduler_;
    // Tenant key -> the flow its contexts share (set_context_schedule).
    mutable std::mutex tenant_flows_mutex_;
    std::map<std::string, std::weak_ptr<Flow>> tenant_flows_;
};

Status CpuBackend::check_deadline_and_events(const ContextState& context,
                                             std::uint64_t deadline_ns) const
{
    if (deadline_ns != 0 && monotonic_ns() >= deadline_ns)
        return fail(Error::of(Errc::deadline_expired, VACCEL_D_DEADLINE)
                        .with_note("the deadline had already passed when the work was submitted"));
    const auto max_events = state_->info.limits.max_events;
    if (context.events >= max_events)
        return fail(Error::limit_hit(VACCEL_LIMIT_EVENTS, max_events, context.events));
    return {};
}

// What submit and launch check alike: the device, that queue and program
// share a context, then the bindings (each names a buffer; `rules`, the
// shared validation of the one or the other; every buffer of the queue's
// context).
template <class Rules>
Status CpuBackend::check_work(const CpuQueue& queue, const CpuProgram& program,
                              std::span<const Binding> bindings, Rules&& rules) const
{
    if (auto ok = refuse_if_lost(); !ok) return ok;
    if (program.context != queue.context)
        return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT)
                        .with_note("the program belongs to another context than the queue"));
    for (std::size_t i = 0; i < bindings.size(); ++i)
        if (bindings[i].buffer == nullptr)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE, 0)
                            .with_note(fmt::format("binding {} names no buffer", i)));
    if (auto valid = rules(binding_facts(bindings)); !valid) return valid;
    for (std::size_t i = 0; i < bindings.size(); ++i)
        if (static_cast<const CpuBuffer&>(*bindings[i].buffer).context != queue.context)
            return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT, i)
                            .with_note(fmt::format("binding {} names a buffer of another context",
                                                   i)));
    return {};
}

Result<Submitted> CpuBackend::submit(const SubmitDesc& desc)
{
    auto& cpu_queue = static_cast<CpuQueue&>(*desc.queue);
    auto& cpu_program = static_cast<CpuProgram&>(*desc.program);
    const auto& context = cpu_queue.context;
    if (!cpu_program.state->plan)
        return fail(Error::of(Errc::incompatible, VACCEL_D_FORMAT, cpu_program.state->format)
                        .with_note("a kernel program is run with vaccel_launch, not submitted"));
    const Plan& plan = *cpu_program.state->plan;
    if (desc.after != nullptr && static_cast<CpuGate&>(*desc.after).context != context)
        return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT)
                        .with_note("the gate belongs to another context than the queue"));
    SmallVector<validate::SlotSpec, VACCEL_MAX_BINDINGS> slots;
    for (const SlotInfo& slot : plan.slots) slots.push_back({slot.role, slot.bytes});
    if (auto ok = check_work(cpu_queue, cpu_program, desc.bindings,
                             [&](std::span<const validate::BindingFacts> facts) {
                                 return validate::bindings(slots, facts,
                                                           state_->info.limits.max_bindings);
                             });
        !ok)
        return fail(ok.error());
    if (auto ok = check_deadline_and_events(*context, desc.deadline_ns); !ok)
        return fail(ok.error());

    auto submission = std::allocate_shared<Submission>(Recycling<Submission>{});
    submission->program = cpu_program.state;
    submission->deadline_ns = desc.deadline_ns;
    submission->slot_data.resize(plan.slots.size());
    for (const Binding& b : desc.bindings)
        submission->slot_data[b.slot] =
            static_cast<CpuBuffer&>(*b.buffer).allocation->data + b.offset;
    if (auto held = hold_buffers(*submission, desc.bindings); !held)
        return fail(held.error());
    submission->sink = desc.sink;
    return accept(std::move(submission), *desc.queue, desc.after, desc.after_value);
}

Result<Submitted> CpuBackend::launch(const LaunchDesc& desc)
{
    auto& cpu_queue = static_cast<CpuQueue&>(*desc.queue);
    auto& cpu_program = static_cast<CpuProgram&>(*desc.program);
    const auto& context = cpu_queue.context;
    if (cpu_program.state->format != VACCEL_FORMAT_CPU_BUILTIN)
        return fail(Error::of(Errc::incompatible, VACCEL_D_FORMAT, cpu_program.state->format)
                        .with_note("only kernel programs are launched; submit TOSA programs "
                                   "with vaccel_submit"));
    const BuiltinKernel* kernel = find_builtin(desc.entry);
    if (kernel == nullptr)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_KERNEL_ENTRY)
                        .with_note(fmt::format("\"{}\" is not an entry of {} (entries: {})",
                                               desc.entry, builtin_library, builtin_names())));
    if (auto ok = check_work(cpu_queue, cpu_program, desc.bindings,
                             [&](std::span<const validate::BindingFacts> facts) {
                                 return validate::launch_bindings(
                                     facts, state_->info.limits.max_bindings);
                             });
        !ok)
        return fail(ok.error());
    std::vector<vaccel_binding> wire(desc.bindings.size());
    for (std::size_t i = 0; i < desc.bindings.size(); ++i)
        wire[i] = vaccel_binding{desc.bindings[i].slot, desc.bindings[i].access, i,
                                 desc.bindings[i].offset, desc.bindings[i].bytes};
    auto params = kernel_args::lay_out(desc.args, wire, [&](std::size_t i) {
        const auto& buffer = static_cast<const CpuBuffer&>(*desc.bindings[i].buffer);
        return static_cast<std::uint64_t>(
            reinterpret_cast<std::uintptr_t>(buffer.allocation->data + desc.bindings[i].offset));
    });
    if (!params) return fail(params.error());
    if (auto ok = check_launch(*kernel, desc.args, desc.bindings); !ok) return fail(ok.error());
    if (auto ok = check_deadline_and_events(*context, desc.deadline_ns); !ok)
        return fail(ok.error());

    auto submission = std::allocate_shared<Submission>(Recycling<Submission>{});
    submission->program = cpu_program.state;
    submission->deadline_ns = desc.deadline_ns;
    submission->kernel = std::make_unique<KernelRun>(KernelRun{kernel, std::move(*params), desc.dims});
    if (auto held = hold_buffers(*submission, desc.bindings); !held)
        return fail(held.error());
    submission->sink = desc.sink;
    return accept(std::move(submission), *desc.queue, nullptr, 0);
}

Submitted CpuBackend::accept(std::shared_ptr<Submission> submission, Queue& queue, Gate* after,
                             std::uint64_t after_value)
{
    auto& cpu_queue = static_cast<CpuQueue&>(queue);
    submission->backend = state_;
    submission->context = cpu_queue.context;
    submission->lane = cpu_queue.lane;
    submission->program->in_flight.fetch_add(1, std::memory_order_acq_rel);
    state_->counters.events_in_flight.fetch_add(1);
    submission->phase.store(after ? Submission::Phase::waiting : Submission::Phase::queued);
    track(*submission);

    Submitted submitted;
    submitted.event = std::make_unique<CpuEvent>(cpu_queue.context, submission);
    if (state_->accepted.fetch_add(1) == state_->inject_loss_after) {
        // Fault injection: the device dies while taking this submission, so
        // whether it was taken cannot be confirmed. Its event fails with
        // everything else the device had.
        submitted.indeterminate =
            Error::of(Errc::device_lost, VACCEL_D_INDETERMINATE)
                .with_note("the device was lost while accepting this work; its event reports "
                           "the outcome");
        if (submission->move(submission->phase.load(), Submission::Phase::done))
            finish(*submission, EventState::failed, device_lost_error(state_->info));
        lose_device();
        return submitted;
    }
    if (after == nullptr) {
        if (!scheduler_.run_inline(submission->lane, submission, inline_bound_))
            scheduler_.enqueue(submission->lane, submission);
        return submitted;
    }
    switch (park_or_release(*static_cast<CpuGate&>(*after).state, after_value, submission)) {
    case Parked::released:
        scheduler_.enqueue(submission->lane, submission);
        break;
    case Parked::closed:
        if (submission->move(Submission::Phase::waiting, Submission::Phase::done))
            finish(*submission, EventState::failed, device_lost_error(state_->info));
        break;
    case Parked::waiting:
    case Parked::ended:
        break;
    }
    return submitted;
}

void CpuBackend::lose_device()
{
    state_->lost.store(true, std::memory_order_release);
    std::vector<std::shared_ptr<GateState>> gates;
    {
        std::lock_guard lock(state_->gates_mutex);
        for (const auto& weak : state_->live_gates)
            if (auto gate = weak.lock()) gates.push_back(std::move(gate));
    }
    for (const auto& gate : gates)
        for (const GateState::Waiter& waiter : close(*gate)) {
            const std::shared_ptr<Submission> one[] = {waiter.submission};
            end_unstarted(one, EventState::failed, device_lost_error(state_->info));
        }
}

}  // namespace
}  // namespace cpu

std::unique_ptr<Backend> open_cpu_backend(const CpuOptions& options)
{
    unsigned threads = options.threads;
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    cpu::size_blas_threads(threads);
    cpu::size_parallel_threads(threads);
    return std::make_unique<cpu::CpuBackend>(options, threads);
}

}  // namespace vaccel::backend
