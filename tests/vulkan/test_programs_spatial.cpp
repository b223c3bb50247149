// test_programs_spatial.cpp - the spatial and indexing operators on the
// Vulkan device (Mesa lavapipe): CONV2D, DEPTHWISE_CONV2D, AVG_POOL2D,
// RESIZE, GATHER, PAD, SLICE and TILE, each against the CPU backend on the
// same graph and inputs, with hand-derived values besides; plus the
// descriptor that advertises them and the refusals. CONV2D takes the
// implicit-GEMM kernel (backends/vulkan/src/lowering_conv.hpp) on lavapipe's
// direct path and, through VACCEL_VULKAN_MATMUL_TILES, on the shared-memory
// path a GPU takes; each such test checks that the device's plan chose it.
//
// Tolerances (docs/operators.md): GATHER, PAD, SLICE, TILE and RESIZE
// NEAREST are copies, compared bit for bit. CONV2D runs a BLAS GEMM on the
// CPU (another summation order): 1e-5 * (1 + |want|); DEPTHWISE_CONV2D
// 1e-5; AVG_POOL2D and RESIZE BILINEAR 1e-6, relative as above. The GEMM
// kernel is also held to a float64 reference within docs/operators.md's dot
// bound (gamma(K + 1) times the sum of the terms' magnitudes).
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "conv_graphs.hpp"
#include "lowering.hpp"
#include "lowering_conv.hpp"
#include "program.hpp"
#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/plan.hpp"
#include "vulkan_test_support.hpp"

