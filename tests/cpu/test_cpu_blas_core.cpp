// test_cpu_blas_core.cpp - the OpenBLAS kernels the CPU backend asks for
// (backends/cpu/src/blas_core.hpp): the choice from CPU features, and the
// library as this build loads it on this host.
#include <cstdlib>
#include <string>

#include "blas_core.hpp"
#include "gemm.hpp"

#include "cmocka.hpp"

using namespace vaccel::backend::cpu;

namespace {

CpuFeatures avx512(bool bf16)
{
    CpuFeatures f;
    f.intel = true;
    f.avx2 = f.fma = true;
    f.avx512f = f.avx512dq = f.avx512cd = f.avx512bw = f.avx512vl = true;
    f.avx512bf16 = bf16;
    return f;
}

void cores_follow_the_intel_features(void**)
{
    // The H200 machine's Xeon (family 6, model 207: unknown to OpenBLAS
    // 0.3.21, which fell back to Prescott) has every AVX-512 subset and BF16.
    assert_true(openblas_core_for(avx512(true)) == std::optional<std::string_view>("Cooperlake"));
    assert_true(openblas_core_for(avx512(false)) == std::optional<std::string_view>("SkylakeX"));
    CpuFeatures partial = avx512(false);
    partial.avx512vl = false;  // not the whole AVX-512 set SkylakeX's kernels use
    assert_true(openblas_core_for(partial) == std::optional<std::string_view>("Haswell"));
    CpuFeatures avx2;
    avx2.intel = true;
    avx2.avx2 = avx2.fma = true;
    assert_true(openblas_core_for(avx2) == std::optional<std::string_view>("Haswell"));
    avx2.fma = false;
    assert_false(openblas_core_for(avx2).has_value());
    CpuFeatures amd = avx512(true);
    amd.intel = false;  // other vendors keep OpenBLAS's own detection
    assert_false(openblas_core_for(amd).has_value());
}

void this_build_loads_openblas_with_the_chosen_kernels(void**)
{
    const std::string core(blas_core_name());
    const auto wanted = openblas_core_for(host_cpu_features());
    print_message("OpenBLAS kernels on this host: %s (chosen from its features: %s)\n",
                  core.c_str(), wanted ? std::string(*wanted).c_str() : "OpenBLAS's own");
#if VACCEL_CPU_GEMM_OPENBLAS
    assert_string_not_equal(core.c_str(), "Eigen");
    if (std::getenv("OPENBLAS_CORETYPE") == nullptr && wanted)
        assert_string_equal(core.c_str(), std::string(*wanted).c_str());
    // The environment is left as it was.
    assert_null(std::getenv("OPENBLAS_CORETYPE"));
#else
    assert_string_equal(core.c_str(), "Eigen");
#endif
    // And it multiplies: [2x3] x [3x2], exact in floats.
    const float a[] = {1, 2, 3, 4, 5, 6}, b[] = {7, 8, 9, 10, 11, 12};
    float c[4] = {};
    gemm(2, 2, 3, a, 3, b, 2, false, c, 2, false);
    const float want[] = {58, 64, 139, 154};
    assert_memory_equal(c, want, sizeof want);
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(cores_follow_the_intel_features),
        cmocka_unit_test(this_build_loads_openblas_with_the_chosen_kernels),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
