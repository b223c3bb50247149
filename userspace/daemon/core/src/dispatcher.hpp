// dispatcher.hpp - vacceld's one request path (ADR 0020): every peer's
// requests, whatever its transport, from dispatch to reply, and the end of
// the peer and of its session.
//
// Owns: the peers and the sessions being torn down, one WorkQueue per
// device (workers), one reaper per device, the chores thread and the admin
// service it serves. Borrows the reactor and the devices (the Server's).
// Decides where each request runs (dispatcher.cpp): ADMIN on the chores
// thread; EVENT_WAIT and RUN parked (waits.cpp, runs.cpp); device-less ops
// inline; short calls on the reactor when their worker is idle (ADR 0007);
// everything else on the device's worker in the peer's lane. Replies go
// out through the peer's PeerTransport. Promises:
//  - a well-formed request gets exactly one reply with its seq, in
//    whatever order the work finishes;
//  - EVENT_WAIT and RUN never block a thread: parked, looked at again
//    after a completion or at the wait's timeout;
//  - a peer that ends (EOF, error, a malformed message, SESSION_CLOSE,
//    stop) takes no more requests; its work in flight finishes (replies
//    still delivered when flushed, its parked waits answered PEER_GONE);
//    then its Session is reaped on its device's reaper (reaper.cpp).
// Threads: reactor thread only, except what its jobs do on the workers,
// reapers and chores thread, which come back by Reactor::post().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "peers.hpp"
#include "vaccel/daemon/admin.hpp"
#include "vaccel/daemon/policy_limits.hpp"
#include "vaccel/daemon/tenant_lanes.hpp"
#include "vaccel/daemon/work_queue.hpp"
#include "vaccel/engine/device_manager.hpp"

namespace vaccel::daemon {

struct RunStep;  // one step of a parked RUN (runs.cpp)

class Dispatcher {
public:
    struct Parts {
        Reactor* reactor = nullptr;
        std::shared_ptr<engine::DeviceManager> devices;
        std::shared_ptr<PolicyStore> policy;
        std::shared_ptr<const engine::LimitPolicy> limits;
        std::unique_ptr<AdminService> admin;
        // Which container a new peer belongs to (shared with admin).
        std::shared_ptr<ContainerRegistry> containers;
        // Every tenant with an open session (shared with admin).
        std::shared_ptr<engine::Tenants> tenants;
        bool short_calls_on_reactor = true;
    };
    explicit Dispatcher(Parts parts);
    // Joins the workers, reapers and chores thread; a session still being
    // torn down is destroyed here, waiting for its running work.
    ~Dispatcher();
    Dispatcher(const Dispatcher&) = delete;
    Dispatcher& operator=(const Dispatcher&) = delete;

    // A new peer with its own Session, taking nothing until its transport
    // feeds dispatch(). Refused (nothing made) when its tenant has all its
    // sessions open: ResourceLimit, VACCEL_LIMIT_SESSIONS, the tenant's
    // scope (engine/tenants.hpp).
    Result<Peer*> add_peer(PeerTransport& transport, const engine::SessionIdentity& who);
    // A socket peer whose session was refused: it holds no session, answers
    // its first request with `refusal` and closes. nullptr when
    // max_refused_peers are pending already (the caller closes the socket
    // unanswered), so refused connections cannot pile up.
    Peer* add_refused_peer(PeerTransport& transport, const engine::SessionIdentity& who,
                           Error refusal);
    static constexpr std::size_t max_refused_peers = 64;
    Peer* find(std::uint64_t id);
    // `request` may be moved from (work that outlives the call takes it).
    void dispatch(Peer& c, Request& request);
    void close_peer(Peer& c, std::string_view reason, bool flush);
    // Removes `c` when nothing of it is in flight. `c` is invalid afterwards.
    void maybe_finish(Peer& c);
    // Stop: closes every peer (replies of work in flight still go out);
    // `ended` runs once no peer is left (at once if none is).
    void close_all(std::function<void()> ended);
    // Posts `fn` to the reactor after every job queued so far on the chores
    // thread has run.
    void after_chores(std::function<void()> fn);
    bool stopping() const { return stopping_; }
    // Ends c's EVENT_WAIT of header.seq `seq` (its client withdrew it):
    // with `answer` it is answered with that refusal, without it ends with
    // no reply at all. False when c has no such wait (answered already).
    bool end_wait(Peer& c, std::uint64_t seq, const Error* answer);
    // Re-reads the config on the chores thread.
    void reload();
    // A session still being torn down (tests wait for the end of it).
    bool reaping(std::uint64_t id) const { return reaping_.contains(id); }

private:
    void run_on_device(Peer& c, std::uint32_t device, Request& request);
    // The device's worker is idle and the peer has nothing in flight: a
    // short call may run on the reactor (ADR 0007).
    bool worker_free_for(const Peer& c, std::uint32_t device) const;
    // ADMIN: refused at once where AdminAuthority::look() says so (no copy,
    // no lookup); a host peer that is not root is resolved on the chores
    // thread first (on_admin_resolved); an admin's request is served there
    // (serve_admin) with a copy of the session list.
    void run_admin(Peer& c, std::shared_ptr<Request> request);
    void on_admin_resolved(std::uint64_t id, bool admin, std::shared_ptr<Request> request);
    void serve_admin(Peer& c, std::shared_ptr<Request> request);
    void post_reply(std::uint64_t id, Reply reply);
    void on_job_done(std::uint64_t id, Reply reply);
    void deliver(Peer& c, Reply& reply);
    void queue_reply(Peer& c, Reply reply) { deliver(c, reply); }
    std::vector<SessionEntry> live_sessions() const;
    // SESSION_NOTIFY: the session's notify file, passed to the client.
    Reply notify_reply(Peer& c, const Request& request);

