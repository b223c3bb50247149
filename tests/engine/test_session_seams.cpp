// test_session_seams.cpp - what the daemon needs of a session beyond call():
// routing to a device, one non-blocking look at a wait, the completion
// listener, the use counters of sessions and devices, deadlines refused by a
// device that cannot honour them, and policy weights and limits applied to
// each new context.
#include <atomic>
#include <chrono>
#include <thread>

#include "test_programs.hpp"
#include "engine_support.hpp"

using namespace vaccel;
using namespace vaccel::test;

namespace {

// The real CPU backend seen through a narrower window: it claims no
// deadline support, and it records the weights the engine hands it.
class ObservedCpu : public backend::Backend {
public:
    ObservedCpu() : inner_(backend::open_cpu_backend(backend::CpuOptions{1})), info_(inner_->device_info())
    {
        info_.flags &= ~static_cast<std::uint64_t>(VACCEL_CAP_DEADLINES);
    }
    std::atomic<std::uint32_t>* weight_seen = nullptr;
    std::string* flow_seen = nullptr;

    const vaccel_device_info& device_info() const override { return info_; }
    Result<std::unique_ptr<backend::Context>> create_context() override { return inner_->create_context(); }
    Status destroy_context(std::unique_ptr<backend::Context>& c) override { return inner_->destroy_context(c); }
    void set_context_schedule(backend::Context& c, const backend::ContextSchedule& schedule) override
    {
        if (weight_seen)
            weight_seen->store(schedule.weight);
        if (flow_seen)
            *flow_seen = schedule.flow;
        inner_->set_context_schedule(c, schedule);
    }
    Result<std::unique_ptr<backend::Buffer>> allocate_buffer(backend::Context& c, const backend::BufferDesc& d,
                                                             backend::BufferInfo& i) override
    {
        return inner_->allocate_buffer(c, d, i);
    }
    Status free_buffer(std::unique_ptr<backend::Buffer>& b) override { return inner_->free_buffer(b); }
    Status write_buffer(backend::Buffer& b, std::uint64_t o, std::span<const std::byte> d) override
    {
        return inner_->write_buffer(b, o, d);
    }
    Status read_buffer(backend::Buffer& b, std::uint64_t o, std::span<std::byte> d) override
    {
        return inner_->read_buffer(b, o, d);
    }
    Result<std::unique_ptr<backend::Program>> load_program(backend::Context& c, const backend::ProgramDesc& d) override
    {
        return inner_->load_program(c, d);
    }
    Status unload_program(std::unique_ptr<backend::Program>& p) override { return inner_->unload_program(p); }
    Result<std::unique_ptr<backend::Queue>> create_queue(backend::Context& c) override { return inner_->create_queue(c); }
    Status destroy_queue(std::unique_ptr<backend::Queue>& q) override { return inner_->destroy_queue(q); }
    Result<std::unique_ptr<backend::Gate>> create_gate(backend::Context& c) override { return inner_->create_gate(c); }
    Status raise_gate(backend::Gate& g, std::uint64_t v) override { return inner_->raise_gate(g, v); }
    std::uint64_t gate_value(const backend::Gate& g) const override { return inner_->gate_value(g); }
    Status destroy_gate(std::unique_ptr<backend::Gate>& g) override { return inner_->destroy_gate(g); }
    Result<backend::Submitted> submit(const backend::SubmitDesc& d) override { return inner_->submit(d); }
    Result<backend::Submitted> launch(const backend::LaunchDesc& d) override { return inner_->launch(d); }
    backend::EventStatus poll(backend::Event& e) override { return inner_->poll(e); }
    Status destroy_event(std::unique_ptr<backend::Event>& e) override { return inner_->destroy_event(e); }
    std::uint64_t cancel_pending(backend::Context& c, const Error& why) override { return inner_->cancel_pending(c, why); }
    backend::DeviceState state() const override { return inner_->state(); }
    backend::LiveCounters live() const override { return inner_->live(); }

private:
    std::unique_ptr<backend::Backend> inner_;
    vaccel_device_info info_;
};

// Two devices: 0 the plain CPU backend, 1 the observed one.
std::shared_ptr<engine::DeviceManager> two_devices(std::atomic<std::uint32_t>* weight_seen = nullptr,
                                                   std::string* flow_seen = nullptr)
{
    std::vector<std::unique_ptr<backend::Backend>> backends;
    backends.push_back(backend::open_cpu_backend(backend::CpuOptions{1}));
    auto observed = std::make_unique<ObservedCpu>();
    observed->weight_seen = weight_seen;
    observed->flow_seen = flow_seen;
    backends.push_back(std::move(observed));
    return std::make_shared<engine::DeviceManager>(std::move(backends));
}

struct Run {
    std::uint64_t context, a, b, c, program, queue;
};

Run prepare(engine::Session& session, std::uint32_t device, std::int64_t n = 4)
{
    Run run{};
    run.context = make_context(session, device);
    const std::uint64_t bytes = static_cast<std::uint64_t>(n) * 4;
    run.a = make_buffer(session, run.context, bytes);
    run.b = make_buffer(session, run.context, bytes);
    run.c = make_buffer(session, run.context, bytes);
    run.program = load_program(session, run.context, add_program(n));
    vaccel_queue_create queue{};
    queue.context = run.context;
    assert_ok(call(session, VACCEL_OP_QUEUE_CREATE, queue));
    run.queue = queue.queue;
    return run;
}

Status submit(engine::Session& session, const Run& run, std::uint64_t& event,
              std::uint64_t deadline_ns = 0)
{
    const vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, run.a, 0, 16},
        {1, VACCEL_ACCESS_READ, run.b, 0, 16},
        {2, VACCEL_ACCESS_WRITE, run.c, 0, 16},
    };
    vaccel_submit args{};
    args.queue = run.queue;
    args.program = run.program;
    args.binding_count = 3;
    args.deadline_ns = deadline_ns;
    auto status = call(session, VACCEL_OP_SUBMIT, args, std::as_bytes(std::span(bindings)));
    event = args.event;
    return status;
}

