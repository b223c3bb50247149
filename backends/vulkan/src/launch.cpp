// launch.cpp - a launch's argv as push constants and storage buffers (launch.hpp).
#include "launch.hpp"

#include <fmt/format.h>

namespace vaccel::backend::vulkan {

Result<KernelArgs> map_kernel_args(std::span<const kernel_args::Arg> args,
                                   std::span<const vaccel_binding> bindings,
                                   std::uint32_t max_push_bytes, std::uint32_t max_buffers)
{
    // The pointer refusals every device shares; the addresses are unused.
    auto all = kernel_args::lay_out(args, bindings, [](std::size_t) { return std::uint64_t{0}; });
    if (!all) return fail(all.error());
    std::vector<kernel_args::Arg> scalars;
    KernelArgs out;
    for (const kernel_args::Arg& arg : args) {
        if (arg.tag != kernel_args::Tag::ptr) {
            scalars.push_back(arg);
            continue;
        }
        // lay_out resolved it: the first binding carrying the slot.
        for (std::size_t i = 0; i < bindings.size(); ++i) {
            if (bindings[i].slot != kernel_args::ptr_slot(arg)) continue;
            const std::uint64_t bytes = kernel_args::ptr_bytes(arg);
            out.buffers.push_back({i, bytes != 0 ? bytes : bindings[i].bytes});
            break;
        }
    }
    if (out.buffers.size() > max_buffers)
        return fail(Error::limit_hit(VACCEL_LIMIT_BINDINGS, max_buffers, out.buffers.size())
                        .with_note(fmt::format("the launch passes {} pointers, more storage "
                                               "buffers than the {} this device binds at once; "
                                               "pass fewer pointers",
                                               out.buffers.size(), max_buffers)));
    auto block = kernel_args::lay_out(scalars, {}, [](std::size_t) { return std::uint64_t{0}; });
    if (!block) return fail(block.error());
    if (block->bytes.size() > max_push_bytes)
        return fail(Error::limit_hit(VACCEL_LIMIT_KERNEL_ARGS_BYTES, max_push_bytes,
                                     block->bytes.size())
                        .with_note(fmt::format("the launch's scalar arguments take {} bytes of "
                                               "push constants, more than the device's {}; pass "
                                               "large data in a buffer",
                                               block->bytes.size(), max_push_bytes)));
    out.push = std::move(block->bytes);
    return out;
}

}  // namespace vaccel::backend::vulkan
