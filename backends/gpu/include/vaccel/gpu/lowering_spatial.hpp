// lowering_spatial.hpp - the GPU lowering of the float profile's spatial
// and indexing operators beyond the FP32 tier: CONV2D, DEPTHWISE_CONV2D,
// AVG_POOL2D, RESIZE, GATHER, PAD, SLICE and TILE.
//
// Decides (docs/adr/0013-vulkan-backend.md):
//  - kernels: conv2d (CONV2D and DEPTHWISE_CONV2D), avg_pool2d, resize,
//    gather and pad_tile (PAD, SLICE and TILE), each one invocation per
//    result element, with the CPU device's accumulation order
//    (kernels/vulkan/*.comp and kernels/cuda/*.cu say it per kernel);
//  - SLICE is lowered on pad_tile, as a PAD whose leading counts are minus
//    its start, not on the elementwise kernel: the same index math with no
//    second spec layout to keep in step; PAD is one dispatch (the fill and
//    the copy decided per element), so it needs no fill-then-copy ordering;
//    TILE wants a modulo per dimension, which no stride expresses;
//  - dtypes: CONV2D, DEPTHWISE_CONV2D and AVG_POOL2D run on FP32, FP16 and
//    BF16 (every operand one dtype; widened to FP32 on load, FP32 sums,
//    rounded once on store, as on the CPU device), acc_type as TOSA 1.0
//    allows it; RESIZE on FP32; GATHER copies FP32 and INT32 (what the CPU
//    device admits among the GPU storage dtypes); PAD, SLICE and TILE copy
//    every copy dtype of lowering_storage.hpp bit for bit; anything else is
//    the dtype refusal of lowering.hpp;
//  - attributes and shapes are checked here with the CPU device's rules
//    (analyze() leaves the convolutions, pools, GATHER and RESIZE
//    unchecked): InvalidArgument, VACCEL_D_TOSA_GRAPH, arg0 =
//    VACCEL_TOSA_BAD_SHAPE or VACCEL_TOSA_BAD_ATTRIBUTE, arg1 = Op; zero
//    points and shape operands are the descriptor's constraints, refused by
//    admission before lowering;
//  - CONV2D as a GEMM: once its shapes and attributes are checked here, a
//    backend with a GEMM kernel for the convolution (ConvGemmLowerer) is
//    asked for it first; a backend that has none, or declines this one,
//    gets the direct conv2d kernel. The check is here, once, for every
//    backend; only the kernel choice is the backend's (as MATMUL's is).
//    Every dtype is offered to the GEMM kernel; one it declines runs on
//    the direct kernel;
//  - GATHER's indices are a REQUIRE condition (the descriptor says
//    advisory_only): an index outside [0, K) gives a row of zeros, never a
//    read outside the values (the CPU device reports it instead).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "vaccel/common/error.hpp"
#include "vaccel/tosa/capability.hpp"
#include "vaccel/tosa/plan.hpp"
#include "vaccel/gpu/lowering_epilogue.hpp"
#include "vaccel/gpu/lowering_operands.hpp"

namespace vaccel::backend::gpu {

// A CONV2D that lower_spatial() checked, as a GEMM sees it:
//   result [M, OC] = A [M, K] x B^T + bias,  M = N*OH*OW, K = KH*KW*IC,
// where row m = (n, oy, ox) of the NHWC result, A's row m is the input
// patch of that pixel in (ky, kx, ic) order (zero on padding: input row
// oy*stride_y + ky*dilation_y - pad_top, column likewise), and B is the
// weight as TOSA lays it out, [OC, KH, KW, IC]: row oc holds its K taps
// contiguously. Bases are in elements of each operand's dtype.
struct ConvGemm {
    std::uint32_t n = 0, ih = 0, iw = 0, ic = 0, oh = 0, ow = 0, oc = 0, kh = 0, kw = 0;
    std::uint32_t stride_y = 1, stride_x = 1, dilation_y = 1, dilation_x = 1;
    std::uint32_t pad_top = 0, pad_left = 0;
    bool bias_per_channel = true;  // bias [OC]; false: bias [1] for every channel
    Operand out, in, weight, bias;
    tosa::DType dtype = tosa::DType::fp32;  // of the input, weight and result
    // The chain folded into the convolution (never null; maybe empty): a
    // kernel that applies it says so (ConvGemmKernel), else the shared
    // lowering follows it with lowering_epilogue.hpp's pass.
    const Epilogue* epilogue = nullptr;

    std::uint64_t rows() const { return std::uint64_t{n} * oh * ow; }
    std::uint64_t depth() const { return std::uint64_t{kh} * kw * ic; }
};
// A backend's GEMM kernel for `gemm`: its KernelSpec (kernel, words, work),
// and whether it applies gemm.epilogue; nullopt for the direct kernel.
// Reads and writes are lower_spatial()'s.
struct ConvGemmKernel {
    tosa::KernelSpec kernel;
    bool applies_epilogue = false;
};
using ConvGemmLowerer =
    std::function<std::optional<ConvGemmKernel>(const tosa::OperatorView&, const ConvGemm&)>;

// Whether the backend's environment variable `variable` (VACCEL_CUDA_CONV,
// VACCEL_VULKAN_CONV) leaves CONV2D to its GEMM kernels: unset, empty or
// "gemm" yes, "direct" no (the direct kernel, the benchmarks' baseline);
// any other value InvalidArgument (VACCEL_D_BAD_VALUE, arg1 = the Op),
// naming the valid ones.
Result<bool> conv_gemm_chosen(const tosa::OperatorView& view, const char* variable);

// The dispatches of `view` when its operator is one of this file's, else
// nullopt (lower() goes on to its own refusal). `conv_gemm`, when set, is
// asked for CONV2D first; `applied` says whether its kernel took `epilogue`.
std::optional<Result<std::vector<tosa::DispatchRequest>>> lower_spatial(
    const tosa::OperatorView& view, const ConvGemmLowerer& conv_gemm, const Epilogue& epilogue,
    bool& applied);

// Adds this file's operators, with the dtypes their kernels run and the
// constraints the lowering relies on, to the GPU descriptor, and makes
// GATHER's index condition advisory. The dtypes are those of a device
// without 8- and 16-bit storage (FP32, FP16 and the 4-byte and BOOL copies);
// add_narrow_spatial_dtypes() lists a device's with them (BF16, and FP8
// copies), as with_storage() does for the other operators.
void add_spatial_operators(tosa::CapabilityDescriptor& descriptor);
void add_narrow_spatial_dtypes(tosa::CapabilityDescriptor& descriptor);

}  // namespace vaccel::backend::gpu
