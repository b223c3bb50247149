// test_profile.cpp - VACCEL_CUDA_PROFILE's report and the backend's on/off
// environment variables (backends/cuda/src/profile.hpp, env_switch.hpp).
// Pure: the report is built from sums a run would have added; no GPU.
#include <cstdlib>
#include <string>
#include <vector>

#include "cmocka.hpp"
#include "env_switch.hpp"
#include "objects.hpp"
#include "profile.hpp"

namespace {

using namespace vaccel;
using backend::cuda::PlannedLaunch;
using backend::cuda::ProgramProfile;

PlannedLaunch launch(std::uint32_t op_index, tosa::Op op, const char* function, std::uint32_t grid)
{
    PlannedLaunch l;
    l.grid = grid;
    l.block = 256;
    l.op_index = op_index;
    l.op = op;
    l.function_name = function;
    return l;
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// Three kernels over two runs: means per run, the slowest first, shares of
// the run's kernel time, then the time per operator name.
void the_report_lists_the_slowest_kernels_and_operators(void**)
{
    const std::vector<PlannedLaunch> launches{
        launch(3, tosa::Op::conv2d, "vaccel_conv2d_gemm_f32_t64_s8", 64),
        launch(4, tosa::Op::clamp, "vaccel_elementwise", 392),
        launch(7, tosa::Op::conv2d, "vaccel_conv2d_gemm_f32_t64", 196),
    };
    ProgramProfile profile;
    profile.total_ms = {0.120, 0.020, 0.060};  // ms over 2 runs: 60, 10 and 30 us a run
    profile.runs = 2;
    const std::string report = backend::cuda::profile_report(profile, launches);
    assert_true(contains(report, "vaccel CUDA profile: 2 run(s), 3 kernels a run, 100.0 us of "
                                 "kernel time a run\n"));
    const auto first = report.find("vaccel_conv2d_gemm_f32_t64_s8");
    const auto second = report.find("vaccel_conv2d_gemm_f32_t64 ");
    const auto third = report.find("vaccel_elementwise");
    assert_true(first != std::string::npos && second != std::string::npos &&
                third != std::string::npos);
    assert_true(first < second && second < third);
    assert_true(contains(report, "    60.0  60.0%      3  CONV2D"));
    assert_true(contains(report, "    10.0  10.0%      4  CLAMP"));
    assert_true(contains(report, "  by operator:\n"));
    assert_true(contains(report, "    90.0  90.0%  CONV2D             x2\n"));
    assert_true(contains(report, "    10.0  10.0%  CLAMP              x1\n"));
    assert_true(report.find("x2\n") < report.find("x1\n"));
    // Nothing ran, or sums that are not the launches': no report.
    profile.runs = 0;
    assert_true(backend::cuda::profile_report(profile, launches).empty());
    profile.runs = 1;
    profile.total_ms.pop_back();
    assert_true(backend::cuda::profile_report(profile, launches).empty());
}

// 1 on, 0 off, unset or empty the default; anything else refused by name.
void switches_read_1_0_or_the_default(void**)
{
    const char* name = "VACCEL_TEST_SWITCH";
    unsetenv(name);
    assert_true(*backend::cuda::env_switch(name, true, "on", "off"));
    assert_false(*backend::cuda::env_switch(name, false, "on", "off"));
    setenv(name, "", 1);
    assert_true(*backend::cuda::env_switch(name, true, "on", "off"));
    setenv(name, "0", 1);
    assert_false(*backend::cuda::env_switch(name, true, "on", "off"));
    setenv(name, "1", 1);
    assert_true(*backend::cuda::env_switch(name, false, "on", "off"));
    setenv(name, "yes", 1);
    auto refused = backend::cuda::env_switch(name, false, "time it", "do not");
    assert_false(refused.has_value());
    assert_int_equal(static_cast<int>(refused.error().code), static_cast<int>(Errc::invalid_argument));
    assert_int_equal(refused.error().detail, VACCEL_D_BAD_VALUE);
    assert_string_equal(refused.error().note.c_str(),
                        "VACCEL_TEST_SWITCH=\"yes\" is neither 1 (time it) nor 0 (do not, the "
                        "default)");
    unsetenv(name);
    // The profile's own switch refuses the same way, naming itself.
    setenv("VACCEL_CUDA_PROFILE", "2", 1);
    auto profiled = backend::cuda::profile_enabled();
    assert_false(profiled.has_value());
    assert_true(contains(profiled.error().note, "VACCEL_CUDA_PROFILE=\"2\" is neither 1"));
    unsetenv("VACCEL_CUDA_PROFILE");
    assert_false(*backend::cuda::profile_enabled());
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_report_lists_the_slowest_kernels_and_operators),
        cmocka_unit_test(switches_read_1_0_or_the_default),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
