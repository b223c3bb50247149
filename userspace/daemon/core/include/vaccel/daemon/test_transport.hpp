// test_transport.hpp - a transport that feeds datagrams to vacceld's own
// request path on the caller's thread: the entry point of the fuzz target
// and of tests that need intake and dispatch without a socket.
//
// Owns: a Server (no socket, no server node) on a CPU device of one thread
// and one peer of its Dispatcher, reached through a transport of its own
// ("direct"). Decides:
//  - feed() takes one datagram exactly as a socket connection does (strict
//    intake, then the Dispatcher: short calls on the reactor, workers,
//    parked waits and RUNs, admin on the chores thread) and turns the
//    reactor on the caller's thread until the peer has nothing in flight or
//    is closed; it returns the replies delivered meanwhile, or that the
//    peer was closed and why;
//  - a request still in flight after `budget` (an EVENT_WAIT without an
//    end, a RUN held by a gate) closes the peer, as a client that goes
//    away would: its parked waits are answered PEER_GONE. Nothing fed can
//    hold the caller longer than the budget.
//  - the destructor ends the peer as a closed connection and runs the
//    reactor until its session has been handed to its reaper; destroying
//    the Server then joins the reapers, so the session is released.
// Threads: the caller's thread is the reactor thread of the Server.
#pragma once

#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vaccel/daemon/exchange.hpp"
#include "vaccel/engine/device_manager.hpp"
#include "vaccel/engine/limit_policy.hpp"

namespace vaccel::daemon {

class PeerTransport;
class Server;

class TestTransport {
public:
    // What the daemon did with the peer's requests (its transport's record).
    struct Sink {
        std::vector<Reply> replies;
        bool closed = false;
        std::string reason;  // why the peer was closed
    };
    struct Outcome {
        bool closed = false;         // the daemon closed the peer
        std::string reason;          // why (closed only)
        std::vector<Reply> replies;  // what it delivered
    };
    static constexpr std::uint64_t default_budget_ns = 2'000'000'000;

    // Root in the host's namespaces: the default peer, who may administer.
    static engine::SessionIdentity host_root()
    {
        engine::SessionIdentity who;
        who.host_namespaces = true;
        return who;
    }

    // `config_path` need not exist (default limits); LIMITS_SET writes it.
    // `who` is the peer's identity (admin_authority.hpp decides whether it
    // may administer).
    static std::expected<std::unique_ptr<TestTransport>, std::string> create(
        const std::filesystem::path& config_path, engine::SessionIdentity who = host_root(),
        std::uint64_t budget_ns = default_budget_ns);
    ~TestTransport();
    TestTransport(const TestTransport&) = delete;
    TestTransport& operator=(const TestTransport&) = delete;

    Outcome feed(std::span<const std::byte> datagram, std::vector<UniqueFd> fds = {});

    // The devices it serves (tests check what the session left on them).
    std::shared_ptr<engine::DeviceManager> devices() const;

private:
    TestTransport() = default;
    void close();

    Sink sink_;
    std::unique_ptr<PeerTransport> direct_;  // outlives the Server's peers
    std::unique_ptr<Server> server_;
    std::uint64_t peer_ = 0;
    std::uint64_t budget_ns_ = default_budget_ns;
};

}  // namespace vaccel::daemon
