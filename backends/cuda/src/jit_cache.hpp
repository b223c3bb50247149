// jit_cache.hpp - PTX compiled once per device and driver.
//
// Owns: <state_dir>/cuda/<key>.cubin files. Decides
// (docs/adr/0018-cuda-backend.md):
//  - the key is a 64-bit FNV-1a of the PTX text, the device's compute
//    capability and the driver version, so a new driver or another GPU
//    compiles afresh;
//  - a file starts with a header (magic, key, cubin bytes) checked on read:
//    a file that does not match is ignored and replaced, never loaded;
//  - files are written to a temporary name and renamed, so a reader never
//    sees half a file; a cache that cannot be written is only a slower load.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

namespace vaccel::backend::cuda {

struct JitKey {
    std::uint64_t value = 0;
};

JitKey jit_key(std::span<const std::byte> ptx, int compute_major, int compute_minor,
               int driver_version);

// The cached cubin of `key` under `directory`, or nothing (absent, or a
// file that fails its header check).
std::optional<std::vector<std::byte>> jit_cache_read(const std::filesystem::path& directory,
                                                     JitKey key);
// Stores `cubin` for `key`; false when it could not be written.
bool jit_cache_write(const std::filesystem::path& directory, JitKey key,
                     std::span<const std::byte> cubin);

}  // namespace vaccel::backend::cuda
