// bench_transfer.cpp - moving 64 MiB into and out of a buffer: daemon vs memcpy.
//
// vaccel_buffer_write then vaccel_buffer_read of the whole buffer through
// vacceld (payloads over VACCEL_MSG_INLINE_MAX travel in a memfd), through
// the embedded transport, and memcpy of the same bytes into and out of host
// memory as the baseline, all in one run (support/transfer_rates.hpp).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "support/transfer_rates.hpp"
#include "support/reach_daemon.hpp"

using namespace vaccel::bench;

namespace {

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
