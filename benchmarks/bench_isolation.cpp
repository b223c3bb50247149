// bench_isolation.cpp - what a tenant of a shared device gets beside others
// (docs/adr/0026-gpu-device-scheduler.md), through the Backend interface in
// process: the device's own scheduler decides, as it does inside vacceld.
//
// Owns: the figures of the isolation benchmark, each printed beside its
// baseline from the same run:
//  1. a latency tenant (priority latency, weight 1000) runs an ADD of
//     `add_elements` floats `runs` times, each submitted when the previous
//     one ended: median and p99 alone, then beside `batch` batch tenants
//     (weight 100) each keeping two MATMULs of side `n` in flight; with the
//     device's slicing on (slice_us as configured) and off (slice_us = 0),
//     each with the latency hold off (latency_hold_us = 0) and, sliced or
//     not cut, on (as configured); `think_us` between a run's end and the
//     next submission (0: a closed loop);
//  2. the batch tenants' aggregate MATMUL throughput in each configuration
//     against slicing and hold off, and the share of the window the device
//     sat idle held for the latency tenant;
//  3. two batch tenants of weights 100 and 300: the device time each was
//     charged (the scheduler's accounts), and their ratio;
//  4. one tenant with device_share 30% alone on the device: its charged time
//     over the wall time of the window.
// Devices: vulkan:N, and cuda:N where the build has CUDA (its contexts in
// vaccel-cuda-host processes, as vacceld runs them, cut into segments by
// the hosts and released by the proxy's scheduler).
// Nothing is asserted; the exit status is non-zero only when the device
// refused or failed work.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "support/latency.hpp"
#include "vaccel/backend/vulkan.hpp"
#ifdef VACCEL_BENCH_HAS_CUDA
#include "vaccel/backend/cuda.hpp"
#endif
#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/graph.hpp"

using namespace vaccel;
using namespace vaccel::backend;
using vaccel::bench::monotonic_ns;
using vaccel::bench::summarize;

