// gemm.cpp - the GEMM (OpenBLAS's cblas_sgemm, or Eigen's product when built
// with VACCEL_CPU_GEMM=EIGEN) and the BLAS thread policy (see gemm.hpp).
#include "gemm.hpp"

#if VACCEL_CPU_GEMM_OPENBLAS
#include <cblas.h>
#include <dlfcn.h>
#endif
#include <Eigen/Core>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "blas_core.hpp"

namespace vaccel::backend::cpu {

namespace {

// Eigen's product: the GEMM of EIGEN builds, and of OPENBLAS builds on a
// host where no OpenBLAS could be loaded.
void eigen_block(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
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

#if VACCEL_CPU_GEMM_OPENBLAS
// OpenBLAS's entry points, loaded once (blas_core.hpp says why it is not
// linked): the library stays loaded for the process's life.
struct OpenBlas {
    decltype(&cblas_sgemm) sgemm = nullptr;
    void (*set_threads)(int) = nullptr;
    int (*get_threads)() = nullptr;
    // OpenBLAS's own (not in cblas.h): stops the thread pool; the next
    // openblas_set_num_threads or threaded call starts it again.
    int (*shutdown)() = nullptr;
    char* (*corename)() = nullptr;
};

const OpenBlas* load_openblas()
{
    static OpenBlas blas;
    static const OpenBlas* loaded = nullptr;
    static std::once_flag once;
    std::call_once(once, [] {
        constexpr const char* soname = "libopenblas.so.0";
        // Already in the process (another library loaded it): its kernels
        // are chosen; use it as it is.
        void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (handle == nullptr) {
            // OPENBLAS_CORETYPE is read by OpenBLAS's constructor: set for
            // the dlopen only, then the environment is as it was.
            const bool chosen_here = std::getenv("OPENBLAS_CORETYPE") == nullptr;
            const auto core = openblas_core_for(host_cpu_features());
            if (chosen_here && core) setenv("OPENBLAS_CORETYPE", std::string(*core).c_str(), 0);
            handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
            if (chosen_here && core) unsetenv("OPENBLAS_CORETYPE");
        }
        if (handle == nullptr) {
            std::fprintf(stderr,
                         "vaccel: the CPU device cannot load %s (%s); MATMUL and CONV2D run "
                         "on Eigen's single-threaded GEMM instead; install libopenblas0-pthread\n",
                         soname, dlerror());
            return;
        }
        blas.sgemm = reinterpret_cast<decltype(blas.sgemm)>(dlsym(handle, "cblas_sgemm"));
        blas.set_threads =
            reinterpret_cast<decltype(blas.set_threads)>(dlsym(handle, "openblas_set_num_threads"));
        blas.get_threads =
            reinterpret_cast<decltype(blas.get_threads)>(dlsym(handle, "openblas_get_num_threads"));
        blas.shutdown =
            reinterpret_cast<decltype(blas.shutdown)>(dlsym(handle, "blas_thread_shutdown_"));
        blas.corename =
            reinterpret_cast<decltype(blas.corename)>(dlsym(handle, "openblas_get_corename"));
        if (blas.sgemm == nullptr || blas.set_threads == nullptr || blas.get_threads == nullptr ||
            blas.shutdown == nullptr || blas.corename == nullptr) {
            std::fprintf(stderr,
                         "vaccel: %s lacks an entry point the CPU device needs (cblas_sgemm, "
                         "openblas_set_num_threads, openblas_get_num_threads, "
                         "blas_thread_shutdown_, openblas_get_corename); MATMUL and CONV2D run "
                         "on Eigen's single-threaded GEMM instead\n",
                         soname);
            return;
        }
        loaded = &blas;
    });
    return loaded;
}
#endif

void gemm_block(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                bool b_transposed, float* c, int ldc, bool accumulate)
{
#if VACCEL_CPU_GEMM_OPENBLAS
    if (const OpenBlas* blas = load_openblas()) {
        blas->sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans, m, n,
                    k, 1.0f, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, c, ldc);
        return;
    }
#endif
    eigen_block(m, n, k, a, lda, b, ldb, b_transposed, c, ldc, accumulate);
}

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

void size_blas_threads(unsigned workers)
{
#if VACCEL_CPU_GEMM_OPENBLAS
    const OpenBlas* blas = load_openblas();
    if (blas == nullptr) return;  // Eigen's product runs on the calling worker alone
    // Process-wide: several CPU devices (the registry's `count`) share the
    // one OpenBLAS thread pool; the count only grows.
    static std::mutex lock;
    static bool restarted = false;
    static unsigned largest = 0;
    const std::lock_guard held(lock);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const unsigned wanted = std::getenv("OPENBLAS_NUM_THREADS") != nullptr
                                ? static_cast<unsigned>(blas->get_threads())
                                : std::min(std::max(largest, workers), cores);
    if (restarted && wanted == largest) return;
    if (!restarted) {
        // The pool OpenBLAS started when it was loaded has the loading
        // thread's signal mask (a GEMM's, or another library's that loaded
        // it first), so it could take a signal the process blocks
        // everywhere else and reads from a signalfd (vacceld's SIGTERM: the
        // default action would kill the daemon). Restarted here, its
        // threads inherit the mask of the thread opening the first CPU
        // device; no GEMM of ours runs before a CPU device exists, so none
        // is in flight.
        blas->shutdown();
        restarted = true;
    }
    largest = wanted;
    blas->set_threads(static_cast<int>(wanted));
#else
    (void)workers;  // Eigen's product runs on the calling worker alone
#endif
}

std::string_view blas_core_name()
{
#if VACCEL_CPU_GEMM_OPENBLAS
    if (const OpenBlas* blas = load_openblas()) return blas->corename();
#endif
    return "Eigen";
}

}  // namespace vaccel::backend::cpu
