// backend.hpp - the interface every device backend implements.
//
// Mirrors the accelerator contract (the reference design's backend interface, shaped like
// a HAL; docs/reference-design.md); docs/adr/0008-backend-model.md gives the reasons. Decides:
//  - Ownership: every object a backend creates is returned as a unique_ptr
//    the caller (the engine) owns. Releasing takes the unique_ptr by
//    reference: on success the backend resets it; on failure (Busy while in
//    use) it is left untouched, so the object is handed back alive.
//  - Threading: calls on one Backend come from one thread at a time (the
//    engine's device serialisation), EXCEPT load_program, which the engine
//    makes without that serialisation so that compiling a program never
//    blocks the device for other sessions: it must be safe against every
//    other call (objects of one context are still only touched by the one
//    session that owns the context, one call at a time). A backend may run
//    work on threads of its own and must make poll()/in_flight() safe
//    against them.
//  - Children: a context cannot be destroyed while it owns buffers, programs,
//    queues or gates; an event keeps its bindings' buffers and its program
//    "in use" until it is terminal.
//  - Completion: each accepted submission carries an EventSink of the
//    engine's; the backend calls it exactly once, from any thread, after the
//    event's state left pending (so a poll() from the sink sees it terminal).
//  - Handles: backends know none. A refusal that names a buffer carries its
//    Buffer::identity() (a serial number, never an address), which the
//    engine turns into the client's handle.
//  - TOSA capability: a device lists the descriptors (capability.hpp) of
//    the TOSA targets it admits, fixed for its life; the engine reads them
//    once when it opens the device (docs/adr/0014-tosa-descriptors.md).
//  - Loss: a backend that loses its device (fault, reset) poisons itself:
//    state() says lost, pending events fail with DeviceLost and every later
//    call may be refused; the engine refuses calls on a lost device itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vaccel.h"
#include "vaccel/common/error.hpp"
#include "vaccel/common/kernel_args.hpp"
#include "vaccel/tosa/capability.hpp"

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

// A Host or Shared buffer's memory as a client may map it (BUFFER_MAP).
// Ownership: `fd` is the buffer's (borrowed); valid until the buffer is freed.
struct MappableMemory {
    std::byte* address = nullptr;  // the buffer's first byte in this process
    int fd = -1;                   // a memfd holding the buffer's bytes
    std::uint64_t offset = 0;      // where the buffer starts in `fd` (page-aligned)
};

class Buffer {
public:
    virtual ~Buffer() = default;
    virtual const BufferDesc& desc() const = 0;
    // Submissions accepted and not yet complete that bind this buffer.
    virtual std::uint64_t in_flight() const = 0;
    // Names the buffer in refusals (VACCEL_D_IN_FLIGHT arg0): unique among
    // the backend's live buffers, never a memory address.
    virtual std::uint64_t identity() const = 0;
};

struct ProgramDesc {
    std::uint32_t format = VACCEL_FORMAT_TOSA;
    vaccel_tosa_target target{};  // all zero = the device's default target
    std::span<const std::byte> payload;  // only valid during load_program
    // Device memory the program may take for itself (its arena): what the
    // client's memory limit has left. A backend refuses a program needing
    // more before allocating anything (within_memory_budget below).
    std::uint64_t memory_budget = UINT64_MAX;
};

// The refusal of a program whose own device memory (`bytes`, its arena)
// is past ProgramDesc::memory_budget: ResourceLimit, VACCEL_LIMIT_MEMORY_BYTES,
// arg0 = the budget, arg1 = the bytes it needs.
inline Status within_memory_budget(std::uint64_t bytes, std::uint64_t budget)
{
    if (bytes <= budget) return {};
    return fail(Error::limit_hit(VACCEL_LIMIT_MEMORY_BYTES, budget, bytes)
                    .with_note("the program's arena needs " + std::to_string(bytes) +
                               " bytes of device memory and the client's memory limit has " +
                               std::to_string(budget) +
                               " left; free buffers or unload programs first"));
}

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
    // Inputs first, then outputs; the slot number is the index. Kernel
    // programs (launched, not submitted) have no slots.
    virtual std::span<const SlotInfo> slots() const = 0;
    virtual std::uint32_t input_count() const = 0;
    // enum vaccel_program_format it was loaded from.
    virtual std::uint32_t format() const = 0;
    // Device memory the program holds for its life (its arena), which the
    // engine charges to the client's memory limit.
    virtual std::uint64_t device_bytes() const { return 0; }
};

