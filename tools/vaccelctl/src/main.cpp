// main.cpp - vaccelctl's command line.
//
// Owns: the wiring of subcommands and options to commands.hpp, and nothing
// else. Decides: a refusal is printed as "vaccelctl: <sentence>" on stderr
// and the exit status is 1 (130 for a run stopped by Ctrl-C); a command line that cannot be parsed exits 2
// with a sentence of ours (vaccel/cli/usage.hpp). --socket PATH sets VACCEL_SOCKET for the
// client before any command runs, and, unless VACCEL_TRANSPORT says
// otherwise, the socket transport: the client uses that socket or is
// refused, never the kernel node or the engine in process.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>

#include "commands.hpp"
#include "vaccel/cli/usage.hpp"
#include "vaccel.h"  // uapi first: see the note in session.cpp
#include "vaccel/vaccel.h"

namespace {

using namespace vaccel::ctl;

// --uid/--gid/--cgroup/--default on a `limits set|reset` subcommand.
void add_selector(CLI::App* command, RuleSelector& selector)
{
    command->add_option("--uid", selector.uid, "the rule for clients of this user id");
    command->add_option("--gid", selector.gid, "the rule for clients of this primary group id");
    command->add_option("--cgroup", selector.cgroup,
                        "the rule for clients whose cgroup path starts with PATH");
    command->add_flag("--default", selector.default_rule,
                      "the rule for clients no other rule selects");
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"vaccelctl - inspect vaccel devices, run models on them, and administer "
                 "the vacceld daemon",
                 "vaccelctl"};
    // VACCEL_VERSION: the project's version (CMakeLists.txt, project()).
    app.set_version_flag("--version", std::string("vaccelctl " VACCEL_VERSION " (contract ABI ") +
                                          std::to_string(VACCEL_ABI_MAJOR) + "." +
                                          std::to_string(VACCEL_ABI_MINOR) + ")");
    app.require_subcommand(1);
    app.fallthrough();  // --verbose and --socket also after the subcommand
    bool verbose = false;
    app.add_flag("-v,--verbose", verbose, "say which transport the client uses");
    bool quiet = false;
    app.add_flag("-q,--quiet", quiet, "print no notes on stderr, only refusals");
    std::string socket;
    app.add_option("--socket", socket,
                   "the daemon's socket (sets VACCEL_SOCKET; default " VACCEL_SOCKET_DEFAULT ")");

    DevicesOptions devices;
    CLI::App* devices_cmd = app.add_subcommand("devices", "list every device with its "
                                                          "identity, memory, limits and formats");
    devices_cmd->add_flag("--json", devices.json, "print a JSON document instead of text");
    devices_cmd->add_flag("-L,--list", devices.list,
                          "one line per device: [index] kind:N name (memory, state)");

    RunOptions run;
    CLI::App* run_cmd = app.add_subcommand(
        "run", "run a TOSA model once or --repeat times and write its outputs as .npy files "
               "(through the daemon; in process when no daemon is reachable)");
    run_cmd->add_option("model", run.model,
                        "the model: a TOSA 1.0 flatbuffer file, or an ONNX model (.onnx; imported "
                        "here first, docs/onnx.md)")
        ->required();
    run_cmd
        ->add_option("-i,--input", run.inputs,
                     "NAME=FILE.npy binds the input tensor NAME; a plain FILE.npy binds the "
                     "next unbound input in block order (repeatable)")
        ->expected(1)
        ->allow_extra_args(false)  // one file per --input; the model may follow
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    run_cmd
        ->add_option("--variable", run.variables,
                     "NAME=FILE.npy sets the initial value of the model's variable NAME; every "
                     "variable's final value is written as variable.<NAME>.npy beside the "
                     "outputs (repeatable)")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    run_cmd->add_option("-o,--output-dir", run.output_dir,
                        "where outputs go, as <tensor name>.npy (default: the current directory)");
    run_cmd->add_option("-d,--device", run.device,
                        "auto (default); an index, N or [N] as `devices` prints it; cpu, "
                        "vulkan:N, cuda:N; or a device name (any case; its start is enough)");
    run_cmd->add_option("-n,--repeat", run.repeat, "run N times; timing reports the median")
        ->check(CLI::Range(1u, 1000000u));
    run_cmd->add_option("--warmup", run.warmup,
                        "run N more times first, untimed (caches, clocks, lazily built state)")
        ->check(CLI::Range(0u, 1000000u));
    run_cmd->add_flag("--json", run.json, "print a JSON document instead of the summary line");

