// test_transport.cpp - datagrams into Server::dispatch on the caller's thread.
#include "vaccel/daemon/test_transport.hpp"

#include "peers.hpp"

namespace vaccel::daemon {

namespace {
// Closing ends with the session on its reaper; CPU work in flight finishes
// well within this.
constexpr std::uint64_t close_budget_ns = 10'000'000'000;
}  // namespace

std::expected<std::unique_ptr<TestTransport>, std::string> TestTransport::create(
    const std::filesystem::path& config_path, engine::SessionIdentity who, std::uint64_t budget_ns)
{
    ServerOptions options;
    options.kernel = KernelTransport::off;
    options.listen = false;
    options.config_path = config_path;
    // A CPU device of one thread, whatever other devices the machine has.
    options.devices = std::vector<std::string>{"cpu"};
    options.cpu_threads = 1;
    auto server = Server::create(std::move(options));
    if (!server)
        return std::unexpected(server.error());
    std::unique_ptr<TestTransport> transport(new TestTransport());
    transport->server_ = std::move(*server);
    transport->budget_ns_ = budget_ns;
    transport->sink_ = std::make_shared<Sink>();
    Server::Peer& c = transport->server_->add_peer(Transport::direct, who);
    c.sink = transport->sink_;
    transport->peer_ = c.id;
    return transport;
}

TestTransport::~TestTransport()
{
    if (server_)
        close();
}

std::shared_ptr<engine::DeviceManager> TestTransport::devices() const { return server_->devices_; }

TestTransport::Outcome TestTransport::feed(std::span<const std::byte> datagram,
                                           std::vector<UniqueFd> fds)
{
    Server& s = *server_;
    if (Server::Peer* c = s.find(peer_); c != nullptr && !c->closing) {
        s.take(*c, datagram, false, std::move(fds));
        const auto settled = [&s, id = peer_] {
            const Server::Peer* p = s.find(id);
            return p == nullptr || p->closing || (p->jobs == 0 && p->waits.empty());
        };
        if (!s.reactor_->run_until(settled, monotonic_now_ns() + budget_ns_)) {
            if (Server::Peer* p = s.find(peer_))
                s.close_peer(*p, "its request outlived the test transport's budget", true);
        }
    }
    Outcome outcome;
    outcome.replies = std::move(sink_->replies);
    sink_->replies.clear();
    outcome.closed = sink_->closed;
    outcome.reason = sink_->reason;
    return outcome;
}

void TestTransport::close()
{
    Server& s = *server_;
    if (Server::Peer* c = s.find(peer_))
        s.close_peer(*c, "the client closed the connection", false);
    // The peer ends once nothing of it is in flight, and its session once
    // its reaper found it quiet (reaper.cpp).
    (void)s.reactor_->run_until(
        [&s, id = peer_] { return s.find(id) == nullptr && !s.reaping_.contains(id); },
        monotonic_now_ns() + close_budget_ns);
}

}  // namespace vaccel::daemon
