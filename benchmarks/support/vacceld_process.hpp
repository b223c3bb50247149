// vacceld_process.hpp - a vacceld the benchmarks start and stop themselves.
//
// Owns: one vacceld child process serving the CPU device on a private
// socket in a fresh directory under /tmp (with its own config and log
// file), and that directory. Decides: the daemon is ready once its socket
// accepts a connection (polled, 10 s at most); stop() sends SIGTERM and
// waits 5 s for the graceful drain before SIGKILL. The daemon's stderr goes
// to the log file, printed if it fails to start.
#pragma once

#include <sys/types.h>

#include <string>

namespace vaccel::bench {

struct DaemonOptions {
    std::string binary;           // path of the vacceld executable
    int cpu = -1;                 // >= 0: the daemon (all its threads) pinned to this CPU
    std::string log_level = "warn";
    std::string devices = "\"cpu\"";  // the config's devices list, TOML items
};

class VacceldProcess {
public:
    VacceldProcess() = default;
    ~VacceldProcess() { stop(); }
    VacceldProcess(const VacceldProcess&) = delete;
    VacceldProcess& operator=(const VacceldProcess&) = delete;

    // False (with the reason printed) when it could not be started or never
    // became connectable.
    bool start(const DaemonOptions& options);
    // Idempotent. True when the daemon exited on SIGTERM by itself.
    bool stop();

    const std::string& socket_path() const { return socket_; }
    pid_t pid() const { return pid_; }

private:
    pid_t pid_ = -1;
    std::string directory_;
    std::string socket_;
    std::string log_;
};

// The vacceld to start: $VACCELD, else beside this program, else where the
// build tree puts it relative to benchmarks/ (../userspace/daemon/vacceld).
// Empty when none is found.
std::string find_vacceld(const char* argv0);

// True when a SOCK_SEQPACKET connection to `path` succeeds.
bool connectable(const std::string& path);

}  // namespace vaccel::bench

namespace vaccel::bench {

// Where the benchmark's socket clients go: an already running daemon
// (`socket` given: its path), else a vacceld this process starts on a
// private socket (`binary` given, else find_vacceld()). Sets $VACCEL_SOCKET
// for libvaccel. False, with the reason printed, when neither works.
// `devices`: the started daemon's devices list (DaemonOptions::devices).
bool reach_daemon(const std::string& socket, const std::string& binary, const char* argv0,
                  int cpu, VacceldProcess& started, std::string& path,
                  const std::string& devices = "\"cpu\"");

}  // namespace vaccel::bench
