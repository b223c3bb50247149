// connection.cpp - the socket transport of a peer: receiving datagrams
// (strict intake, take_request) and sending replies one at a time.
//
// Decides: a receive is armed only while the connection is open and has
// fewer than max_outstanding requests in the daemon (backpressure); a
// malformed datagram or a failed send ends the connection (close_peer in
// peers.cpp); replies go out in the order their work finished.
#include <cerrno>
#include <system_error>

#include <spdlog/spdlog.h>

#include "peers.hpp"
#include "vaccel/common/requests.hpp"

namespace vaccel::daemon {

void Server::arm_receive(Peer& c)
{
    if (c.transport != Transport::socket || c.closing || c.receiving || c.outstanding() >= max_outstanding)
        return;
    c.rx.prepare_receive(c.rx_buffer);
    const std::uint64_t id = c.id;
    auto op = reactor_->recv_message(c.fd.get(), c.rx, [this, id](int res) { on_received(id, res); });
    if (!op) {
        close_peer(c, "the reactor refused to read its socket", false);
        return;
    }
    c.recv_op = *op;
    c.receiving = true;
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
    if (c.rx.truncated()) {
        close_peer(c, "malformed message: larger than a message may be (payloads above "
                            "64 KiB travel in a memfd) or more than one descriptor",
                         false);
        return;
    }
    auto request = take_request(std::span(c.rx_buffer).first(static_cast<std::size_t>(res)),
                                c.rx.take_fds());
    if (!request) {
        close_peer(c, "malformed message: " + describe(request.error()), false);
        return;
    }
    dispatch(c, std::move(*request));
    arm_receive(c);
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
