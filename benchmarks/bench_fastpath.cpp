// bench_fastpath.cpp - the fast paths through vacceld beside their floors.
//
// Starts its own vacceld (or uses --socket) and measures, each figure beside
// the baseline measured in the same run, with the ratio and its target:
//  1. throughput: N client processes (16) each calling vaccel_run in a
//     loop for a fixed time vs one client in process (embedded transport,
//     in a process of its own); aggregate runs/s, target >= 0.5x.
//  2. latency: one vaccel_run of the no-op ADD ([1] floats, bound buffers)
//     through the socket vs a 64-byte SOCK_SEQPACKET ping-pong between two
//     processes (median); target <= 1.5x. Printed beside it: the same work
//     the old way (submit + wait + event destroy) and vaccel_run in process.
//  3. transfer: vaccel_buffer_write + vaccel_buffer_read of 64 MiB through
//     the socket vs memcpy of 64 MiB each way (warm buffers); GB/s, target
//     >= 0.8x.
//  4. mapped: 64 MiB copied into a mapped Host buffer (vaccel_buffer_map)
//     and vaccel_run of an ADD over it (16M floats) through the socket vs
//     the same copy and run in process; time, target <= 1.1x.
// --quick runs few iterations (a smoke test). Exit status: non-zero only
// when something failed, never for a missed target.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/forked_clients.hpp"
#include "support/latency.hpp"
#include "support/noop_client.hpp"
#include "support/seqpacket_floor.hpp"
#include "support/transfer_rates.hpp"
#include "support/reach_daemon.hpp"

using namespace vaccel::bench;

