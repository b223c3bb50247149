// kernels.cpp - the compiled kernels, included as the arrays glslc wrote.
#include "kernels.hpp"

#include "lowering_conv.hpp"

namespace vaccel::backend::vulkan {
namespace {

const std::uint32_t elementwise_spirv[] =
#include "elementwise.spv.inc"
    ;
const std::uint32_t reduce_spirv[] =
#include "reduce.spv.inc"
    ;
const std::uint32_t max_pool2d_spirv[] =
#include "max_pool2d.spv.inc"
    ;
const std::uint32_t conv2d_spirv[] =
#include "conv2d.spv.inc"
    ;
const std::uint32_t avg_pool2d_spirv[] =
#include "avg_pool2d.spv.inc"
    ;
const std::uint32_t resize_spirv[] =
#include "resize.spv.inc"
    ;
const std::uint32_t gather_spirv[] =
#include "gather.spv.inc"
    ;
const std::uint32_t pad_tile_spirv[] =
#include "pad_tile.spv.inc"
    ;
// The same kernels with 8- and 16-bit storage views (kernels/vulkan/CMakeLists.txt).
const std::uint32_t elementwise_narrow_spirv[] =
#include "elementwise_narrow.spv.inc"
    ;
const std::uint32_t reduce_narrow_spirv[] =
#include "reduce_narrow.spv.inc"
    ;
const std::uint32_t max_pool2d_narrow_spirv[] =
#include "max_pool2d_narrow.spv.inc"
    ;
const std::uint32_t matmul_tiled_spirv[] =
#include "matmul_tiled.spv.inc"
    ;
const std::uint32_t matmul_rows_spirv[] =
#include "matmul_rows.spv.inc"
    ;
const std::uint32_t matmul_coop_spirv[] =
#include "matmul_coop.spv.inc"
    ;
const std::uint32_t conv2d_gemm_spirv[] =
#include "conv2d_gemm.spv.inc"
    ;

}  // namespace

std::span<const std::uint32_t> kernel_spirv(std::uint32_t id)
{
    if (id == static_cast<std::uint32_t>(VulkanKernelId::conv2d_gemm)) return conv2d_gemm_spirv;
    if (id >= kernel_count) return {};
    switch (static_cast<KernelId>(id)) {
    case KernelId::elementwise: return elementwise_spirv;
    case KernelId::reduce: return reduce_spirv;
    case KernelId::max_pool2d: return max_pool2d_spirv;
    case KernelId::conv2d: return conv2d_spirv;
    case KernelId::avg_pool2d: return avg_pool2d_spirv;
    case KernelId::resize: return resize_spirv;
    case KernelId::gather: return gather_spirv;
    case KernelId::pad_tile: return pad_tile_spirv;
    case KernelId::elementwise_narrow: return elementwise_narrow_spirv;
    case KernelId::reduce_narrow: return reduce_narrow_spirv;
    case KernelId::max_pool2d_narrow: return max_pool2d_narrow_spirv;
    case KernelId::matmul_tiled: return matmul_tiled_spirv;
    case KernelId::matmul_rows: return matmul_rows_spirv;
    case KernelId::matmul_coop: return matmul_coop_spirv;
    }
    return {};
}

}  // namespace vaccel::backend::vulkan
