// connection.cpp - the socket transport of a peer: receiving datagrams
// (strict intake, take_request) and sending replies.
//
// Decides: a receive is armed only while the connection is open and has
// fewer than max_outstanding requests in the daemon (backpressure; a
// multishot receive that reaches the limit is cancelled, and the messages
// already received meanwhile are still served); a malformed datagram or a
// failed send ends the connection (close_peer in peers.cpp); replies go out
// in the order their work finished: at once with a non-blocking sendmsg when
// nothing is queued before them, else one at a time through the reactor.
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include <spdlog/spdlog.h>

#include "peers.hpp"
#include "vaccel/common/requests.hpp"

namespace vaccel::daemon {

void Server::arm_receive(Peer& c)
{
    if (c.transport != Transport::socket || c.closing || c.receiving || c.outstanding() >= max_outstanding)
        return;
    const std::uint64_t id = c.id;
    if (multishot_) {
        auto op = reactor_->recv_multishot(c.fd.get(), [this, id](Received& m) { on_message(id, m); });
        if (op) {
            c.recv_op = *op;
            c.receiving = true;
            c.multishot = true;
            return;
        }
        if (op.error() != -EOPNOTSUPP) {
            close_peer(c, "the reactor refused to read its socket", false);
            return;
        }
        multishot_ = false;
    }
    if (c.rx_buffer.empty())
        c.rx_buffer.resize(max_message_bytes);
    c.rx.prepare_receive(c.rx_buffer);
    auto op = reactor_->recv_message(c.fd.get(), c.rx, [this, id](int res) { on_received(id, res); });
    if (!op) {
        close_peer(c, "the reactor refused to read its socket", false);
        return;
    }
    c.recv_op = *op;
    c.receiving = true;
    c.multishot = false;
}

void Server::on_message(std::uint64_t id, Received& m)
{
    Peer* found = find(id);
    if (found == nullptr)
        return;
    Peer& c = *found;
    if (!m.more) {
        c.receiving = false;
        c.pausing = false;
    }
    if (c.closing) {
        if (!m.more)
            maybe_finish(c);
        return;
    }
    if (m.res < 0) {
        // -ENOBUFS: the buffers ran dry (they are back by now); -ECANCELED:
        // paused for backpressure. Either way the socket still holds the rest.
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
        close_peer(c, "receive failed: " + std::system_category().message(-m.res), false);
        return;
    }
    if (m.res == 0 && !m.more) {
        close_peer(c, "the client closed the connection", false);
        return;
    }
    take(c, m.bytes, m.truncated, m.take_fds());
    // take() may have ended the peer.
    found = find(id);
    if (found == nullptr || found->closing)
        return;
    if (!found->receiving)
        arm_receive(*found);
    else if (found->outstanding() >= max_outstanding && !found->pausing) {
        found->pausing = true;
        reactor_->cancel(found->recv_op);
    }
}

void Server::on_received(std::uint64_t id, int res)
{
    Peer* found = find(id);
    if (found == nullptr)
        return;
    Peer& c = *found;
    c.receiving = false;
    if (c.closing) {
        maybe_finish(c);
        return;
    }
    if (res == 0) {
        close_peer(c, "the client closed the connection", false);
        return;
    }
    if (res < 0) {
        close_peer(c, "receive failed: " + std::system_category().message(-res), false);
        return;
    }
    take(c, std::span(c.rx_buffer).first(static_cast<std::size_t>(res)), c.rx.truncated(),
         c.rx.take_fds());
    if (Peer* still = find(id); still != nullptr)
        arm_receive(*still);
}

void Server::take(Peer& c, std::span<const std::byte> datagram, bool truncated,
                  std::vector<UniqueFd> fds)
{
    if (truncated) {
        close_peer(c, "malformed message: larger than a message may be (payloads above "
                      "64 KiB travel in a memfd) or more than one descriptor",
                   false);
        return;
    }
    // The one copy of the request: out of the receive buffer into c.request.
    if (auto taken = take_request(datagram, std::move(fds), c.request); !taken) {
        close_peer(c, "malformed message: " + describe(taken.error()), false);
        return;
    }
    dispatch(c, c.request);
}

bool Server::send_now(Peer& c, const Reply& reply)
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

void Server::pump_send(Peer& c)
{
    if (c.sending || c.outbox.empty())
        return;
    c.in_transit = std::move(c.outbox.front());
    c.outbox.pop_front();
    const int fd = c.in_transit.fd.get();
    const bool prepared = fd >= 0 ? c.tx.prepare_send(c.in_transit.bytes, std::span(&fd, 1))
                                  : c.tx.prepare_send(c.in_transit.bytes);
    if (!prepared) {
        close_peer(c, "a reply could not be prepared", false);
        return;
    }
    const std::uint64_t id = c.id;
    auto op = reactor_->send_message(c.fd.get(), c.tx, [this, id](int res) { on_sent(id, res); });
    if (!op) {
        c.in_transit = {};
        c.outbox.clear();
        if (!c.closing)
            close_peer(c, "the reactor refused to send on its socket", false);
        return;
    }
    c.sending = true;
}

void Server::on_sent(std::uint64_t id, int res)
{
    Peer* found = find(id);
    if (found == nullptr)
        return;
    Peer& c = *found;
    c.sending = false;
    c.in_transit = {};  // closes a reply memfd: the client has its own copy
    if (res < 0) {
        c.outbox.clear();
        c.flush = false;
        if (!c.closing)
            close_peer(c, "send failed: " + std::system_category().message(-res), false);
        else
            maybe_finish(c);
        return;
    }
    pump_send(c);
    arm_receive(c);
    maybe_finish(c);
}

}  // namespace vaccel::daemon
