// test_cpu_parallel.cpp - the CPU kernels' threads (backends/cpu/src/
// parallel.hpp): parallel_for covers its range once, in chunks of at least
// the grain, with helper threads taking part; nested and concurrent calls run
// inline instead of waiting; and every kernel split over the threads writes
// the same bytes as the same kernel on one thread (SerialScope), on tensors
// large enough to be split, with NaNs, signed zeros and every broadcast form.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "kernels.hpp"
#include "kernels_spatial.hpp"
#include "parallel.hpp"

#include "cmocka.hpp"

using namespace vaccel::backend::cpu;

namespace {

constexpr unsigned wanted_threads = 4;

unsigned expected_threads()
{
    return std::min(wanted_threads, std::max(1u, std::thread::hardware_concurrency()));
}

// Deterministic values in [-4, 4), with NaNs, +0 and -0 sprinkled in.
std::vector<float> values(std::size_t count, std::uint64_t seed, bool specials = true)
{
    std::vector<float> v(count);
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (std::size_t i = 0; i < count; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v[i] = static_cast<float>(static_cast<std::int64_t>(x % 8000) - 4000) / 1000.0f;
        if (specials && i % 997 == 5) v[i] = std::numeric_limits<float>::quiet_NaN();
        if (specials && i % 1009 == 7) v[i] = -0.0f;
        if (specials && i % 1013 == 9) v[i] = 0.0f;
    }
    return v;
}

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// kernel(out) once split over the threads and once on this thread alone.
template <class Kernel>
void check_split_matches_serial(std::size_t out_count, Kernel kernel, const char* what)
{
    std::vector<float> split(out_count, 1234.5f), serial(out_count, -1234.5f);
    kernel(split.data());
    {
        const SerialScope alone;
        kernel(serial.data());
    }
    if (!same_bytes(split, serial)) {
        std::size_t i = 0;
        while (std::memcmp(&split[i], &serial[i], sizeof(float)) == 0) ++i;
        print_error("%s: element %zu is %a split, %a serial\n", what, i,
                    static_cast<double>(split[i]), static_cast<double>(serial[i]));
        cmocka_fail();
    }
}

void covers_its_range_once_on_several_threads(void**)
{
    assert_int_equal(parallel_threads(), expected_threads());
    constexpr std::uint64_t count = 1'000'003, grain = 1000;
    std::vector<std::atomic<int>> hits(count);
    std::mutex lock;
    std::set<std::thread::id> threads;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> chunks;
    std::atomic<bool> someone_else{false};
    const auto caller = std::this_thread::get_id();
    parallel_for(count, grain, [&](std::uint64_t begin, std::uint64_t end) {
        {
            const std::lock_guard held(lock);
            threads.insert(std::this_thread::get_id());
            chunks.emplace_back(begin, end);
        }
        if (std::this_thread::get_id() != caller) someone_else = true;
        // The caller's first chunk holds on (up to 10 s) until a helper has
        // taken one, so that a helper is seen to run whatever the timing.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (expected_threads() > 1 && !someone_else && std::this_thread::get_id() == caller &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::yield();
        for (std::uint64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
    });
    for (std::uint64_t i = 0; i < count; ++i)
        if (hits[i] != 1) fail_msg("element %llu ran %d times", (unsigned long long)i, hits[i].load());
    for (const auto& [begin, end] : chunks)
        if (end != count) assert_true(end - begin >= grain);
    // A helper ran some of it (on a loaded host it may even run all of it
    // before the caller gets a chunk); on one core the caller ran it all.
    if (expected_threads() > 1) {
        assert_true(someone_else.load());
    } else {
        assert_int_equal(threads.size(), 1);
        assert_true(*threads.begin() == caller);
    }
}

void short_nested_and_concurrent_calls_run_inline(void**)
{
    const auto caller = std::this_thread::get_id();
    // Under two grains: the caller alone.
    int calls = 0;
    parallel_for(1999, 1000, [&](std::uint64_t begin, std::uint64_t end) {
        assert_true(std::this_thread::get_id() == caller);
        assert_int_equal(begin, 0);
        assert_int_equal(end, 1999);
        ++calls;
    });
    assert_int_equal(calls, 1);
    // A body's own parallel_for runs on the thread of that body, whole.
    std::atomic<std::uint64_t> inner_total{0};
    parallel_for(64, 1, [&](std::uint64_t begin, std::uint64_t end) {
        for (std::uint64_t i = begin; i < end; ++i) {
            const auto here = std::this_thread::get_id();
            std::uint64_t sum = 0;
            parallel_for(100'000, 10, [&](std::uint64_t b, std::uint64_t e) {
                assert_true(std::this_thread::get_id() == here);
                for (std::uint64_t j = b; j < e; ++j) sum += j;
            });
            assert_int_equal(sum, 100'000ull * 99'999 / 2);
            inner_total += sum;
        }
    });
    assert_int_equal(inner_total.load(), 64ull * (100'000ull * 99'999 / 2));
    // Two workers at once: one has the helpers, the other runs inline; both
    // cover their ranges.
    std::array<std::vector<std::uint8_t>, 4> seen;
    std::vector<std::thread> workers;
    for (std::size_t w = 0; w < seen.size(); ++w)
        workers.emplace_back([&, w] {
            seen[w].assign(300'000, 0);
            for (int round = 0; round < 20; ++round)
                parallel_for(seen[w].size(), 1000, [&](std::uint64_t b, std::uint64_t e) {
                    for (std::uint64_t i = b; i < e; ++i) ++seen[w][i];
                });
        });
    for (auto& t : workers) t.join();
    for (const auto& s : seen)
        assert_true(std::all_of(s.begin(), s.end(), [](std::uint8_t v) { return v == 20; }));
}

void elementwise_kernels_split_as_they_run_alone(void**)
{
    // [4, 96, 384]: 147456 elements, several chunks of elementwise_grain.
    const std::vector<std::int64_t> full{4, 96, 384};
    const std::size_t n = 4 * 96 * 384;
    const auto a = values(n, 1), b = values(n, 2);
    const auto row = values(384, 3), column = values(4 * 96, 4), middle = values(4 * 384, 5);
    const auto scalar = values(1, 6, false);
    const std::vector<std::int64_t> row_shape{1, 1, 384}, column_shape{4, 96, 1},
        middle_shape{4, 1, 384}, scalar_shape{1, 1, 1};
    struct Form {
        const char* name;
        const std::vector<float>* other;
        const std::vector<std::int64_t>* shape;
    };
    const Form forms[] = {{"same", &b, &full},
                          {"row", &row, &row_shape},
                          {"column", &column, &column_shape},
                          {"middle", &middle, &middle_shape},
                          {"scalar", &scalar, &scalar_shape}};
    const Binary ops[] = {Binary::add, Binary::sub, Binary::mul, Binary::maximum, Binary::minimum,
                          Binary::pow};
    for (const Form& form : forms)
        for (Binary op : ops)
            for (bool propagate : {true, false}) {
                // b op a as well as a op b: the broadcast operand first.
                check_split_matches_serial(n, [&](float* out) {
                    binary(op, a.data(), full, form.other->data(), *form.shape, out, full, propagate);
                }, form.name);
                check_split_matches_serial(n, [&](float* out) {
                    binary(op, form.other->data(), *form.shape, a.data(), full, out, full, propagate);
                }, form.name);
            }
    for (bool propagate : {true, false})
        check_split_matches_serial(n, [&](float* out) { clamp(a.data(), out, n, -1.5f, 0.0f, propagate); },
                                   "clamp");
    for (int op = 0; op <= static_cast<int>(Unary::erf); ++op)
        check_split_matches_serial(n, [&](float* out) { unary(static_cast<Unary>(op), a.data(), out, n); },
                                   "unary");
    // CLAMP's NaN modes and signed zeros, value by value.
    const float in[] = {std::numeric_limits<float>::quiet_NaN(), -0.0f, 0.0f, -7.0f, 7.0f, 0.25f};
    float out[6];
    clamp(in, out, 6, -1.0f, 1.0f, true);
    assert_true(std::isnan(out[0]));
    assert_true(std::signbit(out[1]) && out[1] == 0.0f);
    assert_true(!std::signbit(out[2]) && out[2] == 0.0f);
    assert_true(out[3] == -1.0f && out[4] == 1.0f && out[5] == 0.25f);
    clamp(in, out, 6, -1.0f, 1.0f, false);
    assert_true(out[0] == -1.0f);
}

void reductions_and_layouts_split_as_they_run_alone(void**)
{
    const std::vector<std::int64_t> shape{6, 130, 257};
    const std::size_t n = 6 * 130 * 257;
    const auto x = values(n, 7), clean = values(n, 8, false);
    for (std::int32_t axis = 0; axis < 3; ++axis) {
        const std::size_t out_count = n / static_cast<std::size_t>(shape[static_cast<std::size_t>(axis)]);
        for (Reduce op : {Reduce::sum, Reduce::max, Reduce::min, Reduce::product})
            for (bool propagate : {true, false})
                check_split_matches_serial(out_count, [&](float* out) {
                    reduce(op, (op == Reduce::sum || op == Reduce::product) ? clean.data() : x.data(),
                           shape, axis, out, propagate);
                }, "reduce");
    }
    // A sum in index order, checked against the same order written here.
    std::vector<float> sums(6 * 257);
    reduce_sum(clean.data(), shape, 1, sums.data());
    for (std::size_t o = 0; o < 6; ++o)
        for (std::size_t i = 0; i < 257; ++i) {
            float want = 0.0f;
            for (std::size_t k = 0; k < 130; ++k) want += clean[(o * 130 + k) * 257 + i];
            assert_memory_equal(&want, &sums[o * 257 + i], sizeof want);
        }
    const std::array<std::int32_t, 3> perms[] = {{0, 2, 1}, {2, 0, 1}, {1, 0, 2}, {2, 1, 0}};
    for (const auto& p : perms)
        check_split_matches_serial(n, [&](float* out) {
            transpose(reinterpret_cast<const std::byte*>(x.data()), shape, p,
                      reinterpret_cast<std::byte*>(out), sizeof(float));
        }, "transpose");
    // TRANSPOSE [0, 2, 1] element by element.
    std::vector<float> t(n);
    transpose(reinterpret_cast<const std::byte*>(clean.data()), shape,
              std::array<std::int32_t, 3>{0, 2, 1}, reinterpret_cast<std::byte*>(t.data()),
              sizeof(float));
    for (std::size_t b = 0; b < 6; ++b)
        for (std::size_t i = 0; i < 130; ++i)
            for (std::size_t j = 0; j < 257; ++j)
                assert_memory_equal(&t[(b * 257 + j) * 130 + i], &clean[(b * 130 + i) * 257 + j],
                                    sizeof(float));
    const std::vector<std::int64_t> start{1, 3, 5}, sliced{4, 120, 250};
    check_split_matches_serial(4 * 120 * 250, [&](float* out) {
        slice(reinterpret_cast<const std::byte*>(x.data()), shape, start,
              reinterpret_cast<std::byte*>(out), sliced, sizeof(float));
    }, "slice");
}

void convolutions_and_pools_split_as_they_run_alone(void**)
{
    Conv2dGeometry g;
    g.n = 2, g.ih = 40, g.iw = 36, g.ic = 24, g.oc = 40, g.kh = 3, g.kw = 3;
    g.pad_top = 1, g.pad_left = 1, g.stride_y = 2, g.stride_x = 1;
    g.oh = 20, g.ow = 36;
    const auto in = values(static_cast<std::size_t>(g.n * g.ih * g.iw * g.ic), 9, false);
    const auto weight = values(static_cast<std::size_t>(g.oc * g.kh * g.kw * g.ic), 10, false);
    const auto bias = values(static_cast<std::size_t>(g.oc), 11, false);
    const auto out_count = static_cast<std::size_t>(g.n * g.oh * g.ow * g.oc);
    // The GEMM is OpenBLAS's either way; the split is the gather's and the bias's.
    check_split_matches_serial(out_count, [&](float* out) {
        conv2d(in.data(), weight.data(), bias.data(), out, g);
    }, "conv2d");
    Conv2dGeometry d = g;
    d.oc = d.ic;
    const auto taps = values(static_cast<std::size_t>(d.kh * d.kw * d.ic), 12, false);
    check_split_matches_serial(static_cast<std::size_t>(d.n * d.oh * d.ow * d.oc), [&](float* out) {
        depthwise_conv2d(in.data(), taps.data(), bias.data(), out, d);
    }, "depthwise_conv2d");
    Conv2dGeometry m = d;  // channel multiplier 2
    m.oc = 2 * m.ic;
    const auto taps2 = values(static_cast<std::size_t>(m.kh * m.kw * m.oc), 13, false);
    const auto bias2 = values(static_cast<std::size_t>(m.oc), 14, false);
    check_split_matches_serial(static_cast<std::size_t>(m.n * m.oh * m.ow * m.oc), [&](float* out) {
        depthwise_conv2d(in.data(), taps2.data(), bias2.data(), out, m);
    }, "depthwise_conv2d x2");
    Pool2dGeometry p;
    p.n = 2, p.ih = 40, p.iw = 36, p.c = 24, p.kernel_y = 3, p.kernel_x = 3;
    p.stride_y = 2, p.stride_x = 2, p.pad_top = 1, p.pad_left = 1, p.oh = 20, p.ow = 18;
    const auto special = values(static_cast<std::size_t>(p.n * p.ih * p.iw * p.c), 15);
    for (bool propagate : {true, false})
        check_split_matches_serial(static_cast<std::size_t>(p.n * p.oh * p.ow * p.c), [&](float* out) {
            max_pool2d(special.data(), out, p, propagate);
        }, "max_pool2d");
    check_split_matches_serial(static_cast<std::size_t>(p.n * p.oh * p.ow * p.c), [&](float* out) {
        avg_pool2d(in.data(), out, p);
    }, "avg_pool2d");
}

}  // namespace

int main()
{
    // As a CPU device of 4 workers would: min(4, cores) threads.
    size_parallel_threads(wanted_threads);
    const CMUnitTest tests[] = {
        cmocka_unit_test(covers_its_range_once_on_several_threads),
        cmocka_unit_test(short_nested_and_concurrent_calls_run_inline),
        cmocka_unit_test(elementwise_kernels_split_as_they_run_alone),
        cmocka_unit_test(reductions_and_layouts_split_as_they_run_alone),
        cmocka_unit_test(convolutions_and_pools_split_as_they_run_alone),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
