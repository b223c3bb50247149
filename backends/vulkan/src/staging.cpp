// staging.cpp - word-granular transfers through a bounded staging buffer (see staging.hpp).
#include "staging.hpp"

#include <algorithm>
#include <cstring>

namespace vaccel::backend::vulkan {

namespace {

std::uint64_t whole_words(std::uint64_t bytes) { return bytes / word_bytes * word_bytes; }

}  // namespace

std::uint64_t staging_size_for(std::uint64_t start, std::uint64_t bytes)
{
    const std::uint64_t first = start - start % word_bytes;
    const std::uint64_t end = (start + bytes + word_bytes - 1) / word_bytes * word_bytes;
    return std::min(end - first, staging_bytes);
}

Status write_through_staging(WordCopier& copier, std::uint64_t start,
                             std::span<const std::byte> data)
{
    const std::uint64_t length = data.size();
    const std::uint64_t chunk_limit = whole_words(copier.staging().size());
    std::uint64_t done = 0;
    if (const std::uint64_t skew = start % word_bytes; skew != 0) {
        // Head: the word holding `start`, read, patched and written back.
        const std::uint64_t head = std::min(word_bytes - skew, length);
        if (auto ok = copier.to_staging(start - skew, word_bytes); !ok) return ok;
        std::memcpy(copier.staging().data() + skew, data.data(), head);
        if (auto ok = copier.from_staging(start - skew, word_bytes); !ok) return ok;
        done = head;
    }
    while (length - done >= word_bytes) {
        const std::uint64_t chunk = std::min(whole_words(length - done), chunk_limit);
        std::memcpy(copier.staging().data(), data.data() + done, chunk);
        if (auto ok = copier.from_staging(start + done, chunk); !ok) return ok;
        done += chunk;
    }
    if (done < length) {
        // Tail: start + done is word aligned here; the word holding the last bytes.
        if (auto ok = copier.to_staging(start + done, word_bytes); !ok) return ok;
        std::memcpy(copier.staging().data(), data.data() + done, length - done);
        if (auto ok = copier.from_staging(start + done, word_bytes); !ok) return ok;
    }
    return {};
}

Status read_through_staging(WordCopier& copier, std::uint64_t start, std::span<std::byte> data)
{
    const std::uint64_t length = data.size();
    const std::uint64_t chunk_limit = whole_words(copier.staging().size());
    std::uint64_t done = 0;
    if (const std::uint64_t skew = start % word_bytes; skew != 0) {
        const std::uint64_t head = std::min(word_bytes - skew, length);
        if (auto ok = copier.to_staging(start - skew, word_bytes); !ok) return ok;
        std::memcpy(data.data(), copier.staging().data() + skew, head);
        done = head;
    }
    while (length - done >= word_bytes) {
        const std::uint64_t chunk = std::min(whole_words(length - done), chunk_limit);
        if (auto ok = copier.to_staging(start + done, chunk); !ok) return ok;
        std::memcpy(data.data() + done, copier.staging().data(), chunk);
        done += chunk;
    }
    if (done < length) {
        if (auto ok = copier.to_staging(start + done, word_bytes); !ok) return ok;
        std::memcpy(data.data() + done, copier.staging().data(), length - done);
    }
    return {};
}

}  // namespace vaccel::backend::vulkan