namespace {

struct Options {
    std::int64_t n = 4096;               // the batch tenants' MATMUL side
    std::int64_t add_elements = 65536;   // the latency tenant's ADD
    unsigned batch = 4;
    unsigned runs = 300;
    double seconds = 2.0;                // each throughput / share window
    std::uint32_t slice_us = 250;
    std::uint32_t latency_hold_us = default_latency_hold_us;
    unsigned think_us = 0;               // the latency tenant's pause between runs
    std::string device = "vulkan:0";     // vulkan:N or cuda:N
    bool cuda() const { return device.starts_with("cuda:"); }
    unsigned index() const { return static_cast<unsigned>(std::stoul(device.substr(device.find(':') + 1))); }
};

[[noreturn]] void die(const std::string& what, const Error& error)
{
    std::fprintf(stderr, "bench_isolation: %s: %s\n", what.c_str(), error.note.c_str());
    std::exit(1);
}
template <typename T>
    requires(!std::is_void_v<T>)
T must(Result<T>&& result, const std::string& what)
{
    if (!result.has_value()) die(what, result.error());
    return std::move(*result);
}
void must(const Status& status, const std::string& what)
{
    if (!status.has_value()) die(what, status.error());
}

std::vector<std::uint8_t> matmul_program(std::int64_t n)
{
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", {1, n, n}, tosa::DType::fp32);
    const auto b = g.tensor("b", {1, n, n}, tosa::DType::fp32);
    const auto out = g.tensor("out", {1, n, n}, tosa::DType::fp32);
    const float zero[] = {0.0f};
    const auto a_zp = g.constant_f32("a_zp", {1}, zero);
    g.op(tosa::Op::const_, {}, {a_zp});
    const auto b_zp = g.constant_f32("b_zp", {1}, zero);
    g.op(tosa::Op::const_, {}, {b_zp});
    g.op(tosa::Op::matmul, {a, b, a_zp, b_zp}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    return tosa::serialize(g.finish());
}

std::vector<std::uint8_t> add_program(std::int64_t n)
{
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", {n}, tosa::DType::fp32);
    const auto b = g.tensor("b", {n}, tosa::DType::fp32);
    const auto c = g.tensor("c", {n}, tosa::DType::fp32);
    g.op(tosa::Op::add, {a, b}, {c});
    g.input(a);
    g.input(b);
    g.output(c);
    return tosa::serialize(g.finish());
}

class NoSink final : public EventSink {
public:
    void completed(const EventStatus&) noexcept override {}
};

// One tenant: a context in its flow, one program, its inputs, `depth`
// outputs (one per submission in flight).
struct Tenant {
    Backend& device;
    std::unique_ptr<Context> context;
    std::unique_ptr<Queue> queue;
    std::unique_ptr<Program> program;
    std::vector<std::unique_ptr<Buffer>> buffers;  // inputs, then outputs
    std::size_t inputs = 0;

    Tenant(Backend& d, const ContextSchedule& schedule, const std::vector<std::uint8_t>& payload,
           unsigned depth)
        : device(d)
    {
        context = must(device.create_context(), "creating a context");
        device.set_context_schedule(*context, schedule);
        queue = must(device.create_queue(*context), "creating a queue");
        ProgramDesc desc;
        desc.payload = std::as_bytes(std::span(payload));
        program = must(device.load_program(*context, desc), "loading a program");
        const auto slots = program->slots();
        inputs = program->input_count();
        for (std::size_t s = 0; s < slots.size(); ++s) {
            const unsigned copies = s < inputs ? 1 : depth;
            for (unsigned c = 0; c < copies; ++c) {
                BufferDesc b;
                b.bytes = slots[s].bytes;
                b.domain = VACCEL_DOMAIN_DEVICE;  // as a real tenant's (a CUDA Host buffer is read over PCIe)
                BufferInfo info;
                buffers.push_back(must(device.allocate_buffer(*context, b, info), "a buffer"));
                if (s < inputs) {
                    std::vector<float> values(slots[s].bytes / sizeof(float), 0.5f);
                    must(device.write_buffer(*buffers.back(), 0, std::as_bytes(std::span(values))),
                         "writing an input");
                }
            }
        }
    }
    std::unique_ptr<Event> submit(unsigned output)
    {
        const auto slots = program->slots();
        std::vector<Binding> bindings;
        for (std::uint32_t s = 0; s < inputs; ++s)
            bindings.push_back({s, VACCEL_ACCESS_READ, buffers[s].get(), 0, slots[s].bytes});
        bindings.push_back({static_cast<std::uint32_t>(inputs), VACCEL_ACCESS_WRITE,
                            buffers[inputs + output].get(), 0, slots[inputs].bytes});
        SubmitDesc desc;
        desc.queue = queue.get();
        desc.program = program.get();
        desc.bindings = bindings;
        desc.sink = std::make_shared<NoSink>();
        return std::move(must(device.submit(desc), "submitting").event);
    }
    // Polls (no sleep: the latency tenant measures the device's answer).
    void wait(std::unique_ptr<Event>& event)
    {
        EventStatus status;
        while ((status = device.poll(*event)).state == EventState::pending) {
        }
        if (status.state != EventState::complete) die("a run", status.failure);
        must(device.destroy_event(event), "destroying an event");
    }
    ~Tenant()
    {
        for (auto& b : buffers) (void)device.free_buffer(b);
        (void)device.unload_program(program);
        (void)device.destroy_queue(queue);
        (void)device.destroy_context(context);
    }
};

ContextSchedule schedule(std::string flow, std::uint32_t weight, bool latency = false,
                         std::uint32_t share = 1000)
{
    ContextSchedule s;
    s.flow = std::move(flow);
    s.weight = weight;
    s.latency = latency;
    s.share_permille = share;
    return s;
}

// Batch tenants looping two MATMULs in flight each until stopped; counts
// what they completed.
class BatchLoad {
public:
    BatchLoad(Backend& device, const Options& o, std::vector<ContextSchedule> schedules)
    {
        const auto payload = matmul_program(o.n);
        for (const ContextSchedule& s : schedules)
            tenants_.push_back(std::make_unique<Tenant>(device, s, payload, 2));
        for (auto& t : tenants_)
            threads_.emplace_back([this, tenant = t.get()] { loop(*tenant); });
    }
    std::uint64_t completed() const { return completed_.load(); }
    ~BatchLoad()
    {
        stop_ = true;
        for (auto& t : threads_) t.join();
    }

private:
    void loop(Tenant& t)
    {
        std::unique_ptr<Event> events[2] = {t.submit(0), t.submit(1)};
        for (unsigned next = 0; !stop_; next ^= 1) {
            t.wait(events[next]);
            completed_.fetch_add(1);
            events[next] = t.submit(next);
        }
        t.wait(events[0]);
        t.wait(events[1]);
    }
    std::vector<std::unique_ptr<Tenant>> tenants_;
    std::vector<std::thread> threads_;
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> completed_{0};
};

vaccel::bench::Summary latency_runs(Tenant& t, unsigned runs, unsigned think_us)
{
    std::vector<std::uint64_t> samples;
    for (unsigned i = 0; i < runs + 10; ++i) {
        if (think_us != 0) std::this_thread::sleep_for(std::chrono::microseconds(think_us));
        const std::uint64_t start = monotonic_ns();
        auto event = t.submit(0);
        t.wait(event);
        if (i >= 10) samples.push_back(monotonic_ns() - start);  // 10 warm-up runs
    }
    return summarize(std::move(samples));
}

void sleep_for(double seconds)
{
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

// The device, its slicing and latency hold as given (0: off).
std::unique_ptr<Backend> open_device(const Options& o, std::uint32_t slice_us,
                                     std::uint32_t hold_us)
{
    std::vector<std::unique_ptr<Backend>> devices;
    std::string unavailable;
    if (o.cuda()) {
#ifdef VACCEL_BENCH_HAS_CUDA
        CudaOptions options;
        options.slice_us = slice_us;
        options.latency_hold_us = hold_us;
        CudaDevices found = open_cuda_devices(options);
        devices = std::move(found.devices);
        unavailable = found.unavailable;
#else
        unavailable = "this build has no CUDA backend";
#endif
    } else {
        VulkanOptions options;
        options.slice_us = slice_us;
        options.latency_hold_us = hold_us;
        VulkanDevices found = open_vulkan_devices(options);
        devices = std::move(found.devices);
        unavailable = found.unavailable;
    }
    if (devices.size() <= o.index()) {
        std::fprintf(stderr, "bench_isolation: no device %s (%s)\n", o.device.c_str(),
                     unavailable.c_str());
        std::exit(1);
    }
    return std::move(devices[o.index()]);
}

std::uint64_t charged(Backend& device, const std::string& flow)
{
    if (auto service = device.device_service())
        for (const FlowService& f : service->flows)
            if (f.flow == flow) return f.charged_ns;
    return 0;
}

// Of the flow's charged time, the idle time the device was held for it.
std::uint64_t held(Backend& device, const std::string& flow)
{
    if (auto service = device.device_service())
        for (const FlowService& f : service->flows)
            if (f.flow == flow) return f.held_ns;
    return 0;
}

struct Loaded {
    vaccel::bench::Summary alone, beside;
    double throughput = 0;  // batch MATMULs per second, beside the latency tenant
    double held_share = 0;  // of that window, the device held idle for the latency tenant
    // The batch tenants' dispatches (segments, or whole runs) in the
    // device's record at the window's end: how the MATMUL was cut.
    vaccel::bench::Summary batch_dispatch;
};

// Device time of the batch tenants' ended dispatches in the device's record.
vaccel::bench::Summary batch_dispatches(Backend& device)
{
    std::vector<std::uint64_t> used;
    if (auto service = device.device_service())
        for (const DispatchEntry& e : service->recent)
            if (e.ended && e.flow.starts_with("batch")) used.push_back(e.used_ns);
    return summarize(std::move(used));
}

Loaded latency_and_throughput(const Options& o, std::uint32_t slice_us, std::uint32_t hold_us)
{
    auto device = open_device(o, slice_us, hold_us);
    Loaded r;
    Tenant urgent(*device, schedule("latency", 1000, true), add_program(o.add_elements), 1);
    r.alone = latency_runs(urgent, o.runs, o.think_us);
    std::vector<ContextSchedule> batch;
    for (unsigned i = 0; i < o.batch; ++i) batch.push_back(schedule(fmt::format("batch{}", i), 100));
    BatchLoad load(*device, o, batch);
    sleep_for(2.0);  // the profile runs, the cuts settling, the steady state
    const std::uint64_t before = load.completed();
    const std::uint64_t held_before = held(*device, "latency");
    const std::uint64_t start = monotonic_ns();
    r.beside = latency_runs(urgent, o.runs, o.think_us);
    const double elapsed = static_cast<double>(monotonic_ns() - start) / 1e9;
    sleep_for(std::max(0.0, o.seconds - elapsed));
    const double window = static_cast<double>(monotonic_ns() - start) / 1e9;
    r.throughput = static_cast<double>(load.completed() - before) / window;
    r.held_share = static_cast<double>(held(*device, "latency") - held_before) / 1e9 / window;
    r.batch_dispatch = batch_dispatches(*device);
    return r;
}

}  // namespace

int main(int argc, char** argv)
{
    Options o;
    CLI::App app{"Isolation of tenants on one Vulkan device: latency beside batch work, batch "
                 "throughput with and without slicing, weights and device shares."};
    app.add_option("--n", o.n, "batch MATMUL side");
    app.add_option("--add-elements", o.add_elements, "the latency tenant's ADD length");
    app.add_option("--batch", o.batch, "batch tenants");
    app.add_option("--runs", o.runs, "latency runs per measurement");
    app.add_option("--seconds", o.seconds, "each window");
    app.add_option("--slice-us", o.slice_us, "the sliced configurations' slice_us");
    app.add_option("--latency-hold-us", o.latency_hold_us,
                   "the held configurations' latency_hold_us");
    app.add_option("--think-us", o.think_us,
                   "the latency tenant's pause between a run's end and its next submission");
    app.add_option("--device", o.device, "vulkan:N or cuda:N")
        ->check([](const std::string& d) {
            const bool ok = (d.starts_with("vulkan:") || d.starts_with("cuda:")) &&
                            d.find_first_not_of("0123456789", d.find(':') + 1) == std::string::npos &&
                            d.size() > d.find(':') + 1;
            return ok ? std::string() : "expected vulkan:N or cuda:N, got " + d;
        });
    CLI11_PARSE(app, argc, argv);

    std::printf("isolation on %s: %u batch tenants looping MATMUL %lld^3, a latency tenant's ADD "
                "of %lld floats, %u runs, %u us between them\n",
                o.device.c_str(), o.batch, static_cast<long long>(o.n),
                static_cast<long long>(o.add_elements), o.runs, o.think_us);
    struct Configuration {
        std::string name;
        std::uint32_t slice_us, hold_us;
    };
    std::vector<Configuration> plan;
    plan.push_back({"slicing off", 0, 0});
    plan.push_back({"sliced", o.slice_us, 0});
    plan.push_back({fmt::format("sliced, hold {} us", o.latency_hold_us), o.slice_us,
                    o.latency_hold_us});
    std::vector<Loaded> results;
    for (const Configuration& c : plan) results.push_back(latency_and_throughput(o, c.slice_us, c.hold_us));
    for (std::size_t i = 0; i < plan.size(); ++i) {
        const Loaded& r = results[i];
        std::printf("%-22s latency alone median %8.1f us p99 %8.1f us | beside batch median "
                    "%8.1f us p99 %8.1f us | loaded/alone median %5.2fx p99 %5.2fx\n",
                    plan[i].name.c_str(), r.alone.median_us, r.alone.p99_us, r.beside.median_us,
                    r.beside.p99_us, r.beside.median_us / r.alone.median_us,
                    r.beside.p99_us / r.alone.p99_us);
        std::printf("%-22s batch %.2f MATMUL/s (%.3fx of %s), device held idle for the latency "
                    "tenant %.2f%% of the window\n",
                    "", r.throughput, r.throughput / results[0].throughput, plan[0].name.c_str(),
                    100.0 * r.held_share);
        std::printf("%-22s batch dispatches in the record: %zu, device time median %.1f us, "
                    "p99 %.1f us\n",
                    "", r.batch_dispatch.count, r.batch_dispatch.median_us, r.batch_dispatch.p99_us);
    }

    auto device = open_device(o, o.slice_us, o.latency_hold_us);
    {
        BatchLoad load(*device, o, {schedule("w100", 100), schedule("w300", 300)});
        sleep_for(0.5);
        const std::uint64_t a0 = charged(*device, "w100"), b0 = charged(*device, "w300");
        sleep_for(o.seconds);
        const double a = static_cast<double>(charged(*device, "w100") - a0);
        const double b = static_cast<double>(charged(*device, "w300") - b0);
        std::printf("weights 100:300 charged %.1f ms : %.1f ms over %.1f s = 1:%.2f (target 1:3 "
                    "+- 10%%)\n",
                    a / 1e6, b / 1e6, o.seconds, b / a);
    }
    {
        BatchLoad load(*device, o, {schedule("share30", 100, false, 300)});
        sleep_for(1.5);  // past the first window
        const std::uint64_t c0 = charged(*device, "share30");
        const std::uint64_t t0 = monotonic_ns();
        sleep_for(o.seconds);
        const double c = static_cast<double>(charged(*device, "share30") - c0);
        const double t = static_cast<double>(monotonic_ns() - t0);
        std::printf("device_share 30%% alone: charged %.1f ms of %.1f ms = %.1f%% (target 30%% "
                    "+- 5%%)\n",
                    c / 1e6, t / 1e6, 100.0 * c / t);
    }
    return 0;
}
