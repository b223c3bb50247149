// launch_ops.cpp - LAUNCH of a kernel program.
//
// Owns nothing beyond the handler. Decides the engine's share of a launch,
// after the submit stages 1 and 3 (submit_ops.cpp):
//  - the entry name is NUL-terminated inside its field with zero bytes after
//    the NUL (InvalidArgument, D_BAD_VALUE, arg0 = the field's offset) and
//    not empty;
//  - the program is a kernel program (Incompatible, D_FORMAT);
//  - dims (validate::launch_dims);
//  - argv parses (kernel_args::parse: its caps and malformations), once,
//    here: every backend receives the parsed records;
//  - bindings as submit's stages 4-5, then validate::launch_bindings;
//  - an event is charged.
// The backend then checks the entry and lays the arguments out.
#include <cstring>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "ops.hpp"
#include "submit_common.hpp"
#include "vaccel/common/kernel_args.hpp"

namespace vaccel::engine::ops {

namespace {

Result<std::string_view> entry_name(const vaccel_launch& args)
{
    const void* nul = std::memchr(args.entry, '\0', sizeof args.entry);
    const auto at = static_cast<std::uint64_t>(offsetof(vaccel_launch, entry));
    if (nul == nullptr)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, at, sizeof args.entry)
                        .with_note("the entry name is not NUL-terminated within its 256 bytes"));
    const std::size_t length = static_cast<const char*>(nul) - args.entry;
    for (std::size_t i = length; i < sizeof args.entry; ++i)
        if (args.entry[i] != '\0')
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_RESERVED_NONZERO, at + i)
                            .with_note("bytes after the entry name's NUL must be zero"));
    if (length == 0)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, at, 0)
                        .with_note("the entry name is empty"));
    return std::string_view(args.entry, length);
}

bool is_kernel_format(std::uint32_t format) { return format != VACCEL_FORMAT_TOSA; }

}  // namespace

Status launch(SessionState& state, vaccel_launch& args, std::span<const std::byte> payload)
{
    auto target = resolve_target(state, args.queue, args.program);
    if (!target)
        return fail(std::move(target.error()));
    auto entry = entry_name(args);
    if (!entry)
        return fail(std::move(entry.error()));
    const std::uint32_t format = target->program->object->format();
    if (!is_kernel_format(format))
        return fail(Error::of(Errc::incompatible, VACCEL_D_FORMAT, format)
                        .with_note("TOSA programs are submitted, not launched; launch a kernel "
                                   "program (PTX, cubin or the CPU's built-ins)"));
    if (auto ok = check_deadline(*target, args.deadline_ns); !ok)
        return ok;
    if (auto ok = validate::launch_dims(args.dims); !ok)
        return ok;

    const std::size_t binding_bytes = std::size_t{args.binding_count} * sizeof(vaccel_binding);
    auto parsed = kernel_args::parse(payload.subspan(binding_bytes));
    if (!parsed)
        return fail(std::move(parsed.error()));
    const WireBindings wire =
        load_small_array<vaccel_binding, VACCEL_MAX_BINDINGS>(payload.first(binding_bytes));
    Bindings bindings;
    if (auto resolved = resolve_bindings(state, *target, wire, bindings); !resolved)
        return resolved;
    if (auto valid = validate::launch_bindings(binding_facts(bindings, wire),
                                               target->context->accounting->limits().max_bindings);
        !valid)
        return valid;

    backend::LaunchDesc desc;
    desc.queue = target->queue->object.get();
    desc.program = target->program->object.get();
    desc.entry = *entry;
    desc.dims = args.dims;
    desc.args = *parsed;
    desc.bindings = bindings;
    desc.deadline_ns = args.deadline_ns;
    return hand_over(
        state, *target, desc,
        [](backend::Backend& b, const backend::LaunchDesc& d) { return b.launch(d); }, bindings,
        wire, args.event);
}

}  // namespace vaccel::engine::ops
