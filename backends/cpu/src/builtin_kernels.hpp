// builtin_kernels.hpp - the CPU device's built-in kernels (VACCEL_FORMAT_CPU_BUILTIN).
//
// Owns the table of built-in entry points: their names, their argument
// signatures and how they run. They exist so that the whole launch path
// (library, transport, module or socket, daemon, engine, backend) runs and
// is tested where there is no GPU. Decides, for a launch, what the CPU
// refuses beyond the shared rules: an entry that is not in the table, an
// argument list that does not match the entry's signature, a pointer bound
// without the access the kernel needs, or a count that reaches past the
// bytes a pointer record declares.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "objects.hpp"
#include "vaccel/common/kernel_args.hpp"

namespace vaccel::backend::cpu {

// The payload of a CPU_BUILTIN program: the bytes of this name, no NUL.
inline constexpr std::string_view builtin_library = "vaccel.builtin";

// One parameter of a built-in kernel.
struct BuiltinParam {
    kernel_args::Tag tag;
    std::uint32_t access = 0;  // pointers: the binding access the kernel needs
};

struct BuiltinKernel {
    std::string_view name;
    std::span<const BuiltinParam> params;
    // Checks the values against the pointers' declared bytes (OutOfBounds,
    // VACCEL_D_RANGE, arg0 = the pointer's argument index, arg1 = bytes the
    // kernel would touch).
    Status (*check)(std::span<const kernel_args::Arg> args);
    // Runs over the laid-out parameters (pointers hold host addresses).
    void (*run)(const kernel_args::ParamBlock& params, const vaccel_launch_dims& dims);
};

// The entry named `entry`, or nullptr.
const BuiltinKernel* find_builtin(std::string_view entry);

// The names of every entry, in table order, joined by ", " (for refusals).
std::string_view builtin_names();

// The launch's arguments against the kernel's signature: the count
// (InvalidArgument, D_KERNEL_SIGNATURE, arg0 = count given, arg1 = count
// expected), then each tag (D_KERNEL_SIGNATURE, arg0 = index, arg1 = the
// expected tag), then each pointer's binding access (Incompatible, D_ACCESS,
// arg0 = access needed, arg1 = the binding's access), then kernel->check.
Status check_launch(const BuiltinKernel& kernel, std::span<const kernel_args::Arg> args,
                    std::span<const Binding> bindings);

// Runs a launch to its outcome on a worker (deadline checked before it).
Status run_kernel(const KernelRun& run, std::uint64_t deadline_ns);

// The failure of everything a lost CPU device still had.
Error device_lost_error(const vaccel_device_info& info);

}  // namespace vaccel::backend::cpu
