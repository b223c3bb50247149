// args.hpp - moving an op's uapi struct in and out of its byte span.
//
// Owns nothing. Decides: handlers work on a properly aligned copy of the
// struct (the span may come from a wire buffer with any alignment); the
// copy is written back whole, outputs included, after the handler ran.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "vaccel/common/small_vector.hpp"

namespace vaccel::engine {

template <class T>
T load_struct(std::span<const std::byte> bytes)
{
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, bytes.data(), sizeof value);  // size checked by check_request
    return value;
}

template <class T>
void store_struct(std::span<std::byte> bytes, const T& value)
{
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(bytes.data(), &value, sizeof value);
}

// An array of T carried in a payload (bindings, wait handles); the payload
// size was checked against the count by request_payload_size().
template <class T>
std::vector<T> load_array(std::span<const std::byte> bytes)
{
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty())
        std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
}

// The same, inline up to N elements (N: the wire's bound on the count).
template <class T, std::size_t N>
SmallVector<T, N> load_small_array(std::span<const std::byte> bytes)
{
    static_assert(std::is_trivially_copyable_v<T>);
    SmallVector<T, N> out;
    out.resize(bytes.size() / sizeof(T));
    if (!out.empty())
        std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
}

}  // namespace vaccel::engine
