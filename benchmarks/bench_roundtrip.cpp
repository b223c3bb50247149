// bench_roundtrip.cpp - a no-op submission's round trip: daemon, in process, floor.
//
// Each iteration submits c = a + b on [1] floats with already bound buffers,
// waits for its event and destroys it (three calls, each one request and one
// response over the socket). Measured, in one run and printed side by side:
//  - the floor: a bare 64-byte SOCK_SEQPACKET ping-pong between two processes;
//  - "embedded": the same calls through libvaccel with the engine in process;
//  - "socket": the same calls through libvaccel to vacceld (started here on a
//    private socket, or the one given with --socket).
// With a daemon started here, the three are measured again with every
// process pinned to one CPU (cross-core wake-ups are what the unpinned floor
// mostly costs on small VMs). Ratios are daemon / floor: the target is a
// socket round trip within 1.5x of the floor.
//
// With --device vulkan the program runs on the first Vulkan device the
// daemon serves (the daemon started here serves cpu and vulkan:0), and one
// more floor is measured in the same run: an empty command buffer submitted
// straight to that device with vkQueueSubmit and waited for with
// vkWaitForFences in this process (support/raw_vulkan.hpp). The target
// there: submit + completion through vacceld within 1.0x of that floor.
//
// With --device cuda each submission is instead a launch of an empty kernel
// (tests/cuda/kernels, PTX) on the first CUDA device (the daemon serves cpu
// and cuda:0), and the floor is cuLaunchKernel + cuStreamSynchronize of the
// same kernel in this process (support/raw_cuda.hpp). The target there:
// launch + completion through vacceld within that floor plus 1.5x the
// ping-pong floor of the same set.
#include <sched.h>

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "support/latency.hpp"
#include "support/noop_client.hpp"
#include "support/seqpacket_floor.hpp"
#ifdef VACCEL_BENCH_VULKAN
#include "support/raw_vulkan.hpp"
#endif
#ifdef VACCEL_BENCH_CUDA
#include "support/raw_cuda.hpp"
#endif
#include "support/reach_daemon.hpp"

using namespace vaccel::bench;

namespace {

// Per-iteration times of each call and of the whole iteration.
struct CallTimes {
    std::vector<std::uint64_t> submit, wait, destroy, submit_wait, total;
};

// The device the no-op program runs on: "cpu", "vulkan" or "cuda".
std::string device_kind = "cpu";
const char* driver_prefix()
{
    if (device_kind == "cuda") return "vaccel-cuda";
    return device_kind == "vulkan" ? "vaccel-vulkan" : "vaccel-cpu";
}
// --device cuda: the test kernels' PTX, whose `noop` each submission launches.
std::vector<std::uint8_t> cuda_kernels;

// The UUID of the device the no-op ran on (for the raw Vulkan floor).
std::array<std::uint8_t, 16> device_uuid{};

std::optional<CallTimes> measure(const char* transport, unsigned iterations, unsigned warmup)
{
    NoopClient client;
    if (!client.open(transport, 1, driver_prefix(), cuda_kernels)) return std::nullopt;
    std::memcpy(device_uuid.data(), client.device().uuid, device_uuid.size());
    CallTimes t;
    for (auto* v : {&t.submit, &t.wait, &t.destroy, &t.submit_wait, &t.total})
        v->reserve(iterations);
    for (unsigned i = 0; i < warmup + iterations; ++i) {
        std::uint64_t event = 0;
        const std::uint64_t t0 = monotonic_ns();
        if (client.submit(0, &event) != 0) return std::nullopt;
        const std::uint64_t t1 = monotonic_ns();
        if (client.wait(event) != 0) return std::nullopt;
        const std::uint64_t t2 = monotonic_ns();
        if (client.destroy(event) != 0) return std::nullopt;
        const std::uint64_t t3 = monotonic_ns();
        if (i < warmup) continue;
        t.submit.push_back(t1 - t0);
        t.wait.push_back(t2 - t1);
        t.destroy.push_back(t3 - t2);
        t.submit_wait.push_back(t2 - t0);
        t.total.push_back(t3 - t0);
    }
    return t;
}

std::string cell(const Summary& s) { return fmt::format("{:.1f} / {:.1f}", s.median_us, s.p99_us); }

void print_header()
{
    fmt::print("{:<26} {:>15} {:>15} {:>15} {:>15} {:>15} {:>9} {:>9}\n", "path (median / p99 µs)",
               "submit+wait+dst", "submit", "wait", "destroy", "submit+wait", "total/fl",
               "call/fl");
}

void print_floor(const Summary& floor)
{
    fmt::print("{:<26} {:>15} {:>15} {:>15} {:>15} {:>15} {:>9} {:>9}\n",
               "floor: 64 B ping-pong", cell(floor), "-", "-", "-", "-", "1.00x", "1.00x");
}

// call/fl: the median of the slowest single call (one request + response)
// over the floor's median.
void print_row(const char* name, const CallTimes& t, const Summary& floor)
{
    const Summary total = summarize(t.total), submit = summarize(t.submit),
                  wait = summarize(t.wait), destroy = summarize(t.destroy),
                  submit_wait = summarize(t.submit_wait);
    const double slowest_call = std::max({submit.median_us, wait.median_us, destroy.median_us});
    fmt::print("{:<26} {:>15} {:>15} {:>15} {:>15} {:>15} {:>8.2f}x {:>8.2f}x\n", name,
               cell(total), cell(submit), cell(wait), cell(destroy), cell(submit_wait),
               total.median_us / floor.median_us, slowest_call / floor.median_us);
}

// One full set: floor, embedded, socket. False if a path failed.
bool run_set(const char* title, int cpu, unsigned iterations, unsigned warmup)
{
    fmt::print("\n{}\n", title);
    PingPong ping;
    ping.round_trips = iterations;
    ping.cpu = cpu;
    const auto floor_samples = seqpacket_ping_pong(ping);
    if (floor_samples.empty()) return false;
    const Summary floor = summarize(floor_samples);
    print_header();
    print_floor(floor);
    bool ok = true;
    double socket_submit_wait = 0;
    for (const char* transport : {"embedded", "socket"}) {
        const auto times = measure(transport, iterations, warmup);
        if (!times) {
            fmt::print("{:<26} failed (see above)\n", transport);
            ok = false;
            continue;
        }
        print_row(std::string(transport) == "socket" ? "socket (vacceld)" : "embedded (in process)",
                  *times, floor);
        if (std::string(transport) == "socket")
            socket_submit_wait = summarize(times->submit_wait).median_us;
    }
#ifdef VACCEL_BENCH_VULKAN
    if (device_kind == "vulkan") {
        // The same physical device opened directly, found by its UUID.
        RawVulkan raw(device_uuid);
        const double floor_us = raw.empty_submit_seconds(static_cast<int>(iterations)) * 1e6;
        fmt::print("{:<26} {:>15.1f} (median; vkQueueSubmit of an empty command buffer + "
                   "vkWaitForFences on {}, in process)\n", "vulkan floor", floor_us, raw.name());
        if (socket_submit_wait > 0)
            fmt::print("socket submit+wait / vulkan floor: {:.2f}x (target <= 1.00x)\n",
                       socket_submit_wait / floor_us);
    }
#endif
#ifdef VACCEL_BENCH_CUDA
    if (device_kind == "cuda") {
        RawCuda raw(device_uuid, cuda_kernels);
        const double raw_us = raw.launch_sync_seconds(static_cast<int>(iterations)) * 1e6;
        fmt::print("{:<26} {:>15.1f} (median; cuLaunchKernel of the empty kernel + "
                   "cuStreamSynchronize on {}, in process)\n", "cuda floor", raw_us, raw.name());
        const double target = raw_us + 1.5 * floor.median_us;
        if (socket_submit_wait > 0)
            fmt::print("socket launch+wait {:.1f} us vs target cuda floor + 1.5 x ping-pong = "
                       "{:.1f} us: {:.2f}x of the target\n",
                       socket_submit_wait, target, socket_submit_wait / target);
    }
#endif
    (void)socket_submit_wait;
    return ok;
}

bool pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0;
}

}  // namespace

