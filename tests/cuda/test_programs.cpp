// test_programs.cpp - TOSA programs on the first CUDA device: the shared
// GPU lowering on kernels/cuda, and every MATMUL kernel (general, streaming,
// FP32 tiles, FP16 tensor cores and their variants) on shapes that select
// it, against the CPU backend and a float64 reference
// (matmul_test_support.hpp), and CONV2D on both implicit-GEMM tiles and
// both load paths (test_cuda_conv_lowering.cpp says which shape takes
// which) against a float64 reference. The operator suites of the CPU backend run on
// the device as cuda.conformance.*.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "../cpu/matmul_test_support.hpp"
#include "conv_graphs.hpp"
#include "epilogue_graphs.hpp"
#include "cuda_test_support.hpp"
#include "lowering_matmul.hpp"

namespace {

using namespace cuda_test;
using conv_test::Conv;
using conv_test::ConvReference;
using conv_test::conv_graph;
using conv_test::conv_reference;

const DeviceRig device = [] { return cuda_rig(); };

void a_program_runs_exactly(void**)
{
    Rig gpu = cuda_rig();
    auto p = gpu.must_load(doubling(1000));
    std::vector<float> x(1000), want(1000);
    for (int i = 0; i < 1000; ++i) {
        x[i] = static_cast<float>(i) * 0.37f - 100.0f;
        want[i] = x[i] + x[i];
    }
    auto in = gpu.buffer_with(x), out = gpu.buffer(4000);
    auto event = cpu_test::submit(*gpu.backend, *gpu.queue, *p, gpu.bind(*p, {in.get(), out.get()}), 0);
    assert_ok(event);
    assert_int_equal(static_cast<int>(gpu.wait(**event).state),
                     static_cast<int>(EventState::complete));
    assert_ok(gpu.backend->destroy_event(*event));
    assert_exactly(gpu.read(*out, 1000), want);
    assert_ok(gpu.backend->free_buffer(in));
    assert_ok(gpu.backend->free_buffer(out));
    gpu.finish(p);
}

// Two queues (two streams) run one program at once with different inputs:
// the runs share the program's arena, so the second waits for the first,
// and both results are right.
void runs_of_one_program_on_two_queues_do_not_mix(void**)
{
    Rig gpu = cuda_rig();
    auto p = gpu.must_load(matmul_of_arena_operands(1, 64, 64, 64));
    auto q2 = gpu.backend->create_queue(*gpu.context);
    assert_ok(q2);
    std::vector<float> a1(64 * 64), b1(64 * 64), a2(64 * 64), b2(64 * 64);
    for (int i = 0; i < 64 * 64; ++i) {
        a1[i] = static_cast<float>(i % 7);
        b1[i] = 1.0f;
        a2[i] = static_cast<float>(i % 5);
        b2[i] = 2.0f;
    }
    auto ba1 = gpu.buffer_with(a1), bb1 = gpu.buffer_with(b1), o1 = gpu.buffer(64 * 64 * 4);
    auto ba2 = gpu.buffer_with(a2), bb2 = gpu.buffer_with(b2), o2 = gpu.buffer(64 * 64 * 4);
    auto e1 = cpu_test::submit(*gpu.backend, *gpu.queue, *p,
                               gpu.bind(*p, {ba1.get(), bb1.get(), o1.get()}), 0);
    auto e2 = cpu_test::submit(*gpu.backend, **q2, *p,
                               gpu.bind(*p, {ba2.get(), bb2.get(), o2.get()}), 0);
    assert_ok(e1);
    assert_ok(e2);
    assert_int_equal(static_cast<int>(gpu.wait(**e1).state), static_cast<int>(EventState::complete));
    assert_int_equal(static_cast<int>(gpu.wait(**e2).state), static_cast<int>(EventState::complete));
    const auto r1 = gpu.read(*o1, 64 * 64), r2 = gpu.read(*o2, 64 * 64);
    for (int y = 0; y < 64; ++y) {
        float s1 = 0, s2 = 0;
        for (int k = 0; k < 64; ++k) {
            s1 += a1[y * 64 + k];
            s2 += 2 * a2[y * 64 + k];
        }
        assert_true(r1[y * 64] == s1 && r1[y * 64 + 63] == s1);
        assert_true(r2[y * 64] == s2 && r2[y * 64 + 63] == s2);
    }
    assert_ok(gpu.backend->destroy_event(*e1));
    assert_ok(gpu.backend->destroy_event(*e2));
    for (auto* b : {&ba1, &bb1, &o1, &ba2, &bb2, &o2}) assert_ok(gpu.backend->free_buffer(*b));
    assert_ok(gpu.backend->destroy_queue(*q2));
    gpu.finish(p);
}

const Shape fp32_shapes[] = {
    {1, 1, 37, 1},    {1, 3, 300, 77},  {2, 4, 19, 45},   // streaming (H <= 4)
    {3, 7, 33, 29},   {1, 257, 129, 65},                  // general
    // 128 x 128 SIMT tiles (at least one a multiprocessor), whole and ragged.
    {1, 1536, 64, 1536}, {1, 1540, 36, 1500},
    // Fewer: 64 x 64 tiles (test_cuda_matmul_lowering.cpp says which), not
    // split (s1), split by 4, 8 (ragged along H and W), 2, and 8 over 3 batches.
    {1, 128, 64, 128}, {2, 36, 20, 44}, {1, 300, 260, 132}, {1, 100, 768, 132},
    {1, 128, 136, 768}, {3, 70, 520, 68},
};

void fp32_matmul_matches_on_every_kernel(void**)
{
    std::uint32_t seed = 10;
    for (const Shape& s : fp32_shapes) check_fp32(device, s, seed += 2);
    check_fp32(device, {1, 64, 32, 48}, seed += 2, true);  // operands in the arena
}

void fp16_matmul_matches_exactly_on_every_kernel(void**)
{
    const Shape to_fp32[] = {{1, 1, 300, 77}, {3, 7, 33, 29},   {1, 257, 129, 65},
                             {2, 64, 48, 96}, {1, 128, 256, 160}, {1, 256, 40, 264},
                             {2, 136, 64, 256}};
    std::uint32_t seed = 120;
    for (const Shape& s : to_fp32) check_fp16(device, s, DType::fp32, seed += 2);
    const Shape to_fp16[] = {{1, 1, 7, 1}, {1, 3, 7, 13}, {2, 5, 7, 31}, {1, 67, 7, 65},
                             {1, 128, 8, 256}};
    for (const Shape& s : to_fp16) check_fp16(device, s, DType::fp16, seed += 2);
}

// Every FP16 tensor-core variant (VACCEL_CUDA_MATMUL_F16) on shapes that
// take it: whole and ragged tiles, K tails, batches, both result dtypes.
void fp16_matmul_matches_exactly_on_every_variant(void**)
{
    const Shape to_fp32[] = {{1, 128, 256, 160}, {1, 256, 40, 264}, {2, 136, 64, 256},
                             {1, 300, 520, 392}, {1, 256, 1024, 136}};
    // An FP16 result is exact only for short sums of these operands: C = 8.
    const Shape to_fp16[] = {{1, 128, 8, 256}, {1, 67, 8, 72}, {2, 264, 8, 520}};
    for (const auto& v : vaccel::backend::cuda::matmul_f16_variants()) {
        setenv("VACCEL_CUDA_MATMUL_F16", v.name, 1);
        std::uint32_t seed = 300;
        for (const Shape& s : to_fp32) check_fp16(device, s, DType::fp32, seed += 2);
        for (const Shape& s : to_fp16) check_fp16(device, s, DType::fp16, seed += 2);
        unsetenv("VACCEL_CUDA_MATMUL_F16");
    }
}

// Runs are replayed CUDA graphs, one per set of buffers: six sets of
// buffers (past the four kept), each run twice in turn with its own input,
// every result exact (a replay on another set's addresses would read that
// set's input); the same with VACCEL_CUDA_GRAPHS=0; any other value is
// refused at load.
void runs_replay_the_graph_of_their_buffers(void**)
{
    for (const char* graphs : {"1", "0"}) {
        setenv("VACCEL_CUDA_GRAPHS", graphs, 1);
        Rig gpu = cuda_rig();
        auto p = gpu.must_load(doubling(256));
        std::vector<std::unique_ptr<Buffer>> ins, outs;
        for (int set = 0; set < 6; ++set) {
            std::vector<float> x(256, static_cast<float>(set) + 0.25f);
            ins.push_back(gpu.buffer_with(x));
            outs.push_back(gpu.buffer(256 * 4));
        }
        for (int round = 0; round < 2; ++round)
            for (int set = 0; set < 6; ++set) {
                assert_ok(gpu.backend->write_buffer(
                    *ins[set], 0,
                    bytes_of(std::vector<float>(256, static_cast<float>(set * 10 + round)))));
                auto event = cpu_test::submit(*gpu.backend, *gpu.queue, *p,
                                              gpu.bind(*p, {ins[set].get(), outs[set].get()}), 0);
                assert_ok(event);
                assert_int_equal(static_cast<int>(gpu.wait(**event).state),
                                 static_cast<int>(EventState::complete));
                assert_ok(gpu.backend->destroy_event(*event));
                assert_exactly(gpu.read(*outs[set], 256),
                               std::vector<float>(256, static_cast<float>(2 * (set * 10 + round))));
            }
        for (auto& b : ins) assert_ok(gpu.backend->free_buffer(b));
        for (auto& b : outs) assert_ok(gpu.backend->free_buffer(b));
        gpu.finish(p);
    }
    setenv("VACCEL_CUDA_GRAPHS", "yes", 1);
    Rig gpu = cuda_rig();
    auto refused = gpu.load(doubling(16));
    assert_false(refused.has_value());
    assert_int_equal(static_cast<int>(refused.error().code), static_cast<int>(Errc::invalid_argument));
    assert_string_equal(refused.error().note.c_str(),
                        "VACCEL_CUDA_GRAPHS=\"yes\" is neither 1 (record each run as a CUDA "
                        "graph, the default) nor 0 (launch every kernel of every run)");
    unsetenv("VACCEL_CUDA_GRAPHS");
}

// Elements of a tensor of `shape`.
std::size_t count(const std::vector<std::int64_t>& shape)
{
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    return n;
}

// Values in [-1, 1) from a 32-bit LCG.
std::vector<float> uniform(std::size_t count, std::uint32_t seed)
{
    std::vector<float> v(count);
    for (float& x : v) {
        seed = seed * 1664525u + 1013904223u;
        x = static_cast<float>(seed >> 8) / 8388608.0f - 1.0f;
    }
    return v;
}

// Each result within 8 sqrt(K + 1) units of 2^-24 of the sum of its terms'
// magnitudes: FMA sums in tile order round about that much, one wrong or
// missing tap (a term of about magnitude / K) is well past it.
void check_conv(const Conv& c, std::uint32_t seed)
{
    Rig gpu = cuda_rig();
    auto p = gpu.must_load(conv_graph(c));
    const auto x = uniform(count(c.input), seed), w = uniform(count(c.weight), seed + 1),
               b = uniform(static_cast<std::size_t>(c.bias_extent()), seed + 2);
    const auto got = gpu.run(*p, {x, w, b})[0];
    const ConvReference want = conv_reference(c, x, w, b);
    assert_int_equal(got.size(), want.value.size());
    const double k = static_cast<double>(c.kh() * c.kw() * c.input[3]);
    const double unit = 8.0 * std::sqrt(k + 1.0) * std::ldexp(1.0, -24);
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::abs(got[i] - want.value[i]) > unit * want.magnitude[i] + 1e-30)
            fail_msg("conv [%lld,%lld,%lld,%lld] * [%lld,%lld,%lld,%lld] result %zu: %.9g, want "
                     "%.9g (bound %.3g)",
                     static_cast<long long>(c.input[0]), static_cast<long long>(c.input[1]),
                     static_cast<long long>(c.input[2]), static_cast<long long>(c.input[3]),
                     static_cast<long long>(c.weight[0]), static_cast<long long>(c.weight[1]),
                     static_cast<long long>(c.weight[2]), static_cast<long long>(c.weight[3]), i,
                     static_cast<double>(got[i]), want.value[i], unit * want.magnitude[i]);
    gpu.finish(p);
}

