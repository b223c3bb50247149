// test_cuda_matmul_lowering.cpp - the CUDA MATMUL lowering
// (backends/cuda/src/lowering_matmul.hpp): the kernel table, the kernel
// each shape and dtype takes with its spec words and work, the dtype
// refusals and the FP16 variant override (VACCEL_CUDA_MATMUL_F16). Pure: no
// device.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lowering_matmul.hpp"
#include "vaccel/gpu/lowering.hpp"
#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/plan.hpp"

#include "cmocka.hpp"

namespace {

using namespace vaccel;
using vaccel::backend::cuda::lower_matmul;
using vaccel::backend::cuda::matmul_f16_variants;
using vaccel::backend::cuda::matmul_kernels;
using vaccel::backend::cuda::MatmulKernelId;
using tosa::DType;
using tosa::Op;
using Words = std::vector<std::uint32_t>;

std::uint32_t zero_of(tosa::GraphBuilder& g, const char* name, DType dtype)
{
    const std::uint32_t t =
        g.tensor(name, {1}, dtype, std::vector<std::uint8_t>(tosa::dtype_bytes(dtype), 0));
    g.op(Op::const_, {}, {t});
    return t;
}

tosa::Graph matmul_graph(DType in, DType out, std::int64_t n, std::int64_t h, std::int64_t c,
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

// The plan of `graph` for a device of compute capability `cc` (0: unknown)
// with `sms` multiprocessors (0: unknown).
Result<tosa::ProgramPlan> plan(const tosa::Graph& graph, std::uint32_t cc = 0,
                               std::uint32_t sms = 0,
                               backend::Fp32Math math = backend::Fp32Math::fp32)
{
    auto analysis = tosa::analyze(graph);
    if (!analysis) return std::unexpected(analysis.error());
    return tosa::plan_block(graph, *analysis, tosa::BlockRef{0, 0}, {},
                            [cc, sms, math](const tosa::OperatorView& view) {
                                return backend::gpu::lower(
                                    view, [cc, sms, math](const tosa::OperatorView& v) {
                                        return lower_matmul(v, cc, sms, math);
                                    });
                            });
}

tosa::KernelSpec planned(const tosa::Graph& graph, std::uint32_t sms = 0,
                         backend::Fp32Math math = backend::Fp32Math::fp32)
{
    auto p = plan(graph, 0, sms, math);
    if (!p) fail_msg("unexpected refusal: %s", p.error().note.c_str());
    assert_int_equal(p->dispatches.size(), 1);
    return p->dispatches[0].kernel;
}

std::uint32_t id(MatmulKernelId k) { return static_cast<std::uint32_t>(k); }

void the_kernel_table_is_numbered_from_14(void**)
{
    const auto table = matmul_kernels();
    assert_int_equal(table.size(), 22);
    // 14..26, then the 64 x 64 FP32 kernels 37..40 of conv2d_gemm.cu, then
    // the TF32 ones 51..55 of conv2d_gemm_mma.cu.
    const char* t64[] = {"vaccel_matmul_f32_t64_s1", "vaccel_matmul_f32_t64_s2",
                         "vaccel_matmul_f32_t64_s4", "vaccel_matmul_f32_t64_s8",
                         "vaccel_matmul_tf32_t128",  "vaccel_matmul_tf32_t64_s1",
                         "vaccel_matmul_tf32_t64_s2", "vaccel_matmul_tf32_t64_s4",
                         "vaccel_matmul_tf32_t64_s8"};
    for (std::size_t i = 13; i < table.size(); ++i) {
        assert_int_equal(table[i].id, i < 17 ? 37 + (i - 13) : 51 + (i - 17));
        assert_string_equal(table[i].function, t64[i - 13]);
        assert_string_equal(table[i].module, i < 17 ? "conv2d_gemm" : "conv2d_gemm_mma");
        assert_int_equal(table[i].block_threads, 256);
        assert_int_equal(table[i].dynamic_shared_bytes + table[i].only_cc, 0);
    }
    for (std::size_t i = 0; i < 13; ++i) {
        assert_int_equal(table[i].id, 14 + i);
        assert_int_equal(table[i].block_threads,
                         table[i].id == id(MatmulKernelId::f16_t128x128) ? 128 : 256);
        assert_int_equal(table[i].only_cc, table[i].id >= id(MatmulKernelId::f16_wgmma) ? 90 : 0);
    }
    assert_string_equal(table[0].function, "vaccel_matmul_general");
    assert_string_equal(table[1].function, "vaccel_matmul_rows");
    assert_string_equal(table[2].function, "vaccel_matmul_f32_simt");
    assert_string_equal(table[3].function, "vaccel_matmul_f16_tc");
    assert_string_equal(table[0].module, "matmul");
    assert_string_equal(table[1].module, "matmul");
    assert_string_equal(table[2].module, "matmul_f32");
    assert_string_equal(table[3].module, "matmul_f16");
    // 4 stages * (128 * 32 + 32 * 256) halves.
    assert_int_equal(table[3].dynamic_shared_bytes, 98304);
    assert_int_equal(table[0].dynamic_shared_bytes + table[1].dynamic_shared_bytes +
                         table[2].dynamic_shared_bytes,
                     0);
    // The variants: module matmul_f16_mma, but wgmma in its own sm_90a module.
    for (std::size_t i = 4; i < 10; ++i) {
        assert_string_equal(table[i].module, "matmul_f16_mma");
        assert_true(std::strncmp(table[i].function, "vaccel_matmul_f16_t", 19) == 0);
    }
    assert_string_equal(table[10].function, "vaccel_matmul_f16_wgmma");
    assert_string_equal(table[11].function, "vaccel_matmul_f16_wgmma128");
    assert_string_equal(table[12].function, "vaccel_matmul_f16_wgmma128d");
    for (std::size_t i = 10; i < 13; ++i) assert_string_equal(table[i].module, "matmul_f16_wgmma");
    // stages * (bm * bk + bk * bn) * 2 bytes; wgmma 1024 more to align.
    assert_int_equal(table[5].dynamic_shared_bytes, 4 * (128 * 32 + 32 * 256) * 2);
    assert_int_equal(table[6].dynamic_shared_bytes, 3 * (128 * 64 + 64 * 256) * 2);
    assert_int_equal(table[8].dynamic_shared_bytes, 4 * (128 * 32 + 32 * 128) * 2);
    assert_int_equal(table[10].dynamic_shared_bytes, 4 * (128 * 64 + 64 * 256) * 2 + 1024);
    assert_int_equal(table[11].dynamic_shared_bytes, 3 * (128 * 64 + 64 * 128) * 2 + 1024);
    assert_int_equal(table[12].dynamic_shared_bytes, 6 * (128 * 64 + 64 * 128) * 2 + 1024);
    for (const auto& k : table) assert_true(k.dynamic_shared_bytes <= 227 * 1024);
}

void each_shape_takes_its_kernel(void**)
{
    // Spec: N H C W, out/A/B buffer and base (slots 2, 0, 1), mode, blocks
    // along H, blocks along W; work = blocks * 256.
    // FP32 with C and W multiples of 4: 128 x 128 tiles, 2 * 3 blocks.
    auto f32 = planned(matmul_graph(DType::fp32, DType::fp32, 1, 256, 512, 384));
    assert_int_equal(f32.kernel, id(MatmulKernelId::f32));
    assert_true(f32.spec == (Words{1, 256, 512, 384, 2, 0, 0, 0, 1, 0, 0, 2, 3}));
    assert_int_equal(f32.work, 6 * 256);
    // Edges: H = 129, W = 132 -> 2 x 2 blocks of each of 3 batches.
    auto edges = planned(matmul_graph(DType::fp32, DType::fp32, 3, 129, 4, 132));
    assert_int_equal(edges.kernel, id(MatmulKernelId::f32));
    assert_int_equal(edges.work, 12 * 256);
    // C = 21 or W = 42: not whole float4s, the general kernel's 16 x 16 tiles.
    auto odd_c = planned(matmul_graph(DType::fp32, DType::fp32, 2, 36, 21, 44));
    assert_int_equal(odd_c.kernel, id(MatmulKernelId::general));
    assert_true(odd_c.spec == (Words{2, 36, 21, 44, 2, 0, 0, 0, 1, 0, 0, 3, 3}));
    assert_int_equal(odd_c.work, 18 * 256);
    assert_int_equal(planned(matmul_graph(DType::fp32, DType::fp32, 2, 36, 20, 42)).kernel,
                     id(MatmulKernelId::general));

    // FP16 with C and W multiples of 8: 128 x 256 tensor-core tiles,
    // 3 x 3 blocks of 2 batches; mode 1 (FP32 result) or 2 (FP16). On a
    // device of unknown kind, the mma.sync tiles; on compute capability
    // 9.0, wgmma with the same tiles and words.
    auto tc = planned(matmul_graph(DType::fp16, DType::fp32, 2, 300, 64, 520));
    assert_int_equal(tc.kernel, id(MatmulKernelId::f16_t128x256));
    auto on_hopper = plan(matmul_graph(DType::fp16, DType::fp32, 2, 300, 64, 520), 90);
    assert_true(on_hopper.has_value());
    assert_int_equal(on_hopper->dispatches[0].kernel.kernel, id(MatmulKernelId::f16_wgmma));
    assert_true(on_hopper->dispatches[0].kernel.spec == tc.spec);
    assert_true(tc.spec == (Words{2, 300, 64, 520, 2, 0, 0, 0, 1, 0, 1, 3, 3}));
    assert_int_equal(tc.work, 18 * 256);
    auto tc_half = planned(matmul_graph(DType::fp16, DType::fp16, 1, 4096, 4096, 4096));
    assert_int_equal(tc_half.kernel, id(MatmulKernelId::f16_t128x256));
    assert_true(tc_half.spec == (Words{1, 4096, 4096, 4096, 2, 0, 0, 0, 1, 0, 2, 32, 16}));
    assert_int_equal(tc_half.work, 512 * 256);
    // C = 12 or W = 20: not whole 16-byte copies of halves, the general kernel.
    auto odd_half = planned(matmul_graph(DType::fp16, DType::fp16, 1, 8, 12, 16));
    assert_int_equal(odd_half.kernel, id(MatmulKernelId::general));
    assert_int_equal(odd_half.spec[10], 2);
    assert_int_equal(planned(matmul_graph(DType::fp16, DType::fp32, 1, 8, 16, 20)).kernel,
                     id(MatmulKernelId::general));

    // H <= 4 streams 32 columns a block: 3 batches * ceil(65 / 32) blocks,
    // whatever the dtypes and alignment.
    auto rows = planned(matmul_graph(DType::fp32, DType::fp32, 3, 4, 7, 65));
    assert_int_equal(rows.kernel, id(MatmulKernelId::rows));
    assert_true(rows.spec == (Words{3, 4, 7, 65, 2, 0, 0, 0, 1, 0, 0, 1, 3}));
    assert_int_equal(rows.work, 9 * 256);
    auto gemv = planned(matmul_graph(DType::fp16, DType::fp16, 1, 1, 4096, 4096));
    assert_int_equal(gemv.kernel, id(MatmulKernelId::rows));
    assert_int_equal(gemv.spec[10], 2);
    assert_int_equal(gemv.work, 128 * 256);
    // H = 5 is tiled.
    assert_int_equal(planned(matmul_graph(DType::fp32, DType::fp32, 1, 5, 8, 8)).kernel,
                     id(MatmulKernelId::f32));
}

void other_dtypes_are_refused(void**)
{
    struct Case {
        DType in, out, refused;
    };
    for (const Case& k : {Case{DType::fp32, DType::fp16, DType::fp16},
                          Case{DType::fp16, DType::bf16, DType::bf16},
                          Case{DType::bf16, DType::fp32, DType::bf16},
                          Case{DType::fp8e4m3, DType::fp16, DType::fp8e4m3}}) {
        auto p = plan(matmul_graph(k.in, k.out, 1, 2, 3, 4));
        if (p) fail_msg("dtypes %u -> %u: expected a refusal", static_cast<unsigned>(k.in),
                        static_cast<unsigned>(k.out));
        assert_int_equal(p.error().code, Errc::unsupported);
        assert_int_equal(p.error().detail, VACCEL_D_TOSA_DTYPE);
        assert_int_equal(p.error().arg0, static_cast<std::uint64_t>(k.refused));
        assert_int_equal(p.error().arg1, static_cast<std::uint64_t>(Op::matmul));
    }
}

// Sets VACCEL_CUDA_MATMUL_F16 for one scope.
struct VariantEnv {
    explicit VariantEnv(const char* name) { setenv("VACCEL_CUDA_MATMUL_F16", name, 1); }
    ~VariantEnv() { unsetenv("VACCEL_CUDA_MATMUL_F16"); }
};

// FP32 with few 128 x 128 tiles for the SMs: 64 x 64 tiles, split over K
// as CONV2D's (lowering_conv.hpp's gemm_split); unknown SMs keep the 128s.
void few_rows_take_the_64_tiles_split_over_k(void**)
{
    // BERT-base at batch 1: [1,128,768] x [1,768,768]: 2 x 12 tiles of 64,
    // 96 K steps: 8; the words are MATMUL's and the split.
    const auto proj = planned(matmul_graph(DType::fp32, DType::fp32, 1, 128, 768, 768), 132);
    assert_int_equal(proj.kernel, id(MatmulKernelId::f32_t64_s8));
    assert_true(proj.spec == (Words{1, 128, 768, 768, 2, 0, 0, 0, 1, 0, 0, 2, 12, 8}));
    assert_int_equal(proj.work, 2ull * 12 * 8 * 256);
    // [1,128,768] x [1,768,3072]: 96 tiles: 2 (4 would be 384 blocks > 264).
    const auto ffn = planned(matmul_graph(DType::fp32, DType::fp32, 1, 128, 768, 3072), 132);
    assert_int_equal(ffn.kernel, id(MatmulKernelId::f32_t64_s2));
    // Attention scores, 12 heads: [12,128,64] x [12,64,128]: 8 K steps, not split.
    const auto scores = planned(matmul_graph(DType::fp32, DType::fp32, 12, 128, 64, 128), 132);
    assert_int_equal(scores.kernel, id(MatmulKernelId::f32_t64_s1));
    assert_int_equal(scores.spec[11], 2);
    assert_int_equal(scores.spec[12], 2);
    assert_int_equal(scores.spec[13], 1);
    assert_int_equal(scores.work, 12ull * 2 * 2 * 256);
    // Enough 128 x 128 tiles, or the SMs unknown: the SIMT tiles, 13 words.
    const auto big = planned(matmul_graph(DType::fp32, DType::fp32, 1, 2048, 768, 3072), 132);
    assert_int_equal(big.kernel, id(MatmulKernelId::f32));
    assert_int_equal(big.spec.size(), 13);
    assert_int_equal(planned(matmul_graph(DType::fp32, DType::fp32, 1, 128, 768, 768)).kernel,
                     id(MatmulKernelId::f32));
    // FP16 and ragged FP32 keep their kernels.
    assert_int_equal(planned(matmul_graph(DType::fp32, DType::fp32, 1, 128, 766, 768), 132).kernel,
                     id(MatmulKernelId::general));
}

// fp32_math = "tf32": the FP32 shapes of the tiled kernels take the TF32
// tensor-core kernels chosen by the same rule, with the same words; FP16,
// few rows and ragged shapes are untouched.
void tf32_takes_the_tensor_core_tiles_by_the_same_rule(void**)
{
    const auto tf32 = backend::Fp32Math::tf32;
    const auto proj = planned(matmul_graph(DType::fp32, DType::fp32, 1, 128, 768, 768), 132, tf32);
    assert_int_equal(proj.kernel, id(MatmulKernelId::tf32_t64_s8));
    assert_true(proj.spec == (Words{1, 128, 768, 768, 2, 0, 0, 0, 1, 0, 0, 2, 12, 8}));
    const auto scores = planned(matmul_graph(DType::fp32, DType::fp32, 12, 128, 64, 128), 132, tf32);
    assert_int_equal(scores.kernel, id(MatmulKernelId::tf32_t64_s1));
    const auto big = planned(matmul_graph(DType::fp32, DType::fp32, 1, 2048, 768, 3072), 132, tf32);
    assert_int_equal(big.kernel, id(MatmulKernelId::tf32_t128));
    assert_int_equal(big.spec.size(), 13);
    assert_int_equal(big.work, 16ull * 24 * 256);
    assert_int_equal(planned(matmul_graph(DType::fp32, DType::fp32, 1, 128, 766, 768), 132, tf32).kernel,
                     id(MatmulKernelId::general));
    assert_int_equal(planned(matmul_graph(DType::fp32, DType::fp32, 1, 4, 768, 768), 132, tf32).kernel,
                     id(MatmulKernelId::rows));
    assert_int_equal(planned(matmul_graph(DType::fp16, DType::fp32, 1, 2048, 768, 3072), 132, tf32)
                         .kernel,
                     planned(matmul_graph(DType::fp16, DType::fp32, 1, 2048, 768, 3072), 132).kernel);
}

void the_f16_variant_is_chosen_by_environment(void**)
{
    const auto variants = matmul_f16_variants();
    assert_int_equal(variants.size(), 10);
    assert_string_equal(variants[0].name, "v0");
    assert_int_equal(static_cast<std::uint32_t>(variants[0].id), id(MatmulKernelId::f16));
    for (const auto& v : variants) {
        VariantEnv env(v.name);
        const std::uint32_t threads =
            matmul_kernels()[static_cast<std::uint32_t>(v.id) - 14].block_threads;  // 14..26 in order
        // 2 x 300 x 64 x 520: blocks along H and W by the variant's tile.
        auto k = planned(matmul_graph(DType::fp16, DType::fp16, 2, 300, 64, 520));
        assert_int_equal(k.kernel, static_cast<std::uint32_t>(v.id));
        const std::uint32_t th = (300 + v.tile_rows - 1) / v.tile_rows,
                            tw = (520 + v.tile_cols - 1) / v.tile_cols;
        assert_true(k.spec == (Words{2, 300, 64, 520, 2, 0, 0, 0, 1, 0, 2, th, tw}));
        assert_int_equal(k.work, 2ull * th * tw * threads);
        assert_int_equal(planned(matmul_graph(DType::fp16, DType::fp32, 1, 64, 64, 64)).kernel,
                         static_cast<std::uint32_t>(v.id));
        // Other shapes and FP32 keep their kernels.
        assert_int_equal(planned(matmul_graph(DType::fp16, DType::fp16, 1, 8, 12, 16)).kernel,
                         id(MatmulKernelId::general));
        assert_int_equal(planned(matmul_graph(DType::fp16, DType::fp16, 1, 2, 64, 64)).kernel,
                         id(MatmulKernelId::rows));
        assert_int_equal(planned(matmul_graph(DType::fp32, DType::fp32, 1, 256, 512, 384)).kernel,
                         id(MatmulKernelId::f32));
    }
    {
        VariantEnv env("t128x128");
        auto k = planned(matmul_graph(DType::fp16, DType::fp16, 1, 4096, 4096, 4096));
        assert_int_equal(k.kernel, id(MatmulKernelId::f16_t128x128));
        assert_int_equal(k.work, 32ull * 32 * 128);
    }
    {
        // Empty: the default of a device of unknown kind.
        VariantEnv env("");
        assert_int_equal(planned(matmul_graph(DType::fp16, DType::fp16, 1, 64, 64, 64)).kernel,
                         id(MatmulKernelId::f16_t128x256));
    }
    {
        // An unknown name fails every FP16 MATMUL; FP32 is not affected.
        VariantEnv env("t999");
        for (const auto& g : {matmul_graph(DType::fp16, DType::fp16, 1, 64, 64, 64),
                              matmul_graph(DType::fp16, DType::fp32, 1, 8, 12, 16)}) {
            auto p = plan(g);
            if (p) fail_msg("expected the unknown variant to be refused");
            assert_int_equal(p.error().code, Errc::invalid_argument);
            assert_int_equal(p.error().detail, VACCEL_D_BAD_VALUE);
            const std::string note = p.error().note;
            assert_true(note.find("VACCEL_CUDA_MATMUL_F16") != std::string::npos);
            assert_true(note.find("t999") != std::string::npos);
            assert_true(note.find("v0, t128x256, t128x256s, t128x256k64, t256x128, t128x128, "
                                  "t128x128w8, wgmma, wgmma128, wgmma128d") != std::string::npos);
        }
        assert_int_equal(planned(matmul_graph(DType::fp32, DType::fp32, 1, 256, 512, 384)).kernel,
                         id(MatmulKernelId::f32));
    }
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_kernel_table_is_numbered_from_14),
        cmocka_unit_test(each_shape_takes_its_kernel),
        cmocka_unit_test(other_dtypes_are_refused),
        cmocka_unit_test(few_rows_take_the_64_tiles_split_over_k),
        cmocka_unit_test(tf32_takes_the_tensor_core_tiles_by_the_same_rule),
        cmocka_unit_test(the_f16_variant_is_chosen_by_environment),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
