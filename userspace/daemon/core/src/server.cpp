// server.cpp - vacceld's start, listening socket, signals and stop.
//
// Decides the order of the start: signals, config, devices, reactor, the
// socket, then the server node (kernel transport): a start refused because
// another vacceld serves the socket leaves /dev/vaccel-server untouched.
// Decides the socket: SOCK_SEQPACKET, mode 0666 (every local user is a
// client; admin rights are checked per message), inside a directory created
// 0755 when missing. A socket file left by a dead daemon is replaced; one a
// live daemon listens on is not. "Live" is decided by the listener's
// process, not by connect() alone: a killed daemon's listening socket can
// outlive its process for a moment (io_uring tears the ring and the accept
// it holds down after the exit), so a connect() that succeeds names a
// stale socket when the process that listened on it is gone or a zombie.
#include "vaccel/daemon/server.hpp"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cdi_publish.hpp"
#include "connection.hpp"
#include "dispatcher.hpp"
#include "server_node.hpp"
#include "service_notify.hpp"
#include "vaccel/daemon/admin.hpp"
#include "vaccel/daemon/peer.hpp"

namespace vaccel::daemon {

namespace {

std::string errno_text(int error) { return std::system_category().message(error); }

// Whether the process that listens behind the connected `probe` still
// runs: its pid (SO_PEERCRED: the listener's, taken at listen()) exists
// and is no zombie. A pid this namespace cannot see (0), or one that
// cannot be asked, counts as alive: refusing to start is the safe answer.
bool listener_alive(int probe)
{
    ucred peer{};
    socklen_t length = sizeof peer;
    if (::getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || peer.pid <= 0)
        return true;
    if (::kill(peer.pid, 0) != 0 && errno == ESRCH)
        return false;
    // /proc/PID/stat: "PID (COMM) STATE ..."; COMM may hold spaces and ')'.
    std::FILE* stat = std::fopen(fmt::format("/proc/{}/stat", peer.pid).c_str(), "re");
    if (stat == nullptr)
        return errno != ENOENT;
    char line[512] = {};
    const bool read = std::fgets(line, sizeof line, stat) != nullptr;
    std::fclose(stat);
    const char* end = read ? std::strrchr(line, ')') : nullptr;
    if (end == nullptr || end[1] != ' ')
        return true;
    return end[2] != 'Z' && end[2] != 'X';
}

std::expected<UniqueFd, std::string> listen_on(const std::string& path)
{
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof address.sun_path)
        return std::unexpected(fmt::format(
            "socket path '{}' is empty or longer than {} bytes; choose a shorter --socket", path,
            sizeof address.sun_path - 1));
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);

    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) {
        std::error_code ec;
        if (!std::filesystem::exists(parent, ec)) {
            std::filesystem::create_directories(parent, ec);
            if (ec)
                return std::unexpected(fmt::format("cannot create the socket directory {}: {}",
                                                   parent.string(), ec.message()));
            ::chmod(parent.c_str(), 0755);
        }
    }

    UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!fd)
        return std::unexpected("cannot create a socket: " + errno_text(errno));
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return std::unexpected(fmt::format(
                "{} exists and is not a socket; remove it or choose another --socket", path));
        UniqueFd probe(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
        if (probe && ::connect(probe.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
            listener_alive(probe.get()))
            return std::unexpected(fmt::format(
                "another vacceld is serving {}; stop it first or choose another --socket", path));
        ::unlink(path.c_str());  // left by a daemon that is gone
    }
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
        return std::unexpected(fmt::format("cannot bind {}: {}", path, errno_text(errno)));
    ::chmod(path.c_str(), 0666);
    if (::listen(fd.get(), 128) != 0)
        return std::unexpected(fmt::format("cannot listen on {}: {}", path, errno_text(errno)));
    return fd;
}

sigset_t served_signals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    return set;
}

// A backend's refusal of its settings or of the device list: its own
// sentence, which names the [devices.NAME] key or the pattern, without the
// contract's field words (they describe a struct no operator wrote).
std::string setting_refusal(const Error& e)
{
    return e.note.empty() ? describe(e) : e.note;
}

