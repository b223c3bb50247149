// vacceld_process.hpp - a private vacceld for one test or benchmark.
//
// Owns: one vacceld child process serving on a socket in a fresh directory
// under /tmp (made 0755, so a client that drops to another uid still
// reaches the socket), its config and log files there, and that directory
// (removed with all it holds by the destructor or the next start()).
// Decides: the daemon is ready once its socket accepts a connection, polled
// every 10 ms up to ready_within; the child dies with this process
// (PR_SET_PDEATHSIG), so a test that leaves by longjmp leaves no daemon
// behind; stop() is SIGTERM with 5 s for the graceful drain before
// SIGKILL; kill() and the destructor are SIGKILL.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace vaccel::test {

struct VacceldOptions {
    std::string binary;  // the vacceld executable
    // The config file's text; nullopt: no file is written (its path is
    // passed all the same).
    std::optional<std::string> config = std::string();
    std::string log_level = "warn";
    std::vector<std::string> args;  // after --socket, --config, --log-level
    int cpu = -1;                   // >= 0: the daemon pinned to this CPU
    std::chrono::milliseconds ready_within{10000};
};

// A config serving `devices` (TOML items, e.g. "\"cpu\"") with default limits.
std::string devices_config(const std::string& devices);

class VacceldProcess {
public:
    VacceldProcess() = default;
    ~VacceldProcess();
    VacceldProcess(const VacceldProcess&) = delete;
    VacceldProcess& operator=(const VacceldProcess&) = delete;

    // False when it could not be started or never became connectable:
    // error() says why, log_text() holds what the daemon wrote.
    bool start(const VacceldOptions& options);
    // SIGTERM and the wait; true when the daemon exited 0 by itself (else
    // the reason and its log are printed to stderr). Idempotent.
    bool stop();
    // SIGKILL, reaped. Idempotent.
    void kill();
    void signal(int signo) const;
    // The exit status (128 + the signal when killed by one), or -1 when it
    // is still running after `limit`.
    int wait_exit(std::chrono::milliseconds limit = std::chrono::seconds(5));

    const std::string& socket_path() const { return socket_; }
    const std::string& config_path() const { return config_; }
    const std::string& directory() const { return directory_; }
    std::string log_text() const;
    const std::string& error() const { return error_; }
    pid_t pid() const { return pid_; }

private:
    void remove_directory();

    pid_t pid_ = -1;
    std::string directory_, socket_, config_, log_, error_;
};

// True when a SOCK_SEQPACKET connection to `path` succeeds.
bool connectable(const std::string& path);

// The vacceld to start: $VACCELD, else beside `argv0`, else where the build
// tree puts it relative to a program one level below the top
// (../userspace/daemon/vacceld). Empty when none is found.
std::string find_vacceld(const char* argv0);

}  // namespace vaccel::test
