// main.cpp - the vacceld command line: options, logging, and the server.
//
// Owns nothing beyond argument parsing. Decides the CLI (shared with
// vaccelctl's docs and dist/vacceld.service):
//   vacceld [--socket PATH] [--config PATH] [--admin-group NAME]
//           [--log-level trace|debug|info|warn|error] [--devices cpu,...]
//           [--no-kernel | --kernel | --kernel-only] [--server-node PATH]
//           [--workers-only] [--cdi-spec FILE [--cdi-hook PATH]] [--version]
//   vacceld --check-config FILE
//   vacceld --list-devices [--config PATH] [--devices ...] [--socket PATH]
// The kernel transport (/dev/vaccel-server) is served when the node exists;
// --kernel makes it required, --kernel-only also drops the socket.
// Exit status: 0 after a clean stop (SIGTERM/SIGINT), 1 when it cannot
// start (the reason is logged), 2 for a usage error.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <string>

#include "vaccel.h"  // VACCEL_ABI_MAJOR, VACCEL_ABI_MINOR (--version)
#include <cstdio>

#include "vaccel/cli/usage.hpp"
#include "vaccel/daemon/server.hpp"

int main(int argc, char** argv)
{
    CLI::App app{"vacceld - shares this machine's accelerators among local processes", "vacceld"};
    // VACCEL_VERSION: the project's version (CMakeLists.txt, project()).
    app.set_version_flag("--version", std::string("vacceld " VACCEL_VERSION " (contract ABI ") +
                                          std::to_string(VACCEL_ABI_MAJOR) + "." +
                                          std::to_string(VACCEL_ABI_MINOR) + ")");
    std::string socket;
    std::string config;
    std::string admin_group;
    std::string log_level = "info";
    std::vector<std::string> devices;
    app.add_option("--socket", socket,
                   "client socket path (default: $VACCEL_SOCKET, else the config's, else "
                   "/run/vaccel/vacceld.sock)");
    auto* config_option =
        app.add_option("--config", config, "config file (default /etc/vaccel/vacceld.toml)");
    auto* group_option =
        app.add_option("--admin-group", admin_group, "group whose members may administer");
    app.add_option("--log-level", log_level, "trace, debug, info, warn or error")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
    auto* devices_option =
        app.add_option("--devices", devices, "devices to serve, comma separated (e.g. cpu)")
            ->delimiter(',');
    std::string server_node = "/dev/vaccel-server";
    bool no_kernel_set = false;
    bool kernel_set = false;
    bool kernel_only_set = false;
    auto* no_kernel =
        app.add_flag("--no-kernel", no_kernel_set, "do not serve the vaccel module's node");
    auto* kernel = app.add_flag("--kernel", kernel_set,
                                "fail to start unless the vaccel module's node is served");
    auto* kernel_only = app.add_flag("--kernel-only", kernel_only_set,
                                     "serve only the vaccel module's node (no socket)");
    no_kernel->excludes(kernel)->excludes(kernel_only);
    kernel->excludes(kernel_only);
    app.add_option("--server-node", server_node, "the vaccel module's daemon node")
        ->capture_default_str();
    std::string cdi_spec;
    std::string cdi_hook;
    app.add_option("--cdi-spec", cdi_spec,
                   "write the CDI spec of the served devices to FILE at start and on SIGHUP "
                   "(e.g. /etc/cdi/vaccel.yaml)");
    app.add_option("--cdi-hook", cdi_hook,
                   "the vaccelctl the CDI spec's hooks run (default: the one installed beside "
                   "vacceld)");
    std::string check;
    app.add_option("--check-config", check,
                   "check FILE as the daemon would read it at start (every error with its file "
                   "and line), open nothing, and exit: 0 when it is good, 1 when not");
    bool list = false;
    app.add_flag("--list-devices", list,
                 "open the devices this daemon would serve (its --config and --devices), print "
                 "them and its socket as JSON, close them and exit");
    bool workers_only = false;
    app.add_flag("--workers-only", workers_only,
                 "run every device call on its device's worker, even short ones (ADR 0007)");
    if (const std::optional<int> status = vaccel::cli::parse(app, argc, argv)) return *status;
    if (!check.empty()) {
        auto checked = vaccel::daemon::check_config(check);
        std::fprintf(checked ? stdout : stderr, "vacceld: %s\n",
                     checked ? checked->c_str() : checked.error().c_str());
        return checked ? 0 : 1;
    }

    auto logger = spdlog::stderr_logger_mt("vacceld");
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %l %v");
    logger->set_level(spdlog::level::from_str(log_level));
    logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(logger);

    vaccel::daemon::ServerOptions options;
    options.socket_path = socket;
    if (*config_option) {
        options.config_path = config;
        options.config_required = true;
    }
    if (*devices_option)
        options.devices = devices;
    if (list) {
        // stdout is the document: the backends' notes of opening go to
        // stderr, and only warnings unless --log-level asks for more.
        if (log_level == "info") logger->set_level(spdlog::level::warn);
        auto listed = vaccel::daemon::list_devices(options);
        std::fprintf(listed ? stdout : stderr, listed ? "%s\n" : "vacceld: %s\n",
                     listed ? listed->c_str() : listed.error().c_str());
        return listed ? 0 : 1;
    }


    if (*group_option)
        options.admin_group = admin_group;
    options.handle_signals = true;
    options.server_node = server_node;
    options.short_calls_on_reactor = !workers_only;
    options.cdi_spec = cdi_spec;
    options.cdi_hook = cdi_hook;
    if (no_kernel_set)
        options.kernel = vaccel::daemon::KernelTransport::off;
    else if (kernel_only_set)
        options.kernel = vaccel::daemon::KernelTransport::only;
    else if (kernel_set)
        options.kernel = vaccel::daemon::KernelTransport::required;

    auto server = vaccel::daemon::Server::create(std::move(options));
    if (!server) {
        spdlog::error("vacceld: cannot start: {}", server.error());
        return 1;
    }
    return (*server)->run();
}
