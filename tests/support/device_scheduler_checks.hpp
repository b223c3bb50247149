// device_scheduler_checks.hpp - the checks every device scheduler passes
// (docs/adr/0026-gpu-device-scheduler.md), read from the scheduler's own
// record of dispatches and charges, never from wall time: two tenants of
// weights 100 and 300 with work queued are charged device time 1:3 +- 10%;
// a latency tenant's work goes out ahead of a batch tenant's queued work; a
// device_share cap holds in charged time; the contexts of one tenant share
// one account; a latency tenant in a closed loop is held for, so batch work
// does not start in the gaps between its runs. Without a scheduler the
// device runs submissions in arrival order (or time-slices them) and each
// of these fails.
//
// A test program sets open_device (lavapipe, a CUDA device, ...) and lists
// the checks it runs; each opens its device afresh.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../cpu/matmul_test_support.hpp"

namespace scheduler_checks {

using namespace cpu_test;

inline std::function<std::unique_ptr<Backend>()> open_device;
// The same device with its latency hold set (latency_hold_us; 0: none).
inline std::function<std::unique_ptr<Backend>(std::uint32_t)> open_device_holding;
// The same device with its slice bound set (slice_us; 0: runs go whole).
inline std::function<std::unique_ptr<Backend>(std::uint32_t)> open_device_slicing;

// One context of a tenant: its queue, the MATMUL, its operands, a gate that
// holds its work back until raised, and an output per submission.
struct Member {
    Backend* backend = nullptr;
    std::unique_ptr<Context> context;
    std::unique_ptr<Queue> queue;
    std::unique_ptr<Program> program;
    std::unique_ptr<Gate> gate;
    std::unique_ptr<Buffer> a, b;
    std::vector<std::unique_ptr<Buffer>> outputs;
    std::vector<std::unique_ptr<Event>> events;
    std::int64_t side;
    std::uint64_t matrix_bytes;

    std::uint64_t input_bytes;

