// slicing.hpp - cutting a run of a program into segments of bounded device
// time (docs/adr/0026-gpu-device-scheduler.md).
//
// Decides:
//  - the input is each dispatch's device time as measured on the program's
//    first run (its profile), and for the tile-loop kernels (MATMUL and the
//    CONV2D GEMM, slice.glsl) how many tiles it has;
//  - consecutive dispatches are packed into one segment while their measured
//    time stays within the bound; a dispatch longer than the bound is cut
//    into ceil(time / bound) parts, each a segment of its own:
//     - over its k steps when it has them (the tiled and the
//       cooperative-matrix MATMUL kernels with an FP32 result):
//       each part runs every tile over a range of the dot products' k, the
//       next part going on from the partial sums the last one stored, so a
//       part fills the device as the whole dispatch does;
//     - else over consecutive tile ranges (a part with fewer tiles than the
//       device runs at once leaves it partly idle);
//     - one with neither stays whole;
//  - at most `max_segments` segments: when the bound would make more, it is
//    raised to what keeps the count there;
//  - a dispatch's parts may be capped (`max_parts`): the caller halves the
//    cap of a dispatch whose parts together took more than 8% longer than
//    it took whole (too few tiles per part to fill the device), so the cut
//    settles where slicing costs little;
//  - without a profile there is one segment holding every dispatch.
// The bound is [devices.vulkan] and [devices.cuda] slice_us. Pure: no
// device; tested in backends.slicing. Shared by both GPU backends, so the
// rule of how a run is cut lives here alone.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace vaccel::sched {

struct DispatchCost {
    std::uint64_t ns = 0;      // measured on the profiling run
    std::uint32_t tiles = 0;   // tiles of a tile-loop kernel; 0: cannot be cut
    std::uint32_t max_parts = 0;  // 0: as many as the bound asks
    std::uint32_t k_steps = 0;    // k steps it can be cut over; 0: none
};

// Slicing costs more than this share of a dispatch's whole time: its cap halves.
inline constexpr double slicing_overhead_limit = 0.08;

// A dispatch, or part of it: tiles [first, end) (end 0: every tile), over
// k steps [k_first, k_end) (k_end 0: every step).
struct Piece {
    std::size_t dispatch = 0;
    std::uint32_t first = 0, end = 0;
    std::uint32_t k_first = 0, k_end = 0;
    bool whole() const { return end == 0 && k_end == 0; }
    friend bool operator==(const Piece&, const Piece&) = default;
};
using Segment = std::vector<Piece>;

// How a run of a program goes out: its segments, and into how many parts
// each dispatch was cut (1: whole).
struct Cut {
    std::vector<Segment> segments;
    std::vector<std::uint32_t> parts;
};


Cut cut_segments(std::span<const DispatchCost> costs, std::uint64_t bound_ns,
                 std::uint32_t max_segments);

// One segment of every dispatch, whole (no profile yet).
std::vector<Segment> whole_run(std::size_t dispatches);

// After a run of `cut` whose segment i took used_ns[i] on the device: a
// dispatch whose parts together took more than slicing_overhead_limit over
// its whole time (costs[d].ns) gets half its parts as its cap
// (costs[d].max_parts). True when a cap changed, and the cut should be
// made again from `costs`.
bool halve_costly_cuts(const Cut& cut, std::span<const std::uint64_t> used_ns,
                       std::span<DispatchCost> costs);

}  // namespace vaccel::sched
