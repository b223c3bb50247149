// small_vector.hpp - a vector whose first N elements live inline.
//
// Owns its elements. Decides: up to N elements need no heap (bindings and
// their facts are bounded by VACCEL_MAX_BINDINGS on every path the wire
// checks); a longer list spills to a std::vector and behaves the same.
// A contiguous range: std::span converts from it.
// T must be default-constructible and copyable; clear() resets the inline
// elements to T{}, so held references (shared_ptr) are dropped at once.
#pragma once

#include <array>
#include <cstddef>
#include <utility>
#include <vector>

namespace vaccel {

template <class T, std::size_t N>
class SmallVector {
public:
    void push_back(const T& value)
    {
        if (spilled_.empty() && size_ < N) {
            inline_[size_++] = value;
            return;
        }
        if (spilled_.empty())
            spill();
        spilled_.push_back(value);
        ++size_;
    }
    // New elements are T{}.
    void resize(std::size_t n)
    {
        if (spilled_.empty() && n <= N) {
            for (std::size_t i = n; i < size_; ++i)
                inline_[i] = T{};
            for (std::size_t i = size_; i < n; ++i)
                inline_[i] = T{};
        } else {
            if (spilled_.empty())
                spill();
            spilled_.resize(n);
        }
        size_ = n;
    }
    void clear()
    {
        if (spilled_.empty())
            for (std::size_t i = 0; i < size_; ++i)
                inline_[i] = T{};
        spilled_ = {};
        size_ = 0;
    }

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T* data() { return spilled_.empty() ? inline_.data() : spilled_.data(); }
    const T* data() const { return spilled_.empty() ? inline_.data() : spilled_.data(); }
    T& operator[](std::size_t i) { return data()[i]; }
    const T& operator[](std::size_t i) const { return data()[i]; }
    T* begin() { return data(); }
    T* end() { return data() + size_; }
    const T* begin() const { return data(); }
    const T* end() const { return data() + size_; }

private:
    // Moves the inline elements to the heap (the inline ones reset).
    void spill()
    {
        spilled_.reserve(size_ + 1);
        for (std::size_t i = 0; i < size_; ++i)
            spilled_.push_back(std::exchange(inline_[i], T{}));
    }

    std::array<T, N> inline_{};
    std::vector<T> spilled_;
    std::size_t size_ = 0;
};

}  // namespace vaccel
