// cdi_cmd.cpp - `vaccelctl cdi generate` and `vaccelctl cdi hook create|remove`:
// containers get vaccel through the Container Device Interface
// (docs/adr/0023-containers-through-cdi.md).
//
// Owns: the two ends of the CDI spec. Decides:
//  - generate asks the daemon for its devices (admin DEVICES), gives
//    containers /dev/vaccel when that node exists and the daemon's socket
//    otherwise, names this very program (its absolute path) as the hook,
//    and writes the spec atomically (default /etc/cdi/vaccel.yaml; "-"
//    prints it);
//  - hook create/remove read the container's OCI state on stdin (the
//    runtime writes it there) and tell the daemon the container's id and,
//    for create, its first process's pid (a createRuntime hook runs on the
//    host, so the state's pid is the host's); the daemon reads that
//    process's cgroup itself, and accepts the request from an
//    administrator only (root on the host: what the runtime runs hooks as);
//  - a hook that cannot reach the daemon, or is refused, fails (non-zero),
//    so the runtime does not start a container whose limits nobody holds.
#include <unistd.h>

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
        return refuse(fmt::format("cannot tell where vaccelctl is ({}); give --hook-program",
                                  ec.message()));
    return path.string();
}

Result<std::vector<cdi::Device>> daemon_devices(bool verbose)
{
    auto session = Session::open_daemon(verbose, "cdi generate");
    if (!session)
        return std::unexpected(session.error());
    auto answer = session->admin(VACCEL_ADMIN_DEVICES, "", "cdi generate");
    if (!answer)
        return std::unexpected(answer.error());
    auto document = admin_document(*answer, "devices", "devices");
    if (!document)
        return std::unexpected(document.error());
    std::vector<cdi::Device> devices;
    for (const auto& d : (*document)["devices"]) {
        if (!d.contains("index") || !d["index"].is_number_unsigned())
            return refuse("the daemon's device list has a device without an index");
        cdi::Device device;
        device.index = d["index"].template get<std::uint32_t>();
        device.name = d.contains("name") && d["name"].is_string()
                          ? d["name"].template get<std::string>()
                          : std::string("?");
        devices.push_back(std::move(device));
    }
    return devices;
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
    auto devices = daemon_devices(options.verbose);
    if (!devices)
        return std::unexpected(devices.error());
    cdi::SpecInput input;
    input.devices = std::move(*devices);
    std::error_code ec;
    const std::string node = kernel_device_path();
    if (!options.socket_only && std::filesystem::is_character_file(node, ec))
        input.kernel_node = node;
    input.socket_path = std::filesystem::absolute(daemon_socket_path(), ec).string();
    if (options.hook_program.empty()) {
        auto program = own_program();
        if (!program)
            return std::unexpected(program.error());
        input.hook_program = *program;
    } else {
        input.hook_program = options.hook_program;
    }
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
