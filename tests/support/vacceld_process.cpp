// vacceld_process.cpp - starting and stopping a private vacceld (see vacceld_process.hpp).
#include "vacceld_process.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

namespace vaccel::test {

namespace {

bool executable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

std::string directory_of(const std::string& path)
{
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
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

std::string devices_config(const std::string& devices)
{
    return "# A private vacceld: the devices asked for, default limits.\n[daemon]\ndevices = [" +
           devices + "]\n";
}

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

VacceldProcess::~VacceldProcess()
{
    kill();
    remove_directory();
}

void VacceldProcess::remove_directory()
{
    if (directory_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
    directory_.clear();
}

bool VacceldProcess::start(const VacceldOptions& options)
{
    kill();
    remove_directory();
    error_.clear();
    char pattern[] = "/tmp/vacceld-XXXXXX";
    if (mkdtemp(pattern) == nullptr) {
        error_ = std::string("mkdtemp: ") + std::strerror(errno);
        return false;
    }
    directory_ = pattern;
    chmod(directory_.c_str(), 0755);
    socket_ = directory_ + "/vacceld.sock";
    config_ = directory_ + "/vacceld.toml";
    log_ = directory_ + "/vacceld.log";
    if (options.config) std::ofstream(config_) << *options.config;
    const int log_fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) {
        error_ = "log file " + log_ + ": " + std::strerror(errno);
        return false;
    }
    std::vector<std::string> args = {options.binary, "--socket",    socket_,
                                     "--config",     config_,       "--log-level",
                                     options.log_level};
    args.insert(args.end(), options.args.begin(), options.args.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    pid_ = fork();
    if (pid_ < 0) {
        error_ = std::string("fork: ") + std::strerror(errno);
        close(log_fd);
        return false;
    }
    if (pid_ == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
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
    const auto give_up = std::chrono::steady_clock::now() + options.ready_within;
    while (!connectable(socket_)) {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            error_ = "vacceld exited before serving (status " + std::to_string(status) + ")";
            pid_ = -1;
            return false;
        }
        if (std::chrono::steady_clock::now() > give_up) {
            error_ = "vacceld did not accept connections on " + socket_ + " within " +
                     std::to_string(options.ready_within.count()) + " ms";
            kill();
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

bool VacceldProcess::stop()
{
    if (pid_ <= 0) return true;
    bool graceful = true;
    int status = 0;
    ::kill(pid_, SIGTERM);
    if (!reap(pid_, std::chrono::seconds(5), &status)) {
        std::cerr << "vacceld did not stop within 5 s of SIGTERM; killing it\n";
        ::kill(pid_, SIGKILL);
        reap(pid_, std::chrono::seconds(5), &status);
        graceful = false;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::cerr << "vacceld ended with status " << status << " on SIGTERM; its log ("
                  << log_ << "):\n" << log_text() << '\n';
        graceful = false;
    }
    pid_ = -1;
    return graceful;
}

void VacceldProcess::kill()
{
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
}

void VacceldProcess::signal(int signo) const
{
    if (pid_ > 0) ::kill(pid_, signo);
}

int VacceldProcess::wait_exit(std::chrono::milliseconds limit)
{
    if (pid_ <= 0) return -1;
    const auto give_up = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) != pid_) {
        if (std::chrono::steady_clock::now() > give_up) return -1;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string VacceldProcess::log_text() const
{
    std::ifstream in(log_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace vaccel::test
