// kernel_args.cpp - parsing, encoding and laying out kernel arguments.
//
// Decides how a record's bytes become an Arg (little-endian, byte by byte,
// so the host's order never matters on the wire) and where each value lands
// in the parameter block. The check order is listed in kernel_args.hpp.
#include "vaccel/common/kernel_args.hpp"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

namespace vaccel::kernel_args {

static_assert(value_bytes(Tag::i32) == 4 && value_bytes(Tag::ptr) == 8);
// The widest block: every record a pointer, each at an 8-byte boundary; it
// fits the 32-bit offsets with plenty of room.
static_assert(VACCEL_MAX_KERNEL_ARGS * 8 < UINT32_MAX);

std::optional<Tag> tag_of(std::uint8_t byte)
{
    if (byte >= VACCEL_ARG_I32 && byte <= VACCEL_ARG_PTR)
        return static_cast<Tag>(byte);
    return std::nullopt;
}

Arg Arg::i32(std::int32_t v) { return {Tag::i32, static_cast<std::uint32_t>(v)}; }
Arg Arg::i64(std::int64_t v) { return {Tag::i64, static_cast<std::uint64_t>(v)}; }
Arg Arg::f32(float v) { return {Tag::f32, std::bit_cast<std::uint32_t>(v)}; }
Arg Arg::f64(double v) { return {Tag::f64, std::bit_cast<std::uint64_t>(v)}; }
Arg Arg::u32(std::uint32_t v) { return {Tag::u32, v}; }
Arg Arg::u64(std::uint64_t v) { return {Tag::u64, v}; }
Arg Arg::ptr(std::uint32_t slot, std::uint32_t bytes)
{
    return {Tag::ptr, slot | static_cast<std::uint64_t>(bytes) << 32};
}

std::int32_t as_i32(const Arg& arg) { return static_cast<std::int32_t>(arg.raw); }
std::int64_t as_i64(const Arg& arg) { return static_cast<std::int64_t>(arg.raw); }
float as_f32(const Arg& arg) { return std::bit_cast<float>(static_cast<std::uint32_t>(arg.raw)); }
double as_f64(const Arg& arg) { return std::bit_cast<double>(arg.raw); }
std::uint32_t as_u32(const Arg& arg) { return static_cast<std::uint32_t>(arg.raw); }
std::uint64_t as_u64(const Arg& arg) { return arg.raw; }
std::uint32_t ptr_slot(const Arg& arg) { return static_cast<std::uint32_t>(arg.raw); }
std::uint32_t ptr_bytes(const Arg& arg) { return static_cast<std::uint32_t>(arg.raw >> 32); }

Result<std::vector<Arg>> parse(std::span<const std::byte> argv)
{
    // 1. The whole buffer's size, before any byte of it is looked at.
    if (argv.size() > VACCEL_MAX_KERNEL_ARGS_BYTES)
        return fail(Error::limit_hit(VACCEL_LIMIT_KERNEL_ARGS_BYTES,
                                     VACCEL_MAX_KERNEL_ARGS_BYTES, argv.size()));

    std::vector<Arg> args;
    std::size_t at = 0;  // offset of the next record's tag byte
    while (at < argv.size()) {
        // 2a. There is a record at `at`; it would be number args.size().
        if (args.size() == VACCEL_MAX_KERNEL_ARGS)
            return fail(Error::limit_hit(VACCEL_LIMIT_KERNEL_ARGS, VACCEL_MAX_KERNEL_ARGS,
                                         args.size()));

        const auto byte = std::to_integer<std::uint8_t>(argv[at]);
        const std::optional<Tag> tag = tag_of(byte);
        if (!tag) {
            // 2b. Zero padding to the end (a common mistake: a buffer sized
            // up to some alignment) is told apart from a bad tag.
            if (byte == 0 && std::all_of(argv.begin() + static_cast<std::ptrdiff_t>(at),
                                         argv.end(), [](std::byte b) { return b == std::byte{0}; }))
                return fail(Errc::invalid_argument, VACCEL_D_KERNEL_ARG_TRAILING, at,
                            argv.size() - at);
            // 2c.
            return fail(Errc::invalid_argument, VACCEL_D_KERNEL_ARG_TAG, at, byte);
        }

        // 2d. `at < size`, so the subtraction cannot wrap.
        const std::size_t need = value_bytes(*tag);
        const std::size_t have = argv.size() - at - 1;
        if (have < need)
            return fail(Errc::invalid_argument, VACCEL_D_KERNEL_ARG_TRUNCATED, at, need - have);

        std::uint64_t raw = 0;
        for (std::size_t k = 0; k < need; ++k)
            raw |= std::to_integer<std::uint64_t>(argv[at + 1 + k]) << (8 * k);
        args.push_back(Arg{*tag, raw});
        at += 1 + need;
    }
    return args;
}

std::vector<std::byte> encode(std::span<const Arg> args)
{
    std::vector<std::byte> out;
    out.reserve(args.size() * 9);
    for (const Arg& arg : args) {
        out.push_back(static_cast<std::byte>(arg.tag));
        for (std::size_t k = 0; k < value_bytes(arg.tag); ++k)
            out.push_back(static_cast<std::byte>(arg.raw >> (8 * k)));
    }
    return out;
}

namespace {

// Appends `value` at the next multiple of its size (4 or 8, which is also
// its alignment), zero-filling the gap; records where it went.
template <class T>
void push(ParamBlock& block, T value)
{
    static_assert(sizeof(T) == 4 || sizeof(T) == 8);
    const std::size_t at = (block.bytes.size() + sizeof(T) - 1) & ~(sizeof(T) - 1);
    block.bytes.resize(at + sizeof(T), std::byte{0});
    std::memcpy(block.bytes.data() + at, &value, sizeof(T));
    block.offsets.push_back(static_cast<std::uint32_t>(at));
}

}  // namespace

Result<ParamBlock> lay_out(std::span<const Arg> args, std::span<const vaccel_binding> bindings,
                           const std::function<std::uint64_t(std::size_t binding_index)>&
                               address_of)
{
    ParamBlock block;
    block.bytes.reserve(args.size() * 8);
    block.offsets.reserve(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
        const Arg& arg = args[i];
        if (arg.tag != Tag::ptr) {
            // The low value_bytes of raw are the value; the host-order copy
            // of that many bytes is what the kernel's parameter holds.
            if (value_bytes(arg.tag) == 4)
                push(block, static_cast<std::uint32_t>(arg.raw));
            else
                push(block, arg.raw);
            continue;
        }
        const std::uint32_t slot = ptr_slot(arg);
        const std::uint32_t bytes = ptr_bytes(arg);
        const auto found = std::find_if(bindings.begin(), bindings.end(),
                                        [slot](const vaccel_binding& b) { return b.slot == slot; });
        if (found == bindings.end())
            return fail(Errc::invalid_argument, VACCEL_D_KERNEL_ARG_POINTER, i, slot);
        const std::size_t index = static_cast<std::size_t>(found - bindings.begin());
        if (bytes > found->bytes)
            return fail(Error::of(Errc::out_of_bounds, VACCEL_D_RANGE, found->offset, bytes)
                            .with_note(fmt::format("kernel argument {} reaches past binding {} "
                                                   "(slot {}, {} bytes)",
                                                   i, index, slot, found->bytes)));
        push(block, static_cast<std::uint64_t>(address_of(index)));
    }
    return block;
}

}  // namespace vaccel::kernel_args
