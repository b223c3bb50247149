// lowering_matmul.cpp - TOSA MATMUL to the CUDA kernels (lowering_matmul.hpp).
#include "lowering_matmul.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#include "lowering_conv.hpp"
#include "vaccel/gpu/lowering_operands.hpp"

namespace vaccel::backend::cuda {
namespace {

using tosa::DType;

enum class Mode : std::uint32_t { fp32 = 0, fp16_to_fp32 = 1, fp16_to_fp16 = 2 };

// Output tile of one block of each kernel (matmul*.cu).
struct Tile {
    std::uint32_t rows, cols;
};
constexpr Tile general_tile{16, 16};
constexpr Tile rows_tile{4, 32};
constexpr Tile f32_tile{128, 128};
constexpr Tile t64_tile{64, 64};
constexpr std::uint64_t max_rows = 4;

constexpr std::uint32_t id_of(MatmulKernelId id) { return static_cast<std::uint32_t>(id); }

// In id order: 14..26, then 37..40, then 51..55.
constexpr std::array<MatmulKernel, 22> kernels{{
    {static_cast<std::uint32_t>(MatmulKernelId::general), "vaccel_matmul_general", 256, 0, "matmul"},
    {static_cast<std::uint32_t>(MatmulKernelId::rows), "vaccel_matmul_rows", 256, 0, "matmul"},
    {static_cast<std::uint32_t>(MatmulKernelId::f32), "vaccel_matmul_f32_simt", 256, 0, "matmul_f32", 0,
     "vaccel_matmul_f32_simt_k", 8},
    // 4 stages of a 128 x 32 A tile and a 32 x 256 B tile of halves.
    {static_cast<std::uint32_t>(MatmulKernelId::f16), "vaccel_matmul_f16_tc", 256, 98304, "matmul_f16"},
    // matmul_f16_mma.cu: stages * (bm * bk + bk * bn) halves.
    {id_of(MatmulKernelId::f16_t128x256), "vaccel_matmul_f16_t128x256", 256, 98304,
     "matmul_f16_mma"},
    {id_of(MatmulKernelId::f16_t128x256s), "vaccel_matmul_f16_t128x256s", 256, 98304,
     "matmul_f16_mma"},
    {id_of(MatmulKernelId::f16_t128x256k64), "vaccel_matmul_f16_t128x256k64", 256, 147456,
     "matmul_f16_mma"},
    {id_of(MatmulKernelId::f16_t256x128), "vaccel_matmul_f16_t256x128", 256, 98304,
     "matmul_f16_mma"},
    {id_of(MatmulKernelId::f16_t128x128), "vaccel_matmul_f16_t128x128", 128, 65536,
     "matmul_f16_mma"},
    {id_of(MatmulKernelId::f16_t128x128w8), "vaccel_matmul_f16_t128x128w8", 256, 65536,
     "matmul_f16_mma"},
    // matmul_f16_wgmma.cu: stages * (128 x 64 + 64 x bn) halves, and 1024
    // bytes to align them; its module holds sm_90a code alone.
    {id_of(MatmulKernelId::f16_wgmma), "vaccel_matmul_f16_wgmma", 256, 197632, "matmul_f16_wgmma",
     90},
    {id_of(MatmulKernelId::f16_wgmma128), "vaccel_matmul_f16_wgmma128", 256, 99328,
     "matmul_f16_wgmma", 90},
    {id_of(MatmulKernelId::f16_wgmma128d), "vaccel_matmul_f16_wgmma128d", 256, 197632,
     "matmul_f16_wgmma", 90},
    {id_of(MatmulKernelId::f32_t64_s1), "vaccel_matmul_f32_t64_s1", 256, 0, "conv2d_gemm"},
    {id_of(MatmulKernelId::f32_t64_s2), "vaccel_matmul_f32_t64_s2", 256, 0, "conv2d_gemm"},
    {id_of(MatmulKernelId::f32_t64_s4), "vaccel_matmul_f32_t64_s4", 256, 0, "conv2d_gemm"},
    {id_of(MatmulKernelId::f32_t64_s8), "vaccel_matmul_f32_t64_s8", 256, 0, "conv2d_gemm"},
    {id_of(MatmulKernelId::tf32_t128), "vaccel_matmul_tf32_t128", 256, 0, "conv2d_gemm_mma"},
    {id_of(MatmulKernelId::tf32_t64_s1), "vaccel_matmul_tf32_t64_s1", 256, 0, "conv2d_gemm_mma"},
    {id_of(MatmulKernelId::tf32_t64_s2), "vaccel_matmul_tf32_t64_s2", 256, 0, "conv2d_gemm_mma"},
    {id_of(MatmulKernelId::tf32_t64_s4), "vaccel_matmul_tf32_t64_s4", 256, 0, "conv2d_gemm_mma"},
    {id_of(MatmulKernelId::tf32_t64_s8), "vaccel_matmul_tf32_t64_s8", 256, 0, "conv2d_gemm_mma"},
}};

constexpr std::array<MatmulF16Variant, 10> f16_variants{{
    {"v0", MatmulKernelId::f16, 128, 256},
    {"t128x256", MatmulKernelId::f16_t128x256, 128, 256},
    {"t128x256s", MatmulKernelId::f16_t128x256s, 128, 256},
    {"t128x256k64", MatmulKernelId::f16_t128x256k64, 128, 256},
    {"t256x128", MatmulKernelId::f16_t256x128, 256, 128},
    {"t128x128", MatmulKernelId::f16_t128x128, 128, 128},
    {"t128x128w8", MatmulKernelId::f16_t128x128w8, 128, 128},
    {"wgmma", MatmulKernelId::f16_wgmma, 128, 256},
    {"wgmma128", MatmulKernelId::f16_wgmma128, 128, 128},
    {"wgmma128d", MatmulKernelId::f16_wgmma128d, 128, 128},
}};

constexpr const char* f16_variant_env = "VACCEL_CUDA_MATMUL_F16";

// The FP16 variant VACCEL_CUDA_MATMUL_F16 names; when unset or empty, the
// fastest measured on the device's kind (docs/PERFORMANCE.md): wgmma on
// compute capability 9.0 (its code is sm_90a only), t128x256 elsewhere.
Result<const MatmulF16Variant*> chosen_f16_variant(const tosa::OperatorView& view,
                                                   std::uint32_t compute_capability)
{
    const char* name = std::getenv(f16_variant_env);
    if (name == nullptr || *name == '\0')
        name = compute_capability == 90 ? "wgmma" : "t128x256";
    std::string valid;
    for (const MatmulF16Variant& v : f16_variants) {
        if (std::strcmp(v.name, name) == 0) return &v;
        valid += valid.empty() ? "" : ", ";
        valid += v.name;
    }
    return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, 0,
                          static_cast<std::uint64_t>(view.op->op))
                    .with_note(fmt::format("operator {} of the block: {}=\"{}\" names no FP16 "
                                           "MATMUL kernel; valid: {}",
                                           view.op_index, f16_variant_env, name, valid)));
}