namespace {

struct Settings {
    unsigned iterations = 20000, warmup = 1000;
    unsigned clients = 16;
    double seconds = 2.0;
    std::uint64_t mib = 64;
    unsigned repetitions = 5;
};

// The figures, in order, for --json.
std::vector<std::pair<std::string, double>> figures;

void record(const std::string& name, double value) { figures.emplace_back(name, value); }

const char* verdict(bool met) { return met ? "met" : "NOT met"; }

// Per-iteration times of vaccel_run (run = true) or submit + wait + destroy.
std::optional<std::vector<std::uint64_t>> round_trips(const char* transport, bool run,
                                                      const Settings& s)
{
    NoopClient client;
    if (!client.open(transport)) return std::nullopt;
    std::vector<std::uint64_t> samples;
    samples.reserve(s.iterations);
    for (unsigned i = 0; i < s.warmup + s.iterations; ++i) {
        const std::uint64_t t0 = monotonic_ns();
        if (run) {
            if (client.run(0) != 0) return std::nullopt;
        } else {
            std::uint64_t event = 0;
            if (client.submit(0, &event) != 0 || client.wait(event) != 0 ||
                client.destroy(event) != 0)
                return std::nullopt;
        }
        if (i >= s.warmup) samples.push_back(monotonic_ns() - t0);
    }
    return samples;
}

bool latency(const Settings& s)
{
    fmt::print("\n2. no-op round trip, {} iterations after {} warm-up (median / p99 µs)\n",
               s.iterations, s.warmup);
    PingPong ping;
    ping.round_trips = s.iterations;
    ping.warmup = s.warmup;
    const auto floor_samples = seqpacket_ping_pong(ping);
    if (floor_samples.empty()) return false;
    const Summary floor = summarize(floor_samples);
    fmt::print("{:<40} {:>9.1f} {:>9.1f} {:>9}\n", "floor: 64 B SOCK_SEQPACKET ping-pong",
               floor.median_us, floor.p99_us, "1.00x");
    record("latency.floor_us", floor.median_us);
    struct Row {
        const char* name;
        const char* transport;
        bool run;
        const char* key;
    };
    const Row rows[] = {
        {"socket: vaccel_run", "socket", true, "latency.socket_run_us"},
        {"socket: submit + wait + destroy", "socket", false, "latency.socket_submit_wait_destroy_us"},
        {"embedded: vaccel_run", "embedded", true, "latency.embedded_run_us"},
    };
    bool ok = true;
    double socket_run = 0;
    for (const Row& row : rows) {
        const auto samples = round_trips(row.transport, row.run, s);
        if (!samples) {
            fmt::print("{:<40} failed (see above)\n", row.name);
            ok = false;
            continue;
        }
        const Summary t = summarize(*samples);
        fmt::print("{:<40} {:>9.1f} {:>9.1f} {:>8.2f}x\n", row.name, t.median_us, t.p99_us,
                   t.median_us / floor.median_us);
        record(row.key, t.median_us);
        if (row.run && std::strcmp(row.transport, "socket") == 0) socket_run = t.median_us;
    }
    if (socket_run > 0) {
        const double ratio = socket_run / floor.median_us;
        fmt::print("socket vaccel_run / floor: {:.2f}x (target <= 1.50x: {})\n", ratio,
                   verdict(ratio <= 1.5));
        record("latency.ratio", ratio);
    }
    return ok;
}

// `clients` processes each calling vaccel_run of the no-op in a loop.
double run_rate(const char* transport, unsigned clients, double seconds)
{
    return forked_rate(clients, seconds, [=] {
        auto client = std::make_shared<NoopClient>();
        if (!client->open(transport)) return ClientLoop{};
        ClientLoop loop;
        loop.step = [client] { return client->run(0) == 0; };
        return loop;
    });
}

bool throughput(const Settings& s)
{
    fmt::print("\n1. no-op vaccel_run per second, {:.1f} s per row\n", s.seconds);
    const double embedded = run_rate("embedded", 1, s.seconds);
    const double socket = run_rate("socket", s.clients, s.seconds);
    fmt::print("{:<40} {:>12} {:>12}\n", "", "runs/s", "per client");
    if (embedded > 0)
        fmt::print("{:<40} {:>12.0f} {:>12.0f}\n", "embedded: 1 client (baseline)", embedded,
                   embedded);
    else
        fmt::print("{:<40} failed (see above)\n", "embedded: 1 client");
    const std::string name = fmt::format("socket: {} client processes", s.clients);
    if (socket > 0)
        fmt::print("{:<40} {:>12.0f} {:>12.0f}\n", name, socket, socket / s.clients);
    else
        fmt::print("{:<40} failed (see above)\n", name);
    if (embedded <= 0 || socket <= 0) return false;
    const double ratio = socket / embedded;
    fmt::print("socket ({} clients) / embedded: {:.2f}x (target >= 0.50x: {})\n", s.clients, ratio,
               verdict(ratio >= 0.5));
    record("throughput.embedded_per_s", embedded);
    record("throughput.socket_per_s", socket);
    record("throughput.ratio", ratio);
    return true;
}

bool transfer(const Settings& s)
{
    const std::uint64_t bytes = s.mib << 20;
    fmt::print("\n3. {} MiB buffer write + read, median of {} (GB/s = 10^9 B/s)\n", s.mib,
               s.repetitions);
    std::vector<char> host(bytes), back(bytes, 0);
    for (std::uint64_t i = 0; i < bytes; ++i) host[i] = static_cast<char>(i * 131 + 7);
    const Rates base = memcpy_rates(host, back, s.repetitions);
    fmt::print("{:<40} {:>9} {:>9} {:>11}\n", "", "write", "read", "write+read");
    fmt::print("{:<40} {:>9.2f} {:>9.2f} {:>11.2f}\n", "memcpy each way (baseline)", base.write,
               base.read, base.both);
    const auto r = vaccel_rates("socket", host, back, s.repetitions);
    if (!r) {
        fmt::print("{:<40} failed (see above)\n", "socket");
        return false;
    }
    fmt::print("{:<40} {:>9.2f} {:>9.2f} {:>11.2f}\n", "socket: vaccel_buffer_write + read",
               r->write, r->read, r->both);
    const double ratio = r->both / base.both;
    fmt::print("socket / memcpy: {:.2f}x (target >= 0.80x: {})\n", ratio, verdict(ratio >= 0.8));
    record("transfer.memcpy_gbps", base.both);
    record("transfer.socket_gbps", r->both);
    record("transfer.ratio", ratio);
    return true;
}

struct MappedTimes {
    std::vector<std::uint64_t> copy, run, total;
};

// Copies `host` into the mapped input a (b holds ones) and runs c = a + b;
// the first and last results are checked.
std::optional<MappedTimes> mapped_runs(const char* transport, const std::vector<float>& host,
                                       unsigned repetitions)
{
    const std::size_t bytes = host.size() * sizeof(float);
    NoopClient client;
    if (!client.open(transport, 1, "vaccel-cpu", {}, static_cast<std::int64_t>(host.size())))
        return std::nullopt;
    void* mapped[3] = {};
    const std::uint64_t buffers[3] = {client.input(0), client.input(1), client.output(0)};
    for (int i = 0; i < 3; ++i)
        if (const int rc = vaccel_buffer_map(client.client(), buffers[i], &mapped[i]); rc != 0)
            return report("buffer map", rc), std::nullopt;
    auto* a = static_cast<float*>(mapped[0]);
    auto* c = static_cast<const float*>(mapped[2]);
    std::fill_n(static_cast<float*>(mapped[1]), host.size(), 1.0f);
    MappedTimes t;
    for (unsigned i = 0; i < repetitions + 1; ++i) {
        const std::uint64_t t0 = monotonic_ns();
        std::memcpy(a, host.data(), bytes);
        const std::uint64_t t1 = monotonic_ns();
        if (client.run(0) != 0) return std::nullopt;
        const std::uint64_t t2 = monotonic_ns();
        for (std::size_t k : {std::size_t{0}, host.size() / 2, host.size() - 1}) {
            if (c[k] != host[k] + 1.0f) {
                fmt::print(stderr, "{}: c[{}] = {} after the run, expected {}\n", transport, k,
                           c[k], host[k] + 1.0f);
                return std::nullopt;
            }
        }
        if (i == 0) continue;  // warm-up: first touch of the mappings
        t.copy.push_back(t1 - t0);
        t.run.push_back(t2 - t1);
        t.total.push_back(t2 - t0);
    }
    for (std::uint64_t buffer : buffers)
        if (const int rc = vaccel_buffer_unmap(client.client(), buffer); rc != 0)
            return report("buffer unmap", rc), std::nullopt;
    return t;
}

bool mapped(const Settings& s)
{
    const std::uint64_t elements = (s.mib << 20) / sizeof(float);
    fmt::print("\n4. {} MiB copied into a mapped buffer + vaccel_run of c = a + b on {} floats, "
               "median of {} (ms)\n",
               s.mib, elements, s.repetitions);
    std::vector<float> host(elements);
    for (std::uint64_t i = 0; i < elements; ++i) host[i] = static_cast<float>(i % 4096);
    fmt::print("{:<40} {:>9} {:>9} {:>9}\n", "", "copy", "run", "total");
    std::optional<MappedTimes> rows[2];
    const char* names[2] = {"embedded: in process (baseline)", "socket: mapped memfd"};
    const char* transports[2] = {"embedded", "socket"};
    for (int i = 0; i < 2; ++i) {
        rows[i] = mapped_runs(transports[i], host, s.repetitions);
        if (!rows[i]) {
            fmt::print("{:<40} failed (see above)\n", names[i]);
            continue;
        }
        fmt::print("{:<40} {:>9.2f} {:>9.2f} {:>9.2f}\n", names[i],
                   summarize(rows[i]->copy).median_us / 1e3, summarize(rows[i]->run).median_us / 1e3,
                   summarize(rows[i]->total).median_us / 1e3);
    }
    if (!rows[0] || !rows[1]) return false;
    const double embedded = summarize(rows[0]->total).median_us;
    const double socket = summarize(rows[1]->total).median_us;
    const double ratio = socket / embedded;
    fmt::print("socket / embedded: {:.2f}x the time (target <= 1.10x: {})\n", ratio,
               verdict(ratio <= 1.1));
    record("mapped.embedded_ms", embedded / 1e3);
    record("mapped.socket_ms", socket / 1e3);
    record("mapped.ratio", ratio);
    return true;
}

bool write_json(const std::string& path)
{
    std::FILE* out = std::fopen(path.c_str(), "w");
    if (out == nullptr) {
        std::perror(path.c_str());
        return false;
    }
    std::fputs("{", out);
    for (std::size_t i = 0; i < figures.size(); ++i)
        std::fprintf(out, "%s\n  \"%s\": %.6g", i ? "," : "", figures[i].first.c_str(),
                     figures[i].second);
    std::fputs("\n}\n", out);
    return std::fclose(out) == 0;
}

}  // namespace

