// peers.hpp - what the reactor keeps per client session (a peer), per parked
// wait, and for the attached /dev/vaccel-server (private to the server).
//
// A peer is one engine Session and the transport that reached it: a socket
// connection, or a session the vaccel module opened (kernel). Everything
// between intake and delivery - dispatch to a worker, parked waits, jobs,
// the end of a session - is one implementation for both (peers.cpp,
// waits.cpp); a transport only decides how requests arrive and how a reply
// is delivered (connection.cpp: send on the socket; server_node.cpp: commit
// on the module's slot).
//
// Ownership: every field is the reactor thread's. Jobs on other threads
// never point into a Peer: they carry its id and a shared_ptr to its
// Session, and come back through Reactor::post(). A Peer is removed only
// when no operation of the reactor still points into it (no receive, no
// send in flight) and no job of it is out (jobs == 0).
#pragma once

#include <array>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "vaccel/daemon/server.hpp"
#include "vaccel/daemon/test_transport.hpp"
#include "vaccel/engine/notify_fd.hpp"
#include "vaccel_server.h"

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
struct Server::ParkedWait {
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

inline const char* transport_name(Transport t)
{
    switch (t) {
    case Transport::kernel: return "kernel";
    case Transport::direct: return "direct";
    default: return "socket";
    }
}

// A session whose client has gone, being torn down without blocking any
// thread on its running work (ADR 0006): looks run on the reaper of its
// device; between looks it waits for its waker. Owned by the reactor.
struct Server::Reaping {
    std::shared_ptr<engine::Session> session;
    std::uint32_t device = 0;
    bool looking = false;  // a look is queued or running on the reaper
    bool woken = false;    // woken while looking: look again
    std::shared_ptr<ReactorWaker> waker;
};

struct Server::Peer {
    std::uint64_t id = 0;
    Transport transport = Transport::socket;
    std::shared_ptr<engine::Session> session;
    std::uint32_t weight = 100;  // lane weight on the device workers

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

    // Direct transport only: where its replies and its end are reported;
    // shared with the TestTransport, which outlives the peer.
    std::shared_ptr<TestTransport::Sink> sink;

    std::size_t outstanding() const { return jobs + waits.size() + outbox.size(); }
};

// The attached /dev/vaccel-server and its slots (server_node.cpp).
struct Server::ServerNode {
    // The 4096-byte command buffer of each slot.
    struct alignas(64) SlotBuffer {
        std::array<std::byte, VACCEL_SRV_BUFFER_BYTES> bytes;
    };
    // A slot's state and who owns its buffer meanwhile:
    //  - parked: a FETCH or COMMIT_AND_FETCH is in flight: the module owns
    //    the buffer (it reads the answer at the commit's issue and writes
    //    the next request at delivery);
    //  - serving: a request was delivered: the daemon owns the buffer until
    //    it commits the one answer;
    //  - retired: the module refused to fetch on it (or detached us); never
    //    used again.
    enum class SlotState : std::uint8_t { parked, serving, retired };
    struct Slot {
        SlotState state = SlotState::retired;
        bool committing = false;  // the command in flight is a COMMIT_AND_FETCH
        // A BUFFER_MAP answer's file, whose number the commit names: kept
        // open until that command completes (the module resolves the number
        // when the ring issues the commit, which may be after commit()).
        UniqueFd passing;
    };

    std::string path;
    UniqueFd fd;
    // Ownership: never freed (allocated at attach, leaked on purpose). A
    // command parked in the module cannot be cancelled on 6.1: it stays
    // parked until this process's serving thread exits, and a delivery may
    // write a request into its buffer up to that moment - after the
    // reactor and the Server are gone.
    SlotBuffer* buffers = nullptr;
    std::array<Slot, VACCEL_SRV_MAX_SLOTS> slots{};
    bool detached = false;  // the module let go of us (-ENODEV): nothing more to commit
    std::uint32_t retired = 0;  // slots whose FETCH the node refused
    // Module session id -> peer id, for sessions not yet finished.
    std::unordered_map<std::uint64_t, std::uint64_t> sessions;
};

}  // namespace vaccel::daemon
