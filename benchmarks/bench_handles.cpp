// bench_handles.cpp - HandleTable lookups (hit, stale) and insert+remove,
// against std::unordered_map<uint64_t, T>::find in the same run.
#include <algorithm>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include <benchmark/benchmark.h>

#include "vaccel/common/handles.hpp"

using namespace vaccel;

namespace {

// Something the size of a session's per-object record.
struct Object {
    std::uint64_t backend_id = 0;
    std::uint64_t bytes = 0;
    std::uint32_t usage = 0;
    std::uint32_t access = 0;
};

constexpr std::uint32_t live_objects = 1024;

// Handles of `live_objects` buffers, visited in a shuffled order.
struct Filled {
    HandleTable<Object> table{live_objects};
    std::vector<std::uint64_t> order;
};

Filled filled()
{
    Filled f;
    for (std::uint32_t i = 0; i < live_objects; ++i)
        f.order.push_back(*f.table.insert(HandleKind::buffer, Object{i, 4096, 1, 3}));
    std::shuffle(f.order.begin(), f.order.end(), std::mt19937_64(42));
    return f;
}

void BM_HandleLookupHit(benchmark::State& state)
{
    Filled f = filled();
    std::size_t i = 0;
    for (auto _ : state) {
        auto found = f.table.lookup(f.order[i], HandleKind::buffer);
        benchmark::DoNotOptimize(found);
        i = (i + 1) & (live_objects - 1);
    }
}

void BM_HandleLookupStale(benchmark::State& state)
{
    Filled f = filled();
    // Remove everything and refill: every handle in `order` is now stale and
    // its slot holds a newer object.
    for (std::uint64_t h : f.order)
        (void)f.table.remove(h, HandleKind::buffer);
    for (std::uint32_t i = 0; i < live_objects; ++i)
        (void)f.table.insert(HandleKind::buffer, Object{i, 4096, 1, 3});
    std::size_t i = 0;
    for (auto _ : state) {
        auto found = f.table.lookup(f.order[i], HandleKind::buffer);
        benchmark::DoNotOptimize(found);
        i = (i + 1) & (live_objects - 1);
    }
}

void BM_HandleInsertRemove(benchmark::State& state)
{
    Filled f = filled();
    (void)f.table.remove(f.order[0], HandleKind::buffer);  // keep one slot free
    for (auto _ : state) {
        auto handle = f.table.insert(HandleKind::event, Object{1, 2, 3, 4});
        if (!handle) {
            state.SkipWithError("insert refused");
            break;
        }
        auto object = f.table.remove(*handle, HandleKind::event);
        benchmark::DoNotOptimize(object);
    }
}

void BM_UnorderedMapFindBaseline(benchmark::State& state)
{
    Filled f = filled();
    std::unordered_map<std::uint64_t, Object> map;
    for (std::uint64_t h : f.order)
        map.emplace(h, *f.table.find(h, HandleKind::buffer));
    std::size_t i = 0;
    for (auto _ : state) {
        auto it = map.find(f.order[i]);
        benchmark::DoNotOptimize(it);
        i = (i + 1) & (live_objects - 1);
    }
}

}  // namespace

BENCHMARK(BM_HandleLookupHit);
BENCHMARK(BM_HandleLookupStale);
BENCHMARK(BM_HandleInsertRemove);
BENCHMARK(BM_UnorderedMapFindBaseline);

BENCHMARK_MAIN();
