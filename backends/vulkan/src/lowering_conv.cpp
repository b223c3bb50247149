// lowering_conv.cpp - CONV2D as an implicit GEMM on Vulkan (lowering_conv.hpp).
#include "lowering_conv.hpp"

#include "vaccel/gpu/lowering_epilogue.hpp"

namespace vaccel::backend::vulkan {
namespace {

// submit.cpp's groups = ceil(work / 64).
constexpr std::uint64_t work_per_group = 64;

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

}  // namespace

Result<bool> conv_gemm_enabled(const tosa::OperatorView& view)
{
    return gpu::conv_gemm_chosen(view, "VACCEL_VULKAN_CONV");
}

std::optional<gpu::ConvGemmKernel> lower_conv_gemm(const tosa::OperatorView&,
                                                   const gpu::ConvGemm& g,
                                                   const MatmulTiles& tiles)
{
    if (g.dtype != tosa::DType::fp32 || g.rows() == 0 || g.oc == 0 || g.depth() == 0)
        return std::nullopt;
    // A quad of taps k..k+3 (k a multiple of 4) is four channels of one
    // pixel when IC % 4 == 0, and starts on 16 bytes when the bases do (a
    // slot's own offset is aligned: matmul_tiles.hpp clears vec4 where it
    // may not be); the shared path also needs whole quads per k step.
    // The direct path with one column of invocations (a CPU device's) on
    // fewer rows than half a block: halve the rows, double the columns (to
    // 8), until the block's rows are used or one row per invocation is
    // left (lavapipe, 7x7x512 3x3 of one image, M = 49: 1.5 GFLOP/s in 64 x
    // 8 blocks of 1 x 8 against 0.5 in 256 x 4 blocks of 4 x 4).
    MatmulTiles t = tiles;
    if (!t.shared && t.bn == t.rn) {
        while (t.rm > 1 && g.rows() <= t.bm / 2) {
            t.bm /= 2;
            t.rm /= 2;
            if (t.rn < 8) {
                t.rn *= 2;
                t.bn *= 2;
            }
        }
    }
    const bool vec4 = t.vec4 && g.ic % 4 == 0 && g.in.base % 4 == 0 && g.weight.base % 4 == 0 &&
                      (!t.shared || t.bk % 4 == 0);
    tosa::KernelSpec spec;
    spec.kernel = static_cast<std::uint32_t>(VulkanKernelId::conv2d_gemm);
    spec.spec = {g.n, g.ih, g.iw, g.ic, g.oh, g.ow, g.oc, g.kh, g.kw,
                 g.stride_y, g.stride_x, g.dilation_y, g.dilation_x, g.pad_top, g.pad_left,
                 g.bias_per_channel ? 1u : 0u,
                 g.out.buffer, g.out.base, g.in.buffer, g.in.base,
                 g.weight.buffer, g.weight.base, g.bias.buffer, g.bias.base,
                 t.bm, t.bn, t.bk, t.rm, t.rn, t.invocations(),
                 t.shared ? 1u : 0u, vec4 ? 1u : 0u,
                 t.shared && t.prefetch ? 1u : 0u, t.shared ? t.stages : 1u};
    // Words 34..53 (constants 35..54): the epilogue conv2d_gemm.comp
    // applies at its store.
    gpu::epilogue_words(spec.spec, g.epilogue != nullptr ? *g.epilogue : gpu::Epilogue{});
    spec.work = ceil_div(g.rows(), t.bm) * ceil_div(g.oc, t.bn) * work_per_group;
    return gpu::ConvGemmKernel{std::move(spec), true};
}

}  // namespace vaccel::backend::vulkan
