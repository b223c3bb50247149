// spirv_module.hpp - what the backend reads of a raw SPIR-V module
// (VACCEL_FORMAT_SPIRV) before giving it to the driver.
//
// Pure: the words are parsed here, no device. Decides (docs/adr/0013-vulkan-
// backend.md, Kernel launch): a module is a whole number of 32-bit
// little-endian words, at least the 5-word header, magic 0x07230203,
// version 1.0 to 1.6, every instruction's word count non-zero and within
// the module; its kernels are the names of its OpEntryPoint GLCompute
// instructions. Refusals are InvalidArgument, VACCEL_D_FORMAT, arg0 =
// VACCEL_FORMAT_SPIRV, arg1 = the byte offset of the fault.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vaccel/common/error.hpp"

namespace vaccel::backend::vulkan {

struct SpirvModule {
    std::vector<std::uint32_t> words;
    std::vector<std::string> compute_entries;  // in module order
};

Result<SpirvModule> inspect_spirv(std::span<const std::byte> payload);

}  // namespace vaccel::backend::vulkan
