// bench_vm_roundtrip.cpp - the no-op round trip through /dev/vaccel, the
// socket and in process, side by side in one run (the VM test runs it).
//
// A plain program (no Google Benchmark: it is shared-only, and this runs
// statically linked in the VM test's initramfs). Each iteration submits
// c = a + b on [1] floats with already bound buffers and waits for its
// event (the round trip), then destroys the event outside the measurement;
// then the same work as one vaccel_run (submission and wait in one call).
// The three clients are opened first and measured in interleaved blocks
// (kernel, socket, embedded, kernel, ...), so drift of the machine (under
// qemu's TCG, large) falls on all three alike. Prints one line per path and
// the ratios; the lines start with "VMBENCH" so the VM harness can pick
// them out of the serial log. Target: kernel within 1.5x of the socket, for
// both. A path whose vaccel_run is refused from the start is reported as
// such and its run figures left out. Exit status: 0 when every path's
// submit + wait ran (whatever the ratio), 1 otherwise.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "support/latency.hpp"
#include "support/noop_client.hpp"

using namespace vaccel::bench;

namespace {

struct Path {
    const char* transport;
    NoopClient client;
    std::vector<std::uint64_t> round_trip;  // submit + wait, ns
    std::vector<std::uint64_t> run;         // vaccel_run, ns
    bool runs = true;                       // vaccel_run accepted in warm-up
};

// `count` measured round trips of `path`; false after a failed call.
bool measure_block(Path& path, unsigned count, bool keep)
{
    for (unsigned i = 0; i < count; ++i) {
        std::uint64_t event = 0;
        const std::uint64_t start = monotonic_ns();
        if (path.client.submit(0, &event) != 0 || path.client.wait(event) != 0) return false;
        const std::uint64_t done = monotonic_ns();
        if (path.client.destroy(event) != 0) return false;
        if (keep) path.round_trip.push_back(done - start);
        if (!path.runs) continue;
        const std::uint64_t run_start = monotonic_ns();
        if (path.client.run(0) != 0) {
            if (keep) return false;
            std::printf("VMBENCH %s: vaccel_run refused; left out\n", path.transport);
            path.runs = false;
            continue;
        }
        if (keep) path.run.push_back(monotonic_ns() - run_start);
    }
    return true;
}

unsigned option(int argc, char** argv, const char* name, unsigned fallback)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return unsigned(std::strtoul(argv[i + 1], nullptr, 10));
    return fallback;
}

}  // namespace

int main(int argc, char** argv)
{
    const unsigned iterations = option(argc, argv, "--iterations", 2000);
    const unsigned block = option(argc, argv, "--block", 100);
    const unsigned warmup = option(argc, argv, "--warmup", 100);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);

    Path paths[3] = {{"kernel", {}, {}, {}, true}, {"socket", {}, {}, {}, true},
                     {"embedded", {}, {}, {}, true}};
    for (Path& path : paths) {
        if (!path.client.open(path.transport)) {
            std::printf("VMBENCH FAIL: cannot open a %s client\n", path.transport);
            return 1;
        }
        const char* chosen = vaccel_client_transport(path.client.client());
        if (std::strcmp(chosen, path.transport) != 0) {
            std::printf("VMBENCH FAIL: asked for %s, got %s\n", path.transport, chosen);
            return 1;
        }
        if (!measure_block(path, warmup, false)) {
            std::printf("VMBENCH FAIL: %s warm-up\n", path.transport);
            return 1;
        }
    }
    for (unsigned done = 0; done < iterations; done += block) {
        for (Path& path : paths) {
            if (!measure_block(path, std::min(block, iterations - done), true)) {
                std::printf("VMBENCH FAIL: %s round trip\n", path.transport);
                return 1;
            }
        }
    }

    std::printf("VMBENCH no-op submit + wait round trip, %u iterations per path in blocks of "
                "%u, interleaved\n", iterations, block);
    Summary summary[3];
    for (int i = 0; i < 3; ++i) {
        summary[i] = summarize(paths[i].round_trip);
        std::printf("VMBENCH %-8s median %9.1f us  p99 %9.1f us  mean %9.1f us\n",
                    paths[i].transport, summary[i].median_us, summary[i].p99_us,
                    summary[i].mean_us);
    }
    const double kernel_socket = summary[0].median_us / summary[1].median_us;
    const double kernel_embedded = summary[0].median_us / summary[2].median_us;
    const double socket_embedded = summary[1].median_us / summary[2].median_us;
    std::printf("VMBENCH ratio kernel/socket %.2fx (target <= 1.50x: %s)\n", kernel_socket,
                kernel_socket <= 1.5 ? "met" : "NOT met");
    std::printf("VMBENCH ratio kernel/embedded %.2fx, socket/embedded %.2fx\n", kernel_embedded,
                socket_embedded);

    std::printf("VMBENCH no-op vaccel_run (one call), the same iterations\n");
    Summary run[3];
    for (int i = 0; i < 3; ++i) {
        if (!paths[i].runs) continue;
        run[i] = summarize(paths[i].run);
        std::printf("VMBENCH run %-8s median %9.1f us  p99 %9.1f us  mean %9.1f us\n",
                    paths[i].transport, run[i].median_us, run[i].p99_us, run[i].mean_us);
    }
    if (paths[0].runs && paths[1].runs) {
        const double ratio = run[0].median_us / run[1].median_us;
        // The fast path's target: the module adds nothing over the socket.
        std::printf("VMBENCH run ratio kernel/socket %.2fx (target <= 1.00x: %s)\n", ratio,
                    ratio <= 1.0 ? "met" : "NOT met");
    }
    return 0;
}
