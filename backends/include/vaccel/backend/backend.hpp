// backend.hpp - the interface every device backend implements.
//
// Mirrors the accelerator contract (the seeds' Accelerator trait). Decides:
//  - Ownership: every object a backend creates is returned as a unique_ptr
//    the caller (the engine) owns. Releasing takes the unique_ptr by
//    reference: on success the backend resets it; on failure (Busy while in
//    use) it is left untouched, so the object is handed back alive.
//  - Threading: calls on one Backend come from one thread at a time (the
//    engine's device worker, or the embedded caller under the engine's lock);
//    a backend may run submissions on threads of its own and must make
//    poll()/in_flight() safe against them.
//  - Children: a context cannot be destroyed while it owns buffers, programs
//    or queues; an event keeps its bindings' buffers and its program "in use"
//    until it completes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vaccel.h"
#include "vaccel/common/error.hpp"

namespace vaccel::backend {

class Context {
public:
    virtual ~Context() = default;
};

struct BufferDesc {
    std::uint64_t bytes = 0;
    std::uint64_t alignment = 0;  // 0 = device default
    std::uint32_t domain = VACCEL_DOMAIN_HOST;
    std::uint32_t usage = VACCEL_USAGE_ALL;
    std::uint32_t access = VACCEL_ACCESS_RW;
};

struct BufferInfo {
    std::uint64_t allocation_bytes = 0;
    std::uint64_t measured_alignment = 0;
    std::uint32_t properties = 0;  // VACCEL_PROP_*
};

class Buffer {
public:
    virtual ~Buffer() = default;
    virtual const BufferDesc& desc() const = 0;
    // Submissions accepted and not yet complete that bind this buffer.
    virtual std::uint64_t in_flight() const = 0;
};

struct ProgramDesc {
    std::uint32_t format = VACCEL_FORMAT_TOSA;
    vaccel_tosa_target target{};  // all zero = the device's default target
    std::span<const std::byte> payload;  // only valid during load_program
};

struct SlotInfo {
    std::uint32_t role = 0;  // enum vaccel_slot_role
    std::uint32_t dtype = 0; // TOSA DType
    std::vector<std::int64_t> shape;
    std::uint64_t bytes = 0;
    std::string name;
};

class Program {
public:
    virtual ~Program() = default;
    // Inputs first, then outputs; the slot number is the index.
    virtual std::span<const SlotInfo> slots() const = 0;
    virtual std::uint32_t input_count() const = 0;
};

class Queue {
public:
    virtual ~Queue() = default;
};

struct Binding {
    std::uint32_t slot = 0;
    std::uint32_t access = 0;
    Buffer* buffer = nullptr;  // not owned; outlives the event (in_flight() > 0 keeps it)
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
};

enum class EventState : std::uint32_t {
    pending = VACCEL_EVENT_PENDING,
    complete = VACCEL_EVENT_COMPLETE,
    failed = VACCEL_EVENT_FAILED,
    cancelled = VACCEL_EVENT_CANCELLED,
};

struct EventStatus {
    EventState state = EventState::pending;
    Error failure{};  // meaningful for failed
};

class Event {
public:
    virtual ~Event() = default;
};

// Objects alive in a backend instance; all zero after everything is released.
struct LiveCounters {
    std::uint64_t contexts = 0;
    std::uint64_t buffers = 0;
    std::uint64_t buffer_bytes = 0;
    std::uint64_t programs = 0;
    std::uint64_t queues = 0;
    std::uint64_t events = 0;
    std::uint64_t events_in_flight = 0;
};

class Backend {
public:
    virtual ~Backend() = default;

    virtual const vaccel_device_info& device_info() const = 0;

    virtual Result<std::unique_ptr<Context>> create_context() = 0;
    virtual Status destroy_context(std::unique_ptr<Context>& context) = 0;
    // The context's relative share of the device when several contexts have
    // work queued: 1..1000, default 100 (the engine validates the range). A
    // backlogged context gets at least weight / sum(weights of backlogged
    // contexts) of the device's dispatch slots. Takes effect for submissions
    // dispatched after the call; a backend without a scheduler ignores it.
    virtual void set_context_weight(Context& context, std::uint32_t weight) { (void)context; (void)weight; }

    virtual Result<std::unique_ptr<Buffer>> allocate_buffer(Context& context,
                                                            const BufferDesc& desc,
                                                            BufferInfo& info) = 0;
    virtual Status free_buffer(std::unique_ptr<Buffer>& buffer) = 0;
    // Busy while a submission binds the buffer; PermissionDenied without the
    // transfer usage; OutOfBounds past the end.
    virtual Status write_buffer(Buffer& buffer, std::uint64_t offset,
                                std::span<const std::byte> data) = 0;
    virtual Status read_buffer(Buffer& buffer, std::uint64_t offset, std::span<std::byte> data) = 0;

    virtual Result<std::unique_ptr<Program>> load_program(Context& context,
                                                          const ProgramDesc& desc) = 0;
    virtual Status unload_program(std::unique_ptr<Program>& program) = 0;

    virtual Result<std::unique_ptr<Queue>> create_queue(Context& context) = 0;
    virtual Status destroy_queue(std::unique_ptr<Queue>& queue) = 0;

    // Either rejected (nothing happened, nothing retained) or accepted: the
    // event then reports the outcome, including failures after acceptance.
    // deadline_ns: absolute CLOCK_MONOTONIC, 0 = none; a backend that cannot
    // honour a deadline refuses it with DeadlineExpired/VACCEL_D_DEADLINE.
    virtual Result<std::unique_ptr<Event>> submit(Queue& queue, Program& program,
                                                  std::span<const Binding> bindings,
                                                  std::uint64_t deadline_ns) = 0;
    virtual EventStatus poll(Event& event) = 0;
    // Busy while the event is pending.
    virtual Status destroy_event(std::unique_ptr<Event>& event) = 0;

    // Called (from any backend thread) each time some event leaves pending.
    // Set once, before the first submit; the callback must not call back in.
    virtual void set_completion_notifier(std::function<void()> notify) = 0;

    virtual LiveCounters live() const = 0;
};

}  // namespace vaccel::backend
