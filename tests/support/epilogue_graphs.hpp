// epilogue_graphs.hpp - graphs whose elementwise chains the GPU backends
// fold into their producers (vaccel/gpu/lowering_epilogue.hpp), for the
// Vulkan and CUDA tests, and the check both run: the device's bytes with
// fusion equal its bytes without (VACCEL_GPU_FUSION=0) exactly and the CPU
// backend's within each chain's tolerance.
#pragma once

#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <vector>

#include "../cpu/cpu_test_support.hpp"

namespace epilogue_test {

using namespace cpu_test;
using Bytes = TensorBytes;
using GraphMaker = std::function<tosa::Graph()>;
using RigMaker = std::function<Rig()>;

// y = clamp(conv(x) + r, 0, 6): a ResNet block's tail, the residual a block
// input; a 3 x 3 convolution of `ic` channels to 8 over a `side` x `side`
// image (on CUDA: 8 channels the float4 path, 3 the element path, 64 split
// over K by a cluster).
struct ConvCase {
    std::int64_t side = 6, ic = 8;
    DType dtype = DType::fp32;
};
inline tosa::Graph conv_residual_relu(ConvCase c = {})
{
    const DType dtype = c.dtype;
    const std::int64_t side = c.side, ic = c.ic;
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {1, side, side, ic}, dtype);
    const auto w = g.tensor("w", {8, 3, 3, ic}, dtype);
    const auto b = g.tensor("b", {8}, dtype);
    const auto r = g.tensor("r", {1, side, side, 8}, dtype);
    const auto zp = [&](const char* name) {
        const auto t = g.tensor(name, {1}, dtype,
                                std::vector<std::uint8_t>(tosa::dtype_bytes(dtype), 0));
        g.op(Op::const_, {}, {t});
        return t;
    };
    const auto conv = g.tensor("c", {1, side, side, 8}, dtype);
    const auto s = g.tensor("s", {1, side, side, 8}, dtype);
    const auto y = g.tensor("y", {1, side, side, 8}, dtype);
    g.op(Op::conv2d, {x, w, b, zp("x_zp"), zp("w_zp")}, {conv},
         tosa::conv_attr({1, 1, 1, 1}, {1, 1}, {1, 1}, DType::fp32));
    g.op(Op::add, {conv, r}, {s});
    g.op(Op::clamp, {s}, {y},
         dtype == DType::fp16 ? tosa::clamp_f16_attr(0.0f, 6.0f) : tosa::clamp_f32_attr(0.0f, 6.0f));
    for (auto t : {x, w, b, r}) g.input(t);
    g.output(y);
    return g.finish();
}

// y = (a @ b + bias[row]) + r, r a block input: a transformer's linear layer
// and its residual; then a MUL by a scalar constant.
inline tosa::Graph matmul_bias_residual()
{
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", {1, 5, 7});
    const auto bm = f32(g, "b", {1, 7, 12});
    const auto bias = f32(g, "bias", {1, 1, 12});
    const auto r = f32(g, "r", {1, 5, 12});
    const auto zp_a = zero_point(g, "a_zp"), zp_b = zero_point(g, "b_zp");
    const float half[] = {0.5f};
    const auto k = g.constant_f32("k", {1, 1, 1}, half);
    g.op(Op::const_, {}, {k});
    const auto m = f32(g, "m", {1, 5, 12});
    const auto mb = f32(g, "mb", {1, 5, 12});
    const auto mr = f32(g, "mr", {1, 5, 12});
    const auto y = f32(g, "y", {1, 5, 12});
    g.op(Op::matmul, {a, bm, zp_a, zp_b}, {m});
    g.op(Op::add, {m, bias}, {mb});
    g.op(Op::add, {r, mb}, {mr});  // the chained operand second
    g.op(Op::mul, {mr, k, mul_shift(g, "shift")}, {y});
    for (auto t : {a, bm, bias, r}) g.input(t);
    g.output(y);
    return g.finish();
}

// Five links after a SUB: the first three fold into it, the fourth starts
// a chain of its own (and folds the fifth); operand-first SUB and POW,
// a stage's MAXIMUM with nan_mode IGNORE.
inline tosa::Graph long_chain()
{
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", {3, 40});
    const auto row = f32(g, "row", {1, 40});
    const auto t0 = f32(g, "t0", {3, 40});
    const auto t1 = f32(g, "t1", {3, 40});
    const auto t2 = f32(g, "t2", {3, 40});
    const auto t3 = f32(g, "t3", {3, 40});
    const auto t4 = f32(g, "t4", {3, 40});
    const auto y = f32(g, "y", {3, 40});
    g.op(Op::sub, {x, row}, {t0});
    g.op(Op::sub, {row, t0}, {t1});  // row - t0: the operand first
    g.op(Op::tanh, {t1}, {t2});
    tosa::Attributes ignore;
    ignore.nan_mode = 2;
    g.op(Op::maximum, {t2, x}, {t3}, ignore);
    g.op(Op::sigmoid, {t3}, {t4});
    g.op(Op::pow, {row, t4}, {y});  // row's elements are positive
    g.input(x);
    g.input(row);
    g.output(y);
    return g.finish();
}

