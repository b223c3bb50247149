// commands.hpp - the vaccelctl subcommands, as main() calls them.
//
// Owns: the options of each subcommand after parsing. Decides: a command
// prints its result on stdout and returns; a refusal comes back to main(),
// which prints it and exits non-zero.
#pragma once

#include <string>
#include <vector>

#include "refusal.hpp"

namespace vaccel::ctl {

struct DevicesOptions {
    bool json = false;
    bool verbose = false;
};

Result<void> devices_command(const DevicesOptions& options);

struct RunOptions {
    std::string model;
    std::vector<std::string> inputs;  // "NAME=FILE.npy" or "FILE.npy", as given
    std::string output_dir = ".";
    std::string device = "auto";
    unsigned repeat = 1;
    bool json = false;
    bool verbose = false;
};

Result<void> run_command(const RunOptions& options);

}  // namespace vaccel::ctl
