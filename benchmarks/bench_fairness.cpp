// bench_fairness.cpp - how the CPU backend shares its workers between contexts.
//
// Owns: figures of the CPU backend's scheduling (backends/cpu/src/
// fair_queue.hpp: deficit round-robin by weight, and the headroom rule),
// measured in process through the Backend interface with the backend's own
// worker threads, each printed beside what those rules predict. Nothing is
// asserted: the rules themselves are checked step by step, without a clock,
// in tests/cpu/test_cpu_fair_queue.cpp. Decides the three sets:
//  1. weights, one worker: two contexts, one queue each, keep `depth`
//     MATMULs in flight each for the window; the share of the completions
//     each got, beside w / sum(w) (every submission costs one dispatch slot,
//     so the shares of equal submissions follow the weights).
//  2. weights, two workers, two queues per context: the headroom rule keeps
//     a context to workers - 1 running submissions while the other one is
//     active, so the expected share is w / sum(w) clamped to
//     [1 / workers, (workers - 1) / workers] (with two workers: one half
//     each, whatever the weights).
//  3. headroom, two workers: an interactive context's round trip (one ADD
//     on [1] floats, submitted as soon as the previous one completed) alone
//     and beside a context flooding both workers from two queues (median,
//     p99 and the loaded / alone ratio; the daemon test that used to assert
//     this ratio allowed 2x), and the flood's throughput alone and beside
//     the interactive context (what the free worker costs it: one of two).
// Completions are counted when this program sees them (one thread drives
// every context, woken by the backend's completion notifier), over a window
// that starts after a warm-up; every submission is drained before a set
// ends. Exit status: non-zero only when the backend refused or failed work.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "support/latency.hpp"
#include "vaccel/backend/cpu.hpp"
#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/graph.hpp"

using namespace vaccel;
using namespace vaccel::backend;
using vaccel::bench::summarize;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
    double seconds = 1.0;   // each measurement window
    double warmup = 0.2;    // before each window
    std::int64_t n = 256;   // MATMUL [1,n,n] x [1,n,n] of the flooding contexts (~1 ms)
    unsigned depth = 8;     // submissions a flooding context keeps in flight
};

[[noreturn]] void die(const std::string& what, const Error& error)
{
    std::fprintf(stderr, "bench_fairness: %s: %s\n", what.c_str(), error.note.c_str());
    std::exit(1);
}

// The value of a Result, or the end of the program (the refusal printed).
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

std::vector<std::uint8_t> add_program()
{
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", {1}, tosa::DType::fp32);
    const auto b = g.tensor("b", {1}, tosa::DType::fp32);
    const auto c = g.tensor("c", {1}, tosa::DType::fp32);
    g.op(tosa::Op::add, {a, b}, {c});
    g.input(a);
    g.input(b);
    g.output(c);
    return tosa::serialize(g.finish());
}

// Tells the device of each completion (from the backend's worker).
class NotifySink final : public EventSink {
public:
    explicit NotifySink(const std::function<void()>& notify) : notify_(notify) {}
    void completed(const EventStatus&) noexcept override { notify_(); }

private:
    const std::function<void()>& notify_;  // Ownership: the Device's, which outlives its backend
};

// The backend and the notifier that wakes the driving thread.
struct Device {
    // Declared first: they outlive the backend's workers, which notify.
    std::mutex mutex;
    std::condition_variable changed;
    std::uint64_t completions = 0;  // guarded by mutex
    std::function<void()> notify;   // every submission's sink calls it
    std::unique_ptr<Backend> backend;

    explicit Device(unsigned workers) : backend(open_cpu_backend(CpuOptions{workers}))
    {
        notify = [this] {
            std::lock_guard lock(mutex);
            ++completions;
            changed.notify_all();
        };
    }
    // Until some completion after `seen` (or 5 ms, a guard against a lost
    // wake-up); returns the new count.
    std::uint64_t wait_after(std::uint64_t seen)
    {
        std::unique_lock lock(mutex);
        changed.wait_for(lock, std::chrono::milliseconds(5), [&] { return completions != seen; });
        return completions;
    }
    std::uint64_t seen()
    {
        std::lock_guard lock(mutex);
        return completions;
    }
};

// One context: `queues` queues, one program, shared inputs, one output
// buffer per slot (a written buffer belongs to its submission until it
// completes), and up to `slots` submissions in flight, queues in turn.
struct Tenant {
    std::string name;
    std::uint32_t weight;
    Backend& backend;
    const std::function<void()>& notify;  // the Device's
    std::unique_ptr<Context> context;
    std::vector<std::unique_ptr<Queue>> queues;
    std::unique_ptr<Program> program;
    std::unique_ptr<Buffer> a, b;
    std::uint64_t in_bytes = 0, out_bytes = 0;
    struct Slot {
        std::unique_ptr<Buffer> out;
        std::unique_ptr<Event> event;
        Clock::time_point submitted{};
    };
    std::vector<Slot> slots;
    // Results of the current window.
    std::uint64_t completed = 0;
    std::vector<std::uint64_t> round_trips_ns;

