// seqpacket_floor.cpp - the SOCK_SEQPACKET ping-pong (see seqpacket_floor.hpp).
#include "seqpacket_floor.hpp"

#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "latency.hpp"

namespace vaccel::bench {

namespace {

bool pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0;
}

// The echo side: answers every message with itself until EOF.
[[noreturn]] void echo(int fd, std::size_t bytes)
{
    std::vector<char> buffer(bytes);
    for (;;) {
        const ssize_t got = recv(fd, buffer.data(), buffer.size(), 0);
        if (got <= 0) _exit(got == 0 ? 0 : 1);
        if (send(fd, buffer.data(), static_cast<std::size_t>(got), 0) != got) _exit(1);
    }
}

}  // namespace

std::vector<std::uint64_t> seqpacket_ping_pong(const PingPong& options)
{
    std::vector<std::uint64_t> samples;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
        std::perror("floor: socketpair");
        return samples;
    }
    cpu_set_t original;
    CPU_ZERO(&original);
    sched_getaffinity(0, sizeof original, &original);
    if (options.cpu >= 0 && !pin_to(options.cpu)) {
        std::perror("floor: sched_setaffinity");
        close(pair[0]);
        close(pair[1]);
        return samples;
    }
    const pid_t child = fork();
    if (child < 0) {
        std::perror("floor: fork");
        close(pair[0]);
        close(pair[1]);
        sched_setaffinity(0, sizeof original, &original);
        return samples;
    }
    if (child == 0) {
        close(pair[0]);
        echo(pair[1], options.message_bytes);  // inherits the pinning
    }
    close(pair[1]);
    const int fd = pair[0];
    std::vector<char> out(options.message_bytes, 'x'), in(options.message_bytes);
    samples.reserve(options.round_trips);
    bool ok = true;
    for (unsigned i = 0; ok && i < options.warmup + options.round_trips; ++i) {
        const std::uint64_t start = monotonic_ns();
        ok = send(fd, out.data(), out.size(), 0) == static_cast<ssize_t>(out.size()) &&
             recv(fd, in.data(), in.size(), 0) == static_cast<ssize_t>(in.size());
        const std::uint64_t end = monotonic_ns();
        if (i >= options.warmup) samples.push_back(end - start);
    }
    if (!ok) {
        std::perror("floor: send/recv");
        samples.clear();
    }
    close(fd);  // the echo process sees EOF and exits
    int status = 0;
    waitpid(child, &status, 0);
    sched_setaffinity(0, sizeof original, &original);
    return samples;
}

}  // namespace vaccel::bench
