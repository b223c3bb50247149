// test_scheduler.cpp - the Vulkan device's scheduler (docs/adr/0026) on
// lavapipe: the checks every device scheduler passes
// (tests/support/device_scheduler_checks.hpp), and the Vulkan device's own
// slicing of a long MATMUL into segments over its dot products' k.
#include "vaccel/backend/vulkan.hpp"
#include "../support/device_scheduler_checks.hpp"
#include "vulkan_test_support.hpp"

namespace {

using namespace vulkan_test;
using namespace scheduler_checks;

// A MATMUL of a few milliseconds with an FP32 result and `input` operands:
// its first run takes the profile whole; later runs go out in several
// segments over its k (each part going on from the sums the last one
// stored), and every run's output is the same bytes as on a device that
// never cuts. FP16 operands take the cooperative-matrix kernel on a GPU
// that has one (make test-gpu), the tiled kernel on lavapipe.
void long_matmul_is_cut_with_exact_output(DType input)
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
        auto probe = lavapipe();
        side = side_for(*probe, 2'000'000, input);
    }
    VulkanOptions whole;
    whole.slice_us = 0;
    auto plain = lavapipe(whole);
    std::vector<float> want;
    {
        Member m(*plain, schedule("plain", 100), side, input);
        m.submit(1, false);
        m.wait_all();
        want = read_outputs(m)[0];
        const auto record = record_of(*plain);
        assert_int_equal(record.size(), 1);
    }
    auto device = lavapipe();  // slice_us = 250
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

void a_long_matmul_is_cut_into_segments_with_exact_output(void**)
{
    long_matmul_is_cut_with_exact_output(DType::fp32);
}

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
