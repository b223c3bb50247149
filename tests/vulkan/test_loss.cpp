// test_loss.cpp - a Vulkan device lost while it works (fault injection,
// VulkanOptions::inject_loss_after, on lavapipe): the submission it was
// taking is accepted indeterminately and fails with DeviceLost, the device
// reports itself lost and refuses new work with the reason, everything
// already given to it can still be released, and another device (the CPU
// backend in the same process) keeps working.
#include "vulkan_test_support.hpp"

namespace {

using namespace vulkan_test;

Result<Submitted> submit_once(Rig& rig, Program& program, Buffer& in, Buffer& out)
{
    SubmitDesc desc;
    desc.queue = rig.queue.get();
    desc.program = &program;
    const auto bindings = rig.bind(program, {&in, &out});
    desc.bindings = bindings;
    desc.sink = std::make_shared<CallbackSink>();
    return rig.backend->submit(desc);
}

void a_lost_device_fails_its_work_and_refuses_more(void**)
{
    VulkanOptions options;
    options.inject_loss_after = 2;  // the third submission meets the loss
    Rig gpu = vulkan_rig(options);
    auto p = gpu.must_load(doubling());
    auto in = gpu.buffer(70 * 4), out = gpu.buffer(70 * 4);
    const auto x = sample(70, 7);
    assert_ok(gpu.backend->write_buffer(*in, 0, bytes_of(x)));
    std::vector<float> twice(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) twice[i] = x[i] + x[i];  // one IEEE step: exact

    // Two submissions before the loss run as usual.
    for (int run = 0; run < 2; ++run) {
        auto submitted = submit_once(gpu, *p, *in, *out);
        assert_ok(submitted);
        assert_false(submitted->indeterminate.has_value());
        assert_int_equal(static_cast<int>(gpu.wait(*submitted->event).state),
                         static_cast<int>(EventState::complete));
        assert_ok(gpu.backend->destroy_event(submitted->event));
        assert_exactly(gpu.read(*out, 70), twice);
    }
    assert_int_equal(static_cast<int>(gpu.backend->state()), static_cast<int>(DeviceState::ok));

    // The third: accepted indeterminately with an event that fails.
    auto lost = submit_once(gpu, *p, *in, *out);
    assert_ok(lost);
    assert_true(lost->indeterminate.has_value());
    assert_int_equal(static_cast<int>(lost->indeterminate->code),
                     static_cast<int>(Errc::device_lost));
    assert_int_equal(lost->indeterminate->detail, VACCEL_D_INDETERMINATE);
    const EventStatus status = gpu.wait(*lost->event);
    assert_int_equal(static_cast<int>(status.state), static_cast<int>(EventState::failed));
    assert_int_equal(static_cast<int>(status.failure.code), static_cast<int>(Errc::device_lost));
    assert_int_equal(static_cast<int>(gpu.backend->state()), static_cast<int>(DeviceState::lost));

    // New work and transfers are refused with the reason.
    auto refused = submit_once(gpu, *p, *in, *out);
    assert_refused(refused, Errc::device_lost, VACCEL_D_DEVICE_STATE, 0, 0);
    assert_refused(gpu.backend->write_buffer(*in, 0, bytes_of(x)), Errc::device_lost,
                   VACCEL_D_DEVICE_STATE, 0, 0);

    // Another device in this process is not affected.
    Rig cpu(1);
    auto q = cpu.must_load(doubling());
    assert_exactly(cpu.run(*q, {x})[0], twice);
    cpu.finish(q);

    // Everything given to the lost device can still be released.
    assert_ok(gpu.backend->destroy_event(lost->event));
    assert_ok(gpu.backend->free_buffer(in));
    assert_ok(gpu.backend->free_buffer(out));
    gpu.finish(p);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_lost_device_fails_its_work_and_refuses_more),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
