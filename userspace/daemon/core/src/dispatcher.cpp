// dispatcher.cpp - the request path every peer shares, whatever its
// transport: dispatch, jobs on the workers and the chores thread, reply
// routing, and the end of a peer.
//
// Decides where each request runs:
//  - ADMIN: the chores thread (user database, fsync, session locks);
//  - EVENT_WAIT: parked waits (waits.cpp);
//  - device-less ops (GET_VERSION, DEVICE_COUNT, DEVICE_QUERY,
//    DEVICE_TOSA): inline on the reactor - they read immutable device data
//    and take no lock that a device call holds, and carry no payload;
//  - everything else: the worker of the device Session::route() names, in
//    the peer's lane. Payloads (a memfd's or a server slot's) are read
//    there, never on the reactor.
//  - except short calls (ADR 0007): when that worker is idle and the peer
//    has nothing in flight, a call of bounded, small cost with its payload
//    already in memory runs on the reactor itself, on the peer's reused
//    request and reply, and its reply is sent at once: no hand-off, no
//    post(), no allocation in the daemon.
#include <spdlog/spdlog.h>

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "dispatcher.hpp"
#include "vaccel/common/codec.hpp"

namespace vaccel::daemon {

Dispatcher::Dispatcher(Parts parts)
    : reactor_(*parts.reactor),
      devices_(std::move(parts.devices)),
      policy_(std::move(parts.policy)),
      limits_(std::move(parts.limits)),
      short_calls_(parts.short_calls_on_reactor),
      admin_(std::move(parts.admin)),
      containers_(std::move(parts.containers)),
      tenants_(parts.tenants ? std::move(parts.tenants)
                             : std::make_shared<engine::Tenants>(devices_->count()))
{
    chores_ = std::make_unique<WorkQueue>("vacceld-chores");
    for (std::uint32_t i = 0; i < devices_->count(); ++i) {
        workers_.push_back(std::make_unique<WorkQueue>(fmt::format("vacceld-dev{}", i)));
        reapers_.push_back(std::make_unique<WorkQueue>(fmt::format("vacceld-reap{}", i)));
    }
}

Dispatcher::~Dispatcher()
{
    // Jobs still queued run and post into a reactor that no longer runs,
    // which drops them. Sessions left in reaping_ are destroyed after the
    // reapers joined, on this thread.
    peers_.clear();
    workers_.clear();
    reapers_.clear();
    reaping_.clear();
    chores_.reset();
}

Result<Peer*> Dispatcher::add_peer(PeerTransport& transport, const engine::SessionIdentity& peer)
{
    // A peer inside a registered container is that container's, whatever
    // its own cgroup (containers.hpp): its rule and devices are the
    // container's.
    const engine::SessionIdentity who = containers_ ? containers_->attribute(peer) : peer;
    // Admitted before anything is made: a refused peer costs nothing.
    auto seat = tenants_->admit(who, *limits_);
    if (!seat)
        return fail(std::move(seat.error()));
    auto c = std::make_unique<Peer>();
    c->id = next_peer_++;
    c->transport = &transport;
    c->weight = policy_->current()->weight(client_of(who));
    engine::SessionOptions session_options;
    session_options.identity = who;
    session_options.policy = limits_;
    session_options.tenant = std::move(*seat);
    c->session = std::make_shared<engine::Session>(devices_, std::move(session_options));
    c->tenant_key = c->session->tenant().key();
    c->lane = tenant_lanes_.join(c->tenant_key);
    Peer* ref = c.get();
    peers_.emplace(ref->id, std::move(c));
    return ref;
}

Peer* Dispatcher::add_refused_peer(PeerTransport& transport, const engine::SessionIdentity& who,
                                   Error refusal)
{
    if (refused_peers_ >= max_refused_peers) {
        spdlog::warn("vacceld: a connection of uid {} (pid {}) closed unanswered: {} refused "
                     "connections are waiting to be told why already",
                     who.uid, who.pid, refused_peers_);
        return nullptr;
    }
    spdlog::info("vacceld: a session of uid {} (pid {}) refused: {}", who.uid, who.pid,
                 describe(refusal));
    ++refused_peers_;
    auto c = std::make_unique<Peer>();
    c->id = next_peer_++;
    c->transport = &transport;
    c->refused = std::move(refusal);
    Peer* ref = c.get();
    peers_.emplace(ref->id, std::move(c));
    return ref;
}

Peer* Dispatcher::find(std::uint64_t id)
{
    auto it = peers_.find(id);
    return it == peers_.end() ? nullptr : it->second.get();
}

void Dispatcher::dispatch(Peer& c, Request& request)
{
    if (c.refused) {
        // Its one answer, then it closes (add_refused_peer).
        if (!c.closing) {
            queue_reply(c, refusal(request, *c.refused));
            close_peer(c, "its session was refused", true);
        }
        return;
    }
    const std::uint32_t opcode = request.opcode();
    if (opcode == VACCEL_OP_ADMIN) {
        run_admin(c, std::make_shared<Request>(std::move(request)));
        return;
    }
    if (opcode == VACCEL_OP_SESSION_NOTIFY) {
        queue_reply(c, notify_reply(c, request));
        return;
    }
    // Clear before the look the request makes: a completion after this
    // point makes the notify file readable again.
    if (c.notify && (opcode == VACCEL_OP_EVENT_POLL || opcode == VACCEL_OP_EVENT_WAIT))
        c.notify->clear();
    if (opcode == VACCEL_OP_EVENT_WAIT || opcode == VACCEL_OP_RUN) {
        const std::uint64_t id = c.id;
        const std::uint64_t wait_id = opcode == VACCEL_OP_RUN ? start_run(c, std::move(request))
                                                              : start_wait(c, std::move(request));
        // Not answered at once: it waits, and its transport may let go of
        // what the request holds (the kernel transport defers it).
        if (Peer* still = find(id); still != nullptr)
            if (auto it = still->waits.find(wait_id); it != still->waits.end())
                still->transport->waiting(*still, it->second.request);
        return;
    }
    const auto device = c.session->route(opcode, request.args, request.payload);
    if (!device) {
        // Device-less: immutable device data, no session lock.
        execute(*c.session, request, c.reply);
        deliver(c, c.reply);
        return;
    }
    run_on_device(c, *device, request);
}

namespace {

// Calls whose cost is small and bounded (no allocation of client-chosen
// size, no artifact parsing, no transfer), with their payload in memory.
bool short_call(const Request& request)
{
    if (request.has_fd_payload() || request.payload_on_slot())
        return false;
    switch (request.opcode()) {
    case VACCEL_OP_SUBMIT:
    case VACCEL_OP_EVENT_POLL:
    case VACCEL_OP_EVENT_DESTROY:
    case VACCEL_OP_PROGRAM_SLOT:
    case VACCEL_OP_CONTEXT_LIMITS:
    case VACCEL_OP_QUEUE_CREATE:
    case VACCEL_OP_QUEUE_DESTROY:
        return true;
    default:
        return false;
    }
}

}  // namespace

bool Dispatcher::worker_free_for(const Peer& c, std::uint32_t device) const
{
    // Invariant: only the reactor pushes to workers, and it is running this
    // code, so an idle worker stays idle until the call below returns; the
    // peer's order holds because it has nothing queued or running.
    return short_calls_ && c.jobs == 0 && workers_[device]->idle();
}

void Dispatcher::run_on_device(Peer& c, std::uint32_t device, Request& request)
{
    if (short_call(request) && worker_free_for(c, device)) {
        execute(*c.session, request, c.reply);
        deliver(c, c.reply);
        return;
    }
    ++c.jobs;
    // Hand-off reactor -> worker: the job owns the request and a reference
    // to the session; it touches nothing of the Peer.
    workers_[device]->push(
        c.lane, c.weight,
        [this, id = c.id, session = c.session,
         request = std::make_shared<Request>(std::move(request))]() mutable {
            Reply reply = execute(*session, *request);
            request.reset();
            // Dropped before the reply is posted: the reactor may release
            // the session as soon as the reply arrives, and its last
            // reference must not end on this worker.
            session.reset();
            post_reply(id, std::move(reply));
        });
}

void Dispatcher::run_admin(Peer& c, std::shared_ptr<Request> request)
{
    // The codec admitted exactly sizeof(vaccel_admin) argument bytes.
    vaccel_admin args{};
    std::memcpy(&args, request->args.data(), sizeof args);
    if (open_to_every_caller(args.command)) {
        serve_admin(c, std::move(request));
        return;
    }
    AdminAuthority& authority = admin_->authority();
    const engine::SessionIdentity& who = c.session->identity();
    switch (authority.look(who)) {
    case AdminLook::not_admin: {
        Error refused = authority.refusal(who);
        spdlog::debug("vacceld: session {} (pid {} uid {}) refused the admin channel: {}", c.id,
                      who.pid, who.uid, refused.note);
        queue_reply(c, refusal(*request, std::move(refused)));
        return;
    }
    case AdminLook::ask:
        ++c.jobs;
        chores_->push([this, id = c.id, who, request = std::move(request)]() mutable {
            const bool admin = admin_->authority().resolve(who);
            reactor_.post([this, id, admin, request = std::move(request)]() mutable {
                on_admin_resolved(id, admin, std::move(request));
            });
        });
        return;
    case AdminLook::admin:
        break;
    }
    serve_admin(c, std::move(request));
}

void Dispatcher::on_admin_resolved(std::uint64_t id, bool admin, std::shared_ptr<Request> request)
{
    Peer* found = find(id);
    if (found == nullptr)
        return;  // cannot happen: a peer with jobs out is kept
    Peer& c = *found;
    --c.jobs;
    if (admin)
        serve_admin(c, std::move(request));
    else
        queue_reply(c, refusal(*request, admin_->authority().refusal(c.session->identity())));
    c.transport->resume(c);
    maybe_finish(c);
}

void Dispatcher::serve_admin(Peer& c, std::shared_ptr<Request> request)
{
    ++c.jobs;
    chores_->push([this, id = c.id, who = c.session->identity(), sessions = live_sessions(),
                   request = std::move(request)]() mutable {
        Reply reply = admin_->handle(who, *request, sessions);
        sessions.clear();
        post_reply(id, std::move(reply));
    });
}

std::vector<SessionEntry> Dispatcher::live_sessions() const
{
    std::vector<SessionEntry> sessions;
    sessions.reserve(peers_.size());
    for (const auto& [id, c] : peers_) {
        if (c->closing || !c->session)
            continue;
        std::uint64_t parked = 0;
        for (const auto& [wait_id, wait] : c->waits)
            parked += wait.checking ? 0 : 1;
        sessions.push_back(SessionEntry{id, c->session, c->transport->name(), parked});
    }
    return sessions;
}

void Dispatcher::post_reply(std::uint64_t id, Reply reply)
{
    // Hand-off worker -> reactor: from the post on, the reply is the
    // reactor's. std::function needs a copyable callable, hence the box.
    auto box = std::make_shared<Reply>(std::move(reply));
    reactor_.post([this, id, box] { on_job_done(id, std::move(*box)); });
}

void Dispatcher::on_job_done(std::uint64_t id, Reply reply)
{
    Peer* found = find(id);
    if (found == nullptr)
        return;  // cannot happen: a connection with jobs out is kept
    Peer& c = *found;
    --c.jobs;
    queue_reply(c, std::move(reply));
    c.transport->resume(c);
    maybe_finish(c);
}

void Dispatcher::deliver(Peer& c, Reply& reply)
{
    if (c.closing && !c.flush)
        return;  // nobody to read it
    c.transport->deliver(c, reply);
}

Reply Dispatcher::notify_reply(Peer& c, const Request& request)
{
    if (!c.notify) {
        auto notify = std::make_shared<engine::NotifyFd>();
        if (notify->fd() < 0)
            return refusal(request, Error::of(Errc::external, VACCEL_D_NONE, 1, errno)
                                        .with_note("the daemon could not make an eventfd"));
        c.notify = std::move(notify);
        c.session->set_completion_listener(c.notify);
    }
    UniqueFd passed(::fcntl(c.notify->fd(), F_DUPFD_CLOEXEC, 0));
    if (!passed)
        return refusal(request, Error::of(Errc::external, VACCEL_D_NONE, 1, errno)
                                    .with_note("the daemon could not duplicate its eventfd"));
    Reply reply;
    append_response_passing_fd(reply.bytes, request.opcode(), request.header.seq,
                               request.header.session, request.args);
    reply.fd = std::move(passed);
    return reply;
}

void Dispatcher::close_peer(Peer& c, std::string_view reason, bool flush)
{
    if (c.closing) {
        maybe_finish(c);
        return;
    }
    c.closing = true;
    c.flush = flush || c.transport->always_flush();
    if (reason.starts_with("malformed") && c.session)
        spdlog::warn("vacceld: session {} (pid {} uid {}) closed: {}", c.id,
                     c.session->identity().pid, c.session->identity().uid, reason);
    else
        spdlog::debug("vacceld: session {} closing: {}", c.id, reason);
    c.transport->closing(c, reason);
    // Parked waits end now; a wait being looked at ends when its look comes back.
    for (auto it = c.waits.begin(); it != c.waits.end();) {
        ParkedWait& wait = it->second;
        if (wait.timer != 0) {
            reactor_.cancel(wait.timer);
            wait.timer = 0;
        }
        if (wait.checking) {
            ++it;
            continue;
        }
        if (c.flush)
            queue_reply(c, refusal(wait.request, Error::of(Errc::device_lost, VACCEL_D_PEER_GONE)));
        wait.waker->active.store(false, std::memory_order_release);
        it = c.waits.erase(it);
    }
    maybe_finish(c);
}

void Dispatcher::maybe_finish(Peer& c)
{
    if (!c.closing || c.transport->busy(c) || c.jobs != 0 || !c.waits.empty())
        return;
    const std::uint64_t id = c.id;
    // The session's teardown (reaper.cpp) runs neither here nor on the
    // chores thread that serves admin commands.
    if (c.session)
        reap(id, std::move(c.session));
    if (c.refused)
        --refused_peers_;
    if (!c.tenant_key.empty())
        tenant_lanes_.leave(c.tenant_key);
    spdlog::debug("vacceld: session {} closed", id);
    c.transport->forget(c);
    peers_.erase(id);  // closes the socket
    if (stopping_ && peers_.empty())
        all_ended();
}

void Dispatcher::close_all(std::function<void()> ended)
{
    stopping_ = true;
    ended_ = std::move(ended);
    std::vector<std::uint64_t> ids;
    for (const auto& [id, c] : peers_)
        ids.push_back(id);
    for (std::uint64_t id : ids)
        if (Peer* c = find(id))
            close_peer(*c, "the daemon is stopping", true);
    if (peers_.empty())
        all_ended();
}

void Dispatcher::all_ended()
{
    if (auto ended = std::move(ended_)) {
        ended_ = nullptr;
        ended();
    }
}

void Dispatcher::after_chores(std::function<void()> fn)
{
    chores_->push([this, fn = std::move(fn)] { reactor_.post(fn); });
}

void Dispatcher::reload()
{
    chores_->push([this] {
        const ReloadOutcome outcome = admin_->reload();
        if (outcome.applied)
            spdlog::info("vacceld: config reloaded: {}", outcome.message);
        else
            spdlog::error("vacceld: config not reloaded, the old one stays in force: {}",
                          outcome.message);
    });
}

}  // namespace vaccel::daemon
