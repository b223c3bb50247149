// gemm.cpp - the GEMM (OpenBLAS's cblas_sgemm, or Eigen's product when built
// with VACCEL_CPU_GEMM=EIGEN) and the BLAS thread policy (see gemm.hpp).
#include "gemm.hpp"

#if VACCEL_CPU_GEMM_OPENBLAS
#include <cblas.h>
#else
#include <Eigen/Core>
#endif

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace vaccel::backend::cpu {

namespace {

#if VACCEL_CPU_GEMM_OPENBLAS
void gemm_block(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                bool b_transposed, float* c, int ldc, bool accumulate)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans, m, n, k,
                1.0f, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, c, ldc);
}
#else
void gemm_block(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                bool b_transposed, float* c, int ldc, bool accumulate)
{
    using Stride = Eigen::OuterStride<>;
    using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using ColMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
    Eigen::Map<const RowMajor, 0, Stride> lhs(a, m, k, Stride(lda));
    Eigen::Map<RowMajor, 0, Stride> result(c, m, n, Stride(ldc));
    auto product = [&](const auto& rhs) {
        if (accumulate)
            result.noalias() += lhs * rhs;
        else
            result.noalias() = lhs * rhs;
    };
    // A row-major [n, k] B is, read column-major, its own transpose [k, n].
    if (b_transposed)
        product(Eigen::Map<const ColMajor, 0, Stride>(b, k, n, Stride(ldb)));
    else
        product(Eigen::Map<const RowMajor, 0, Stride>(b, k, n, Stride(ldb)));
}
#endif

}  // namespace

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, bool b_transposed, float* c, std::int64_t ldc,
          bool accumulate)
{
    if (m == 0 || n == 0) return;
    if (k == 0) {  // an empty sum: the BLAS may leave C untouched for k = 0
        if (!accumulate)
            for (std::int64_t row = 0; row < m; ++row) std::fill_n(c + row * ldc, n, 0.0f);
        return;
    }
    // Rows are independent: a tall A is multiplied in blocks of at most
    // INT_MAX rows, each a GEMM of its own.
    for (std::int64_t row = 0; row < m; row += INT_MAX) {
        const std::int64_t rows = std::min<std::int64_t>(m - row, INT_MAX);
        gemm_block(static_cast<int>(rows), static_cast<int>(n), static_cast<int>(k),
                   a + row * lda, static_cast<int>(lda), b, static_cast<int>(ldb), b_transposed,
                   c + row * ldc, static_cast<int>(ldc), accumulate);
    }
}

#if VACCEL_CPU_GEMM_OPENBLAS
// OpenBLAS's own (not in cblas.h): stops the thread pool; the next
// openblas_set_num_threads or threaded call starts it again.
extern "C" int blas_thread_shutdown_(void);
#endif

void size_blas_threads(unsigned workers)
{
#if VACCEL_CPU_GEMM_OPENBLAS
    // Process-wide: several CPU devices (the registry's `count`) share the
    // one OpenBLAS thread pool; the count only grows.
    static std::mutex lock;
    static bool restarted = false;
    static unsigned largest = 0;
    const std::lock_guard held(lock);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const unsigned wanted = std::getenv("OPENBLAS_NUM_THREADS") != nullptr
                                ? static_cast<unsigned>(openblas_get_num_threads())
                                : std::min(std::max(largest, workers), cores);
    if (restarted && wanted == largest) return;
    if (!restarted) {
        // The pool OpenBLAS started when it was loaded has the loading
        // thread's signal mask (usually nothing blocked), so it could take
        // a signal the process blocks everywhere else and reads from a
        // signalfd (vacceld's SIGTERM: the default action would kill the
        // daemon). Restarted here, its threads inherit the mask of the
        // thread opening the first CPU device; no GEMM runs before a CPU
        // device exists, so none is in flight.
        blas_thread_shutdown_();
        restarted = true;
    }
    largest = wanted;
    openblas_set_num_threads(static_cast<int>(wanted));
#else
    (void)workers;  // Eigen's product runs on the calling worker alone
#endif
}

}  // namespace vaccel::backend::cpu
