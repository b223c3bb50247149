// waits.cpp - EVENT_WAIT parked in the daemon.
//
// Decides the life of a wait without ever blocking a thread on it:
//   1. a look (Session::check_wait) runs on the worker of the first event's
//      device, or on the reactor when that worker is idle and the peer has
//      nothing in flight (ADR 0007); the same look subscribes the wait's
//      ReactorWaker to every event still pending (peers.hpp);
//   2. back on the reactor: a refusal, or all/any done, is the reply; so is
//      a timeout that has passed (DeadlineExpired / VACCEL_D_WAIT_TIMEOUT,
//      arg0 = events not done, done_count/first_done filled in);
//   3. otherwise the wait parks: a timer is armed for its absolute timeout
//      (none for "forever"), and if its waker fired during the look, a new
//      look starts at once;
//   4. the completion of an event the wait names fires its waker, which
//      posts one look for that wait only; the timer starts a last look.
// A timeout of 0 is one look; a timeout above INT64_MAX never expires.
#include <cstdint>
#include <cstring>

#include "dispatcher.hpp"

namespace vaccel::daemon {

namespace {
constexpr std::uint64_t forever_after = static_cast<std::uint64_t>(INT64_MAX);
}  // namespace

std::uint64_t Dispatcher::start_wait(Peer& c, Request request)
{
    ParkedWait wait;
    vaccel_event_wait args{};
    std::memcpy(&args, request.args.data(), sizeof args);
    wait.flags = args.flags;
    wait.timeout_ns = args.timeout_ns;
    wait.handles.resize(request.payload.size() / sizeof(std::uint64_t));
    std::memcpy(wait.handles.data(), request.payload.data(), wait.handles.size() * sizeof(std::uint64_t));
    wait.request = std::move(request);
    const std::uint64_t wait_id = park(c, std::move(wait));
    check_wait(c, wait_id);
    return wait_id;
}

ParkedWait* Dispatcher::look_returned(std::uint64_t id, std::uint64_t wait_id, Peer*& peer)
{
    peer = find(id);
    if (peer == nullptr)
        return nullptr;  // cannot happen: a peer with jobs out is kept
    --peer->jobs;
    auto it = peer->waits.find(wait_id);
    if (it == peer->waits.end()) {
        maybe_finish(*peer);
        return nullptr;
    }
    it->second.checking = false;
    return &it->second;
}

std::uint64_t Dispatcher::park(Peer& c, ParkedWait wait)
{
    const std::uint64_t wait_id = c.next_wait++;
    wait.waker = std::make_shared<ReactorWaker>(
        reactor_, [this, id = c.id, wait_id] { on_wait_woken(id, wait_id); });
    c.waits.emplace(wait_id, std::move(wait));
    return wait_id;
}

void Dispatcher::check_wait(Peer& c, std::uint64_t wait_id)
{
    ParkedWait& wait = c.waits.at(wait_id);
    wait.checking = true;
    wait.woken = false;
    const std::uint32_t device =
        c.session->route(VACCEL_OP_EVENT_WAIT, wait.request.args, wait.request.payload).value_or(0);
    const bool inline_look = worker_free_for(c, device);
    ++c.jobs;
    // A poll (timeout 0) never parks: nothing to subscribe.
    std::shared_ptr<engine::Waiter> waker;
    if (wait.timeout_ns != 0)
        waker = wait.waker;
    if (inline_look) {
        // The look is short (a check per handle): do it here when the worker
        // is idle (ADR 0007), and take its result at once.
        on_wait_checked(c.id, wait_id, c.session->check_wait(wait.handles, wait.flags, waker));
        return;
    }
    workers_[device]->push(c.lane, c.weight,
                           [this, id = c.id, wait_id, session = c.session, handles = wait.handles,
                            flags = wait.flags, waker = std::move(waker)]() mutable {
                               auto progress = session->check_wait(handles, flags, waker);
                               session.reset();  // never the last reference here
                               reactor_.post([this, id, wait_id, progress] {
                                   on_wait_checked(id, wait_id, progress);
                               });
                           });
}

void Dispatcher::on_wait_woken(std::uint64_t id, std::uint64_t wait_id)
{
    Peer* c = find(id);
    if (c == nullptr)
        return;
    auto it = c->waits.find(wait_id);
    if (it == c->waits.end())
        return;
    ParkedWait& wait = it->second;
    // Cleared before looking: a completion from now on posts again.
    wait.waker->posted.store(false, std::memory_order_release);
    if (wait.checking)
        wait.woken = true;  // on_wait_checked (or on_run_stepped) looks again
    else if (!c->closing && wait.run)
        step_run(*c, wait_id);
    else if (!c->closing)
        check_wait(*c, wait_id);
}

void Dispatcher::on_wait_checked(std::uint64_t id, std::uint64_t wait_id,
                             Result<engine::WaitProgress> progress)
{
    Peer* found = nullptr;
    ParkedWait* looked = look_returned(id, wait_id, found);
    if (looked == nullptr)
        return;
    Peer& c = *found;
    ParkedWait& wait = *looked;

    if (!progress) {
        answer_wait(c, wait_id, refusal(wait.request, progress.error()));
    } else if (progress->satisfied) {
        answer_wait(c, wait_id, wait_reply(wait.request, *progress, nullptr));
    } else if (c.closing) {
        answer_wait(c, wait_id, refusal(wait.request, Error::of(Errc::device_lost, VACCEL_D_PEER_GONE)));
    } else if (wait.expired || wait.timeout_ns == 0 ||
               (wait.timeout_ns <= forever_after && monotonic_now_ns() >= wait.timeout_ns)) {
        c.session->count_refusal();
        const Error timeout = Error::of(Errc::deadline_expired, VACCEL_D_WAIT_TIMEOUT,
                                        wait.handles.size() - progress->done_count);
        answer_wait(c, wait_id, wait_reply(wait.request, *progress, &timeout));
    } else {
        // Park.
        if (wait.timer == 0 && wait.timeout_ns <= forever_after) {
            auto timer = reactor_.timeout_at(wait.timeout_ns, [this, id, wait_id](int res) {
                on_wait_timer(id, wait_id, res);
            });
            if (timer)
                wait.timer = *timer;
        }
        if (wait.woken) {
            check_wait(c, wait_id);
            // The look may have been answered at once, and the peer ended.
            found = find(id);
            if (found == nullptr)
                return;
        }
    }
    found->transport->resume(*found);
    maybe_finish(*found);
}

void Dispatcher::on_wait_timer(std::uint64_t id, std::uint64_t wait_id, int res)
{
    if (res == -ECANCELED)
        return;
    Peer* c = find(id);
    if (c == nullptr)
        return;
    auto it = c->waits.find(wait_id);
    if (it == c->waits.end())
        return;
    it->second.timer = 0;
    it->second.expired = true;
    if (!it->second.checking)
        check_wait(*c, wait_id);
}

bool Dispatcher::end_wait(Peer& c, std::uint64_t seq, const Error* answer)
{
    auto it = c.waits.begin();
    while (it != c.waits.end() && (it->second.run || it->second.request.header.seq != seq))
        ++it;
    if (it == c.waits.end())
        return false;
    if (answer != nullptr) {
        answer_wait(c, it->first, refusal(it->second.request, *answer));
    } else {
        // A look still out comes back to no wait (look_returned) and ends there.
        it->second.waker->active.store(false, std::memory_order_release);
        if (it->second.timer != 0)
            reactor_.cancel(it->second.timer);
        c.waits.erase(it);
    }
    c.transport->resume(c);
    maybe_finish(c);
    return true;
}

void Dispatcher::answer_wait(Peer& c, std::uint64_t wait_id, Reply reply)
{
    auto it = c.waits.find(wait_id);
    it->second.waker->active.store(false, std::memory_order_release);
    if (it->second.timer != 0)
        reactor_.cancel(it->second.timer);
    c.waits.erase(it);
    queue_reply(c, std::move(reply));
}

}  // namespace vaccel::daemon