int main(int argc, char** argv)
{
    std::string vacceld, socket;
    unsigned iterations = 20000, warmup = 1000;
    int cpu = 0;
    bool pinned = true;
    CLI::App app{"no-op submission + wait round trip: vacceld vs in process vs the socket floor"};
    app.add_option("--vacceld", vacceld, "vacceld to start on a private socket (default: found "
                                         "beside this program or in the build tree)");
    app.add_option("--socket", socket, "use the daemon already serving this socket instead");
    app.add_option("--iterations", iterations, "measured iterations per path")->capture_default_str();
    app.add_option("--warmup", warmup, "unmeasured iterations first")->capture_default_str();
    app.add_option("--cpu", cpu, "CPU for the pinned set")->capture_default_str();
    app.add_flag("!--no-pinned", pinned, "skip the set with every process pinned to one CPU");
    std::vector<std::string> kinds{"cpu"};
#ifdef VACCEL_BENCH_VULKAN
    kinds.push_back("vulkan");
#endif
    std::string ptx_path;
#ifdef VACCEL_BENCH_CUDA
    kinds.push_back("cuda");
    ptx_path = VACCEL_BENCH_CUDA_PTX;
    app.add_option("--ptx", ptx_path, "--device cuda: the test kernels' PTX")->capture_default_str();
#endif
    app.add_option("--device", device_kind, "where the no-op runs: cpu, the first Vulkan device "
                                            "(vulkan) or the first CUDA device (cuda), as built")
        ->check(CLI::IsMember(kinds))
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
#ifdef VACCEL_BENCH_CUDA
    if (device_kind == "cuda") cuda_kernels = read_file(ptx_path);
#endif

    fmt::print("no-op submission round trip on the {} device: submit ({}) + wait + event "
               "destroy, {} iterations after {} warm-up; floor: {} round trips\n",
               device_kind,
               device_kind == "cuda" ? "launch of an empty kernel, one thread"
                                     : "ADD of [1] floats, bound buffers",
               iterations, warmup, iterations);
    const std::string devices = device_kind == "cpu" ? "\"cpu\""
                                                     : "\"cpu\", \"" + device_kind + ":0\"";
    bool ok = true;
    {
        VacceldProcess daemon;
        std::string path;
        if (!reach_daemon(socket, vacceld, argv[0], -1, daemon, path, devices)) return 1;
        ok = run_set(fmt::format("unpinned (daemon on {})", path).c_str(), -1, iterations,
                     warmup) && ok;
        ok = daemon.stop() && ok;
    }
    if (pinned && socket.empty()) {
        VacceldProcess daemon;
        std::string path;
        if (!reach_daemon("", vacceld, argv[0], cpu, daemon, path, devices)) return 1;
        if (!pin_self(cpu)) {
            std::perror("sched_setaffinity");
            return 1;
        }
        ok = run_set(fmt::format("every process pinned to CPU {} (daemon too)", cpu).c_str(), cpu,
                     iterations, warmup) && ok;
        ok = daemon.stop() && ok;
    }
    fmt::print("\ntotal/fl: whole iteration (3 calls) over the floor; call/fl: the slowest single "
               "call (1 request + 1 response) over the floor. Target: socket within 1.50x.\n");
    return ok ? 0 : 1;
}