    // A side x side MATMUL with an FP32 result: 96 takes about a millisecond
    // on lavapipe. `input` is its operands' type (FP32, or FP16: the
    // cooperative-matrix kernel's on a GPU that has one).
    Member(Backend& device, const ContextSchedule& schedule, std::int64_t n = 96,
           DType input = DType::fp32)
        : backend(&device),
          side(n),
          matrix_bytes(static_cast<std::uint64_t>(n * n) * sizeof(float)),
          input_bytes(static_cast<std::uint64_t>(n * n) * (input == DType::fp16 ? 2 : 4))
    {
        auto c = device.create_context();
        assert_ok(c);
        context = std::move(*c);
        device.set_context_schedule(*context, schedule);
        auto q = device.create_queue(*context);
        assert_ok(q);
        queue = std::move(*q);
        const auto bytes = tosa::serialize(matmul_graph(input, DType::fp32, 1, side, side, side));
        ProgramDesc desc;
        desc.payload = std::as_bytes(std::span(bytes));
        auto p = device.load_program(*context, desc);
        assert_ok(p);
        program = std::move(*p);
        auto g = device.create_gate(*context);
        assert_ok(g);
        gate = std::move(*g);
        a = buffer(input_bytes);
        b = buffer(input_bytes);
        const auto values = sample(side * side, 5);
        const auto halves = tosa::f16_bytes(values);
        const auto operand = input == DType::fp16 ? std::as_bytes(std::span(halves)) : bytes_of(values);
        assert_ok(device.write_buffer(*a, 0, operand));
        assert_ok(device.write_buffer(*b, 0, operand));
    }
    std::unique_ptr<Buffer> buffer(std::uint64_t bytes)
    {
        BufferDesc desc;
        desc.bytes = bytes;
        desc.domain = VACCEL_DOMAIN_DEVICE;  // the MATMUL's time is the device's, not the bus's
        BufferInfo info;
        auto made = backend->allocate_buffer(*context, desc, info);
        assert_ok(made);
        return std::move(*made);
    }
    // `count` runs, each into an output of its own; held on the gate when
    // `gated`, else they go to the scheduler at once.
    void submit(std::size_t count, bool gated)
    {
        for (std::size_t i = 0; i < count; ++i) {
            outputs.push_back(buffer(matrix_bytes));
            std::vector<Binding> bindings{
                {0, VACCEL_ACCESS_READ, a.get(), 0, input_bytes},
                {1, VACCEL_ACCESS_READ, b.get(), 0, input_bytes},
                {2, VACCEL_ACCESS_WRITE, outputs.back().get(), 0, matrix_bytes}};
            SubmitDesc desc;
            desc.queue = queue.get();
            desc.program = program.get();
            desc.bindings = bindings;
            if (gated) {
                desc.after = gate.get();
                desc.after_value = 1;
            }
            desc.sink = std::make_shared<CallbackSink>();
            auto submitted = backend->submit(desc);
            assert_ok(submitted);
            events.push_back(std::move(submitted->event));
        }
    }
    void release() { assert_ok(backend->raise_gate(*gate, 1)); }
    // Waits for its runs; `spin`: polling without a pause, as a latency
    // tenant does.
    void wait_all(bool spin = false)
    {
        for (auto& event : events) {
            const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
            while (backend->poll(*event).state == EventState::pending) {
                if (std::chrono::steady_clock::now() > give_up) fail_msg("a run never ended");
                if (!spin) std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            assert_int_equal(static_cast<int>(backend->poll(*event).state),
                             static_cast<int>(EventState::complete));
            assert_ok(backend->destroy_event(event));
        }
        events.clear();
    }
    ~Member()
    {
        for (auto& out : outputs) (void)backend->free_buffer(out);
        (void)backend->free_buffer(a);
        (void)backend->free_buffer(b);
        (void)backend->destroy_gate(gate);
        (void)backend->unload_program(program);
        (void)backend->destroy_queue(queue);
        (void)backend->destroy_context(context);
    }
};

inline ContextSchedule schedule(std::string flow, std::uint32_t weight, bool latency = false,
                         std::uint32_t share_permille = 1000)
{
    ContextSchedule s;
    s.flow = std::move(flow);
    s.weight = weight;
    s.latency = latency;
    s.share_permille = share_permille;
    return s;
}

inline std::vector<DispatchEntry> record_of(Backend& device)
{
    auto service = device.device_service();
    if (!service) fail_msg("the device reports no scheduler");
    return service->recent;
}

inline const FlowService& flow_in(const DeviceService& service, const std::string& key)
{
    for (const FlowService& f : service.flows)
        if (f.flow == key) return f;
    fail_msg("the scheduler knows no flow \"%s\"", key.c_str());
    return service.flows.front();  // not reached
}

inline bool warming(const DispatchEntry& e) { return e.flow.starts_with("warm-up"); }

// The side of a MATMUL whose run takes at least `target_ns` of device time
// on this device (lavapipe, or the GPU under make test-gpu), measured on the
// shorter of two runs after its first, in a flow of its own. It also warms
// up: lavapipe compiles each pipeline at its first dispatch, on the device
// (tens of milliseconds); its tests run with Mesa's shader cache on (ctest
// gives them a folder of their own), so the measured flows' first runs find
// the MATMUL there and their charges are their runs alone.
inline std::int64_t side_for(Backend& device, std::uint64_t target_ns, DType input = DType::fp32)
{
    for (std::int64_t side = 96;; side *= 2) {
        const std::string key = "warm-up-" + std::to_string(side);
        Member warm(device, schedule(key, 100), side, input);
        warm.submit(1, false);
        warm.wait_all();
        // The shorter of two runs: noise only ever adds time.
        std::uint64_t took = UINT64_MAX;
        for (int run = 0; run < 2; ++run) {
            const std::uint64_t before = flow_in(*device.device_service(), key).charged_ns;
            warm.submit(1, false);
            warm.wait_all();
            took = std::min(took, flow_in(*device.device_service(), key).charged_ns - before);
        }
        if (took >= target_ns || side >= 4096) {
            // The cache is written by a thread of Mesa's.
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            return side;
        }
    }
}

inline void weights_100_and_300_are_charged_device_time_1_to_3(void**)
{
    auto device = open_device();
    const std::int64_t side = side_for(*device, 500'000);
    // Three contexts per tenant: a tenant is one account, however many it opens.
    std::vector<std::unique_ptr<Member>> light, heavy;
    for (int i = 0; i < 3; ++i) {
        light.push_back(std::make_unique<Member>(*device, schedule("light", 100), side));
        heavy.push_back(std::make_unique<Member>(*device, schedule("heavy", 300), side));
    }
    for (auto& m : light) m->submit(60, true);
    for (auto& m : heavy) m->submit(60, true);
    for (auto& m : light) m->release();
    for (auto& m : heavy) m->release();
    for (auto& m : light) m->wait_all();
    for (auto& m : heavy) m->wait_all();

    // While both had work waiting: from the first dispatch of whichever came
    // second to the last dispatch of whichever ran out first.
    auto record = record_of(*device);
    std::erase_if(record, warming);
    std::map<std::string, std::pair<std::size_t, std::size_t>> span;  // first, last index
    for (std::size_t i = 0; i < record.size(); ++i) {
        auto [it, made] = span.try_emplace(record[i].flow, i, i);
        it->second.second = i;
    }
    assert_int_equal(span.size(), 2);
    if (getenv("SCHED_DEBUG"))
        for (const auto& e : record)
            print_message("%s %.3f at %.3f\n", e.flow.c_str(), e.used_ns / 1e6, e.at_ns / 1e6);
    const std::size_t from = std::max(span["light"].first, span["heavy"].first);
    const std::size_t to = std::min(span["light"].second, span["heavy"].second);
    std::map<std::string, std::uint64_t> charged;
    std::map<std::string, std::size_t> served;
    for (std::size_t i = from; i <= to; ++i) {
        assert_true(record[i].ended);
        charged[record[i].flow] += record[i].used_ns;
        served[record[i].flow] += 1;
    }
    const double ratio = static_cast<double>(charged["heavy"]) / static_cast<double>(charged["light"]);
    print_message("while both waited: heavy %zu runs, %.1f ms; light %zu runs, %.1f ms; ratio %.2f\n",
                  served["heavy"], charged["heavy"] / 1e6, served["light"], charged["light"] / 1e6,
                  ratio);
    assert_true(served["light"] >= 30);
    if (ratio < 2.7 || ratio > 3.3) fail_msg("charged 1:%.2f, not 1:3 +- 10%%", ratio);

    // The accounts agree with the record, one per tenant.
    const auto service = *device->device_service();
    assert_int_equal(flow_in(service, "light").weight, 100);
    assert_int_equal(flow_in(service, "heavy").weight, 300);
    std::uint64_t recorded = 0;
    for (const DispatchEntry& e : record)
        if (e.flow == "heavy") recorded += e.used_ns;
    assert_int_equal(flow_in(service, "heavy").charged_ns, recorded);
    assert_int_equal(flow_in(service, "heavy").queued, 0);
    assert_int_equal(flow_in(service, "heavy").on_device, 0);
    light.clear();
    heavy.clear();
    assert_int_equal(device->live().contexts, 0);
}

inline void a_latency_tenant_goes_ahead_of_queued_batch_work(void**)
{
    auto device = open_device();
    const std::int64_t side = side_for(*device, 500'000);
    std::vector<std::unique_ptr<Member>> batch;
    for (int i = 0; i < 2; ++i)
        batch.push_back(std::make_unique<Member>(*device, schedule("batch", 1000), side));
    // Weight 1 against 1000: by weight alone it would wait out about ten of
    // the batch tenant's runs.
    Member urgent(*device, schedule("urgent", 1, true), side);
    for (auto& m : batch) m->submit(40, true);
    for (auto& m : batch) m->release();
    // Let the batch tenant's work get going.
    const auto warm_entries = record_of(*device).size();
    while (std::ranges::count_if(record_of(*device), [](const auto& e) { return e.ended; }) <
           static_cast<std::ptrdiff_t>(warm_entries + 4))
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    urgent.submit(1, false);
    const auto at_submit = record_of(*device);
    const auto batch_then = std::ranges::count_if(at_submit, [](const auto& e) { return e.flow == "batch"; });
    urgent.wait_all();
    for (auto& m : batch) m->wait_all();

    const auto record = record_of(*device);
    const auto urgent_at = std::ranges::find_if(record, [](const auto& e) { return e.flow == "urgent"; });
    assert_true(urgent_at != record.end());
    const auto batch_before = std::count_if(record.begin(), urgent_at,
                                            [](const auto& e) { return e.flow == "batch"; });
    const auto batch_after = std::count_if(urgent_at, record.end(),
                                           [](const auto& e) { return e.flow == "batch"; });
    print_message("batch runs out when the latency run came: %td; before it went: %td; after: %td\n",
                  batch_then, batch_before, batch_after);
    // Nothing of the batch tenant went out between its arrival and its dispatch,
    // and the batch tenant still had work queued then.
    assert_true(batch_before <= batch_then);
    assert_true(batch_after >= 20);
    assert_true(flow_in(*device->device_service(), "urgent").latency);
}

inline void a_device_share_cap_holds_in_charged_time(void**)
{
    auto device = open_device();
    const std::int64_t side = side_for(*device, 4'000'000);
    constexpr std::uint32_t share = 300;  // 30% of each second
    std::vector<std::unique_ptr<Member>> capped;
    for (int i = 0; i < 4; ++i)  // 4 contexts: each may have 64 submissions out
        capped.push_back(
            std::make_unique<Member>(*device, schedule("capped", 100, false, share), side));
    // Alone on the device, with more work waiting than 30% of a second holds:
    // 200 runs of at least 4 ms as side_for measured them, twice that even
    // when the measurement ran slow on a loaded machine.
    for (auto& m : capped) m->submit(50, true);
    for (auto& m : capped) m->release();
    for (auto& m : capped) m->wait_all();

    const auto service = *device->device_service();
    auto record = service.recent;
    std::erase_if(record, warming);
    std::uint64_t total = 0, longest = 0;
    for (const DispatchEntry& e : record) {
        total += e.used_ns;
        longest = std::max(longest, e.used_ns);
    }
    const std::uint64_t window = service.share_window_ns;
    const std::uint64_t allowed = window * share / 1000;
    // Any window's worth of dispatches was charged at most its share, plus
    // what may be on the device when the cap is reached.
    std::uint64_t worst = 0;
    for (std::size_t i = 0; i < record.size(); ++i) {
        std::uint64_t in_window = 0;
        for (std::size_t j = i; j < record.size() && record[j].at_ns < record[i].at_ns + window; ++j)
            in_window += record[j].used_ns;
        worst = std::max(worst, in_window);
    }
    const std::uint64_t span = record.back().at_ns - record.front().at_ns;
    print_message("%zu runs charged %.1f ms over %.1f ms; worst window %.1f ms (allowed %.1f ms + "
                  "%.1f ms in flight)\n",
                  record.size(), total / 1e6, span / 1e6, worst / 1e6, allowed / 1e6,
                  2 * longest / 1e6);
    assert_true(total > allowed);  // enough work for the cap to matter
    if (worst > allowed + 2 * longest) fail_msg("a window was charged %.1f ms", worst / 1e6);
    // It was held back, not run at once: a window holds at most the share
    // plus what was in flight, so the charged time took at least that many
    // windows of the clock, less the first.
    assert_true(span + window >= total * window / (allowed + 2 * longest));
}

// A latency tenant in a closed loop (it submits its next run as soon as
// its last one ended) beside batch work that is always queued. Without a
// latency hold, the batch tenant's next segment goes out as the latency run
// ends, before the tenant is back, so a batch dispatch sits in every gap
// between its runs; with one, batch work waits for the tenant's return and
// almost no gap has one. Read from the record: which flow's dispatch
// followed which. A run may go out in several segments (one entry each);
// no batch dispatch comes between those, the latency flow being served
// first whenever it has work, so the batch dispatches between the tenant's
// first and last entries come in at most one block per gap.
struct HeldRun {
    std::size_t gaps = 0;        // latency entries after the first
    std::size_t with_batch = 0;  // of those, the ones after a batch dispatch
    std::uint64_t held_ns = 0, charged_ns = 0;
};

inline HeldRun closed_loop_beside_batch(std::uint32_t hold_us)
{
    auto device = open_device_holding(hold_us);
    const std::int64_t side = side_for(*device, 500'000);
    std::vector<std::unique_ptr<Member>> batch;
    for (int i = 0; i < 2; ++i)
        batch.push_back(std::make_unique<Member>(*device, schedule("batch", 100), side));
    {
        Member warm(*device, schedule("warm-up-urgent", 100), 32);  // compiles its pipeline
        warm.submit(1, false);
        warm.wait_all();
    }
    Member urgent(*device, schedule("urgent", 100, true), 32);
    for (auto& m : batch) m->submit(60, true);
    for (auto& m : batch) m->release();
    const auto started = record_of(*device).size();
    while (record_of(*device).size() < started + 2)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    for (int run = 0; run < 20; ++run) {
        urgent.submit(1, false);
        urgent.wait_all(true);
    }
    const auto service = *device->device_service();
    for (auto& m : batch) m->wait_all();
    auto record = service.recent;
    std::erase_if(record, warming);
    HeldRun r;
    std::ptrdiff_t last_urgent = -1;
    bool batch_since = false;
    std::size_t batch_after_last = 0;
    for (std::size_t i = 0; i < record.size(); ++i) {
        if (record[i].flow == "urgent") {
            if (last_urgent >= 0) {
                ++r.gaps;
                r.with_batch += batch_since ? 1 : 0;
            }
            last_urgent = static_cast<std::ptrdiff_t>(i);
            batch_since = false;
            batch_after_last = 0;
        } else if (record[i].flow == "batch") {
            batch_since = true;
            ++batch_after_last;
        }
    }
    r.held_ns = flow_in(service, "urgent").held_ns;
    r.charged_ns = flow_in(service, "urgent").charged_ns;
    print_message("latency hold %u us: %zu of the latency tenant's %zu later entries came "
                  "after a batch dispatch; held %.3f ms of its %.3f ms charged; batch still queued after "
                  "its last run: %s\n",
                  hold_us, r.with_batch, r.gaps, r.held_ns / 1e6, r.charged_ns / 1e6,
                  flow_in(service, "batch").queued != 0 ? "yes" : "no");
    assert_true(flow_in(service, "batch").queued != 0);  // batch work waited throughout
    return r;
}

inline void a_closed_loop_latency_tenant_is_held_for(void**)
{
    const HeldRun without = closed_loop_beside_batch(0);
    assert_true(without.gaps >= 19);
    assert_true(without.with_batch >= 18);
    assert_int_equal(without.held_ns, 0);
    // 10 ms: far beyond the test's own gap between a run's end and its
    // next submission, even on a loaded machine.
    const HeldRun with = closed_loop_beside_batch(10'000);
    assert_true(with.gaps >= 19);
    if (with.with_batch > 2) fail_msg("%zu gaps had a batch dispatch", with.with_batch);
    assert_true(with.held_ns > 0);
    assert_true(with.held_ns < with.charged_ns);
}

// A MATMUL of a few milliseconds with an FP32 result and `input` operands:
// its first run takes the profile whole; later runs go out in several
// segments over its k (each part going on from the sums the last one
// stored), and every run's output is the same bytes as on a device that
// never cuts. On Vulkan, FP16 operands take the cooperative-matrix kernel on
// a GPU that has one (make test-gpu), the tiled kernel on lavapipe; on
// CUDA, FP32 takes the SIMT tiles, cut over k through k_first / k_end.
inline void long_matmul_is_cut_with_exact_output(DType input)
{
    auto read_outputs = [](Member& m) {
        std::vector<std::vector<float>> all;
        for (auto& out : m.outputs) {
            std::vector<float> values(m.side * m.side);
            assert_ok(m.backend->read_buffer(*out, 0, std::as_writable_bytes(std::span(values))));
            all.push_back(std::move(values));
        }
        return all;
    };
    std::int64_t side = 0;
    {
        auto probe = open_device();
        side = side_for(*probe, 2'000'000, input);
    }
    auto plain = open_device_slicing(0);
    std::vector<float> want;
    {
        Member m(*plain, schedule("plain", 100), side, input);
        m.submit(1, false);
        m.wait_all();
        want = read_outputs(m)[0];
        const auto record = record_of(*plain);
        assert_int_equal(record.size(), 1);
    }
    auto device = open_device_slicing(250);
    Member m(*device, schedule("cut", 100), side, input);
    for (int run = 0; run < 3; ++run) {
        m.submit(1, false);
        m.wait_all();
    }
    auto record = record_of(*device);
    std::erase_if(record, warming);
    std::uint64_t first = 0, rest = 0;
    assert_true(record.size() >= 3);
    first = record[0].used_ns;
    for (std::size_t i = 1; i < record.size(); ++i) rest = std::max(rest, record[i].used_ns);
    print_message("profile run %.2f ms whole; then %zu segments, the longest %.3f ms\n",
                  first / 1e6, record.size() - 1, rest / 1e6);
    // Cut: each later run is more than one segment.
    assert_true(record.size() - 1 >= 2 * 2);
    for (const auto& got : read_outputs(m))
        assert_memory_equal(got.data(), want.data(), want.size() * sizeof(float));
}

inline void a_long_matmul_is_cut_into_segments_with_exact_output(void**)
{
    long_matmul_is_cut_with_exact_output(DType::fp32);
}

}  // namespace scheduler_checks
