// test_conv_lowering.cpp - CONV2D on Vulkan as an implicit GEMM
// (backends/vulkan/src/lowering_conv.hpp): the kernel ids, the conv tiles
// chosen on fixtures of device limits (matmul_tiles.hpp), which
// convolutions take the GEMM kernel with which spec words and work, and
// which stay on the shared direct kernel (DEPTHWISE_CONV2D, FP16, empty,
// VACCEL_VULKAN_CONV=direct, no tiles). Pure: no device; the results are
// checked on lavapipe by vulkan.programs_spatial.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "conv_graphs.hpp"
#include "kernels.hpp"
#include "lowering.hpp"
#include "lowering_conv.hpp"
#include "matmul_tiles.hpp"
#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/plan.hpp"

#include "cmocka.hpp"

namespace {

using namespace vaccel;
using conv_test::Conv;
using conv_test::conv_graph;
using vaccel::backend::vulkan::choose_matmul;
using vaccel::backend::vulkan::conv_shared_bytes;
using vaccel::backend::vulkan::MatmulChoice;
using vaccel::backend::vulkan::MatmulLimits;
using vaccel::backend::vulkan::MatmulTiles;
using vaccel::backend::vulkan::VulkanKernelId;
using tosa::DType;
using tosa::Op;
using Words = std::vector<std::uint32_t>;

// test_matmul.cpp's fixtures: an NVIDIA H200 and lavapipe.
constexpr MatmulLimits h200{49152, 1024, 1024, 32, true, false};
constexpr MatmulLimits lavapipe_limits{32768, 1024, 1024, 8, true, true};

constexpr std::uint32_t gemm_id = static_cast<std::uint32_t>(VulkanKernelId::conv2d_gemm);
constexpr std::uint32_t direct_id = static_cast<std::uint32_t>(backend::gpu::KernelId::conv2d);

Result<tosa::ProgramPlan> plan(const Conv& c, const MatmulChoice& choice)
{
    const tosa::Graph graph = conv_graph(c);
    auto analysis = tosa::analyze(graph);
    if (!analysis) fail_msg("analysis refused: %s", analysis.error().note.c_str());
    return tosa::plan_block(graph, *analysis, tosa::BlockRef{0, 0}, {},
                            [&choice](const tosa::OperatorView& view) {
                                return backend::vulkan::lower(view, choice);
                            });
}

tosa::KernelSpec planned(const Conv& c, const MatmulChoice& choice)
{
    auto p = plan(c, choice);
    if (!p) fail_msg("unexpected refusal: %s", p.error().note.c_str());
    assert_int_equal(p->dispatches.size(), 1);
    return p->dispatches[0].kernel;
}

// A ResNet 3x3 layer of 64 channels at batch 8.
const Conv resnet{{8, 56, 56, 64}, {64, 3, 3, 64}, {1, 1, 1, 1}, {1, 1}, {1, 1}};

void the_gemm_kernel_follows_the_shared_ids(void**)
{
    assert_int_equal(gemm_id, 14);
    assert_int_equal(backend::vulkan::vulkan_kernel_count, 15);
    // Every Vulkan id has its SPIR-V; none past them (CUDA's 27 included).
    for (std::uint32_t id = 0; id < backend::vulkan::vulkan_kernel_count; ++id)
        assert_false(backend::vulkan::kernel_spirv(id).empty());
    assert_true(backend::vulkan::kernel_spirv(15).empty());
    assert_true(backend::vulkan::kernel_spirv(27).empty());
}

void the_conv_tiles_follow_the_device(void**)
{
    // A GPU: the MATMUL's tiles, whose padded footprint (16 * (33 + 33) *
    // 16 = 16896 bytes) fits.
    const MatmulChoice gpu = *choose_matmul(h200);
    assert_true(gpu.conv.has_value());
    assert_true(*gpu.conv == gpu.tiles);
    assert_int_equal(conv_shared_bytes(*gpu.conv), 16896);
    // Lavapipe: 256 x 4 blocks of 4 x 4 straight from the buffers, vec4
    // allowed; 64 invocations.
    const MatmulChoice cpu = *choose_matmul(lavapipe_limits);
    assert_true(*cpu.conv == (MatmulTiles{256, 4, 4, 4, 4, false, false, true}));
    assert_int_equal(cpu.conv->invocations(), 64);
    // 16640 bytes: the MATMUL's 128x128x16 fits exactly, CONV2D's padded
    // tiles do not, nor 128x128x16 with 8 x 8; 128x128x8 (8448) does.
    const MatmulLimits tight{16640, 1024, 1024, 32, true, false};
    const MatmulChoice t = *choose_matmul(tight);
    assert_true(t.tiles == (MatmulTiles{128, 128, 16, 8, 4}));
    assert_true(*t.conv == (MatmulTiles{128, 128, 8, 8, 8}));
    // An override is CONV2D's too, and refused when CONV2D's tiles do not
    // fit, even if MATMUL's would.
    const MatmulChoice o = *choose_matmul(h200, "64,64,16,4,4,1,0,1,2");
    assert_true(*o.conv == o.tiles);
    assert_int_equal(o.conv->stages, 2);
    const auto refused = choose_matmul(tight, "128,128,16,8,4");
    assert_false(refused.has_value());
    assert_int_equal(static_cast<int>(refused.error().code), static_cast<int>(Errc::invalid_argument));
    // Storage offsets aligned to 4 bytes: no vec4 loads for CONV2D either.
    MatmulLimits loose = h200;
    loose.storage_offset_alignment = 4;
    assert_false(choose_matmul(loose)->conv->vec4);
    // No tiles at all (a default choice): the direct kernel.
    assert_int_equal(planned(resnet, MatmulChoice{}).kernel, direct_id);
}

// The words of an empty epilogue (lowering_epilogue.hpp): STAGES 0, ROW 1,
// then six zero words for each of the three stages.
Words no_epilogue()
{
    Words w{0, 1};
    w.insert(w.end(), 18, 0u);
    return w;
}

// The words in the kernel's order: the 24 geometry and operand words (slots
// x 0, w 1, b 2, y 3; bases 0), then BM BN BK RM RN, invocations, SHARED,
// VEC4, PREFETCH, STAGES, then the 20 epilogue words; one workgroup per
// block.
void a_resnet_layer_takes_the_gemm_kernel(void**)
{
    const Words geometry{8, 56, 56, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1,
                         3, 0, 0, 0, 1, 0, 2, 0};
    const auto gpu = planned(resnet, *choose_matmul(h200));
    assert_int_equal(gpu.kernel, gemm_id);
    Words want = geometry;
    want.insert(want.end(), {128, 128, 16, 8, 4, 512, 1, 1, 1, 1});
    const Words empty = no_epilogue();
    want.insert(want.end(), empty.begin(), empty.end());
    assert_true(gpu.spec == want);
    // M = 25088: 196 row blocks x 1 column block.
    assert_int_equal(gpu.work, 196 * 64);
    const auto cpu = planned(resnet, *choose_matmul(lavapipe_limits));
    assert_int_equal(cpu.kernel, gemm_id);
    want = geometry;
    want.insert(want.end(), {256, 4, 4, 4, 4, 64, 0, 1, 0, 1});
    want.insert(want.end(), empty.begin(), empty.end());
    assert_true(cpu.spec == want);
    // 98 row blocks x 16 column blocks.
    assert_int_equal(cpu.work, 98 * 16 * 64);
}

// Lavapipe's direct path on few rows: 7 x 7 x 512 of one image (M = 49)
// halves 256 x 4 (4 x 4) to 128 x 8 (2 x 8), then 64 x 8 (1 x 8): 64
// invocations still, 1 x 64 blocks, work 64 * 64. M = 129 keeps 256 x 4;
// M = 128 takes 128 x 8. A GPU's shared tiles never change.
void few_rows_take_narrower_blocks_on_the_direct_path(void**)
{
    const MatmulChoice cpu = *choose_matmul(lavapipe_limits);
    const Conv deep{{1, 7, 7, 512}, {512, 3, 3, 512}, {1, 1, 1, 1}, {1, 1}, {1, 1}};
    const auto k = planned(deep, cpu);
    assert_true(Words(k.spec.begin() + 24, k.spec.begin() + 34) ==
                (Words{64, 8, 4, 1, 8, 64, 0, 1, 0, 1}));
    assert_true(Words(k.spec.begin() + 34, k.spec.end()) == no_epilogue());
    assert_int_equal(k.work, 64 * 64);
    const Conv m129{{1, 3, 43, 8}, {8, 1, 1, 8}, {0, 0, 0, 0}, {1, 1}, {1, 1}};
    assert_int_equal(planned(m129, cpu).spec[24], 256);
    const Conv m128{{2, 8, 8, 8}, {8, 1, 1, 8}, {0, 0, 0, 0}, {1, 1}, {1, 1}};
    const auto k128 = planned(m128, cpu);
    assert_true(Words(k128.spec.begin() + 24, k128.spec.begin() + 30) ==
                (Words{128, 8, 4, 2, 8, 64}));
    assert_int_equal(planned(deep, *choose_matmul(h200)).spec[24], 128);
}

// IC = 3 (a network's first layer) or BK = 3 loads scalars; OC not a
// multiple of 4 and bias [1] still load vec4 (results are stored one at a
// time); strides, dilation and padding pass through.
void the_vec4_loads_follow_the_channels(void**)
{
    const MatmulChoice cpu = *choose_matmul(lavapipe_limits);
    const MatmulChoice gpu = *choose_matmul(h200);
    const Conv first{{1, 32, 32, 3}, {64, 7, 7, 3}, {3, 2, 3, 2}, {2, 2}, {1, 1}};
    for (const MatmulChoice* choice : {&cpu, &gpu}) {
        const auto k = planned(first, *choice);
        assert_int_equal(k.kernel, gemm_id);
        assert_int_equal(k.spec[31], 0);
        assert_int_equal(k.spec[9], 2);
        assert_int_equal(k.spec[13], 3);
        assert_int_equal(k.spec[14], 3);
    }
    const Conv odd_oc{{1, 9, 9, 8}, {6, 3, 3, 8}, {0, 1, 2, 0}, {1, 2}, {2, 1}};
    const auto k = planned(odd_oc, gpu);
    assert_int_equal(k.spec[31], 1);
    assert_int_equal(k.spec[11], 2);
    assert_int_equal(k.spec[12], 1);
    assert_int_equal(k.spec[14], 2);
    const Conv one_bias{{1, 8, 8, 4}, {8, 3, 3, 4}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1};
    const auto b = planned(one_bias, cpu);
    assert_int_equal(b.spec[15], 0);
    assert_int_equal(b.spec[31], 1);
    const auto k3 = planned(resnet, *choose_matmul(h200, "9,32,3,9,1"));
    assert_int_equal(k3.kernel, gemm_id);
    assert_int_equal(k3.spec[31], 0);
}

// DEPTHWISE_CONV2D keeps the direct kernel; the ConvGemmLowerer itself
// declines FP16, an empty result and zero taps.
void the_rest_stays_on_the_direct_kernel(void**)
{
    const auto k = planned({{1, 8, 8, 4}, {3, 3, 4, 1}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 0,
                            DType::fp32, Op::depthwise_conv2d},
                           *choose_matmul(lavapipe_limits));
    assert_int_equal(k.kernel, direct_id);
    assert_int_equal(k.spec[0], 1);
    const MatmulTiles tiles = *choose_matmul(h200)->conv;
    backend::gpu::ConvGemm g;
    g.n = 1, g.ih = g.iw = g.oh = g.ow = 4, g.ic = 4, g.oc = 8, g.kh = g.kw = 1;
    const tosa::OperatorView view;
    assert_true(backend::vulkan::lower_conv_gemm(view, g, tiles).has_value());
    g.dtype = DType::fp16;
    assert_false(backend::vulkan::lower_conv_gemm(view, g, tiles).has_value());
    g.dtype = DType::fp32;
    g.oc = 0;
    assert_false(backend::vulkan::lower_conv_gemm(view, g, tiles).has_value());
    g.oc = 8, g.ic = 0;
    assert_false(backend::vulkan::lower_conv_gemm(view, g, tiles).has_value());
    g.ic = 4, g.n = 0;
    assert_false(backend::vulkan::lower_conv_gemm(view, g, tiles).has_value());
}

// VACCEL_VULKAN_CONV: unset, empty or gemm take the GEMM kernel, direct the
// direct kernel, anything else refuses the load by name.
void the_environment_chooses_or_is_refused(void**)
{
    const MatmulChoice cpu = *choose_matmul(lavapipe_limits);
    unsetenv("VACCEL_VULKAN_CONV");
    assert_int_equal(planned(resnet, cpu).kernel, gemm_id);
    for (const char* on : {"", "gemm"}) {
        setenv("VACCEL_VULKAN_CONV", on, 1);
        assert_int_equal(planned(resnet, cpu).kernel, gemm_id);
    }
    setenv("VACCEL_VULKAN_CONV", "direct", 1);
    assert_int_equal(planned(resnet, cpu).kernel, direct_id);
    setenv("VACCEL_VULKAN_CONV", "implicit", 1);
    // Refused even without tiles.
    for (const MatmulChoice& choice : {cpu, MatmulChoice{}}) {
        auto bad = plan(resnet, choice);
        assert_false(bad.has_value());
        assert_int_equal(static_cast<int>(bad.error().code),
                         static_cast<int>(Errc::invalid_argument));
        assert_int_equal(bad.error().arg1, static_cast<std::uint64_t>(Op::conv2d));
        // Operator 2: the two zero points' CONSTs come first.
        assert_string_equal(bad.error().note.c_str(),
                            "operator 2 of the block: VACCEL_VULKAN_CONV=\"implicit\" names no "
                            "CONV2D kernel choice; valid: gemm (the default), direct");
    }
    unsetenv("VACCEL_VULKAN_CONV");
}

}  // namespace

int main()
{
    unsetenv("VACCEL_VULKAN_MATMUL_TILES");
    unsetenv("VACCEL_VULKAN_CONV");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_gemm_kernel_follows_the_shared_ids),
        cmocka_unit_test(the_conv_tiles_follow_the_device),
        cmocka_unit_test(a_resnet_layer_takes_the_gemm_kernel),
        cmocka_unit_test(few_rows_take_narrower_blocks_on_the_direct_path),
        cmocka_unit_test(the_vec4_loads_follow_the_channels),
        cmocka_unit_test(the_rest_stays_on_the_direct_kernel),
        cmocka_unit_test(the_environment_chooses_or_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
