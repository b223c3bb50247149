// builtin_kernels.cpp - the table of the CPU's built-in kernels (see builtin_kernels.hpp).
//
//   fill_u32(ptr dst, u32 value, u32 count)      dst[i] = value, i < count
//   axpy_f32(f32 a, ptr x, ptr y, u32 n)          y[i] = a * x[i] + y[i], i < n
//
// The kernels read their pointers as host addresses (the CPU's device
// addresses) and may be handed unaligned ones (a binding offset need not be
// a multiple of 4), so every element moves through memcpy.
#include "builtin_kernels.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>

namespace vaccel::backend::cpu {

namespace {

using kernel_args::Arg;
using kernel_args::ParamBlock;
using kernel_args::Tag;

std::byte* address(const ParamBlock& params, std::size_t i)
{
    return reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(params.get<std::uint64_t>(i)));
}

Status fits(std::span<const Arg> args, std::size_t pointer, std::uint64_t elements)
{
    const std::uint64_t touched = elements * 4;
    if (touched > kernel_args::ptr_bytes(args[pointer]))
        return fail(Error::of(Errc::out_of_bounds, VACCEL_D_RANGE, pointer, touched)
                        .with_note(fmt::format("argument {} declares {} bytes but the kernel "
                                               "would touch {}; bind and declare more bytes or "
                                               "pass a smaller count",
                                               pointer, kernel_args::ptr_bytes(args[pointer]),
                                               touched)));
    return {};
}

constexpr std::array fill_params{BuiltinParam{Tag::ptr, VACCEL_ACCESS_WRITE},
                                 BuiltinParam{Tag::u32}, BuiltinParam{Tag::u32}};

Status fill_check(std::span<const Arg> args) { return fits(args, 0, kernel_args::as_u32(args[2])); }

void fill_run(const ParamBlock& params, const vaccel_launch_dims&)
{
    std::byte* dst = address(params, 0);
    const auto value = params.get<std::uint32_t>(1);
    const auto count = params.get<std::uint32_t>(2);
    for (std::uint32_t i = 0; i < count; ++i)
        std::memcpy(dst + std::size_t{i} * 4, &value, 4);
}

constexpr std::array axpy_params{BuiltinParam{Tag::f32}, BuiltinParam{Tag::ptr, VACCEL_ACCESS_READ},
                                 BuiltinParam{Tag::ptr, VACCEL_ACCESS_RW}, BuiltinParam{Tag::u32}};

Status axpy_check(std::span<const Arg> args)
{
    const std::uint32_t n = kernel_args::as_u32(args[3]);
    if (auto ok = fits(args, 1, n); !ok)
        return ok;
    return fits(args, 2, n);
}

void axpy_run(const ParamBlock& params, const vaccel_launch_dims&)
{
    const auto a = params.get<float>(0);
    const std::byte* x = address(params, 1);
    std::byte* y = address(params, 2);
    const auto n = params.get<std::uint32_t>(3);
    for (std::uint32_t i = 0; i < n; ++i) {
        float xi, yi;
        std::memcpy(&xi, x + std::size_t{i} * 4, 4);
        std::memcpy(&yi, y + std::size_t{i} * 4, 4);
        yi = a * xi + yi;
        std::memcpy(y + std::size_t{i} * 4, &yi, 4);
    }
}

constexpr std::array kernels{
    BuiltinKernel{"fill_u32", fill_params, fill_check, fill_run},
    BuiltinKernel{"axpy_f32", axpy_params, axpy_check, axpy_run},
};

constexpr std::string_view tag_name(Tag tag)
{
    switch (tag) {
    case Tag::i32: return "i32";
    case Tag::i64: return "i64";
    case Tag::f32: return "f32";
    case Tag::f64: return "f64";
    case Tag::u32: return "u32";
    case Tag::u64: return "u64";
    case Tag::ptr: return "ptr";
    }
    return "?";
}

}  // namespace

const BuiltinKernel* find_builtin(std::string_view entry)
{
    for (const BuiltinKernel& kernel : kernels)
        if (kernel.name == entry)
            return &kernel;
    return nullptr;
}

std::string_view builtin_names() { return "fill_u32, axpy_f32"; }

Status check_launch(const BuiltinKernel& kernel, std::span<const Arg> args,
                    std::span<const Binding> bindings)
{
    if (args.size() != kernel.params.size())
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_KERNEL_SIGNATURE, args.size(),
                              kernel.params.size())
                        .with_note(fmt::format("{} takes {} arguments, the launch passed {}",
                                               kernel.name, kernel.params.size(), args.size())));
    for (std::size_t i = 0; i < args.size(); ++i)
        if (args[i].tag != kernel.params[i].tag)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_KERNEL_SIGNATURE, i,
                                  static_cast<std::uint64_t>(kernel.params[i].tag))
                            .with_note(fmt::format("argument {} of {} is a {}, the launch passed "
                                                   "a {}",
                                                   i, kernel.name, tag_name(kernel.params[i].tag),
                                                   tag_name(args[i].tag))));
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i].tag != Tag::ptr)
            continue;
        const std::uint32_t slot = kernel_args::ptr_slot(args[i]);
        for (const Binding& binding : bindings) {
            if (binding.slot != slot)
                continue;
            const std::uint32_t needed = kernel.params[i].access;
            if ((binding.access & needed) != needed)
                return fail(Error::of(Errc::incompatible, VACCEL_D_ACCESS, needed, binding.access)
                                .with_note(fmt::format("{} {} argument {} (slot {}); bind it "
                                                       "with that access",
                                                       kernel.name,
                                                       needed == VACCEL_ACCESS_READ ? "reads"
                                                       : needed == VACCEL_ACCESS_WRITE
                                                           ? "writes"
                                                           : "reads and writes",
                                                       i, slot)));
            break;
        }
    }
    return kernel.check(args);
}

Status run_kernel(const KernelRun& run, std::uint64_t deadline_ns)
{
    if (deadline_ns != 0 && monotonic_ns() >= deadline_ns)
        return fail(Error::of(Errc::deadline_expired, VACCEL_D_DEADLINE)
                        .with_note("the launch's deadline passed before it started running; "
                                   "nothing was written"));
    run.kernel->run(run.params, run.dims);
    return {};
}

Error device_lost_error(const vaccel_device_info& info)
{
    return Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE)
        .with_note(fmt::format("device \"{}\" was lost; its work cannot complete. Use another "
                               "device, or restart the daemon to reset this one",
                               info.name));
}

}  // namespace vaccel::backend::cpu
