// main.cpp - vaccelctl's command line.
//
// Owns: the wiring of subcommands and options to commands.hpp, and nothing
// else. Decides: a refusal is printed as "vaccelctl: <sentence>" on stderr
// and the exit status is 1; a command line CLI11 cannot parse exits with
// CLI11's status and its message.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"

int main(int argc, char** argv)
{
    using namespace vaccel::ctl;

    CLI::App app{"vaccelctl - inspect vaccel devices and run models on them"};
    app.require_subcommand(1);
    app.fallthrough();  // --verbose also after the subcommand
    bool verbose = false;
    app.add_flag("-v,--verbose", verbose, "say which transport the client uses");

    DevicesOptions devices;
    CLI::App* devices_cmd = app.add_subcommand("devices", "list every device with its "
                                                          "identity, memory, limits and formats");
    devices_cmd->add_flag("--json", devices.json, "print a JSON document instead of text");

    RunOptions run;
    CLI::App* run_cmd = app.add_subcommand("run", "run a TOSA model once or --repeat times and "
                                                  "write its outputs as .npy files");
    run_cmd->add_option("model", run.model, "the model: a TOSA 1.0 flatbuffer file")->required();
    run_cmd
        ->add_option("-i,--input", run.inputs,
                     "NAME=FILE.npy binds the input tensor NAME; a plain FILE.npy binds the "
                     "next unbound input in block order (repeatable)")
        ->expected(1)
        ->allow_extra_args(false)  // one file per --input; the model may follow
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    run_cmd->add_option("-o,--output-dir", run.output_dir,
                        "where outputs go, as <tensor name>.npy (default: the current directory)");
    run_cmd->add_option("-d,--device", run.device,
                        "auto (default), cpu, vulkan:N, cuda:N or an exact device name");
    run_cmd->add_option("-n,--repeat", run.repeat, "run N times; timing reports the median")
        ->check(CLI::Range(1u, 1000000u));
    run_cmd->add_flag("--json", run.json, "print a JSON document instead of the summary line");

    CLI11_PARSE(app, argc, argv);

    Result<void> result;
    if (devices_cmd->parsed()) {
        devices.verbose = verbose;
        result = devices_command(devices);
    } else {
        run.verbose = verbose;
        result = run_command(run);
    }
    if (!result) {
        fmt::print(stderr, "vaccelctl: {}\n", result.error().message);
        return 1;
    }
    return 0;
}
