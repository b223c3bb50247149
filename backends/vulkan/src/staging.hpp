// staging.hpp - host transfers into memory the host cannot map, by words.
//
// Pure: the algorithm talks to a WordCopier (the device's copy commands in
// vulkan_backend.cpp, a vector in the tests). Decides (docs/adr/0013-vulkan-backend.md):
//  - every device copy starts and ends on a 4-byte word: buffers are
//    allocated in whole words, so the word holding any logical byte exists;
//  - a write that starts or ends inside a word reads that word into staging,
//    changes only the requested bytes, and writes the word back, so the
//    neighbouring bytes keep their values;
//  - whole words move in chunks of at most the staging buffer's size, so a
//    transfer of any length uses a bounded staging buffer (staging_bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "vaccel/common/error.hpp"

namespace vaccel::backend::vulkan {

inline constexpr std::uint64_t word_bytes = 4;
// The largest staging buffer one transfer uses.
inline constexpr std::uint64_t staging_bytes = std::uint64_t{4} << 20;

class WordCopier {
public:
    virtual ~WordCopier() = default;
    // The host's view of the staging buffer (a whole number of words, at least one).
    virtual std::span<std::byte> staging() = 0;
    // Device buffer [offset, offset + bytes) -> staging [0, bytes). Word aligned.
    virtual Status to_staging(std::uint64_t offset, std::uint64_t bytes) = 0;
    // Staging [0, bytes) -> device buffer [offset, offset + bytes). Word aligned.
    virtual Status from_staging(std::uint64_t offset, std::uint64_t bytes) = 0;
};

// The caller has checked the range against the buffer.
Status write_through_staging(WordCopier& copier, std::uint64_t start,
                             std::span<const std::byte> data);
Status read_through_staging(WordCopier& copier, std::uint64_t start, std::span<std::byte> data);

// The staging size for a transfer of `bytes` starting at `start`: whole words
// covering it, at most staging_bytes.
std::uint64_t staging_size_for(std::uint64_t start, std::uint64_t bytes);

}  // namespace vaccel::backend::vulkan
