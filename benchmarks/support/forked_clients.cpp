// forked_clients.cpp - client processes started together (see forked_clients.hpp).
#include "forked_clients.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "latency.hpp"

namespace vaccel::bench {

namespace {

struct ClientResult {
    std::uint64_t steps = 0;
    std::uint64_t elapsed_ns = 0;
    std::int32_t failed = 0;
};

[[noreturn]] void client_process(double seconds, const std::function<ClientLoop()>& make,
                                 int ready_fd, int start_fd, int result_fd)
{
    ClientResult result;
    ClientLoop loop = make();
    bool ok = static_cast<bool>(loop.step);
    const char ready = ok ? 'r' : 'f';
    (void)!write(ready_fd, &ready, 1);
    char go = 0;
    (void)!read(start_fd, &go, 1);  // EOF: every client is ready
    if (ok && loop.begin) ok = loop.begin();
    if (ok) {
        const std::uint64_t start = monotonic_ns();
        const std::uint64_t end = start + static_cast<std::uint64_t>(seconds * 1e9);
        std::uint64_t now = start;
        while (ok && now < end) {
            ok = loop.step();
            ++result.steps;
            now = monotonic_ns();
        }
        result.elapsed_ns = now - start;
    }
    if (ok && loop.finish) ok = loop.finish();
    result.failed = ok ? 0 : 1;
    loop = {};  // closes the client before the result is reported
    (void)!write(result_fd, &result, sizeof result);
    _exit(ok ? 0 : 1);
}

}  // namespace

double forked_rate(unsigned clients, double seconds, const std::function<ClientLoop()>& make)
{
    int ready[2], start[2], results[2];
    if (pipe(ready) != 0 || pipe(start) != 0 || pipe(results) != 0) {
        std::perror("pipe");
        return -1;
    }
    std::fflush(nullptr);  // nothing buffered is printed twice
    std::vector<pid_t> children;
    for (unsigned i = 0; i < clients; ++i) {
        const pid_t pid = fork();
        if (pid < 0) {
            std::perror("fork");
            break;
        }
        if (pid == 0) {
            close(ready[0]);
            close(start[1]);
            close(results[0]);
            client_process(seconds, make, ready[1], start[0], results[1]);
        }
        children.push_back(pid);
    }
    close(ready[1]);
    close(start[0]);
    close(results[1]);
    bool ok = children.size() == clients;
    for (std::size_t i = 0; i < children.size(); ++i) {
        char c = 0;
        if (read(ready[0], &c, 1) != 1 || c != 'r') ok = false;
    }
    close(start[1]);  // the start signal: EOF for every client at once
    double rate = 0;
    for (std::size_t i = 0; i < children.size(); ++i) {
        ClientResult r;
        if (read(results[0], &r, sizeof r) != static_cast<ssize_t>(sizeof r) || r.failed != 0 ||
            r.elapsed_ns == 0) {
            ok = false;
            continue;
        }
        rate += static_cast<double>(r.steps) / (static_cast<double>(r.elapsed_ns) / 1e9);
    }
    for (pid_t pid : children) {
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ok = false;
    }
    close(ready[0]);
    close(results[0]);
    return ok ? rate : -1;
}

}  // namespace vaccel::bench