namespace {

using namespace vulkan_test;

std::uint32_t zp(tosa::GraphBuilder& g, const char* name, float value = 0.0f)
{
    return zero_point(g, name, value);
}

// ----- CONV2D, DEPTHWISE_CONV2D ----------------------------------------------

struct ConvCase {
    Op op;
    std::vector<std::int64_t> input, weight, bias, output;
    std::vector<std::int32_t> pad, stride, dilation;
};

tosa::Graph conv_graph(const ConvCase& c, float input_zp = 0.0f)
{
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", c.input);
    const auto w = f32(g, "w", c.weight);
    const auto b = f32(g, "b", c.bias);
    const auto out = f32(g, "out", c.output);
    g.op(c.op, {x, w, b, zp(g, "in_zp", input_zp), zp(g, "w_zp")}, {out},
         tosa::conv_attr(c.pad, c.stride, c.dilation));
    g.input(x);
    g.input(w);
    g.input(b);
    g.output(out);
    return g.finish();
}

void conv2d_matches_the_cpu(void**)
{
    const ConvCase cases[] = {
        // Strides 2x1, dilations 1x2, asymmetric pad [top 1, bottom 0, left 2,
        // right 1], two batches, bias per channel:
        // OH = (8 - 1 + 1 + 0 - 2 * 1) / 2 + 1 = 4, OW = (8 - 1 + 2 + 1 - 2 * 2) / 1 + 1 = 7.
        {Op::conv2d, {2, 8, 8, 3}, {4, 3, 3, 3}, {4}, {2, 4, 7, 4}, {1, 0, 2, 1}, {2, 1}, {1, 2}},
        // Bias [1] broadcast over 5 channels; 1x1 kernel, stride 1.
        {Op::conv2d, {1, 4, 5, 6}, {5, 1, 1, 6}, {1}, {1, 4, 5, 5}, {0, 0, 0, 0}, {1, 1}, {1, 1}},
    };
    std::uint32_t seed = 20;
    for (const ConvCase& c : cases) {
        const auto x = sample(elements(c.input), seed++);
        const auto w = sample(elements(c.weight), seed++);
        const auto b = sample(elements(c.bias), seed++);
        auto [want, got] = both([&] { return conv_graph(c); }, {raw(x), raw(w), raw(b)});
        compare(got[0], want[0], 1e-5f, "conv2d");
    }
}

void conv2d_by_hand_skips_padding(void**)
{
    // x = [[1, 2], [3, 4]], a 2x2 kernel of ones, bias 0.5, pad top 1 and
    // left 1: out (0,0) sees only x(0,0) = 1 -> 1.5; (0,1) sees 1 + 2 -> 3.5;
    // (1,0) sees 1 + 3 -> 4.5; (1,1) sees all four, 10 -> 10.5.
    const ConvCase c{Op::conv2d, {1, 2, 2, 1}, {1, 2, 2, 1}, {1}, {1, 2, 2, 1},
                     {1, 0, 1, 0}, {1, 1}, {1, 1}};
    Rig gpu = vulkan_rig();
    auto p = gpu.must_load(conv_graph(c));
    const std::vector<float> x{1, 2, 3, 4}, w{1, 1, 1, 1}, b{0.5f};
    auto out = gpu.run_raw(*p, {bytes_of(x), bytes_of(w), bytes_of(b)});
    assert_exactly(floats(out[0]), {1.5f, 3.5f, 4.5f, 10.5f});
    gpu.finish(p);
}

void depthwise_conv2d_matches_the_cpu(void**)
{
    // Channel multiplier 2 over 3 channels, strides 1x2, dilations 2x1, pad
    // [2, 0, 1, 0], two batches: OH = (6 - 1 + 2 - 2 * 2) / 1 + 1 = 4,
    // OW = (5 - 1 + 1 - 1 * 1) / 2 + 1 = 3.
    const ConvCase cases[] = {
        {Op::depthwise_conv2d, {2, 6, 5, 3}, {3, 2, 3, 2}, {6}, {2, 4, 3, 6}, {2, 0, 1, 0},
         {1, 2}, {2, 1}},
        {Op::depthwise_conv2d, {1, 5, 5, 4}, {3, 3, 4, 1}, {1}, {1, 5, 5, 4}, {1, 1, 1, 1},
         {1, 1}, {1, 1}},
    };
    std::uint32_t seed = 30;
    for (const ConvCase& c : cases) {
        const auto x = sample(elements(c.input), seed++);
        const auto w = sample(elements(c.weight), seed++);
        const auto b = sample(elements(c.bias), seed++);
        auto [want, got] = both([&] { return conv_graph(c); }, {raw(x), raw(w), raw(b)});
        compare(got[0], want[0], 1e-5f, "depthwise_conv2d");
    }
    // By hand: one pixel of channels {2, 3}, multiplier 2, weight (c, j) =
    // {1, 10; 100, 1000}, bias 0: output channel c * 2 + j = x[c] * w[c][j]
    // = {2, 20, 300, 3000}.
    const ConvCase one{Op::depthwise_conv2d, {1, 1, 1, 2}, {1, 1, 2, 2}, {4}, {1, 1, 1, 4},
                       {0, 0, 0, 0}, {1, 1}, {1, 1}};
    Rig gpu = vulkan_rig();
    auto p = gpu.must_load(conv_graph(one));
    const std::vector<float> x{2, 3}, w{1, 10, 100, 1000}, b{0, 0, 0, 0};
    auto out = gpu.run_raw(*p, {bytes_of(x), bytes_of(w), bytes_of(b)});
    assert_exactly(floats(out[0]), {2, 20, 300, 3000});
    gpu.finish(p);
}

// ----- CONV2D as an implicit GEMM ---------------------------------------------------

// The kernel the device planned for dispatch `i` of a loaded program.
const tosa::KernelSpec& planned_kernel(const Program& program, std::size_t i = 0)
{
    const auto* vk = dynamic_cast<const vaccel::backend::vulkan::VulkanProgram*>(&program);
    if (vk == nullptr) fail_msg("not a Vulkan program");
    assert_true(i < vk->state->plan.dispatches.size());
    return vk->state->plan.dispatches[i].kernel;
}

constexpr std::uint32_t gemm_kernel =
    static_cast<std::uint32_t>(vaccel::backend::vulkan::VulkanKernelId::conv2d_gemm);
// conv2d_gemm.comp's SHARED and VEC4 words (lowering_conv.cpp).
constexpr std::size_t shared_word = 30, vec4_word = 31;

// sample()'s values rounded to eighths: every product is a multiple of
// 1/64, and a sum of up to 2^15 of them in [-4, 4] stays below 2^17 with 23
// bits of fraction at most, so FP32 holds every partial sum of any order
// exactly.
std::vector<float> eighths(std::size_t count, std::uint32_t seed)
{
    auto v = sample(count, seed);
    for (float& f : v) f = std::round(f * 8.0f) / 8.0f;
    return v;
}

// Runs `c` on the CPU and the device; the device's plan must take the GEMM
// kernel with `vec4` loads or not and `shared` or not; its result within
// 1e-5 of the CPU's and within the dot bound of float64, or with `exact`
// (inputs in eighths) equal to it.
void check_gemm(const conv_test::Conv& c, std::uint32_t seed, bool vec4, bool shared,
                bool exact, const char* what)
{
    const auto values_of = [exact](std::size_t count, std::uint32_t s) {
        return exact ? eighths(count, s) : sample(count, s);
    };
    const auto x = values_of(elements(c.input), seed);
    const auto w = values_of(elements(c.weight), seed + 1);
    const auto b = values_of(static_cast<std::size_t>(c.bias_extent()), seed + 2);
    const std::vector<Bytes> inputs{raw(x), raw(w), raw(b)};
    const std::vector<std::span<const std::byte>> spans(inputs.begin(), inputs.end());
    Rig cpu(1);
    auto p1 = cpu.must_load(conv_test::conv_graph(c));
    const auto want = cpu.run_raw(*p1, spans);
    cpu.finish(p1);
    Rig gpu = vulkan_rig();
    auto p2 = gpu.must_load(conv_test::conv_graph(c));
    const tosa::KernelSpec& k = planned_kernel(*p2);
    if (k.kernel != gemm_kernel) fail_msg("%s: kernel %u, not the GEMM kernel", what, k.kernel);
    assert_int_equal(k.spec[shared_word], shared ? 1 : 0);
    assert_int_equal(k.spec[vec4_word], vec4 ? 1 : 0);
    const auto got = gpu.run_raw(*p2, spans);
    gpu.finish(p2);
    const auto ref = conv_test::conv_reference(c, x, w, b);
    const auto values = floats(got[0]);
    if (exact) {
        for (std::size_t i = 0; i < values.size(); ++i)
            if (static_cast<double>(values[i]) != ref.value[i])
                fail_msg("%s: element %zu: got %.9g, exactly %.17g", what, i,
                         static_cast<double>(values[i]), ref.value[i]);
    }
    compare(got[0], want[0], 1e-5f, what);
    const double u = std::ldexp(1.0, -24);
    const double n = static_cast<double>(c.kh() * c.kw() * c.input[3] + 1);
    const double gamma = n * u / (1 - n * u);
    for (std::size_t i = 0; i < values.size(); ++i)
        if (!(std::fabs(values[i] - ref.value[i]) <= gamma * ref.magnitude[i]))
            fail_msg("%s: element %zu: got %.9g, float64 %.17g, bound %.3g", what, i,
                     static_cast<double>(values[i]), ref.value[i], gamma * ref.magnitude[i]);
}

// {input, weight [OC,KH,KW,IC], pad [top, bottom, left, right], stride,
// dilation, bias extent (0: per channel)}, whether IC allows vec4, and
// whether the inputs are eighths and the result exact: a deep K sums
// thousands of terms, whose rounding in one order (the kernel's) against
// another (the CPU's blocked GEMM) exceeds 1e-5 of small results, while the
// dot bound would hide a missing tap.
struct GemmCase {
    conv_test::Conv conv;
    bool vec4;
    const char* what;
    bool exact = false;
};
const GemmCase gemm_cases[] = {
    // IC = 3, a 7x7 first layer at stride 2: OH = (17 - 1 + 6 - 6) / 2 + 1 = 9, OW = 10.
    {{{1, 17, 19, 3}, {8, 7, 7, 3}, {3, 3, 3, 3}, {2, 2}, {1, 1}}, false, "first layer"},
    // OC = 6, stride 1x2, dilation 2x1, pad [0, 1, 2, 0], two batches:
    // OH = (9 - 1 + 1 - 4) + 1 = 6, OW = (9 - 1 + 2 - 2) / 2 + 1 = 5.
    {{{2, 9, 9, 8}, {6, 3, 3, 8}, {0, 1, 2, 0}, {1, 2}, {2, 1}}, true, "odd oc, dilated"},
    // Bias [1].
    {{{1, 8, 8, 4}, {8, 3, 3, 4}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1}, true, "bias [1]"},
    // A deep K: 3x3x512 at 7x7 (K = 4608), OC = 36.
    // On lavapipe M = 49 takes 64 x 8 blocks of 1 x 8 (lowering_conv.hpp).
    {{{1, 7, 7, 512}, {36, 3, 3, 512}, {1, 1, 1, 1}, {1, 1}, {1, 1}}, true, "deep k", true},
    // Three batches, M = 429 and OC = 20: no tile divides them.
    {{{3, 11, 13, 16}, {20, 3, 3, 16}, {1, 1, 1, 1}, {1, 1}, {1, 1}}, true, "ragged tiles", true},
    // 1x1 at stride 2 (a ResNet downsampling shortcut), OC = 10.
    {{{2, 9, 9, 12}, {10, 1, 1, 12}, {0, 0, 0, 0}, {2, 2}, {1, 1}}, true, "1x1 stride 2"},
    // IC = 5, OC = 7, a 2x3 kernel, pad [1, 0, 2, 1], dilation 1x2:
    // OH = 6 - 1 + 1 - 1 + 1 = 6, OW = 7 - 1 + 3 - 4 + 1 = 6.
    {{{1, 6, 7, 5}, {7, 2, 3, 5}, {1, 0, 2, 1}, {1, 1}, {1, 2}}, false, "uneven padding"},
};

// Lavapipe's own conv tiles: 256 x 4 blocks read straight from the buffers.
// The device's own path: straight from the buffers on a CPU device
// (lavapipe, whose name starts "llvmpipe"), shared memory on a GPU (make
// test-gpu).
void conv2d_gemm_matches_on_the_device_path(void**)
{
    const bool cpu_device =
        std::string_view(lavapipe()->device_info().name).starts_with("llvmpipe");
    std::uint32_t seed = 400;
    for (const GemmCase& c : gemm_cases)
        check_gemm(c.conv, seed += 3, c.vec4, !cpu_device, c.exact, c.what);
}

// The shared-memory path a GPU takes, on lavapipe through the MATMUL
// override (CONV2D takes the same tiles): small blocks so every case
// crosses block and k-step edges; runs of 4 in two stages; single rows
// and columns without prefetching; BK = 3 (no whole quads: scalar loads
// whatever IC); the H200's 128x128x16 with 8 x 4.
void conv2d_gemm_matches_on_the_shared_path(void**)
{
    std::uint32_t seed = 500;
    for (const char* tiles : {"16,16,8,2,2", "32,32,8,4,4,1,1,1,2", "64,32,8,4,2,1,0",
                              "9,32,3,9,1", "128,128,16,8,4"}) {
        setenv("VACCEL_VULKAN_MATMUL_TILES", tiles, 1);
        const bool quads = std::string_view(tiles) != "9,32,3,9,1";
        for (const GemmCase& c : gemm_cases)
            check_gemm(c.conv, seed += 3, c.vec4 && quads, true, c.exact,
                       fmt::format("{} ({})", c.what, tiles).c_str());
    }
    unsetenv("VACCEL_VULKAN_MATMUL_TILES");
}

// Operands at nonzero bases: the second CONV2D reads the first's result from
// the arena and its weight is a constant there too (both 256-byte aligned,
// so vec4 still applies); both take the GEMM kernel. Inputs in eighths: the
// first result is in 64ths below 2^8, the second's terms in 512ths, every
// sum exact in FP32, so the chain matches the CPU bit for bit (with
// rounded inputs the first layer's rounding would pass through the second).
void conv2d_gemm_reads_arena_operands(void**)
{
    const auto w2 = eighths(6 * 3 * 3 * 8, 601);
    const auto make = [&w2] {
        tosa::GraphBuilder g;
        const auto x = f32(g, "x", {2, 6, 6, 4});
        const auto w1 = f32(g, "w1", {8, 3, 3, 4});
        const auto b1 = f32(g, "b1", {8});
        const auto a = f32(g, "a", {2, 6, 6, 8});
        std::vector<std::uint8_t> bytes(w2.size() * 4);
        std::memcpy(bytes.data(), w2.data(), bytes.size());
        const auto wc = g.tensor("w2", {6, 3, 3, 8}, DType::fp32, std::move(bytes));
        g.op(Op::const_, {}, {wc});
        const auto b2 = f32(g, "b2", {1});
        const auto out = f32(g, "out", {2, 4, 4, 6});
        g.op(Op::conv2d, {x, w1, b1, zp(g, "z1"), zp(g, "z2")}, {a},
             tosa::conv_attr({1, 1, 1, 1}, {1, 1}, {1, 1}));
        g.op(Op::conv2d, {a, wc, b2, zp(g, "z3"), zp(g, "z4")}, {out},
             tosa::conv_attr({0, 0, 0, 0}, {1, 1}, {1, 1}));
        for (auto t : {x, w1, b1, b2}) g.input(t);
        g.output(out);
        return g.finish();
    };
    const std::vector<Bytes> inputs{raw(eighths(288, 602)), raw(eighths(288, 603)),
                                    raw(eighths(8, 604)), raw(eighths(1, 605))};
    const std::vector<std::span<const std::byte>> spans(inputs.begin(), inputs.end());
    Rig cpu(1);
    auto p1 = cpu.must_load(make());
    const auto want = cpu.run_raw(*p1, spans);
    cpu.finish(p1);
    Rig gpu = vulkan_rig();
    auto p2 = gpu.must_load(make());
    const auto& second = planned_kernel(*p2, 1);
    assert_int_equal(planned_kernel(*p2, 0).kernel, gemm_kernel);
    assert_int_equal(second.kernel, gemm_kernel);
    // IN_BUF and W_BUF (words 18, 20) are the arena, after the 5 slots;
    // at least one of IN_BASE and W_BASE (words 19, 21) is past its start.
    assert_int_equal(second.spec[18], 5);
    assert_int_equal(second.spec[20], 5);
    assert_true(second.spec[19] != 0 || second.spec[21] != 0);
    assert_int_equal(second.spec[vec4_word], 1);
    const auto got = gpu.run_raw(*p2, spans);
    gpu.finish(p2);
    compare(got[0], want[0], 0, "conv2d chain through the arena");
}

// VACCEL_VULKAN_CONV=direct keeps CONV2D on the direct kernel (and its
// result); any other value but gemm refuses the load.
void vaccel_vulkan_conv_chooses_the_kernel(void**)
{
    const conv_test::Conv c{{1, 8, 8, 4}, {8, 3, 3, 4}, {1, 1, 1, 1}, {1, 1}, {1, 1}};
    setenv("VACCEL_VULKAN_CONV", "direct", 1);
    {
        Rig gpu = vulkan_rig();
        auto p = gpu.must_load(conv_test::conv_graph(c));
        assert_int_equal(planned_kernel(*p).kernel,
                         static_cast<std::uint32_t>(vaccel::backend::vulkan::KernelId::conv2d));
        gpu.finish(p);
    }
    setenv("VACCEL_VULKAN_CONV", "fast", 1);
    {
        Rig gpu = vulkan_rig();
        assert_refused(gpu.load(conv_test::conv_graph(c)), Errc::invalid_argument,
                       VACCEL_D_BAD_VALUE, 0, static_cast<std::uint64_t>(Op::conv2d));
        gpu.finish();
    }
    setenv("VACCEL_VULKAN_CONV", "gemm", 1);
    {
        Rig gpu = vulkan_rig();
        auto p = gpu.must_load(conv_test::conv_graph(c));
        assert_int_equal(planned_kernel(*p).kernel, gemm_kernel);
        gpu.finish(p);
    }
    unsetenv("VACCEL_VULKAN_CONV");
}

// ----- AVG_POOL2D ---------------------------------------------------------------

tosa::Graph avg_pool_graph(std::vector<std::int64_t> in, std::vector<std::int64_t> out,
                           std::vector<std::int32_t> kernel, std::vector<std::int32_t> stride,
                           std::vector<std::int32_t> pad)
{
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", std::move(in));
    const auto y = f32(g, "y", std::move(out));
    g.op(Op::avg_pool2d, {x, zp(g, "in_zp"), zp(g, "out_zp")}, {y},
         tosa::pool_attr(std::move(kernel), std::move(stride), std::move(pad)));
    g.input(x);
    g.output(y);
    return g.finish();
}

void avg_pool2d_divides_by_the_input_elements_only(void**)
{
    // x = [[1, 2], [3, 4]], 2x2 windows, stride 1, pad top 1 and left 1: the
    // windows hold {1}, {1, 2}, {1, 3}, {1, 2, 3, 4}, so 1/1, 3/2, 4/2, 10/4
    // (padding neither summed nor counted).
    Rig gpu = vulkan_rig();
    auto p = gpu.must_load(avg_pool_graph({1, 2, 2, 1}, {1, 2, 2, 1}, {2, 2}, {1, 1}, {1, 0, 1, 0}));
    const std::vector<float> x{1, 2, 3, 4};
    auto out = gpu.run_raw(*p, {bytes_of(x)});
    assert_exactly(floats(out[0]), {1, 1.5f, 2, 2.5f});
    gpu.finish(p);
    // Against the CPU: kernel 3x2, stride 2, pad [1, 1, 0, 1], two batches:
    // OH = (5 + 2 - 3) / 2 + 1 = 3, OW = (6 + 1 - 2) / 2 + 1 -> 5 / 2 is not
    // exact, so pad right 0: OW = (6 - 2) / 2 + 1 = 3.
    const auto x2 = sample(2 * 5 * 6 * 3, 40);
    auto [want, got] = both(
        [] { return avg_pool_graph({2, 5, 6, 3}, {2, 3, 3, 3}, {3, 2}, {2, 2}, {1, 1, 0, 0}); },
        {raw(x2)});
    compare(got[0], want[0], 1e-6f, "avg_pool2d");
}

// ----- RESIZE -----------------------------------------------------------------------

constexpr std::uint32_t nearest = 1, bilinear = 2;

tosa::Graph resize_graph(std::vector<std::int64_t> in_shape, std::vector<std::int64_t> out_shape,
                         std::vector<std::int64_t> scale, std::vector<std::int64_t> offset,
                         std::vector<std::int64_t> border, std::uint32_t mode)
{
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", std::move(in_shape));
    const auto s = shape_const(g, "scale", std::move(scale));
    const auto o = shape_const(g, "offset", std::move(offset));
    const auto b = shape_const(g, "border", std::move(border));
    const auto out = f32(g, "out", std::move(out_shape));
    tosa::Attributes attributes;
    attributes.present = true;
    attributes.resize_mode = mode;
    g.op(Op::resize, {in, s, o, b}, {out}, attributes);
    g.input(in);
    g.output(out);
    return g.finish();
}

void resize_upscales_by_hand(void**)
{
    // A 2x upscale with half-pixel centres: scale [4,2,4,2], offset [-1,-1],
    // border [1,1]: OH = ((2-1)*4 + 1 + 1) / 2 + 1 = 4. Along each axis the
    // outputs sample y = 2*oy - 1 over 4: (iy, dy) = (-1, 3/4), (0, 1/4),
    // (0, 3/4), (1, 1/4); clamped neighbours (0,0), (0,1), (0,1), (1,1).
    Rig gpu = vulkan_rig();
    auto near = gpu.must_load(
        resize_graph({1, 2, 2, 1}, {1, 4, 4, 1}, {4, 2, 4, 2}, {-1, -1}, {1, 1}, nearest));
    auto bil = gpu.must_load(
        resize_graph({1, 2, 2, 1}, {1, 4, 4, 1}, {4, 2, 4, 2}, {-1, -1}, {1, 1}, bilinear));
    const std::vector<float> in{1, 2, 3, 4};
    // NEAREST takes the second neighbour where dy >= 1/2: rows 0, 0, 1, 1.
    assert_exactly(floats(gpu.run_raw(*near, {bytes_of(in)})[0]),
                   {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
    // BILINEAR: row 0 -> {1, 1.25, 1.75, 2}, row 1 -> {3, 3.25, 3.75, 4};
    // output rows weigh them 1:0, 3/4:1/4, 1/4:3/4, 0:1 (all exact in float).
    assert_exactly(floats(gpu.run_raw(*bil, {bytes_of(in)})[0]),
                   {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f,  //
                    2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4});
    // Scale 2/1, offset 1, border 1 on 3x3: OH = (2*2 - 1 + 1) / 1 + 1 = 5;
    // y = oy + 1 over 2 gives (iy, dy) = (0, 1/2), (1, 0), (1, 1/2), (2, 0),
    // (2, 1/2): NEAREST rounds the tie up, to rows 1, 1, 2, 2, 2 (the last
    // clamped from 3).
    auto tie = gpu.must_load(
        resize_graph({1, 3, 3, 1}, {1, 5, 5, 1}, {2, 1, 2, 1}, {1, 1}, {1, 1}, nearest));
    const std::vector<float> grid{0, 1, 2, 10, 11, 12, 20, 21, 22};  // 10 * row + column
    const int rows[] = {1, 1, 2, 2, 2};
    std::vector<float> hand;
    for (int r : rows)
        for (int c : rows) hand.push_back(static_cast<float>(10 * r + c));
    assert_exactly(floats(gpu.run_raw(*tie, {bytes_of(grid)})[0]), hand);
    assert_ok(gpu.backend->unload_program(tie));
    assert_ok(gpu.backend->unload_program(near));
    gpu.finish(bil);
}

void resize_matches_the_cpu_up_and_down(void**)
{
    struct Case {
        std::vector<std::int64_t> in, out, scale, offset, border;
    };
    const Case cases[] = {
        // Upscale 3/2 with offset [1,-1], border [1,-1]: OH = (2*3 - 1 + 1)/2 + 1 = 4,
        // OW = (2*3 + 1 - 1)/2 + 1 = 4.
        {{1, 3, 3, 2}, {1, 4, 4, 2}, {3, 2, 3, 2}, {1, -1}, {1, -1}},
        // Downscale: y by 1/2 (OH = 6*1/2 + 1 = 4), x by 3/4 with offset 1 and
        // border 1 (OW = (8*3 - 1 + 1)/4 + 1 = 7); two batches.
        {{2, 7, 9, 2}, {2, 4, 7, 2}, {1, 2, 3, 4}, {0, 1}, {0, 1}},
        // Upscale 2 with offset 1: fractions of exactly 1/2 (NEAREST's tie).
        {{1, 3, 3, 1}, {1, 5, 5, 1}, {2, 1, 2, 1}, {1, 1}, {1, 1}},
    };
    std::uint32_t seed = 50;
    for (const Case& c : cases) {
        const auto x = sample(elements(c.in), seed++);
        for (std::uint32_t mode : {nearest, bilinear}) {
            auto [want, got] = both(
                [&] { return resize_graph(c.in, c.out, c.scale, c.offset, c.border, mode); },
                {raw(x)});
            compare(got[0], want[0], mode == nearest ? 0.0f : 1e-6f, "resize");
        }
    }
}

// ----- GATHER ---------------------------------------------------------------------

tosa::Graph gather_graph(DType dtype)
{
    tosa::GraphBuilder g;
    const auto values = g.tensor("values", {2, 5, 3}, dtype);
    const auto indices = g.tensor("indices", {2, 4}, DType::int32);
    const auto out = g.tensor("out", {2, 4, 3}, dtype);
    g.op(Op::gather, {values, indices}, {out});
    g.input(values);
    g.input(indices);
    g.output(out);
    return g.finish();
}

void gather_copies_repeated_and_boundary_rows(void**)
{
    // Indices 0 and K-1 = 4, each repeated.
    const std::vector<std::int32_t> indices{0, 4, 4, 2, 3, 0, 0, 4};
    const auto values = sample(30, 60);
    auto [want, got] = both([] { return gather_graph(DType::fp32); }, {raw(values), raw(indices)});
    compare(got[0], want[0], 0, "gather fp32");
    // By hand: out[n][w][c] = values[n][indices[n][w]][c].
    std::vector<float> hand;
    for (int n = 0; n < 2; ++n)
        for (int w = 0; w < 4; ++w)
            for (int c = 0; c < 3; ++c) hand.push_back(values[(n * 5 + indices[n * 4 + w]) * 3 + c]);
    assert_exactly(floats(got[0]), hand);
    std::vector<std::int32_t> ints(30);
    for (int i = 0; i < 30; ++i) ints[i] = -1000 * i - 7;
    auto [want_i, got_i] = both([] { return gather_graph(DType::int32); }, {raw(ints), raw(indices)});
    compare(got_i[0], want_i[0], 0, "gather int32");
}

// ----- PAD, SLICE, TILE -------------------------------------------------------------

// A [1] constant of `dtype` holding `bytes`.
std::uint32_t scalar(tosa::GraphBuilder& g, const char* name, DType dtype,
                     std::vector<std::uint8_t> bytes)
{
    const auto t = g.tensor(name, {1}, dtype, std::move(bytes));
    g.op(Op::const_, {}, {t});
    return t;
}

std::vector<std::uint8_t> word(std::uint32_t bits)
{
    std::vector<std::uint8_t> b(4);
    std::memcpy(b.data(), &bits, 4);
    return b;
}

tosa::Graph pad_graph(DType dtype, std::vector<std::uint8_t> fill)
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {2, 3, 4}, dtype);
    const auto out = g.tensor("out", {3, 5, 7}, dtype);
    // [before, after] per dimension: [1, 0], [0, 2], [2, 1].
    g.op(Op::pad, {x, shape_const(g, "padding", {1, 0, 0, 2, 2, 1}),
                   scalar(g, "pad_const", dtype, std::move(fill))},
         {out});
    g.input(x);
    g.output(out);
    return g.finish();
}

void pad_fills_with_a_non_zero_constant(void**)
{
    const auto x = sample(24, 70);
    auto [want, got] = both([] { return pad_graph(DType::fp32, word(std::bit_cast<std::uint32_t>(7.5f))); },
                            {raw(x)});
    compare(got[0], want[0], 0, "pad fp32");
    // By hand: out[i][j][k] = x[i-1][j][k-2] inside, else 7.5.
    std::vector<float> hand;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 5; ++j)
            for (int k = 0; k < 7; ++k) {
                const bool inside = i >= 1 && j < 3 && k >= 2 && k < 6;
                hand.push_back(inside ? x[((i - 1) * 3 + j) * 4 + (k - 2)] : 7.5f);
            }
    assert_exactly(floats(got[0]), hand);
    std::vector<std::int32_t> ints(24);
    for (int i = 0; i < 24; ++i) ints[i] = i * 3 - 40;
    auto [want_i, got_i] = both([] { return pad_graph(DType::int32, word(static_cast<std::uint32_t>(-9))); },
                                {raw(ints)});
    compare(got_i[0], want_i[0], 0, "pad int32");
    // BOOL: 24 bytes, padded with true; 105 result bytes end mid-word.
    std::vector<std::uint8_t> flags(24);
    for (int i = 0; i < 24; ++i) flags[i] = (i * 7) % 3 == 0 ? 1 : 0;
    auto [want_b, got_b] = both([] { return pad_graph(DType::boolean, {1}); }, {raw(flags)});
    compare(got_b[0], want_b[0], 0, "pad bool");
    assert_int_equal(got_b[0].size(), 105);
    assert_int_equal(static_cast<int>(got_b[0][0]), 1);                // padding
    assert_int_equal(static_cast<int>(got_b[0][35 + 2]), flags[0]);     // out[1][0][2] = x[0][0][0]
}