Status submit_after(engine::Session& session, const Run& run, std::uint64_t gate,
                    std::uint64_t value, std::uint64_t& event)
{
    const vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, run.a, 0, 16},
        {1, VACCEL_ACCESS_READ, run.b, 0, 16},
        {2, VACCEL_ACCESS_WRITE, run.c, 0, 16},
    };
    vaccel_submit_after args{};
    args.queue = run.queue;
    args.program = run.program;
    args.binding_count = 3;
    args.gate = gate;
    args.value = value;
    auto status = call(session, VACCEL_OP_SUBMIT_AFTER, args, std::as_bytes(std::span(bindings)));
    event = args.event;
    return status;
}

template <class T>
std::optional<std::uint32_t> route(engine::Session& session, std::uint32_t opcode, const T& args,
                                   std::span<const std::byte> payload = {})
{
    return session.route(opcode, std::as_bytes(std::span(&args, 1)), payload);
}

void wait_done(engine::Session& session, std::uint64_t event)
{
    vaccel_event_wait wait{};
    wait.count = 1;
    wait.timeout_ns = UINT64_MAX;
    assert_ok(call(session, VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(&event, 1))));
}

// ---- routing --------------------------------------------------------------------

void route_names_the_device_each_handle_lives_on(void**)
{
    engine::Session session(two_devices());
    const Run zero = prepare(session, 0);
    const Run one = prepare(session, 1);

    vaccel_buffer_transfer transfer{};
    transfer.buffer = one.a;
    assert_int_equal(*route(session, VACCEL_OP_BUFFER_WRITE, transfer), 1);
    transfer.buffer = zero.a;
    assert_int_equal(*route(session, VACCEL_OP_BUFFER_READ, transfer), 0);
    vaccel_submit sub{};
    sub.queue = one.queue;
    assert_int_equal(*route(session, VACCEL_OP_SUBMIT, sub), 1);
    vaccel_handle_release release{};
    release.handle = one.program;
    assert_int_equal(*route(session, VACCEL_OP_PROGRAM_UNLOAD, release), 1);
    vaccel_context_create create{};
    create.device = 1;
    assert_int_equal(*route(session, VACCEL_OP_CONTEXT_CREATE, create), 1);
    vaccel_buffer_alloc alloc{};
    alloc.context = one.context;
    assert_int_equal(*route(session, VACCEL_OP_BUFFER_ALLOC, alloc), 1);

    std::uint64_t event = 0;
    assert_ok(submit(session, one, event));
    vaccel_event_wait wait{};
    wait.count = 1;
    assert_int_equal(*route(session, VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(&event, 1))), 1);
    wait_done(session, event);
    release.handle = event;
    assert_ok(call(session, VACCEL_OP_EVENT_DESTROY, release));
    // A released handle is unknown again: device 0, where call() refuses it.
    assert_int_equal(*route(session, VACCEL_OP_EVENT_DESTROY, release), 0);
}

