// jit_cache.cpp - compiled PTX kept on disk (jit_cache.hpp).
#include "jit_cache.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <fstream>

namespace vaccel::backend::cuda {
namespace {

constexpr std::array<char, 8> magic{'V', 'A', 'C', 'U', 'B', 'I', 'N', '1'};

struct Header {
    std::array<char, 8> magic;
    std::uint64_t key;
    std::uint64_t bytes;
};

std::uint64_t fnv1a(std::uint64_t hash, const void* data, std::size_t length)
{
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < length; ++i) {
        hash ^= p[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

std::filesystem::path file_of(const std::filesystem::path& directory, JitKey key)
{
    return directory / fmt::format("{:016x}.cubin", key.value);
}

}  // namespace

JitKey jit_key(std::span<const std::byte> ptx, int compute_major, int compute_minor,
               int driver_version)
{
    std::uint64_t h = fnv1a(0xcbf29ce484222325ull, ptx.data(), ptx.size());
    const int facts[3] = {compute_major, compute_minor, driver_version};
    return JitKey{fnv1a(h, facts, sizeof facts)};
}

std::optional<std::vector<std::byte>> jit_cache_read(const std::filesystem::path& directory,
                                                     JitKey key)
{
    if (directory.empty()) return std::nullopt;
    std::ifstream in(file_of(directory, key), std::ios::binary);
    Header header{};
    if (!in.read(reinterpret_cast<char*>(&header), sizeof header)) return std::nullopt;
    if (header.magic != magic || header.key != key.value || header.bytes == 0 ||
        header.bytes > (std::uint64_t{1} << 30))
        return std::nullopt;
    std::vector<std::byte> cubin(header.bytes);
    if (!in.read(reinterpret_cast<char*>(cubin.data()), static_cast<std::streamsize>(cubin.size())))
        return std::nullopt;
    if (in.peek() != std::char_traits<char>::eof()) return std::nullopt;  // trailing bytes
    return cubin;
}

bool jit_cache_write(const std::filesystem::path& directory, JitKey key,
                     std::span<const std::byte> cubin)
{
    if (directory.empty()) return false;
    std::error_code ec;
    std::filesystem::create_directories(directory, ec);
    if (ec) return false;
    const auto target = file_of(directory, key);
    auto temporary = target;
    temporary += fmt::format(".{}.tmp", getpid());
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        const Header header{magic, key.value, cubin.size()};
        out.write(reinterpret_cast<const char*>(&header), sizeof header);
        out.write(reinterpret_cast<const char*>(cubin.data()),
                  static_cast<std::streamsize>(cubin.size()));
        if (!out.flush()) {
            std::filesystem::remove(temporary, ec);
            return false;
        }
    }
    std::filesystem::rename(temporary, target, ec);
    if (ec) std::filesystem::remove(temporary, ec);
    return !ec;
}

}  // namespace vaccel::backend::cuda
