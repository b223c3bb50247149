// runs.cpp - RUN parked in the daemon: submit, wait for the work's end,
// answer, with no thread blocked on the work.
//
// Decides the life of a RUN, as a ParkedWait marked `run`:
//   1. a step runs on the worker of the queue's device, or on the reactor
//      when that worker is idle and the peer has nothing in flight (ADR
//      0007): the first step submits (Session::begin_run; a refusal is the
//      answer), and every step looks whether the work ended
//      (Session::run_done), subscribing the wait's ReactorWaker if not;
//      once it ended the same step writes the outcome (Session::finish_run)
//      and makes the reply;
//   2. back on the reactor: a reply is sent; otherwise the RUN parks until
//      its waker fires (the work's completion), which starts the next step.
// A RUN has no timeout of its own: the submission's deadline is the
// device's to enforce. A peer that closes answers its parked RUNs with
// PEER_GONE (close_peer); their work finishes and the session's teardown
// releases the tickets.
#include <cstring>

#include "dispatcher.hpp"

namespace vaccel::daemon {

// What one step found; made on the worker, read on the reactor.
struct RunStep {
    std::uint64_t ticket = 0;
    std::optional<Reply> reply;  // set when the RUN is answered
};

namespace {

// One step of a RUN on `session` (any thread but the reactor's unless the
// device's worker is idle).
void run_step(engine::Session& session, const Request& request,
              const std::shared_ptr<engine::Waiter>& waker, RunStep& step)
{
    std::vector<std::byte> args = request.args;
    if (step.ticket == 0) {
        Status begun = session.begin_run(args, request.payload, step.ticket);
        if (!begun) {
            step.reply = refusal(request, begun.error());
            return;
        }
    }
    auto ended = session.run_done(step.ticket, waker);
    if (!ended) {
        step.reply = refusal(request, ended.error());
        return;
    }
    if (!*ended)
        return;
    Status finished = session.finish_run(step.ticket, args);
    step.reply = finished ? reply_with(request, args, {}) : refusal(request, finished.error());
}

}  // namespace

std::uint64_t Dispatcher::start_run(Peer& c, Request request)
{
    ParkedWait wait;
    wait.run = true;
    wait.request = std::move(request);
    const std::uint64_t wait_id = park(c, std::move(wait));
    step_run(c, wait_id);
    return wait_id;
}

void Dispatcher::step_run(Peer& c, std::uint64_t wait_id)
{
    ParkedWait& wait = c.waits.at(wait_id);
    wait.checking = true;
    wait.woken = false;
    const std::uint32_t device =
        c.session->route(VACCEL_OP_RUN, wait.request.args, wait.request.payload).value_or(0);
    auto step = std::make_shared<RunStep>();
    step->ticket = wait.ticket;
    // Looked at before the step counts as a job: the peer's own step must
    // not keep it off the reactor.
    const bool inline_step = worker_free_for(c, device);
    ++c.jobs;
    if (inline_step) {
        // Submitting inline bindings and looking at one event are short
        // (ADR 0007): taken at once, no post().
        run_step(*c.session, wait.request, wait.waker, *step);
        on_run_stepped(c.id, wait_id, step);
        return;
    }
    // Hand-off reactor -> worker: the job owns a copy of the request (the
    // wait keeps the original) and a reference to the session.
    workers_[device]->push(c.lane, c.weight,
                           [this, id = c.id, wait_id, session = c.session,
                            request = std::make_shared<Request>(Request{wait.request.header,
                                                                        wait.request.args,
                                                                        wait.request.payload,
                                                                        {},
                                                                        wait.request.server_slot,
                                                                        wait.request.payload_fd_refused}),
                            waker = wait.waker, step]() mutable {
                               run_step(*session, *request, waker, *step);
                               session.reset();  // never the last reference here
                               reactor_.post([this, id, wait_id, step] {
                                   on_run_stepped(id, wait_id, step);
                               });
                           });
}

void Dispatcher::on_run_stepped(std::uint64_t id, std::uint64_t wait_id, std::shared_ptr<RunStep> step)
{
    Peer* found = nullptr;
    ParkedWait* looked = look_returned(id, wait_id, found);
    if (looked == nullptr)
        return;
    Peer& c = *found;
    ParkedWait& wait = *looked;
    wait.ticket = step->ticket;
    if (step->reply) {
        answer_wait(c, wait_id, std::move(*step->reply));
    } else if (c.closing) {
        answer_wait(c, wait_id,
                    refusal(wait.request, Error::of(Errc::device_lost, VACCEL_D_PEER_GONE)));
    } else if (wait.woken) {
        step_run(c, wait_id);
        // The step may have been answered at once, and the peer ended.
        found = find(id);
        if (found == nullptr)
            return;
    }
    found->transport->resume(*found);
    maybe_finish(*found);
}

}  // namespace vaccel::daemon
