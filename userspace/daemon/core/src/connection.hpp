// connection.hpp - the socket transport of vacceld's peers (connection.cpp):
// one peer per accepted connection of the listening socket.
//
// Owns nothing but the receive mode; the peers (and their sockets) are the
// Dispatcher's. Decides how a connection's requests arrive (strict intake
// of its datagrams, backpressure at Server::max_outstanding) and how its
// replies go out (in the order their work finished).
#pragma once

#include "dispatcher.hpp"

namespace vaccel::daemon {

class Connections final : public PeerTransport {
public:
    // `multishot`: receive into the reactor's provided buffers where the
    // kernel can (ServerOptions::multishot_receive).
    Connections(Dispatcher& dispatcher, Reactor& reactor, bool multishot)
        : dispatcher_(dispatcher), reactor_(reactor), multishot_(multishot)
    {
    }
    // A connection accepted with the credentials `who`: a peer, reading.
    void open(UniqueFd fd, const engine::SessionIdentity& who);

    const char* name() const override { return "socket"; }
    void deliver(Peer& c, Reply& reply) override;
    void resume(Peer& c) override { arm_receive(c); }
    void closing(Peer& c, std::string_view reason) override;
    bool busy(const Peer& c) const override;

private:
    void arm_receive(Peer& c);
    void on_message(std::uint64_t id, Received& message);
    void on_received(std::uint64_t id, int res);
    // Checks a datagram into c.request and dispatches it; may end `c`.
    void take(Peer& c, std::span<const std::byte> datagram, bool truncated,
              std::vector<UniqueFd> fds);
    // One non-blocking sendmsg of `reply`; false if it did not go.
    bool send_now(Peer& c, const Reply& reply);
    void pump_send(Peer& c);
    void on_sent(std::uint64_t id, int res);

    Dispatcher& dispatcher_;
    Reactor& reactor_;
    bool multishot_;  // falls back to single-shot receives once refused
};

}  // namespace vaccel::daemon
