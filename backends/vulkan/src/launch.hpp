// launch.hpp - how a launch's tagged argv maps onto a SPIR-V kernel.
//
// Pure. Decides (docs/adr/0013-vulkan-backend.md, Kernel launch):
//  - the scalar records, in argv order, are the push constants, each at its
//    natural alignment (kernel_args::lay_out of the scalars alone: 4 for
//    i32/f32/u32, 8 for i64/f64/u64, std430's scalar layout too), at most
//    maxPushConstantsSize bytes (ResourceLimit, the kernel-argument bytes
//    limit, arg0 = the device's maximum, arg1 = the block's size);
//  - the pointer records, in argv order, are storage buffers 0..n-1 of set
//    0: the bound buffer from the binding's offset, the record's bytes long
//    (the binding's bytes when the record says 0); at most the device's
//    descriptor count (ResourceLimit, the bindings limit);
//  - the pointer checks (a slot no binding carries, bytes past the
//    binding) are kernel_args::lay_out's, as on every device.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vaccel/common/error.hpp"
#include "vaccel/common/kernel_args.hpp"

namespace vaccel::backend::vulkan {

struct KernelBuffer {
    std::size_t binding = 0;  // index into the launch's bindings
    std::uint64_t bytes = 0;  // the descriptor's range
};

struct KernelArgs {
    std::vector<std::byte> push;
    std::vector<KernelBuffer> buffers;  // set 0, binding i = buffers[i]
};

Result<KernelArgs> map_kernel_args(std::span<const kernel_args::Arg> args,
                                   std::span<const vaccel_binding> bindings,
                                   std::uint32_t max_push_bytes, std::uint32_t max_buffers);

}  // namespace vaccel::backend::vulkan
