// objects.cpp - lifetimes of the CPU backend's objects: live counters and gates.
#include "objects.hpp"

#include "vaccel/common/recycling.hpp"

#include <time.h>

#include <cstdlib>

namespace vaccel::backend::cpu {

std::uint64_t monotonic_ns()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(now.tv_nsec);
}

CpuContext::CpuContext(std::shared_ptr<ContextState> state_) : state(std::move(state_))
{
    state->backend->counters.contexts.fetch_add(1);
}
CpuContext::~CpuContext() { state->backend->counters.contexts.fetch_sub(1); }

Allocation::~Allocation()
{
    if (shared.data() == nullptr)
        std::free(data);
}

bool Allocation::acquire(bool exclusive_access)
{
    std::uint64_t current = gate.load(std::memory_order_acquire);
    if (exclusive_access) {
        return current == 0 &&
               gate.compare_exchange_strong(current, exclusive, std::memory_order_acq_rel);
    }
    while (current < exclusive - 1) {
        if (gate.compare_exchange_weak(current, current + 1, std::memory_order_acq_rel))
            return true;
    }
    return false;
}

void Allocation::release(bool exclusive_access)
{
    if (exclusive_access)
        gate.store(0, std::memory_order_release);
    else
        gate.fetch_sub(1, std::memory_order_release);
}

CpuBuffer::CpuBuffer(std::shared_ptr<ContextState> context_, const BufferDesc& desc,
                     std::shared_ptr<Allocation> allocation_)
    : context(std::move(context_)),
      allocation(std::move(allocation_)),
      desc_(desc),
      identity_(context->backend->next_identity.fetch_add(1))
{
    ++context->buffers;
    context->memory_bytes += allocation->allocation_bytes;
    context->backend->counters.buffers.fetch_add(1);
    context->backend->counters.buffer_bytes.fetch_add(allocation->allocation_bytes);
}

CpuBuffer::~CpuBuffer()
{
    --context->buffers;
    context->memory_bytes -= allocation->allocation_bytes;
    context->backend->counters.buffers.fetch_sub(1);
    context->backend->counters.buffer_bytes.fetch_sub(allocation->allocation_bytes);
}

CpuProgram::CpuProgram(std::shared_ptr<ContextState> context_, std::shared_ptr<ProgramState> state_)
    : context(std::move(context_)), state(std::move(state_))
{
    ++context->programs;
    context->backend->counters.programs.fetch_add(1);
}

CpuProgram::~CpuProgram()
{
    --context->programs;
    context->backend->counters.programs.fetch_sub(1);
}

CpuQueue::CpuQueue(std::shared_ptr<ContextState> context_) : context(std::move(context_))
{
    ++context->queues;
    context->backend->counters.queues.fetch_add(1);
}

CpuQueue::~CpuQueue()
{
    --context->queues;
    context->backend->counters.queues.fetch_sub(1);
}

CpuEvent::CpuEvent(std::shared_ptr<ContextState> context_, std::shared_ptr<Submission> submission_)
    : context(std::move(context_)), submission(std::move(submission_))
{
    ++context->events;
    context->backend->counters.events.fetch_add(1);
}

CpuEvent::~CpuEvent()
{
    --context->events;
    context->backend->counters.events.fetch_sub(1);
}

// CpuEvent is final: every block is sizeof(CpuEvent).
void* CpuEvent::operator new(std::size_t)
{
    return BlockPool<sizeof(CpuEvent)>::take();
}

void CpuEvent::operator delete(void* p) noexcept
{
    BlockPool<sizeof(CpuEvent)>::give(p);
}

CpuGate::CpuGate(std::shared_ptr<ContextState> context_)
    : context(std::move(context_)), state(std::make_shared<GateState>())
{
    state->context = context;
    ++context->gates;
    context->backend->counters.gates.fetch_add(1);
}

CpuGate::~CpuGate()
{
    --context->gates;
    context->backend->counters.gates.fetch_sub(1);
}

}  // namespace vaccel::backend::cpu