tosa::Graph slice_graph(DType dtype)
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {3, 4, 5}, dtype);
    const auto out = g.tensor("out", {2, 3, 2}, dtype);
    g.op(Op::slice, {x, shape_const(g, "start", {1, 1, 2}), shape_const(g, "size", {2, 3, 2})},
         {out});
    g.input(x);
    g.output(out);
    return g.finish();
}

void slice_copies_from_an_offset(void**)
{
    const auto x = sample(60, 80);
    auto [want, got] = both([] { return slice_graph(DType::fp32); }, {raw(x)});
    compare(got[0], want[0], 0, "slice fp32");
    // By hand: out[i][j][k] = x[i+1][j+1][k+2].
    std::vector<float> hand;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 2; ++k) hand.push_back(x[((i + 1) * 4 + j + 1) * 5 + k + 2]);
    assert_exactly(floats(got[0]), hand);
    std::vector<std::uint8_t> flags(60);
    for (int i = 0; i < 60; ++i) flags[i] = i % 4 == 1 ? 1 : 0;
    auto [want_b, got_b] = both([] { return slice_graph(DType::boolean); }, {raw(flags)});
    compare(got_b[0], want_b[0], 0, "slice bool");
}

tosa::Graph tile_graph(DType dtype)
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {2, 1, 3, 2}, dtype);
    const auto out = g.tensor("out", {4, 3, 3, 4}, dtype);
    g.op(Op::tile, {x, shape_const(g, "multiples", {2, 3, 1, 2})}, {out});
    g.input(x);
    g.output(out);
    return g.finish();
}

