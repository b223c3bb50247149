// lowering.hpp - how a GPU backend turns one TOSA operator into kernel
// dispatches (tosa/plan.hpp's Lowerer), and the operators it runs. Shared by
// the Vulkan and CUDA backends: both run kernels that read the same
// specialization words (docs/adr/0017-shared-gpu-lowering.md).
//
// Decides (docs/adr/0013-vulkan-backend.md, docs/adr/0017-shared-gpu-lowering.md):
//  - kernels (kernels/vulkan/*.comp, kernels/cuda/*.cu): elementwise (every
//    element-to-element operator, the strided copies and CAST), reduce and
//    max_pool2d here, each also as a _narrow variant for 8- and 16-bit
//    elements (on CUDA the same kernel: every width is addressable); conv2d,
//    avg_pool2d, resize, gather and pad_tile in lowering_spatial.hpp; MATMUL
//    is each backend's own (the `matmul` Lowerer of lower());
//    KernelSpec::spec holds the kernel's specialization words: on Vulkan
//    its specialization constants from constant_id 1 on, in declared order
//    (constant 0, the buffer count, is the program's and is added by the
//    pipeline builder); on CUDA spec[i] is the same word, read at run time;
//  - an operand is named by its buffer (its slot, or the arena after the
//    slots) and its element offset, in elements of its dtype (4, 2 or 1
//    bytes);
//  - storage and the dtypes each operator runs on: lowering_storage.hpp;
//    anything else is refused at load (Unsupported, VACCEL_D_TOSA_DTYPE,
//    arg0 = DType, arg1 = Op), though the descriptor admits the dtype,
//    because no kernel runs that operator on it.
#pragma once

#include <cstdint>

#include "vaccel/common/error.hpp"
#include "vaccel/tosa/capability.hpp"
#include "vaccel/tosa/plan.hpp"
#include "vaccel/gpu/lowering_spatial.hpp"
#include "vaccel/gpu/lowering_storage.hpp"

namespace vaccel::backend::gpu {

// The _narrow variants are the same kernels with 8- and 16-bit storage views
// (lowering_storage.hpp), chosen when an operand has 8- or 16-bit elements.
enum class KernelId : std::uint32_t {
    elementwise = 0, reduce = 1, matmul_tiled = 2, max_pool2d = 3,
    // The spatial and indexing kernels (lowering_spatial.hpp).
    conv2d = 4, avg_pool2d = 5, resize = 6, gather = 7, pad_tile = 8,
    elementwise_narrow = 9, reduce_narrow = 10, max_pool2d_narrow = 11,
    matmul_rows = 12,  // Vulkan lowering_matmul.hpp: H <= 4 with subgroup arithmetic
    matmul_coop = 13,  // Vulkan lowering_matmul.hpp: FP16 on cooperative matrices
    // 14..: each backend's own kernels, numbered per backend (a backend's
    // lowering never gives the other its ids): on CUDA the MATMUL kernels
    // 14..26 (backends/cuda/src/lowering_matmul.hpp) and the CONV2D GEMM
    // 27..36 (backends/cuda/src/lowering_conv.hpp); on Vulkan the CONV2D
    // GEMM 14 (backends/vulkan/src/lowering_conv.hpp, VulkanKernelId).
};
// The shared kernel ids, 0..13 (the Vulkan backend builds pipelines for
// these and its own, backends/vulkan/src/lowering_conv.hpp's
// vulkan_kernel_count).
inline constexpr std::uint32_t kernel_count = 14;

// The elementwise kernel's operation codes (elementwise.comp uses the same).
enum class ElementOp : std::uint32_t {
    copy32 = 0, copy8 = 1,
    add = 2, sub = 3, mul = 4, maximum = 5, minimum = 6, pow = 7,
    equal = 8, greater = 9, greater_equal = 10,
    abs = 11, negate = 12, exp = 13, log = 14, reciprocal = 15, rsqrt = 16,
    ceil = 17, floor = 18, sin = 19, cos = 20, sigmoid = 21, tanh = 22, erf = 23,
    clamp = 24, select = 25,
    logical_and = 26, logical_or = 27, logical_xor = 28, logical_not = 29,
    copy16 = 30, cast = 31,
};

// The FP32 tier's descriptor restricted to the operators lower() runs,
// plus add_spatial_operators()'s (lowering_spatial.hpp), and with
// `features` the narrow dtypes and CAST (lowering_storage.hpp): every
// operator it lists is lowered; nothing else is advertised. MATMUL is
// listed on FP32 and FP16: every backend's `matmul` Lowerer runs both.
tosa::CapabilityDescriptor gpu_descriptor(StorageFeatures features);
// A device without 8- and 16-bit storage: the FP32 tier and the spatial operators.
tosa::CapabilityDescriptor gpu_descriptor();

// The Lowerer of plan_block(): every operator but MATMUL here, MATMUL by
// the backend's `matmul`; CONV2D by the backend's `conv_gemm` where it has
// a GEMM kernel for it (lowering_spatial.hpp), else the direct kernel.
Result<std::vector<tosa::DispatchRequest>> lower(const tosa::OperatorView& view,
                                                 const tosa::Lowerer& matmul,
                                                 const ConvGemmLowerer& conv_gemm = {});

}  // namespace vaccel::backend::gpu
