// profile.cpp - VACCEL_CUDA_PROFILE's switch and report (profile.hpp).
#include "profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string_view>

#include "env_switch.hpp"
#include "objects.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::backend::cuda {

Result<bool> profile_enabled()
{
    return env_switch("VACCEL_CUDA_PROFILE", false,
                      "time each kernel of every run and report at unload", "no profile");
}

std::string profile_report(const ProgramProfile& profile,
                           const std::vector<PlannedLaunch>& launches)
{
    if (profile.runs == 0 || profile.total_ms.size() != launches.size()) return {};
    const double runs = static_cast<double>(profile.runs);
    const double run_ms = std::accumulate(profile.total_ms.begin(), profile.total_ms.end(), 0.0) / runs;
    std::vector<std::size_t> order(launches.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::ranges::stable_sort(order, [&](std::size_t a, std::size_t b) {
        return profile.total_ms[a] > profile.total_ms[b];
    });
    std::string out = fmt::format("vaccel CUDA profile: {} run(s), {} kernels a run, {:.1f} us of "
                                  "kernel time a run\n",
                                  profile.runs, launches.size(), run_ms * 1e3);
    out += fmt::format("  {:>8} {:>6}  {:>5}  {:<18} {:<34} {:>7} {:>5}\n", "us", "share", "op",
                       "operator", "kernel", "grid", "block");
    std::map<std::string_view, std::pair<double, std::size_t>> by_operator;
    for (std::size_t i : order) {
        const PlannedLaunch& l = launches[i];
        const double ms = profile.total_ms[i] / runs;
        const std::string_view name = tosa::op_name(l.op);
        out += fmt::format("  {:8.1f} {:5.1f}%  {:>5}  {:<18} {:<34} {:>7} {:>5}\n", ms * 1e3,
                           run_ms > 0 ? 100.0 * ms / run_ms : 0.0, l.op_index, name, l.function_name,
                           l.grid, l.block);
        auto& [sum, count] = by_operator[name];
        sum += ms;
        ++count;
    }
    std::vector<std::pair<std::string_view, std::pair<double, std::size_t>>> ops(
        by_operator.begin(), by_operator.end());
    std::ranges::stable_sort(ops, [](const auto& a, const auto& b) {
        return a.second.first > b.second.first;
    });
    out += "  by operator:\n";
    for (const auto& [name, total] : ops)
        out += fmt::format("  {:8.1f} {:5.1f}%  {:<18} x{}\n", total.first * 1e3,
                           run_ms > 0 ? 100.0 * total.first / run_ms : 0.0, name, total.second);
    return out;
}

}  // namespace vaccel::backend::cuda
