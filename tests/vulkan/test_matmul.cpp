// test_matmul.cpp - the Vulkan MATMUL kernels (docs/adr/0013-vulkan-backend.md,
// "MATMUL kernels"): the tile choice on fixtures of device limits, the
// lowering's choice of kernel by shape, and the tiled (with and without
// shared memory), streaming and FP16 kernels on lavapipe on odd shapes.
//
// References: FP32 results are checked against a float64 dot product of the
// same float32 inputs on the host, within the bound docs/operators.md gives
// MATMUL ("dot bound": |got - exact| <= gamma(C) * sum |a_k * b_k|, gamma(n)
// = n u / (1 - n u), u = 2^-24), and against the CPU backend within twice
// that bound (both are within it). FP16 inputs are multiples of 1/8 in
// [-2, 2]: every product is a multiple of 1/64 and every partial sum of at
// most 300 of them is below 2^11 in magnitude, so FP32 holds the exact
// result and FP16 x FP16 -> FP32 must be exact; with C = 7 the result is
// below 32 in magnitude, which FP16 also holds exactly (11 significant bits
// cover 2^4 .. 2^-6), so FP16 x FP16 -> FP16 must be exact too.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "lowering.hpp"
#include "matmul_tiles.hpp"
#include "vaccel/backend/vulkan.hpp"
#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/plan.hpp"
#include "vulkan_test_support.hpp"
#include "../cpu/matmul_test_support.hpp"

