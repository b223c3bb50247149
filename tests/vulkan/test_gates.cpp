// test_gates.cpp - host gates on the Vulkan device (Mesa lavapipe): a
// SUBMIT_AFTER stays pending until the host raises its gate and then runs
// with exact output; a raise at or below the value changes nothing (as on
// the CPU backend); destroying a gate cancels what still waits on it with
// the CPU's error; refusals; counters back to zero.
#include <chrono>
#include <thread>

#include "vaccel/backend/vulkan.hpp"
#include "vulkan_test_support.hpp"

namespace {

using namespace vulkan_test;

std::unique_ptr<Gate> must_gate(Rig& rig)
{
    auto gate = rig.backend->create_gate(*rig.context);
    assert_ok(gate);
    return std::move(*gate);
}

Result<Submitted> submit_after(Rig& rig, Program& program, const std::vector<Binding>& bindings,
                               Gate& gate, std::uint64_t value)
{
    SubmitDesc desc;
    desc.queue = rig.queue.get();
    desc.program = &program;
    desc.bindings = bindings;
    desc.after = &gate;
    desc.after_value = value;
    desc.sink = std::make_shared<CallbackSink>();
    return rig.backend->submit(desc);
}

// Long enough for lavapipe to have run 70 additions many times over.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }

void the_device_advertises_gates(void**)
{
    Rig gpu = vulkan_rig();
    const vaccel_device_info& info = gpu.backend->device_info();
    assert_int_equal(info.flags & VACCEL_CAP_GATES, VACCEL_CAP_GATES);
    assert_int_equal(info.limits.max_gates, 256);
    gpu.finish();
}

void a_submission_after_a_gate_waits_for_the_raise(void**)
{
    Rig gpu = vulkan_rig();
    auto p = gpu.must_load(doubling());
    const auto x = sample(70, 21);
    auto in = gpu.buffer_with(x), out = gpu.buffer(70 * 4);
    auto gate = must_gate(gpu);
    assert_int_equal(gpu.backend->live().gates, 1);
    assert_int_equal(gpu.backend->gate_value(*gate), 0);
    auto submitted = submit_after(gpu, *p, gpu.bind(*p, {in.get(), out.get()}), *gate, 2);
    assert_ok(submitted);
    assert_false(submitted->indeterminate.has_value());
    Event& event = *submitted->event;
    settle();
    assert_int_equal(static_cast<int>(gpu.backend->poll(event).state),
                     static_cast<int>(EventState::pending));
    // Held while waiting: the buffers are in flight, the output busy.
    assert_int_equal(in->in_flight(), 1);
    assert_int_equal(gpu.backend->live().events_in_flight, 1);

    assert_ok(gpu.backend->raise_gate(*gate, 1));  // below the awaited 2
    assert_int_equal(gpu.backend->gate_value(*gate), 1);
    settle();
    assert_int_equal(static_cast<int>(gpu.backend->poll(event).state),
                     static_cast<int>(EventState::pending));
    // At or below the current value: accepted and changes nothing, as on
    // the CPU backend (backend.hpp).
    assert_ok(gpu.backend->raise_gate(*gate, 0));
    assert_ok(gpu.backend->raise_gate(*gate, 1));
    assert_int_equal(gpu.backend->gate_value(*gate), 1);
    settle();
    assert_int_equal(static_cast<int>(gpu.backend->poll(event).state),
                     static_cast<int>(EventState::pending));

    assert_ok(gpu.backend->raise_gate(*gate, 7));  // past 2: released
    assert_int_equal(gpu.backend->gate_value(*gate), 7);
    assert_int_equal(static_cast<int>(gpu.wait(event).state),
                     static_cast<int>(EventState::complete));
    std::vector<float> want(70);
    for (int i = 0; i < 70; ++i) want[i] = x[i] + x[i];  // exact: doubling a float
    assert_exactly(gpu.read(*out, 70), want);

    // A submission after a value already reached runs at once.
    auto again = submit_after(gpu, *p, gpu.bind(*p, {in.get(), out.get()}), *gate, 3);
    assert_ok(again);
    assert_int_equal(static_cast<int>(gpu.wait(*again->event).state),
                     static_cast<int>(EventState::complete));
    assert_exactly(gpu.read(*out, 70), want);

    assert_ok(gpu.backend->destroy_event(submitted->event));
    assert_ok(gpu.backend->destroy_event(again->event));
    assert_ok(gpu.backend->destroy_gate(gate));
    assert_int_equal(gpu.backend->live().gates, 0);
    assert_ok(gpu.backend->free_buffer(in));
    assert_ok(gpu.backend->free_buffer(out));
    gpu.finish(p);
}

void destroying_a_gate_cancels_what_waits_on_it(void**)
{
    Rig gpu = vulkan_rig();
    auto p = gpu.must_load(doubling());
    const std::vector<float> zeros(70, 0.0f);
    auto in = gpu.buffer_with(sample(70, 22)), out = gpu.buffer_with(zeros);
    auto gate = must_gate(gpu);
    auto submitted = submit_after(gpu, *p, gpu.bind(*p, {in.get(), out.get()}), *gate, 5);
    assert_ok(submitted);
    settle();
    assert_int_equal(static_cast<int>(gpu.backend->poll(*submitted->event).state),
                     static_cast<int>(EventState::pending));
    assert_ok(gpu.backend->destroy_gate(gate));
    const EventStatus status = gpu.backend->poll(*submitted->event);
    assert_int_equal(static_cast<int>(status.state), static_cast<int>(EventState::cancelled));
    assert_int_equal(status.failure.code, Errc::cancelled);
    assert_int_equal(status.failure.detail, VACCEL_D_GATE_DESTROYED);
    assert_int_equal(status.failure.arg0, 0);
    assert_int_equal(status.failure.arg1, 5);  // the value it awaited
    assert_true(status.failure.note.find("never ran") != std::string::npos);
    // Nothing ran: the output keeps its zeros, and nothing is held.
    assert_exactly(gpu.read(*out, 70), zeros);
    assert_int_equal(in->in_flight(), 0);
    const LiveCounters live = gpu.backend->live();
    assert_int_equal(live.gates, 0);
    assert_int_equal(live.events_in_flight, 0);
    assert_ok(gpu.backend->destroy_event(submitted->event));
    assert_ok(gpu.backend->free_buffer(in));
    assert_ok(gpu.backend->free_buffer(out));
    gpu.finish(p);
}

void a_gate_of_another_context_is_refused(void**)
{
    Rig gpu = vulkan_rig();
    auto p = gpu.must_load(doubling());
    auto in = gpu.buffer(70 * 4), out = gpu.buffer(70 * 4);
    auto other = gpu.backend->create_context();
    assert_ok(other);
    auto foreign = gpu.backend->create_gate(**other);
    assert_ok(foreign);
    assert_refused(submit_after(gpu, *p, gpu.bind(*p, {in.get(), out.get()}), **foreign, 1),
                   Errc::incompatible, VACCEL_D_BINDING_CONTEXT, 0, 0);
    assert_int_equal(in->in_flight(), 0);
    assert_int_equal(gpu.backend->live().events, 0);
    assert_ok(gpu.backend->destroy_gate(*foreign));
    assert_ok(gpu.backend->destroy_context(*other));
    assert_ok(gpu.backend->free_buffer(in));
    assert_ok(gpu.backend->free_buffer(out));
    gpu.finish(p);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_device_advertises_gates),
        cmocka_unit_test(a_submission_after_a_gate_waits_for_the_raise),
        cmocka_unit_test(destroying_a_gate_cancels_what_waits_on_it),
        cmocka_unit_test(a_gate_of_another_context_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
