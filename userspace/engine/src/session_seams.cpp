// session_seams.cpp - what a daemon needs of a session beyond call():
// routing a request to its device, one non-blocking look at a wait, and the
// session's use for the admin channel.
//
// Owns nothing. Decides:
//  - routing reads only SessionState::route (a leaf lock), never the session
//    lock, so the daemon's reactor can route without ever waiting on a
//    device (ADR 0006);
//  - "events in flight" in stats() are events whose completion has not
//    been reported (their watch); "events" are events alive.
#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "args.hpp"
#include "ops.hpp"
#include "session_state.hpp"
#include "vaccel/common/requests.hpp"
#include "vaccel/engine/session.hpp"

namespace vaccel::engine {

namespace {

// The handle field at `offset` of the request's struct.
std::uint64_t handle_at(std::span<const std::byte> args, std::size_t offset)
{
    std::uint64_t handle = 0;
    std::memcpy(&handle, args.data() + offset, sizeof handle);
    return handle;
}

// The handle a request names (0 = none), by opcode.
std::uint64_t request_handle(std::uint32_t opcode, std::span<const std::byte> args,
                             std::span<const std::byte> payload)
{
    switch (opcode) {
    case VACCEL_OP_CONTEXT_DESTROY:
    case VACCEL_OP_BUFFER_FREE:
    case VACCEL_OP_PROGRAM_UNLOAD:
    case VACCEL_OP_QUEUE_DESTROY:
    case VACCEL_OP_EVENT_DESTROY:
    case VACCEL_OP_GATE_DESTROY:
        return handle_at(args, offsetof(vaccel_handle_release, handle));
    case VACCEL_OP_GATE_CREATE:
        return handle_at(args, offsetof(vaccel_gate_create, context));
    case VACCEL_OP_GATE_RAISE:
    case VACCEL_OP_GATE_VALUE:
        return handle_at(args, offsetof(vaccel_gate_value, gate));
    case VACCEL_OP_SUBMIT_AFTER:
        return handle_at(args, offsetof(vaccel_submit_after, queue));
    case VACCEL_OP_LAUNCH:
        return handle_at(args, offsetof(vaccel_launch, queue));
    case VACCEL_OP_BUFFER_ALLOC:
        return handle_at(args, offsetof(vaccel_buffer_alloc, context));
    case VACCEL_OP_BUFFER_WRITE:
    case VACCEL_OP_BUFFER_READ:
        return handle_at(args, offsetof(vaccel_buffer_transfer, buffer));
    case VACCEL_OP_PROGRAM_LOAD:
        return handle_at(args, offsetof(vaccel_program_load, context));
    case VACCEL_OP_PROGRAM_SLOT:
        return handle_at(args, offsetof(vaccel_program_slot, program));
    case VACCEL_OP_QUEUE_CREATE:
        return handle_at(args, offsetof(vaccel_queue_create, context));
    case VACCEL_OP_SUBMIT:
        return handle_at(args, offsetof(vaccel_submit, queue));
    case VACCEL_OP_RUN:
        return handle_at(args, offsetof(vaccel_run, queue));
    case VACCEL_OP_BUFFER_MAP:
        return handle_at(args, offsetof(vaccel_buffer_map, buffer));
    case VACCEL_OP_EVENT_POLL:
        return handle_at(args, offsetof(vaccel_event_poll, event));
    case VACCEL_OP_CONTEXT_LIMITS:
        return handle_at(args, offsetof(vaccel_context_limits, context));
    case VACCEL_OP_EVENT_WAIT:
        return payload.size() >= sizeof(std::uint64_t) ? handle_at(payload, 0) : 0;
    default:
        return 0;
    }
}

}  // namespace

Status Session::begin_run(std::span<std::byte> args, std::span<const std::byte> bindings,
                          std::uint64_t& ticket)
{
    ticket = 0;
    SessionState& s = *state_;
    Status begun = ops::check_wire(VACCEL_OP_RUN, args, bindings.size());
    if (begun) {
        std::lock_guard lock(s.mutex);
        auto value = load_struct<vaccel_run>(args);
        begun = ops::run_begin(s, value, bindings, ticket);
        store_struct(args, value);
    }
    if (!begun)
        s.errors.fetch_add(1, std::memory_order_relaxed);
    return begun;
}

Result<bool> Session::run_done(std::uint64_t ticket, const std::shared_ptr<Waiter>& waiter)
{
    return ops::run_ended(*state_, ticket, waiter);
}

Status Session::finish_run(std::uint64_t ticket, std::span<std::byte> args)
{
    SessionState& s = *state_;
    std::lock_guard lock(s.mutex);
    auto value = load_struct<vaccel_run>(args);
    Status finished = ops::run_finish(s, ticket, value);
    store_struct(args, value);
    return finished;
}

Status Session::admit_payload(std::uint32_t opcode, std::span<const std::byte> args)
{
    SessionState& s = *state_;
    Status admitted;
    if ((opcode == VACCEL_OP_BUFFER_WRITE || opcode == VACCEL_OP_BUFFER_READ) &&
        args.size() == sizeof(vaccel_buffer_transfer)) {
        vaccel_buffer_transfer transfer{};
        std::memcpy(&transfer, args.data(), sizeof transfer);
        std::lock_guard lock(s.mutex);
        admitted = ops::buffer_transfer_admits(s, transfer);
    } else if (opcode == VACCEL_OP_PROGRAM_LOAD && args.size() == sizeof(vaccel_program_load)) {
        vaccel_program_load load{};
        std::memcpy(&load, args.data(), sizeof load);
        std::lock_guard lock(s.mutex);
        admitted = ops::program_load_admits(s, load);
    }
    if (!admitted)
        s.errors.fetch_add(1, std::memory_order_relaxed);
    return admitted;
}

Result<BufferMapping> Session::buffer_mapping(std::uint64_t buffer)
{
    SessionState& s = *state_;
    std::lock_guard lock(s.mutex);
    vaccel_buffer_map args{};
    args.buffer = buffer;
    backend::MappableMemory memory;
    if (auto mapped = ops::buffer_map(s, args, &memory); !mapped)
        return fail(std::move(mapped.error()));
    BufferMapping mapping;
    mapping.address = memory.address;
    mapping.offset = memory.offset;
    mapping.bytes = args.map_bytes;
    if (memory.fd >= 0) {
        mapping.fd = ::fcntl(memory.fd, F_DUPFD_CLOEXEC, 0);
        if (mapping.fd < 0)
            return fail(Error::of(Errc::external, VACCEL_D_NONE, 1, static_cast<std::uint64_t>(errno))
                            .with_note("the buffer's memfd could not be duplicated"));
    }
    return mapping;
}

const SessionIdentity& Session::identity() const
{
    return state_->identity;
}

const TenantId& Session::tenant() const
{
    return state_->tenant->id();
}

std::optional<std::uint32_t> Session::route(std::uint32_t opcode, std::span<const std::byte> args,
                                            std::span<const std::byte> in_payload) const
{
    const SessionState& s = *state_;
    switch (opcode) {
    case VACCEL_OP_GET_VERSION:
    case VACCEL_OP_DEVICE_COUNT:
    case VACCEL_OP_DEVICE_QUERY:
    case VACCEL_OP_DEVICE_TOSA:
        return std::nullopt;
    default:
        break;
    }
    if (s.devices->count() == 0)
        return std::nullopt;  // nothing to route to: call() refuses at once
    if (args.size() != args_size(opcode))
        return 0;
    if (opcode == VACCEL_OP_CONTEXT_CREATE) {
        const auto create = load_struct<vaccel_context_create>(args);
        return create.device < s.devices->count() ? create.device : 0;
    }
    const std::uint64_t handle = request_handle(opcode, args, in_payload);
    std::lock_guard lock(s.route_mutex);
    return s.route_of(handle).value_or(0);
}

bool Session::quiesce(const std::shared_ptr<Waiter>& waiter)
{
    return engine::quiesce(*state_, waiter);
}

std::optional<std::uint32_t> Session::first_device() const
{
    std::lock_guard lock(state_->route_mutex);
    std::optional<std::uint32_t> first;
    for (const SessionState::Route& entry : state_->route)
        if (entry.handle != 0 && (!first || entry.device < *first))
            first = entry.device;
    return first;
}

Result<WaitProgress> Session::check_wait(std::span<const std::uint64_t> events,
                                         std::uint32_t flags,
                                         const std::shared_ptr<Waiter>& waiter)
{
    auto progress = ops::wait_progress(*state_, events, flags, waiter);
    if (!progress)
        state_->errors.fetch_add(1, std::memory_order_relaxed);
    return progress;
}

void Session::set_completion_listener(std::shared_ptr<Waiter> listener)
{
    std::lock_guard lock(state_->mutex);
    state_->completion_listener = std::move(listener);
}

void Session::count_refusal()
{
    state_->errors.fetch_add(1, std::memory_order_relaxed);
}

SessionStats Session::stats() const
{
    SessionState& s = *state_;
    SessionStats stats;
    std::lock_guard lock(s.mutex);
    s.objects.for_each([&](std::uint64_t, Object& object) {
        std::visit(
            [&](auto& record) {
                using R = std::decay_t<decltype(record)>;
                if constexpr (std::is_same_v<R, ContextRecord>) {
                    ++stats.contexts;
                    stats.memory_bytes += record.accounting->used(Resource::memory_bytes);
                } else if constexpr (std::is_same_v<R, BufferRecord>) {
                    ++stats.buffers;
                } else if constexpr (std::is_same_v<R, ProgramRecord>) {
                    ++stats.programs;
                } else if constexpr (std::is_same_v<R, QueueRecord>) {
                    ++stats.queues;
                } else if constexpr (std::is_same_v<R, GateRecord>) {
                    ++stats.gates;
                } else {
                    ++stats.events;
                    stats.events_in_flight += record.watch->done() ? 0 : 1;
                }
            },
            object);
    });
    stats.submissions = s.submissions.load(std::memory_order_relaxed);
    stats.errors = s.errors.load(std::memory_order_relaxed);
    return stats;
}

}  // namespace vaccel::engine