// "FILE:LINE: note" for a refusal of a [devices.NAME] setting: its note
// begins "[devices.NAME] KEY " (vaccel/backend/registry.hpp), and the
// parser kept where that key (else the table) stood; "FILE: note" else.
std::string located_refusal(const std::filesystem::path& file, const DaemonSettings& settings,
                            const Error& e)
{
    const std::string note = setting_refusal(e);
    constexpr std::string_view prefix = "[devices.";
    std::uint32_t line = 0;
    if (note.starts_with(prefix)) {
        const std::size_t close = note.find(']');
        if (close != std::string::npos) {
            const std::string_view rest = std::string_view(note).substr(close + 1);
            const std::string_view name = std::string_view(note).substr(prefix.size(), close - prefix.size());
            const std::string_view key = rest.starts_with(' ') ? rest.substr(1, rest.find(' ', 1) - 1) : "";
            line = settings.backend_lines.line_of(name, key);
            if (line == 0) line = settings.backend_lines.line_of(name);
        }
    }
    return line != 0 ? fmt::format("{}:{}: {}", file.string(), line, note)
                     : fmt::format("{}: {}", file.string(), note);
}

// Devices: --devices, else the config's list, else every device found;
// each backend with its [devices.NAME] settings (--cpu-threads, when
// given, overrides [devices.cpu] threads).
backend::Selection selection_of(const DaemonSettings& settings, const ServerOptions& options)
{
    backend::Selection selection;
    if (const auto wanted = options.devices ? options.devices : settings.devices)
        selection.devices = *wanted;
    for (const auto& [name, values] : settings.backends)
        selection.settings[name] = backend::Settings(values.begin(), values.end());
    if (options.cpu_threads != 0)
        selection.settings["cpu"]["threads"] = std::to_string(options.cpu_threads);
    selection.state_dir = settings.state_dir;
    return selection;
}

// --socket, else $VACCEL_SOCKET, else the config's [daemon] socket.
std::string socket_path_of(const ServerOptions& options, const DaemonSettings& settings)
{
    if (!options.socket_path.empty()) return options.socket_path;
    if (const char* env = std::getenv("VACCEL_SOCKET"); env != nullptr && *env != '\0') return env;
    return settings.socket;
}

// The config file a daemon with `options` reads: one given explicitly must
// exist; the default one may be missing (every device, default limits).
std::expected<ConfigFile, std::string> open_config(const ServerOptions& options)
{
    std::error_code ec;
    if (options.config_required && !std::filesystem::exists(options.config_path, ec))
        return std::unexpected(fmt::format("config file {} does not exist",
                                           options.config_path.string()));
    auto config = ConfigFile::open(options.config_path);
    if (!config) return std::unexpected(config.error().message());
    return std::move(*config);
}

// The devices a daemon with `options` and `settings` serves, opened.
std::expected<std::shared_ptr<engine::DeviceManager>, std::string> open_served_devices(
    const ServerOptions& options, const DaemonSettings& settings)
{
    auto devices = engine::DeviceManager::open(selection_of(settings, options));
    if (devices) return std::move(*devices);
    // A setting's refusal names its line; any other says where devices are chosen.
    if (setting_refusal(devices.error()).starts_with("[devices."))
        return std::unexpected(fmt::format(
            "no device to serve: {}", located_refusal(options.config_path, settings, devices.error())));
    return std::unexpected(fmt::format("no device to serve: {} (in {}, or --devices)",
                                       setting_refusal(devices.error()),
                                       options.config_path.string()));
}

}  // namespace

std::expected<std::string, std::string> check_config(const std::filesystem::path& path)
{
    auto config = load_config(path);
    if (!config) return std::unexpected(config.error().message());
    if (auto ok = backend::check_selection(selection_of(config->daemon, ServerOptions{})); !ok)
        return std::unexpected(located_refusal(path, config->daemon, ok.error()));
    const DaemonSettings& d = config->daemon;
    std::string devices = "every device found";
    if (d.devices) {
        devices.clear();
        for (const std::string& p : *d.devices) devices += (devices.empty() ? "" : ", ") + p;
    }
    return fmt::format("{}: good: {} rule{}, devices: {}, socket {}", path.string(),
                       config->policy.rules().size(), config->policy.rules().size() == 1 ? "" : "s",
                       devices, d.socket);
}

std::expected<std::string, std::string> list_devices(const ServerOptions& options)
{
    auto config = open_config(options);
    if (!config) return std::unexpected(config.error());
    const DaemonSettings& settings = config->config().daemon;
    auto devices = open_served_devices(options, settings);
    if (!devices) return std::unexpected(devices.error());
    nlohmann::json document = nlohmann::json::parse(devices_document(**devices));
    std::error_code ec;
    document["socket"] = std::filesystem::absolute(socket_path_of(options, settings), ec).string();
    return document.dump();
}