// A LayerNorm tail on FP16: (n * gamma[row]) + beta[row] after a MUL.
inline tosa::Graph fp16_scale_shift()
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {4, 32}, DType::fp16);
    const auto s = g.tensor("s", {4, 32}, DType::fp16);
    const auto gamma = g.tensor("gamma", {1, 32}, DType::fp16);
    const auto beta = g.tensor("beta", {1, 32}, DType::fp16);
    const auto n = g.tensor("n", {4, 32}, DType::fp16);
    const auto scaled = g.tensor("scaled", {4, 32}, DType::fp16);
    const auto y = g.tensor("y", {4, 32}, DType::fp16);
    const auto shift = mul_shift(g, "shift");
    g.op(Op::mul, {x, s, shift}, {n});
    g.op(Op::mul, {n, gamma, shift}, {scaled});
    g.op(Op::add, {scaled, beta}, {y});
    for (auto t : {x, s, gamma, beta}) g.input(t);
    g.output(y);
    return g.finish();
}

// REDUCE_SUM then RECIPROCAL: a producer with no epilogue in its kernel,
// followed by the in-place pass.
inline tosa::Graph reduce_reciprocal()
{
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", {6, 100});
    const auto s = f32(g, "s", {6, 1});
    const auto y = f32(g, "y", {6, 1});
    g.op(Op::reduce_sum, {x}, {s}, tosa::axis_attr(1));
    g.op(Op::reciprocal, {s}, {y});
    g.input(x);
    g.output(y);
    return g.finish();
}

// Runs `make()` on the device of `device()` with fusion on and off and on the CPU;
// the fused bytes must equal the unfused ones exactly and the CPU's within
// `tolerance` (relative, as vulkan_test::compare).
inline void check_chain(const RigMaker& device, const GraphMaker& make, const std::vector<Bytes>& inputs, float tolerance,
                 const char* what)
{
    std::vector<std::span<const std::byte>> spans(inputs.begin(), inputs.end());
    auto run_device = [&](const char* fusion) {
        setenv("VACCEL_GPU_FUSION", fusion, 1);
        Rig gpu = device();
        auto p = gpu.must_load(make());
        auto out = gpu.run_raw(*p, spans);
        gpu.finish(p);
        unsetenv("VACCEL_GPU_FUSION");
        return out;
    };
    const auto fused = run_device("1");
    const auto unfused = run_device("0");
    Rig cpu(1);
    auto p = cpu.must_load(make());
    const auto want = cpu.run_raw(*p, spans);
    cpu.finish(p);
    assert_int_equal(fused.size(), unfused.size());
    for (std::size_t i = 0; i < fused.size(); ++i) {
        if (fused[i] != unfused[i]) fail_msg("%s: output %zu differs with fusion", what, i);
        if (tolerance < 0) continue;
        assert_int_equal(fused[i].size(), want[i].size());
        if (tolerance == 0)
            assert_memory_equal(fused[i].data(), want[i].data(), want[i].size());
        else
            assert_close(floats(fused[i]), floats(want[i]), tolerance);
    }
}

inline Bytes raw_f32(std::size_t n, std::uint32_t seed, float lo = -2.0f, float hi = 2.0f)
{
    auto v = sample(n, seed);
    for (float& x : v) x = lo + (x + 2.0f) / 4.0f * (hi - lo);
    return raw(v);
}

inline Bytes raw_f16(std::size_t n, std::uint32_t seed)
{
    const auto v = sample(n, seed);
    const auto bytes = tosa::f16_bytes(v);
    Bytes out(bytes.size());
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

// Every graph above on `device()`.
inline void check_every_chain(const RigMaker& device)
{
    for (const ConvCase c : {ConvCase{6, 8}, ConvCase{5, 3}, ConvCase{4, 64},
                             ConvCase{6, 8, DType::fp16}}) {
        const auto pixels = static_cast<std::size_t>(c.side * c.side);
        const auto taps = static_cast<std::size_t>(72 * c.ic);
        const bool half = c.dtype == DType::fp16;
        auto data = [&](std::size_t n, std::uint32_t seed, float lo, float hi) {
            return half ? raw_f16(n, seed) : raw_f32(n, seed, lo, hi);
        };
        check_chain(device, [c] { return conv_residual_relu(c); },
                    {data(pixels * c.ic, 1, -2, 2), data(taps, 2, -0.2f, 0.2f), data(8, 3, -2, 2),
                     data(pixels * 8, 4, -2, 2)},
                    half ? 2e-2f : 1e-5f, "conv + residual + clamp");
    }
    check_chain(device, matmul_bias_residual,
                {raw_f32(35, 5), raw_f32(84, 6), raw_f32(12, 7), raw_f32(60, 8)}, 1e-5f,
                "matmul + bias + residual + scale");
    check_chain(device, long_chain, {raw_f32(120, 9), raw_f32(40, 10, 0.5f, 2.0f)}, 2e-6f,
                "five-link chain");
    check_chain(device, fp16_scale_shift,
                {raw_f16(128, 11), raw_f16(128, 12), raw_f16(32, 13), raw_f16(32, 14)}, -1,
                "fp16 scale and shift");
    check_chain(device, reduce_reciprocal, {raw_f32(600, 15)}, 1e-5f, "reduce + reciprocal");
}

}  // namespace epilogue_test
