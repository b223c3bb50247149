// lowering_conv.cpp - CONV2D as an implicit GEMM on CUDA (lowering_conv.hpp).
#include "lowering_conv.hpp"

#include <array>
#include <bit>
#include <span>

#include "env_switch.hpp"

namespace vaccel::backend::cuda {
namespace {

constexpr std::uint32_t block_threads = 256;

constexpr std::uint32_t id_of(ConvKernelId id) { return static_cast<std::uint32_t>(id); }

// In id order.
constexpr std::array<ConvKernel, 20> kernels{{
    {id_of(ConvKernelId::gemm_f32_t128), "vaccel_conv2d_gemm_f32_t128", block_threads, "conv2d_gemm"},
    {id_of(ConvKernelId::gemm_f32_t64), "vaccel_conv2d_gemm_f32_t64", block_threads, "conv2d_gemm"},
    {id_of(ConvKernelId::gemm_f16_t128), "vaccel_conv2d_gemm_f16_t128", block_threads, "conv2d_gemm"},
    {id_of(ConvKernelId::gemm_f16_t64), "vaccel_conv2d_gemm_f16_t64", block_threads, "conv2d_gemm"},
    {id_of(ConvKernelId::gemm_f32_t64_s2), "vaccel_conv2d_gemm_f32_t64_s2", block_threads, "conv2d_gemm"},
    {id_of(ConvKernelId::gemm_f32_t64_s4), "vaccel_conv2d_gemm_f32_t64_s4", block_threads, "conv2d_gemm"},
    {id_of(ConvKernelId::gemm_f32_t64_s8), "vaccel_conv2d_gemm_f32_t64_s8", block_threads, "conv2d_gemm"},
    {id_of(ConvKernelId::gemm_f16_t64_s2), "vaccel_conv2d_gemm_f16_t64_s2", block_threads, "conv2d_gemm"},
    {id_of(ConvKernelId::gemm_f16_t64_s4), "vaccel_conv2d_gemm_f16_t64_s4", block_threads, "conv2d_gemm"},
    {id_of(ConvKernelId::gemm_f16_t64_s8), "vaccel_conv2d_gemm_f16_t64_s8", block_threads, "conv2d_gemm"},
    {id_of(ConvKernelId::mma_f16_t128), "vaccel_conv2d_gemm_f16mma_t128", block_threads, "conv2d_gemm_mma"},
    {id_of(ConvKernelId::mma_f16_t64), "vaccel_conv2d_gemm_f16mma_t64", block_threads, "conv2d_gemm_mma"},
    {id_of(ConvKernelId::mma_f16_t64_s2), "vaccel_conv2d_gemm_f16mma_t64_s2", block_threads, "conv2d_gemm_mma"},
    {id_of(ConvKernelId::mma_f16_t64_s4), "vaccel_conv2d_gemm_f16mma_t64_s4", block_threads, "conv2d_gemm_mma"},
    {id_of(ConvKernelId::mma_f16_t64_s8), "vaccel_conv2d_gemm_f16mma_t64_s8", block_threads, "conv2d_gemm_mma"},
    {id_of(ConvKernelId::mma_tf32_t128), "vaccel_conv2d_gemm_tf32_t128", block_threads, "conv2d_gemm_mma"},
    {id_of(ConvKernelId::mma_tf32_t64), "vaccel_conv2d_gemm_tf32_t64", block_threads, "conv2d_gemm_mma"},
    {id_of(ConvKernelId::mma_tf32_t64_s2), "vaccel_conv2d_gemm_tf32_t64_s2", block_threads, "conv2d_gemm_mma"},
    {id_of(ConvKernelId::mma_tf32_t64_s4), "vaccel_conv2d_gemm_tf32_t64_s4", block_threads, "conv2d_gemm_mma"},
    {id_of(ConvKernelId::mma_tf32_t64_s8), "vaccel_conv2d_gemm_tf32_t64_s8", block_threads, "conv2d_gemm_mma"},
}};

// A kernel family's ids in the order t128, t64, t64_s2, t64_s4, t64_s8.
struct Family {
    ConvKernelId t128, t64, t64_s2;
};
constexpr Family fma_f32{ConvKernelId::gemm_f32_t128, ConvKernelId::gemm_f32_t64,
                         ConvKernelId::gemm_f32_t64_s2};
constexpr Family fma_f16{ConvKernelId::gemm_f16_t128, ConvKernelId::gemm_f16_t64,
                         ConvKernelId::gemm_f16_t64_s2};
constexpr Family mma_f16{ConvKernelId::mma_f16_t128, ConvKernelId::mma_f16_t64,
                         ConvKernelId::mma_f16_t64_s2};
constexpr Family mma_tf32{ConvKernelId::mma_tf32_t128, ConvKernelId::mma_tf32_t64,
                          ConvKernelId::mma_tf32_t64_s2};

constexpr std::uint32_t k_step = 8;  // conv2d_gemm.cu's bk

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

}  // namespace

std::span<const ConvKernel> conv_kernels() { return kernels; }

std::uint32_t gemm_split(std::uint64_t tiles, std::uint64_t depth, std::uint64_t multiprocessors)
{
    const std::uint64_t steps = ceil_div(depth, k_step);
    for (std::uint32_t s : {8u, 4u, 2u})
        if (tiles * s <= 2 * multiprocessors && steps >= 8u * s) return s;
    return 1;
}

Result<bool> conv_gemm_enabled(const tosa::OperatorView& view)
{
    return gpu::conv_gemm_chosen(view, "VACCEL_CUDA_CONV");
}

Result<bool> conv_mma_enabled()
{
    // Off by default: slower than the FP32 cores on small layers
    // (docs/adr/0028-tensor-core-convolutions-and-tf32.md).
    return env_switch("VACCEL_CUDA_CONV_MMA", false, "FP16 CONV2D on the tensor cores",
                      "FP16 CONV2D on the FP32 cores");
}

std::optional<gpu::ConvGemmKernel> lower_conv_gemm(const tosa::OperatorView&,
                                                   const gpu::ConvGemm& g,
                                                   std::uint32_t multiprocessors, bool fp16_mma,
                                                   Fp32Math fp32_math)
{
    const bool half = g.dtype == tosa::DType::fp16;
    if ((g.dtype != tosa::DType::fp32 && !half) || g.rows() == 0 || g.oc == 0 || g.depth() == 0)
        return std::nullopt;
    const bool vec = g.ic % 4 == 0 && g.oc % 4 == 0 && g.out.base % 4 == 0 &&
                     g.in.base % 4 == 0 && g.weight.base % 4 == 0 &&
                     (!g.bias_per_channel || g.bias.base % 4 == 0);
    const std::uint64_t sms = multiprocessors != 0 ? multiprocessors : 132;
    const Family& family = half ? (fp16_mma ? mma_f16 : fma_f16)
                                : (fp32_math == Fp32Math::tf32 ? mma_tf32 : fma_f32);
    std::uint32_t tile = 128;
    ConvKernelId id = family.t128;
    if (ceil_div(g.rows(), 128) * ceil_div(g.oc, 128) < 2 * sms) {
        tile = 64;
        id = family.t64;
    }
    const std::uint64_t tiles_m = ceil_div(g.rows(), tile), tiles_n = ceil_div(g.oc, tile);
    // Split K over a cluster when the 64 x 64 tiles are fewer than the SMs.
    const std::uint64_t tiles = tiles_m * tiles_n;
    const std::uint32_t split = tile == 64 && tiles < sms ? gemm_split(tiles, g.depth(), sms) : 1;
    if (split > 1)  // s2, s4, s8 in id order
        id = static_cast<ConvKernelId>(id_of(family.t64_s2) + std::countr_zero(split) - 1);
    tosa::KernelSpec spec;
    spec.kernel = static_cast<std::uint32_t>(id);
    spec.spec = {g.n, g.ih, g.iw, g.ic, g.oh, g.ow, g.oc, g.kh, g.kw,
                 g.stride_y, g.stride_x, g.dilation_y, g.dilation_x, g.pad_top, g.pad_left,
                 g.bias_per_channel ? 1u : 0u,
                 g.out.buffer, g.out.base, g.in.buffer, g.in.base,
                 g.weight.buffer, g.weight.base, g.bias.buffer, g.bias.base,
                 vec ? 1u : 0u,
                 static_cast<std::uint32_t>(tiles_m), static_cast<std::uint32_t>(tiles_n), split};
    // Words 28..: the epilogue every CONV2D GEMM kernel applies at its store.
    gpu::epilogue_words(spec.spec, g.epilogue != nullptr ? *g.epilogue : gpu::Epilogue{});
    spec.work = tiles * split * block_threads;
    return gpu::ConvGemmKernel{std::move(spec), true};
}

}  // namespace vaccel::backend::cuda
