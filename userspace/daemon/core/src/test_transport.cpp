// test_transport.cpp - datagrams into the Dispatcher on the caller's thread.
#include "vaccel/daemon/test_transport.hpp"

#include "dispatcher.hpp"
#include "vaccel/daemon/server.hpp"

namespace vaccel::daemon {

namespace {

// Closing ends with the session on its reaper; CPU work in flight finishes
// well within this.
constexpr std::uint64_t close_budget_ns = 10'000'000'000;

// The peer's transport: replies and the end are recorded for feed().
class Direct final : public PeerTransport {
public:
    explicit Direct(TestTransport::Sink& sink) : sink_(sink) {}
    const char* name() const override { return "direct"; }
    void deliver(Peer&, Reply& reply) override
    {
        sink_.replies.push_back(std::move(reply));
        reply = {};
    }
    void closing(Peer&, std::string_view reason) override
    {
        sink_.closed = true;
        sink_.reason = reason;
    }

private:
    TestTransport::Sink& sink_;
};

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
    transport->direct_ = std::make_unique<Direct>(transport->sink_);
    transport->server_ = std::move(*server);
    transport->budget_ns_ = budget_ns;
    auto peer = transport->server_->dispatcher_->add_peer(*transport->direct_, who);
    if (!peer)
        return std::unexpected(describe(peer.error()));
    transport->peer_ = (*peer)->id;
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
    Dispatcher& d = *server_->dispatcher_;
    if (Peer* c = d.find(peer_); c != nullptr && !c->closing) {
        // As a connection takes it (connection.cpp), into the reused request.
        if (auto taken = take_request(datagram, std::move(fds), c->request); !taken)
            d.close_peer(*c, "malformed message: " + describe(taken.error()), false);
        else
            d.dispatch(*c, c->request);
        const auto settled = [&d, id = peer_] {
            const Peer* p = d.find(id);
            return p == nullptr || p->closing || (p->jobs == 0 && p->waits.empty());
        };
        if (!server_->reactor_->run_until(settled, monotonic_now_ns() + budget_ns_)) {
            if (Peer* p = d.find(peer_))
                d.close_peer(*p, "its request outlived the test transport's budget", true);
        }
    }
    Outcome outcome;
    outcome.replies = std::move(sink_.replies);
    sink_.replies.clear();
    outcome.closed = sink_.closed;
    outcome.reason = sink_.reason;
    return outcome;
}

void TestTransport::close()
{
    Dispatcher& d = *server_->dispatcher_;
    if (Peer* c = d.find(peer_))
        d.close_peer(*c, "the client closed the connection", false);
    // The peer ends once nothing of it is in flight, and its session once
    // its reaper found it quiet (reaper.cpp).
    (void)server_->reactor_->run_until(
        [&d, id = peer_] { return d.find(id) == nullptr && !d.reaping(id); },
        monotonic_now_ns() + close_budget_ns);
}

}  // namespace vaccel::daemon