void route_sends_device_less_ops_nowhere(void**)
{
    engine::Session session(two_devices());
    vaccel_get_version version{};
    assert_false(route(session, VACCEL_OP_GET_VERSION, version).has_value());
    vaccel_device_count count{};
    assert_false(route(session, VACCEL_OP_DEVICE_COUNT, count).has_value());
    vaccel_device_query query{};
    query.index = 1;
    assert_false(route(session, VACCEL_OP_DEVICE_QUERY, query).has_value());
    vaccel_device_tosa tosa{};
    tosa.device = 1;
    assert_false(route(session, VACCEL_OP_DEVICE_TOSA, tosa).has_value());
    vaccel_context_create create{};
    create.device = 9;  // past the devices: device 0 refuses it
    assert_int_equal(*route(session, VACCEL_OP_CONTEXT_CREATE, create), 0);
}

// ---- non-blocking waits ------------------------------------------------------------

void check_wait_reports_progress_without_blocking(void**)
{
    auto devices = two_devices();
    engine::Session session(devices);
    const Run run = prepare(session, 0);
    std::uint64_t events[2] = {};
    assert_ok(submit(session, run, events[0]));
    wait_done(session, events[0]);
    // One done event, waited together with itself twice: "any" is satisfied
    // by index 0, "all" by both.
    events[1] = events[0];
    auto any = session.check_wait(events, 0);
    assert_ok(any);
    assert_true(any->satisfied);
    assert_int_equal(any->done_count, 2);
    assert_int_equal(any->first_done, 0);
    auto all = session.check_wait(events, VACCEL_WAIT_ALL);
    assert_ok(all);
    assert_true(all->satisfied);
}

void check_wait_refuses_an_unknown_event_and_counts_it(void**)
{
    engine::Session session(two_devices());
    const std::uint64_t bogus[1] = {0x1234};
    auto progress = session.check_wait(bogus, VACCEL_WAIT_ALL);
    assert_refused(progress, Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE, 0x1234, 0);
    assert_int_equal(session.stats().errors, 1);
}

// Counts wake()s (from backend threads).
struct CountingWaiter final : engine::Waiter {
    void wake() noexcept override { woken.fetch_add(1); }
    std::atomic<int> woken{0};
};

