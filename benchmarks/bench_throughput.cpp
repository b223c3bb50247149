// bench_throughput.cpp - no-op submissions per second through vacceld.
//
// N client processes (fork; 1, 4 and 16 by default) each keep `in_flight`
// no-op submissions queued (a ring: wait for the oldest, destroy it, submit
// again in its place) for a fixed time, all starting together. The sum of
// the clients' rates is printed per N, beside one client in process
// (embedded transport) with the same ring as the baseline. Each submission
// is three calls (submit, wait, destroy); the clients are single-threaded.
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "support/latency.hpp"
#include "support/noop_client.hpp"
#include "support/vacceld_process.hpp"

using namespace vaccel::bench;

namespace {

struct ClientResult {
    std::uint64_t submissions = 0;
    std::uint64_t elapsed_ns = 0;
    std::int32_t failed = 0;
};

// In the child: prepare, report ready, wait for the start, run, report.
[[noreturn]] void client_process(const char* transport, unsigned in_flight, double seconds,
                                 int ready_fd, int start_fd, int result_fd)
{
    ClientResult result;
    NoopClient client;
    std::vector<std::uint64_t> events(in_flight, 0);
    bool ok = client.open(transport, in_flight);
    const char ready = ok ? 'r' : 'f';
    (void)!write(ready_fd, &ready, 1);
    char go = 0;
    (void)!read(start_fd, &go, 1);  // EOF: every client is ready
    if (ok) {
        for (unsigned i = 0; ok && i < in_flight; ++i) ok = client.submit(i, &events[i]) == 0;
        const std::uint64_t start = monotonic_ns();
        const std::uint64_t end = start + static_cast<std::uint64_t>(seconds * 1e9);
        std::uint64_t now = start;
        for (unsigned slot = 0; ok && now < end; slot = (slot + 1) % in_flight) {
            ok = client.wait(events[slot]) == 0 && client.destroy(events[slot]) == 0 &&
                 client.submit(slot, &events[slot]) == 0;
            ++result.submissions;
            now = monotonic_ns();
        }
        result.elapsed_ns = now - start;
        for (unsigned i = 0; ok && i < in_flight; ++i)
            ok = client.wait(events[i]) == 0 && client.destroy(events[i]) == 0;
    }
    result.failed = ok ? 0 : 1;
    client.close();
    (void)!write(result_fd, &result, sizeof result);
    _exit(ok ? 0 : 1);
}

// Runs `clients` client processes at once; the summed submissions/s, or a
// negative value on a failure.
double run_clients(const char* transport, unsigned clients, unsigned in_flight, double seconds)
{
    int ready[2], start[2], results[2];
    if (pipe(ready) != 0 || pipe(start) != 0 || pipe(results) != 0) {
        std::perror("pipe");
        return -1;
    }
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
            client_process(transport, in_flight, seconds, ready[1], start[0], results[1]);
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
        rate += static_cast<double>(r.submissions) / (static_cast<double>(r.elapsed_ns) / 1e9);
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

std::vector<unsigned> parse_counts(const std::string& text)
{
    std::vector<unsigned> counts;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t comma = text.find(',', start);
        counts.push_back(static_cast<unsigned>(
            std::stoul(text.substr(start, comma == std::string::npos ? comma : comma - start))));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return counts;
}

}  // namespace

int main(int argc, char** argv)
{
    std::string vacceld, socket, clients_text = "1,4,16";
    unsigned in_flight = 8;
    double seconds = 2.0;
    CLI::App app{"no-op submissions per second through vacceld with several client processes"};
    app.add_option("--vacceld", vacceld, "vacceld to start on a private socket");
    app.add_option("--socket", socket, "use the daemon already serving this socket instead");
    app.add_option("--clients", clients_text, "client process counts, comma separated")
        ->capture_default_str();
    app.add_option("--in-flight", in_flight, "submissions each client keeps queued")
        ->capture_default_str()
        ->check(CLI::Range(1u, 64u));
    app.add_option("--seconds", seconds, "measured time per client count")->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    std::vector<unsigned> counts;
    try {
        counts = parse_counts(clients_text);
    } catch (const std::exception&) {
        fmt::print(stderr, "--clients: expected counts like 1,4,16, got '{}'\n", clients_text);
        return 2;
    }

    VacceldProcess daemon;
    std::string path;
    if (!reach_daemon(socket, vacceld, argv[0], -1, daemon, path)) return 1;
    fmt::print("no-op submissions/s (submit + wait + event destroy each), {} in flight per "
               "client, {:.1f} s per row; daemon on {}\n",
               in_flight, seconds, path);
    fmt::print("{:<8} {:<22} {:>14} {:>14} {:>12}\n", "clients", "transport", "submissions/s",
               "per client", "µs each");
    bool ok = true;
    const double embedded = run_clients("embedded", 1, in_flight, seconds);
    if (embedded < 0) ok = false;
    fmt::print("{:<8} {:<22} {:>14.0f} {:>14.0f} {:>12.1f}\n", 1, "embedded (in process)",
               embedded, embedded, embedded > 0 ? 1e6 / embedded : 0.0);
    for (unsigned n : counts) {
        const double rate = run_clients("socket", n, in_flight, seconds);
        if (rate < 0) {
            fmt::print("{:<8} {:<22} failed (see above)\n", n, "socket (vacceld)");
            ok = false;
            continue;
        }
        fmt::print("{:<8} {:<22} {:>14.0f} {:>14.0f} {:>12.1f}\n", n, "socket (vacceld)", rate,
                   rate / n, 1e6 / rate);
    }
    ok = daemon.stop() && ok;
    return ok ? 0 : 1;
}
