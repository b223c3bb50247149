// test_scheduler.cpp - the CUDA device's scheduler (docs/adr/0026) through
// the context hosts vacceld runs: the checks every device scheduler passes
// (tests/support/device_scheduler_checks.hpp), on the first CUDA device.
// Each context is a vaccel-cuda-host of its own, so the tenants' work meets
// only in the scheduler; without it the driver time-slices the hosts and
// each check fails. Needs a GPU (skipped without one, as every CUDA device
// test; make test-gpu requires it). A long FP32 MATMUL is cut over k into
// segments the scheduler releases one by one, with the bytes of a whole run.
#include "../support/device_scheduler_checks.hpp"
#include "cuda_test_support.hpp"

namespace {

using namespace scheduler_checks;

// Work that ends before the scheduler releases it (its gate destroyed, its
// context's pending work cancelled) leaves the device's account as it was,
// and the device goes on serving the next tenant.
void work_that_never_started_is_not_charged(void**)
{
    auto device = open_device();
    Member held(*device, schedule("held", 100), 256);
    held.submit(4, true);  // on a gate nobody raises
    assert_int_equal(flow_in(*device->device_service(), "held").queued, 0);
    const Error why = Error::of(Errc::cancelled).with_note("cancelled by the test");
    assert_int_equal(device->cancel_pending(*held.context, why), 4);
    for (auto& event : held.events) {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (device->poll(*event).state == EventState::pending) {
            if (std::chrono::steady_clock::now() > give_up) fail_msg("a cancel never ended");
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        assert_int_equal(static_cast<int>(device->poll(*event).state),
                         static_cast<int>(EventState::cancelled));
        assert_ok(device->destroy_event(event));
    }
    held.events.clear();
    // The gate's waiters are gone: raising it releases nothing.
    held.release();
    Member next(*device, schedule("next", 100), 256);
    next.submit(3, false);
    next.wait_all();
    const auto service = *device->device_service();
    assert_int_equal(flow_in(service, "held").charged_ns, 0);
    assert_true(flow_in(service, "next").charged_ns > 0);
    std::size_t held_dispatches = 0;
    for (const DispatchEntry& e : service.recent) held_dispatches += e.flow == "held";
    assert_int_equal(held_dispatches, 0);
}

}  // namespace

int main()
{
    cuda_test::require_device();
    open_device = [] { return cuda_test::cuda_device(); };
    open_device_holding = [](std::uint32_t hold_us) {
        CudaOptions options;
        options.latency_hold_us = hold_us;
        return cuda_test::cuda_device(options);
    };
    open_device_slicing = [](std::uint32_t slice_us) {
        CudaOptions options;
        options.slice_us = slice_us;
        return cuda_test::cuda_device(options);
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(weights_100_and_300_are_charged_device_time_1_to_3),
        cmocka_unit_test(a_latency_tenant_goes_ahead_of_queued_batch_work),
        cmocka_unit_test(a_device_share_cap_holds_in_charged_time),
        cmocka_unit_test(a_closed_loop_latency_tenant_is_held_for),
        cmocka_unit_test(work_that_never_started_is_not_charged),
        cmocka_unit_test(a_long_matmul_is_cut_into_segments_with_exact_output),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
