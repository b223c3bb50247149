// test_cpu_fairness.cpp - contexts share the CPU backend's worker by weight.
//
// Owns: end-to-end checks, through the Backend interface, that the CPU
// backend dispatches backlogged contexts by deficit round-robin (the order
// and bound stated in backends/cpu/src/fair_queue.hpp). Deterministic, not
// timed: the backend runs one worker thread, and the completion notifier
// parks that worker after every completion until the test has seen which
// event completed. The first submission (context H) holds the worker while
// the test queues every backlog, so the dispatch order afterwards is decided
// by the run queue alone.
#include <fmt/format.h>

#include <condition_variable>
#include <mutex>
#include <string>

#include "cpu_test_support.hpp"

namespace {

using namespace cpu_test;

// Lock-step between the worker (in the completion notifier) and the test.
class Stepper {
public:
    // Worker side: count the completion, then park until the test lets go.
    void completed()
    {
        std::unique_lock lock(mutex_);
        ++completions_;
        changed_.notify_all();
        changed_.wait(lock, [this] { return released_ >= completions_; });
    }
    // Test side: wait until `count` submissions have completed in all.
    void wait_for(std::uint64_t count)
    {
        std::unique_lock lock(mutex_);
        if (!changed_.wait_for(lock, std::chrono::seconds(60),
                               [&] { return completions_ >= count; }))
            fail_msg("only %llu of %llu completions came",
                     static_cast<unsigned long long>(completions_),
                     static_cast<unsigned long long>(count));
    }
    // Test side: let the parked worker go on to its next submission.
    void release(std::uint64_t count = 1)
    {
        std::lock_guard lock(mutex_);
        released_ += count;
        changed_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::uint64_t completions_ = 0;
    std::uint64_t released_ = 0;
};

tosa::Graph add_1()
{
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", {1});
    const auto b = f32(g, "b", {1});
    const auto c = f32(g, "c", {1});
    g.op(Op::add, {a, b}, {c});
    g.input(a);
    g.input(b);
    g.output(c);
    return g.finish();
}

// One client context: a queue, c = a + b on [1] floats, a shared pair of
// inputs and one output buffer per submission (a written buffer is held
// exclusively while its submission is in flight).
// Called (from the worker) each time a tenant's submission completes; set
// by Held before anything is submitted.
std::function<void()> on_completion;

struct Tenant {
    std::string name;
    Backend& backend;
    std::unique_ptr<Context> context;
    std::unique_ptr<Queue> queue;
    std::unique_ptr<Program> program;
    std::unique_ptr<Buffer> a, b;
    std::vector<std::unique_ptr<Buffer>> outputs;
    std::vector<std::unique_ptr<Event>> events;

    // `flow`: the tenant key several contexts share (empty: its own flow).
    // `latency`: priority = "latency".
    Tenant(Backend& backend_, std::string name_, std::uint32_t weight, std::string flow = {},
           bool latency = false)
        : name(std::move(name_)), backend(backend_)
    {
        auto c = backend.create_context();
        assert_ok(c);
        context = std::move(*c);
        ContextSchedule schedule;
        schedule.flow = std::move(flow);
        schedule.weight = weight;
        schedule.latency = latency;
        backend.set_context_schedule(*context, schedule);
        auto q = backend.create_queue(*context);
        assert_ok(q);
        queue = std::move(*q);
        const std::vector<std::uint8_t> bytes = tosa::serialize(add_1());
        ProgramDesc desc;
        desc.payload = std::as_bytes(std::span(bytes));
        auto p = backend.load_program(*context, desc);
        assert_ok(p);
        program = std::move(*p);
        a = buffer_with({1.0f});
        b = buffer_with({2.0f});
    }

    std::unique_ptr<Buffer> buffer_with(const std::vector<float>& values)
    {
        BufferDesc desc;
        desc.bytes = values.size() * sizeof(float);
        BufferInfo info;
        auto buffer = backend.allocate_buffer(*context, desc, info);
        assert_ok(buffer);
        assert_ok(backend.write_buffer(**buffer, 0, bytes_of(values)));
        return std::move(*buffer);
    }