std::expected<std::unique_ptr<Server>, std::string> Server::create(ServerOptions options)
{
    std::unique_ptr<Server> server(new Server());
    server->started_ns_ = monotonic_now_ns();

    // Signals first: threads started below inherit the mask, so only the
    // signalfd ever sees them.
    if (options.handle_signals) {
        const sigset_t set = served_signals();
        pthread_sigmask(SIG_BLOCK, &set, nullptr);
        server->signal_fd_.reset(::signalfd(-1, &set, SFD_CLOEXEC));
        if (!server->signal_fd_)
            return std::unexpected("cannot create a signalfd: " + errno_text(errno));
    }

    auto config = open_config(options);
    if (!config)
        return std::unexpected(config.error());
    const DaemonSettings settings = config->config().daemon;

    auto devices = open_served_devices(options, settings);
    if (!devices)
        return std::unexpected(devices.error());
    server->devices_ = std::move(*devices);

    auto policy = std::make_shared<PolicyStore>(config->config().policy);

    // Receive buffers shared by every connection; a message is copied out
    // of its buffer as it is taken, so few are needed.
    auto reactor = Reactor::create(512, ReceiveBuffers{64, max_message_bytes});
    if (!reactor)
        return std::unexpected("cannot start io_uring: " + errno_text(-reactor.error()));
    server->reactor_ = std::move(*reactor);
    const bool multishot = options.multishot_receive && server->reactor_->multishot_receive();

    server->options_ = std::move(options);
    const ServerOptions& opts = server->options_;
    // The socket before the server node: a daemon that another one's
    // socket refuses has not attached (and detached) the module meanwhile.
    // A node that fails after this unlinks the socket (~Server).
    if (opts.kernel != KernelTransport::only && opts.listen) {
        server->socket_path_ = socket_path_of(opts, settings);
        auto listening = listen_on(server->socket_path_);
        if (!listening)
            return std::unexpected(listening.error());
        server->listen_fd_ = std::move(*listening);
    }

    auto node = ServerNode::attach(opts, *server->reactor_);
    if (!node)
        return std::unexpected(node.error());
    server->node_ = std::move(*node);

    Dispatcher::Parts parts;
    parts.reactor = server->reactor_.get();
    parts.devices = server->devices_;
    parts.limits = std::make_shared<PolicyLimits>(policy);
    auto containers = std::make_shared<ContainerRegistry>();
    auto tenants = std::make_shared<engine::Tenants>(server->devices_->count());
    parts.admin = std::make_unique<AdminService>(server->devices_, policy, std::move(*config),
                                                 opts.admin_group, server->started_ns_,
                                                 containers, tenants);
    parts.containers = std::move(containers);
    parts.tenants = std::move(tenants);
    parts.policy = std::move(policy);
    parts.short_calls_on_reactor = opts.short_calls_on_reactor;
    server->dispatcher_ = std::make_unique<Dispatcher>(std::move(parts));
    server->connections_ =
        std::make_unique<Connections>(*server->dispatcher_, *server->reactor_, multishot);
    if (server->node_)
        server->node_->serve(*server->dispatcher_);
    if (std::string error = server->publish_cdi(); !error.empty())
        return std::unexpected(fmt::format("cannot write the CDI spec {}: {}", opts.cdi_spec, error));
    return server;
}

std::string Server::publish_cdi() const
{
    if (options_.cdi_spec.empty())
        return {};
    if (!listen_fd_)
        return "the daemon serves no socket, and containers' CDI hooks reach it there; drop "
               "--kernel-only";
    std::error_code ec;
    CdiPublication what{options_.cdi_spec, options_.cdi_hook,
                        std::filesystem::absolute(socket_path_, ec).string(), node_ != nullptr};
    if (std::string error = publish_cdi_spec(what, *devices_); !error.empty())
        return error;
    spdlog::info("vacceld: CDI spec {} written ({} device(s))", options_.cdi_spec,
                 devices_->count());
    return {};
}

Server::~Server()
{
    // The dispatcher's threads join first (~Dispatcher), while the server
    // node and the reactor still exist.
    dispatcher_.reset();
    if (listen_fd_)
        ::unlink(socket_path_.c_str());
}

int Server::run()
{
    arm_accept();
    // The first FETCH names the calling thread the module's serving thread.
    if (node_)
        node_->arm_fetches();
    if (signal_fd_)
        arm_signal_read();
    if (listen_fd_ && node_)
        spdlog::info("vacceld: serving {} device(s) on {} and {}", devices_->count(), socket_path_,
                     node_->node_path());
    else
        spdlog::info("vacceld: serving {} device(s) on {}", devices_->count(),
                     listen_fd_ ? socket_path_ : node_->node_path());
    // Serving: the socket listens (since create()) and the fetches are armed.
    notify_service("READY=1\nSTATUS=" + serving_status());
    const int ret = reactor_->run();
    // Every request the module delivered was answered (or the loop failed).
    // Detached while the ring still exists: the module fails whatever
    // reaches the node from now on, and a replacement daemon may attach at
    // once.
    if (node_)
        node_->detach();
    if (ret < 0) {
        spdlog::error("vacceld: the io_uring loop failed: {}", errno_text(-ret));
        return 1;
    }
    spdlog::info("vacceld: stopped");
    return 0;
}