// FP16 CONV2D on multiples of 1/8 in [-2, 2]: every product and partial
// sum is exact in FP32, so each result is the float64 one rounded to FP16
// once (within half a unit of FP16's last place), whatever the order.
void check_conv_fp16(Conv c, std::uint32_t seed)
{
    c.dtype = DType::fp16;
    Rig gpu = cuda_rig();
    auto p = gpu.must_load(conv_graph(c));
    const auto x = eighths(count(c.input), seed), w = eighths(count(c.weight), seed + 1),
               b = eighths(static_cast<std::size_t>(c.bias_extent()), seed + 2);
    std::vector<std::vector<std::uint16_t>> halves(3);
    for (std::size_t k = 0; k < 3; ++k)
        for (float v : k == 0 ? x : k == 1 ? w : b) halves[k].push_back(half_of(v));
    std::vector<std::span<const std::byte>> in;
    for (const auto& h : halves) in.push_back(std::as_bytes(std::span(h)));
    const auto out = gpu.run_raw(*p, in)[0];
    const ConvReference want = conv_reference(c, x, w, b);
    assert_int_equal(out.size(), want.value.size() * 2);
    for (std::size_t i = 0; i < want.value.size(); ++i) {
        std::uint16_t h = 0;
        std::memcpy(&h, out.data() + 2 * i, 2);
        const double got = float_of_half(h);
        if (std::abs(got - want.value[i]) > std::ldexp(std::abs(want.value[i]), -11) + 0x1p-25)
            fail_msg("FP16 conv [%lld,%lld,%lld,%lld] result %zu: %.9g, want %.9g",
                     static_cast<long long>(c.input[0]), static_cast<long long>(c.input[1]),
                     static_cast<long long>(c.input[2]), static_cast<long long>(c.input[3]), i,
                     got, want.value[i]);
    }
    gpu.finish(p);
}

