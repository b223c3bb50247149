// spirv_module.cpp - reading a SPIR-V module's header and entry points (spirv_module.hpp).
#include "spirv_module.hpp"

#include <fmt/format.h>

#include <cstring>

#include "vaccel.h"

namespace vaccel::backend::vulkan {
namespace {

constexpr std::uint32_t magic = 0x07230203;
constexpr std::uint32_t max_version = 0x00010600;  // SPIR-V 1.6
constexpr std::uint32_t op_entry_point = 15;
constexpr std::uint32_t model_gl_compute = 5;

Error malformed(std::size_t offset, std::string why)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_FORMAT, VACCEL_FORMAT_SPIRV, offset)
        .with_note(fmt::format("not a SPIR-V module the device can load: {} (byte {}); compile "
                               "the kernel with glslc or glslangValidator for Vulkan",
                               why, offset));
}

}  // namespace

Result<SpirvModule> inspect_spirv(std::span<const std::byte> payload)
{
    if (payload.size() % 4 != 0)
        return fail(malformed(payload.size() & ~std::size_t{3},
                              fmt::format("{} bytes is not a whole number of 32-bit words",
                                          payload.size())));
    if (payload.size() < 20)
        return fail(malformed(0, fmt::format("{} bytes, shorter than the 20-byte header",
                                             payload.size())));
    SpirvModule module;
    module.words.resize(payload.size() / 4);
    // Little-endian words, as the host reads them (x86-64, aarch64).
    std::memcpy(module.words.data(), payload.data(), payload.size());
    const auto& w = module.words;
    if (w[0] != magic)
        return fail(malformed(0, fmt::format("magic {:#010x}, not {:#010x}", w[0], magic)));
    const std::uint32_t version = w[1];
    if (version < 0x00010000 || version > max_version || (version & 0xff0000ffu) != 0)
        return fail(malformed(4, fmt::format("version {:#010x}, not 1.0 to 1.6", version)));
    for (std::size_t at = 5; at < w.size();) {
        const std::uint32_t count = w[at] >> 16;
        const std::uint32_t opcode = w[at] & 0xffff;
        if (count == 0 || count > w.size() - at)
            return fail(malformed(at * 4, fmt::format("an instruction of {} words where {} "
                                                      "remain",
                                                      count, w.size() - at)));
        // OpEntryPoint: model, function id, then the name as a NUL-ended
        // string packed into words.
        if (opcode == op_entry_point && count >= 4 && w[at + 1] == model_gl_compute) {
            const char* name = reinterpret_cast<const char*>(&w[at + 3]);
            const std::size_t room = (count - 3) * 4;
            const std::size_t length = strnlen(name, room);
            if (length == room)
                return fail(malformed(at * 4, "an entry point name without its NUL"));
            module.compute_entries.emplace_back(name, length);
        }
        at += count;
    }
    return module;
}

}  // namespace vaccel::backend::vulkan