namespace {

using namespace vulkan_test;
using vaccel::backend::vulkan::choose_coop_shape;
using vaccel::backend::vulkan::choose_coop_tiles;
using vaccel::backend::vulkan::CoopTiles;
using vaccel::backend::vulkan::choose_matmul;
using vaccel::backend::vulkan::CoopMatrixEntry;
using vaccel::backend::vulkan::CoopMatrixShape;
using vaccel::backend::vulkan::KernelId;
using vaccel::backend::vulkan::MatmulChoice;
using vaccel::backend::vulkan::MatmulLimits;
using vaccel::backend::vulkan::MatmulRows;
using vaccel::backend::vulkan::MatmulTiles;

// ----- the tile choice (pure) ---------------------------------------------------

// An NVIDIA H200 as the driver reports it: 48 KiB shared, 1024 invocations,
// subgroup 32 with arithmetic in compute.
constexpr MatmulLimits h200{49152, 1024, 1024, 32, true, false};
// Lavapipe: 32 KiB shared, subgroup 8, a CPU device.
constexpr MatmulLimits lavapipe_limits{32768, 1024, 1024, 8, true, true};

void tiles_follow_the_device_limits(void**)
{
    auto gpu = choose_matmul(h200);
    assert_ok(gpu);
    // The first candidate: 128x128 blocks, k step 16, 8x4 per invocation:
    // 512 invocations (16 subgroups of 32), (16*(32+1) + 16*32) * 16 =
    // 16640 bytes (rows of whole vec4s, A's with one vec4 of padding);
    // prefetching, vec4 loads allowed.
    assert_true(gpu->tiles == (MatmulTiles{128, 128, 16, 8, 4, true, true, true}));
    assert_int_equal(gpu->tiles.invocations(), 512);
    assert_int_equal(gpu->tiles.shared_bytes(), 16640);
    // Streaming: 8 column invocations x 128 K-slices = 1024 invocations;
    // 1024 x 4 FP32 partial sums in shared memory, 16 KiB.
    assert_true(gpu->rows.has_value());
    assert_true(*gpu->rows == (MatmulRows{8, 128}));
    assert_int_equal(gpu->rows->shared_bytes(), 16384);
    assert_int_equal(gpu->max_rows, 4);

    // A CPU device reads straight from the buffers, no barriers.
    auto cpu = choose_matmul(lavapipe_limits);
    assert_ok(cpu);
    // No k steps to prefetch, no tiles to load as vec4.
    assert_true(cpu->tiles == (MatmulTiles{32, 32, 8, 4, 4, false, false, false}));
    assert_true(*cpu->rows == (MatmulRows{8, 8}));  // 64 invocations on a CPU device

    // 128 invocations at most, subgroup 64: every 256-invocation candidate
    // is out; 32x32 with 4x4 is 64 invocations, one subgroup.
    auto wave64 = choose_matmul(MatmulLimits{16384, 128, 128, 64, true, false});
    assert_ok(wave64);
    assert_true(wave64->tiles == (MatmulTiles{32, 32, 8, 4, 4, true}));
    // Streaming halves its slices to 8 x 16 = 128 invocations, 2 subgroups.
    assert_true(*wave64->rows == (MatmulRows{8, 16}));

    // 4224 bytes of shared memory: 16640, 8320 (128x128x8) and 8448
    // (64x64x16) are out; 64x64 with a k step of 8 is (8*17 + 8*16) * 16 =
    // 4224 bytes, it fits exactly; one byte less and 32x32 (8*9 + 8*8) * 16
    // = 2176 is taken.
    auto small = choose_matmul(MatmulLimits{4224, 1024, 1024, 32, false, false});
    assert_ok(small);
    assert_true(small->tiles == (MatmulTiles{64, 64, 8, 4, 4, true}));
    auto smaller = choose_matmul(MatmulLimits{4223, 1024, 1024, 32, false, false});
    assert_true(smaller->tiles == (MatmulTiles{32, 32, 8, 4, 4, true}));
    // Streaming needs no subgroup operation; its sums must fit: 8 x 32 x
    // 16 = 4096 bytes (8 x 64 x 16 = 8192 does not).
    assert_true(*small->rows == (MatmulRows{8, 32}));

    // Subgroup 128: only the 512- and 256-invocation candidates are whole
    // subgroups; the first of them is taken.
    auto wide = choose_matmul(MatmulLimits{49152, 1024, 1024, 128, true, false});
    assert_ok(wide);
    assert_true(wide->tiles == (MatmulTiles{128, 128, 16, 8, 4, true}));
    assert_true(*wide->rows == (MatmulRows{8, 128}));  // 1024 = 8 subgroups of 128

    // 8320 bytes: the 128x128 block with a k step of 8, (8*33 + 8*32) * 16.
    auto k8 = choose_matmul(MatmulLimits{8320, 1024, 1024, 32, true, false});
    assert_true(k8->tiles == (MatmulTiles{128, 128, 8, 8, 8, true}));

    // Storage buffers bound at multiples of 4 bytes: a slot may start off
    // 16 bytes, so no vec4 loads, even when an override asks for them.
    MatmulLimits loose = h200;
    loose.storage_offset_alignment = 4;
    assert_false(choose_matmul(loose)->tiles.vec4);
    assert_false(choose_matmul(loose, "64,64,16,4,4,1,1,1")->tiles.vec4);
    assert_true(choose_matmul(loose)->tiles.prefetch);

    // No subgroup size reported: nothing fits, refused.
    assert_refused(choose_matmul(MatmulLimits{49152, 1024, 1024, 0, false, false}),
                   Errc::unsupported, VACCEL_D_BAD_VALUE, 0, 49152);
}

void tile_overrides_are_checked(void**)
{
    auto five = choose_matmul(h200, "64,32,8,4,2");
    assert_ok(five);
    assert_true(five->tiles == (MatmulTiles{64, 32, 8, 4, 2, true}));
    assert_int_equal(five->tiles.invocations(), 256);  // (64/4) * (32/2)
    auto direct = choose_matmul(h200, "32,32,8,4,4,0");
    assert_ok(direct);
    assert_true(direct->tiles == (MatmulTiles{32, 32, 8, 4, 4, false}));
    // PREFETCH and VEC4 after SHARED, each 0 or 1.
    auto flags = choose_matmul(h200, "128,128,8,8,4,1,0,1");
    assert_ok(flags);
    assert_true(flags->tiles == (MatmulTiles{128, 128, 8, 8, 4, true, false, true}));
    assert_int_equal(flags->tiles.invocations(), 512);  // (128/8) * (128/4)
    auto no_vec4 = choose_matmul(h200, "64,64,16,4,4,1,1,0");
    assert_true(no_vec4->tiles == (MatmulTiles{64, 64, 16, 4, 4, true, true, false}));
    // STAGES last, 1 or 2: two stages of (16*(16+1) + 16*16) * 16 = 8448
    // bytes; 128x128x16 in two stages is 2 * 16640 = 33280 bytes, within
    // 48 KiB.
    auto two = choose_matmul(h200, "64,64,16,4,4,1,1,1,2");
    assert_ok(two);
    assert_true(two->tiles == (MatmulTiles{64, 64, 16, 4, 4, true, true, true, 2}));
    assert_int_equal(two->tiles.shared_bytes(), 16896);
    assert_int_equal(choose_matmul(h200, "128,128,16,8,8,1,1,1,2")->tiles.shared_bytes(), 33280);
    // 128x128x32 in two stages is 66560 bytes > 48 KiB (one stage fits).
    assert_ok(choose_matmul(h200, "128,128,32,8,8,1,1,1,1"));
    // Malformed, not dividing, too much shared memory ((32*(64+1) +
    // 32*64) * 16 = 66048 bytes > 48 KiB), not whole subgroups (4*4 = 16
    // invocations), a SHARED, PREFETCH or VEC4 flag other than 0/1, STAGES
    // other than 1 or 2, a tenth field, trailing commas, two stages past
    // the shared memory.
    for (const char* bad : {"64,64", "64,64,16,3,4", "256,256,32,8,8", "16,16,8,4,4",
                            "32,32,8,4,4,2", "32,32,8,4,4,", "a,b,c,d,e", "",
                            "32,32,8,4,4,1,2", "32,32,8,4,4,1,1,2", "32,32,8,4,4,1,1,", "32,32,8,4,4,1,1,1,0", "32,32,8,4,4,1,1,1,3",
                            "32,32,8,4,4,1,1,1,2,", "32,32,8,4,4,1,1,1,1,1",
                            "128,128,32,8,8,1,1,1,2"})
        assert_refused(choose_matmul(h200, bad), Errc::invalid_argument, VACCEL_D_BAD_VALUE, 0, 0);
    // The streaming kernel's override: 24 column invocations x 4 slices =
    // 96 invocations (3 subgroups of 32).
    auto rows = choose_matmul(h200, std::nullopt, "24,4");
    assert_ok(rows);
    assert_true(*rows->rows == (MatmulRows{24, 4}));
    assert_true(rows->tiles == (MatmulTiles{128, 128, 16, 8, 4, true}));
    // Not whole subgroups (48), slices not a power of two, over 1024
    // invocations, a zero, malformed (one number, a trailing comma, three
    // numbers, letters, empty).
    for (const char* bad : {"48,1", "8,3", "64,32", "8,0", "0,8", "64", "8,4,", "8,4,1", "a,b", ""})
        assert_refused(choose_matmul(h200, std::nullopt, bad), Errc::invalid_argument,
                       VACCEL_D_BAD_VALUE, 0, 0);
    // 8 x 64 = 512 invocations need 8192 bytes of sums: over 4096 bytes.
    assert_refused(choose_matmul(MatmulLimits{4096, 1024, 1024, 32, true, false}, std::nullopt,
                                 "8,64"),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE, 0, 0);
}

void the_coop_shape_is_fp16_with_fp32_accumulation(void**)
{
    // As an NVIDIA driver lists them: FP16 x FP16 + FP16, FP16 x FP16 + FP32
    // at 16x8x16 and 16x16x16, an INT8 one, and a workgroup-scope one.
    const CoopMatrixEntry listed[] = {
        {16, 16, 16, true, false, true},   // FP16 accumulator: not this kernel's
        {16, 8, 16, true, true, true},     // first usable
        {8, 8, 32, false, false, true},    // INT8
        {32, 32, 16, true, true, false},   // workgroup scope
        {16, 16, 16, true, true, true},    // preferred
    };
    auto shape = choose_coop_shape(listed, 32);
    assert_true(shape.has_value());
    assert_true(*shape == (CoopMatrixShape{16, 16, 16, 32}));
    // Without 16x16x16 the first usable one; fragments not multiples of 8
    // (unaligned FP16 rows) are passed over; nothing usable, none.
    auto second = choose_coop_shape(std::span(listed, 4), 32);
    assert_true(*second == (CoopMatrixShape{16, 8, 16, 32}));
    const CoopMatrixEntry odd[] = {{12, 16, 16, true, true, true}};
    assert_false(choose_coop_shape(odd, 32).has_value());
    assert_false(choose_coop_shape(std::span(listed, 1), 32).has_value());
    assert_false(choose_coop_shape({}, 32).has_value());
    assert_false(choose_coop_shape(std::span(listed + 4, 1), 0).has_value());
}

void coop_tiles_follow_the_device_limits(void**)
{
    const CoopMatrixShape f16{16, 16, 16, 32};
    // Every candidate fits an H200, largest first. Shared bytes, FP16 rows
    // padded by 8 halves: 128x128x32 is 128*(32+8)*2 + 32*(128+8)*2 =
    // 10240 + 8704 = 18944; 64x64x32 is 64*40*2 + 32*72*2 = 5120 + 4608 =
    // 9728; 32x32x16 is 32*24*2 + 16*40*2 = 1536 + 1280 = 2816.
    auto gpu = choose_coop_tiles(f16, h200);
    assert_ok(gpu);
    assert_true(*gpu == (std::vector<CoopTiles>{{128, 128, 32, 64, 64},
                                                {128, 128, 32, 64, 32},
                                                {64, 64, 32, 32, 32},
                                                {32, 32, 16, 32, 32}}));
    assert_int_equal((*gpu)[0].shared_bytes(), 18944);
    assert_int_equal((*gpu)[0].subgroups(), 4);  // (128/64) * (128/64)
    assert_int_equal((*gpu)[1].subgroups(), 8);  // (128/64) * (128/32)
    assert_int_equal((*gpu)[2].shared_bytes(), 9728);
    assert_int_equal((*gpu)[3].shared_bytes(), 2816);
    // 32 KiB of shared memory and at most 128 invocations: 8 subgroups of
    // 32 (256 invocations) are too many, the rest fit.
    const MatmulLimits small{32768, 128, 128, 32, true, false};
    auto fewer = choose_coop_tiles(f16, small);
    assert_ok(fewer);
    assert_true(*fewer == (std::vector<CoopTiles>{{128, 128, 32, 64, 64},
                                                  {64, 64, 32, 32, 32},
                                                  {32, 32, 16, 32, 32}}));
    // 16 KiB: neither 18944-byte stage fits.
    const MatmulLimits tiny{16384, 1024, 1024, 32, true, false};
    assert_true(*choose_coop_tiles(f16, tiny) ==
                (std::vector<CoopTiles>{{64, 64, 32, 32, 32}, {32, 32, 16, 32, 32}}));
    // 16x8x16 fragments: a 64x64 sub-block is 4 x 8 = 32 fragments, over 16.
    auto narrow = choose_coop_tiles(CoopMatrixShape{16, 8, 16, 32}, h200);
    assert_ok(narrow);
    assert_true(*narrow == (std::vector<CoopTiles>{{128, 128, 32, 64, 32},
                                                   {64, 64, 32, 32, 32},
                                                   {32, 32, 16, 32, 32}}));
    // Too little shared memory for even the smallest: none (FP16 then stays
    // on the scalar kernel).
    const MatmulLimits none{2048, 1024, 1024, 32, true, false};
    assert_true(choose_coop_tiles(f16, none)->empty());
}

void coop_tile_overrides_are_checked(void**)
{
    const CoopMatrixShape f16{16, 16, 16, 32};
    // 64x128 blocks, 64 deep, 4 subgroups of 2 x 4 fragments: 64*72*2 +
    // 64*136*2 = 9216 + 17408 = 26624 bytes: the only tiling taken.
    auto one = choose_coop_tiles(f16, h200, "64,128,64,32,64");
    assert_ok(one);
    assert_true(*one == (std::vector<CoopTiles>{{64, 128, 64, 32, 64}}));
    // 128x128x64: 128*72*2 + 64*136*2 = 18432 + 17408 = 35840 bytes fits 48
    // KiB, not 32 KiB.
    assert_ok(choose_coop_tiles(f16, h200, "128,128,64,64,64"));
    const MatmulLimits small{32768, 1024, 1024, 32, true, false};
    assert_refused(choose_coop_tiles(f16, small, "128,128,64,64,64"), Errc::invalid_argument,
                   VACCEL_D_BAD_VALUE, 0, 0);
    // Four or six numbers, a zero, trailing comma; WM 48 not dividing 128; BK
    // 24 not a whole fragment deep; 128 x 64 sub-blocks = 32 fragments;
    // 256x256x64 = 256*72*2 + 64*264*2 = 70656 bytes; 256x256x16 in 32x32
    // sub-blocks = 64 subgroups = 2048 invocations; 64x32x16 in 16x16
    // sub-blocks = 8 subgroups = 256 invocations for A's 64 * 16/8 = 128
    // uvec4s.
    for (const char* bad : {"128,128,32,64", "128,128,32,64,32,1", "0,128,32,64,32",
                            "128,128,32,64,32,", "128,128,32,48,32", "128,128,24,64,32",
                            "128,128,32,128,64", "256,256,64,64,64", "256,256,16,32,32",
                            "64,32,16,16,16"})
        assert_refused(choose_coop_tiles(f16, h200, bad), Errc::invalid_argument,
                       VACCEL_D_BAD_VALUE, 0, 0);
}

// ----- the lowering's choice of kernel --------------------------------------------

std::vector<tosa::Dispatch> planned(const tosa::Graph& graph, const MatmulChoice& choice)
{
    auto analysis = tosa::analyze(graph);
    assert_ok(analysis);
    auto plan = tosa::plan_block(graph, *analysis, tosa::BlockRef{0, 0}, {},
                                 [&](const tosa::OperatorView& view) {
                                     return vaccel::backend::vulkan::lower(view, choice);
                                 });
    assert_ok(plan);
    return plan->dispatches;
}

void the_lowering_chooses_the_kernel_by_shape(void**)
{
    const MatmulChoice choice = *choose_matmul(lavapipe_limits);
    // H = 4 streams: N = 2, W = 17 (not a multiple of 4: one column per
    // invocation) -> 2 * ceil(17 / 8) = 6 blocks, a group each, work 384.
    // Spec: N H C W, out/a/b buffer and base (slots 2, 0, 1), mode 0,
    // THREADS 8, invocations 64, SLICES 8, WIDTH 1.
    auto rows = planned(matmul_graph(DType::fp32, DType::fp32, 2, 4, 5, 17), choice);
    assert_int_equal(rows.size(), 1);
    assert_int_equal(rows[0].kernel.kernel, static_cast<std::uint32_t>(KernelId::matmul_rows));
    assert_true(rows[0].kernel.spec ==
                (std::vector<std::uint32_t>{2, 4, 5, 17, 2, 0, 0, 0, 1, 0, 0, 8, 64, 8, 1}));
    assert_int_equal(rows[0].kernel.work, 384);
    // W = 40, FP32: vec4 loads, 8 x 4 = 32 columns a block -> ceil(40 / 32)
    // = 2 blocks, work 128. The same shape in FP16 reads one column per
    // invocation: ceil(40 / 8) = 5 blocks, work 320.
    auto quads = planned(matmul_graph(DType::fp32, DType::fp32, 1, 1, 5, 40), choice);
    assert_true(quads[0].kernel.spec ==
                (std::vector<std::uint32_t>{1, 1, 5, 40, 2, 0, 0, 0, 1, 0, 0, 8, 64, 8, 4}));
    assert_int_equal(quads[0].kernel.work, 128);
    auto halves = planned(matmul_graph(DType::fp16, DType::fp32, 1, 1, 5, 40), choice);
    assert_int_equal(halves[0].kernel.spec[14], 1);
    assert_int_equal(halves[0].kernel.work, 320);
    // H = 5 is tiled: 1 * ceil(5 / 32) * ceil(70 / 32) = 3 blocks, work 192;
    // FP16 -> FP16 is mode 2; the tiles and the workgroup size follow.
    auto tiled = planned(matmul_graph(DType::fp16, DType::fp16, 1, 5, 3, 70), choice);
    assert_int_equal(tiled[0].kernel.kernel, static_cast<std::uint32_t>(KernelId::matmul_tiled));
    assert_true(tiled[0].kernel.spec == (std::vector<std::uint32_t>{
                                            1, 5, 3, 70, 2, 0, 0, 0, 1, 0, 2,
                                            32, 32, 8, 4, 4, 64, 0, 0, 0, 1}));
    assert_int_equal(tiled[0].kernel.work, 192);
    // Without subgroup arithmetic even H = 1 is tiled (FP16 -> FP32: mode 1).
    MatmulChoice no_rows = choice;
    no_rows.rows.reset();
    auto one = planned(matmul_graph(DType::fp16, DType::fp32, 1, 1, 3, 4), no_rows);
    assert_int_equal(one[0].kernel.kernel, static_cast<std::uint32_t>(KernelId::matmul_tiled));
    assert_int_equal(one[0].kernel.spec[10], 1);

    // On a GPU: FP32 [2,36,20,44] (C and W multiples of 4, slots at base 0)
    // takes vec4 loads: 2 * ceil(36/128) * ceil(44/128) = 2 blocks, work
    // 1024 (512 invocations a block); spec: the 11 operand words, 128 128
    // 16 8 4, 512 invocations, SHARED,
    // VEC4, PREFETCH, STAGES.
    const MatmulChoice gpu = *choose_matmul(h200);
    auto tiled_quads = planned(matmul_graph(DType::fp32, DType::fp32, 2, 36, 20, 44), gpu);
    assert_int_equal(tiled_quads[0].kernel.kernel, static_cast<std::uint32_t>(KernelId::matmul_tiled));
    assert_true(tiled_quads[0].kernel.spec == (std::vector<std::uint32_t>{
                                            2, 36, 20, 44, 2, 0, 0, 0, 1, 0, 0,
                                            128, 128, 16, 8, 4, 512, 1, 1, 1, 1}));
    assert_int_equal(tiled_quads[0].kernel.work, 128);
    // Scalar loads (VEC4 0) for C = 21, W = 42, FP16 inputs, and tiles that
    // do not allow them; PREFETCH follows the tiles.
    for (const auto& g : {matmul_graph(DType::fp32, DType::fp32, 2, 36, 21, 44),
                          matmul_graph(DType::fp32, DType::fp32, 2, 36, 20, 42),
                          matmul_graph(DType::fp16, DType::fp32, 2, 36, 20, 44),
                          matmul_graph(DType::fp16, DType::fp16, 2, 36, 20, 44)}) {
        const auto spec = planned(g, gpu)[0].kernel.spec;
        assert_int_equal(spec[17], 1);  // SHARED
        assert_int_equal(spec[18], 0);  // VEC4
        assert_int_equal(spec[19], 1);  // PREFETCH
    }
    const MatmulChoice scalar = *choose_matmul(h200, "64,64,16,4,4,1,0,0");
    const auto plain = planned(matmul_graph(DType::fp32, DType::fp32, 2, 36, 20, 44), scalar);
    assert_true(plain[0].kernel.spec == (std::vector<std::uint32_t>{
                                            2, 36, 20, 44, 2, 0, 0, 0, 1, 0, 0,
                                            64, 64, 16, 4, 4, 256, 1, 0, 0, 1}));
    // Two shared stages.
    const MatmulChoice staged = *choose_matmul(h200, "64,64,16,4,4,1,1,1,2");
    const auto two = planned(matmul_graph(DType::fp32, DType::fp32, 2, 36, 20, 44), staged);
    assert_int_equal(two[0].kernel.spec[20], 2);
    // BK = 6 is not a whole number of quads: scalar loads.
    const MatmulChoice k6 = *choose_matmul(h200, "64,64,6,4,4");
    assert_int_equal(planned(matmul_graph(DType::fp32, DType::fp32, 1, 8, 8, 8), k6)[0]
                         .kernel.spec[18],
                     0);

    // Cooperative matrices, 16x16x16 fragments, subgroups of 32, the H200's
    // tilings: the first whose block divides H and W. [2,64,48,96]: 128
    // divides neither, 64 not W, so 32x32 blocks in one subgroup: 2 * (64/32)
    // * (96/32) = 12 blocks, work 768; spec: the 11 operand words, M N K,
    // BM BN BK WM WN, 32 invocations.
    MatmulChoice coop = choice;
    coop.coop = CoopMatrixShape{16, 16, 16, 32};
    coop.coop_tiles = {{128, 128, 32, 64, 32}, {64, 64, 32, 32, 32}, {32, 32, 16, 32, 32}};
    auto fragments = planned(matmul_graph(DType::fp16, DType::fp32, 2, 64, 48, 96), coop);
    assert_int_equal(fragments[0].kernel.kernel, static_cast<std::uint32_t>(KernelId::matmul_coop));
    assert_true(fragments[0].kernel.spec == (std::vector<std::uint32_t>{
                                                2, 64, 48, 96, 2, 0, 0, 0, 1, 0, 1,
                                                16, 16, 16, 32, 32, 16, 32, 32, 32}));
    assert_int_equal(fragments[0].kernel.work, 768);
    // [1,256,40,128]: 128x128 blocks (C = 40 is no multiple of BK = 32: the
    // kernel stages zeros past it), 8 subgroups = 256 invocations; (256/128)
    // * (128/128) = 2 blocks, work 128.
    auto large = planned(matmul_graph(DType::fp16, DType::fp32, 1, 256, 40, 128), coop);
    assert_int_equal(large[0].kernel.kernel, static_cast<std::uint32_t>(KernelId::matmul_coop));
    assert_true(large[0].kernel.spec == (std::vector<std::uint32_t>{
                                            1, 256, 40, 128, 2, 0, 0, 0, 1, 0, 1,
                                            16, 16, 16, 128, 128, 32, 64, 32, 256}));
    assert_int_equal(large[0].kernel.work, 128);
    // Not divisible (H = 48: no block divides it; C = 44 is no multiple of
    // 8 halves), FP16 results and FP32 inputs stay on the scalar kernels;
    // no tiling at all, likewise.
    for (const auto& g : {matmul_graph(DType::fp16, DType::fp32, 1, 48, 48, 96),
                          matmul_graph(DType::fp16, DType::fp32, 1, 64, 44, 96),
                          matmul_graph(DType::fp16, DType::fp16, 1, 64, 48, 96),
                          matmul_graph(DType::fp32, DType::fp32, 1, 64, 48, 96)})
        assert_int_equal(planned(g, coop)[0].kernel.kernel,
                         static_cast<std::uint32_t>(KernelId::matmul_tiled));
    MatmulChoice untiled = coop;
    untiled.coop_tiles.clear();
    assert_int_equal(planned(matmul_graph(DType::fp16, DType::fp32, 2, 64, 48, 96), untiled)[0]
                         .kernel.kernel,
                     static_cast<std::uint32_t>(KernelId::matmul_tiled));
}

// ----- on lavapipe --------------------------------------------------------------

void check_fp32(const Shape& s, std::uint32_t seed, bool arena_operands = false)
{
    cpu_test::check_fp32([] { return vulkan_rig(); }, s, seed, arena_operands);
}
void check_fp16(const Shape& s, DType out, std::uint32_t seed)
{
    cpu_test::check_fp16([] { return vulkan_rig(); }, s, out, seed);
}

const Shape odd_shapes[] = {
    {1, 1, 37, 1},                                                  // 1 x C x 1
    {1, 1, 300, 77}, {1, 2, 300, 77}, {1, 3, 300, 77}, {1, 4, 300, 77},  // streaming
    {1, 5, 300, 77},                                                // tiled from H = 5
    {3, 7, 33, 29},                                                 // batch > 1
    {2, 3, 19, 45},                                                 // streaming, batch > 1
    {1, 257, 129, 65},                                              // past every tile
};

void fp32_matches_on_odd_shapes(void**)
{
    std::uint32_t seed = 40;
    for (const Shape& s : odd_shapes) check_fp32(s, seed += 2);
}

// The shared-memory path (the GPU default) runs on lavapipe through the
// override: small tiles so every shape crosses block and k-step edges, and
// the largest candidate on the largest shape.
void the_shared_memory_tiles_match_on_odd_shapes(void**)
{
    for (const char* tiles : {"16,16,8,2,2", "64,32,8,4,2"}) {
        setenv("VACCEL_VULKAN_MATMUL_TILES", tiles, 1);
        std::uint32_t seed = 80;
        for (const Shape& s : odd_shapes) check_fp32(s, seed += 2);
    }
    setenv("VACCEL_VULKAN_MATMUL_TILES", "128,128,16,8,8", 1);
    check_fp32({2, 257, 129, 65}, 99);
    unsetenv("VACCEL_VULKAN_MATMUL_TILES");
}

// Shapes whose C and W are multiples of 4: the shared-memory tiles load
// them as vec4 (the lowering test checks the spec word), across partial
// blocks (H, W, C not multiples of the block), batches and k steps; with
// and without prefetching, with runs of 4 (RM, RN multiples of 4) and
// single rows and columns, in one and two shared stages, and with vec4
// loads refused by the override.
void the_vec4_tiles_match_on_aligned_shapes(void**)
{
    const Shape aligned[] = {
        {1, 64, 64, 64}, {2, 36, 20, 44}, {1, 5, 300, 76}, {3, 7, 32, 28}, {1, 133, 68, 132},
    };
    for (const char* tiles : {"16,16,8,2,2", "32,32,8,4,4", "64,32,8,4,2", "32,64,16,8,4,1,0",
                              "64,64,16,4,8,1,1,0", "128,128,8,8,8", "32,32,8,4,4,1,1,1,2",
                              "16,16,8,2,2,1,0,1,2", "64,64,16,8,4,1,1,0,2",
                              // BK = 3: no whole quads, scalar loads; 9 x 1
                              // per invocation, 27 tile elements over 32
                              // invocations (whole subgroups of 8 and of 32).
                              "9,32,3,9,1"}) {
        setenv("VACCEL_VULKAN_MATMUL_TILES", tiles, 1);
        std::uint32_t seed = 200;
        for (const Shape& s : aligned) check_fp32(s, seed += 2);
    }
    // And shapes off the quads with runs of 4, without prefetching, and in
    // two stages.
    std::uint32_t seed = 240;
    for (const char* tiles : {"32,64,16,8,4,1,0", "32,32,8,4,4,1,1,1,2", "16,16,8,2,2,1,0,1,2"}) {
        setenv("VACCEL_VULKAN_MATMUL_TILES", tiles, 1);
        for (const Shape& s : odd_shapes) check_fp32(s, seed += 2);
    }
    unsetenv("VACCEL_VULKAN_MATMUL_TILES");
}


// The streaming kernel in other shapes through the override: one column
// thread x 64 slices, 32 x 2, 16 x 16, and 4 x 2 (one subgroup of 8 on
// lavapipe); shapes with W a multiple of 4 (vec4 loads: 36, 8) and not (77,
// 45, 3, 1), C odd, H = 1..4, batches.
void the_streaming_kernel_matches_in_every_shape(void**)
{
    const Shape few_rows[] = {{1, 1, 37, 1},  {1, 4, 300, 77}, {2, 3, 19, 45},
                              {1, 2, 5, 3},   {1, 3, 65, 36},  {3, 2, 33, 8}};
    for (const char* rows : {"1,64", "32,2", "16,16", "4,8"}) {
        setenv("VACCEL_VULKAN_MATMUL_ROWS", rows, 1);
        std::uint32_t seed = 160;
        for (const Shape& s : few_rows) check_fp32(s, seed += 2);
        check_fp16({2, 3, 7, 31}, DType::fp16, seed += 2);
        check_fp16({1, 4, 9, 12}, DType::fp32, seed += 2);
        unsetenv("VACCEL_VULKAN_MATMUL_ROWS");
    }
}

// Operands in the arena at nonzero bases (256-byte aligned, so B still
// takes vec4 loads when W % 4 == 0), streaming and vec4 (W = 36, 8) or not
// (W = 45, 1), in the default shape and in 4 x 2.
void the_streaming_kernel_reads_arena_operands(void**)
{
    const Shape few_rows[] = {{1, 1, 37, 1}, {2, 3, 19, 45}, {1, 3, 65, 36}, {3, 4, 33, 8}};
    for (const char* rows : {"", "4,8"}) {
        if (*rows != '\0') setenv("VACCEL_VULKAN_MATMUL_ROWS", rows, 1);
        std::uint32_t seed = 300;
        for (const Shape& s : few_rows) check_fp32(s, seed += 2, true);
        unsetenv("VACCEL_VULKAN_MATMUL_ROWS");
    }
}

void a_bad_tile_override_refuses_the_load(void**)
{
    setenv("VACCEL_VULKAN_MATMUL_TILES", "64,64,16,3,4", 1);
    Rig gpu = vulkan_rig();
    assert_refused(gpu.load(matmul_graph(DType::fp32, DType::fp32, 1, 8, 8, 8)),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE, 0, 0);
    // A program without MATMUL still loads and runs: 1.5 + 2.25 = 3.75.
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", {1});
    const auto y = f32(g, "y", {1});
    const auto z = f32(g, "z", {1});
    g.op(Op::add, {x, y}, {z});
    g.input(x);
    g.input(y);
    g.output(z);
    auto add = gpu.must_load(g.finish());
    const std::vector<float> xs{1.5f}, ys{2.25f};
    const std::vector<std::span<const std::byte>> inputs{std::as_bytes(std::span(xs)),
                                                         std::as_bytes(std::span(ys))};
    assert_exactly(floats(gpu.run_raw(*add, inputs)[0]), {3.75f});
    unsetenv("VACCEL_VULKAN_MATMUL_TILES");
    gpu.finish(add);
}

void a_bad_coop_tile_override_refuses_the_load(void**)
{
    // Well formed but 70656 bytes of stage: refused on a device with
    // cooperative matrices (over 48 KiB) and on one without (lavapipe: no
    // FP16 MATMUL on cooperative matrices to apply it to).
    setenv("VACCEL_VULKAN_COOPMAT_TILES", "256,256,64,64,64", 1);
    Rig gpu = vulkan_rig();
    assert_refused(gpu.load(matmul_graph(DType::fp16, DType::fp32, 1, 8, 8, 8)),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE, 0, 0);
    unsetenv("VACCEL_VULKAN_COOPMAT_TILES");
    gpu.finish();
}

// ----- FP16 -------------------------------------------------------------------

void fp16_matches_exactly(void**)
{
    // FP32 results: C up to 300 (exact, see the header). The last four
    // shapes are whole blocks: on a device with cooperative matrices they
    // take matmul_coop, the first two in 32x32 blocks (an H200), the last
    // two in 128x128 blocks, one with C = 40 past its last 32-deep stage.
    const Shape to_fp32[] = {{1, 1, 300, 77},   {1, 3, 129, 33},   {3, 7, 33, 29},
                             {1, 257, 129, 65}, {2, 64, 48, 96},   {1, 128, 256, 160},
                             {1, 256, 40, 128}, {2, 128, 64, 256}};
    std::uint32_t seed = 120;
    for (const Shape& s : to_fp32) check_fp16(s, DType::fp32, seed += 2);
    // FP16 results: C = 7; odd W so neighbouring results share a word
    // across rows (the halves written with atomics).
    const Shape to_fp16[] = {{1, 1, 7, 1}, {1, 3, 7, 13}, {2, 5, 7, 31}, {1, 67, 7, 65}};
    for (const Shape& s : to_fp16) check_fp16(s, DType::fp16, seed += 2);
    // And through the shared-memory tiles.
    // And through the shared-memory tiles, single rows and runs of 4 (FP16
    // never takes vec4 loads, even on a shape whose C and W are multiples
    // of 4).
    for (const char* tiles : {"16,16,8,2,2", "32,32,8,4,4", "32,32,8,4,4,1,1,1,2"}) {
        setenv("VACCEL_VULKAN_MATMUL_TILES", tiles, 1);
        check_fp16({2, 5, 7, 31}, DType::fp16, seed += 2);
        check_fp16({1, 67, 129, 65}, DType::fp32, seed += 2);
        check_fp16({1, 36, 20, 44}, DType::fp32, seed += 2);
    }
    unsetenv("VACCEL_VULKAN_MATMUL_TILES");
}

// ----- refusals -----------------------------------------------------------------

void unsupported_dtypes_are_refused_exactly(void**)
{
    Rig gpu = vulkan_rig();
    // FP32 x FP32 -> FP16: both dtypes are advertised, the combination is
    // not one the kernels run; the lowerer refuses the result's dtype at
    // load (Unsupported, VACCEL_D_TOSA_DTYPE, arg0 = FP16, arg1 = MATMUL).
    assert_refused(gpu.load(matmul_graph(DType::fp32, DType::fp16, 1, 2, 3, 4)), Errc::unsupported,
                   VACCEL_D_TOSA_DTYPE, static_cast<std::uint32_t>(DType::fp16),
                   static_cast<std::uint32_t>(Op::matmul));
    // FP8 inputs (FP16 result, as TOSA defines): the device lists FP8 on a
    // device with narrow storage, but no MATMUL kernel reads it; refused at
    // load (Unsupported, VACCEL_D_TOSA_DTYPE, arg0 = FP8E4M3, arg1 = MATMUL).
    assert_refused(gpu.load(matmul_graph(DType::fp8e4m3, DType::fp16, 1, 2, 3, 4)),
                   Errc::unsupported, VACCEL_D_TOSA_DTYPE,
                   static_cast<std::uint32_t>(DType::fp8e4m3),
                   static_cast<std::uint32_t>(Op::matmul));
    gpu.finish();
}

}  // namespace

