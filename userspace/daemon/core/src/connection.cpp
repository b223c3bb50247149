// connection.cpp - one client connection on the reactor: receive, intake,
// dispatch to a device worker or the chores thread, replies, and the end.
//
// Decides where each request runs:
//  - ADMIN: the chores thread (user database, fsync, session locks);
//  - EVENT_WAIT: parked waits (waits.cpp);
//  - device-less ops (GET_VERSION, DEVICE_COUNT, DEVICE_QUERY): inline on
//    the reactor - they read immutable device data and take no lock that a
//    device call holds;
//  - everything else: the worker of the device Session::route() names, in
//    the connection's lane.
#include <cerrno>
#include <system_error>

#include <spdlog/spdlog.h>

#include "connection.hpp"
#include "vaccel/common/requests.hpp"

namespace vaccel::daemon {

Server::Connection* Server::find(std::uint64_t id)
{
    auto it = connections_.find(id);
    return it == connections_.end() ? nullptr : it->second.get();
}

void Server::arm_receive(Connection& c)
{
    if (c.closing || c.receiving || c.outstanding() >= max_outstanding)
        return;
    c.rx.prepare_receive(c.rx_buffer);
    const std::uint64_t id = c.id;
    auto op = reactor_->recv_message(c.fd.get(), c.rx, [this, id](int res) { on_received(id, res); });
    if (!op) {
        close_connection(c, "the reactor refused to read its socket", false);
        return;
    }
    c.recv_op = *op;
    c.receiving = true;
}

void Server::on_received(std::uint64_t id, int res)
{
    Connection* found = find(id);
    if (found == nullptr)
        return;
    Connection& c = *found;
    c.receiving = false;
    if (c.closing) {
        maybe_finish(c);
        return;
    }
    if (res == 0) {
        close_connection(c, "the client closed the connection", false);
        return;
    }
    if (res < 0) {
        close_connection(c, "receive failed: " + std::system_category().message(-res), false);
        return;
    }
    if (c.rx.truncated()) {
        close_connection(c, "malformed message: larger than a message may be (payloads above "
                            "64 KiB travel in a memfd) or more than one descriptor",
                         false);
        return;
    }
    auto request = take_request(std::span(c.rx_buffer).first(static_cast<std::size_t>(res)),
                                c.rx.take_fds());
    if (!request) {
        close_connection(c, "malformed message: " + describe(request.error()), false);
        return;
    }
    dispatch(c, std::move(*request));
    arm_receive(c);
}

void Server::dispatch(Connection& c, Request request)
{
    const std::uint32_t opcode = request.opcode();
    if (opcode == VACCEL_OP_ADMIN) {
        run_admin(c, std::make_shared<Request>(std::move(request)));
        return;
    }
    if (opcode == VACCEL_OP_EVENT_WAIT) {
        start_wait(c, std::move(request));
        return;
    }
    const auto device = c.session->route(opcode, request.args, request.payload);
    if (!device) {
        // Device-less: immutable device data, no session lock.
        queue_reply(c, execute(*c.session, request));
        return;
    }
    run_on_device(c, *device, std::make_shared<Request>(std::move(request)));
}

void Server::run_on_device(Connection& c, std::uint32_t device, std::shared_ptr<Request> request)
{
    ++c.jobs;
    // Hand-off reactor -> worker: the job owns the request and a reference
    // to the session; it touches nothing of the Connection.
    workers_[device]->push(
        c.id, c.weight,
        [this, id = c.id, session = c.session, request = std::move(request)]() mutable {
            Reply reply = execute(*session, *request);
            request.reset();
            // Dropped before the reply is posted: the reactor may release
            // the session as soon as the reply arrives, and its last
            // reference must not end on this worker.
            session.reset();
            post_reply(id, std::move(reply));
        });
}

void Server::run_admin(Connection& c, std::shared_ptr<Request> request)
{
    ++c.jobs;
    chores_->push([this, id = c.id, who = c.session->identity(), sessions = live_sessions(),
                   request = std::move(request)]() mutable {
        Reply reply = admin_->handle(who, *request, sessions);
        sessions.clear();
        post_reply(id, std::move(reply));
    });
}

std::vector<SessionEntry> Server::live_sessions() const
{
    std::vector<SessionEntry> sessions;
    sessions.reserve(connections_.size());
    for (const auto& [id, c] : connections_)
        if (!c->closing)
            sessions.push_back(SessionEntry{id, c->session});
    return sessions;
}

void Server::post_reply(std::uint64_t id, Reply reply)
{
    // Hand-off worker -> reactor: from the post on, the reply is the
    // reactor's. std::function needs a copyable callable, hence the box.
    auto box = std::make_shared<Reply>(std::move(reply));
    reactor_->post([this, id, box] { on_job_done(id, std::move(*box)); });
}

void Server::on_job_done(std::uint64_t id, Reply reply)
{
    Connection* found = find(id);
    if (found == nullptr)
        return;  // cannot happen: a connection with jobs out is kept
    Connection& c = *found;
    --c.jobs;
    queue_reply(c, std::move(reply));
    arm_receive(c);
    maybe_finish(c);
}

void Server::queue_reply(Connection& c, Reply reply)
{
    if (c.closing && !c.flush)
        return;  // nobody to read it
    c.outbox.push_back(std::move(reply));
    pump_send(c);
}

void Server::pump_send(Connection& c)
{
    if (c.sending || c.outbox.empty())
        return;
    c.in_transit = std::move(c.outbox.front());
    c.outbox.pop_front();
    const int fd = c.in_transit.fd.get();
    const bool prepared = fd >= 0 ? c.tx.prepare_send(c.in_transit.bytes, std::span(&fd, 1))
                                  : c.tx.prepare_send(c.in_transit.bytes);
    if (!prepared) {
        close_connection(c, "a reply could not be prepared", false);
        return;
    }
    const std::uint64_t id = c.id;
    auto op = reactor_->send_message(c.fd.get(), c.tx, [this, id](int res) { on_sent(id, res); });
    if (!op) {
        c.in_transit = {};
        c.outbox.clear();
        if (!c.closing)
            close_connection(c, "the reactor refused to send on its socket", false);
        return;
    }
    c.sending = true;
}

void Server::on_sent(std::uint64_t id, int res)
{
    Connection* found = find(id);
    if (found == nullptr)
        return;
    Connection& c = *found;
    c.sending = false;
    c.in_transit = {};  // closes a reply memfd: the client has its own copy
    if (res < 0) {
        c.outbox.clear();
        c.flush = false;
        if (!c.closing)
            close_connection(c, "send failed: " + std::system_category().message(-res), false);
        else
            maybe_finish(c);
        return;
    }
    pump_send(c);
    arm_receive(c);
    maybe_finish(c);
}

void Server::close_connection(Connection& c, std::string_view reason, bool flush)
{
    if (c.closing) {
        maybe_finish(c);
        return;
    }
    c.closing = true;
    c.flush = flush;
    if (reason.starts_with("malformed"))
        spdlog::warn("vacceld: session {} (pid {} uid {}) closed: {}", c.id,
                     c.session->identity().pid, c.session->identity().uid, reason);
    else
        spdlog::debug("vacceld: session {} closing: {}", c.id, reason);
    if (c.receiving)
        reactor_->cancel(c.recv_op);
    if (!flush)
        c.outbox.clear();
    // Parked waits end now; a wait being looked at ends when its look comes back.
    for (auto it = c.waits.begin(); it != c.waits.end();) {
        ParkedWait& wait = it->second;
        if (wait.timer != 0) {
            reactor_->cancel(wait.timer);
            wait.timer = 0;
        }
        if (wait.checking) {
            ++it;
            continue;
        }
        if (flush)
            queue_reply(c, refusal(wait.request, Error::of(Errc::device_lost, VACCEL_D_PEER_GONE)));
        it = c.waits.erase(it);
    }
    maybe_finish(c);
}

void Server::maybe_finish(Connection& c)
{
    if (!c.closing || c.receiving || c.sending || c.jobs != 0 || !c.waits.empty())
        return;
    if (c.flush && !c.outbox.empty())
        return;
    const std::uint64_t id = c.id;
    // Hand-off reactor -> chores: the session's destructor waits for its
    // pending events, so it must not run here.
    chores_->push([session = std::move(c.session)]() mutable { session.reset(); });
    spdlog::debug("vacceld: session {} closed", id);
    connections_.erase(id);  // closes the socket
    if (stopping_ && connections_.empty())
        finish_stop();
}

}  // namespace vaccel::daemon
