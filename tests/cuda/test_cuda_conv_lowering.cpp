// test_cuda_conv_lowering.cpp - CONV2D on CUDA as an implicit GEMM
// (backends/cuda/src/lowering_conv.hpp): which convolutions take the GEMM
// kernels, with which tile, float4 path, spec words and work, and which
// stay on the shared direct kernel (DEPTHWISE_CONV2D; FP16 without a GEMM
// lowerer). Pure: no device; the results are checked on the device by
// cuda.programs.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "conv_graphs.hpp"
#include "lowering_conv.hpp"
#include "lowering_matmul.hpp"
#include "vaccel/gpu/lowering.hpp"
#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/plan.hpp"

#include "cmocka.hpp"

namespace {

using namespace vaccel;
using vaccel::backend::cuda::ConvKernelId;
using conv_test::Conv;
using conv_test::conv_graph;
using tosa::DType;
using tosa::Op;
using Words = std::vector<std::uint32_t>;

// The plan of `c` on a device of `sms` multiprocessors: FP16 on the tensor
// cores unless `fp16_mma` is false, FP32 products as `math` says.
tosa::KernelSpec planned(const Conv& c, std::uint32_t sms = 132, bool fp16_mma = true,
                         backend::Fp32Math math = backend::Fp32Math::fp32)
{
    const tosa::Graph graph = conv_graph(c);
    auto analysis = tosa::analyze(graph);
    if (!analysis) fail_msg("analysis refused: %s", analysis.error().note.c_str());
    auto p = tosa::plan_block(graph, *analysis, tosa::BlockRef{0, 0}, {},
                              [=](const tosa::OperatorView& view) {
                                  return backend::gpu::lower(
                                      view,
                                      [](const tosa::OperatorView& v) {
                                          return backend::cuda::lower_matmul(v, 90);
                                      },
                                      [=](const tosa::OperatorView& v,
                                          const backend::gpu::ConvGemm& g) {
                                          return backend::cuda::lower_conv_gemm(v, g, sms, fp16_mma,
                                                                                math);
                                      });
                              });
    if (!p) fail_msg("unexpected refusal: %s", p.error().note.c_str());
    assert_int_equal(p->dispatches.size(), 1);
    return p->dispatches[0].kernel;
}

std::uint32_t id(ConvKernelId k) { return static_cast<std::uint32_t>(k); }

void the_kernels_follow_the_matmul_ids(void**)
{
    const auto table = backend::cuda::conv_kernels();
    assert_int_equal(table.size(), 20);
    // 27..36 on the FP32 cores; 41..50 on the tensor cores, after MATMUL's
    // 37..40.
    const char* names[] = {"vaccel_conv2d_gemm_f32_t128",      "vaccel_conv2d_gemm_f32_t64",
                           "vaccel_conv2d_gemm_f16_t128",      "vaccel_conv2d_gemm_f16_t64",
                           "vaccel_conv2d_gemm_f32_t64_s2",    "vaccel_conv2d_gemm_f32_t64_s4",
                           "vaccel_conv2d_gemm_f32_t64_s8",    "vaccel_conv2d_gemm_f16_t64_s2",
                           "vaccel_conv2d_gemm_f16_t64_s4",    "vaccel_conv2d_gemm_f16_t64_s8",
                           "vaccel_conv2d_gemm_f16mma_t128",   "vaccel_conv2d_gemm_f16mma_t64",
                           "vaccel_conv2d_gemm_f16mma_t64_s2", "vaccel_conv2d_gemm_f16mma_t64_s4",
                           "vaccel_conv2d_gemm_f16mma_t64_s8", "vaccel_conv2d_gemm_tf32_t128",
                           "vaccel_conv2d_gemm_tf32_t64",      "vaccel_conv2d_gemm_tf32_t64_s2",
                           "vaccel_conv2d_gemm_tf32_t64_s4",   "vaccel_conv2d_gemm_tf32_t64_s8"};
    for (std::size_t i = 0; i < table.size(); ++i) {
        assert_int_equal(table[i].id, i < 10 ? 27 + i : 41 + (i - 10));
        assert_string_equal(table[i].function, names[i]);
        assert_string_equal(table[i].module, i < 10 ? "conv2d_gemm" : "conv2d_gemm_mma");
    }
}

// A ResNet 3x3 layer of 64 channels: at batch 8 (M = 25088) 196 x 1 tiles
// of 128 are under two per SM of 132, so 64 x 64; at batch 32, 784 x 1
// tiles of 128; the words in the kernel's order.
void a_large_layer_takes_the_128_tiles_with_float4(void**)
{
    const auto k = planned({{8, 56, 56, 64}, {64, 3, 3, 64}, {1, 1, 1, 1}, {1, 1}, {1, 1}});
    assert_int_equal(k.kernel, id(ConvKernelId::gemm_f32_t64));  // 196 tiles < 2 * 132
    const auto big = planned({{32, 56, 56, 64}, {64, 3, 3, 64}, {1, 1, 1, 1}, {1, 1}, {1, 1}});
    assert_int_equal(big.kernel, id(ConvKernelId::gemm_f32_t128));
    // Slots: x 0, w 1, b 2, y 3; every base 0; then an epilogue of no
    // stages (STAGES 0, ROW 1, 18 zero words; vaccel/gpu/lowering_epilogue.hpp).
    Words want{32, 56, 56, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1,
               3, 0, 0, 0, 1, 0, 2, 0, 1, 784, 1, 1, 0, 1};
    want.resize(28 + backend::gpu::epilogue_word_count, 0);
    assert_true(big.spec == want);
    assert_int_equal(big.work, std::uint64_t{784} * 1 * 256);
}

// Batch 1, 7 x 7 pixels, 512 channels: 64 x 64 tiles (1 x 8), too few for
// 132 SMs, each split over K by a cluster of 8 (576 K steps, 72 a block).
void a_small_layer_takes_the_64_tiles(void**)
{
    const auto k = planned({{1, 7, 7, 512}, {512, 3, 3, 512}, {1, 1, 1, 1}, {1, 1}, {1, 1}});
    assert_int_equal(k.kernel, id(ConvKernelId::gemm_f32_t64_s8));
    assert_int_equal(k.spec.size(), 28 + backend::gpu::epilogue_word_count);
    assert_int_equal(k.spec[25], 1);
    assert_int_equal(k.spec[26], 8);
    assert_int_equal(k.spec[27], 8);
    assert_int_equal(k.work, 8 * 8 * 256);
    // With more SMs than tiles of 128 the rule is the same on a smaller device.
    const auto few = planned({{4, 28, 28, 128}, {128, 1, 1, 128}, {0, 0, 0, 0}, {1, 1}, {1, 1}}, 8);
    assert_int_equal(few.kernel, id(ConvKernelId::gemm_f32_t128));
}

// Split K: the largest cluster of 8, 4 or 2 with at most two blocks a
// multiprocessor and at least 8 K steps a block; none when 2 fails that.
void split_k_fills_the_device_with_small_layers(void**)
{
    // 56 x 56 x 64, 3x3 at batch 1: 49 tiles; 8 would be 392 blocks > 264.
    const auto layer1 = planned({{1, 56, 56, 64}, {64, 3, 3, 64}, {1, 1, 1, 1}, {1, 1}, {1, 1}});
    assert_int_equal(layer1.kernel, id(ConvKernelId::gemm_f32_t64_s4));
    assert_int_equal(layer1.spec[27], 4);
    assert_int_equal(layer1.work, 49 * 4 * 256);
    // 14 x 14 x 256 -> 256, 3x3: 4 x 4 tiles, 288 K steps: 8.
    const auto layer3 = planned({{1, 14, 14, 256}, {256, 3, 3, 256}, {1, 1, 1, 1}, {1, 1}, {1, 1}});
    assert_int_equal(layer3.kernel, id(ConvKernelId::gemm_f32_t64_s8));
    // A 1x1 convolution of 64 channels: 8 K steps, below 2 x 8: no split.
    const auto narrow = planned({{1, 14, 14, 64}, {256, 1, 1, 64}, {0, 0, 0, 0}, {1, 1}, {1, 1}});
    assert_int_equal(narrow.kernel, id(ConvKernelId::gemm_f32_t64));
    assert_int_equal(narrow.spec[27], 1);
    // 24 K steps: 2 (4 would leave 6 a block).
    const auto k24 = planned({{1, 7, 7, 192}, {64, 1, 1, 192}, {0, 0, 0, 0}, {1, 1}, {1, 1}});
    assert_int_equal(k24.kernel, id(ConvKernelId::gemm_f32_t64_s2));
    // FP16 takes the FP16 split kernels (tensor cores, or the FP32 cores);
    // tiles enough for the device: none.
    const Conv half_layer{{1, 7, 7, 512}, {512, 3, 3, 512}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 0,
                          DType::fp16};
    assert_int_equal(planned(half_layer).kernel, id(ConvKernelId::mma_f16_t64_s8));
    assert_int_equal(planned(half_layer, 132, false).kernel, id(ConvKernelId::gemm_f16_t64_s8));
    const auto full = planned({{1, 7, 7, 512}, {512, 3, 3, 512}, {1, 1, 1, 1}, {1, 1}, {1, 1}}, 4);
    assert_int_equal(full.kernel, id(ConvKernelId::gemm_f32_t64));
}

// IC = 3 (a network's first layer), OC not a multiple of 4, or bias [1]
// with OC % 4 == 0: the element-wise path; strides, dilation and padding
// pass through.
void ragged_channels_take_the_element_path(void**)
{
    const auto first = planned({{1, 32, 32, 3}, {64, 7, 7, 3}, {3, 2, 3, 2}, {2, 2}, {1, 1}});
    assert_int_equal(first.spec[24], 0);
    assert_int_equal(first.spec[9], 2);
    assert_int_equal(first.spec[13], 3);
    const auto odd_oc = planned({{1, 9, 9, 8}, {6, 3, 3, 8}, {0, 1, 2, 0}, {1, 2}, {2, 1}});
    assert_int_equal(odd_oc.spec[24], 0);
    assert_int_equal(odd_oc.spec[11], 2);
    assert_int_equal(odd_oc.spec[14], 2);
    const auto one_bias = planned({{1, 8, 8, 4}, {8, 3, 3, 4}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1});
    assert_int_equal(one_bias.spec[15], 0);
    assert_int_equal(one_bias.spec[24], 1);  // a single bias needs no float4 load
}

// FP16 CONV2D takes the FP16 GEMM kernels (either acc_type): the tensor
// cores', or with VACCEL_CUDA_CONV_MMA=0 the FP32 cores' (the same words);
// without a GEMM lowerer (the shared lowering alone, as on a backend that
// has none) it runs on the direct kernel, whose last word is the dtype
// (DT_FP16 = 3).
void fp16_takes_the_fp16_kernels_or_the_direct_one(void**)
{
    const Conv big{{32, 56, 56, 64}, {64, 3, 3, 64}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 0, DType::fp16};
    assert_int_equal(planned(big).kernel, id(ConvKernelId::mma_f16_t128));
    assert_int_equal(planned(big, 132, false).kernel, id(ConvKernelId::gemm_f16_t128));
    assert_true(planned(big).spec == planned(big, 132, false).spec);
    const Conv small{{1, 7, 7, 6}, {6, 3, 3, 6}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 0, DType::fp16};
    const auto k = planned(small);
    assert_int_equal(k.kernel, id(ConvKernelId::mma_f16_t64));
    assert_int_equal(k.spec[24], 0);
    const tosa::Graph graph = conv_graph(small);
    auto analysis = tosa::analyze(graph);
    assert_true(analysis.has_value());
    auto p = tosa::plan_block(graph, *analysis, tosa::BlockRef{0, 0}, {},
                              [](const tosa::OperatorView& view) {
                                  return backend::gpu::lower(view, [](const tosa::OperatorView& v) {
                                      return backend::cuda::lower_matmul(v, 90);
                                  });
                              });
    if (!p) fail_msg("unexpected refusal: %s", p.error().note.c_str());
    assert_int_equal(p->dispatches.size(), 1);
    const auto& direct = p->dispatches[0].kernel;
    assert_int_equal(direct.kernel, static_cast<std::uint32_t>(backend::gpu::KernelId::conv2d));
    assert_int_equal(direct.spec.size(), 27);
    assert_int_equal(direct.spec[26], 3);
}

// fp32_math = "tf32": FP32 CONV2D takes the TF32 kernels by the same tile
// and split rule, with the same words; FP16 is not affected.
void tf32_takes_the_tensor_core_kernels(void**)
{
    const auto tf32 = backend::Fp32Math::tf32;
    const Conv large{{32, 56, 56, 64}, {64, 3, 3, 64}, {1, 1, 1, 1}, {1, 1}, {1, 1}};
    assert_int_equal(planned(large, 132, true, tf32).kernel, id(ConvKernelId::mma_tf32_t128));
    assert_true(planned(large, 132, true, tf32).spec == planned(large).spec);
    const Conv mid{{8, 56, 56, 64}, {64, 3, 3, 64}, {1, 1, 1, 1}, {1, 1}, {1, 1}};
    assert_int_equal(planned(mid, 132, true, tf32).kernel, id(ConvKernelId::mma_tf32_t64));
    const Conv deep{{1, 7, 7, 512}, {512, 3, 3, 512}, {1, 1, 1, 1}, {1, 1}, {1, 1}};
    assert_int_equal(planned(deep, 132, true, tf32).kernel, id(ConvKernelId::mma_tf32_t64_s8));
    const Conv layer1{{1, 56, 56, 64}, {64, 3, 3, 64}, {1, 1, 1, 1}, {1, 1}, {1, 1}};
    assert_int_equal(planned(layer1, 132, true, tf32).kernel, id(ConvKernelId::mma_tf32_t64_s4));
    const Conv half{{32, 56, 56, 64}, {64, 3, 3, 64}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 0, DType::fp16};
    assert_int_equal(planned(half, 132, true, tf32).kernel, id(ConvKernelId::mma_f16_t128));
}

void depthwise_stays_on_the_direct_kernel(void**)
{
    const auto k = planned({{1, 8, 8, 4}, {3, 3, 4, 1}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 0, DType::fp32,
                            Op::depthwise_conv2d});
    assert_int_equal(k.kernel, static_cast<std::uint32_t>(backend::gpu::KernelId::conv2d));
    assert_int_equal(k.spec[0], 1);
}

// VACCEL_CUDA_CONV: unset, empty or gemm take the GEMM kernels, direct
// the direct kernel, anything else is refused by name.
void the_environment_chooses_or_is_refused(void**)
{
    tosa::Operator op;
    op.op = Op::conv2d;
    tosa::OperatorView view;
    view.op = &op;
    unsetenv("VACCEL_CUDA_CONV");
    assert_true(*backend::cuda::conv_gemm_enabled(view));
    for (const char* on : {"", "gemm"}) {
        setenv("VACCEL_CUDA_CONV", on, 1);
        assert_true(*backend::cuda::conv_gemm_enabled(view));
    }
    setenv("VACCEL_CUDA_CONV", "direct", 1);
    assert_false(*backend::cuda::conv_gemm_enabled(view));
    setenv("VACCEL_CUDA_CONV", "implicit", 1);
    auto bad = backend::cuda::conv_gemm_enabled(view);
    assert_false(bad.has_value());
    assert_int_equal(static_cast<int>(bad.error().code), static_cast<int>(Errc::invalid_argument));
    assert_string_equal(bad.error().note.c_str(),
                        "operator 0 of the block: VACCEL_CUDA_CONV=\"implicit\" names no CONV2D "
                        "kernel choice; valid: gemm (the default), direct");
    unsetenv("VACCEL_CUDA_CONV");
    // VACCEL_CUDA_CONV_MMA: 1 the tensor cores for FP16, 0 or unset the FP32 cores.
    unsetenv("VACCEL_CUDA_CONV_MMA");
    assert_false(*backend::cuda::conv_mma_enabled());
    setenv("VACCEL_CUDA_CONV_MMA", "1", 1);
    assert_true(*backend::cuda::conv_mma_enabled());
    setenv("VACCEL_CUDA_CONV_MMA", "0", 1);
    assert_false(*backend::cuda::conv_mma_enabled());
    setenv("VACCEL_CUDA_CONV_MMA", "yes", 1);
    auto refused = backend::cuda::conv_mma_enabled();
    assert_false(refused.has_value());
    assert_string_equal(refused.error().note.c_str(),
                        "VACCEL_CUDA_CONV_MMA=\"yes\" is neither 1 (FP16 CONV2D on the tensor "
                        "cores) nor 0 (FP16 CONV2D on the FP32 cores, the default)");
    unsetenv("VACCEL_CUDA_CONV_MMA");
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_kernels_follow_the_matmul_ids),
        cmocka_unit_test(a_large_layer_takes_the_128_tiles_with_float4),
        cmocka_unit_test(a_small_layer_takes_the_64_tiles),
        cmocka_unit_test(split_k_fills_the_device_with_small_layers),
        cmocka_unit_test(ragged_channels_take_the_element_path),
        cmocka_unit_test(fp16_takes_the_fp16_kernels_or_the_direct_one),
        cmocka_unit_test(tf32_takes_the_tensor_core_kernels),
        cmocka_unit_test(depthwise_stays_on_the_direct_kernel),
        cmocka_unit_test(the_environment_chooses_or_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
