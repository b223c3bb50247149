// recycling.hpp - fixed-size blocks kept for reuse once freed.
//
// Owns, per block size, a free list of blocks given back. Decides: objects
// made and dropped once per request (a submission, its event, its watch)
// reuse the memory of earlier ones instead of the heap; a block may be
// taken on one thread and given back on another (a worker dropping the
// last reference), so each list has a mutex (a leaf). At most `kept`
// blocks per size stay listed; more go back to the heap.
// The lists are never destroyed: a block given back during static
// destruction still has a list to go to.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace vaccel {

template <std::size_t Size>
class BlockPool {
public:
    static constexpr std::size_t kept = 1024;

    static void* take()
    {
        Lists& l = lists();
        {
            std::lock_guard lock(l.mutex);
            if (Node* node = l.head) {
                l.head = node->next;
                --l.count;
                return node;
            }
        }
        return ::operator new(block);
    }

    // At least `n` blocks listed (up to `kept`), so that the first n
    // blocks taken at once cost no allocation.
    static void reserve(std::size_t n)
    {
        std::vector<void*> blocks;
        blocks.reserve(n);
        for (std::size_t i = 0; i < n; ++i)
            blocks.push_back(take());
        for (void* block : blocks)
            give(block);
    }

    static void give(void* p) noexcept
    {
        Lists& l = lists();
        {
            std::lock_guard lock(l.mutex);
            if (l.count < kept) {
                l.head = ::new (p) Node{l.head};
                ++l.count;
                return;
            }
        }
        ::operator delete(p);
    }

private:
    struct Node {
        Node* next;
    };
    static constexpr std::size_t block = Size < sizeof(Node) ? sizeof(Node) : Size;
    struct Lists {
        std::mutex mutex;
        Node* head = nullptr;
        std::size_t count = 0;
    };
    static Lists& lists()
    {
        static Lists& l = *new Lists;
        return l;
    }
};

// An allocator over BlockPool for single objects (std::allocate_shared).
template <class T>
struct Recycling {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    using value_type = T;

    Recycling() = default;
    template <class U>
    Recycling(const Recycling<U>&) noexcept
    {
    }

    T* allocate(std::size_t n)
    {
        if (n != 1)
            return std::allocator<T>().allocate(n);
        return static_cast<T*>(BlockPool<sizeof(T)>::take());
    }
    void deallocate(T* p, std::size_t n) noexcept
    {
        if (n != 1)
            return std::allocator<T>().deallocate(p, n);
        BlockPool<sizeof(T)>::give(p);
    }
    template <class U>
    bool operator==(const Recycling<U>&) const noexcept
    {
        return true;
    }
};

// At least `n` blocks listed for allocate_shared<T>(Recycling<T>{}) (its
// control block and T in one), made while allocating is harmless (at open),
// so that the first n objects alive at once cost no allocation. T must be
// default-constructible without effects.
template <class T>
void reserve_shared(std::size_t n)
{
    std::vector<std::shared_ptr<T>> made;
    made.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
        made.push_back(std::allocate_shared<T>(Recycling<T>{}));
}

}  // namespace vaccel