    Tenant(Device& device, std::string name_, std::uint32_t weight_, unsigned queue_count,
           unsigned slot_count, const std::vector<std::uint8_t>& artifact)
        : name(std::move(name_)), weight(weight_), backend(*device.backend), notify(device.notify)
    {
        context = must(backend.create_context(), name + ": create_context");
        ContextSchedule schedule;
        schedule.weight = weight;
        backend.set_context_schedule(*context, schedule);
        for (unsigned q = 0; q < queue_count; ++q)
            queues.push_back(must(backend.create_queue(*context), name + ": create_queue"));
        ProgramDesc desc;
        desc.payload = std::as_bytes(std::span(artifact));
        program = must(backend.load_program(*context, desc), name + ": load_program");
        const auto program_slots = program->slots();
        in_bytes = program_slots[0].bytes;
        out_bytes = program_slots[2].bytes;
        a = buffer(in_bytes, 1.0f);
        b = buffer(in_bytes, 2.0f);
        slots.resize(slot_count);
        for (Slot& slot : slots) slot.out = buffer(out_bytes, 0.0f);
    }

    std::unique_ptr<Buffer> buffer(std::uint64_t bytes, float value)
    {
        BufferDesc desc;
        desc.bytes = bytes;
        BufferInfo info;
        auto made = must(backend.allocate_buffer(*context, desc, info), name + ": allocate_buffer");
        const std::vector<float> values(bytes / sizeof(float), value);
        must(backend.write_buffer(*made, 0, std::as_bytes(std::span(values))),
             name + ": write_buffer");
        return made;
    }

    void submit(std::size_t index)
    {
        Slot& slot = slots[index];
        const Binding bindings[] = {
            {0, VACCEL_ACCESS_READ, a.get(), 0, in_bytes},
            {1, VACCEL_ACCESS_READ, b.get(), 0, in_bytes},
            {2, VACCEL_ACCESS_WRITE, slot.out.get(), 0, out_bytes},
        };
        slot.submitted = Clock::now();
        SubmitDesc desc;
        desc.queue = queues[index % queues.size()].get();
        desc.program = program.get();
        desc.bindings = bindings;
        desc.sink = std::make_shared<NotifySink>(notify);
        slot.event = std::move(must(backend.submit(desc), name + ": submit").event);
    }

    void start()
    {
        completed = 0;
        round_trips_ns.clear();
        for (std::size_t i = 0; i < slots.size(); ++i) submit(i);
    }

    // Collects every completed submission: counted (and its round trip
    // kept) when seen inside [from, to), resubmitted unless `stopping`.
    // Returns how many are still in flight.
    std::size_t sweep(Clock::time_point from, Clock::time_point to, bool stopping)
    {
        std::size_t in_flight = 0;
        for (std::size_t i = 0; i < slots.size(); ++i) {
            Slot& slot = slots[i];
            if (!slot.event) continue;
            const EventStatus status = backend.poll(*slot.event);
            if (status.state == EventState::pending) {
                ++in_flight;
                continue;
            }
            if (status.state != EventState::complete) die(name + ": submission", status.failure);
            const Clock::time_point now = Clock::now();
            if (now >= from && now < to) {
                ++completed;
                round_trips_ns.push_back(static_cast<std::uint64_t>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(now - slot.submitted)
                        .count()));
            }
            must(backend.destroy_event(slot.event), name + ": destroy_event");
            if (!stopping) {
                submit(i);
                ++in_flight;
            }
        }
        return in_flight;
    }

    ~Tenant()
    {
        // Everything was drained by run(); released children first.
        for (Slot& slot : slots) must(backend.free_buffer(slot.out), name + ": free_buffer");
        must(backend.free_buffer(a), name + ": free_buffer");
        must(backend.free_buffer(b), name + ": free_buffer");
        must(backend.unload_program(program), name + ": unload_program");
        for (auto& queue : queues) must(backend.destroy_queue(queue), name + ": destroy_queue");
        must(backend.destroy_context(context), name + ": destroy_context");
    }
};

// Drives `tenants` for the warm-up and the window, then drains them.
void run(Device& device, const std::vector<Tenant*>& tenants, const Options& options)
{
    const auto to_duration = [](double s) {
        return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    };
    std::uint64_t seen = device.seen();
    for (Tenant* t : tenants) t->start();
    const Clock::time_point from = Clock::now() + to_duration(options.warmup);
    const Clock::time_point to = from + to_duration(options.seconds);
    for (;;) {
        const bool stopping = Clock::now() >= to;
        std::size_t in_flight = 0;
        for (Tenant* t : tenants) in_flight += t->sweep(from, to, stopping);
        if (stopping && in_flight == 0) return;
        seen = device.wait_after(seen);
    }
}