// A host gate (docs/adr/0008): a 64-bit timeline of one context that only
// the host raises.
class Gate {
public:
    virtual ~Gate() = default;
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

// The engine's side of one event. The backend keeps it alive from acceptance
// until it has called completed(), which it does exactly once, from any
// thread, after the event left pending. completed() must not block and must
// not call back into the backend.
class EventSink {
public:
    virtual ~EventSink() = default;
    virtual void completed(const EventStatus& status) noexcept = 0;
    // Segment `index` of work that goes out in segments ended on the
    // device, and the work goes on (a CUDA device with hold_starts; cuda.hpp,
    // held_segments). Never for the last segment: completed() is its end.
    virtual void segment_ended(std::uint32_t index) noexcept { (void)index; }
};

// SUBMIT and SUBMIT_AFTER. The engine has checked handles, contexts and
// limits; the backend applies the binding rules (validate::bindings).
struct SubmitDesc {
    Queue* queue = nullptr;
    Program* program = nullptr;
    std::span<const Binding> bindings;
    std::uint64_t deadline_ns = 0;  // absolute CLOCK_MONOTONIC, 0 = none
    Gate* after = nullptr;          // start once it reaches after_value
    std::uint64_t after_value = 0;
    std::shared_ptr<EventSink> sink;  // never null
};

// LAUNCH of a kernel program. The engine has parsed argv (kernel_args::parse)
// and checked the dims (validate::launch_dims); the backend checks the entry,
// the bindings (validate::launch_bindings) and lays the arguments out
// (kernel_args::lay_out) with its device addresses.
struct LaunchDesc {
    Queue* queue = nullptr;
    Program* program = nullptr;
    std::string_view entry;
    vaccel_launch_dims dims{};
    std::span<const kernel_args::Arg> args;
    std::span<const Binding> bindings;
    std::uint64_t deadline_ns = 0;
    std::shared_ptr<EventSink> sink;  // never null
};

// An accepted submission. `indeterminate` is set when the device took the
// work but its acceptance could not be confirmed (the reference design's indeterminate outcome):
// the event is real and will report the outcome, and the caller returns the
// error together with the event handle.
struct Submitted {
    std::unique_ptr<Event> event;
    std::optional<Error> indeterminate;
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
    std::uint64_t gates = 0;
};

// The atomics a backend keeps its LiveCounters in, updated from any thread.
struct LiveCounterCells {
    std::atomic<std::uint64_t> contexts{0};
    std::atomic<std::uint64_t> buffers{0};
    std::atomic<std::uint64_t> buffer_bytes{0};
    std::atomic<std::uint64_t> programs{0};
    std::atomic<std::uint64_t> queues{0};
    std::atomic<std::uint64_t> events{0};
    std::atomic<std::uint64_t> events_in_flight{0};
    std::atomic<std::uint64_t> gates{0};

    LiveCounters snapshot() const
    {
        return LiveCounters{contexts.load(), buffers.load(), buffer_bytes.load(),
                            programs.load(), queues.load(),  events.load(),
                            events_in_flight.load(), gates.load()};
    }
};

enum class DeviceState : std::uint32_t {
    ok = VACCEL_DEVICE_OK,
    lost = VACCEL_DEVICE_LOST,
};

// How a context's work shares its device (docs/adr/0026-gpu-device-scheduler.md).
struct ContextSchedule {
    // The flow the context's work joins; every context of one tenant on a
    // device gets the same key (the engine's tenant key), so a tenant that
    // opens more sessions or contexts does not get more of the device.
    // Empty: a flow of the context's own.
    std::string flow;
    // The flow's relative share when several flows have work queued:
    // 1..1000, default 100 (the engine clamps). A backlogged flow gets at
    // least weight / sum(weights of backlogged flows) of the device's
    // dispatch slots. Takes effect for submissions dispatched after the call.
    std::uint32_t weight = 100;
    // priority = "latency": served before batch flows whenever it waits.
    bool latency = false;
    // device_share, per mille of the device's time (1000: no cap).
    std::uint32_t share_permille = 1000;
};

// How long a GPU's scheduler keeps batch work waiting, by default, for a
// latency tenant's next item once its last one ended ([devices.vulkan] and
// [devices.cuda] latency_hold_us; docs/adr/0026-gpu-device-scheduler.md):
// a round trip through vacceld and back takes well under this.
inline constexpr std::uint32_t default_latency_hold_us = 200;

// The device time a segment of a run aims at on a GPU, by default
// ([devices.vulkan] and [devices.cuda] slice_us; ADR 0026): long runs and
// long MATMULs are cut into segments of about this much, so a waiting
// tenant gets the device within about two of them.
inline constexpr std::uint32_t default_slice_us = 250;

// What a device's scheduler has served (docs/adr/0026-gpu-device-scheduler.md).
struct FlowService {
    std::string flow;  // ContextSchedule::flow; empty for a context's own flow
    std::uint32_t weight = 100;
    bool latency = false;
    std::uint32_t share_permille = 1000;
    std::uint64_t charged_ns = 0;  // device time charged since the flow was made
    std::uint64_t window_ns = 0;   // of that, within the last share window
    std::uint64_t held_ns = 0;     // of charged_ns: the device kept idle for it (latency hold)
    std::uint32_t queued = 0;      // work items waiting for the device
    std::uint32_t on_device = 0;   // on the device now
};
struct DispatchEntry {
    std::uint64_t sequence = 0;  // counts every dispatch of the device
    std::string flow;
    std::uint64_t at_ns = 0;    // when it went to the device, CLOCK_MONOTONIC
    std::uint64_t used_ns = 0;  // device time charged once it ended
    bool ended = false;
};
struct DeviceService {
    std::uint64_t share_window_ns = 0;
    // Items the device runs at once (the CPU's workers; 1 on a GPU): a share
    // window holds servers * share_window_ns of device time.
    std::uint32_t servers = 1;
    std::vector<FlowService> flows;      // flows the device knows now
    std::vector<DispatchEntry> recent;   // the latest dispatches, oldest first
};

class Backend {
public:
    virtual ~Backend() = default;