    ImportCommandOptions import_options;
    CLI::App* import_cmd = nullptr;
#ifdef VACCEL_HAS_ONNX
    import_cmd = app.add_subcommand(
        "import", "turn an ONNX model into a TOSA file (here, in the client; `run` also takes "
                  ".onnx models directly)");
    import_cmd->add_option("model", import_options.model, "the ONNX model (.onnx)")->required();
    import_cmd->add_option("-o,--output", import_options.output,
                           "the TOSA file to write (default: the model's name with .tosa)");
    import_cmd
        ->add_option("--input-shape", import_options.input_shapes,
                     "NAME=D0,D1,... fixes input NAME's shape (repeatable)")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
#endif

    AdminOptions sessions;
    CLI::App* sessions_cmd = app.add_subcommand(
        "sessions", "list the daemon's sessions: who, their objects, memory, counters and their "
                    "tenant's device time and share");
    sessions_cmd->add_flag("--json", sessions.json, "print the daemon's JSON document");

    CLI::App* limits_cmd = app.add_subcommand("limits", "show or change the daemon's limits");
    limits_cmd->require_subcommand(1);
    AdminOptions limits_get;
    CLI::App* limits_get_cmd = limits_cmd->add_subcommand("get", "list the limit rules");
    limits_get_cmd->add_flag("--json", limits_get.json, "print the daemon's JSON document");
    AdminOptions limits_mine;
    CLI::App* limits_mine_cmd = limits_cmd->add_subcommand(
        "mine", "show the limits and use that apply to you: the rule that selects you, your "
                "tenant's use against its totals on each device you may use, and each "
                "context's caps (any user may run it)");
    limits_mine_cmd->add_flag("--json", limits_mine.json, "print the daemon's JSON document");
    LimitsChangeOptions limits_set;
    CLI::App* limits_set_cmd = limits_cmd->add_subcommand(
        "set", "set limits of one rule (persisted by the daemon): its tenant's totals on each "
               "device across all its sessions, e.g. "
               "limits set --uid 1000 --memory 2G --contexts 4 --events 64 --sessions 8");
    add_selector(limits_set_cmd, limits_set.selector);
    auto& values = limits_set.values;
    limits_set_cmd->add_option("--memory", values.memory,
                               "the tenant's buffer and program bytes on each device: 4096, "
                               "512M, 2G, ...");
    limits_set_cmd->add_option("--contexts", values.contexts, "the tenant's contexts on each device");
    limits_set_cmd->add_option("--buffers", values.buffers, "the tenant's buffers on each device");
    limits_set_cmd->add_option("--programs", values.programs, "the tenant's programs on each device");
    limits_set_cmd->add_option("--queues", values.queues, "the tenant's queues on each device");
    limits_set_cmd->add_option("--events", values.events,
                               "the tenant's events alive on each device");
    limits_set_cmd->add_option("--gates", values.gates, "the tenant's host gates on each device");
    limits_set_cmd->add_option("--sessions", values.sessions,
                               "sessions the tenant may have open at once (default 256)");
    limits_set_cmd->add_option("--weight", values.weight, "share of a busy device, 1..1000");
    limits_set_cmd->add_option("--priority", values.priority,
                               "latency (served before batch work) or batch (the default)");
    limits_set_cmd->add_option("--device-share", values.device_share,
                               "cap on the tenant's share of each device's time, e.g. 30%");
    limits_set_cmd->add_option("--context-memory", values.context_memory,
                               "cap on each single context: buffer and program bytes");
    limits_set_cmd->add_option("--context-buffers", values.context_buffers,
                               "cap on each single context: buffers");
    limits_set_cmd->add_option("--context-programs", values.context_programs,
                               "cap on each single context: programs");
    limits_set_cmd->add_option("--context-queues", values.context_queues,
                               "cap on each single context: queues");
    limits_set_cmd->add_option("--context-events", values.context_events,
                               "cap on each single context: events alive");
    limits_set_cmd->add_option("--context-gates", values.context_gates,
                               "cap on each single context: host gates");
    limits_set_cmd->add_flag("--json", limits_set.json, "print the daemon's JSON answer");
    LimitsChangeOptions limits_reset;
    CLI::App* limits_reset_cmd =
        limits_cmd->add_subcommand("reset", "remove one rule (persisted by the daemon)");
    add_selector(limits_reset_cmd, limits_reset.selector);
    limits_reset_cmd->add_flag("--json", limits_reset.json, "print the daemon's JSON answer");

    AdminOptions tenants;
    CLI::App* tenants_cmd = app.add_subcommand(
        "tenants", "list each tenant (a rule's user, group, cgroup or container) with its "
                   "sessions and its use against its totals on each device");
    tenants_cmd->add_flag("--json", tenants.json, "print the daemon's JSON document");

    AdminOptions containers;
    CLI::App* containers_cmd = app.add_subcommand(
        "containers", "list the containers registered through CDI and the devices each has");
    containers_cmd->add_flag("--json", containers.json, "print the daemon's JSON document");