double share(const Tenant& t, const std::vector<Tenant*>& all)
{
    std::uint64_t total = 0;
    for (const Tenant* o : all) total += o->completed;
    return total == 0 ? 0.0 : static_cast<double>(t.completed) / static_cast<double>(total);
}

// Sets 1 and 2: two flooding contexts per weight pair.
void weights(unsigned workers, unsigned queues, const Options& options)
{
    const std::vector<std::uint8_t> artifact = matmul_program(options.n);
    fmt::print("\nweights: {} worker(s), {} queue(s) per context, {} MATMULs [{}x{}] in flight "
               "per context, {:.1f} s each\n",
               workers, queues, options.depth, options.n, options.n, options.seconds);
    if (workers > 1)
        fmt::print("  expected: w / sum(w) clamped to [1/{0}, {1}/{0}] (headroom: at most {1} of "
                   "{0} workers while the other context is active)\n",
                   workers, workers - 1);
    fmt::print("  {:<8} {:>6} {:>10} {:>8} {:>9} {:>9}\n", "context", "weight", "completed",
               "share", "expected", "ratio");
    const std::pair<std::uint32_t, std::uint32_t> pairs[] = {{100, 100}, {300, 100}, {150, 100},
                                                             {1000, 100}};
    for (const auto& [wa, wb] : pairs) {
        Device device(workers);
        Tenant a(device, "A", wa, queues, options.depth, artifact);
        Tenant b(device, "B", wb, queues, options.depth, artifact);
        const std::vector<Tenant*> both = {&a, &b};
        run(device, both, options);
        for (const Tenant* t : both) {
            double expected = static_cast<double>(t->weight) / static_cast<double>(wa + wb);
            if (workers > 1)
                expected = std::clamp(expected, 1.0 / workers,
                                      static_cast<double>(workers - 1) / workers);
            const double got = share(*t, both);
            fmt::print("  {:<8} {:>6} {:>10} {:>8.3f} {:>9.3f} {:>8.2f}x\n", t->name, t->weight,
                       t->completed, got, expected, got / expected);
        }
    }
}

std::string figures(const std::vector<std::uint64_t>& samples)
{
    const auto s = summarize(samples);
    return fmt::format("median {:8.1f} us  p99 {:8.1f} us  ({} samples)", s.median_us, s.p99_us,
                       s.count);
}

// Set 3: the interactive context alone, the flood alone, both together.
void headroom(const Options& options)
{
    constexpr unsigned workers = 2;
    const std::vector<std::uint8_t> matmul = matmul_program(options.n);
    const std::vector<std::uint8_t> add = add_program();
    fmt::print("\nheadroom: {} workers; flood: one context, 2 queues, {} MATMULs [{}x{}] in "
               "flight; interactive: one ADD [1] at a time; {:.1f} s each\n",
               workers, options.depth, options.n, options.n, options.seconds);

    Device device(workers);
    Tenant interactive(device, "I", 100, 1, 1, add);
    Tenant flood(device, "F", 100, 2, options.depth, matmul);

    run(device, {&interactive}, options);
    const std::vector<std::uint64_t> alone = interactive.round_trips_ns;
    run(device, {&flood}, options);
    const std::uint64_t flood_alone = flood.completed;
    run(device, {&interactive, &flood}, options);
    const std::vector<std::uint64_t> loaded = interactive.round_trips_ns;
    const std::uint64_t flood_beside = flood.completed;

    const double ratio = summarize(loaded).median_us / summarize(alone).median_us;
    fmt::print("  interactive round trip alone:        {}\n", figures(alone));
    fmt::print("  interactive round trip beside flood: {}\n", figures(loaded));
    fmt::print("  median ratio beside / alone: {:.2f}x (the retired daemon test allowed 2.00x)\n",
               ratio);
    const double per_second = 1.0 / options.seconds;
    fmt::print("  flood throughput alone: {:.0f}/s; beside the interactive context: {:.0f}/s "
               "({:.2f} of alone; the headroom rule leaves it {} of {} workers)\n",
               static_cast<double>(flood_alone) * per_second,
               static_cast<double>(flood_beside) * per_second,
               flood_alone == 0 ? 0.0
                                : static_cast<double>(flood_beside) /
                                      static_cast<double>(flood_alone),
               workers - 1, workers);
}

}  // namespace

int main(int argc, char** argv)
{
    Options options;
    CLI::App app{"bench_fairness: the CPU backend's sharing between contexts"};
    app.add_option("--seconds", options.seconds, "measurement window of each run")
        ->check(CLI::PositiveNumber);
    app.add_option("--warmup", options.warmup, "seconds before each window")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--n", options.n, "MATMUL size of the flooding contexts")
        ->check(CLI::Range(1, 1024));
    app.add_option("--depth", options.depth, "submissions a flooding context keeps in flight")
        ->check(CLI::Range(1, 256));
    CLI11_PARSE(app, argc, argv);

    weights(1, 1, options);
    weights(2, 2, options);
    headroom(options);
    return 0;
}
