// arena_pool.hpp - the working arenas of one loaded TOSA program.
//
// Owns: the arenas (plan.hpp: intermediates, constants and staged outputs at
// the shared plan's offsets) that runs of one program compute in. Decides:
// the first arena is made when the program is loaded; a run takes an idle
// arena and gives it back when it ends, so concurrent runs of one program
// never share bytes, and a program run one submission at a time allocates
// exactly once. An arena is made with the plan's constants written, and
// nothing writes those bytes afterwards (the plan never packs another
// tensor over a constant), so a returned arena is reused as it is.
// Locking: `mutex_` guards `idle_` only; making an arena happens outside it.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "plan.hpp"

namespace vaccel::backend::cpu {

class ArenaPool {
public:
    using Arena = std::unique_ptr<std::byte[]>;

    explicit ArenaPool(std::shared_ptr<const Plan> plan) : plan_(std::move(plan)) {}

    // An idle arena, or a new one; nullptr when memory is exhausted.
    Arena take();
    // Gives an arena back for the next run.
    void give(Arena arena);
    // Arenas made so far (for tests and admin output).
    std::size_t made() const;

private:
    Arena make() const;

    std::shared_ptr<const Plan> plan_;
    mutable std::mutex mutex_;
    std::vector<Arena> idle_;
    std::size_t made_ = 0;
};

}  // namespace vaccel::backend::cpu
