// work_calls.cpp - the C calls for submissions and events.
//
// Owns nothing. Decides: the binding array, the wait handles and a launch's
// bindings and arguments travel as payload (the struct's pointer fields
// stay zero), so the same bytes would go over a socket unchanged. A submit
// or launch whose acceptance was indeterminate still hands out its event.
#include "client.hpp"

#include <cstring>
#include <string>
#include <vector>

using namespace vaccel;
using lib::invoke;

namespace {

// The binding array as the payload it travels as.
std::span<const std::byte> binding_bytes(const struct vaccel_binding* bindings, uint32_t count)
{
    return {reinterpret_cast<const std::byte*>(bindings), sizeof(vaccel_binding) * count};
}

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
    const int rc = invoke(client, VACCEL_OP_SUBMIT, args, binding_bytes(bindings, binding_count));
    // An indeterminate acceptance returns its error together with the event.
    if (rc == 0 || args.event != 0)
        *event = args.event;
    return rc;
}

int vaccel_run(vaccel_client* client, uint64_t queue, uint64_t program,
               const struct vaccel_binding* bindings, uint32_t binding_count,
               uint64_t deadline_ns, struct vaccel_status* failure)
{
    if (failure != nullptr)
        *failure = vaccel_status{};
    if (bindings == nullptr && binding_count != 0)
        return null_argument("vaccel_run", "bindings");
    struct vaccel_run args{};
    args.queue = queue;
    args.program = program;
    args.binding_count = binding_count;
    args.deadline_ns = deadline_ns;
    const int rc = invoke(client, VACCEL_OP_RUN, args, binding_bytes(bindings, binding_count));
    if (rc != 0 || args.state == VACCEL_EVENT_COMPLETE)
        return rc;
    // Accepted, then failed or cancelled: the work's failure is the answer,
    // and what vaccel_last_status() shows.
    if (failure != nullptr)
        *failure = args.failure;
    lib::record_status(args.failure);
    if (args.failure.error == VACCEL_OK)
        return lib::record_local(Errc::external, "vaccel_run: the work ended in state " +
                                                     std::to_string(args.state) +
                                                     " without a failure; this is a daemon bug");
    return error_errno(static_cast<Errc>(args.failure.error));
}

int vaccel_submit_after(vaccel_client* client, uint64_t queue, uint64_t program,
                        const struct vaccel_binding* bindings, uint32_t binding_count,
                        uint64_t gate, uint64_t value, uint64_t* event)
{
    if (event == nullptr)
        return null_argument("vaccel_submit_after", "event");
    if (bindings == nullptr && binding_count != 0)
        return null_argument("vaccel_submit_after", "bindings");
    struct vaccel_submit_after args{};
    args.queue = queue;
    args.program = program;
    args.binding_count = binding_count;
    args.gate = gate;
    args.value = value;
    const int rc =
        invoke(client, VACCEL_OP_SUBMIT_AFTER, args, binding_bytes(bindings, binding_count));
    // An indeterminate acceptance returns its error together with the event.
    if (rc == 0 || args.event != 0)
        *event = args.event;
    return rc;
}

int vaccel_launch(vaccel_client* client, uint64_t queue, uint64_t program, const char* entry,
                  const struct vaccel_launch_dims* dims, const void* argv, uint32_t argv_bytes,
                  const struct vaccel_binding* bindings, uint32_t binding_count,
                  uint64_t deadline_ns, uint64_t* event)
{
    if (event == nullptr)
        return null_argument("vaccel_launch", "event");
    if (entry == nullptr)
        return null_argument("vaccel_launch", "entry");
    if (dims == nullptr)
        return null_argument("vaccel_launch", "dims");
    if (argv == nullptr && argv_bytes != 0)
        return null_argument("vaccel_launch", "argv");
    if (bindings == nullptr && binding_count != 0)
        return null_argument("vaccel_launch", "bindings");
    struct vaccel_launch args{};
    const std::size_t entry_length = std::strlen(entry);
    if (entry_length >= sizeof args.entry)
        return lib::record_local(Errc::invalid_argument,
                                 "vaccel_launch: the entry name is " +
                                     std::to_string(entry_length) + " bytes; at most " +
                                     std::to_string(sizeof args.entry - 1) + " fit");
    // Bounded here so that the payload below is never built for a count
    // the contract refuses anyway (the daemon and module refuse it too).
    if (binding_count > VACCEL_MAX_BINDINGS || argv_bytes > VACCEL_MAX_KERNEL_ARGS_BYTES) {
        args.binding_count = binding_count;
        args.argv_bytes = argv_bytes;
        return invoke(client, VACCEL_OP_LAUNCH, args);
    }
    args.queue = queue;
    args.program = program;
    args.binding_count = binding_count;
    args.argv_bytes = argv_bytes;
    args.deadline_ns = deadline_ns;
    args.dims = *dims;
    std::memcpy(args.entry, entry, entry_length);
    // One payload: the bindings, then the argument bytes (uapi "Kernel
    // launch"), so every transport carries it as one block.
    std::vector<std::byte> payload(sizeof(vaccel_binding) * binding_count + argv_bytes);
    if (binding_count != 0)
        std::memcpy(payload.data(), bindings, sizeof(vaccel_binding) * binding_count);
    if (argv_bytes != 0)
        std::memcpy(payload.data() + sizeof(vaccel_binding) * binding_count, argv, argv_bytes);
    const int rc = invoke(client, VACCEL_OP_LAUNCH, args, payload);
    if (rc == 0 || args.event != 0)
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
