// server.hpp - vacceld: the engine behind a Unix socket and the vaccel
// module's /dev/vaccel-server, one reactor thread, one worker per device
// (ADR 0006).
//
// Owns: the reactor, the listening socket, the attached server node and its
// slots, every client session (a peer: a socket connection or a session the
// module opened) and its engine Session, one WorkQueue per device, the
// chores thread (admin channel, config persistence and reloads, session
// teardown) and the signalfd. Decides:
//  - threads: the thread that calls run() becomes the reactor thread and
//    owns sockets, timers, the server node's commands, peers and parked
//    waits; it never blocks on a device, a session lock or a file fsync.
//    Device work runs on that device's worker (lane = session, weighted by
//    the session's policy weight); admin documents, persistence and
//    Session destruction on the chores thread. Results come back by
//    Reactor::post().
//  - two transports, one request path: a request is checked as strictly
//    on either (take_request / take_kernel_request), then dispatched,
//    parked and answered by the same code; only where its payload lies and
//    how its reply is delivered differ (exchange.hpp, peers.hpp).
//  - the kernel transport (uapi/vaccel_server.h): when the node exists (and
//    unless ServerOptions::kernel says otherwise) it is opened at start;
//    one FETCH per slot (VACCEL_SRV_MAX_SLOTS) is parked by the reactor
//    thread, which is the only thread that ever issues a uring_cmd.
//    Payloads move by pread/pwrite on the node from the device workers.
//    SESSION_OPEN makes a peer with the identity the module reports;
//    SESSION_CLOSE is answered at once and the peer then ends like a
//    closed connection. Another daemon attached (-EBUSY) leaves this one
//    serving the socket only, unless the kernel transport was required.
//  - a malformed socket message closes only its connection (logged with the
//    reason); a well-formed request always gets exactly one reply with its
//    seq, in whatever order the work finishes. Every request the module
//    delivers is answered exactly once (a refusal if it fails a check).
//  - EVENT_WAIT never blocks a thread: the wait is looked at on the device's
//    worker (Session::check_wait), parked in the reactor when not done, and
//    looked at again after a completion or at its absolute timeout
//    (DeadlineExpired / VACCEL_D_WAIT_TIMEOUT).
//  - a peer that ends (EOF, error, kill -9 of the client, a malformed
//    message, SESSION_CLOSE) stops taking requests; its work in flight
//    finishes; then its Session is destroyed on the chores thread, which
//    waits for its pending events and releases everything it owned.
//  - stop (SIGTERM, SIGINT, request_stop()): stop accepting, refuse what
//    the module delivers from then on (DeviceLost / VACCEL_D_PEER_GONE),
//    answer parked waits the same way, let work in flight finish and its
//    replies go out, close every connection, release every session, close
//    the server node (the module fails whatever reaches it afterwards), then
//    run() returns 0. SIGHUP (request_reload()) re-reads the config.
//
// Backpressure: at most max_outstanding requests of one connection are in
// the daemon at once; beyond that its socket is not read until some finish.
// The module holds at most VACCEL_SRV_MAX_SLOTS requests in the daemon.
#pragma once

#include <sys/signalfd.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "vaccel/daemon/admin.hpp"
#include "vaccel/daemon/exchange.hpp"
#include "vaccel/daemon/policy_limits.hpp"
#include "vaccel/daemon/reactor.hpp"
#include "vaccel/daemon/work_queue.hpp"
#include "vaccel/engine/device_manager.hpp"