void tile_repeats_a_rank_4_tensor(void**)
{
    const auto x = sample(12, 90);
    auto [want, got] = both([] { return tile_graph(DType::fp32); }, {raw(x)});
    compare(got[0], want[0], 0, "tile fp32");
    // By hand: out[a][b][c][d] = x[a % 2][0][c][d % 2].
    std::vector<float> hand;
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 3; ++b)
            for (int c = 0; c < 3; ++c)
                for (int d = 0; d < 4; ++d) hand.push_back(x[((a % 2) * 3 + c) * 2 + d % 2]);
    assert_exactly(floats(got[0]), hand);
    std::vector<std::int32_t> ints(12);
    for (int i = 0; i < 12; ++i) ints[i] = 1 << i;
    auto [want_i, got_i] = both([] { return tile_graph(DType::int32); }, {raw(ints)});
    compare(got_i[0], want_i[0], 0, "tile int32");
}

// ----- a chain through the arena ------------------------------------------------------

void a_conv_pool_chain_reuses_arena_bytes(void**)
{
    // x -> CONV2D 3x3 pad 1 -> a [1,8,8,4] -> AVG_POOL2D 2x2 stride 2 -> b [1,4,4,4]
    // -> DEPTHWISE_CONV2D 3x3 pad 1 -> c [1,4,4,4] -> AVG_POOL2D -> out [1,2,2,4].
    // a is dead once b is written, so the packer gives c a's bytes: a missing
    // barrier (c's writes against the pool's reads of a) changes the result.
    const auto make = [] {
        tosa::GraphBuilder g;
        const auto x = f32(g, "x", {1, 8, 8, 2});
        const auto w1 = f32(g, "w1", {4, 3, 3, 2});
        const auto w2 = f32(g, "w2", {3, 3, 4, 1});
        const auto bias = f32(g, "bias", {4});
        const auto a = f32(g, "a", {1, 8, 8, 4});
        const auto b = f32(g, "b", {1, 4, 4, 4});
        const auto c = f32(g, "c", {1, 4, 4, 4});
        const auto out = f32(g, "out", {1, 2, 2, 4});
        const auto conv = tosa::conv_attr({1, 1, 1, 1}, {1, 1}, {1, 1});
        const auto pool = tosa::pool_attr({2, 2}, {2, 2}, {0, 0, 0, 0});
        g.op(Op::conv2d, {x, w1, bias, zp(g, "z1"), zp(g, "z2")}, {a}, conv);
        g.op(Op::avg_pool2d, {a, zp(g, "z3"), zp(g, "z4")}, {b}, pool);
        g.op(Op::depthwise_conv2d, {b, w2, bias, zp(g, "z5"), zp(g, "z6")}, {c}, conv);
        g.op(Op::avg_pool2d, {c, zp(g, "z7"), zp(g, "z8")}, {out}, pool);
        for (auto t : {x, w1, w2, bias}) g.input(t);
        g.output(out);
        return g.finish();
    };
    {
        const tosa::Graph graph = make();
        auto analysis = tosa::analyze(graph);
        assert_ok(analysis);
        auto plan = tosa::plan_block(graph, *analysis, tosa::BlockRef{0, 0}, {},
                                     [](const tosa::OperatorView& view) {
                                         return vaccel::backend::vulkan::lower(view, {});
                                     });
        assert_ok(plan);
        const auto& block = graph.regions[0].blocks[0];
        std::uint32_t a = 0, c = 0;
        for (std::uint32_t t = 0; t < block.tensors.size(); ++t) {
            if (block.tensors[t].name == "a") a = t;
            if (block.tensors[t].name == "c") c = t;
        }
        assert_true(plan->locations[a].is_arena() && plan->locations[c].is_arena());
        assert_int_equal(plan->locations[c].offset, plan->locations[a].offset);
        assert_int_equal(plan->dispatches.size(), 4);
        for (std::size_t i = 1; i < 4; ++i) assert_true(plan->dispatches[i].barrier_before);
    }
    auto [want, got] = both(make, {raw(sample(128, 100)), raw(sample(72, 101)),
                                   raw(sample(36, 102)), raw(sample(4, 103))});
    compare(got[0], want[0], 1e-5f, "conv pool chain");
}