    virtual const vaccel_device_info& device_info() const = 0;
    // The TOSA capability descriptors of the device, one per target it
    // admits (e.g. a GPU's FP32, FP16 and FP8 tiers), in the order of
    // device_info().tosa_targets. Fixed for the backend's life and safe to
    // call from any thread. Empty for a device that runs no TOSA programs.
    virtual std::vector<tosa::CapabilityDescriptor> tosa_descriptors() const { return {}; }

    virtual Result<std::unique_ptr<Context>> create_context() = 0;
    virtual Status destroy_context(std::unique_ptr<Context>& context) = 0;
    // How the context's work is served beside other contexts'
    // (ContextSchedule). Called once, right after create_context() and
    // before the context has queues; a backend without a scheduler ignores
    // it.
    virtual void set_context_schedule(Context& context, const ContextSchedule& schedule)
    {
        (void)context;
        (void)schedule;
    }

    virtual Result<std::unique_ptr<Buffer>> allocate_buffer(Context& context,
                                                            const BufferDesc& desc,
                                                            BufferInfo& info) = 0;
    virtual Status free_buffer(std::unique_ptr<Buffer>& buffer) = 0;
    // Busy while a submission binds the buffer; PermissionDenied without the
    // transfer usage; OutOfBounds past the end.
    virtual Status write_buffer(Buffer& buffer, std::uint64_t offset,
                                std::span<const std::byte> data) = 0;
    virtual Status read_buffer(Buffer& buffer, std::uint64_t offset, std::span<std::byte> data) = 0;
    // BUFFER_MAP of a Host or Shared buffer (the engine refuses Device
    // buffers): memory in a memfd that the client maps, shared with the
    // device's view. Once mapped, the buffer's memory never moves again.
    // Busy while a submission binds it (a backend may move the bytes into a
    // memfd on the first map). A backend that cannot share its host memory
    // refuses with Unsupported.
    virtual Result<MappableMemory> map_buffer(Buffer& buffer)
    {
        (void)buffer;
        return fail(Error::of(Errc::unsupported)
                        .with_note("this device's buffers cannot be mapped into a client; move "
                                   "their bytes with buffer write and read"));
    }

    // Callable without the device serialisation (see Threading above).
    virtual Result<std::unique_ptr<Program>> load_program(Context& context,
                                                          const ProgramDesc& desc) = 0;
    virtual Status unload_program(std::unique_ptr<Program>& program) = 0;

    virtual Result<std::unique_ptr<Queue>> create_queue(Context& context) = 0;
    virtual Status destroy_queue(std::unique_ptr<Queue>& queue) = 0;

    // Gates (VACCEL_CAP_GATES). raise: a value at or below the current one
    // changes nothing; reaching a value starts the submissions waiting for
    // it. destroy never fails for in-flight work: submissions still waiting
    // on the gate are cancelled (CANCELLED, VACCEL_D_GATE_DESTROYED).
    virtual Result<std::unique_ptr<Gate>> create_gate(Context& context) = 0;
    virtual Status raise_gate(Gate& gate, std::uint64_t value) = 0;
    virtual std::uint64_t gate_value(const Gate& gate) const = 0;
    virtual Status destroy_gate(std::unique_ptr<Gate>& gate) = 0;

    // Either refused (nothing happened, nothing retained) or accepted: the
    // event then reports the outcome, including failures after acceptance.
    // A backend that cannot honour a deadline refuses it with
    // DeadlineExpired/VACCEL_D_DEADLINE.
    virtual Result<Submitted> submit(const SubmitDesc& desc) = 0;
    // VACCEL_CAP_LAUNCH; the same accepted/refused/indeterminate outcomes.
    virtual Result<Submitted> launch(const LaunchDesc& desc) = 0;
    virtual EventStatus poll(Event& event) = 0;
    // Busy (VACCEL_D_NOT_COMPLETE, arg0 = 0: the engine names the handle)
    // while the event is pending.
    virtual Status destroy_event(std::unique_ptr<Event>& event) = 0;
    // Cancels every submission of `context` that has not started (waiting
    // for a gate or queued): each becomes CANCELLED with `why` as its
    // failure. Running work is not interrupted. Returns how many.
    virtual std::uint64_t cancel_pending(Context& context, const Error& why) = 0;

    // ok until the device is lost; never goes back.
    virtual DeviceState state() const = 0;

    virtual LiveCounters live() const = 0;
    // The scheduler's accounts and recent dispatches; nothing for a device
    // without one. Safe to call from any thread.
    virtual std::optional<DeviceService> device_service() const { return std::nullopt; }
};

}  // namespace vaccel::backend
