// lowering_matmul.cpp - TOSA MATMUL to the CUDA kernels (lowering_matmul.hpp).
#include "lowering_matmul.hpp"

#include <fmt/format.h>

#include <array>
#include <initializer_list>

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
constexpr Tile f16_tile{128, 256};
constexpr std::uint64_t max_rows = 4;

constexpr std::array<MatmulKernel, 4> kernels{{
    {static_cast<std::uint32_t>(MatmulKernelId::general), "vaccel_matmul_general", 256, 0, "matmul"},
    {static_cast<std::uint32_t>(MatmulKernelId::rows), "vaccel_matmul_rows", 256, 0, "matmul"},
    {static_cast<std::uint32_t>(MatmulKernelId::f32), "vaccel_matmul_f32_simt", 256, 0, "matmul_f32"},
    // 4 stages of a 128 x 32 A tile and a 32 x 256 B tile of halves.
    {static_cast<std::uint32_t>(MatmulKernelId::f16), "vaccel_matmul_f16_tc", 256, 98304, "matmul_f16"},
}};

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
    return kernels[static_cast<std::uint32_t>(id) - static_cast<std::uint32_t>(MatmulKernelId::general)];
}

}  // namespace

std::span<const MatmulKernel> matmul_kernels() { return kernels; }

Result<std::vector<tosa::DispatchRequest>> lower_matmul(const tosa::OperatorView& view)
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

    MatmulKernelId id = MatmulKernelId::general;
    Tile tile = general_tile;
    if (n * h * w == 0) {
        // Nothing to write: no blocks.
    } else if (h <= max_rows) {
        id = MatmulKernelId::rows;
        tile = rows_tile;
    } else if (mode == Mode::fp32 && vectors_fit(4, c, w, bases)) {
        id = MatmulKernelId::f32;
        tile = f32_tile;
    } else if (mode != Mode::fp32 && vectors_fit(8, c, w, bases)) {
        id = MatmulKernelId::f16;
        tile = f16_tile;
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
    spec.work = n * h * w == 0 ? 0 : n * tiles_h * tiles_w * kernel(id).block_threads;
    return std::vector{tosa::DispatchRequest{std::move(spec), {a, b}, {out}}};
}

}  // namespace vaccel::backend::cuda
