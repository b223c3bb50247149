// fuzz_kernel_args.cpp - libFuzzer target: the kernel-argument parser and
// the parameter block.
//
// Property: any byte string either parses or is refused with an Error;
// nothing crashes, reads out of bounds or hangs. An argv that parses
// encodes back to exactly the same bytes, and lays out against a fixed set
// of bindings either with a refusal or with one naturally aligned,
// in-bounds offset per argument whose value reads back as parsed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "vaccel/common/kernel_args.hpp"

namespace {

namespace ka = vaccel::kernel_args;

// Slots 0..3 bound with small sizes (slot 1 with none, slot 2 twice), so
// that short fuzzer inputs reach every refusal of lay_out and success.
std::vector<vaccel_binding> fixed_bindings()
{
    std::vector<vaccel_binding> out;
    const std::uint64_t sizes[] = {0x10, 0, 0x100, 0x1000, 0x8};
    const std::uint32_t slots[] = {0, 1, 2, 3, 2};
    for (std::size_t i = 0; i < 5; ++i) {
        vaccel_binding b{};
        b.slot = slots[i];
        b.access = VACCEL_ACCESS_READ;
        b.buffer = 0x100 + i;
        b.offset = i * 0x40;
        b.bytes = sizes[i];
        out.push_back(b);
    }
    return out;
}

std::uint64_t address_of(std::size_t index) { return 0xa000'0000ULL + (index << 16); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const std::vector<vaccel_binding> bindings = fixed_bindings();
    const auto bytes = std::as_bytes(std::span(data, size));
    auto args = ka::parse(bytes);
    if (!args)
        return 0;

    const auto again = ka::encode(*args);
    if (again.size() != size || (size != 0 && std::memcmp(again.data(), data, size) != 0))
        std::abort();  // a parsed argv must encode to itself

    auto block = ka::lay_out(*args, bindings, address_of);
    if (!block)
        return 0;
    if (block->size() != args->size())
        std::abort();
    for (std::size_t i = 0; i < args->size(); ++i) {
        const ka::Arg& arg = (*args)[i];
        const std::size_t width = ka::value_bytes(arg.tag);
        const std::uint32_t at = block->offsets[i];
        if (at % width != 0 || at + width > block->bytes.size())
            std::abort();  // every value naturally aligned and inside the block
        if (i > 0 && at < block->offsets[i - 1] + ka::value_bytes((*args)[i - 1].tag))
            std::abort();  // in order, no overlap
        std::uint64_t want = arg.raw;
        if (arg.tag == ka::Tag::ptr) {
            std::size_t bound = 0;  // lay_out succeeded, so some binding has the slot
            while (bindings[bound].slot != ka::ptr_slot(arg))
                ++bound;
            want = address_of(bound);
        }
        const std::uint64_t got = width == 4 ? block->get<std::uint32_t>(i)
                                             : block->get<std::uint64_t>(i);
        if (got != want)
            std::abort();  // a scalar reads back as parsed, a pointer as its address
    }
    return 0;
}
