// matmul_test_support.hpp - MATMUL graphs and their checks against the CPU
// backend and a float64 reference, shared by the GPU backends' MATMUL tests
// (tests/vulkan/test_matmul.cpp, tests/cuda/test_programs.cpp).
//
// References: FP32 results are checked against a float64 dot product of the
// same float32 inputs on the host, within the bound docs/operators.md gives
// MATMUL ("dot bound": |got - exact| <= gamma(C) * sum |a_k * b_k|, gamma(n)
// = n u / (1 - n u), u = 2^-24), and against the CPU backend within twice
// that bound. FP16 inputs are multiples of 1/8 in [-2, 2]: every product is
// a multiple of 1/64 and every partial sum of at most 300 of them is below
// 2^11 in magnitude, so FP32 holds the exact result and FP16 x FP16 -> FP32
// must be exact; with C = 7 the result is below 32 in magnitude, which FP16
// also holds exactly, so FP16 x FP16 -> FP16 must be exact too.
#pragma once

#include <cmath>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "cpu_test_support.hpp"

namespace cpu_test {

inline std::uint32_t zero_of(tosa::GraphBuilder& g, const char* name, DType dtype)
{
    const std::uint32_t t =
        g.tensor(name, {1}, dtype, std::vector<std::uint8_t>(tosa::dtype_bytes(dtype), 0));
    g.op(Op::const_, {}, {t});
    return t;
}

inline tosa::Graph matmul_graph(DType in, DType out, std::int64_t n, std::int64_t h, std::int64_t c,
                         std::int64_t w)
{
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", {n, h, c}, in);
    const auto b = g.tensor("b", {n, c, w}, in);
    const auto o = g.tensor("out", {n, h, w}, out);
    g.op(Op::matmul, {a, b, zero_of(g, "a_zp", in), zero_of(g, "b_zp", in)}, {o});
    g.input(a);
    g.input(b);
    g.output(o);
    return g.finish();
}

// The same product with A and B negated first, so MATMUL reads both from
// arena intermediates at nonzero bases: (-a)(-b) = ab term by term, exactly.
inline tosa::Graph matmul_of_arena_operands(std::int64_t n, std::int64_t h, std::int64_t c,
                                     std::int64_t w)
{
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", {n, h, c}, DType::fp32);
    const auto b = g.tensor("b", {n, c, w}, DType::fp32);
    const auto na = g.tensor("neg_a", {n, h, c}, DType::fp32);
    const auto nb = g.tensor("neg_b", {n, c, w}, DType::fp32);
    const auto o = g.tensor("out", {n, h, w}, DType::fp32);
    g.op(Op::negate, {a, zero_of(g, "a_in_zp", DType::fp32), zero_of(g, "a_out_zp", DType::fp32)},
         {na});
    g.op(Op::negate, {b, zero_of(g, "b_in_zp", DType::fp32), zero_of(g, "b_out_zp", DType::fp32)},
         {nb});
    g.op(Op::matmul, {na, nb, zero_of(g, "a_zp", DType::fp32), zero_of(g, "b_zp", DType::fp32)},
         {o});
    g.input(a);
    g.input(b);
    g.output(o);
    return g.finish();
}

inline TensorBytes raw(const void* data, std::size_t bytes)
{
    const auto* p = static_cast<const std::byte*>(data);
    return TensorBytes(p, p + bytes);
}

// A Rig on the device under test.
using DeviceRig = std::function<Rig()>;

// Runs the graph on the CPU and on the device with the same inputs.
inline std::pair<TensorBytes, TensorBytes> cpu_and_device(const DeviceRig& device, const tosa::Graph& graph,
                                              const std::vector<TensorBytes>& inputs)
{
    std::vector<std::span<const std::byte>> spans(inputs.begin(), inputs.end());
    Rig cpu(1);
    auto p1 = cpu.must_load(graph);
    auto want = cpu.run_raw(*p1, spans);
    cpu.finish(p1);
    Rig gpu = device();
    auto p2 = gpu.must_load(graph);
    auto got = gpu.run_raw(*p2, spans);
    gpu.finish(p2);
    return {std::move(want[0]), std::move(got[0])};
}

struct Shape {
    std::int64_t n, h, c, w;
};

// FP32: the device within the dot bound of the float64 product, and within
// twice the bound of the CPU.
inline void check_fp32(const DeviceRig& device, const Shape& s, std::uint32_t seed,
                       bool arena_operands = false)
{
    const auto a = sample(static_cast<std::size_t>(s.n * s.h * s.c), seed);
    const auto b = sample(static_cast<std::size_t>(s.n * s.c * s.w), seed + 1);
    auto [want, got] = cpu_and_device(device, arena_operands
                                          ? matmul_of_arena_operands(s.n, s.h, s.c, s.w)
                                          : matmul_graph(DType::fp32, DType::fp32, s.n, s.h, s.c, s.w),
                                      {raw(a.data(), a.size() * 4), raw(b.data(), b.size() * 4)});
    const auto cpu = floats(want), gpu = floats(got);
    assert_int_equal(gpu.size(), static_cast<std::size_t>(s.n * s.h * s.w));
    const double u = std::ldexp(1.0, -24);
    const double gamma = static_cast<double>(s.c) * u / (1 - static_cast<double>(s.c) * u);
    for (std::int64_t n = 0; n < s.n; ++n)
        for (std::int64_t y = 0; y < s.h; ++y)
            for (std::int64_t x = 0; x < s.w; ++x) {
                double exact = 0, magnitude = 0;
                for (std::int64_t k = 0; k < s.c; ++k) {
                    const double term = static_cast<double>(a[(n * s.h + y) * s.c + k]) *
                                        static_cast<double>(b[(n * s.c + k) * s.w + x]);
                    exact += term;
                    magnitude += std::abs(term);
                }
                const std::size_t i = static_cast<std::size_t>((n * s.h + y) * s.w + x);
                const double bound = gamma * magnitude;
                if (std::abs(gpu[i] - exact) > bound || std::abs(gpu[i] - cpu[i]) > 2 * bound)
                    fail_msg("[%lld,%lld,%lld,%lld] element %zu: device %.9g, cpu %.9g, "
                             "float64 %.12g, bound %.3g",
                             static_cast<long long>(s.n), static_cast<long long>(s.h),
                             static_cast<long long>(s.c), static_cast<long long>(s.w), i,
                             static_cast<double>(gpu[i]), static_cast<double>(cpu[i]), exact,
                             bound);
            }
}


// Multiples of 1/8 in [-2, 2] and their FP16 encodings (normal numbers and
// zero: exponent 15 + e, 10 fraction bits).
inline std::uint16_t half_of(float v)
{
    if (v == 0) return 0;
    std::uint16_t sign = v < 0 ? 0x8000 : 0;
    float m = std::abs(v);
    int e = 0;
    while (m >= 2) { m /= 2; ++e; }
    while (m < 1) { m *= 2; --e; }
    const auto fraction = static_cast<std::uint16_t>((m - 1) * 1024);
    return static_cast<std::uint16_t>(sign | ((e + 15) << 10) | fraction);
}
inline float float_of_half(std::uint16_t h)
{
    const int e = (h >> 10) & 0x1f;
    const float f = static_cast<float>(h & 0x3ff);
    const float magnitude = e == 0 ? std::ldexp(f, -24) : std::ldexp(1024 + f, e - 25);
    return (h & 0x8000) ? -magnitude : magnitude;
}

inline std::vector<float> eighths(std::size_t count, std::uint32_t seed)
{
    auto v = sample(count, seed);
    for (float& x : v) x = std::round(x * 8) / 8;
    return v;
}

// Element (n, y, x) of a [N,H,C] x [N,C,W] product, summed in float64
// (exact for the multiples of 1/8 below).
inline double exact_dot(const std::vector<float>& a, const std::vector<float>& b, const Shape& s,
                        std::int64_t n, std::int64_t y, std::int64_t x)
{
    double sum = 0;
    for (std::int64_t k = 0; k < s.c; ++k)
        sum += static_cast<double>(a[(n * s.h + y) * s.c + k]) *
               static_cast<double>(b[(n * s.c + k) * s.w + x]);
    return sum;
}

// FP32 MATMUL on multiples of 1/8 in [-2, 2]: exact in FP16 and TF32, and
// every product and partial sum exact in FP32, so the device and the CPU
// both give the float64 product exactly, whatever the order or the
// operands' rounding (a device in TF32 included).
inline void check_fp16_values_in_fp32(const DeviceRig& device, const Shape& s, std::uint32_t seed)
{
    const auto a = eighths(static_cast<std::size_t>(s.n * s.h * s.c), seed);
    const auto b = eighths(static_cast<std::size_t>(s.n * s.c * s.w), seed + 1);
    auto [want, got] = cpu_and_device(device, matmul_graph(DType::fp32, DType::fp32, s.n, s.h, s.c, s.w),
                                      {raw(a.data(), a.size() * 4), raw(b.data(), b.size() * 4)});
    const auto cpu = floats(want), gpu = floats(got);
    assert_int_equal(gpu.size(), static_cast<std::size_t>(s.n * s.h * s.w));
    for (std::int64_t n = 0; n < s.n; ++n)
        for (std::int64_t y = 0; y < s.h; ++y)
            for (std::int64_t x = 0; x < s.w; ++x) {
                const double exact = exact_dot(a, b, s, n, y, x);
                const std::size_t i = static_cast<std::size_t>((n * s.h + y) * s.w + x);
                if (static_cast<double>(gpu[i]) != exact || static_cast<double>(cpu[i]) != exact)
                    fail_msg("FP32 [%lld,%lld,%lld,%lld] of eighths, element %zu: device %.9g, "
                             "cpu %.9g, exact %.9g",
                             static_cast<long long>(s.n), static_cast<long long>(s.h),
                             static_cast<long long>(s.c), static_cast<long long>(s.w), i,
                             static_cast<double>(gpu[i]), static_cast<double>(cpu[i]), exact);
            }
}

inline void check_fp16(const DeviceRig& device, const Shape& s, DType out, std::uint32_t seed)
{
    const auto a = eighths(static_cast<std::size_t>(s.n * s.h * s.c), seed);
    const auto b = eighths(static_cast<std::size_t>(s.n * s.c * s.w), seed + 1);
    std::vector<std::uint16_t> ha, hb;
    for (float x : a) ha.push_back(half_of(x));
    for (float x : b) hb.push_back(half_of(x));
    assert_true(float_of_half(ha[0]) == a[0]);  // the encoding round-trips
    auto [want, got] = cpu_and_device(device, matmul_graph(DType::fp16, out, s.n, s.h, s.c, s.w),
                                      {raw(ha.data(), ha.size() * 2), raw(hb.data(), hb.size() * 2)});
    assert_int_equal(got.size(), want.size());
    for (std::int64_t n = 0; n < s.n; ++n)
        for (std::int64_t y = 0; y < s.h; ++y)
            for (std::int64_t x = 0; x < s.w; ++x) {
                const double exact = exact_dot(a, b, s, n, y, x);
                const std::size_t i = static_cast<std::size_t>((n * s.h + y) * s.w + x);
                float g = 0, c = 0;
                if (out == DType::fp32) {
                    std::memcpy(&g, got.data() + 4 * i, 4);
                    std::memcpy(&c, want.data() + 4 * i, 4);
                } else {
                    std::uint16_t gh = 0, ch = 0;
                    std::memcpy(&gh, got.data() + 2 * i, 2);
                    std::memcpy(&ch, want.data() + 2 * i, 2);
                    g = float_of_half(gh);
                    c = float_of_half(ch);
                }
                if (static_cast<double>(g) != exact || static_cast<double>(c) != exact)
                    fail_msg("FP16 [%lld,%lld,%lld,%lld] element %zu: device %.9g, cpu %.9g, "
                             "exact %.9g",
                             static_cast<long long>(s.n), static_cast<long long>(s.h),
                             static_cast<long long>(s.c), static_cast<long long>(s.w), i,
                             static_cast<double>(g), static_cast<double>(c), exact);
            }
}

}  // namespace cpu_test
