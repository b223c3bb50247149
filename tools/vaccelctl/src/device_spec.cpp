// device_spec.cpp - parsing --device and picking the device it names.
//
// Owns: the spec grammar and the matching rules documented in device_spec.hpp.
#include "device_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <vector>

#include "vaccel.h"

namespace vaccel::ctl {
namespace {

std::string lower(std::string_view text)
{
    std::string out(text);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::optional<DeviceKind> kind_of_word(std::string_view word)
{
    if (word == "cpu")
        return DeviceKind::cpu;
    if (word == "vulkan")
        return DeviceKind::vulkan;
    if (word == "cuda")
        return DeviceKind::cuda;
    return std::nullopt;
}

std::string_view format_word(std::uint32_t format)
{
    switch (format) {
    case VACCEL_FORMAT_TOSA:
        return "TOSA";
    case VACCEL_FORMAT_CUDA_PTX:
        return "CUDA PTX";
    default:
        return "unknown-format";
    }
}

// "[0] cpu \"Host CPU\", [1] vulkan \"llvmpipe\"" or "none".
std::string device_list(std::span<const DeviceSummary> devices)
{
    if (devices.empty())
        return "there are no devices";
    std::string out = "the devices are: ";
    for (std::size_t i = 0; i < devices.size(); ++i) {
        if (i != 0)
            out += ", ";
        out += fmt::format("[{}] {} \"{}\"", devices[i].index,
                           device_kind_word(device_kind(devices[i])), devices[i].name);
    }
    return out;
}

int class_rank(std::uint32_t device_class)
{
    switch (device_class) {
    case VACCEL_CLASS_GPU:
        return 0;
    case VACCEL_CLASS_NPU:
        return 1;
    default:
        return 2;
    }
}

}  // namespace

bool admits(const DeviceSummary& device, std::uint32_t format)
{
    return format < 32 && (device.formats & VACCEL_FORMAT_BIT(format)) != 0;
}

std::string_view device_kind_word(DeviceKind kind)
{
    switch (kind) {
    case DeviceKind::cpu:
        return "cpu";
    case DeviceKind::vulkan:
        return "vulkan";
    case DeviceKind::cuda:
        return "cuda";
    case DeviceKind::other:
        break;
    }
    return "other";
}

DeviceKind device_kind(const DeviceSummary& device)
{
    std::string driver = lower(device.driver);
    if (driver.find("vulkan") != std::string::npos)
        return DeviceKind::vulkan;
    if (driver.find("cuda") != std::string::npos)
        return DeviceKind::cuda;
    if (driver.find("cpu") != std::string::npos)
        return DeviceKind::cpu;
    if (device.device_class == VACCEL_CLASS_OTHER &&
        lower(device.name).find("cpu") != std::string::npos)
        return DeviceKind::cpu;
    return DeviceKind::other;
}

// `text` as a whole decimal number.
std::optional<std::uint32_t> number_of(std::string_view text)
{
    std::uint32_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

Result<DeviceSpec> parse_device_spec(std::string_view text)
{
    DeviceSpec spec;
    spec.text = std::string(text);
    if (text.empty())
        return refuse("--device is empty; give auto, a device index N, cpu, vulkan:N, cuda:N "
                      "or a device name");
    if (lower(text) == "auto") {
        spec.form = DeviceSpec::Form::automatic;
        return spec;
    }
    std::string_view bare = text;
    if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']')
        bare = bare.substr(1, bare.size() - 2);
    if (auto index = number_of(bare)) {
        spec.form = DeviceSpec::Form::index;
        spec.ordinal = *index;
        return spec;
    }
    auto colon = text.find(':');
    auto kind = kind_of_word(lower(text.substr(0, colon)));
    if (kind) {
        spec.form = DeviceSpec::Form::kind_ordinal;
        spec.kind = *kind;
        if (colon == std::string_view::npos)
            return spec;
        std::string_view number = text.substr(colon + 1);
        auto [end, ec] =
            std::from_chars(number.data(), number.data() + number.size(), spec.ordinal);
        if (number.empty() || ec != std::errc{} || end != number.data() + number.size())
            return refuse(fmt::format("--device {}: '{}' is not a device number; write {}:N "
                                      "with N = 0 for the first {} device",
                                      text, number, device_kind_word(*kind),
                                      device_kind_word(*kind)));
        return spec;
    }
    spec.form = DeviceSpec::Form::name;
    spec.name = std::string(text);
    return spec;
}

Result<std::uint32_t> select_device(const DeviceSpec& spec, std::span<const DeviceSummary> devices,
                                    std::uint32_t format)
{
    const DeviceSummary* chosen = nullptr;
    switch (spec.form) {
    case DeviceSpec::Form::automatic:
        for (const auto& device : devices) {
            if (!admits(device, format))
                continue;
            if (!chosen || class_rank(device.device_class) < class_rank(chosen->device_class))
                chosen = &device;
        }
        if (!chosen)
            return refuse(fmt::format("no device admits {} programs; {}", format_word(format),
                                      device_list(devices)));
        return chosen->index;
    case DeviceSpec::Form::index:
        for (const auto& device : devices)
            if (device.index == spec.ordinal) chosen = &device;
        if (!chosen)
            return refuse(fmt::format("no device has index {} (--device {}); {}", spec.ordinal,
                                      spec.text, device_list(devices)));
        break;
    case DeviceSpec::Form::kind_ordinal: {
        std::uint32_t seen = 0;
        for (const auto& device : devices) {
            if (device_kind(device) != spec.kind)
                continue;
            if (seen++ == spec.ordinal) {
                chosen = &device;
                break;
            }
        }
        if (!chosen)
            return refuse(fmt::format(
                "no device matches --device {}: there {} {} {} device{}; {}", spec.text,
                seen == 1 ? "is" : "are", seen == 0 ? std::string("no") : std::to_string(seen),
                device_kind_word(spec.kind), seen == 1 ? "" : "s", device_list(devices)));
        break;
    }
    case DeviceSpec::Form::name: {
        // Exact, then in any case, then the start of one device's name.
        const std::string wanted = lower(spec.name);
        for (const auto& device : devices)
            if (!chosen && device.name == spec.name) chosen = &device;
        for (const auto& device : devices)
            if (!chosen && lower(device.name) == wanted) chosen = &device;
        if (chosen) break;
        std::vector<const DeviceSummary*> starting;
        for (const auto& device : devices)
            if (lower(device.name).starts_with(wanted)) starting.push_back(&device);
        if (starting.size() > 1) {
            std::string which;
            for (const DeviceSummary* d : starting)
                which += fmt::format("{}[{}] \"{}\"", which.empty() ? "" : ", ", d->index, d->name);
            return refuse(fmt::format("--device {} starts the name of {} devices: {}; give its "
                                      "index or more of its name",
                                      spec.text, starting.size(), which));
        }
        if (starting.empty())
            return refuse(fmt::format("no device matches --device {} (not auto, an index, cpu, "
                                      "vulkan:N, cuda:N, nor the start of a device's name); {}",
                                      spec.text, device_list(devices)));
        chosen = starting.front();
        break;
    }
    }
    if (!admits(*chosen, format))
        return refuse(fmt::format("device [{}] \"{}\" does not admit {} programs; {}",
                                  chosen->index, chosen->name, format_word(format),
                                  device_list(devices)));
    return chosen->index;
}

}  // namespace vaccel::ctl
