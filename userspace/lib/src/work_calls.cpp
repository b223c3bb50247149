// work_calls.cpp - the C calls for submissions and events.
//
// Owns nothing. Decides: the binding array and the wait handles travel as
// payload (the struct's pointer fields stay zero), so the same bytes would
// go over a socket unchanged.
#include "client.hpp"

using namespace vaccel;
using lib::invoke;

namespace {

int null_argument(const char* call, const char* what)
{
    return lib::record_local(Errc::invalid_argument,
                             std::string(call) + ": " + what + " is NULL");
}

}  // namespace

extern "C" {

int vaccel_submit(vaccel_client* client, uint64_t queue, uint64_t program,
                  const struct vaccel_binding* bindings, uint32_t binding_count,
                  uint64_t deadline_ns, uint64_t* event)
{
    if (event == nullptr)
        return null_argument("vaccel_submit", "event");
    if (bindings == nullptr && binding_count != 0)
        return null_argument("vaccel_submit", "bindings");
    struct vaccel_submit args{};
    args.queue = queue;
    args.program = program;
    args.binding_count = binding_count;
    args.deadline_ns = deadline_ns;
    const std::span<const std::byte> payload(reinterpret_cast<const std::byte*>(bindings),
                                             sizeof(vaccel_binding) * binding_count);
    const int rc = invoke(client, VACCEL_OP_SUBMIT, args, payload);
    if (rc == 0)
        *event = args.event;
    return rc;
}

int vaccel_event_poll(vaccel_client* client, uint64_t event, uint32_t* state,
                      struct vaccel_status* failure)
{
    if (state == nullptr)
        return null_argument("vaccel_event_poll", "state");
    struct vaccel_event_poll args{};
    args.event = event;
    const int rc = invoke(client, VACCEL_OP_EVENT_POLL, args);
    if (rc != 0)
        return rc;
    *state = args.state;
    if (failure != nullptr)
        *failure = args.failure;
    return 0;
}

int vaccel_event_wait(vaccel_client* client, const uint64_t* events, uint32_t count,
                      uint32_t flags, uint64_t timeout_ns, uint32_t* first_done)
{
    if (events == nullptr && count != 0)
        return null_argument("vaccel_event_wait", "events");
    struct vaccel_event_wait args{};
    args.count = count;
    args.flags = flags;
    args.timeout_ns = timeout_ns;
    const std::span<const std::byte> payload(reinterpret_cast<const std::byte*>(events),
                                             sizeof(uint64_t) * count);
    const int rc = invoke(client, VACCEL_OP_EVENT_WAIT, args, payload);
    if (first_done != nullptr && args.done_count > 0)
        *first_done = args.first_done;
    return rc;
}

int vaccel_event_destroy(vaccel_client* client, uint64_t event)
{
    vaccel_handle_release args{};
    args.handle = event;
    return invoke(client, VACCEL_OP_EVENT_DESTROY, args);
}

}  // extern "C"