std::string Server::serving_status() const
{
    std::string where;
    if (listen_fd_)
        where = socket_path_;
    if (node_)
        where += (where.empty() ? "" : " and ") + node_->node_path();
    else if (options_.kernel != KernelTransport::off)
        where += " (socket only: " + options_.server_node + " not attached)";
    return fmt::format("serving {} device(s) on {}", devices_->count(), where);
}

void Server::request_stop()
{
    reactor_->post([this] { begin_stop(); });
}

void Server::request_reload()
{
    reactor_->post([this] { dispatcher_->reload(); });
}

void Server::arm_accept()
{
    if (stopping_ || accepting_ || !listen_fd_)
        return;
    auto op = reactor_->accept(listen_fd_.get(), [this](int res) { on_accept(res); });
    if (!op) {
        spdlog::error("vacceld: cannot accept connections: {}", errno_text(-op.error()));
        return;
    }
    accept_op_ = *op;
    accepting_ = true;
}

void Server::on_accept(int res)
{
    accepting_ = false;
    if (stopping_) {
        if (res >= 0)
            ::close(res);
        return;
    }
    if (res < 0) {
        spdlog::warn("vacceld: accept failed: {}; retrying in 100 ms", errno_text(-res));
        (void)reactor_->timeout_at(monotonic_now_ns() + 100'000'000u, [this](int) { arm_accept(); });
        return;
    }
    UniqueFd fd(res);
    // A peer whose identity cannot be read as it is (peer.hpp) gets no
    // session: its connection is closed, and the log says why.
    auto identity = peer_identity(fd.get());
    if (!identity) {
        spdlog::warn("vacceld: a connection was refused: {}", identity.error());
        arm_accept();
        return;
    }
    connections_->open(std::move(fd), *identity);
    arm_accept();
}

void Server::arm_signal_read()
{
    auto buffer = std::as_writable_bytes(std::span(&signal_info_, 1));
    auto op = reactor_->read(signal_fd_.get(), buffer, [this](int res) { on_signal(res); });
    if (!op && op.error() != -ECANCELED)
        spdlog::error("vacceld: cannot watch signals: {}", errno_text(-op.error()));
}

void Server::on_signal(int res)
{
    if (res == -ECANCELED)
        return;
    if (res == static_cast<int>(sizeof signal_info_)) {
        switch (signal_info_.ssi_signo) {
        case SIGTERM:
        case SIGINT:
            spdlog::info("vacceld: {} received: stopping", strsignal(static_cast<int>(signal_info_.ssi_signo)));
            begin_stop();
            break;
        case SIGHUP:
            spdlog::info("vacceld: SIGHUP received: reloading {}", options_.config_path.string());
            notify_service(fmt::format("RELOADING=1\nMONOTONIC_USEC={}\nSTATUS=reloading {}",
                                       monotonic_now_ns() / 1000, options_.config_path.string()));
            dispatcher_->reload();
            if (std::string error = publish_cdi(); !error.empty())
                spdlog::error("vacceld: the CDI spec {} was not refreshed: {}", options_.cdi_spec,
                              error);
            // The reload runs on the chores thread; READY once it ran.
            dispatcher_->after_chores([this] {
                notify_service("READY=1\nSTATUS=" + serving_status());
            });
            break;
        default:
            break;
        }
    }
    if (!stop_finishing_)
        arm_signal_read();
}

void Server::begin_stop()
{
    if (stopping_)
        return;
    stopping_ = true;
    notify_service("STOPPING=1\nSTATUS=stopping: finishing the work in flight");
    if (accepting_)
        reactor_->cancel(accept_op_);
    // No new client can reach us once the path is gone.
    if (listen_fd_)
        ::unlink(socket_path_.c_str());
    dispatcher_->close_all([this] { finish_stop(); });
}

void Server::finish_stop()
{
    if (stop_finishing_)
        return;
    stop_finishing_ = true;
    // After every admin job queued so far (a LIMITS_SET persisting).
    dispatcher_->after_chores([this] { reactor_->stop(); });
}

}  // namespace vaccel::daemon
