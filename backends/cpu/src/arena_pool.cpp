// arena_pool.cpp - making, lending and taking back a program's arenas.
#include "arena_pool.hpp"

#include <cstring>
#include <new>

namespace vaccel::backend::cpu {

ArenaPool::Arena ArenaPool::make() const
{
    // operator new[] aligns to at least 16 bytes: enough for every element type.
    Arena arena(new (std::nothrow) std::byte[plan_->arena_bytes == 0 ? 1 : plan_->arena_bytes]);
    if (!arena) return arena;
    for (const tosa::ConstantPlan& constant : plan_->arena_constants)
        std::memcpy(arena.get() + constant.offset, constant.bytes.data(), constant.bytes.size());
    return arena;
}

ArenaPool::Arena ArenaPool::take()
{
    {
        std::lock_guard lock(mutex_);
        if (!idle_.empty()) {
            Arena arena = std::move(idle_.back());
            idle_.pop_back();
            return arena;
        }
    }
    Arena arena = make();
    if (arena) {
        std::lock_guard lock(mutex_);
        ++made_;
    }
    return arena;
}

void ArenaPool::give(Arena arena)
{
    if (!arena) return;
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(arena));
}

std::size_t ArenaPool::made() const
{
    std::lock_guard lock(mutex_);
    return made_;
}

}  // namespace vaccel::backend::cpu
