// test_tuning.cpp - sizes derived from device limits, and the floor a
// device must meet, on fabricated limits (no device).
#include <string>

#include "tuning.hpp"

#include "cmocka.hpp"

using namespace vaccel::backend::vulkan;

namespace {

// An H200-like device: 1024-wide workgroups, 2^31 - 1 groups, a million
// storage buffers, 256 push-constant bytes, subgroups of 32.
TuningLimits gpu()
{
    return TuningLimits{1024, 1024, 2147483647, 1048576, 1048576, 256, 32};
}

void a_large_device_is_capped_by_the_protocol(void**)
{
    const auto tuning = tune(gpu());
    assert_true(tuning.has_value());
    assert_int_equal(tuning->workgroup_size, 64);
    assert_int_equal(tuning->max_groups, 65535);
    assert_int_equal(tuning->descriptors, 65);  // VACCEL_MAX_BINDINGS slots + the arena
    assert_int_equal(tuning->push_constant_bytes, 256);
    assert_int_equal(tuning->subgroup_size, 32);
}

void a_small_device_caps_descriptors_and_grid(void**)
{
    // The Vulkan minimums: 4 storage buffers per stage, 24 per set, 65535
    // groups; here fewer groups and a set limit below the stage limit.
    auto limits = gpu();
    limits.max_workgroup_count_x = 4096;
    limits.max_per_stage_storage_buffers = 16;
    limits.max_set_storage_buffers = 12;
    limits.subgroup_size = 8;
    const auto tuning = tune(limits);
    assert_true(tuning.has_value());
    assert_int_equal(tuning->max_groups, 4096);
    assert_int_equal(tuning->descriptors, 12);
    assert_int_equal(tuning->subgroup_size, 8);
}

void a_device_below_the_kernels_is_refused(void**)
{
    auto narrow = gpu();
    narrow.max_workgroup_size_x = 32;
    narrow.max_workgroup_invocations = 48;
    narrow.max_per_stage_storage_buffers = 2;
    const auto refused = tune(narrow);
    assert_false(refused.has_value());
    assert_string_equal(refused.error().c_str(),
                        "the device cannot run the backend's kernels: workgroups 32 wide at "
                        "most (the kernels are 64 wide); 48 invocations per workgroup at most "
                        "(the kernels need 64); 2 storage buffers per shader stage and 1048576 "
                        "per set (a program needs at least 3: an input, an output and its "
                        "arena)");
    auto no_groups = gpu();
    no_groups.max_workgroup_count_x = 0;
    assert_string_equal(tune(no_groups).error().c_str(),
                        "the device cannot run the backend's kernels: no workgroups along x");
    // Exactly at the floor is served.
    auto floor = gpu();
    floor.max_workgroup_size_x = 64;
    floor.max_workgroup_invocations = 64;
    floor.max_set_storage_buffers = 3;
    const auto tuning = tune(floor);
    assert_true(tuning.has_value());
    assert_int_equal(tuning->descriptors, 3);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_large_device_is_capped_by_the_protocol),
        cmocka_unit_test(a_small_device_caps_descriptors_and_grid),
        cmocka_unit_test(a_device_below_the_kernels_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
