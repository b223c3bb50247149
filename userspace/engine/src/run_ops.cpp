// run_ops.cpp - RUN: a SUBMIT and the wait for its end in one request.
//
// Owns nothing beyond the handlers. Decides:
//  - the submission is checked and charged exactly as SUBMIT's (one event
//    against max_events while it runs), and its event becomes a ticket: an
//    EventRecord marked run_ticket, which the client cannot name
//    (client_event() refuses it), so no handle ever reaches the client;
//  - an indeterminate acceptance (the device took the work but could not
//    confirm it) is waited on like any accepted work: the ticket reports the
//    outcome, and RUN answers with that outcome rather than the error;
//  - run_finish() writes the outcome and destroys the ticket; a session torn
//    down with a ticket still pending releases it like any event.
// The daemon drives run_begin / run_ended / run_finish without blocking
// (Session::begin_run and friends); run() is the blocking whole.
#include <optional>

#include "ops.hpp"
#include "vaccel/common/recycling.hpp"

namespace vaccel::engine::ops {

Status run_begin(SessionState& state, vaccel_run& args, std::span<const std::byte> bindings,
                 std::uint64_t& ticket)
{
    ticket = 0;
    vaccel_submit submit{};
    submit.queue = args.queue;
    submit.program = args.program;
    submit.binding_count = args.binding_count;
    submit.deadline_ns = args.deadline_ns;
    Status submitted = ops::submit(state, submit, bindings);
    if (submit.event == 0)
        return submitted;  // refused: nothing ran
    auto record = state.lookup<EventRecord>(submit.event);
    (*record)->run_ticket = true;  // cannot fail: just inserted under the same lock
    ticket = submit.event;
    return {};
}

Result<bool> run_ended(SessionState& state, std::uint64_t ticket,
                       const std::shared_ptr<Waiter>& waiter)
{
    std::lock_guard lock(state.mutex);
    auto record = state.lookup<EventRecord>(ticket);
    if (!record)
        return fail(std::move(record.error()));
    EventWatch& watch = *(*record)->watch;
    if (watch.done())
        return true;
    if (waiter && !watch.subscribe(waiter))
        return true;  // ended since the look
    return false;
}

Status run_finish(SessionState& state, std::uint64_t ticket, vaccel_run& args)
{
    auto record = state.lookup<EventRecord>(ticket);
    if (!record)
        return fail(std::move(record.error()));
    args.state = static_cast<std::uint32_t>(event_status(**record, args.failure).state);
    return destroy_event_record(state, ticket, **record);
}

Status run(SessionState& state, vaccel_run& args, std::span<const std::byte> bindings)
{
    std::uint64_t ticket = 0;
    {
        std::lock_guard lock(state.mutex);
        if (auto begun = run_begin(state, args, bindings, ticket); !begun)
            return begun;
    }
    // Ownership: the watch keeps the waiter until the event completes.
    auto waiter = std::allocate_shared<SleepingWaiter>(Recycling<SleepingWaiter>{});
    for (;;) {
        auto ended = run_ended(state, ticket, waiter);
        if (!ended)
            return fail(std::move(ended.error()));
        if (*ended)
            break;
        waiter->sleep(std::nullopt);
    }
    std::lock_guard lock(state.mutex);
    return run_finish(state, ticket, args);
}

}  // namespace vaccel::engine::ops
