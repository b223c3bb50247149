// slicing.cpp - segments of bounded device time (slicing.hpp).
#include "vaccel/sched/slicing.hpp"

#include <algorithm>

namespace vaccel::sched {

namespace {

// Over k steps when it has two or more, else over tiles.
bool cut_over_k(const DispatchCost& cost) { return cost.k_steps >= 2; }

std::uint64_t parts_of(const DispatchCost& cost, std::uint64_t bound_ns)
{
    const std::uint64_t units = cut_over_k(cost) ? cost.k_steps : cost.tiles;
    if (units < 2 || cost.ns <= bound_ns) return 1;
    std::uint64_t parts = std::min<std::uint64_t>(units, (cost.ns + bound_ns - 1) / bound_ns);
    if (cost.max_parts != 0) parts = std::min<std::uint64_t>(parts, cost.max_parts);
    return std::max<std::uint64_t>(parts, 1);
}

Cut cut(std::span<const DispatchCost> costs, std::uint64_t bound_ns)
{
    Cut made;
    made.parts.assign(costs.size(), 1);
    std::vector<Segment>& segments = made.segments;
    Segment open;
    std::uint64_t open_ns = 0;
    auto close = [&] {
        if (!open.empty()) segments.push_back(std::move(open));
        open.clear();
        open_ns = 0;
    };
    for (std::size_t i = 0; i < costs.size(); ++i) {
        const std::uint64_t parts = parts_of(costs[i], bound_ns);
        if (parts > 1) {
            close();
            made.parts[i] = static_cast<std::uint32_t>(parts);
            const bool over_k = cut_over_k(costs[i]);
            const std::uint64_t units = over_k ? costs[i].k_steps : costs[i].tiles;
            for (std::uint64_t p = 0; p < parts; ++p) {
                const auto first = static_cast<std::uint32_t>(units * p / parts);
                const auto end = static_cast<std::uint32_t>(units * (p + 1) / parts);
                segments.push_back({over_k ? Piece{i, 0, 0, first, end} : Piece{i, first, end}});
            }
            continue;
        }
        if (!open.empty() && open_ns + costs[i].ns > bound_ns) close();
        open.push_back(Piece{i, 0, 0});
        open_ns += costs[i].ns;
    }
    close();
    return made;
}

}  // namespace

std::vector<Segment> whole_run(std::size_t dispatches)
{
    Segment all;
    for (std::size_t i = 0; i < dispatches; ++i) all.push_back(Piece{i, 0, 0});
    return {std::move(all)};
}

bool halve_costly_cuts(const Cut& cut, std::span<const std::uint64_t> used_ns,
                       std::span<DispatchCost> costs)
{
    std::vector<std::uint64_t> sliced(cut.parts.size(), 0);
    for (std::size_t i = 0; i < cut.segments.size() && i < used_ns.size(); ++i) {
        const Segment& segment = cut.segments[i];
        if (segment.size() == 1 && !segment[0].whole()) sliced[segment[0].dispatch] += used_ns[i];
    }
    bool changed = false;
    for (std::size_t d = 0; d < cut.parts.size() && d < costs.size(); ++d) {
        if (cut.parts[d] <= 1) continue;
        const auto whole = static_cast<double>(costs[d].ns);
        if (static_cast<double>(sliced[d]) > whole * (1.0 + slicing_overhead_limit)) {
            costs[d].max_parts = cut.parts[d] / 2;
            changed = true;
        }
    }
    return changed;
}

Cut cut_segments(std::span<const DispatchCost> costs, std::uint64_t bound_ns,
                 std::uint32_t max_segments)
{
    if (costs.empty() || max_segments <= 1)
        return Cut{whole_run(costs.size()), std::vector<std::uint32_t>(costs.size(), 1)};
    std::uint64_t total = 0;
    for (const DispatchCost& c : costs) total += c.ns;
    std::uint64_t bound = std::max<std::uint64_t>({bound_ns, 1, total / max_segments});
    for (;;) {
        Cut made = cut(costs, bound);
        if (made.segments.size() <= max_segments) return made;
        bound += bound / 2 + 1;  // each step cuts fewer
    }
}

}  // namespace vaccel::sched
