// commands.hpp - the vaccelctl subcommands, as main() calls them.
//
// Owns: the options of each subcommand after parsing. Decides: a command
// prints its result on stdout and returns; a refusal comes back to main(),
// which prints it and exits non-zero.
#pragma once

#include <string>
#include <vector>

#include "admin_documents.hpp"
#include "refusal.hpp"

namespace vaccel::ctl {

struct DevicesOptions {
    bool json = false;
    bool list = false;  // -L: one line per device
    bool verbose = false;
};

Result<void> devices_command(const DevicesOptions& options);

struct RunOptions {
    std::string model;
    std::vector<std::string> inputs;  // "NAME=FILE.npy" or "FILE.npy", as given
    std::vector<std::string> variables;  // "NAME=FILE.npy", as given
    std::string output_dir = ".";
    std::string device = "auto";
    unsigned repeat = 1;
    unsigned warmup = 0;  // untimed runs before the --repeat timed ones
    bool json = false;
    bool verbose = false;
    bool quiet = false;  // -q: no notes on stderr, refusals only
};

Result<void> run_command(const RunOptions& options);

// import: an ONNX model to a TOSA file (import_cmd.cpp, docs/onnx.md).
struct ImportCommandOptions {
    std::string model;
    std::string output;  // default: the model's path with .tosa
    std::vector<std::string> input_shapes;  // "NAME=D0,D1,...", as given
};

Result<void> import_command(const ImportCommandOptions& options);

// sessions, limits get, metrics: listings from the daemon's admin channel.
struct AdminOptions {
    bool json = false;
    bool verbose = false;
};

Result<void> sessions_command(const AdminOptions& options);
Result<void> containers_command(const AdminOptions& options);
Result<void> tenants_command(const AdminOptions& options);
Result<void> limits_get_command(const AdminOptions& options);
// The caller's own rule, limits and use (any user may ask).
Result<void> limits_mine_command(const AdminOptions& options);
Result<void> metrics_command(const AdminOptions& options);

// limits set / reset: one rule, chosen by exactly one selector.
struct LimitsChangeOptions {
    RuleSelector selector;
    LimitValues values;  // set only
    bool json = false;
    bool verbose = false;
};

Result<void> limits_set_command(const LimitsChangeOptions& options);
Result<void> limits_reset_command(const LimitsChangeOptions& options);

// cdi generate: the CDI spec of the daemon's devices (cdi_cmd.cpp).
struct CdiGenerateOptions {
    std::string output = "/etc/cdi/vaccel.yaml";  // "-": stdout
    std::string hook_program;                     // empty: this vaccelctl
    bool socket_only = false;  // the socket even where /dev/vaccel exists
    // Not empty: the devices this daemon configuration would serve (asked
    // of `vacceld --list-devices`), not the running daemon's.
    std::string config;
    std::string daemon_program;  // empty: the vacceld beside this vaccelctl
    bool verbose = false;
    bool quiet = false;
};

// The configuration `cdi generate` reads when no daemon answers.
inline constexpr const char* default_config = "/etc/vaccel/vacceld.toml";

Result<void> cdi_generate_command(const CdiGenerateOptions& options);

// cdi hook create|remove: run by the container runtime, state on stdin.
struct CdiHookOptions {
    std::string devices = "all";  // create: "all" or "0,2"
    bool verbose = false;
};

Result<void> cdi_hook_create_command(const CdiHookOptions& options);
Result<void> cdi_hook_remove_command(const CdiHookOptions& options);

}  // namespace vaccel::ctl
