// kernel_args.hpp - the tagged kernel-argument buffer ("argv") of a launch.
//
// Owns: the argument records as values (Arg), their wire form, and the
// aligned parameter block a backend hands to its kernel. Decides what a
// well-formed argv is, so every backend refuses the same buffer with the
// same error. parse() checks, in this order (the first failure is returned):
//   1. argv.size() <= VACCEL_MAX_KERNEL_ARGS_BYTES (ResourceLimit,
//      VACCEL_LIMIT_KERNEL_ARGS_BYTES, arg0 = the maximum, arg1 = the size);
//   2. then record by record, at each record's first byte:
//      a. at most VACCEL_MAX_KERNEL_ARGS records (ResourceLimit,
//         VACCEL_LIMIT_KERNEL_ARGS, arg0 = the maximum, arg1 = the index of
//         the first record past it, which is the maximum);
//      b. a 0x00 from which every byte to the end is 0x00 is padding after
//         the last record (InvalidArgument, D_KERNEL_ARG_TRAILING,
//         arg0 = its offset, arg1 = how many zero bytes);
//      c. any other byte that is no tag (InvalidArgument, D_KERNEL_ARG_TAG,
//         arg0 = its offset, arg1 = the byte);
//      d. the tag's value bytes all present (InvalidArgument,
//         D_KERNEL_ARG_TRUNCATED, arg0 = the tag's offset, arg1 = how many
//         value bytes are missing).
// lay_out() then resolves pointer records against the launch's bindings
// (its own refusals are listed there).
//
// Wire form (uapi "Kernel launch"): records back to back, no padding, each a
// tag byte and the value's little-endian bytes, whatever the host's order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "vaccel.h"
#include "vaccel/common/error.hpp"

namespace vaccel::kernel_args {

// A record's kind; the numbers are the uapi's VACCEL_ARG_* tag bytes.
enum class Tag : std::uint8_t {
    i32 = VACCEL_ARG_I32,
    i64 = VACCEL_ARG_I64,
    f32 = VACCEL_ARG_F32,
    f64 = VACCEL_ARG_F64,
    u32 = VACCEL_ARG_U32,
    u64 = VACCEL_ARG_U64,
    ptr = VACCEL_ARG_PTR,
};

// How many value bytes follow the tag on the wire: 4 for i32/f32/u32, 8 for
// i64/f64/u64 and ptr (u32 slot, u32 bytes); 0 for a value that is no tag.
constexpr std::size_t value_bytes(Tag tag)
{
    switch (tag) {
    case Tag::i32:
    case Tag::f32:
    case Tag::u32: return 4;
    case Tag::i64:
    case Tag::f64:
    case Tag::u64:
    case Tag::ptr: return 8;
    }
    return 0;
}

// The tag a byte names, if any.
std::optional<Tag> tag_of(std::uint8_t byte);

// One argument record.
//
// `raw` holds the value bytes as one little-endian number: a 4-byte kind in
// its low 32 bits with the high 32 bits zero (the constructors keep that
// invariant, and it makes == compare values bit for bit, NaNs included); a
// pointer as slot | bytes << 32, exactly its 8 wire bytes.
struct Arg {
    Tag tag = Tag::u32;
    std::uint64_t raw = 0;

    static Arg i32(std::int32_t v);
    static Arg i64(std::int64_t v);
    static Arg f32(float v);
    static Arg f64(double v);
    static Arg u32(std::uint32_t v);
    static Arg u64(std::uint64_t v);
    // The device address of the buffer bound at `slot`, plus the binding's
    // offset; the kernel touches at most `bytes` bytes from there.
    static Arg ptr(std::uint32_t slot, std::uint32_t bytes);

    friend bool operator==(const Arg&, const Arg&) = default;
};

// Readers: reinterpret raw as the type named, without looking at the tag
// (switch on arg.tag first).
std::int32_t as_i32(const Arg& arg);
std::int64_t as_i64(const Arg& arg);
float as_f32(const Arg& arg);
double as_f64(const Arg& arg);
std::uint32_t as_u32(const Arg& arg);
std::uint64_t as_u64(const Arg& arg);
std::uint32_t ptr_slot(const Arg& arg);
std::uint32_t ptr_bytes(const Arg& arg);

// The records of `argv` in order, or the first refusal (see the top of this
// file). An empty argv is no arguments.
Result<std::vector<Arg>> parse(std::span<const std::byte> argv);

// The wire form of `args`; parse(encode(a)) == a whenever `a` is within the
// limits. Writes what it is given (no limit is checked).
std::vector<std::byte> encode(std::span<const Arg> args);

// Every argument's value in one block, each at its natural alignment (4 for
// i32/f32/u32, 8 for i64/f64/u64 and for pointers, which hold a 64-bit
// device address), in host byte order, in argument order, padding zero.
// offsets[i] is where argument i starts. bytes.data() comes from operator
// new, so it is aligned at least to 8 and the offsets' alignment holds in
// memory too: a CUDA backend points its void*[i] at bytes.data() +
// offsets[i] (and must not resize `bytes` afterwards); a CPU backend reads
// with get<T>(i).
struct ParamBlock {
    std::vector<std::byte> bytes;
    std::vector<std::uint32_t> offsets;

    std::size_t size() const { return offsets.size(); }

    // Argument i as T, where T has the argument's width (4 or 8 bytes: e.g.
    // float for an f32, std::uint64_t for a pointer's address). Reads
    // nothing outside `bytes`: an i or width that does not fit gives T{}.
    template <class T>
    T get(std::size_t i) const
    {
        static_assert(std::is_trivially_copyable_v<T> && (sizeof(T) == 4 || sizeof(T) == 8));
        T value{};
        if (i < offsets.size() && offsets[i] <= bytes.size() &&
            bytes.size() - offsets[i] >= sizeof(T))
            std::memcpy(&value, bytes.data() + offsets[i], sizeof(T));
        return value;
    }
};

// The parameter block of `args` for a launch with `bindings`.
// A pointer record resolves through the binding carrying its slot (the first
// one; the binding rules admit each slot once):
//   - no binding carries the slot: InvalidArgument, D_KERNEL_ARG_POINTER,
//     arg0 = the record's index, arg1 = the slot;
//   - the record's bytes exceed the binding's bytes: OutOfBounds, D_RANGE,
//     arg0 = the binding's offset, arg1 = the record's bytes (0 bytes, or
//     exactly the binding's bytes, are fine).
// Its address is address_of(binding index): the backend's base address of
// that binding's buffer plus the binding's offset. address_of is called only
// for pointer records, after their checks passed.
Result<ParamBlock> lay_out(std::span<const Arg> args, std::span<const vaccel_binding> bindings,
                           const std::function<std::uint64_t(std::size_t binding_index)>&
                               address_of);

}  // namespace vaccel::kernel_args
