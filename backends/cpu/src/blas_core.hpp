// blas_core.hpp - which OpenBLAS kernels the CPU backend asks for.
//
// Debian 12's OpenBLAS (0.3.21) picks its kernels by CPU model, and for an
// Intel model newer than it knows (Sapphire and Emerald Rapids among them)
// it falls back to "Prescott", its SSE3 kernels: on a 16-core Xeon with
// AVX-512 that ran ResNet-50 at batch 1 in 81 ms against 50 ms with its
// SkylakeX kernels (docs/PERFORMANCE.md). OpenBLAS reads OPENBLAS_CORETYPE
// once, when it is loaded, so gemm.cpp loads it itself (dlopen) at the
// first GEMM or CPU device, with OPENBLAS_CORETYPE set from the CPU's own
// features when the environment does not set it (docs/adr/0015-openblas-gemm.md).
// Decides, for Intel CPUs only (OpenBLAS's choices for the models it knows
// are these same ones; other vendors keep its own detection):
//  - AVX-512 F, DQ, CD, BW and VL with BF16: "Cooperlake";
//  - the same without BF16: "SkylakeX";
//  - else AVX2 and FMA: "Haswell";
//  - else nothing (OpenBLAS's own choice).
#pragma once

#include <optional>
#include <string_view>

namespace vaccel::backend::cpu {

struct CpuFeatures {
    bool intel = false;
    bool avx2 = false, fma = false;
    bool avx512f = false, avx512dq = false, avx512cd = false, avx512bw = false,
         avx512vl = false, avx512bf16 = false;
};

// This host's, from CPUID.
CpuFeatures host_cpu_features();

// The OPENBLAS_CORETYPE for a CPU with `features`, or nullopt to leave the
// choice to OpenBLAS.
std::optional<std::string_view> openblas_core_for(const CpuFeatures& features);

// The kernels the loaded OpenBLAS runs ("SkylakeX", ...), or "Eigen" when
// the GEMM is Eigen's (an EIGEN build, or no OpenBLAS could be loaded).
// Loads OpenBLAS if nothing has yet.
std::string_view blas_core_name();

}  // namespace vaccel::backend::cpu