Error matmul_dtype_refusal(const tosa::OperatorView& view, DType dtype)
{
    return Error::of(Errc::unsupported, VACCEL_D_TOSA_DTYPE, static_cast<std::uint64_t>(dtype),
                     static_cast<std::uint64_t>(view.op->op))
        .with_note(fmt::format("operator {} of the block: the CUDA device runs MATMUL as "
                               "FP32 x FP32 -> FP32 or FP16 x FP16 -> FP16/FP32, not with "
                               "dtype {} here; run the program on the cpu device",
                               view.op_index, static_cast<unsigned>(dtype)));
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// The fast kernels copy `multiple` elements at a time (16 bytes): each
// copy must be aligned (bindings are 16-byte aligned, so the bases decide)
// and wholly inside or past a row of A (C) and of B and the result (W).
bool vectors_fit(std::uint32_t multiple, std::uint64_t c, std::uint64_t w,
                 std::initializer_list<std::uint32_t> bases)
{
    if (c % multiple != 0 || w % multiple != 0) return false;
    for (std::uint32_t base : bases)
        if (base % multiple != 0) return false;
    return true;
}

const MatmulKernel& kernel(MatmulKernelId id)
{
    for (const MatmulKernel& k : kernels)
        if (k.id == id_of(id)) return k;
    return kernels[0];  // every id has its entry (the table is the enum's)
}

}  // namespace

std::span<const MatmulKernel> matmul_kernels() { return kernels; }

std::span<const MatmulF16Variant> matmul_f16_variants() { return f16_variants; }

