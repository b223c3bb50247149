// cdi_cmd.cpp - `vaccelctl cdi generate` and `vaccelctl cdi hook create|remove`:
// containers get vaccel through the Container Device Interface
// (docs/adr/0023-containers-through-cdi.md).
//
// Owns: the two ends of the CDI spec. Decides:
//  - generate asks the daemon for its devices (admin DEVICES); with
//    --config, or when no daemon answers at the default socket, it asks
//    `vacceld --list-devices` instead, which opens the devices that
//    configuration would serve (the same rules as a starting daemon, in
//    one place: the daemon's) and says the socket it would listen on. A
//    socket named explicitly that does not answer is refused, never
//    replaced. It gives containers /dev/vaccel when that node exists and
//    the daemon's socket otherwise, names this very program (its absolute
//    path) as the hook, and writes the spec atomically (default
//    /etc/cdi/vaccel.yaml; "-" prints it);
//  - hook create/remove read the container's OCI state on stdin (the
//    runtime writes it there) and tell the daemon the container's id and,
//    for create, its first process's pid (a createRuntime hook runs on the
//    host, so the state's pid is the host's); the daemon reads that
//    process's cgroup itself, and accepts the request from an
//    administrator only (root on the host: what the runtime runs hooks as);
//  - a hook that cannot reach the daemon, or is refused, fails (non-zero),
//    so the runtime does not start a container whose limits nobody holds.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "admin_report.hpp"
#include "commands.hpp"
#include "session.hpp"
#include "vaccel/cdi/spec.hpp"

