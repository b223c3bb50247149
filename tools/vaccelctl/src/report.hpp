// report.hpp - what vaccelctl prints: for people, and as JSON for programs.
//
// Owns: the text and JSON forms of the device list and of a run. Decides:
// the words used for enum and flag values (class "gpu", memory cap
// "host-visible", profile "fp", extension "int16", ...), and the JSON
// documents' shape, which is stable: keys are only ever added.
//   devices: {"abi": {...}, "devices": [{"index", "name", "class", "kind",
//             "driver", "uuid", "vendor_id", "device_id", "pci", "memory_bytes",
//             "memory_caps", "limits": {...}, "formats", "tosa_targets":
//             [{"version", "profiles", "level", "extensions"}], "capabilities",
//             "tosa_descriptors": [{"index", "target", "envelope": {"max_regions",
//             "max_blocks", "dynamic_shapes", "runtime_conditions"}, "dtypes":
//             [{"dtype", "roles", "parameter_only"}], "operators": [{"operator",
//             "dtypes" (null: not stated), "constraints"}]} (or {"index",
//             "error"} for one this build cannot read)]}]}
//   run:     {"model", "device": {"index", "name", "kind", "driver"},
//             "inputs"/"outputs": [{"slot", "name", "dtype", "tosa_dtype",
//             "shape", "bytes", "file"}], "timing": {"repeat", "median_ns",
//             "min_ns", "max_ns", "samples_ns"}}
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "device_spec.hpp"
#include "vaccel.h"
#include "vaccel/npy/npy.hpp"

namespace vaccel::ctl {

struct DeviceRecord {
    std::uint32_t index = 0;
    vaccel_device_info info{};
    std::vector<vaccel_tosa_descriptor> tosa;  // its TOSA capability descriptors, in order
};

// A fixed char array the device filled in; stops at NUL or the array's end.
template <std::size_t N>
std::string bounded(const char (&text)[N])
{
    std::size_t n = 0;
    while (n < N && text[n] != '\0')
        ++n;
    return std::string(text, n);
}

DeviceSummary summary_of(const DeviceRecord& device);
DeviceKind kind_of(const DeviceRecord& device);

std::string devices_text(std::span<const DeviceRecord> devices,
                         const struct vaccel_get_version& version);
// One line per device, as `devices -L` prints them: its index, the
// kind:ordinal --device takes, its name, memory and state.
std::string devices_lines(std::span<const DeviceRecord> devices);
nlohmann::ordered_json devices_json(std::span<const DeviceRecord> devices,
                                    const struct vaccel_get_version& version);

// A device's TOSA capability descriptors: per descriptor its target, its
// envelope, its dtypes with their roles, and an operators x dtypes table
// (text, indented under the device), or the JSON array "tosa_descriptors".
std::string descriptors_text(std::span<const vaccel_tosa_descriptor> descriptors);
nlohmann::ordered_json descriptors_json(std::span<const vaccel_tosa_descriptor> descriptors);

struct TensorReport {
    std::uint32_t slot = 0;
    std::string name;
    npy::DType dtype = npy::DType::f4;
    std::string tosa_dtype;  // "FP32", ...
    std::vector<std::int64_t> shape;
    std::uint64_t bytes = 0;
    std::string file;  // the .npy read (inputs) or written (outputs)
};

struct Timing {
    std::vector<std::uint64_t> samples_ns;  // submit + wait of each run, in run order
    std::uint64_t median_ns = 0;
    std::uint64_t min_ns = 0;
    std::uint64_t max_ns = 0;
};

// Median (the mean of the two middle samples for an even count), min, max.
Timing timing_of(std::vector<std::uint64_t> samples_ns);

struct RunReport {
    std::string model;
    DeviceRecord device;
    std::vector<TensorReport> inputs;
    std::vector<TensorReport> outputs;
    Timing timing;
    unsigned planned = 0;      // --repeat: the timed runs asked for
    bool interrupted = false;  // Ctrl-C stopped the runs before `planned`
};

// One line: model (file name), device, inputs, outputs, median (min, max) of
// the runs.
std::string run_summary(const RunReport& report);
nlohmann::ordered_json run_json(const RunReport& report);

// "850 ns", "12.3 µs", "4.56 ms", "1.23 s".
std::string duration_text(std::uint64_t ns);
// "512 B", "64.0 KiB", "23.4 GiB".
std::string bytes_text(std::uint64_t bytes);
// "[1,4,4,1]".
std::string shape_brackets(std::span<const std::int64_t> shape);

}  // namespace vaccel::ctl