// ----- the descriptor and refusals ------------------------------------------------------

void the_descriptor_lists_exactly_the_spatial_kernels(void**)
{
    auto backend = lavapipe();
    const auto descriptors = backend->tosa_descriptors();
    assert_int_equal(descriptors.size(), 1);
    const tosa::CapabilityDescriptor& d = descriptors[0];
    using C = tosa::OperatorConstraint;
    const auto zero_points = tosa::constraint_bit(C::zero_zero_points);
    const auto constants = tosa::constraint_bit(C::constant_parameters);
    // lavapipe has 8- and 16-bit storage: BF16 and the FP8 copies too.
    const std::vector<DType> floats{DType::fp32, DType::fp16, DType::bf16};
    const std::vector<DType> copies{DType::boolean, DType::int32,   DType::fp32,   DType::fp16,
                                    DType::bf16,    DType::fp8e4m3, DType::fp8e5m2};
    const std::vector<tosa::OperatorCapability> want{
        {Op::conv2d, zero_points, floats},
        {Op::depthwise_conv2d, zero_points, floats},
        {Op::avg_pool2d, zero_points, floats},
        {Op::resize, constants, {DType::fp32}},
        {Op::gather, 0, {DType::int32, DType::fp32}},
        {Op::pad, constants, copies},
        {Op::slice, constants, copies},
        {Op::tile, constants, copies},
    };
    for (const auto& w : want) {
        const tosa::OperatorCapability* got = d.operator_capability(w.op);
        if (got == nullptr) fail_msg("operator %u is not advertised", static_cast<unsigned>(w.op));
        assert_true(*got == w);
    }
    // Nothing else beyond the FP32 tier and CAST (lavapipe has 8- and 16-bit
    // storage: test_programs_half.cpp), and GATHER's index condition advisory.
    assert_true(d.supports_operator(Op::cast));
    assert_int_equal(d.operators.size(), tosa::fp32_tier().operators.size() + want.size() + 1);
    assert_int_equal(static_cast<int>(d.graph.runtime_conditions),
                     static_cast<int>(tosa::RuntimeConditionSupport::advisory_only));
    // Operators the device has no kernel for stay out.
    for (Op op : {Op::transpose_conv2d, Op::conv3d, Op::scatter, Op::fft2d})
        assert_true(d.operator_capability(op) == nullptr);
}

