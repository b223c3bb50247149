// lowering_matmul.cpp - TOSA MATMUL to the tiled or streaming kernel
// (lowering_matmul.hpp).
#include "lowering_matmul.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <initializer_list>

#include "lowering.hpp"

namespace vaccel::backend::vulkan {
namespace {

using tosa::DType;

// Element offsets are 32-bit specialization constants.
constexpr std::uint64_t max_kernel_elements = 0x7fffffff;
// submit.cpp's groups = ceil(work / 64).
constexpr std::uint64_t work_per_group = 64;

// The kernels' MODE constant (matmul_common.glsl).
enum class MatmulMode : std::uint32_t { fp32 = 0, fp16_to_fp32 = 1, fp16_to_fp16 = 2 };

struct Operand {
    std::uint32_t buffer = 0;
    std::uint32_t base = 0;  // in elements
};

Error dtype_refusal(const tosa::OperatorView& view, DType dtype)
{
    return Error::of(Errc::unsupported, VACCEL_D_TOSA_DTYPE, static_cast<std::uint64_t>(dtype),
                     static_cast<std::uint64_t>(view.op->op))
        .with_note(fmt::format("operator {} of the block: the Vulkan device runs MATMUL as "
                               "FP32 x FP32 -> FP32 or FP16 x FP16 -> FP16/FP32, not with "
                               "dtype {} here; run the program on the cpu device",
                               view.op_index, static_cast<unsigned>(dtype)));
}

Result<Operand> operand(const tosa::OperatorView& view, std::uint32_t index)
{
    const tosa::Location& where = view.location(index);
    const tosa::Tensor& t = view.block->tensors[index];
    const std::uint64_t element = t.dtype == DType::fp16 ? 2 : 4;
    if (t.element_count() > max_kernel_elements)
        return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_BAD_SHAPE,
                              t.element_count())
                        .with_note(fmt::format("operator {}: tensor \"{}\" has {} elements; the "
                                               "Vulkan kernels address at most {}",
                                               view.op_index, t.name, t.element_count(),
                                               max_kernel_elements)));
    if (where.is_slot()) return Operand{where.slot, 0};
    if (where.is_arena()) {
        // Arena offsets are multiples of tosa::arena_alignment: whole words.
        const std::uint64_t base = where.offset / element;
        if (base > max_kernel_elements)
            return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_BAD_SHAPE, base)
                            .with_note(fmt::format("operator {}: the program's arena is too "
                                                   "large for the Vulkan kernels' 32-bit "
                                                   "offsets",
                                                   view.op_index)));
        const auto arena = static_cast<std::uint32_t>(view.block->inputs.size() +
                                                      view.block->outputs.size());
        return Operand{arena, static_cast<std::uint32_t>(base)};
    }
    return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_REGIONS)
                    .with_note(fmt::format("operator {}: tensor \"{}\" has no location in the "
                                           "plan",
                                           view.op_index, t.name)));
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// matmul_coop.comp loads and stores whole fragments only, at 16-byte
// aligned addresses with 16-byte aligned strides: the block must divide H
// and W, the depth C, and every base and row stride be a multiple of 8
// elements (FP16 rows; FP32 result rows are then multiples of 32 bytes).
bool coop_fits(const CoopMatrixShape& s, std::uint64_t h, std::uint64_t c, std::uint64_t w,
               std::initializer_list<std::uint32_t> bases)
{
    const std::uint64_t f = CoopMatrixShape::fragments;
    if (h % (s.m * f) != 0 || w % (s.n * f) != 0 || c % s.k != 0 || c == 0) return false;
    if (c % 8 != 0 || w % 8 != 0) return false;
    for (std::uint32_t base : bases)
        if (base % 8 != 0) return false;
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
    // VACCEL_VULKAN_COOPMAT=0 keeps FP16 on the scalar kernel (comparisons).
    const char* coop = std::getenv("VACCEL_VULKAN_COOPMAT");
    if (device.coop_matrix_nv && !(coop != nullptr && std::string_view(coop) == "0"))
        choice->coop = choose_coop_shape(device.coop_entries, device.subgroup_size);
    return choice;
}

Result<std::vector<tosa::DispatchRequest>> lower_matmul(const tosa::OperatorView& view,
                                                        const MatmulChoice& choice)
{
    const std::uint32_t a = view.inputs[0], b = view.inputs[1], out = view.outputs[0];
    const DType in_dtype = view.block->tensors[a].dtype;
    const DType out_dtype = view.block->tensors[out].dtype;
    if (in_dtype != DType::fp32 && in_dtype != DType::fp16)
        return fail(dtype_refusal(view, in_dtype));
    if (view.block->tensors[b].dtype != in_dtype)
        return fail(dtype_refusal(view, view.block->tensors[b].dtype));
    MatmulMode mode = MatmulMode::fp32;
    if (in_dtype == DType::fp16 && out_dtype == DType::fp32) mode = MatmulMode::fp16_to_fp32;
    else if (in_dtype == DType::fp16 && out_dtype == DType::fp16) mode = MatmulMode::fp16_to_fp16;
    else if (out_dtype != DType::fp32) return fail(dtype_refusal(view, out_dtype));
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
    if (const auto& coop = choice.coop; coop && mode == MatmulMode::fp16_to_fp32 && !empty &&
                                        coop_fits(*coop, h, c, w, {pa->base, pb->base, po->base})) {
        const std::uint32_t f = CoopMatrixShape::fragments;
        spec.kernel = static_cast<std::uint32_t>(KernelId::matmul_coop);
        spec.spec.insert(spec.spec.end(), {coop->m, coop->n, coop->k, f, f, coop->invocations});
        spec.work = n * (h / (coop->m * f)) * (w / (coop->n * f)) * work_per_group;
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
        spec.kernel = static_cast<std::uint32_t>(KernelId::matmul_tiled);
        spec.spec.insert(spec.spec.end(), {t.bm, t.bn, t.bk, t.rm, t.rn, t.invocations(),
                                         t.shared ? 1u : 0u});
        spec.work = empty ? 0 : n * ceil_div(h, t.bm) * ceil_div(w, t.bn) * work_per_group;
    }
    return std::vector{tosa::DispatchRequest{std::move(spec), {a, b}, {out}}};
}

}  // namespace vaccel::backend::vulkan