    CLI::App* cdi_cmd = app.add_subcommand(
        "cdi", "containers through the Container Device Interface (podman --device "
               "vaccel.dev/accel=all)");
    cdi_cmd->require_subcommand(1);
    CdiGenerateOptions cdi_generate;
    CLI::App* cdi_generate_cmd = cdi_cmd->add_subcommand(
        "generate", "write the CDI spec of the daemon's devices (with no daemon running: of "
                    "those its configuration would serve)");
    cdi_generate_cmd
        ->add_option("-o,--output", cdi_generate.output, "the spec file ('-': standard output)")
        ->capture_default_str();
    cdi_generate_cmd->add_option("--hook-program", cdi_generate.hook_program,
                                 "the vaccelctl the hooks run (default: this one)");
    cdi_generate_cmd->add_flag("--socket-only", cdi_generate.socket_only,
                               "give containers the daemon's socket even where /dev/vaccel exists");
    cdi_generate_cmd->add_option("--config", cdi_generate.config,
                                 "the devices this vacceld configuration would serve, not the "
                                 "running daemon's (default when no daemon answers: "
                                 "/etc/vaccel/vacceld.toml)");
    cdi_generate_cmd->add_option("--daemon-program", cdi_generate.daemon_program,
                                 "the vacceld that lists a configuration's devices (default: the "
                                 "one installed beside this vaccelctl, else /usr/sbin/vacceld)");
    CLI::App* cdi_hook_cmd = cdi_cmd->add_subcommand(
        "hook", "run by the container runtime from the spec, with the container's state on stdin");
    cdi_hook_cmd->require_subcommand(1);
    CdiHookOptions cdi_hook;
    CLI::App* cdi_hook_create_cmd = cdi_hook_cmd->add_subcommand(
        "create", "createRuntime: register the container and the devices it was given");
    cdi_hook_create_cmd->add_option("--devices", cdi_hook.devices, "all, or indices: 0,2")
        ->capture_default_str();
    CLI::App* cdi_hook_remove_cmd =
        cdi_hook_cmd->add_subcommand("remove", "poststop: forget the container");

    AdminOptions metrics;
    app.add_subcommand("metrics",
                       "print the daemon's metrics in the Prometheus text exposition format");

    if (const std::optional<int> status = vaccel::cli::parse(app, argc, argv)) return *status;

    // --socket names the transport too: that socket, or a refusal.
    if (!socket.empty()) {
        setenv("VACCEL_SOCKET", socket.c_str(), 1);
        const char* forced = std::getenv("VACCEL_TRANSPORT");
        if (forced == nullptr || forced[0] == '\0') setenv("VACCEL_TRANSPORT", "socket", 1);
    }

    Result<void> result;
    if (devices_cmd->parsed()) {
        devices.verbose = verbose;
        result = devices_command(devices);
    } else if (run_cmd->parsed()) {
        run.verbose = verbose;
        run.quiet = quiet;
        result = run_command(run);
    } else if (import_cmd != nullptr && import_cmd->parsed()) {
        result = import_command(import_options);
    } else if (sessions_cmd->parsed()) {
        sessions.verbose = verbose;
        result = sessions_command(sessions);
    } else if (tenants_cmd->parsed()) {
        tenants.verbose = verbose;
        result = tenants_command(tenants);
    } else if (containers_cmd->parsed()) {
        containers.verbose = verbose;
        result = containers_command(containers);
    } else if (cdi_generate_cmd->parsed()) {
        cdi_generate.verbose = verbose;
        cdi_generate.quiet = quiet;
        result = cdi_generate_command(cdi_generate);
    } else if (cdi_hook_create_cmd->parsed()) {
        cdi_hook.verbose = verbose;
        result = cdi_hook_create_command(cdi_hook);
    } else if (cdi_hook_remove_cmd->parsed()) {
        cdi_hook.verbose = verbose;
        result = cdi_hook_remove_command(cdi_hook);
    } else if (limits_get_cmd->parsed()) {
        limits_get.verbose = verbose;
        result = limits_get_command(limits_get);
    } else if (limits_mine_cmd->parsed()) {
        limits_mine.verbose = verbose;
        result = limits_mine_command(limits_mine);
    } else if (limits_set_cmd->parsed()) {
        limits_set.verbose = verbose;
        result = limits_set_command(limits_set);
    } else if (limits_reset_cmd->parsed()) {
        limits_reset.verbose = verbose;
        result = limits_reset_command(limits_reset);
    } else {
        metrics.verbose = verbose;
        result = metrics_command(metrics);
    }
    if (!result) {
        fmt::print(stderr, "vaccelctl: {}\n", result.error().message);
        return result.error().exit_status;
    }
    return 0;
}
