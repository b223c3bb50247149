// lowering_matmul.cpp - TOSA MATMUL to the tiled or streaming kernel
// (lowering_matmul.hpp).
#include "lowering_matmul.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <initializer_list>

#include "lowering.hpp"
#include "lowering_conv.hpp"
#include "vaccel/gpu/lowering_operands.hpp"

namespace vaccel::backend::vulkan {
namespace {

using tosa::DType;

// submit.cpp's groups = ceil(work / 64).
constexpr std::uint64_t work_per_group = 64;

// The kernels' MODE constant (matmul_common.glsl).
enum class MatmulMode : std::uint32_t { fp32 = 0, fp16_to_fp32 = 1, fp16_to_fp16 = 2 };

// MATMUL's own wording of lowering_operands.hpp's dtype refusal.
Error matmul_dtype_refusal(const tosa::OperatorView& view, DType dtype)
{
    return Error::of(Errc::unsupported, VACCEL_D_TOSA_DTYPE, static_cast<std::uint64_t>(dtype),
                     static_cast<std::uint64_t>(view.op->op))
        .with_note(fmt::format("operator {} of the block: the Vulkan device runs MATMUL as "
                               "FP32 x FP32 -> FP32 or FP16 x FP16 -> FP16/FP32, not with "
                               "dtype {} here; run the program on the cpu device",
                               view.op_index, static_cast<unsigned>(dtype)));
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// matmul_coop.comp stores whole fragments and stages A and B in uvec4s of
// 8 halves: the block must divide H and W (no fragment crosses an edge of
// the result), and C, W and every base be multiples of 8 elements (each
// uvec4 within one row, 16-byte aligned; FP32 result rows are then
// multiples of 32 bytes). C need not be a multiple of BK: the kernel
// stages zeros past it.
bool coop_fits(const CoopTiles& t, std::uint64_t h, std::uint64_t c, std::uint64_t w,
               std::initializer_list<std::uint32_t> bases)
{
    if (h % t.bm != 0 || w % t.bn != 0 || c == 0) return false;
    if (c % 8 != 0 || w % 8 != 0) return false;
    for (std::uint32_t base : bases)
        if (base % 8 != 0) return false;
    return true;
}

// matmul_tiled.comp's VEC4 loads read A's rows k0 .. k0 + BK and B's
// columns col0 .. col0 + BN as aligned vec4s: every row start (base + r *
// C, base + k * W, over batches too) must be a multiple of 4 words, and a
// quad must lie wholly inside or wholly past C and W, so C, W, the bases,
// BK and BN are multiples of 4 (bases are word offsets of FP32 elements).
bool quads_fit(const MatmulTiles& t, std::uint64_t c, std::uint64_t w,
               std::initializer_list<std::uint32_t> bases)
{
    if (c % 4 != 0 || w % 4 != 0 || t.bk % 4 != 0 || t.bn % 4 != 0) return false;
    for (std::uint32_t base : bases)
        if (base % 4 != 0) return false;
    return true;
}

}  // namespace

MatmulLimits matmul_limits(const PhysicalRecord& device)
{
    MatmulLimits limits;
    limits.max_shared_bytes = device.limits.maxComputeSharedMemorySize;
    limits.max_invocations = device.limits.maxComputeWorkGroupInvocations;
    limits.max_group_size_x = device.limits.maxComputeWorkGroupSize[0];
    limits.subgroup_size = device.subgroup_size;
    limits.cpu_device = device.facts.type == VK_PHYSICAL_DEVICE_TYPE_CPU;
    limits.storage_offset_alignment = device.limits.minStorageBufferOffsetAlignment;
    limits.subgroup_arithmetic_in_compute =
        (device.subgroup_operations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0 &&
        (device.subgroup_operations & VK_SUBGROUP_FEATURE_BASIC_BIT) != 0 &&
        (device.subgroup_stages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
    return limits;
}

Result<MatmulChoice> device_matmul_choice(const PhysicalRecord& device)
{
    std::optional<std::string_view> tiles;
    if (const char* text = std::getenv("VACCEL_VULKAN_MATMUL_TILES")) tiles = text;
    std::optional<std::string_view> rows;
    if (const char* text = std::getenv("VACCEL_VULKAN_MATMUL_ROWS")) rows = text;
    auto choice = choose_matmul(matmul_limits(device), tiles, rows);
    if (!choice) return choice;
    const char* coop = std::getenv("VACCEL_VULKAN_COOPMAT");
    const bool coop_off = coop != nullptr && std::string_view(coop) == "0";
    if (device.coop_matrix_nv)
        choice->coop = choose_coop_shape(device.coop_entries, device.subgroup_size);
    std::optional<std::string_view> coop_tiles;
    if (const char* text = std::getenv("VACCEL_VULKAN_COOPMAT_TILES")) coop_tiles = text;
    if (choice->coop) {
        // Checked even when turned off, so a bad override is refused the
        // same way whatever VACCEL_VULKAN_COOPMAT says.
        auto tiles = choose_coop_tiles(*choice->coop, matmul_limits(device), coop_tiles);
        if (!tiles) return fail(tiles.error());
        choice->coop_tiles = std::move(*tiles);
    } else if (coop_tiles) {
        // Refused rather than ignored: a tuning run would otherwise measure
        // the scalar kernel under the override's name.
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
                        .with_note(fmt::format("VACCEL_VULKAN_COOPMAT_TILES=\"{}\" was refused: "
                                               "this device offers no FP16 x FP16 + FP32 "
                                               "cooperative matrix shape (VK_NV_cooperative_"
                                               "matrix) to run FP16 MATMUL on; unset it",
                                               *coop_tiles)));
    }
    // VACCEL_VULKAN_COOPMAT=0 keeps FP16 on the scalar kernel (comparisons).
    if (coop_off) {
        choice->coop.reset();
        choice->coop_tiles.clear();
    }
    return choice;
}

Result<std::vector<tosa::DispatchRequest>> lower_matmul(const tosa::OperatorView& view,
                                                        const MatmulChoice& choice)
{
    const std::uint32_t a = view.inputs[0], b = view.inputs[1], out = view.outputs[0];
    const DType in_dtype = view.block->tensors[a].dtype;
    const DType out_dtype = view.block->tensors[out].dtype;
    if (in_dtype != DType::fp32 && in_dtype != DType::fp16)
        return fail(matmul_dtype_refusal(view, in_dtype));
    if (view.block->tensors[b].dtype != in_dtype)
        return fail(matmul_dtype_refusal(view, view.block->tensors[b].dtype));
    MatmulMode mode = MatmulMode::fp32;
    if (in_dtype == DType::fp16 && out_dtype == DType::fp32) mode = MatmulMode::fp16_to_fp32;
    else if (in_dtype == DType::fp16 && out_dtype == DType::fp16) mode = MatmulMode::fp16_to_fp16;
    else if (out_dtype != DType::fp32) return fail(matmul_dtype_refusal(view, out_dtype));
    auto pa = operand(view, a);
    auto pb = operand(view, b);
    auto po = operand(view, out);
    if (!pa) return fail(pa.error());
    if (!pb) return fail(pb.error());
    if (!po) return fail(po.error());
    const auto& as = view.block->tensors[a].shape;
    const auto& bs = view.block->tensors[b].shape;
    const auto n = static_cast<std::uint64_t>(as[0]), h = static_cast<std::uint64_t>(as[1]),
               c = static_cast<std::uint64_t>(as[2]), w = static_cast<std::uint64_t>(bs[2]);
    tosa::KernelSpec spec;
    spec.spec = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(h),
                 static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(w),
                 po->buffer, po->base, pa->buffer, pa->base, pb->buffer, pb->base,
                 static_cast<std::uint32_t>(mode)};
    const bool empty = n * h * w == 0;
    const CoopTiles* coop_tiles = nullptr;
    if (choice.coop && mode == MatmulMode::fp16_to_fp32 && !empty)
        for (const CoopTiles& t : choice.coop_tiles)
            if (coop_fits(t, h, c, w, {pa->base, pb->base, po->base})) {
                coop_tiles = &t;
                break;
            }
    if (coop_tiles != nullptr) {
        // One workgroup per BM x BN block; matmul_coop.comp's constants
        // 12-20 follow the 11 operand words.
        const CoopMatrixShape& f = *choice.coop;
        const CoopTiles& t = *coop_tiles;
        spec.kernel = static_cast<std::uint32_t>(KernelId::matmul_coop);
        spec.spec.insert(spec.spec.end(), {f.m, f.n, f.k, t.bm, t.bn, t.bk, t.wm, t.wn,
                                         t.subgroups() * f.subgroup_size});
        spec.work = n * (h / t.bm) * (w / t.bn) * work_per_group;
    } else if (choice.rows && h <= choice.max_rows) {
        // One workgroup per block of threads * width results of every row;
        // width 4 reads B as vec4: FP32, and every B row and B's base
        // 16-byte aligned (the binding's own offset is aligned).
        const MatmulRows& rows = *choice.rows;
        const bool vectors = mode == MatmulMode::fp32 && w % rows_vector_width == 0 &&
                             pb->base % rows_vector_width == 0;
        const std::uint32_t width = vectors ? rows_vector_width : 1;
        spec.kernel = static_cast<std::uint32_t>(KernelId::matmul_rows);
        spec.spec.insert(spec.spec.end(), {rows.threads, rows.invocations(), rows.slices, width});
        spec.work = empty ? 0 : n * ceil_div(w, rows.threads * width) * work_per_group;
    } else {
        const MatmulTiles& t = choice.tiles;
        const bool vec4 = t.shared && t.vec4 && mode == MatmulMode::fp32 &&
                          quads_fit(t, c, w, {pa->base, pb->base});
        spec.kernel = static_cast<std::uint32_t>(KernelId::matmul_tiled);
        spec.spec.insert(spec.spec.end(), {t.bm, t.bn, t.bk, t.rm, t.rn, t.invocations(),
                                         t.shared ? 1u : 0u, vec4 ? 1u : 0u,
                                         t.shared && t.prefetch ? 1u : 0u,
                                         t.shared ? t.stages : 1u});
        spec.work = empty ? 0 : n * ceil_div(h, t.bm) * ceil_div(w, t.bn) * work_per_group;
    }
    return std::vector{tosa::DispatchRequest{std::move(spec), {a, b}, {out}}};
}

std::uint32_t matmul_k_step(const tosa::KernelSpec& kernel)
{
    // spec[i] is constant_id i + 1 (constant 0 is the buffer count): MODE
    // is spec[10], BK spec[13] in matmul_tiled.comp, spec[16] in
    // matmul_coop.comp (FP16 x FP16 -> FP32 only).
    if (kernel.spec.size() < 17 || kernel.work == 0) return 0;
    if (kernel.kernel == static_cast<std::uint32_t>(KernelId::matmul_tiled))
        return kernel.spec[10] == static_cast<std::uint32_t>(MatmulMode::fp16_to_fp16)
                   ? 0
                   : kernel.spec[13];
    if (kernel.kernel == static_cast<std::uint32_t>(KernelId::matmul_coop)) return kernel.spec[16];
    return 0;
}

Result<std::vector<tosa::DispatchRequest>> lower(const tosa::OperatorView& view,
                                                 const MatmulChoice& matmul)
{
    const auto mm = [&matmul](const tosa::OperatorView& v) { return lower_matmul(v, matmul); };
    if (view.op->op != tosa::Op::conv2d) return gpu::lower(view, mm);
    // VACCEL_VULKAN_CONV is checked for every CONV2D, so a bad value is
    // refused whatever the device's tiles.
    auto gemm = conv_gemm_enabled(view);
    if (!gemm) return fail(gemm.error());
    if (!*gemm || !matmul.conv) return gpu::lower(view, mm);
    return gpu::lower(view, mm, [&matmul](const tosa::OperatorView& v, const gpu::ConvGemm& g) {
        return lower_conv_gemm(v, g, *matmul.conv);
    });
}

}  // namespace vaccel::backend::vulkan
