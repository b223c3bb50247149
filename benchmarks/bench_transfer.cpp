// bench_transfer.cpp - moving 64 MiB into and out of a buffer: daemon vs memcpy.
//
// vaccel_buffer_write then vaccel_buffer_read of the whole buffer through
// vacceld (payloads over VACCEL_MSG_INLINE_MAX travel in a memfd), through
// the embedded transport, and memcpy of the same bytes into and out of host
// memory as the baseline, all in one run: GB/s (10^9 bytes/s) of the median
// of the repetitions. Every destination is touched before timing, so page
// faults of first use are not counted anywhere.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/latency.hpp"
#include "support/noop_client.hpp"
#include "support/vacceld_process.hpp"

using namespace vaccel::bench;

namespace {

struct Rates {
    double write = 0, read = 0, both = 0;  // GB/s
};

double gbps(std::uint64_t bytes, std::uint64_t ns) { return static_cast<double>(bytes) / static_cast<double>(ns); }

std::uint64_t median(std::vector<std::uint64_t> v)
{
    std::sort(v.begin(), v.end());
    return v[(v.size() - 1) / 2];
}

Rates rates_of(std::uint64_t bytes, const std::vector<std::uint64_t>& writes,
               const std::vector<std::uint64_t>& reads)
{
    std::vector<std::uint64_t> both;
    for (std::size_t i = 0; i < writes.size(); ++i) both.push_back(writes[i] + reads[i]);
    return {gbps(bytes, median(writes)), gbps(bytes, median(reads)), gbps(2 * bytes, median(both))};
}

Rates memcpy_rates(std::vector<char>& host, std::vector<char>& back, unsigned repetitions)
{
    std::vector<char> device(host.size());
    std::memset(device.data(), 0, device.size());
    std::vector<std::uint64_t> writes, reads;
    for (unsigned i = 0; i < repetitions + 1; ++i) {
        const std::uint64_t t0 = monotonic_ns();
        std::memcpy(device.data(), host.data(), host.size());
        const std::uint64_t t1 = monotonic_ns();
        std::memcpy(back.data(), device.data(), device.size());
        const std::uint64_t t2 = monotonic_ns();
        if (i == 0) continue;  // warm-up
        writes.push_back(t1 - t0);
        reads.push_back(t2 - t1);
    }
    return rates_of(host.size(), writes, reads);
}

std::optional<Rates> vaccel_rates(const char* transport, std::vector<char>& host,
                                  std::vector<char>& back, unsigned repetitions)
{
    NoopClient client;
    if (!client.open(transport)) return std::nullopt;
    std::uint64_t buffer = 0;
    if (allocate(client.client(), client.context(), host.size(), &buffer) != 0) return std::nullopt;
    std::vector<std::uint64_t> writes, reads;
    for (unsigned i = 0; i < repetitions + 1; ++i) {
        std::memset(back.data(), 0, back.size());
        const std::uint64_t t0 = monotonic_ns();
        int rc = vaccel_buffer_write(client.client(), buffer, 0, host.data(), host.size());
        if (rc != 0) return report("buffer write", rc), std::nullopt;
        const std::uint64_t t1 = monotonic_ns();
        rc = vaccel_buffer_read(client.client(), buffer, 0, back.data(), back.size());
        if (rc != 0) return report("buffer read", rc), std::nullopt;
        const std::uint64_t t2 = monotonic_ns();
        if (std::memcmp(host.data(), back.data(), host.size()) != 0) {
            fmt::print(stderr, "{}: the bytes read back differ from those written\n", transport);
            return std::nullopt;
        }
        if (i == 0) continue;  // warm-up: the buffer's and the transport's first use
        writes.push_back(t1 - t0);
        reads.push_back(t2 - t1);
    }
    return rates_of(host.size(), writes, reads);
}

void print_row(const char* name, const Rates& r, const Rates& base)
{
    fmt::print("{:<22} {:>10.2f} {:>10.2f} {:>15.2f} {:>12.2f}x\n", name, r.write, r.read, r.both,
               base.both / r.both);
}

}  // namespace

int main(int argc, char** argv)
{
    std::string vacceld, socket;
    std::uint64_t mib = 64;
    unsigned repetitions = 5;
    CLI::App app{"64 MiB buffer write + read through vacceld vs memcpy"};
    app.add_option("--vacceld", vacceld, "vacceld to start on a private socket");
    app.add_option("--socket", socket, "use the daemon already serving this socket instead");
    app.add_option("--mib", mib, "buffer size in MiB")->capture_default_str()->check(CLI::Range(1, 4096));
    app.add_option("--repetitions", repetitions, "measured repetitions (median)")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    CLI11_PARSE(app, argc, argv);

    VacceldProcess daemon;
    std::string path;
    if (!reach_daemon(socket, vacceld, argv[0], -1, daemon, path)) return 1;

    const std::uint64_t bytes = mib << 20;
    std::vector<char> host(bytes), back(bytes);
    for (std::uint64_t i = 0; i < bytes; ++i) host[i] = static_cast<char>(i * 131 + 7);
    std::memset(back.data(), 0, back.size());

    fmt::print("{} MiB buffer write + read, median of {} repetitions (GB/s = 10^9 B/s); daemon on "
               "{}\n",
               mib, repetitions, path);
    fmt::print("{:<22} {:>10} {:>10} {:>15} {:>13}\n", "path", "write", "read", "write+read",
               "memcpy/this");
    const Rates base = memcpy_rates(host, back, repetitions);
    print_row("memcpy", base, base);
    bool ok = true;
    for (const char* transport : {"embedded", "socket"}) {
        const auto r = vaccel_rates(transport, host, back, repetitions);
        if (!r) {
            fmt::print("{:<22} failed (see above)\n", transport);
            ok = false;
            continue;
        }
        print_row(std::string(transport) == "socket" ? "socket (vacceld)" : "embedded (in process)",
                  *r, base);
    }
    ok = daemon.stop() && ok;
    return ok ? 0 : 1;
}