    // Parked waits (waits.cpp).
    // Keeps `wait` in the peer with a waker of its own; returns its id.
    std::uint64_t park(Peer& c, ParkedWait wait);
    // A look or RUN step came back to the reactor: ends its job and returns
    // the wait it was for (no longer checking), or nullptr when the peer
    // or the wait is gone. `peer` is the wait's peer.
    ParkedWait* look_returned(std::uint64_t id, std::uint64_t wait_id, Peer*& peer);
    // Start an EVENT_WAIT / a RUN; return its wait id (the wait may
    // already be answered and gone).
    std::uint64_t start_wait(Peer& c, Request request);
    void check_wait(Peer& c, std::uint64_t wait_id);
    void on_wait_checked(std::uint64_t id, std::uint64_t wait_id,
                         Result<engine::WaitProgress> progress);
    void on_wait_woken(std::uint64_t id, std::uint64_t wait_id);
    void on_wait_timer(std::uint64_t id, std::uint64_t wait_id, int res);
    void answer_wait(Peer& c, std::uint64_t wait_id, Reply reply);

    // RUN parked until its work ends (runs.cpp).
    std::uint64_t start_run(Peer& c, Request request);
    void step_run(Peer& c, std::uint64_t wait_id);
    void on_run_stepped(std::uint64_t id, std::uint64_t wait_id, std::shared_ptr<RunStep> step);

    // Teardown of a gone client's session (reaper.cpp).
    void reap(std::uint64_t id, std::shared_ptr<engine::Session> session);
    void reap_look(std::uint64_t id);
    void on_reap_looked(std::uint64_t id, bool quiet);
    void on_reap_woken(std::uint64_t id);

    Reactor& reactor_;
    std::shared_ptr<engine::DeviceManager> devices_;
    std::shared_ptr<PolicyStore> policy_;
    std::shared_ptr<const engine::LimitPolicy> limits_;
    bool short_calls_ = true;

    // Destruction order (bottom-up, see ~Dispatcher): peers, the queues
    // (joined: every job ran, every Session released), the admin service.
    std::unique_ptr<AdminService> admin_;  // used on the chores thread only
    std::shared_ptr<ContainerRegistry> containers_;
    std::shared_ptr<engine::Tenants> tenants_;  // never null
    std::size_t refused_peers_ = 0;  // peers of add_refused_peer() not yet gone
    std::unique_ptr<WorkQueue> chores_;
    std::vector<std::unique_ptr<WorkQueue>> workers_;  // index = device index
    // Session teardowns, one queue per device (index = device index).
    std::vector<std::unique_ptr<WorkQueue>> reapers_;

    void all_ended();

    bool stopping_ = false;
    std::function<void()> ended_;  // close_all()'s, until it ran
    std::uint64_t next_peer_ = 1;
    TenantLanes tenant_lanes_;  // each tenant's lane on the device workers
    std::unordered_map<std::uint64_t, std::unique_ptr<Peer>> peers_;
    // Sessions being torn down, by peer id (reactor thread only).
    std::unordered_map<std::uint64_t, Reaping> reaping_;
};

}  // namespace vaccel::daemon
