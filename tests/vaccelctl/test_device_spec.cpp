// test_device_spec.cpp - the --device argument (tools/vaccelctl/src/device_spec).
//
// Specifies: the spec forms, which device each picks among a known list, what
// `auto` prefers, and the refusals (with the device list) when nothing matches.
#include <vector>

#include "device_spec.hpp"
#include "vaccel.h"

#include "cmocka.hpp"

using namespace vaccel::ctl;

namespace {

constexpr std::uint32_t tosa = VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA);
constexpr std::uint32_t ptx = VACCEL_FORMAT_BIT(VACCEL_FORMAT_CUDA_PTX);

// cpu, two Vulkan GPUs (lavapipe is class OTHER but driver vulkan), one CUDA GPU.
std::vector<DeviceSummary> machine()
{
    return {
        {0, "Host CPU", "vaccel-cpu", VACCEL_CLASS_OTHER, tosa},
        {1, "llvmpipe (LLVM 15, 256 bits)", "vulkan lavapipe", VACCEL_CLASS_OTHER, tosa},
        {2, "NVIDIA H200", "vulkan nvidia 580.159", VACCEL_CLASS_GPU, tosa},
        {3, "NVIDIA H200", "cuda 13.0", VACCEL_CLASS_GPU, tosa | ptx},
    };
}

std::uint32_t pick(const char* text, const std::vector<DeviceSummary>& devices)
{
    auto spec = parse_device_spec(text);
    assert_true(spec.has_value());
    auto chosen = select_device(*spec, devices, VACCEL_FORMAT_TOSA);
    if (!chosen)
        fail_msg("%s: %s", text, chosen.error().message.c_str());
    return *chosen;
}

std::string refusal(const char* text, const std::vector<DeviceSummary>& devices,
                    std::uint32_t format = VACCEL_FORMAT_TOSA)
{
    auto spec = parse_device_spec(text);
    assert_true(spec.has_value());
    auto chosen = select_device(*spec, devices, format);
    assert_false(chosen.has_value());
    return chosen.error().message;
}

void parse_reads_auto_kind_ordinal_and_name(void**)
{
    auto spec = parse_device_spec("auto");
    assert_int_equal(static_cast<int>(spec->form), static_cast<int>(DeviceSpec::Form::automatic));
    spec = parse_device_spec("vulkan:12");
    assert_int_equal(static_cast<int>(spec->form),
                     static_cast<int>(DeviceSpec::Form::kind_ordinal));
    assert_int_equal(static_cast<int>(spec->kind), static_cast<int>(DeviceKind::vulkan));
    assert_int_equal(spec->ordinal, 12);
    spec = parse_device_spec("cpu");
    assert_int_equal(static_cast<int>(spec->kind), static_cast<int>(DeviceKind::cpu));
    assert_int_equal(spec->ordinal, 0);
    spec = parse_device_spec("NVIDIA H200");
    assert_int_equal(static_cast<int>(spec->form), static_cast<int>(DeviceSpec::Form::name));
    assert_string_equal(spec->name.c_str(), "NVIDIA H200");
}

void parse_refuses_kind_with_bad_number(void**)
{
    auto spec = parse_device_spec("cuda:x");
    assert_false(spec.has_value());
    assert_contains(spec.error().message, "--device cuda:x: 'x' is not a device number");
    assert_false(parse_device_spec("cuda:").has_value());
    assert_false(parse_device_spec("cuda:1x").has_value());
    assert_false(parse_device_spec("").has_value());
}

void kind_comes_from_driver_string(void**)
{
    auto devices = machine();
    assert_int_equal(static_cast<int>(device_kind(devices[0])), static_cast<int>(DeviceKind::cpu));
    assert_int_equal(static_cast<int>(device_kind(devices[1])),
                     static_cast<int>(DeviceKind::vulkan));
    assert_int_equal(static_cast<int>(device_kind(devices[3])), static_cast<int>(DeviceKind::cuda));
    DeviceSummary cpu_by_name{0, "CPU (8 threads)", "host", VACCEL_CLASS_OTHER, tosa};
    assert_int_equal(static_cast<int>(device_kind(cpu_by_name)), static_cast<int>(DeviceKind::cpu));
}

void cpu_picks_the_cpu_device(void**)
{
    assert_int_equal(pick("cpu", machine()), 0);
}

void kind_ordinal_counts_devices_of_that_kind(void**)
{
    assert_int_equal(pick("vulkan:0", machine()), 1);
    assert_int_equal(pick("vulkan:1", machine()), 2);
    assert_int_equal(pick("cuda:0", machine()), 3);
}

void name_picks_the_first_device_with_that_exact_name(void**)
{
    assert_int_equal(pick("NVIDIA H200", machine()), 2);
    assert_int_equal(pick("llvmpipe (LLVM 15, 256 bits)", machine()), 1);
}

void auto_prefers_a_gpu_then_the_lowest_index(void**)
{
    assert_int_equal(pick("auto", machine()), 2);
    std::vector<DeviceSummary> cpu_only{machine()[0]};
    assert_int_equal(pick("auto", cpu_only), 0);
}

