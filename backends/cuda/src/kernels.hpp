// kernels.hpp - the CUDA TOSA kernels (kernels/cuda, compiled by nvcc into
// fatbins at build time: cubin for sm_90 and PTX the driver compiles for
// newer devices) and how each KernelSpec launches.
//
// Decides (docs/adr/0018-cuda-backend.md):
//  - the shared lowering's kernels (vaccel/gpu/lowering.hpp) run 256
//    threads per block over a grid of min(ceil(work / 256), 65535) blocks
//    and cover the rest with grid-stride loops; the _narrow variants are
//    the same CUDA kernels (every width is addressable);
//  - MATMUL kernels (lowering_matmul.hpp) run exactly work / block blocks;
//  - a context loads a module the first time a program of it needs one;
//    a kernel built for one compute capability alone (only_cc, sm_90a
//    code) is refused as Unsupported on any other device.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "objects.hpp"

namespace vaccel::backend::cuda {

struct KernelLaunchShape {
    std::string_view module;    // fatbin name (kernels/cuda/<module>.cu)
    std::string_view function;  // extern "C" name
    std::uint32_t block = 256;
    std::uint32_t dynamic_shared = 0;
    bool grid_stride = true;    // grid capped, kernel loops over the work
    std::uint32_t only_cc = 0;  // 10 * major + minor of the one device it runs on; 0: any
    // The entry of the same kernel that takes a k range (MatmulKernel::k_function); empty: none.
    std::string_view k_function = {};
};

// The launch shape of KernelSpec::kernel `id`; nullptr for an id no CUDA
// kernel runs.
const KernelLaunchShape* kernel_shape(std::uint32_t id);

// The embedded fatbin of `module`, empty when there is none.
std::span<const unsigned char> kernel_fatbin(std::string_view module);

// `function` of the context's copy of `module` (loaded on first use;
// dynamic shared memory above 48 KiB opted into). Call with the context
// current.
Result<CUfunction> context_kernel(ContextState& context, const KernelLaunchShape& shape);

// The grid of `shape` for `work` items.
std::uint32_t grid_for(const KernelLaunchShape& shape, std::uint64_t work);

}  // namespace vaccel::backend::cuda
