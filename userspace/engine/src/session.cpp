// session.cpp - the session's entry point: checking, dispatch, lifetime.
//
// Owns: the order every request goes through (struct rules, payload size,
// then the op's handler) and the session's construction and teardown.
// Decides: which ops run under the session lock (all but EVENT_WAIT, RUN and the
// device queries, see ops.hpp).
#include "vaccel/engine/session.hpp"

#include <utility>

#include "args.hpp"
#include "ops.hpp"
#include "session_state.hpp"
#include "vaccel/common/recycling.hpp"
#include "vaccel/common/requests.hpp"

namespace vaccel::engine {

namespace {

const std::shared_ptr<const LimitPolicy>& default_policy()
{
    static const std::shared_ptr<const LimitPolicy> policy = std::make_shared<LimitPolicy>();
    return policy;
}

// Runs `handler` on an aligned copy of the struct and writes it back.
template <class T, class F>
Status run(std::span<std::byte> args, F&& handler)
{
    T value = load_struct<T>(args);
    Status status = handler(value);
    store_struct(args, value);
    return status;
}

// Runs `handler` under the session lock.
template <class T, class F>
Status locked(SessionState& state, std::span<std::byte> args, F&& handler)
{
    std::lock_guard lock(state.mutex);
    return run<T>(args, std::forward<F>(handler));
}

}  // namespace

SessionState::SessionState(std::shared_ptr<DeviceManager> manager, SessionIdentity who,
                           std::shared_ptr<const LimitPolicy> limit_policy, TenantSeat seat,
                           std::uint32_t capacity)
    : devices(std::move(manager)),
      identity(who),
      policy(limit_policy ? std::move(limit_policy) : default_policy()),
      // A seat from a registry of another device count cannot be used here.
      tenant(seat && seat->device_count() == devices->count()
                 ? std::move(seat)
                 : private_seat(identity, devices->count())),
      objects(capacity)
{
    for (std::uint32_t i = 0; i < devices->count(); ++i)
        session_contexts.push_back(std::make_unique<Accounting>(
            effective_limits(*devices->device(i)), &tenant->on(i)));
}

vaccel_device_limits SessionState::effective_limits(const Device& device) const
{
    return intersect(device.info().limits,
                     policy->limits(identity, device.index(), device.info()));
}

Status SessionState::reserve_handle() const
{
    // insert() succeeds exactly when a slot is free or never used: the
    // slots not live and not retired.
    if (objects.size() + objects.retired() >= objects.capacity())
        return fail(Error::limit_hit(VACCEL_LIMIT_HANDLES, objects.capacity(), objects.size()));
    return {};
}

Session::Session(std::shared_ptr<DeviceManager> devices, SessionOptions options)
    : state_(std::make_unique<SessionState>(std::move(devices), options.identity,
                                            std::move(options.policy), std::move(options.tenant),
                                            options.handle_capacity))
{
    // A backend's worker may still hold a finished event's watch, or a wait
    // its waiter, while the next request makes new ones.
    reserve_shared<EventWatch>(4);
    reserve_shared<SleepingWaiter>(4);
}

Session::~Session()
{
    release_all(*state_);
}

std::uint32_t Session::object_count() const
{
    std::lock_guard lock(state_->mutex);
    return state_->objects.size();
}

namespace ops {

Status check_wire(std::uint32_t opcode, std::span<const std::byte> args, std::size_t payload_bytes)
{
    if (auto checked = check_request_wire(opcode, args); !checked)
        return checked;
    auto payload_size = request_payload_size(opcode, args);
    if (!payload_size)
        return fail(std::move(payload_size.error()));
    if (payload_bytes != *payload_size)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, payload_bytes, *payload_size);
    return {};
}

}  // namespace ops

Status Session::call(std::uint32_t opcode, std::span<std::byte> args,
                     std::span<const std::byte> in_payload, std::span<std::byte> out_payload)
{
    Status status = dispatch(opcode, args, in_payload, out_payload);
    if (!status)
        state_->errors.fetch_add(1, std::memory_order_relaxed);
    return status;
}