void conv2d_matches_float64_on_every_gemm_kernel(void**)
{
    const Conv cases[] = {
        // 128 x 128 tiles: float4 path (OC 8; OC 132 ragged along OC), element path (IC 3).
        {{1, 184, 184, 8}, {8, 3, 3, 8}, {1, 1, 1, 1}, {1, 1}, {1, 1}},
        {{1, 130, 130, 4}, {132, 1, 1, 4}, {0, 0, 0, 0}, {1, 1}, {1, 1}},
        {{1, 184, 184, 3}, {8, 3, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}},
        // 64 x 64 tiles: a deep layer (K = 4608), strides, dilation and
        // uneven padding on the element path, a bias of [1], a batch.
        {{1, 7, 7, 512}, {512, 3, 3, 512}, {1, 1, 1, 1}, {1, 1}, {1, 1}},
        {{2, 17, 15, 6}, {10, 3, 3, 6}, {1, 1, 2, 1}, {2, 1}, {1, 2}},
        {{1, 16, 16, 8}, {16, 3, 3, 8}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1},
        {{3, 12, 12, 16}, {24, 5, 5, 16}, {2, 1, 2, 1}, {2, 2}, {1, 1}},
        // Split over K (test_cuda_conv_lowering.cpp says which): 8 (the deep
        // layer above), 4 and 2 on the float4 path; 8 on the element path
        // with K ranges that start inside a pixel's channels and a ragged
        // second tile along M; 8 with a bias of [1].
        {{1, 56, 56, 64}, {64, 3, 3, 64}, {1, 1, 1, 1}, {1, 1}, {1, 1}},
        {{1, 7, 7, 192}, {64, 1, 1, 192}, {0, 0, 0, 0}, {1, 1}, {1, 1}},
        {{1, 9, 9, 130}, {20, 3, 3, 130}, {1, 1, 1, 1}, {1, 1}, {1, 1}},
        {{1, 7, 7, 64}, {32, 3, 3, 64}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1},
    };
    std::uint32_t seed = 700;
    for (const Conv& c : cases) check_conv(c, seed += 3);
    // FP16: both tiles, both paths, acc_type FP32 (conv_graph's), on the
    // FP32 cores (the default) and on the tensor cores.
    for (const Conv& c : cases) check_conv_fp16(c, seed += 3);
    setenv("VACCEL_CUDA_CONV_MMA", "1", 1);
    for (const Conv& c : cases) check_conv_fp16(c, seed += 3);
    unsetenv("VACCEL_CUDA_CONV_MMA");
}

