// server.hpp - vacceld: the engine behind a Unix socket and the vaccel
// module's /dev/vaccel-server, one reactor thread, one worker per device
// (ADR 0006).
//
// Owns the parts and their order: the devices, the reactor, the Dispatcher
// (the one request path, ADR 0020: peers, workers, parked waits and RUNs,
// the chores thread and admin, reaping; core/src/dispatcher.hpp) and the
// transports that feed it - socket connections (connection.hpp) and the
// attached server node (server_node.hpp). Decides only:
//  - start: signals, config, devices, reactor, the server node (unless
//    ServerOptions::kernel says otherwise; another daemon attached leaves
//    this one serving the socket only, unless the node was required), then
//    the socket; the thread that calls run() becomes the reactor thread;
//  - listening: one accept at a time; a connection without credentials is
//    refused;
//  - signals: SIGTERM/SIGINT stop, SIGHUP (request_reload()) re-reads the
//    config on the chores thread;
//  - stop (also request_stop()): stop accepting, close every peer (work in
//    flight finishes and its replies go out; what the module delivers from
//    then on is refused PEER_GONE), then stop the reactor after the chores
//    thread; the server node is closed when run() returns, and run()
//    returns 0.
// Request handling - intake, where each request runs, replies, the end of
// a peer - is the Dispatcher's and its transports'.
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

class Connections;
class Dispatcher;
class ServerNode;

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
    // Where to write the CDI spec of what this daemon serves, at start and
    // on SIGHUP (empty: none; ADR 0023), and the hook program it names
    // (empty: the vaccelctl installed beside vacceld).
    std::string cdi_spec;
    std::string cdi_hook;
    // Off: no listening socket; the server is driven by a TestTransport
    // (test_transport.hpp) on the caller's thread, never by run().
    bool listen = true;
};

// vacceld --check-config: reads `path` as the daemon would at start (its
// schema, rules and [daemon] keys, each error with the file and line) and
// checks what the backends would refuse of [daemon] devices and the
// [devices.NAME] tables, without opening a device or a socket. A line
// saying what the file sets when it is good; else the first refusal, as
// the daemon would log it.
std::expected<std::string, std::string> check_config(const std::filesystem::path& path);

// vacceld --list-devices: opens the devices a daemon started with `options`
// would serve (its config, --devices), and closes them again, opening no
// socket: the admin DEVICES document of them with "socket", the absolute
// path that daemon would listen on (what `vaccelctl cdi generate` writes a
// spec from when no daemon runs). Else the refusal the daemon would log.
std::expected<std::string, std::string> list_devices(const ServerOptions& options);

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

    Server() = default;

    void arm_accept();
    void on_accept(int res);
    void arm_signal_read();
    void on_signal(int res);
    void begin_stop();
    void finish_stop();
    // The STATUS= line for the service manager: devices and where served.
    std::string serving_status() const;
    // Writes options_.cdi_spec when set; the error is a sentence, or empty.
    std::string publish_cdi() const;

    ServerOptions options_;
    std::string socket_path_;
    std::uint64_t started_ns_ = 0;

    // Destruction order (members are destroyed bottom-up): the dispatcher
    // (its peers, then its queues, joined: every job ran), the socket
    // transport, the server node (its descriptor, borrowed by jobs, outlives
    // them; its slot buffers are never freed), the reactor, and last the
    // devices.
    std::shared_ptr<engine::DeviceManager> devices_;
    std::unique_ptr<Reactor> reactor_;
    std::unique_ptr<ServerNode> node_;  // null: no kernel transport
    std::unique_ptr<Connections> connections_;
    std::unique_ptr<Dispatcher> dispatcher_;

    UniqueFd listen_fd_;
    UniqueFd signal_fd_;
    signalfd_siginfo signal_info_{};
    OpId accept_op_ = 0;
    bool accepting_ = false;
    bool stopping_ = false;
    bool stop_finishing_ = false;
};

}  // namespace vaccel::daemon
