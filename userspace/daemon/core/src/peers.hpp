// peers.hpp - what the dispatcher keeps per client session (a peer) and per
// parked wait, and the interface a transport gives it (private to the
// daemon).
//
// A peer is one engine Session and the transport that reached it: a socket
// connection (connection.hpp), a session the vaccel module opened
// (server_node.hpp) or a TestTransport's peer. Everything between intake
// and delivery - dispatch to a worker, parked waits and RUNs, jobs, the end
// of a session - is the Dispatcher's, one implementation for all
// (dispatcher.hpp); a transport only decides how requests arrive and how a
// reply is delivered (PeerTransport).
//
// Ownership: every field is the reactor thread's. Jobs on other threads
// never point into a Peer: they carry its id and a shared_ptr to its
// Session, and come back through Reactor::post(). A Peer is removed only
// when its transport has no operation pointing into it (PeerTransport::
// busy) and no job of it is out (jobs == 0).
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vaccel/daemon/exchange.hpp"
#include "vaccel/daemon/reactor.hpp"
#include "vaccel/engine/notify_fd.hpp"
#include "vaccel/engine/session.hpp"

namespace vaccel::daemon {

// Wakes one piece of reactor work when an event it named completes: a
// parked wait (subscribed by each look, Session::check_wait) or a session
// being torn down (Session::quiesce). It posts one `recheck` to the reactor.
// Any backend thread; never blocks.
// Ownership: its owner (the wait, the reaping) holds it; event watches hold
// it until their event completes, so it may outlive the owner: `active`
// (cleared when the owner ends) makes a late wake a no-op, and `recheck`
// names the owner by ids, never by pointer.
class ReactorWaker final : public engine::Waiter {
public:
    ReactorWaker(Reactor& reactor, std::function<void()> recheck)
        : reactor_(reactor), recheck_(std::move(recheck))
    {
    }
    void wake() noexcept override
    {
        if (active.load(std::memory_order_acquire) && !posted.exchange(true))
            reactor_.post(recheck_);
    }
    std::atomic<bool> active{true};
    // Set from a wake until the reactor took it (on_wait_woken clears it).
    std::atomic<bool> posted{false};

private:
    Reactor& reactor_;  // Ownership: outlives every wait (Server owns both)
    std::function<void()> recheck_;
};

// An EVENT_WAIT the daemon holds until its events are done or it times out.
// States: checking (a look is queued or running on a device worker: counted
// in Peer::jobs) or parked (waiting for its waker or the timer).
struct ParkedWait {
    Request request;
    // RUN (runs.cpp): parked until its work ends; `ticket` names the work
    // once accepted (0 before). Its replies come from run steps, never
    // from check_wait.
    bool run = false;
    std::uint64_t ticket = 0;
    std::vector<std::uint64_t> handles;
    std::uint32_t flags = 0;
    std::uint64_t timeout_ns = 0;  // absolute CLOCK_MONOTONIC; 0 = poll once
    OpId timer = 0;                // armed timer, 0 = none
    bool checking = false;
    bool expired = false;          // the timer fired: the next look is the last
    bool woken = false;            // woken while checking: look again
    std::shared_ptr<ReactorWaker> waker;
};

// A session whose client has gone, being torn down without blocking any
// thread on its running work (ADR 0006): looks run on the reaper of its
// device; between looks it waits for its waker. Owned by the reactor.
struct Reaping {
    std::shared_ptr<engine::Session> session;
    std::uint32_t device = 0;
    bool looking = false;  // a look is queued or running on the reaper
    bool woken = false;    // woken while looking: look again
    std::shared_ptr<ReactorWaker> waker;
};

struct Peer;

// How replies reach a peer's client, and what its transport must know of
// the peer's end. Reactor thread only.
class PeerTransport {
public:
    virtual ~PeerTransport() = default;
    virtual const char* name() const = 0;
    // Delivers `reply` (c is open, or closing with its replies flushed);
    // `reply` is left empty, its buffer kept when it went out at once.
    virtual void deliver(Peer& c, Reply& reply) = 0;
    // Something of c ended: it may take requests again (backpressure).
    virtual void resume(Peer&) {}
    // c begins to close: take no more requests from it.
    virtual void closing(Peer&, std::string_view /*reason*/) {}
    // An operation of the transport still points into c.
    virtual bool busy(const Peer&) const { return false; }
    // c is removed now.
    virtual void forget(Peer&) {}
    // Replies of a closing peer are delivered in any case (the module
    // waits for every answer).
    virtual bool always_flush() const { return false; }
    // A request of c that waits long (EVENT_WAIT, RUN) was not answered at
    // its dispatch: it is parked, or its first look is out on a worker. Its
    // one reply still comes later through deliver(); meanwhile the
    // transport may let go of what the request holds (a server slot).
    // `request` is the parked wait's own, payload already read.
    virtual void waiting(Peer&, const Request&) {}
};

struct Peer {
    std::uint64_t id = 0;
    PeerTransport* transport = nullptr;  // Ownership: the Server's, outlives every peer
    // Null only for a refused peer (Dispatcher::add_refused_peer).
    std::shared_ptr<engine::Session> session;
    std::uint32_t weight = 100;  // lane weight on the device workers
    // Its tenant's lane on the device workers (TenantLanes); `tenant_key`
    // empty for a refused peer, which has none.
    std::uint64_t lane = 0;
    std::string tenant_key;
    // Set for a refused peer: the answer to its first request, after which
    // it closes.
    std::optional<Error> refused;

    // The session's pollable completion file (notify_fd.hpp): made at a
    // kernel session's open, or at a socket client's SESSION_NOTIFY; its
    // listener is the session's. Cleared on the reactor when the client's
    // EVENT_POLL or EVENT_WAIT arrives.
    std::shared_ptr<engine::NotifyFd> notify;

    std::uint32_t jobs = 0;  // requests out on a worker or the chores thread
    std::unordered_map<std::uint64_t, ParkedWait> waits;
    std::uint64_t next_wait = 1;

    bool closing = false;
    bool flush = false;  // closing: still deliver the replies of work in flight

    // Socket transport only.
    UniqueFd fd;
    // Receiving: a multishot receive into the reactor's buffers, or (kernel
    // without it) single-shot ones into rx_buffer. Invariant: rx and
    // rx_buffer are untouched while a single-shot receive is in flight.
    Message rx;
    std::vector<std::byte> rx_buffer;  // single-shot only, sized at first use
    OpId recv_op = 0;
    bool receiving = false;
    bool multishot = false;  // recv_op is a multishot receive
    bool pausing = false;    // the multishot receive is being cancelled (backpressure)
    // The request being taken and its reply: reused, so a short call
    // allocates nothing once they have grown. Slow paths move them away.
    Request request;
    Reply reply;
    // Sending, one message at a time. Invariant: tx and in_transit are
    // untouched while sending.
    std::deque<Reply> outbox;
    Message tx;
    Reply in_transit;
    bool sending = false;

    // Kernel transport only: the module's id of this session (header.session).
    std::uint64_t module_session = 0;

    std::size_t outstanding() const { return jobs + waits.size() + outbox.size(); }
};

}  // namespace vaccel::daemon
