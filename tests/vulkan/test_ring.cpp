// test_ring.cpp - the submission ring of a Vulkan context (Mesa lavapipe):
// 64 preallocated slots reused in order, a 65th submission in flight refused
// with the events limit, and every slot back once the work ends.
#include <fmt/format.h>

#include "vulkan_test_support.hpp"
#include "objects.hpp"
#include "vaccel/backend/vulkan.hpp"

namespace {

using namespace vulkan_test;
using vaccel::backend::vulkan::SubmissionRing;
using vaccel::backend::vulkan::VulkanContext;

SubmissionRing& ring_of(Rig& rig) { return *static_cast<VulkanContext&>(*rig.context).state->ring; }

Result<Submitted> submit_desc(Rig& rig, Program& program, const std::vector<Binding>& bindings,
                              Gate* gate, std::uint64_t value)
{
    SubmitDesc desc;
    desc.queue = rig.queue.get();
    desc.program = &program;
    desc.bindings = bindings;
    desc.after = gate;
    desc.after_value = value;
    desc.sink = std::make_shared<CallbackSink>();
    return rig.backend->submit(desc);
}

std::vector<float> doubled(const std::vector<float>& x)
{
    std::vector<float> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = x[i] + x[i];  // exact: one IEEE step
    return want;
}

void more_submissions_than_slots_reuse_them(void**)
{
    Rig gpu = vulkan_rig();
    auto p = gpu.must_load(doubling());
    assert_int_equal(ring_of(gpu).in_use(), 0);
    auto in = gpu.buffer(70 * 4), out = gpu.buffer(70 * 4);
    // 150 runs one after the other: each slot is used two or three times.
    for (std::uint32_t run = 0; run < 150; ++run) {
        const auto x = sample(70, 100 + run);
        assert_ok(gpu.backend->write_buffer(*in, 0, bytes_of(x)));
        auto submitted = submit_desc(gpu, *p, gpu.bind(*p, {in.get(), out.get()}), nullptr, 0);
        assert_ok(submitted);
        // One slot at most: this run's (the completion thread may already
        // have given it back).
        assert_true(ring_of(gpu).in_use() <= 1);
        assert_int_equal(static_cast<int>(gpu.wait(*submitted->event).state),
                         static_cast<int>(EventState::complete));
        assert_exactly(gpu.read(*out, 70), doubled(x));
        // Given back by the completion thread before the event completes.
        assert_int_equal(ring_of(gpu).in_use(), 0);
        assert_ok(gpu.backend->destroy_event(submitted->event));
    }
    assert_int_equal(ring_of(gpu).retired(), 0);
    assert_ok(gpu.backend->free_buffer(in));
    assert_ok(gpu.backend->free_buffer(out));
    gpu.finish(p);
}

// Submissions parked on a gate hold their slot (they are recorded at
// submit), so 64 of them fill the ring without racing the device.
void a_sixty_fifth_submission_in_flight_is_refused(void**)
{
    Rig gpu = vulkan_rig();
    auto p = gpu.must_load(doubling());
    auto gate = gpu.backend->create_gate(*gpu.context);
    assert_ok(gate);
    const auto x = sample(70, 7);
    auto in = gpu.buffer_with(x);
    std::vector<std::unique_ptr<Buffer>> outs;
    std::vector<std::unique_ptr<Event>> events;
    for (int i = 0; i < 64; ++i) {
        outs.push_back(gpu.buffer(70 * 4));
        auto submitted =
            submit_desc(gpu, *p, gpu.bind(*p, {in.get(), outs.back().get()}), gate->get(), 1);
        assert_ok(submitted);
        events.push_back(std::move(submitted->event));
    }
    assert_int_equal(ring_of(gpu).in_use(), 64);
    auto spare = gpu.buffer(70 * 4);
    // The 65th, gated or not: ResourceLimit, the events limit at the ring's depth.
    const auto gated = submit_desc(gpu, *p, gpu.bind(*p, {in.get(), spare.get()}), gate->get(), 1);
    assert_refused(gated, Errc::resource_limit, VACCEL_D_LIMIT, 64, 64);
    assert_int_equal(gated.error().limit, VACCEL_LIMIT_EVENTS);
    assert_true(gated.error().note.find("submission ring") != std::string::npos);
    assert_refused(submit_desc(gpu, *p, gpu.bind(*p, {in.get(), spare.get()}), nullptr, 0),
                   Errc::resource_limit, VACCEL_D_LIMIT, 64, 64);
    // The refusals held nothing: the spare buffer is free, 64 in flight.
    assert_int_equal(spare->in_flight(), 0);
    assert_int_equal(in->in_flight(), 64);
    assert_int_equal(gpu.backend->live().events_in_flight, 64);

    assert_ok(gpu.backend->raise_gate(**gate, 1));
    for (auto& event : events)
        assert_int_equal(static_cast<int>(gpu.wait(*event).state),
                         static_cast<int>(EventState::complete));
    for (auto& out : outs) assert_exactly(gpu.read(*out, 70), doubled(x));
    assert_int_equal(ring_of(gpu).in_use(), 0);
    assert_int_equal(gpu.backend->live().events_in_flight, 0);
    // A slot is free again: the spare run goes through.
    auto again = submit_desc(gpu, *p, gpu.bind(*p, {in.get(), spare.get()}), nullptr, 0);
    assert_ok(again);
    assert_int_equal(static_cast<int>(gpu.wait(*again->event).state),
                     static_cast<int>(EventState::complete));
    assert_exactly(gpu.read(*spare, 70), doubled(x));
    assert_ok(gpu.backend->destroy_event(again->event));
    for (auto& event : events) assert_ok(gpu.backend->destroy_event(event));
    for (auto& out : outs) assert_ok(gpu.backend->free_buffer(out));
    assert_ok(gpu.backend->free_buffer(spare));
    assert_ok(gpu.backend->free_buffer(in));
    assert_ok(gpu.backend->destroy_gate(*gate));
    assert_int_equal(ring_of(gpu).in_use(), 0);
    gpu.finish(p);
}

void a_cancelled_submission_gives_its_slot_back(void**)
{
    Rig gpu = vulkan_rig();
    auto p = gpu.must_load(doubling());
    auto gate = gpu.backend->create_gate(*gpu.context);
    assert_ok(gate);
    auto in = gpu.buffer(70 * 4), out = gpu.buffer(70 * 4);
    auto submitted = submit_desc(gpu, *p, gpu.bind(*p, {in.get(), out.get()}), gate->get(), 3);
    assert_ok(submitted);
    assert_int_equal(ring_of(gpu).in_use(), 1);
    assert_ok(gpu.backend->destroy_gate(*gate));
    assert_int_equal(static_cast<int>(gpu.backend->poll(*submitted->event).state),
                     static_cast<int>(EventState::cancelled));
    assert_int_equal(ring_of(gpu).in_use(), 0);
    assert_int_equal(ring_of(gpu).retired(), 0);
    assert_ok(gpu.backend->destroy_event(submitted->event));
    assert_ok(gpu.backend->free_buffer(in));
    assert_ok(gpu.backend->free_buffer(out));
    gpu.finish(p);
}

// 64 inputs summed in a chain into one output: 65 slots and the arena (the
// 62 partial sums) need 66 descriptors, more than any device binds at once
// here: the backend binds at most VACCEL_MAX_BINDINGS + 1 = 65 (tuning.hpp),
// lavapipe 32 storage buffers per shader stage. arg0 is the device's count.
void a_program_with_more_buffers_than_a_set_holds_is_refused_at_load(void**)
{
    Rig gpu = vulkan_rig();
    tosa::GraphBuilder g;
    std::vector<std::uint32_t> inputs;
    for (int i = 0; i < 64; ++i) inputs.push_back(f32(g, fmt::format("x{}", i).c_str(), {4}));
    std::uint32_t sum = inputs[0];
    for (int i = 1; i < 64; ++i) {
        const auto next = f32(g, i == 63 ? "out" : fmt::format("s{}", i).c_str(), {4});
        g.op(Op::add, {sum, inputs[i]}, {next});
        sum = next;
    }
    for (auto x : inputs) g.input(x);
    g.output(sum);
    const auto refused = gpu.load(g.finish());
    if (refused.has_value()) fail_msg("a program of 66 storage buffers was accepted");
    const Error& e = refused.error();
    assert_int_equal(static_cast<int>(e.code), static_cast<int>(Errc::resource_limit));
    assert_int_equal(e.detail, VACCEL_D_LIMIT);
    assert_int_equal(e.limit, VACCEL_LIMIT_BINDINGS);
    assert_int_equal(e.arg1, 66);
    assert_true(e.arg0 >= 3 && e.arg0 <= 65);
    assert_string_equal(e.note.c_str(),
                        fmt::format("the program needs 66 storage buffers (65 slots and its "
                                    "arena), more than the {} this device binds at once; split "
                                    "the program or give it fewer inputs and outputs",
                                    e.arg0)
                            .c_str());
    assert_int_equal(gpu.backend->live().programs, 0);
    gpu.finish();
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(more_submissions_than_slots_reuse_them),
        cmocka_unit_test(a_sixty_fifth_submission_in_flight_is_refused),
        cmocka_unit_test(a_cancelled_submission_gives_its_slot_back),
        cmocka_unit_test(a_program_with_more_buffers_than_a_set_holds_is_refused_at_load),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