// After every test: no override left behind by a test that failed midway.
int clear_overrides(void**)
{
    unsetenv("VACCEL_VULKAN_MATMUL_TILES");
    unsetenv("VACCEL_VULKAN_MATMUL_ROWS");
    unsetenv("VACCEL_VULKAN_COOPMAT");
    unsetenv("VACCEL_VULKAN_COOPMAT_TILES");
    return 0;
}

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(tiles_follow_the_device_limits, clear_overrides),
        cmocka_unit_test_teardown(tile_overrides_are_checked, clear_overrides),
        cmocka_unit_test_teardown(the_coop_shape_is_fp16_with_fp32_accumulation, clear_overrides),
        cmocka_unit_test_teardown(coop_tiles_follow_the_device_limits, clear_overrides),
        cmocka_unit_test_teardown(coop_tile_overrides_are_checked, clear_overrides),
        cmocka_unit_test_teardown(the_lowering_chooses_the_kernel_by_shape, clear_overrides),
        cmocka_unit_test_teardown(fp32_matches_on_odd_shapes, clear_overrides),
        cmocka_unit_test_teardown(the_shared_memory_tiles_match_on_odd_shapes, clear_overrides),
        cmocka_unit_test_teardown(the_vec4_tiles_match_on_aligned_shapes, clear_overrides),
        cmocka_unit_test_teardown(the_streaming_kernel_matches_in_every_shape, clear_overrides),
        cmocka_unit_test_teardown(the_streaming_kernel_reads_arena_operands, clear_overrides),
        cmocka_unit_test_teardown(a_bad_tile_override_refuses_the_load, clear_overrides),
        cmocka_unit_test_teardown(a_bad_coop_tile_override_refuses_the_load, clear_overrides),
        cmocka_unit_test_teardown(fp16_matches_exactly, clear_overrides),
        cmocka_unit_test_teardown(unsupported_dtypes_are_refused_exactly, clear_overrides),
    };
    unsetenv("VACCEL_VULKAN_MATMUL_TILES");  // the tests set them themselves
    unsetenv("VACCEL_VULKAN_MATMUL_ROWS");
    unsetenv("VACCEL_VULKAN_COOPMAT_TILES");
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
