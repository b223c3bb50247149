// reaper.cpp - tearing down the session of a client that has gone.
//
// Decides how a dead client's session ends without any thread waiting on
// its running work (ADR 0006):
//   1. reap(): the reactor moves the session into `reaping_` with a waker;
//   2. a look on the reaper of the session's first device
//      (Session::quiesce) cancels its work that has not started and
//      subscribes the waker to the events still running;
//   3. back on the reactor: nothing pending means the session is handed to
//      its reaper once more to be destroyed (its destructor then releases
//      everything and waits for nothing); otherwise it waits for the waker,
//      whose post starts a new look.
// A hung submission of one session therefore holds only that session; the
// reapers keep serving other teardowns, and the chores thread (admin
// commands) is never involved.
#include "dispatcher.hpp"

namespace vaccel::daemon {

void Dispatcher::reap(std::uint64_t id, std::shared_ptr<engine::Session> session)
{
    Reaping r;
    r.device = session->first_device().value_or(0);
    r.session = std::move(session);
    r.waker = std::make_shared<ReactorWaker>(reactor_, [this, id] { on_reap_woken(id); });
    reaping_.emplace(id, std::move(r));
    reap_look(id);
}

void Dispatcher::reap_look(std::uint64_t id)
{
    Reaping& r = reaping_.at(id);
    r.looking = true;
    r.woken = false;
    // Hand-off reactor -> reaper: the job holds the session for its look
    // and gives its reference up before posting back.
    reapers_[r.device]->push([this, id, session = r.session, waker = r.waker]() mutable {
        const bool quiet = session->quiesce(waker);
        session.reset();
        reactor_.post([this, id, quiet] { on_reap_looked(id, quiet); });
    });
}

void Dispatcher::on_reap_looked(std::uint64_t id, bool quiet)
{
    auto it = reaping_.find(id);
    if (it == reaping_.end())
        return;
    Reaping& r = it->second;
    r.looking = false;
    if (quiet) {
        r.waker->active.store(false, std::memory_order_release);
        // The last reference: the destructor runs on the reaper and, with
        // nothing pending, only releases.
        reapers_[r.device]->push([session = std::move(r.session)]() mutable { session.reset(); });
        reaping_.erase(it);
        return;
    }
    if (r.woken)
        reap_look(id);
}

void Dispatcher::on_reap_woken(std::uint64_t id)
{
    auto it = reaping_.find(id);
    if (it == reaping_.end())
        return;
    Reaping& r = it->second;
    // Cleared before looking: a completion from now on posts again.
    r.waker->posted.store(false, std::memory_order_release);
    if (r.looking)
        r.woken = true;
    else
        reap_look(id);
}

}  // namespace vaccel::daemon
