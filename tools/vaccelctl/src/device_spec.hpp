// device_spec.hpp - the --device argument: what it says and which device it picks.
//
// Owns: parsing a device spec and matching it against the devices a client
// reports. Decides: the spec forms `auto` (the default); `N` or `[N]`, the
// device index `vaccelctl devices` prints; `cpu`, `cpu:N`, `vulkan:N`,
// `cuda:N` (N counts devices of that kind, from 0; a bare kind means :0;
// the kind in any case); and a device's name: exact, else the same letters
// in any case, else the start of exactly one device's name in any case
// (`llvmpipe`); two devices that start so are refused, both named. What
// kind a device is (from its driver string); and which device `auto`
// means: among the devices that admit the program format, a GPU before an
// NPU before anything else, then the lowest index. A spec that matches
// nothing is refused with the list of devices.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "refusal.hpp"

namespace vaccel::ctl {

enum class DeviceKind { cpu, vulkan, cuda, other };

std::string_view device_kind_word(DeviceKind kind);  // "cpu", "vulkan", "cuda", "other"

// What a spec needs to know of one device (from struct vaccel_device_info).
struct DeviceSummary {
    std::uint32_t index = 0;
    std::string name;
    std::string driver;
    std::uint32_t device_class = 0;  // enum vaccel_device_class
    std::uint32_t formats = 0;       // VACCEL_FORMAT_BIT(...)
};

// From the driver string: it names "vulkan", "cuda" or "cpu" ("vaccel-cpu");
// a device of class OTHER whose name says CPU is a cpu too.
DeviceKind device_kind(const DeviceSummary& device);
// Whether the device loads programs of `format` (enum vaccel_program_format).
bool admits(const DeviceSummary& device, std::uint32_t format);

struct DeviceSpec {
    enum class Form { automatic, index, kind_ordinal, name };
    Form form = Form::automatic;
    DeviceKind kind = DeviceKind::other;  // kind_ordinal
    std::uint32_t ordinal = 0;            // kind_ordinal; index: the device index
    std::string name;                     // name
    std::string text;                     // as given, for messages
};

Result<DeviceSpec> parse_device_spec(std::string_view text);

// The index of the device the spec picks. `format` is the program format the
// caller will load (enum vaccel_program_format); the chosen device must admit it.
Result<std::uint32_t> select_device(const DeviceSpec& spec, std::span<const DeviceSummary> devices,
                                    std::uint32_t format);

}  // namespace vaccel::ctl
