// inline_endpoint.hpp - the daemon's request path without sockets or
// threads of its own: the entry point of the fuzz target and of tests that
// need the daemon's intake and dispatch but not its reactor.
//
// Owns: a CPU device (one thread), one Session, an AdminService over a
// config file, all on the caller's thread. Decides: feed() takes one
// datagram (and the descriptors that came with it) exactly as a connection
// of vacceld does - strict intake (take_request), ADMIN through the admin
// service, every other op through execute() - and returns the replies, or
// that the connection would be closed and why. The one difference from the
// daemon: an EVENT_WAIT is looked at once and answered at once (done, or
// DeadlineExpired / VACCEL_D_WAIT_TIMEOUT), never parked.
#pragma once

#include <expected>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vaccel/daemon/admin.hpp"
#include "vaccel/daemon/exchange.hpp"

namespace vaccel::daemon {

class InlineEndpoint {
public:
    struct Outcome {
        bool closed = false;         // the daemon would close the connection
        std::string reason;          // why (closed only)
        std::vector<Reply> replies;  // what it would send
    };

    // `config_path` need not exist (default limits); LIMITS_SET writes it.
    // `who` is the peer's identity (uid 0 may administer).
    static std::expected<std::unique_ptr<InlineEndpoint>, std::string> create(
        const std::filesystem::path& config_path, engine::SessionIdentity who = {});

    Outcome feed(std::span<const std::byte> datagram, std::vector<UniqueFd> fds = {});

    engine::Session& session() { return *session_; }

    // The devices it serves (tests check what the session left on them).
    std::shared_ptr<engine::DeviceManager> devices() const { return devices_; }

private:
    InlineEndpoint() = default;

    std::shared_ptr<engine::DeviceManager> devices_;
    std::shared_ptr<PolicyStore> policy_;
    std::unique_ptr<AdminService> admin_;
    std::shared_ptr<engine::Session> session_;
};

}  // namespace vaccel::daemon