int main(int argc, char** argv)
{
    std::string vacceld, socket, json;
    bool quick = false;
    Settings s;
    CLI::App app{"the fast paths through vacceld (vaccel_run, transfers, mapped buffers) beside "
                 "their floors"};
    app.add_option("--vacceld", vacceld, "vacceld to start on a private socket");
    app.add_option("--socket", socket, "use the daemon already serving this socket instead");
    app.add_flag("--quick", quick, "few iterations and small sizes (a smoke test)");
    app.add_option("--iterations", s.iterations, "2: measured round trips")->capture_default_str();
    app.add_option("--clients", s.clients, "1: client processes")
        ->capture_default_str()
        ->check(CLI::Range(1u, 256u));
    app.add_option("--seconds", s.seconds, "1: measured time per row")->capture_default_str();
    app.add_option("--mib", s.mib, "3, 4: buffer size in MiB")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    app.add_option("--repetitions", s.repetitions, "3, 4: measured repetitions (median)")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    app.add_option("--json", json, "also write the figures to this file as one JSON object");
    CLI11_PARSE(app, argc, argv);
    if (quick) {
        s.iterations = std::min(s.iterations, 500u);
        s.warmup = 50;
        s.seconds = std::min(s.seconds, 0.2);
        s.mib = std::min<std::uint64_t>(s.mib, 4);
        s.repetitions = std::min(s.repetitions, 2u);
    }
    s.warmup = std::min(s.warmup, s.iterations);

    VacceldProcess daemon;
    std::string path;
    if (!reach_daemon(socket, vacceld, argv[0], -1, daemon, path)) return 1;
    fmt::print("fast paths through vacceld on {} (each beside its baseline, same run)\n", path);
    // The client processes are forked first, before this process opens an
    // embedded client: a child forked from a process whose engine runs
    // threads would inherit its state but none of its threads.
    bool ok = throughput(s);
    ok = latency(s) && ok;
    ok = transfer(s) && ok;
    ok = mapped(s) && ok;
    ok = daemon.stop() && ok;
    if (!json.empty()) ok = write_json(json) && ok;
    return ok ? 0 : 1;
}