namespace vaccel::daemon {

// Whether vacceld serves the vaccel module's /dev/vaccel-server.
enum class KernelTransport {
    automatic,  // when the node exists; a busy or unopenable node is logged, the socket serves
    required,   // fail to start unless attached
    only,       // required, and no socket
    off,        // never (--no-kernel)
};

struct RunStep;  // one step of a parked RUN (runs.cpp)

// How a peer reached the daemon (peers.hpp); `direct`: a TestTransport.
enum class Transport : std::uint8_t { socket, kernel, direct };

struct ServerOptions {
    KernelTransport kernel = KernelTransport::automatic;
    std::string server_node = "/dev/vaccel-server";
    // Empty: $VACCEL_SOCKET, else the config's [daemon] socket, else
    // /run/vaccel/vacceld.sock.
    std::string socket_path;
    std::filesystem::path config_path{std::string(default_config_path)};
    // A config file given explicitly must exist; the default one may be
    // missing (every device, default limits).
    bool config_required = false;
    std::optional<std::string> admin_group;                 // overrides the config's
    std::optional<std::vector<std::string>> devices;        // overrides the config's
    // Block SIGTERM/SIGINT/SIGHUP and serve them through a signalfd. Off for
    // a daemon embedded in a test, which calls request_stop() instead.
    bool handle_signals = false;
    unsigned cpu_threads = 0;  // 0 = hardware concurrency
    // Short calls may run on the reactor when their worker is idle (ADR
    // 0007). Off: every device call goes through its worker (the baseline
    // the round-trip benchmark compares with).
    bool short_calls_on_reactor = true;
    // Socket receives are multishot into the reactor's provided buffers
    // where the kernel has them. Off: one single-shot receive per message,
    // what kernels without multishot recvmsg get (tests cover both).
    bool multishot_receive = true;
    // Off: no listening socket; the server is driven by a TestTransport
    // (test_transport.hpp) on the caller's thread, never by run().
    bool listen = true;
};

class Server {
public:
    static constexpr std::size_t max_outstanding = 256;
    // The largest datagram a client may send: header, struct, inline payload.
    static constexpr std::size_t max_message_bytes =
        sizeof(vaccel_msg_header) + 4096 + VACCEL_MSG_INLINE_MAX;

    // Opens the devices, reads the config and binds the socket. The error is
    // a sentence for the operator.
    static std::expected<std::unique_ptr<Server>, std::string> create(ServerOptions options);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Serves until stopped; the calling thread becomes the reactor thread.
    // Returns the process exit status (0 after a clean stop).
    int run();
    // Any thread, also before run().
    void request_stop();
    void request_reload();

    // Empty when serving the kernel transport only.
    const std::string& socket_path() const { return socket_path_; }
    // Whether /dev/vaccel-server is attached (known after create()).
    bool kernel_attached() const { return node_ != nullptr; }
    std::uint32_t device_count() const { return devices_->count(); }

private:
    friend class TestTransport;
    struct Peer;
    struct ParkedWait;
    struct Reaping;
    struct ServerNode;

    Server() = default;

    // Listening and signals.
    void arm_accept();
    void on_accept(int res);
    void arm_signal_read();
    void on_signal(int res);
    void begin_stop();
    void finish_stop();

    // Socket connections (connection.cpp).
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

    // The kernel transport (server_node.cpp).
    std::expected<void, std::string> attach_server_node();
    void arm_fetches();
    void slot_command(std::uint32_t slot, std::uint32_t op);
    void on_slot_done(std::uint32_t slot, int res);
    void on_delivered(std::uint32_t slot, std::span<const std::byte> message);
    void on_session_open(std::uint32_t slot, std::span<const std::byte> message);
    void on_session_close(std::uint32_t slot, std::span<const std::byte> message);
    void commit(Reply reply);
    void detach_server_node();

