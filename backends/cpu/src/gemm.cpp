// gemm.cpp - cblas_sgemm and the BLAS thread policy (see gemm.hpp).
#include "gemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace vaccel::backend::cpu {

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
        cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans,
                    static_cast<int>(rows), static_cast<int>(n), static_cast<int>(k), 1.0f,
                    a + row * lda, static_cast<int>(lda), b, static_cast<int>(ldb),
                    accumulate ? 1.0f : 0.0f, c + row * ldc, static_cast<int>(ldc));
    }
}

void size_blas_threads(unsigned workers)
{
    if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr) return;
    // Process-wide: several CPU devices (the registry's `count`) share the
    // one OpenBLAS thread pool; the count only grows.
    static std::mutex lock;
    static unsigned largest = 0;
    const std::lock_guard held(lock);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const unsigned wanted = std::min(std::max(largest, workers), cores);
    if (wanted == largest) return;
    largest = wanted;
    openblas_set_num_threads(static_cast<int>(wanted));
}

}  // namespace vaccel::backend::cpu
