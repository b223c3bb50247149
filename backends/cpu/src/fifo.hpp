// fifo.hpp - a first-in first-out queue that keeps its storage.
//
// Owns its elements, in a ring that only grows (doubling). Decides: a queue
// that fills and drains over and over (a lane's submissions, a flow's ready
// lanes) allocates only when it holds more than ever before, where a
// std::deque allocates and frees a chunk every few dozen elements.
// pop_front() resets the slot to T{}, so a held reference is dropped at once.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace vaccel::backend::cpu {

template <class T>
class Fifo {
public:
    bool empty() const { return count_ == 0; }
    std::size_t size() const { return count_; }
    T& front() { return slots_[head_]; }
    T& back() { return slots_[(head_ + count_ - 1) % slots_.size()]; }
    // Room for n elements without growing.
    void reserve(std::size_t n)
    {
        while (slots_.size() < n) grow();
    }
    // The i-th element from the front (i < size()).
    const T& operator[](std::size_t i) const { return slots_[(head_ + i) % slots_.size()]; }

    void push_back(T value)
    {
        if (count_ == slots_.size())
            grow();
        slots_[(head_ + count_) % slots_.size()] = std::move(value);
        ++count_;
    }

    void pop_front()
    {
        slots_[head_] = T{};
        head_ = (head_ + 1) % slots_.size();
        --count_;
    }

private:
    void grow()
    {
        std::vector<T> larger(slots_.empty() ? 4 : slots_.size() * 2);
        for (std::size_t i = 0; i < count_; ++i)
            larger[i] = std::move(slots_[(head_ + i) % slots_.size()]);
        slots_ = std::move(larger);
        head_ = 0;
    }

    std::vector<T> slots_;
    std::size_t head_ = 0;
    std::size_t count_ = 0;
};

}  // namespace vaccel::backend::cpu