    // Every peer, whatever its transport (peers.cpp).
    // A new peer with its own Session, not yet reading anything.
    Peer& add_peer(Transport transport, const engine::SessionIdentity& who);
    // `request` may be moved from (work that outlives the call takes it).
    void dispatch(Peer& c, Request& request);
    void run_on_device(Peer& c, std::uint32_t device, Request& request);
    // The device's worker is idle and the peer has nothing in flight: a
    // short call may run on the reactor (ADR 0007).
    bool worker_free_for(const Peer& c, std::uint32_t device) const;
    void run_admin(Peer& c, std::shared_ptr<Request> request);
    void post_reply(std::uint64_t id, Reply reply);
    void on_job_done(std::uint64_t id, Reply reply);
    // Delivers `reply` the peer's way (socket send, or commit on its slot);
    // `reply` is left empty, its buffer kept when it went out at once.
    void deliver(Peer& c, Reply& reply);
    void queue_reply(Peer& c, Reply reply);
    void close_peer(Peer& c, std::string_view reason, bool flush);
    // Removes `c` when nothing of it is in flight. `c` is invalid afterwards.
    void maybe_finish(Peer& c);
    std::vector<SessionEntry> live_sessions() const;
    Peer* find(std::uint64_t id);

    // Parked waits (waits.cpp).
    void start_wait(Peer& c, Request request);
    void check_wait(Peer& c, std::uint64_t wait_id);
    void on_wait_checked(std::uint64_t id, std::uint64_t wait_id,
                         Result<engine::WaitProgress> progress);
    void on_wait_woken(std::uint64_t id, std::uint64_t wait_id);
    void on_wait_timer(std::uint64_t id, std::uint64_t wait_id, int res);
    void answer_wait(Peer& c, std::uint64_t wait_id, Reply reply);

    // RUN parked until its work ends (runs.cpp).
    void start_run(Peer& c, Request request);
    void step_run(Peer& c, std::uint64_t wait_id);
    void on_run_stepped(std::uint64_t id, std::uint64_t wait_id, std::shared_ptr<RunStep> step);

    // SESSION_NOTIFY: the session's notify file, passed to the client.
    Reply notify_reply(Peer& c, const Request& request);

    // Teardown of a gone client's session (reaper.cpp).
    void reap(std::uint64_t id, std::shared_ptr<engine::Session> session);
    void reap_look(std::uint64_t id);
    void on_reap_looked(std::uint64_t id, bool quiet);
    void on_reap_woken(std::uint64_t id);

    ServerOptions options_;
    std::string socket_path_;
    std::uint64_t started_ns_ = 0;

    // Ownership and destruction order (members are destroyed bottom-up):
    // peers, then the queues (joined: every job ran, every Session
    // released), then the admin service, the server node (its descriptor,
    // borrowed by jobs through ServerSlot, outlives them; its slot buffers
    // are never freed), the reactor, and last the devices.
    std::shared_ptr<engine::DeviceManager> devices_;
    std::shared_ptr<PolicyStore> policy_;
    std::shared_ptr<const engine::LimitPolicy> limits_;
    std::unique_ptr<Reactor> reactor_;
    std::unique_ptr<ServerNode> node_;  // null: no kernel transport
    std::unique_ptr<AdminService> admin_;  // used on the chores thread only
    std::unique_ptr<WorkQueue> chores_;
    std::vector<std::unique_ptr<WorkQueue>> workers_;  // index = device index
    // Session teardowns, one queue per device (index = device index).
    std::vector<std::unique_ptr<WorkQueue>> reapers_;

    UniqueFd listen_fd_;
    UniqueFd signal_fd_;
    signalfd_siginfo signal_info_{};
    OpId accept_op_ = 0;
    bool multishot_ = false;  // socket receives are multishot (reactor buffers)
    bool accepting_ = false;
    bool stopping_ = false;
    bool stop_finishing_ = false;

    std::uint64_t next_peer_ = 1;
    std::unordered_map<std::uint64_t, std::unique_ptr<Peer>> peers_;
    // Sessions being torn down, by peer id (reactor thread only). Cleared in
    // ~Server after the reapers joined and before the devices go: a session
    // still there is then destroyed on the calling thread, waiting for its
    // running work.
    std::unordered_map<std::uint64_t, Reaping> reaping_;
};

}  // namespace vaccel::daemon