    void submit(int count)
    {
        for (int i = 0; i < count; ++i) {
            outputs.push_back(buffer_with({0.0f}));
            const Binding bindings[] = {
                {0, VACCEL_ACCESS_READ, a.get(), 0, 4},
                {1, VACCEL_ACCESS_READ, b.get(), 0, 4},
                {2, VACCEL_ACCESS_WRITE, outputs.back().get(), 0, 4},
            };
            auto event = cpu_test::submit(backend, *queue, *program, bindings, 0,
                                          std::make_shared<CallbackSink>(on_completion));
            assert_ok(event);
            events.push_back(std::move(*event));
        }
    }

    // Every output holds 3 = 1 + 2; then everything is released.
    void finish()
    {
        for (auto& event : events) {
            assert_int_equal(static_cast<unsigned>(backend.poll(*event).state),
                             VACCEL_EVENT_COMPLETE);
            assert_ok(backend.destroy_event(event));
        }
        for (auto& output : outputs) {
            float value = 0;
            assert_ok(backend.read_buffer(*output, 0,
                                          std::as_writable_bytes(std::span(&value, 1))));
            assert_true(value == 3.0f);
            assert_ok(backend.free_buffer(output));
        }
        assert_ok(backend.free_buffer(a));
        assert_ok(backend.free_buffer(b));
        assert_ok(backend.unload_program(program));
        assert_ok(backend.destroy_queue(queue));
        assert_ok(backend.destroy_context(context));
    }
};

// A one-worker backend whose worker is held after the first submission (of
// context H) completes, while the test queues the backlogs.
struct Held {
    Stepper stepper;  // declared first: outlives the backend's worker
    std::unique_ptr<Backend> backend = open_cpu_backend(CpuOptions{1});
    std::unique_ptr<Tenant> holder;

    Held()
    {
        on_completion = [this] { stepper.completed(); };
        holder = std::make_unique<Tenant>(*backend, "H", 100);
        holder->submit(1);
        stepper.wait_for(1);  // the worker now parks in the notifier
    }

    // Lets the worker run every queued submission, one at a time, and
    // returns the labels ("A1", "B3") in completion order, space separated.
    std::string completion_order(const std::vector<Tenant*>& tenants)
    {
        std::size_t total = 0;
        for (Tenant* t : tenants) total += t->events.size();
        std::vector<std::vector<bool>> seen;
        for (Tenant* t : tenants) seen.emplace_back(t->events.size(), false);
        std::string order;
        for (std::size_t done = 0; done < total; ++done) {
            stepper.release();
            stepper.wait_for(done + 2);  // H's completion, then `done + 1` more
            int found = 0;
            for (std::size_t t = 0; t < tenants.size(); ++t)
                for (std::size_t i = 0; i < tenants[t]->events.size(); ++i) {
                    if (seen[t][i]) continue;
                    if (backend->poll(*tenants[t]->events[i]).state == EventState::pending)
                        continue;
                    seen[t][i] = true;
                    ++found;
                    if (!order.empty()) order += ' ';
                    order += tenants[t]->name + std::to_string(i + 1);
                }
            if (found != 1) fail_msg("%d events completed in one step, expected 1", found);
        }
        stepper.release();  // the last completion
        return order;
    }

