// vacceld_process.cpp - starting and stopping vacceld (see vacceld_process.hpp).
#include "vacceld_process.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include <vector>

namespace vaccel::bench {

namespace {

bool executable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

std::string directory_of(const std::string& path)
{
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

void print_log(const std::string& log)
{
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    std::cerr << "vacceld log (" << log << "):\n" << text.str() << '\n';
}

// Waits up to `limit` for the child to exit; true with *status set if it did.
bool reap(pid_t pid, std::chrono::milliseconds limit, int* status)
{
    const auto give_up = std::chrono::steady_clock::now() + limit;
    for (;;) {
        const pid_t done = waitpid(pid, status, WNOHANG);
        if (done == pid) return true;
        if (done < 0) return true;  // not our child any more
        if (std::chrono::steady_clock::now() > give_up) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

}  // namespace

bool connectable(const std::string& path)
{
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) return false;
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
    close(fd);
    return ok;
}

std::string find_vacceld(const char* argv0)
{
    if (const char* env = std::getenv("VACCELD"); env != nullptr && executable(env)) return env;
    char self[PATH_MAX];
    const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    const std::string here =
        length > 0 ? directory_of(std::string(self, static_cast<std::size_t>(length)))
                   : directory_of(argv0 ? argv0 : "");
    for (const char* relative : {"/vacceld", "/../userspace/daemon/vacceld",
                                 "/../userspace/daemon/src/vacceld", "/../bin/vacceld"}) {
        const std::string candidate = here + relative;
        if (executable(candidate)) return candidate;
    }
    return {};
}

bool VacceldProcess::start(const DaemonOptions& options)
{
    char pattern[] = "/tmp/vaccel-bench-XXXXXX";
    if (mkdtemp(pattern) == nullptr) {
        std::perror("vacceld: mkdtemp");
        return false;
    }
    directory_ = pattern;
    socket_ = directory_ + "/vacceld.sock";
    log_ = directory_ + "/vacceld.log";
    const std::string config = directory_ + "/vacceld.toml";
    {
        std::ofstream out(config);
        out << "# Written by the daemon benchmarks: the devices asked for, default limits.\n"
               "[daemon]\ndevices = [" << options.devices << "]\n";
    }
    const int log_fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (log_fd < 0) {
        std::perror("vacceld: log file");
        return false;
    }
    std::vector<std::string> args = {options.binary, "--socket", socket_, "--config", config,
                                      "--log-level", options.log_level};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    pid_ = fork();
    if (pid_ < 0) {
        std::perror("vacceld: fork");
        close(log_fd);
        return false;
    }
    if (pid_ == 0) {
        if (options.cpu >= 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(options.cpu, &set);
            sched_setaffinity(0, sizeof set, &set);
        }
        dup2(log_fd, STDERR_FILENO);
        dup2(log_fd, STDOUT_FILENO);
        execv(argv[0], argv.data());
        std::fprintf(stderr, "exec %s: %s\n", argv[0], std::strerror(errno));
        _exit(127);
    }
    close(log_fd);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!connectable(socket_)) {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            std::cerr << "vacceld exited before serving (status " << status << ")\n";
            print_log(log_);
            pid_ = -1;
            return false;
        }
        if (std::chrono::steady_clock::now() > give_up) {
            std::cerr << "vacceld did not accept connections on " << socket_ << " within 10 s\n";
            print_log(log_);
            stop();
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

bool VacceldProcess::stop()
{
    bool graceful = true;
    if (pid_ > 0) {
        int status = 0;
        kill(pid_, SIGTERM);
        if (!reap(pid_, std::chrono::seconds(5), &status)) {
            std::cerr << "vacceld did not stop within 5 s of SIGTERM; killing it\n";
            kill(pid_, SIGKILL);
            reap(pid_, std::chrono::seconds(5), &status);
            graceful = false;
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            std::cerr << "vacceld ended with status " << status << " on SIGTERM\n";
            print_log(log_);
            graceful = false;
        }
        pid_ = -1;
    }
    if (!directory_.empty()) {
        for (const std::string& file : {socket_, log_, directory_ + "/vacceld.toml"})
            unlink(file.c_str());
        // The daemon may leave files of its own (persisted limits): best effort.
        rmdir(directory_.c_str());
        directory_.clear();
    }
    return graceful;
}

}  // namespace vaccel::bench

namespace vaccel::bench {

bool reach_daemon(const std::string& socket, const std::string& binary, const char* argv0,
                  int cpu, VacceldProcess& started, std::string& path,
                  const std::string& devices)
{
    if (!socket.empty()) {
        if (!connectable(socket)) {
            std::cerr << "no daemon accepts connections on " << socket << '\n';
            return false;
        }
        path = socket;
    } else {
        DaemonOptions options;
        options.binary = binary.empty() ? find_vacceld(argv0) : binary;
        options.cpu = cpu;
        options.devices = devices;
        if (options.binary.empty()) {
            std::cerr << "vacceld not found: pass --vacceld PATH or --socket PATH, or set "
                         "VACCELD (build it with `cmake --build <dir> --target vacceld`)\n";
            return false;
        }
        if (!started.start(options)) return false;
        path = started.socket_path();
    }
    setenv("VACCEL_SOCKET", path.c_str(), 1);
    return true;
}

}  // namespace vaccel::bench