// The wakes once `expected` arrived (or after 10 s, a guard, not a bound
// under test). An event is seen done before its watch has woken everyone:
// the wake follows on the backend's thread.
int wakes_once(const CountingWaiter& waiter, int expected)
{
    for (int i = 0; i < 10000 && waiter.woken.load() < expected; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return waiter.woken.load();
}

void completion_listener_fires_when_an_event_completes(void**)
{
    auto devices = two_devices();
    engine::Session session(devices);
    auto heard = std::make_shared<CountingWaiter>();
    session.set_completion_listener(heard);
    const Run run = prepare(session, 1);
    std::uint64_t event = 0;
    assert_ok(submit(session, run, event));
    wait_done(session, event);
    assert_int_equal(wakes_once(*heard, 1), 1);
    vaccel_handle_release release{};
    release.handle = event;
    assert_ok(call(session, VACCEL_OP_EVENT_DESTROY, release));
}

void check_wait_subscribes_the_waiter_to_pending_events(void**)
{
    engine::Session session(two_devices());
    const Run run = prepare(session, 1);
    vaccel_gate_create gate{};
    gate.context = run.context;
    assert_ok(call(session, VACCEL_OP_GATE_CREATE, gate));
    std::uint64_t event = 0;
    assert_ok(submit_after(session, run, gate.gate, 1, event));
    auto waiter = std::make_shared<CountingWaiter>();
    const std::uint64_t handles[1] = {event};
    auto progress = session.check_wait(handles, VACCEL_WAIT_ALL, waiter);
    assert_ok(progress);
    assert_false(progress->satisfied);
    assert_int_equal(waiter->woken.load(), 0);  // held by the gate: certainly pending
    vaccel_gate_value raise{};
    raise.gate = gate.gate;
    raise.value = 1;
    assert_ok(call(session, VACCEL_OP_GATE_RAISE, raise));
    wait_done(session, event);
    assert_int_equal(wakes_once(*waiter, 1), 1);
    vaccel_handle_release release{};
    release.handle = event;
    assert_ok(call(session, VACCEL_OP_EVENT_DESTROY, release));
    release.handle = gate.gate;
    assert_ok(call(session, VACCEL_OP_GATE_DESTROY, release));
}

// ---- use counters ----------------------------------------------------------------------

void stats_count_objects_submissions_and_refusals(void**)
{
    auto devices = two_devices();
    engine::Session session(devices);
    const Run run = prepare(session, 0);
    std::uint64_t event = 0;
    assert_ok(submit(session, run, event));
    wait_done(session, event);
    vaccel_handle_release bogus{};
    bogus.handle = 0x77;
    assert_false(call(session, VACCEL_OP_BUFFER_FREE, bogus).has_value());

    const engine::SessionStats stats = session.stats();
    assert_int_equal(stats.contexts, 1);
    assert_int_equal(stats.buffers, 3);
    assert_int_equal(stats.memory_bytes, 48);
    assert_int_equal(stats.programs, 1);
    assert_int_equal(stats.queues, 1);
    assert_int_equal(stats.events, 1);
    assert_int_equal(stats.events_in_flight, 0);
    assert_int_equal(stats.submissions, 1);
    assert_int_equal(stats.errors, 1);
}

void device_stats_count_sessions_with_contexts_and_submissions(void**)
{
    auto devices = two_devices();
    {
        engine::Session first(devices);
        engine::Session second(devices);
        const Run run = prepare(first, 1);
        make_context(second, 1);
        make_context(second, 1);  // a second context is still one session
        std::uint64_t event = 0;
        assert_ok(submit(first, run, event));
        wait_done(first, event);
        const engine::DeviceStats one = devices->device(1)->stats();
        assert_int_equal(one.sessions, 2);
        assert_int_equal(one.submissions, 1);
        assert_int_equal(one.live.contexts, 3);
        assert_int_equal(one.live.buffers, 3);
        assert_int_equal(one.live.programs, 1);
        assert_int_equal(devices->device(0)->stats().sessions, 0);
    }
    const engine::DeviceStats after = devices->device(1)->stats();
    assert_int_equal(after.sessions, 0);
    assert_int_equal(after.live.contexts, 0);
    assert_int_equal(after.submissions, 1);  // a counter, not a gauge
}

// ---- deadlines -------------------------------------------------------------------------

void deadline_is_refused_by_a_device_that_cannot_honour_it(void**)
{
    engine::Session session(two_devices());
    const Run run = prepare(session, 1);
    const std::uint64_t far = std::uint64_t{1} << 62;
    std::uint64_t event = 0;
    assert_refused(submit(session, run, event, far), Errc::deadline_expired, VACCEL_D_DEADLINE, 0, 0);
    assert_int_equal(context_limits(session, run.context).used_events, 0);
    assert_ok(submit(session, run, event, 0));  // without a deadline it runs
    wait_done(session, event);
}

void deadline_is_accepted_by_a_device_that_honours_it(void**)
{
    engine::Session session(two_devices());
    const Run run = prepare(session, 0);
    std::uint64_t event = 0;
    assert_ok(submit(session, run, event, std::uint64_t{1} << 62));
    wait_done(session, event);
}

// ---- policy ----------------------------------------------------------------------------

class SwitchablePolicy : public engine::LimitPolicy {
public:
    std::atomic<std::uint32_t> max_contexts{8};
    std::atomic<std::uint32_t> context_weight{250};
    mutable std::string cgroup_seen;

    vaccel_device_limits limits(const engine::SessionIdentity& who, std::uint32_t,
                                const vaccel_device_info& device) const override
    {
        cgroup_seen = who.cgroup;
        vaccel_device_limits l = device.limits;
        l.max_contexts = max_contexts.load();
        return l;
    }
    engine::ContextScheduling scheduling(const engine::SessionIdentity&, std::uint32_t) const override
    {
        return {context_weight.load(), false, 1000};
    }
};

void new_context_gets_the_policy_weight_clamped(void**)
{
    std::atomic<std::uint32_t> seen{0};
    std::string flow;
    auto policy = std::make_shared<SwitchablePolicy>();
    engine::SessionOptions options;
    options.policy = policy;
    options.identity.cgroup = "/user.slice/app";
    options.identity.uid = 4321;
    engine::Session session(two_devices(&seen, &flow), std::move(options));
    make_context(session, 1);
    assert_int_equal(seen.load(), 250);
    // The context joins its tenant's flow (the default policy's tenant: its uid).
    assert_string_equal(flow.c_str(), "uid:4321");
    assert_string_equal(policy->cgroup_seen.c_str(), "/user.slice/app");
    policy->context_weight = 5000;
    make_context(session, 1);
    assert_int_equal(seen.load(), 1000);
}

void new_context_obeys_a_policy_changed_after_the_session_began(void**)
{
    auto policy = std::make_shared<SwitchablePolicy>();
    engine::SessionOptions options;
    options.policy = policy;
    engine::Session session(two_devices(), std::move(options));
    make_context(session, 0);
    policy->max_contexts = 1;
    vaccel_context_create create{};
    assert_refused(call(session, VACCEL_OP_CONTEXT_CREATE, create), Errc::resource_limit,
                   VACCEL_D_LIMIT, 1, 1);
    policy->max_contexts = 2;
    make_context(session, 0);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(route_names_the_device_each_handle_lives_on),
        cmocka_unit_test(route_sends_device_less_ops_nowhere),
        cmocka_unit_test(check_wait_reports_progress_without_blocking),
        cmocka_unit_test(check_wait_refuses_an_unknown_event_and_counts_it),
        cmocka_unit_test(completion_listener_fires_when_an_event_completes),
        cmocka_unit_test(check_wait_subscribes_the_waiter_to_pending_events),
        cmocka_unit_test(stats_count_objects_submissions_and_refusals),
        cmocka_unit_test(device_stats_count_sessions_with_contexts_and_submissions),
        cmocka_unit_test(deadline_is_refused_by_a_device_that_cannot_honour_it),
        cmocka_unit_test(deadline_is_accepted_by_a_device_that_honours_it),
        cmocka_unit_test(new_context_gets_the_policy_weight_clamped),
        cmocka_unit_test(new_context_obeys_a_policy_changed_after_the_session_began),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