// The CONV2D shapes of the kernel families (test_cuda_conv_lowering.cpp):
// 128 x 128 tiles on both paths, 64 x 64 alone, split by 8, 4 and 2, the
// element path with K ranges inside a pixel, a bias of [1].
const Conv tf32_convs[] = {
    {{1, 184, 184, 8}, {8, 3, 3, 8}, {1, 1, 1, 1}, {1, 1}, {1, 1}},
    {{1, 184, 184, 3}, {8, 3, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}},
    {{2, 17, 15, 6}, {10, 3, 3, 6}, {1, 1, 2, 1}, {2, 1}, {1, 2}},
    {{1, 7, 7, 512}, {512, 3, 3, 512}, {1, 1, 1, 1}, {1, 1}, {1, 1}},
    {{1, 56, 56, 64}, {64, 3, 3, 64}, {1, 1, 1, 1}, {1, 1}, {1, 1}},
    {{1, 7, 7, 192}, {64, 1, 1, 192}, {0, 0, 0, 0}, {1, 1}, {1, 1}},
    {{1, 9, 9, 130}, {20, 3, 3, 130}, {1, 1, 1, 1}, {1, 1}, {1, 1}},
    {{1, 16, 16, 8}, {16, 3, 3, 8}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1},
};
// MATMUL shapes of the TF32 kernels: 128 x 128 tiles, 64 x 64 alone (s1),
// split by 8, 4 and 2, over batches.
const Shape tf32_matmuls[] = {{1, 1536, 64, 1536}, {1, 128, 64, 128}, {1, 128, 768, 768},
                              {1, 300, 260, 132},  {1, 128, 136, 768}, {3, 70, 520, 68}};