void auto_skips_devices_that_do_not_admit_the_format(void**)
{
    auto devices = machine();
    devices[2].formats = ptx;
    devices[3].formats = ptx;
    assert_int_equal(pick("auto", devices), 0);
}

void kind_ordinal_matching_nothing_lists_the_devices(void**)
{
    auto message = refusal("vulkan:2", machine());
    assert_string_equal(message.c_str(),
                        "no device matches --device vulkan:2: there are 2 vulkan devices; the "
                        "devices are: [0] cpu \"Host CPU\", [1] vulkan \"llvmpipe (LLVM 15, 256 "
                        "bits)\", [2] vulkan \"NVIDIA H200\", [3] cuda \"NVIDIA H200\"");
}

void kind_with_no_device_of_that_kind_says_so(void**)
{
    std::vector<DeviceSummary> cpu_only{machine()[0]};
    assert_string_equal(refusal("cuda:0", cpu_only).c_str(),
                        "no device matches --device cuda:0: there are no cuda devices; the "
                        "devices are: [0] cpu \"Host CPU\"");
}

void unknown_name_is_refused_with_the_device_list(void**)
{
    std::vector<DeviceSummary> cpu_only{machine()[0]};
    auto message = refusal("tpu", cpu_only);
    assert_string_equal(message.c_str(),
                        "no device matches --device tpu (not auto, an index, cpu, vulkan:N, "
                        "cuda:N, nor the start of a device's name); the devices are: [0] cpu "
                        "\"Host CPU\"");
}

// What `vaccelctl devices` prints is what --device takes: the index, bare
// or in brackets, and kinds in any case.
void the_index_devices_prints_picks_that_device(void**)
{
    assert_int_equal(pick("1", machine()), 1);
    assert_int_equal(pick("[3]", machine()), 3);
    assert_int_equal(pick("[0]", machine()), 0);
    assert_int_equal(pick("Vulkan:1", machine()), 2);
    assert_int_equal(pick("CUDA", machine()), 3);
    assert_int_equal(pick("AUTO", machine()), 2);
    assert_string_equal(refusal("[7]", machine()).c_str(),
                        "no device has index 7 (--device [7]); the devices are: [0] cpu \"Host "
                        "CPU\", [1] vulkan \"llvmpipe (LLVM 15, 256 bits)\", [2] vulkan \"NVIDIA "
                        "H200\", [3] cuda \"NVIDIA H200\"");
}

// A name in any case, or the start of exactly one device's name.
void a_name_in_any_case_or_its_unique_start_picks_the_device(void**)
{
    assert_int_equal(pick("llvmpipe", machine()), 1);
    assert_int_equal(pick("LLVMPIPE", machine()), 1);
    assert_int_equal(pick("host cpu", machine()), 0);
    assert_int_equal(pick("Host", machine()), 0);
    // Two devices are "NVIDIA H200": the exact name takes the first, as before;
    // a start that two different names share is refused, naming both.
    auto devices = machine();
    devices[3].name = "NVIDIA H100";
    assert_string_equal(refusal("nvidia", devices).c_str(),
                        "--device nvidia starts the name of 2 devices: [2] \"NVIDIA H200\", [3] "
                        "\"NVIDIA H100\"; give its index or more of its name");
    assert_int_equal(pick("nvidia h1", devices), 3);
}

void chosen_device_must_admit_the_format(void**)
{
    auto message = refusal("cpu", machine(), VACCEL_FORMAT_CUDA_PTX);
    assert_contains(message, "device [0] \"Host CPU\" does not admit CUDA PTX programs");
}

void auto_with_no_devices_is_refused(void**)
{
    assert_string_equal(refusal("auto", {}).c_str(),
                        "no device admits TOSA programs; there are no devices");
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(parse_reads_auto_kind_ordinal_and_name),
        cmocka_unit_test(parse_refuses_kind_with_bad_number),
        cmocka_unit_test(kind_comes_from_driver_string),
        cmocka_unit_test(cpu_picks_the_cpu_device),
        cmocka_unit_test(kind_ordinal_counts_devices_of_that_kind),
        cmocka_unit_test(name_picks_the_first_device_with_that_exact_name),
        cmocka_unit_test(auto_prefers_a_gpu_then_the_lowest_index),
        cmocka_unit_test(auto_skips_devices_that_do_not_admit_the_format),
        cmocka_unit_test(kind_ordinal_matching_nothing_lists_the_devices),
        cmocka_unit_test(kind_with_no_device_of_that_kind_says_so),
        cmocka_unit_test(unknown_name_is_refused_with_the_device_list),
        cmocka_unit_test(the_index_devices_prints_picks_that_device),
        cmocka_unit_test(a_name_in_any_case_or_its_unique_start_picks_the_device),
        cmocka_unit_test(chosen_device_must_admit_the_format),
        cmocka_unit_test(auto_with_no_devices_is_refused),
    };
    return cmocka_run_group_tests_name("device_spec", tests, nullptr, nullptr);
}
