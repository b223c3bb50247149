// blas_core.cpp - the OpenBLAS kernels from the CPU's features (blas_core.hpp).
#include "blas_core.hpp"

namespace vaccel::backend::cpu {

CpuFeatures host_cpu_features()
{
    CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    f.intel = __builtin_cpu_is("intel");
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx512dq = __builtin_cpu_supports("avx512dq");
    f.avx512cd = __builtin_cpu_supports("avx512cd");
    f.avx512bw = __builtin_cpu_supports("avx512bw");
    f.avx512vl = __builtin_cpu_supports("avx512vl");
    f.avx512bf16 = __builtin_cpu_supports("avx512bf16");
#endif
    return f;
}

std::optional<std::string_view> openblas_core_for(const CpuFeatures& f)
{
    if (!f.intel) return std::nullopt;
    if (f.avx512f && f.avx512dq && f.avx512cd && f.avx512bw && f.avx512vl)
        return f.avx512bf16 ? std::string_view("Cooperlake") : std::string_view("SkylakeX");
    if (f.avx2 && f.fma) return std::string_view("Haswell");
    return std::nullopt;
}

}  // namespace vaccel::backend::cpu