// [devices.cuda] fp32_math = "tf32": FP32 CONV2D and MATMUL on the TF32
// tensor cores. On multiples of 1/8 in [-2, 2] (exact in TF32, every
// product and partial sum exact in FP32) every result equals the float64
// one exactly, so each kernel's fragments, tiles and stores are right. On
// values with full FP32 mantissas the results differ from the default
// (FP32) device's, which shows the opt-in is what ran, and stay within
// TF32's bound: each operand rounded by at most 2^-11 relative, so each
// result within 2^-10 (plus the FP32 sums' rounding) of its terms'
// magnitudes.
void tf32_is_an_opt_in_exact_on_tf32_values(void**)
{
    CudaOptions tf32;
    tf32.fp32_math = Fp32Math::tf32;
    std::uint32_t seed = 900;
    for (const Conv& c : tf32_convs) {
        Rig gpu = cuda_rig(tf32);
        auto p = gpu.must_load(conv_graph(c));
        const auto x = eighths(count(c.input), seed), w = eighths(count(c.weight), seed + 1),
                   b = eighths(static_cast<std::size_t>(c.bias_extent()), seed + 2);
        seed += 3;
        const auto got = gpu.run(*p, {x, w, b})[0];
        const ConvReference want = conv_reference(c, x, w, b);
        assert_int_equal(got.size(), want.value.size());
        for (std::size_t i = 0; i < got.size(); ++i)
            if (static_cast<double>(got[i]) != want.value[i])
                fail_msg("TF32 conv [%lld,%lld,%lld,%lld] * OC %lld result %zu: %.9g, want %.9g",
                         static_cast<long long>(c.input[0]), static_cast<long long>(c.input[1]),
                         static_cast<long long>(c.input[2]), static_cast<long long>(c.input[3]),
                         static_cast<long long>(c.weight[0]), i, static_cast<double>(got[i]),
                         want.value[i]);
        gpu.finish(p);
    }
    const DeviceRig tf32_device = [tf32] { return cuda_rig(tf32); };
    for (const Shape& s : tf32_matmuls) check_fp16_values_in_fp32(tf32_device, s, seed += 2);

    // Full mantissas: the 64 x 64 kernel split by 8 (K = 4608).
    const Conv& deep = tf32_convs[3];
    const auto x = uniform(count(deep.input), 77), w = uniform(count(deep.weight), 78),
               b = uniform(static_cast<std::size_t>(deep.bias_extent()), 79);
    std::vector<float> results[2];
    for (int opted = 0; opted < 2; ++opted) {
        Rig gpu = opted == 1 ? cuda_rig(tf32) : cuda_rig();
        auto p = gpu.must_load(conv_graph(deep));
        results[opted] = gpu.run(*p, {x, w, b})[0];
        gpu.finish(p);
    }
    const ConvReference want = conv_reference(deep, x, w, b);
    const double k = static_cast<double>(deep.kh() * deep.kw() * deep.input[3]);
    const double bound = std::ldexp(1.0, -10) + 8.0 * std::sqrt(k + 1.0) * std::ldexp(1.0, -24);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < want.value.size(); ++i) {
        differ += results[0][i] != results[1][i];
        if (std::abs(results[1][i] - want.value[i]) > bound * want.magnitude[i])
            fail_msg("TF32 conv result %zu: %.9g, want %.9g within %.3g", i,
                     static_cast<double>(results[1][i]), want.value[i], bound * want.magnitude[i]);
    }
    if (differ * 2 < want.value.size())
        fail_msg("fp32_math = tf32 changed only %zu of %zu results: the TF32 kernels did not run",
                 differ, want.value.size());
}

}  // namespace

// Elementwise chains folded into their producers (epilogue_graphs.hpp):
// every CONV2D GEMM kernel path applies them at its store, the elementwise
// kernel after its own operation, other producers through the pass.
void fused_chains_equal_unfused_ones(void**)
{
    epilogue_test::check_every_chain([] { return cuda_rig(); });
}

int main()
{
    cuda_test::require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_program_runs_exactly),
        cmocka_unit_test(runs_of_one_program_on_two_queues_do_not_mix),
        cmocka_unit_test(fp32_matmul_matches_on_every_kernel),
        cmocka_unit_test(fp16_matmul_matches_exactly_on_every_kernel),
        cmocka_unit_test(fp16_matmul_matches_exactly_on_every_variant),
        cmocka_unit_test(conv2d_matches_float64_on_every_gemm_kernel),
        cmocka_unit_test(tf32_is_an_opt_in_exact_on_tf32_values),
        cmocka_unit_test(runs_replay_the_graph_of_their_buffers),
        cmocka_unit_test(fused_chains_equal_unfused_ones),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