namespace vaccel::ctl {

namespace {

// This program's absolute path, for the spec's hooks.
Result<std::string> own_program()
{
    std::error_code ec;
    const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
        return refuse(fmt::format("cannot tell where vaccelctl is ({}); give --hook-program "
                                  "and --daemon-program",
                                  ec.message()));
    return path.string();
}

// What a spec is made of: the devices, by index and name, and the daemon's socket.
struct Served {
    std::vector<cdi::Device> devices;
    std::string socket;
};

Result<std::vector<cdi::Device>> devices_of(const nlohmann::json& document, std::string_view whose)
{
    std::vector<cdi::Device> devices;
    for (const auto& d : document["devices"]) {
        if (!d.contains("index") || !d["index"].is_number_unsigned())
            return refuse(fmt::format("{} device list has a device without an index", whose));
        cdi::Device device;
        device.index = d["index"].template get<std::uint32_t>();
        device.name = d.contains("name") && d["name"].is_string() ? d["name"].template get<std::string>()
                                                                  : std::string("?");
        devices.push_back(std::move(device));
    }
    return devices;
}

Result<std::vector<cdi::Device>> daemon_devices(Session& session)
{
    auto answer = session.admin(VACCEL_ADMIN_DEVICES, "", "cdi generate");
    if (!answer)
        return std::unexpected(answer.error());
    auto document = admin_document(*answer, "devices", "devices");
    if (!document)
        return std::unexpected(document.error());
    return devices_of(*document, "the daemon's");
}

// vacceld: --daemon-program, else the one installed beside this vaccelctl
// (../sbin from its bin directory), else /usr/sbin/vacceld.
std::string daemon_program(const CdiGenerateOptions& options, const std::string& own)
{
    if (!options.daemon_program.empty()) return options.daemon_program;
    std::error_code ec;
    const auto beside = std::filesystem::path(own).parent_path().parent_path() / "sbin" / "vacceld";
    if (std::filesystem::is_regular_file(beside, ec)) return beside.string();
    return "/usr/sbin/vacceld";
}

// How long `vacceld --list-devices` may take to open and close the devices.
constexpr auto list_deadline = std::chrono::seconds(60);

// Runs `argv` and returns what it wrote on stdout (its stderr is ours);
// refused when it cannot start, fails, or outlives the deadline (then it
// is killed).
Result<std::string> output_of(const std::vector<std::string>& argv)
{
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        return refuse(fmt::format("cannot run {}: {}", argv[0], std::strerror(errno)));
    const pid_t child = ::fork();
    if (child < 0) {
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
        return refuse(fmt::format("cannot run {}: {}", argv[0], std::strerror(errno)));
    }
    if (child == 0) {
        ::dup2(pipe_fds[1], STDOUT_FILENO);
        std::vector<char*> args;
        for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        ::execv(args[0], args.data());
        ::_exit(127);
    }
    ::close(pipe_fds[1]);
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + list_deadline;
    bool late = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            late = true;
            break;
        }
        pollfd p{pipe_fds[0], POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) {
            late = ready == 0;
            break;
        }
        char chunk[4096];
        const ssize_t n = ::read(pipe_fds[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(chunk, static_cast<std::size_t>(n));
    }
    ::close(pipe_fds[0]);
    if (late) ::kill(child, SIGKILL);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (late)
        return refuse(fmt::format("{} did not answer within {} s; it was stopped", argv[0],
                                  list_deadline.count()));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return refuse(fmt::format("cannot run {} (is the vacceld package installed? or give "
                                  "--daemon-program PATH)",
                                  argv[0]));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return refuse(fmt::format("{} failed (its message is above)", argv[0]));
    return out;
}

// The devices and socket `vacceld --list-devices` names for `config` (empty:
// the daemon's default configuration, which may be missing: every device).
Result<Served> configured_devices(const CdiGenerateOptions& options, const std::string& own,
                                  const std::string& config, bool verbose)
{
    std::vector<std::string> argv{daemon_program(options, own), "--list-devices"};
    if (!config.empty()) {
        argv.push_back("--config");
        argv.push_back(config);
    }
    if (const char* socket = std::getenv("VACCEL_SOCKET"); socket != nullptr && *socket != '\0') {
        argv.push_back("--socket");
        argv.push_back(socket);
    }
    if (verbose)
        fmt::print(stderr, "vaccelctl: asking {} which devices {} serves\n", argv[0],
                   config.empty() ? std::string(default_config) : config);
    auto text = output_of(argv);
    if (!text) return std::unexpected(text.error());
    const auto document = nlohmann::json::parse(*text, nullptr, false);
    if (document.is_discarded() || !document.is_object() || !document.contains("devices") ||
        !document["devices"].is_array() || !document.contains("socket") || !document["socket"].is_string())
        return refuse(fmt::format("{} --list-devices printed no device list", argv[0]));
    auto devices = devices_of(document, "vacceld's");
    if (!devices) return std::unexpected(devices.error());
    return Served{std::move(*devices), document["socket"].get<std::string>()};
}

// From the running daemon, else (when its socket was not named and none
// answers, or with --config) from the configuration.
Result<Served> served_devices(const CdiGenerateOptions& options, const std::string& own)
{
    if (!options.config.empty()) return configured_devices(options, own, options.config, options.verbose);
    const char* named = std::getenv("VACCEL_SOCKET");
    const bool explicit_socket = named != nullptr && *named != '\0';
    auto session = Session::open_daemon(options.verbose, "cdi generate");
    if (!session) {
        if (explicit_socket)
            return refuse(fmt::format("{}; or give --config FILE to write the spec from the devices "
                                      "that configuration would serve",
                                      session.error().message));
        if (!options.quiet)
            fmt::print(stderr, "vaccelctl: no daemon at {}; the spec is made from the devices {} "
                               "would serve\n",
                       daemon_socket_path(), default_config);
        return configured_devices(options, own, "", options.verbose);
    }
    auto devices = daemon_devices(*session);
    if (!devices) return std::unexpected(devices.error());
    std::error_code ec;
    return Served{std::move(*devices), std::filesystem::absolute(daemon_socket_path(), ec).string()};
}

// The container's OCI state, as the runtime writes it on the hook's stdin:
// its id and (0 when absent) its first process's pid.
struct OciState {
    std::string id;
    std::uint64_t pid = 0;
};
Result<OciState> state_from_stdin()
{
    const std::string text{std::istreambuf_iterator<char>(std::cin),
                           std::istreambuf_iterator<char>()};
    const auto state = nlohmann::json::parse(text, nullptr, false);
    if (state.is_discarded() || !state.is_object() || !state.contains("id") ||
        !state["id"].is_string())
        return refuse("cdi hook: stdin holds no OCI container state with an \"id\"; this "
                      "command is run by the container runtime from the CDI spec (vaccelctl cdi "
                      "generate), not by hand");
    OciState out{state["id"].get<std::string>()};
    if (state.contains("pid") && state["pid"].is_number_unsigned())
        out.pid = state["pid"].get<std::uint64_t>();
    return out;
}

Result<std::string> ask(bool verbose, std::uint32_t command, const nlohmann::json& request,
                        std::string_view what)
{
    auto session = Session::open_daemon(verbose, what);
    if (!session)
        return std::unexpected(session.error());
    return session->admin(command, request.dump(), what);
}

}  // namespace

Result<void> cdi_generate_command(const CdiGenerateOptions& options)
{
    auto own = own_program();
    if (!own && (options.hook_program.empty() || options.daemon_program.empty()))
        return std::unexpected(own.error());
    auto served = served_devices(options, own ? *own : std::string());
    if (!served)
        return std::unexpected(served.error());
    cdi::SpecInput input;
    input.devices = std::move(served->devices);
    std::error_code ec;
    const std::string node = kernel_device_path();
    if (!options.socket_only && std::filesystem::is_character_file(node, ec))
        input.kernel_node = node;
    input.socket_path = served->socket;
    input.hook_program = options.hook_program.empty() ? *own : options.hook_program;
    input.written_by = "vaccelctl cdi generate";
    if (std::string problem = cdi::input_problem(input); !problem.empty())
        return refuse("cdi generate: " + problem);
    const std::string text = cdi::spec_yaml(input);
    if (options.output == "-") {
        fmt::print("{}", text);
        return {};
    }
    if (std::string error = cdi::write_spec(options.output, text); !error.empty())
        return refuse("cdi generate: " + error + " (writing under /etc/cdi needs root; or give "
                                                 "--output FILE)");
    fmt::print("{}: {} device(s) as {}=all and ={{0..{}}}, through {}\n", options.output,
               input.devices.size(), cdi::kind, input.devices.size() - 1,
               input.kernel_node.empty() ? input.socket_path : input.kernel_node);
    return {};
}

Result<void> cdi_hook_create_command(const CdiHookOptions& options)
{
    auto state = state_from_stdin();
    if (!state)
        return std::unexpected(state.error());
    if (state->pid == 0)
        return refuse("cdi hook create: the OCI state on stdin has no \"pid\"; the CDI spec "
                      "runs this command as a createRuntime hook (vaccelctl cdi generate)");
    const std::string* id = &state->id;
    nlohmann::json request{{"id", state->id}, {"pid", state->pid}};
    if (options.devices == "all") {
        request["devices"] = "all";
    } else {
        std::vector<std::uint32_t> indices;
        std::size_t start = 0;
        while (start <= options.devices.size()) {
            std::size_t end = options.devices.find(',', start);
            if (end == std::string::npos)
                end = options.devices.size();
            const std::string part = options.devices.substr(start, end - start);
            if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos ||
                part.size() > 9)
                return refuse(fmt::format("cdi hook create: --devices '{}' is neither 'all' nor "
                                          "a list of device indices such as 0,2",
                                          options.devices));
            indices.push_back(static_cast<std::uint32_t>(std::stoul(part)));
            start = end + 1;
        }
        request["devices"] = indices;
    }
    auto answer = ask(options.verbose, VACCEL_ADMIN_CONTAINER_ADD, request, "container add");
    if (!answer)
        return refuse(fmt::format("cdi hook: container {} was not registered with vacceld, so "
                                  "it is not started: {} (the daemon's log says why)",
                                  id->substr(0, 12), answer.error().message));
    return {};
}

Result<void> cdi_hook_remove_command(const CdiHookOptions& options)
{
    auto state = state_from_stdin();
    if (!state)
        return std::unexpected(state.error());
    auto answer = ask(options.verbose, VACCEL_ADMIN_CONTAINER_REMOVE, {{"id", state->id}},
                      "container remove");
    if (!answer)
        return std::unexpected(answer.error());
    return {};
}

}  // namespace vaccel::ctl
