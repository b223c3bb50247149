// run_report.cpp - the summary of a run, for people and as JSON.
//
// Owns: timing statistics over the repeated runs, and the two renderings of
// a run described in report.hpp.
#include <fmt/format.h>

#include <algorithm>

#include "report.hpp"

namespace vaccel::ctl {
namespace {

std::string tensor_text(const TensorReport& tensor)
{
    return fmt::format("{}{} {}", tensor.name, shape_brackets(tensor.shape),
                       npy::dtype_code(tensor.dtype));
}

nlohmann::ordered_json tensor_json(const TensorReport& tensor)
{
    return {{"slot", tensor.slot},
            {"name", tensor.name},
            {"dtype", npy::dtype_descr(tensor.dtype)},
            {"tosa_dtype", tensor.tosa_dtype},
            {"shape", tensor.shape},
            {"bytes", tensor.bytes},
            {"file", tensor.file}};
}

// The model's file name: the summary stays one readable line (JSON has the path).
std::string model_name(const std::string& path)
{
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Timing timing_of(std::vector<std::uint64_t> samples_ns)
{
    Timing timing;
    timing.samples_ns = samples_ns;
    if (samples_ns.empty())
        return timing;
    std::sort(samples_ns.begin(), samples_ns.end());
    std::size_t n = samples_ns.size();
    timing.median_ns =
        n % 2 == 1 ? samples_ns[n / 2]
                   : samples_ns[n / 2 - 1] + (samples_ns[n / 2] - samples_ns[n / 2 - 1]) / 2;
    timing.min_ns = samples_ns.front();
    timing.max_ns = samples_ns.back();
    return timing;
}

std::string duration_text(std::uint64_t ns)
{
    if (ns < 1000)
        return fmt::format("{} ns", ns);
    if (ns < 1000000)
        return fmt::format("{:.1f} µs", static_cast<double>(ns) / 1e3);
    if (ns < 1000000000)
        return fmt::format("{:.2f} ms", static_cast<double>(ns) / 1e6);
    return fmt::format("{:.2f} s", static_cast<double>(ns) / 1e9);
}

std::string bytes_text(std::uint64_t bytes)
{
    constexpr std::string_view units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024)
        return fmt::format("{} B", bytes);
    double value = static_cast<double>(bytes);
    std::size_t unit = 0;
    value /= 1024;
    while (value >= 1024 && unit + 1 < std::size(units)) {
        value /= 1024;
        ++unit;
    }
    return fmt::format("{:.1f} {}", value, units[unit]);
}

std::string shape_brackets(std::span<const std::int64_t> shape)
{
    return fmt::format("[{}]", fmt::join(shape, ","));
}

std::string run_summary(const RunReport& report)
{
    std::vector<std::string> inputs, outputs;
    for (const auto& tensor : report.inputs)
        inputs.push_back(fmt::format("{} <- {}", tensor_text(tensor), tensor.file));
    for (const auto& tensor : report.outputs)
        outputs.push_back(fmt::format("{} -> {}", tensor_text(tensor), tensor.file));
    const Timing& t = report.timing;
    const std::string timing =
        t.samples_ns.empty()
            ? std::string("no timed run completed")
            : fmt::format("median {} (min {}, max {}) over {} run{}", duration_text(t.median_ns),
                          duration_text(t.min_ns), duration_text(t.max_ns), t.samples_ns.size(),
                          t.samples_ns.size() == 1 ? "" : "s");
    return fmt::format("{} on [{}] {} ({}): in {}; out {}; {}{}", model_name(report.model),
                       report.device.index, bounded(report.device.info.name),
                       device_kind_word(kind_of(report.device)), fmt::join(inputs, ", "),
                       fmt::join(outputs, ", "), timing,
                       report.interrupted ? fmt::format(" (interrupted: {} asked)", report.planned) : "");
}

nlohmann::ordered_json run_json(const RunReport& report)
{
    nlohmann::ordered_json doc;
    doc["model"] = report.model;
    doc["device"] = {{"index", report.device.index},
                     {"name", bounded(report.device.info.name)},
                     {"kind", device_kind_word(kind_of(report.device))},
                     {"driver", bounded(report.device.info.driver)}};
    doc["inputs"] = nlohmann::ordered_json::array();
    for (const auto& tensor : report.inputs)
        doc["inputs"].push_back(tensor_json(tensor));
    doc["outputs"] = nlohmann::ordered_json::array();
    for (const auto& tensor : report.outputs)
        doc["outputs"].push_back(tensor_json(tensor));
    doc["timing"] = {{"repeat", report.timing.samples_ns.size()},
                     {"median_ns", report.timing.median_ns},
                     {"min_ns", report.timing.min_ns},
                     {"max_ns", report.timing.max_ns},
                     {"samples_ns", report.timing.samples_ns},
                     {"planned", report.planned},
                     {"interrupted", report.interrupted}};
    return doc;
}

}  // namespace vaccel::ctl
