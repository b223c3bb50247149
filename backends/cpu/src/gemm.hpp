// gemm.hpp - the single-precision GEMM under MATMUL and CONV2D.
//
// Owns nothing: a thin layer over OpenBLAS's cblas_sgemm (Debian's
// libopenblas-dev, pthread variant) or, when built with
// VACCEL_CPU_GEMM=EIGEN (the default of VACCEL_STATIC trees), Eigen's
// single-threaded product; either chooses its own blocking, kernels and
// summation order. Decides the BLAS thread policy of the process
// (docs/adr/0015-openblas-gemm.md): one GEMM may use as many threads as the
// largest CPU device's worker count, never more than the host's cores.
#pragma once

#include <cstdint>

namespace vaccel::backend::cpu {

// C[m, n] = A[m, k] x op(B) (+ C when accumulate), all row-major with leading
// dimensions lda, ldb, ldc; op(B) is B [k, n] or, when b_transposed, the
// transpose of B [n, k]. n, k and the leading dimensions must fit the BLAS's
// 32-bit int (every TOSA dimension does; plan.cpp refuses a CONV2D whose
// KH*KW*C would not); m may be larger (split into row blocks here).
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, bool b_transposed, float* c, std::int64_t ldc,
          bool accumulate);

// The largest n and k (and leading dimension) gemm() accepts.
inline constexpr std::int64_t gemm_max_dimension = INT32_MAX;

// Called when a CPU device opens with `workers` worker threads: raises the
// process-wide BLAS thread count to min(largest workers seen, cores) unless
// OPENBLAS_NUM_THREADS is set in the environment, which then decides. The
// first call restarts OpenBLAS's pool so that its threads carry the calling
// thread's signal mask (gemm.cpp). Does nothing with Eigen.
void size_blas_threads(unsigned workers);

}  // namespace vaccel::backend::cpu
