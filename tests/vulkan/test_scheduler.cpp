// test_scheduler.cpp - the Vulkan device's scheduler (docs/adr/0026) on
// lavapipe: the checks every device scheduler passes
// (tests/support/device_scheduler_checks.hpp), its slicing of a long MATMUL
// over k among them.
#include "vaccel/backend/vulkan.hpp"
#include "../support/device_scheduler_checks.hpp"
#include "vulkan_test_support.hpp"

namespace {

using namespace vulkan_test;
using namespace scheduler_checks;

void a_long_half_matmul_is_cut_into_segments_with_exact_output(void**)
{
    long_matmul_is_cut_with_exact_output(DType::fp16);
}

}  // namespace

int main()
{
    open_device = [] { return lavapipe(); };
    open_device_holding = [](std::uint32_t hold_us) {
        VulkanOptions options;
        options.latency_hold_us = hold_us;
        return lavapipe(options);
    };
    open_device_slicing = [](std::uint32_t slice_us) {
        VulkanOptions options;
        options.slice_us = slice_us;
        return lavapipe(options);
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(weights_100_and_300_are_charged_device_time_1_to_3),
        cmocka_unit_test(a_latency_tenant_goes_ahead_of_queued_batch_work),
        cmocka_unit_test(a_device_share_cap_holds_in_charged_time),
        cmocka_unit_test(a_closed_loop_latency_tenant_is_held_for),
        cmocka_unit_test(a_long_matmul_is_cut_into_segments_with_exact_output),
        cmocka_unit_test(a_long_half_matmul_is_cut_into_segments_with_exact_output),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
