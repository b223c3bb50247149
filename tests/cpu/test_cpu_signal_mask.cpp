// test_cpu_signal_mask.cpp - every thread the CPU backend brings (its
// workers, the BLAS's pool, the kernels' helpers of parallel.hpp) keeps the signal mask of the thread that opened
// it, so a process that blocks SIGTERM everywhere and reads it from a
// signalfd (vacceld) is never killed by it. OpenBLAS starts its pool when
// it is loaded, before main() can block anything: the backend restarts it
// at the first open (gemm.cpp).
#include <dirent.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cpu_test_support.hpp"

using namespace cpu_test;

namespace {

// Each thread's blocked-signal mask from /proc/self/task/*/status (hex,
// bit n-1 for signal n); `threads` counts them.
bool every_thread_blocks(int signal, int& threads)
{
    threads = 0;
    DIR* tasks = opendir("/proc/self/task");
    if (tasks == nullptr) fail_msg("cannot list /proc/self/task");
    bool all = true;
    while (dirent* entry = readdir(tasks)) {
        if (entry->d_name[0] == '.') continue;
        const std::string path = std::string("/proc/self/task/") + entry->d_name + "/status";
        FILE* status = std::fopen(path.c_str(), "r");
        if (status == nullptr) continue;  // the thread ended meanwhile
        char line[256];
        while (std::fgets(line, sizeof line, status) != nullptr)
            if (std::strncmp(line, "SigBlk:", 7) == 0) {
                const unsigned long long mask = std::strtoull(line + 7, nullptr, 16);
                ++threads;
                if ((mask >> (signal - 1) & 1u) == 0) {
                    std::fprintf(stderr, "thread %s does not block signal %d (SigBlk %llx)\n",
                                 entry->d_name, signal, mask);
                    all = false;
                }
            }
        std::fclose(status);
    }
    closedir(tasks);
    return all;
}

// A MATMUL large enough (M*N*K > 64^3) that the BLAS uses its pool.
void run_large_matmul(Rig& rig)
{
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", {1, 256, 256});
    const auto b = f32(g, "b", {1, 256, 256});
    const auto out = f32(g, "out", {1, 256, 256});
    g.op(Op::matmul, {a, b, zero_point(g, "a_zp"), zero_point(g, "b_zp")}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    auto program = rig.must_load(g.finish());
    // All ones: every output is exactly 256.
    const std::vector<float> ones(256 * 256, 1.0f);
    assert_exactly(rig.run(*program, {ones, ones})[0], std::vector<float>(256 * 256, 256.0f));
    rig.finish(program);
}

void backend_threads_keep_the_openers_signal_mask(void**)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &set, nullptr), 0);
    {
        Rig rig(2);
        run_large_matmul(rig);
        int threads = 0;
        assert_true(every_thread_blocks(SIGTERM, threads));
        assert_true(threads >= 3);  // this thread and the two workers at least
    }
    assert_int_equal(pthread_sigmask(SIG_UNBLOCK, &set, nullptr), 0);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(backend_threads_keep_the_openers_signal_mask),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