void a_zero_point_on_a_float_conv_is_refused(void**)
{
    const ConvCase c{Op::conv2d, {1, 2, 2, 1}, {1, 2, 2, 1}, {1}, {1, 1, 1, 1},
                     {0, 0, 0, 0}, {1, 1}, {1, 1}};
    Rig gpu = vulkan_rig();
    auto loaded = gpu.load(conv_graph(c, 0.5f));
    assert_refused(loaded, Errc::unsupported, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_BAD_ATTRIBUTE,
                   static_cast<std::uint64_t>(Op::conv2d));
    assert_true(loaded.error().note.find("zero point operand 3 ('in_zp') is not a serialized "
                                         "zero") != std::string::npos);
    gpu.finish();
}

void dtypes_and_shapes_no_kernel_runs_are_refused_at_load(void**)
{
    Rig gpu = vulkan_rig();
    // BOOL GATHER: BOOL is a descriptor dtype, but gather.comp moves 32-bit words.
    assert_refused(gpu.load(gather_graph(DType::boolean)), Errc::unsupported, VACCEL_D_TOSA_DTYPE,
                   static_cast<std::uint64_t>(DType::boolean),
                   static_cast<std::uint64_t>(Op::gather));
    // INT32 AVG_POOL2D: INT32 is a descriptor dtype; the kernel averages FP32.
    {
        tosa::GraphBuilder g;
        const auto x = g.tensor("x", {1, 2, 2, 1}, DType::int32);
        const auto y = g.tensor("y", {1, 1, 1, 1}, DType::int32);
        const auto z = g.tensor("zp", {1}, DType::int32, {0, 0, 0, 0});
        g.op(Op::const_, {}, {z});
        g.op(Op::avg_pool2d, {x, z, z}, {y}, tosa::pool_attr({2, 2}, {1, 1}, {0, 0, 0, 0}));
        g.input(x);
        g.output(y);
        assert_refused(gpu.load(g.finish()), Errc::unsupported, VACCEL_D_TOSA_DTYPE,
                       static_cast<std::uint64_t>(DType::int32),
                       static_cast<std::uint64_t>(Op::avg_pool2d));
    }
    // A pad as large as the kernel: a window of padding only has no divisor.
    assert_refused(gpu.load(avg_pool_graph({1, 3, 3, 1}, {1, 3, 2, 1}, {2, 2}, {1, 1}, {2, 0, 0, 0})),
                   Errc::invalid_argument, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_BAD_ATTRIBUTE,
                   static_cast<std::uint64_t>(Op::avg_pool2d));
    // Stride 2 over a padded extent of 3: (4 - 1 + 0 - 0) / 2 is not exact.
    const ConvCase odd{Op::conv2d, {1, 4, 4, 1}, {1, 1, 1, 1}, {1}, {1, 2, 2, 1},
                       {0, 0, 0, 0}, {2, 2}, {1, 1}};
    assert_refused(gpu.load(conv_graph(odd)), Errc::invalid_argument, VACCEL_D_TOSA_GRAPH,
                   VACCEL_TOSA_BAD_ATTRIBUTE, static_cast<std::uint64_t>(Op::conv2d));
    gpu.finish();
}

}  // namespace