    void finish(const std::vector<Tenant*>& tenants)
    {
        for (Tenant* t : tenants) t->finish();
        holder->finish();
        const LiveCounters live = backend->live();
        assert_int_equal(live.contexts, 0);
        assert_int_equal(live.buffers, 0);
        assert_int_equal(live.events, 0);
        assert_int_equal(live.events_in_flight, 0);
    }
};

// Position (1-based) of `label` in a space separated order; 0 if absent.
std::size_t position_of(const std::string& order, const std::string& label)
{
    std::size_t position = 1, start = 0;
    for (;;) {
        const std::size_t end = order.find(' ', start);
        if (order.compare(start, end - start, label) == 0 &&
            (end == std::string::npos || end - start == label.size()))
            return position;
        if (end == std::string::npos) return 0;
        start = end + 1;
        ++position;
    }
}

void flooding_context_cannot_starve_another_of_equal_weight(void**)
{
    Held held;
    Tenant a(*held.backend, "A", 100), b(*held.backend, "B", 100);
    a.submit(50);
    b.submit(5);
    const std::string order = held.completion_order({&a, &b});

    // DRR at equal weights: one submission per context per round, so B's
    // k-th submission is dispatched k-th among B's and 2k-th overall, though
    // A queued all 50 of its submissions first.
    std::string expected;
    for (int k = 1; k <= 5; ++k)
        expected += fmt::format("A{} B{} ", k, k);
    for (int k = 6; k <= 50; ++k) expected += fmt::format("A{}{}", k, k < 50 ? " " : "");
    assert_string_equal(order.c_str(), expected.c_str());
    for (int k = 1; k <= 5; ++k)
        assert_int_equal(position_of(order, fmt::format("B{}", k)), 2 * k);
    assert_true(position_of(order, "B5") < position_of(order, "A6"));
    held.finish({&a, &b});
}

void weights_300_and_100_dispatch_three_to_one_in_order(void**)
{
    Held held;
    Tenant a(*held.backend, "A", 300), b(*held.backend, "B", 100);
    a.submit(45);
    b.submit(10);
    const std::string order = held.completion_order({&a, &b});

    // While both are backlogged (40 dispatches): A A A B, ten times; then the
    // rest of A's backlog.
    std::string expected;
    for (int round = 0; round < 10; ++round)
        expected += fmt::format("A{} A{} A{} B{} ", 3 * round + 1, 3 * round + 2,
                                3 * round + 3, round + 1);
    for (int k = 31; k <= 45; ++k) expected += fmt::format("A{}{}", k, k < 45 ? " " : "");
    assert_string_equal(order.c_str(), expected.c_str());
    held.finish({&a, &b});
}

void a_weight_changed_while_backlogged_applies_from_its_next_turn(void**)
{
    Held held;
    Tenant a(*held.backend, "A", 100), b(*held.backend, "B", 100);
    a.submit(8);
    b.submit(4);
    ContextSchedule heavier;
    heavier.weight = 200;
    held.backend->set_context_schedule(*b.context, heavier);
    const std::string order = held.completion_order({&a, &b});
    assert_string_equal(order.c_str(), "A1 B1 B2 A2 B3 B4 A3 A4 A5 A6 A7 A8");
    held.finish({&a, &b});
}

void contexts_of_one_tenant_share_its_flow(void**)
{
    // Two contexts of tenant "uid:1" against one of "uid:2", equal weights,
    // all backlogged: uid:2 gets every other dispatch (half the device),
    // not every third, and uid:1's two contexts take turns within its half.
    Held held;
    Tenant a(*held.backend, "A", 100, "uid:1"), c(*held.backend, "C", 100, "uid:1"),
        b(*held.backend, "B", 100, "uid:2");
    a.submit(10);
    c.submit(10);
    b.submit(10);
    const std::string order = held.completion_order({&a, &c, &b});
    for (int k = 1; k <= 10; ++k)
        assert_int_equal(position_of(order, fmt::format("B{}", k)), 2 * k);
    for (int k = 1; k <= 5; ++k) {
        assert_int_equal(position_of(order, fmt::format("A{}", k)), 4 * k - 3);
        assert_int_equal(position_of(order, fmt::format("C{}", k)), 4 * k - 1);
    }
    held.finish({&a, &c, &b});
    // Each context a flow of its own (no tenant key): B gets every third.
    Held apart;
    Tenant a2(*apart.backend, "A", 100), c2(*apart.backend, "C", 100), b2(*apart.backend, "B", 100);
    a2.submit(6);
    c2.submit(6);
    b2.submit(6);
    const std::string thirds = apart.completion_order({&a2, &c2, &b2});
    for (int k = 1; k <= 6; ++k)
        assert_int_equal(position_of(thirds, fmt::format("B{}", k)), 3 * k);
    apart.finish({&a2, &c2, &b2});
}

void a_latency_tenant_is_served_before_queued_batch_work(void**)
{
    // A batch tenant of weight 1000 queues 12 submissions, then a latency
    // tenant of weight 1 queues 3: the latency ones run next, in order.
    Held held;
    Tenant a(*held.backend, "A", 1000, "uid:1"), l(*held.backend, "L", 1, "uid:2", true);
    a.submit(12);
    l.submit(3);
    const std::string order = held.completion_order({&a, &l});
    assert_string_equal(order.substr(0, 8).c_str(), "L1 L2 L3");
    held.finish({&a, &l});
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flooding_context_cannot_starve_another_of_equal_weight),
        cmocka_unit_test(weights_300_and_100_dispatch_three_to_one_in_order),
        cmocka_unit_test(a_weight_changed_while_backlogged_applies_from_its_next_turn),
        cmocka_unit_test(contexts_of_one_tenant_share_its_flow),
        cmocka_unit_test(a_latency_tenant_is_served_before_queued_batch_work),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
