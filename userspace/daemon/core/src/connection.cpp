// connection.cpp - the socket transport of a peer: receiving datagrams
// (strict intake, take_request) and sending replies.
//
// Decides: a receive is armed only while the connection is open and has
// fewer than Server::max_outstanding requests in the daemon (backpressure; a
// multishot receive that reaches the limit is cancelled, and the messages
// already received meanwhile are still served); a malformed datagram or a
// failed send ends the connection (Dispatcher::close_peer); replies go out
// in the order their work finished: at once with a non-blocking sendmsg when
// nothing is queued before them, else one at a time through the reactor.
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include <spdlog/spdlog.h>

#include "connection.hpp"
#include "vaccel/daemon/payload_files.hpp"
#include "vaccel/daemon/server.hpp"
#include "vaccel/common/requests.hpp"

namespace vaccel::daemon {

void Connections::open(UniqueFd fd, const engine::SessionIdentity& who)
{
    // A session its tenant has no room for is told so in the answer to its
    // first request (the protocol has no message the daemon sends unasked).
    auto added = dispatcher_.add_peer(*this, who);
    Peer* c = added ? *added : dispatcher_.add_refused_peer(*this, who, std::move(added.error()));
    if (c == nullptr)
        return;  // `fd` closes unanswered
    c->fd = std::move(fd);
    if (added)
        spdlog::debug("vacceld: session {} opened: pid {} uid {} gid {} cgroup '{}'", c->id,
                      who.pid, who.uid, who.gid, who.cgroup);
    arm_receive(*c);
}

void Connections::deliver(Peer& c, Reply& reply)
{
    // Nothing ahead of it: straight onto the socket, the buffer kept for
    // the next reply (the descriptor, if any, is the client's copy now).
    if (!c.sending && c.outbox.empty() && send_now(c, reply)) {
        reply.bytes.clear();
        reply.fd.reset();
        return;
    }
    c.outbox.push_back(std::move(reply));
    pump_send(c);
}

void Connections::closing(Peer& c, std::string_view)
{
    if (c.receiving)
        reactor_.cancel(c.recv_op);
    if (!c.flush)
        c.outbox.clear();
}

bool Connections::busy(const Peer& c) const
{
    return c.receiving || c.sending || (c.flush && !c.outbox.empty());
}

void Connections::arm_receive(Peer& c)
{
    if (c.closing || c.receiving || c.outstanding() >= Server::max_outstanding)
        return;
    const std::uint64_t id = c.id;
    if (multishot_) {
        auto op = reactor_.recv_multishot(c.fd.get(), [this, id](Received& m) { on_message(id, m); });
        if (op) {
            c.recv_op = *op;
            c.receiving = true;
            c.multishot = true;
            return;
        }
        if (op.error() != -EOPNOTSUPP) {
            dispatcher_.close_peer(c, "the reactor refused to read its socket", false);
            return;
        }
        multishot_ = false;
    }
    if (c.rx_buffer.empty())
        c.rx_buffer.resize(Server::max_message_bytes);
    c.rx.prepare_receive(c.rx_buffer);
    auto op = reactor_.recv_message(c.fd.get(), c.rx, [this, id](int res) { on_received(id, res); });
    if (!op) {
        dispatcher_.close_peer(c, "the reactor refused to read its socket", false);
        return;
    }
    c.recv_op = *op;
    c.receiving = true;
    c.multishot = false;
}

void Connections::on_message(std::uint64_t id, Received& m)
{
    // Invariant: every descriptor received is taken here, so none is closed
    // on this thread (payload_files.hpp: a close may block).
    std::vector<UniqueFd> fds = m.take_fds();
    Peer* found = dispatcher_.find(id);
    if (found == nullptr) {
        release_descriptors(fds);
        return;
    }
    Peer& c = *found;
    if (!m.more) {
        c.receiving = false;
        c.pausing = false;
    }
    if (c.closing) {
        release_descriptors(fds);
        if (!m.more)
            dispatcher_.maybe_finish(c);
        return;
    }
    if (m.res < 0) {
        // -ENOBUFS: the buffers ran dry (they are back by now); -ECANCELED:
        // paused for backpressure. Either way the socket still holds the rest.
        release_descriptors(fds);
        if (m.res == -ENOBUFS || m.res == -ECANCELED) {
            arm_receive(c);
            return;
        }
        if (m.res == -EINVAL && !m.more && multishot_) {
            // Multishot recvmsg unsupported for this socket: single-shot from now on.
            multishot_ = false;
            arm_receive(c);
            return;
        }
        dispatcher_.close_peer(c, "receive failed: " + std::system_category().message(-m.res), false);
        return;
    }
    if (m.res == 0 && !m.more) {
        release_descriptors(fds);
        dispatcher_.close_peer(c, "the client closed the connection", false);
        return;
    }
    take(c, m.bytes, m.truncated, std::move(fds));
    // take() may have ended the peer.
    found = dispatcher_.find(id);
    if (found == nullptr || found->closing)
        return;
    if (!found->receiving)
        arm_receive(*found);
    else if (found->outstanding() >= Server::max_outstanding && !found->pausing) {
        found->pausing = true;
        reactor_.cancel(found->recv_op);
    }
}

void Connections::on_received(std::uint64_t id, int res)
{
    Peer* found = dispatcher_.find(id);
    if (found == nullptr)
        return;
    Peer& c = *found;
    c.receiving = false;
    // Invariant: as in on_message, no received descriptor is closed here.
    std::vector<UniqueFd> fds = c.rx.take_fds();
    if (c.closing || res <= 0)
        release_descriptors(fds);
    if (c.closing) {
        dispatcher_.maybe_finish(c);
        return;
    }
    if (res == 0) {
        dispatcher_.close_peer(c, "the client closed the connection", false);
        return;
    }
    if (res < 0) {
        dispatcher_.close_peer(c, "receive failed: " + std::system_category().message(-res), false);
        return;
    }
    take(c, std::span(c.rx_buffer).first(static_cast<std::size_t>(res)), c.rx.truncated(),
         std::move(fds));
    if (Peer* still = dispatcher_.find(id); still != nullptr)
        arm_receive(*still);
}

void Connections::take(Peer& c, std::span<const std::byte> datagram, bool truncated,
                  std::vector<UniqueFd> fds)
{
    if (truncated) {
        release_descriptors(fds);  // never closed here: one may be a FUSE file's
        dispatcher_.close_peer(c, "malformed message: larger than a message may be (payloads above "
                      "64 KiB travel in a memfd) or more than one descriptor",
                   false);
        return;
    }
    // The one copy of the request: out of the receive buffer into c.request.
    if (auto taken = take_request(datagram, std::move(fds), c.request); !taken) {
        dispatcher_.close_peer(c, "malformed message: " + describe(taken.error()), false);
        return;
    }
    dispatcher_.dispatch(c, c.request);
}

bool Connections::send_now(Peer& c, const Reply& reply)
{
    iovec iov{const_cast<std::byte*>(reply.bytes.data()), reply.bytes.size()};
    msghdr header{};
    header.msg_iov = &iov;
    header.msg_iovlen = 1;
    alignas(cmsghdr) unsigned char control[CMSG_SPACE(sizeof(int))] = {};
    if (reply.fd) {
        const int fd = reply.fd.get();
        header.msg_control = control;
        header.msg_controllen = sizeof control;
        cmsghdr* cmsg = CMSG_FIRSTHDR(&header);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
    }
    // A datagram goes whole or not at all. Any failure (would block, or an
    // error the queued send then reports) leaves it to the queued path.
    return ::sendmsg(c.fd.get(), &header, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0;
}

void Connections::pump_send(Peer& c)
{
    if (c.sending || c.outbox.empty())
        return;
    c.in_transit = std::move(c.outbox.front());
    c.outbox.pop_front();
    const int fd = c.in_transit.fd.get();
    const bool prepared = fd >= 0 ? c.tx.prepare_send(c.in_transit.bytes, std::span(&fd, 1))
                                  : c.tx.prepare_send(c.in_transit.bytes);
    if (!prepared) {
        dispatcher_.close_peer(c, "a reply could not be prepared", false);
        return;
    }
    const std::uint64_t id = c.id;
    auto op = reactor_.send_message(c.fd.get(), c.tx, [this, id](int res) { on_sent(id, res); });
    if (!op) {
        c.in_transit = {};
        c.outbox.clear();
        if (!c.closing)
            dispatcher_.close_peer(c, "the reactor refused to send on its socket", false);
        return;
    }
    c.sending = true;
}

void Connections::on_sent(std::uint64_t id, int res)
{
    Peer* found = dispatcher_.find(id);
    if (found == nullptr)
        return;
    Peer& c = *found;
    c.sending = false;
    c.in_transit = {};  // closes a reply memfd: the client has its own copy
    if (res < 0) {
        c.outbox.clear();
        c.flush = false;
        if (!c.closing)
            dispatcher_.close_peer(c, "send failed: " + std::system_category().message(-res), false);
        else
            dispatcher_.maybe_finish(c);
        return;
    }
    pump_send(c);
    arm_receive(c);
    dispatcher_.maybe_finish(c);
}

}  // namespace vaccel::daemon
