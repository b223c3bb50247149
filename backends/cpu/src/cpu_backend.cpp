// cpu_backend.cpp - the CPU backend: the Backend contract over host memory.
//
// Owns: the backend state shared with every object, and the scheduler (the
// worker threads). Decides the order of each call's refusals (the seeds'
// order: what the request is, then limits, then in-flight state) and that
// a submission is either rejected with nothing retained or accepted with its
// gates held until its event is terminal.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "device_info.hpp"
#include "objects.hpp"
#include "scheduler.hpp"
#include "vaccel/backend/cpu.hpp"
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

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(unsigned threads)
        : state_(std::make_shared<BackendState>()), scheduler_(threads)
    {
        state_->info = describe_cpu(threads);
    }

    const vaccel_device_info& device_info() const override { return state_->info; }

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
                                                   "programs and {} queues; release them first",
                                                   cpu_context.state->buffers,
                                                   cpu_context.state->programs,
                                                   cpu_context.state->queues)));
        context.reset();
        return {};
    }

    void set_context_weight(Context& context, std::uint32_t weight) override
    {
        scheduler_.set_weight(*static_cast<CpuContext&>(context).state->flow, weight);
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

    Result<std::unique_ptr<Program>> load_program(Context& context,
                                                  const ProgramDesc& desc) override
    {
        const auto& device = state_->info;
        if (desc.format != VACCEL_FORMAT_TOSA)
            return fail(Error::of(Errc::unsupported, VACCEL_D_FORMAT, desc.format)
                            .with_note("the CPU backend loads TOSA 1.0 programs only"));
        if (!is_zero(desc.target) && !same_target(desc.target, cpu_tosa_target))
            return fail(Error::of(Errc::incompatible, VACCEL_D_TARGET)
                            .with_note(fmt::format("TOSA target {}.{} profiles {:#x} level {} "
                                                   "extensions {:#x} is not the CPU's (1.0, "
                                                   "PRO_FP, level 8K, no extensions); pass an "
                                                   "all-zero target for the device default",
                                                   desc.target.major, desc.target.minor,
                                                   desc.target.profiles, desc.target.level,
                                                   desc.target.extensions)));
        if (desc.payload.size() > device.limits.max_artifact_bytes)
            return fail(Error::limit_hit(VACCEL_LIMIT_ARTIFACT_BYTES,
                                         device.limits.max_artifact_bytes, desc.payload.size()));
        auto& owner = static_cast<CpuContext&>(context).state;
        if (owner->programs >= device.limits.max_programs)
            return fail(Error::limit_hit(VACCEL_LIMIT_PROGRAMS, device.limits.max_programs,
                                         owner->programs));
        auto graph = tosa::parse(desc.payload);
        if (!graph) return fail(graph.error());
        auto plan = compile(*graph);
        if (!plan) return fail(plan.error());
        auto program = std::make_shared<ProgramState>();
        program->plan = std::move(*plan);
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

    Result<std::unique_ptr<Event>> submit(Queue& queue, Program& program,
                                          std::span<const Binding> bindings,
                                          std::uint64_t deadline_ns) override;

    EventStatus poll(Event& event) override
    {
        const Submission& submission = *static_cast<CpuEvent&>(event).submission;
        const auto state = submission.state.load(std::memory_order_acquire);
        EventStatus status;
        status.state = static_cast<EventState>(state);
        if (state == VACCEL_EVENT_FAILED) status.failure = submission.failure;
        return status;
    }

    Status destroy_event(std::unique_ptr<Event>& event) override
    {
        auto& cpu_event = static_cast<CpuEvent&>(*event);
        if (cpu_event.submission->state.load(std::memory_order_acquire) == VACCEL_EVENT_PENDING)
            return fail(Error::of(Errc::busy, VACCEL_D_NOT_COMPLETE,
                                  reinterpret_cast<std::uintptr_t>(&cpu_event))
                            .with_note("the event is still pending; wait for it first"));
        event.reset();
        return {};
    }

    void set_completion_notifier(std::function<void()> notify) override
    {
        std::lock_guard lock(state_->notify_mutex);
        state_->notify = std::move(notify);
    }

    LiveCounters live() const override
    {
        const Counters& c = state_->counters;
        return LiveCounters{c.contexts.load(),  c.buffers.load(), c.buffer_bytes.load(),
                            c.programs.load(),  c.queues.load(),  c.events.load(),
                            c.events_in_flight.load()};
    }

private:
    std::shared_ptr<BackendState> state_;
    // Declared last: destroyed first, so workers drain while the state lives.
    Scheduler scheduler_;
};

Result<std::unique_ptr<Event>> CpuBackend::submit(Queue& queue, Program& program,
                                                  std::span<const Binding> bindings,
                                                  std::uint64_t deadline_ns)
{
    auto& cpu_queue = static_cast<CpuQueue&>(queue);
    auto& cpu_program = static_cast<CpuProgram&>(program);
    const auto& context = cpu_queue.context;
    if (cpu_program.context != context)
        return fail(Error::of(Errc::invalid_argument)
                        .with_note("the program belongs to another context than the queue"));
    const Plan& plan = *cpu_program.state->plan;

    // The contract's binding rules, in the shared order.
    std::vector<validate::SlotSpec> slots;
    slots.reserve(plan.slots.size());
    for (const SlotInfo& slot : plan.slots) slots.push_back({slot.role, slot.bytes});
    std::vector<validate::BindingFacts> facts;
    facts.reserve(bindings.size());
    for (std::size_t i = 0; i < bindings.size(); ++i) {
        const Binding& b = bindings[i];
        if (b.buffer == nullptr)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE, 0)
                            .with_note(fmt::format("binding {} names no buffer", i)));
        const auto& buffer = static_cast<const CpuBuffer&>(*b.buffer);
        facts.push_back({b.slot, b.access, buffer.identity(), buffer.desc().bytes,
                         buffer.desc().usage, buffer.desc().access, b.offset, b.bytes});
    }
    if (auto valid = validate::bindings(slots, facts, state_->info.limits.max_bindings); !valid)
        return fail(valid.error());
    for (std::size_t i = 0; i < bindings.size(); ++i)
        if (static_cast<const CpuBuffer&>(*bindings[i].buffer).context != context)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_BINDING_CONTEXT, i)
                            .with_note(fmt::format("binding {} names a buffer of another context",
                                                   i)));

    if (deadline_ns != 0 && monotonic_ns() >= deadline_ns)
        return fail(Error::of(Errc::deadline_expired, VACCEL_D_DEADLINE)
                        .with_note("the deadline had already passed when the work was submitted"));
    const auto max_events = state_->info.limits.max_events;
    if (context->events >= max_events)
        return fail(Error::limit_hit(VACCEL_LIMIT_EVENTS, max_events, context->events));

    auto submission = std::make_shared<Submission>();
    submission->backend = state_;
    submission->program = cpu_program.state;
    submission->deadline_ns = deadline_ns;
    submission->slot_data.resize(plan.slots.size());
    // One gate per distinct buffer: exclusive if any binding writes it (the
    // rules above already refused a written buffer bound twice).
    for (const Binding& b : bindings) {
        auto& buffer = static_cast<CpuBuffer&>(*b.buffer);
        submission->slot_data[b.slot] = buffer.allocation->data + b.offset;
        const bool writes = b.access == VACCEL_ACCESS_WRITE;
        auto held = std::ranges::find_if(submission->held, [&](const Submission::Held& h) {
            return h.allocation == buffer.allocation;
        });
        if (held == submission->held.end())
            submission->held.push_back({buffer.allocation, writes});
        else
            held->exclusive = held->exclusive || writes;
    }
    // All or nothing: on the first gate that cannot be had, undo the others.
    for (std::size_t i = 0; i < submission->held.size(); ++i) {
        Submission::Held& held = submission->held[i];
        if (held.allocation->acquire(held.exclusive)) continue;
        for (std::size_t j = 0; j < i; ++j)
            submission->held[j].allocation->release(submission->held[j].exclusive);
        const auto busy = std::ranges::find_if(bindings, [&](const Binding& b) {
            return static_cast<CpuBuffer&>(*b.buffer).allocation == held.allocation;
        });
        const auto& buffer = static_cast<const CpuBuffer&>(*busy->buffer);
        return fail(in_flight_error(buffer.identity(), buffer.in_flight(),
                                    held.exclusive ? "binding a buffer for writing"
                                                   : "binding a buffer for reading"));
    }
    for (Submission::Held& held : submission->held)
        held.allocation->submissions.fetch_add(1, std::memory_order_acq_rel);
    cpu_program.state->in_flight.fetch_add(1, std::memory_order_acq_rel);
    state_->counters.events_in_flight.fetch_add(1);

    auto event = std::make_unique<CpuEvent>(context, submission);
    scheduler_.enqueue(cpu_queue.lane, std::move(submission));
    return event;
}

}  // namespace
}  // namespace cpu

std::unique_ptr<Backend> open_cpu_backend(const CpuOptions& options)
{
    unsigned threads = options.threads;
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    return std::make_unique<cpu::CpuBackend>(threads);
}

}  // namespace vaccel::backend
