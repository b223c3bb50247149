// latency.hpp - timing samples and the figures the daemon benchmarks print.
//
// Owns: the monotonic clock reading and the summary of a set of samples
// (median, p99, mean). Decides: percentiles are nearest-rank on the sorted
// samples; times are kept in nanoseconds and printed in microseconds.
#pragma once

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

namespace vaccel::bench {

inline std::uint64_t monotonic_ns()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(now.tv_nsec);
}

struct Summary {
    double median_us = 0;
    double p99_us = 0;
    double mean_us = 0;
    std::size_t count = 0;
};

// Nearest-rank percentile of sorted samples, p in (0, 100].
inline std::uint64_t percentile(const std::vector<std::uint64_t>& sorted, double p)
{
    if (sorted.empty()) return 0;
    std::size_t rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
    rank = std::clamp<std::size_t>(rank, 1, sorted.size());
    return sorted[rank - 1];
}

inline Summary summarize(std::vector<std::uint64_t> samples_ns)
{
    Summary s;
    if (samples_ns.empty()) return s;
    std::sort(samples_ns.begin(), samples_ns.end());
    s.count = samples_ns.size();
    s.median_us = static_cast<double>(percentile(samples_ns, 50)) / 1000.0;
    s.p99_us = static_cast<double>(percentile(samples_ns, 99)) / 1000.0;
    s.mean_us = static_cast<double>(std::accumulate(samples_ns.begin(), samples_ns.end(),
                                                    std::uint64_t{0})) /
                static_cast<double>(s.count) / 1000.0;
    return s;
}

}  // namespace vaccel::bench
