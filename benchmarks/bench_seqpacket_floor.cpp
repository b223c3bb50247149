// bench_seqpacket_floor.cpp - the floor under every request to vacceld.
//
// A bare ping-pong of 64-byte messages over SOCK_SEQPACKET between two
// processes (fork), unpinned and with both pinned to one CPU: median, p99
// and mean per round trip. No daemon round trip can be cheaper; the daemon
// benchmarks print their figures beside this one.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "support/latency.hpp"
#include "support/seqpacket_floor.hpp"

using namespace vaccel::bench;

int main(int argc, char** argv)
{
    PingPong options;
    int cpu = 0;
    CLI::App app{"SOCK_SEQPACKET ping-pong between two processes: the floor of a daemon round trip"};
    app.add_option("--round-trips", options.round_trips, "measured round trips")
        ->capture_default_str();
    app.add_option("--bytes", options.message_bytes, "message size")->capture_default_str();
    app.add_option("--cpu", cpu, "CPU for the pinned variant")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    fmt::print("SOCK_SEQPACKET ping-pong, {}-byte messages, {} round trips between two processes\n",
               options.message_bytes, options.round_trips);
    fmt::print("{:<22} {:>10} {:>10} {:>10}\n", "variant", "median µs", "p99 µs", "mean µs");
    int failures = 0;
    for (int pin : {-1, cpu}) {
        options.cpu = pin;
        const auto samples = seqpacket_ping_pong(options);
        if (samples.empty()) {
            ++failures;
            continue;
        }
        const Summary s = summarize(samples);
        fmt::print("{:<22} {:>10.1f} {:>10.1f} {:>10.1f}\n",
                   pin < 0 ? std::string("unpinned") : fmt::format("pinned to CPU {}", pin),
                   s.median_us, s.p99_us, s.mean_us);
    }
    return failures == 0 ? 0 : 1;
}