int main()
{
    unsetenv("VACCEL_VULKAN_MATMUL_TILES");
    unsetenv("VACCEL_VULKAN_CONV");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(conv2d_matches_the_cpu),
        cmocka_unit_test(conv2d_by_hand_skips_padding),
        cmocka_unit_test(conv2d_gemm_matches_on_the_device_path),
        cmocka_unit_test(conv2d_gemm_matches_on_the_shared_path),
        cmocka_unit_test(conv2d_gemm_reads_arena_operands),
        cmocka_unit_test(vaccel_vulkan_conv_chooses_the_kernel),
        cmocka_unit_test(depthwise_conv2d_matches_the_cpu),
        cmocka_unit_test(avg_pool2d_divides_by_the_input_elements_only),
        cmocka_unit_test(resize_upscales_by_hand),
        cmocka_unit_test(resize_matches_the_cpu_up_and_down),
        cmocka_unit_test(gather_copies_repeated_and_boundary_rows),
        cmocka_unit_test(pad_fills_with_a_non_zero_constant),
        cmocka_unit_test(slice_copies_from_an_offset),
        cmocka_unit_test(tile_repeats_a_rank_4_tensor),
        cmocka_unit_test(a_conv_pool_chain_reuses_arena_bytes),
        cmocka_unit_test(the_descriptor_lists_exactly_the_spatial_kernels),
        cmocka_unit_test(a_zero_point_on_a_float_conv_is_refused),
        cmocka_unit_test(dtypes_and_shapes_no_kernel_runs_are_refused_at_load),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
