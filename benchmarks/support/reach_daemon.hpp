// reach_daemon.hpp - the daemon a benchmark's socket clients talk to.
//
// Decides: an already running daemon when its socket is given, else a
// private vacceld started here (tests/support/vacceld_process.hpp); either
// way $VACCEL_SOCKET names it for libvaccel.
#pragma once

#include <string>

#include "vacceld_process.hpp"

namespace vaccel::bench {

using test::VacceldProcess;

// Where the benchmark's socket clients go: an already running daemon
// (`socket` given: its path), else a vacceld this process starts on a
// private socket (`binary` given, else find_vacceld()), pinned to `cpu`
// when >= 0, serving `devices` (TOML items). Sets $VACCEL_SOCKET. False,
// with the reason printed, when neither works.
bool reach_daemon(const std::string& socket, const std::string& binary, const char* argv0,
                  int cpu, VacceldProcess& started, std::string& path,
                  const std::string& devices = "\"cpu\"");

}  // namespace vaccel::bench