Status Session::dispatch(std::uint32_t opcode, std::span<std::byte> args,
                         std::span<const std::byte> in_payload, std::span<std::byte> out_payload)
{
    if (auto checked = ops::check_wire(opcode, args, in_payload.size()); !checked)
        return checked;
    if (opcode != VACCEL_OP_BUFFER_READ && !out_payload.empty())
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, out_payload.size(), 0);

    SessionState& s = *state_;
    switch (opcode) {
    case VACCEL_OP_GET_VERSION:
        return run<vaccel_get_version>(args, [&](auto& a) { return ops::get_version(s, a); });
    case VACCEL_OP_DEVICE_COUNT:
        return run<vaccel_device_count>(args, [&](auto& a) { return ops::device_count(s, a); });
    case VACCEL_OP_DEVICE_QUERY:
        return run<vaccel_device_query>(args, [&](auto& a) { return ops::device_query(s, a); });
    case VACCEL_OP_DEVICE_TOSA:
        return run<vaccel_device_tosa>(args, [&](auto& a) { return ops::device_tosa(s, a); });
    case VACCEL_OP_CONTEXT_CREATE:
        return locked<vaccel_context_create>(s, args,
                                             [&](auto& a) { return ops::context_create(s, a); });
    case VACCEL_OP_CONTEXT_DESTROY:
        return locked<vaccel_handle_release>(s, args,
                                             [&](auto& a) { return ops::context_destroy(s, a); });
    case VACCEL_OP_CONTEXT_LIMITS:
        return locked<vaccel_context_limits>(s, args,
                                             [&](auto& a) { return ops::context_limits(s, a); });
    case VACCEL_OP_BUFFER_ALLOC:
        return locked<vaccel_buffer_alloc>(s, args,
                                           [&](auto& a) { return ops::buffer_alloc(s, a); });
    case VACCEL_OP_BUFFER_FREE:
        return locked<vaccel_handle_release>(s, args,
                                             [&](auto& a) { return ops::buffer_free(s, a); });
    case VACCEL_OP_BUFFER_WRITE:
        return locked<vaccel_buffer_transfer>(
            s, args, [&](auto& a) { return ops::buffer_write(s, a, in_payload); });
    case VACCEL_OP_BUFFER_READ:
        return locked<vaccel_buffer_transfer>(s, args, [&](auto& a) -> Status {
            if (out_payload.size() != a.length)
                return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, out_payload.size(), a.length);
            return ops::buffer_read(s, a, out_payload);
        });
    case VACCEL_OP_PROGRAM_LOAD:
        return locked<vaccel_program_load>(
            s, args, [&](auto& a) { return ops::program_load(s, a, in_payload); });
    case VACCEL_OP_PROGRAM_UNLOAD:
        return locked<vaccel_handle_release>(s, args,
                                             [&](auto& a) { return ops::program_unload(s, a); });
    case VACCEL_OP_PROGRAM_SLOT:
        return locked<vaccel_program_slot>(s, args,
                                           [&](auto& a) { return ops::program_slot(s, a); });
    case VACCEL_OP_QUEUE_CREATE:
        return locked<vaccel_queue_create>(s, args,
                                           [&](auto& a) { return ops::queue_create(s, a); });
    case VACCEL_OP_QUEUE_DESTROY:
        return locked<vaccel_handle_release>(s, args,
                                             [&](auto& a) { return ops::queue_destroy(s, a); });
    case VACCEL_OP_SUBMIT:
        return locked<vaccel_submit>(s, args,
                                     [&](auto& a) { return ops::submit(s, a, in_payload); });
    case VACCEL_OP_EVENT_POLL:
        return locked<vaccel_event_poll>(s, args, [&](auto& a) { return ops::event_poll(s, a); });
    case VACCEL_OP_EVENT_WAIT:
        return run<vaccel_event_wait>(args,
                                      [&](auto& a) { return ops::event_wait(s, a, in_payload); });
    case VACCEL_OP_EVENT_DESTROY:
        return locked<vaccel_handle_release>(s, args,
                                             [&](auto& a) { return ops::event_destroy(s, a); });
    case VACCEL_OP_GATE_CREATE:
        return locked<vaccel_gate_create>(s, args, [&](auto& a) { return ops::gate_create(s, a); });
    case VACCEL_OP_GATE_RAISE:
        return locked<vaccel_gate_value>(s, args, [&](auto& a) { return ops::gate_raise(s, a); });
    case VACCEL_OP_GATE_VALUE:
        return locked<vaccel_gate_value>(s, args, [&](auto& a) { return ops::gate_value(s, a); });
    case VACCEL_OP_GATE_DESTROY:
        return locked<vaccel_handle_release>(s, args,
                                             [&](auto& a) { return ops::gate_destroy(s, a); });
    case VACCEL_OP_SUBMIT_AFTER:
        return locked<vaccel_submit_after>(
            s, args, [&](auto& a) { return ops::submit_after(s, a, in_payload); });
    case VACCEL_OP_LAUNCH:
        return locked<vaccel_launch>(s, args,
                                     [&](auto& a) { return ops::launch(s, a, in_payload); });
    case VACCEL_OP_RUN:
        return run<vaccel_run>(args, [&](auto& a) { return ops::run(s, a, in_payload); });
    case VACCEL_OP_BUFFER_MAP:
        return locked<vaccel_buffer_map>(s, args, [&](auto& a) { return ops::buffer_map(s, a); });
    default:
        // check_request_wire() refuses unknown opcodes; this is unreachable
        // unless the contract grows an op the engine does not serve yet.
        return fail(Errc::unsupported, VACCEL_D_UNKNOWN_OPCODE, opcode);
    }
}

}  // namespace vaccel::engine