Result<std::vector<tosa::DispatchRequest>> lower_matmul(const tosa::OperatorView& view,
                                                        std::uint32_t compute_capability,
                                                        std::uint32_t multiprocessors,
                                                        Fp32Math fp32_math)
{
    const std::uint32_t a = view.inputs[0], b = view.inputs[1], out = view.outputs[0];
    const DType in_dtype = view.block->tensors[a].dtype;
    const DType out_dtype = view.block->tensors[out].dtype;
    if (in_dtype != DType::fp32 && in_dtype != DType::fp16)
        return fail(matmul_dtype_refusal(view, in_dtype));
    if (view.block->tensors[b].dtype != in_dtype)
        return fail(matmul_dtype_refusal(view, view.block->tensors[b].dtype));
    Mode mode = Mode::fp32;
    if (in_dtype == DType::fp16 && out_dtype == DType::fp32) mode = Mode::fp16_to_fp32;
    else if (in_dtype == DType::fp16 && out_dtype == DType::fp16) mode = Mode::fp16_to_fp16;
    else if (out_dtype != DType::fp32) return fail(matmul_dtype_refusal(view, out_dtype));
    auto pa = gpu::operand(view, a);
    auto pb = gpu::operand(view, b);
    auto po = gpu::operand(view, out);
    if (!pa) return fail(pa.error());
    if (!pb) return fail(pb.error());
    if (!po) return fail(po.error());
    const auto& as = view.block->tensors[a].shape;
    const auto& bs = view.block->tensors[b].shape;
    const auto n = static_cast<std::uint64_t>(as[0]), h = static_cast<std::uint64_t>(as[1]),
               c = static_cast<std::uint64_t>(as[2]), w = static_cast<std::uint64_t>(bs[2]);
    const std::initializer_list<std::uint32_t> bases{pa->base, pb->base, po->base};

    const MatmulF16Variant* f16_variant = &f16_variants[0];
    if (mode != Mode::fp32) {
        auto chosen = chosen_f16_variant(view, compute_capability);
        if (!chosen) return fail(chosen.error());
        f16_variant = *chosen;
    }

    MatmulKernelId id = MatmulKernelId::general;
    Tile tile = general_tile;
    std::uint32_t split = 0;  // the 64 x 64 kernels' word 13
    if (n * h * w == 0) {
        // Nothing to write: no blocks.
    } else if (h <= max_rows) {
        id = MatmulKernelId::rows;
        tile = rows_tile;
    } else if (mode == Mode::fp32 && vectors_fit(4, c, w, bases)) {
        const bool tf32 = fp32_math == Fp32Math::tf32;
        id = tf32 ? MatmulKernelId::tf32_t128 : MatmulKernelId::f32;
        tile = f32_tile;
        const std::uint64_t big = n * ceil_div(h, f32_tile.rows) * ceil_div(w, f32_tile.cols);
        if (multiprocessors != 0 && big < multiprocessors) {
            tile = t64_tile;
            split = gemm_split(n * ceil_div(h, 64) * ceil_div(w, 64), c, multiprocessors);
            // s1, s2, s4, s8 in id order
            id = static_cast<MatmulKernelId>(
                id_of(tf32 ? MatmulKernelId::tf32_t64_s1 : MatmulKernelId::f32_t64_s1) +
                std::countr_zero(split));
        }
    } else if (mode != Mode::fp32 && vectors_fit(8, c, w, bases)) {
        id = f16_variant->id;
        tile = {f16_variant->tile_rows, f16_variant->tile_cols};
    }
    // Every tensor has under 2^31 elements (operand()), so the blocks of
    // every kernel fit CUDA's grid and the kernels' 32-bit block counts.
    const std::uint64_t tiles_h = id == MatmulKernelId::rows ? 1 : ceil_div(h, tile.rows);
    const std::uint64_t tiles_w = ceil_div(w, tile.cols);

    tosa::KernelSpec spec;
    spec.kernel = static_cast<std::uint32_t>(id);
    spec.spec = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(h),
                 static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(w),
                 po->buffer, po->base, pa->buffer, pa->base, pb->buffer, pb->base,
                 static_cast<std::uint32_t>(mode),
                 static_cast<std::uint32_t>(tiles_h), static_cast<std::uint32_t>(tiles_w)};
    if (split != 0) spec.spec.push_back(split);
    spec.work = n * h * w == 0 ? 0
                               : n * tiles_h * tiles_w * std::max(split, 1u) * kernel(id).block_threads;
    return std::vector{tosa::DispatchRequest{std::move(spec), {a, b}, {out}}};
}

}  // namespace vaccel::backend::cuda
