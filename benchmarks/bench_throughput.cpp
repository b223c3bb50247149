// bench_throughput.cpp - no-op submissions per second through vacceld.
//
// N client processes (fork; 1, 4 and 16 by default) each keep `in_flight`
// no-op submissions queued (a ring: wait for the oldest, destroy it, submit
// again in its place) for a fixed time, all starting together. The sum of
// the clients' rates is printed per N, beside one client in process
// (embedded transport) with the same ring as the baseline. Each submission
// is three calls (submit, wait, destroy); the clients are single-threaded.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "support/forked_clients.hpp"
#include "support/noop_client.hpp"
#include "support/reach_daemon.hpp"

using namespace vaccel::bench;

namespace {

// One client keeping `in_flight` submissions queued: each step waits for
// the oldest, destroys it and submits again in its place.
double run_clients(const char* transport, unsigned clients, unsigned in_flight, double seconds)
{
    return forked_rate(clients, seconds, [=] {
        auto client = std::make_shared<NoopClient>();
        auto events = std::make_shared<std::vector<std::uint64_t>>(in_flight, 0);
        auto slot = std::make_shared<unsigned>(0);
        if (!client->open(transport, in_flight)) return ClientLoop{};
        ClientLoop loop;
        loop.begin = [=] {
            for (unsigned i = 0; i < in_flight; ++i)
                if (client->submit(i, &(*events)[i]) != 0) return false;
            return true;
        };
        loop.step = [=] {
            std::uint64_t& event = (*events)[*slot];
            const bool ok = client->wait(event) == 0 && client->destroy(event) == 0 &&
                            client->submit(*slot, &event) == 0;
            *slot = (*slot + 1) % in_flight;
            return ok;
        };
        loop.finish = [=] {
            for (std::uint64_t event : *events)
                if (client->wait(event) != 0 || client->destroy(event) != 0) return false;
            return true;
        };
        return loop;
    });
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
