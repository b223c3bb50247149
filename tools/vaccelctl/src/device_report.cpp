// device_report.cpp - the device list, for people and as JSON.
//
// Owns: the words for device classes, memory capabilities, formats, TOSA
// profiles, levels and extensions, and the two renderings of the device list
// described in report.hpp.
#include <fmt/format.h>

#include <map>

#include <array>
#include <utility>

#include "device_spec.hpp"
#include "report.hpp"

namespace vaccel::ctl {
namespace {

constexpr std::array<std::pair<std::uint32_t, std::string_view>, 3> memory_cap_words{{
    {VACCEL_MEM_HOST_VISIBLE, "host-visible"},
    {VACCEL_MEM_DEVICE_LOCAL, "device-local"},
    {VACCEL_MEM_SHARED, "shared"},
}};
constexpr std::array<std::pair<std::uint32_t, std::string_view>, 5> format_words{{
    {VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA), "tosa"},
    {VACCEL_FORMAT_BIT(VACCEL_FORMAT_CUDA_PTX), "cuda-ptx"},
    {VACCEL_FORMAT_BIT(VACCEL_FORMAT_CUDA_CUBIN), "cuda-cubin"},
    {VACCEL_FORMAT_BIT(VACCEL_FORMAT_CPU_BUILTIN), "cpu-builtin"},
    {VACCEL_FORMAT_BIT(VACCEL_FORMAT_SPIRV), "spirv"},
}};
constexpr std::array<std::pair<std::uint32_t, std::string_view>, 2> profile_words{{
    {VACCEL_TOSA_PRO_INT, "int"},
    {VACCEL_TOSA_PRO_FP, "fp"},
}};
constexpr std::array<std::pair<std::uint64_t, std::string_view>, 11> extension_words{{
    {VACCEL_TOSA_EXT_INT16, "int16"},
    {VACCEL_TOSA_EXT_INT4, "int4"},
    {VACCEL_TOSA_EXT_BF16, "bf16"},
    {VACCEL_TOSA_EXT_FP8E4M3, "fp8e4m3"},
    {VACCEL_TOSA_EXT_FP8E5M2, "fp8e5m2"},
    {VACCEL_TOSA_EXT_FFT, "fft"},
    {VACCEL_TOSA_EXT_VARIABLE, "variable"},
    {VACCEL_TOSA_EXT_CONTROLFLOW, "controlflow"},
    {VACCEL_TOSA_EXT_DOUBLEROUND, "doubleround"},
    {VACCEL_TOSA_EXT_INEXACTROUND, "inexactround"},
    {VACCEL_TOSA_EXT_DYNAMIC, "dynamic"},
}};
constexpr std::array<std::pair<std::uint64_t, std::string_view>, 8> capability_words{{
    {VACCEL_CAP_TOSA, "tosa"},
    {VACCEL_CAP_CUDA_PTX, "cuda-ptx"},
    {VACCEL_CAP_DEADLINES, "deadlines"},
    {VACCEL_CAP_GATES, "gates"},
    {VACCEL_CAP_LAUNCH, "launch"},
    {VACCEL_CAP_TOSA_DESCRIPTORS, "tosa-descriptors"},
    {VACCEL_CAP_RUN, "run"},
    {VACCEL_CAP_BUFFER_MAP, "buffer-map"},
}};

// enum vaccel_device_state.
std::string state_word(std::uint32_t state)
{
    switch (state) {
    case VACCEL_DEVICE_OK:
        return "ok";
    case VACCEL_DEVICE_LOST:
        return "lost";
    default:
        return fmt::format("state {}", state);
    }
}

// The words of the set bits; unknown bits as "bit N".
template <class Bits, std::size_t N>
std::vector<std::string> words_of(std::uint64_t value,
                                  const std::array<std::pair<Bits, std::string_view>, N>& table)
{
    std::vector<std::string> words;
    std::uint64_t known = 0;
    for (const auto& [bit, word] : table) {
        known |= bit;
        if (value & bit)
            words.emplace_back(word);
    }
    for (unsigned i = 0; i < 64; ++i) {
        std::uint64_t bit = std::uint64_t{1} << i;
        if ((value & bit) && !(known & bit))
            words.push_back(fmt::format("bit {}", i));
    }
    return words;
}

std::string joined(const std::vector<std::string>& words)
{
    return words.empty() ? std::string("none") : fmt::format("{}", fmt::join(words, ", "));
}

std::string class_word(std::uint32_t device_class)
{
    switch (device_class) {
    case VACCEL_CLASS_OTHER:
        return "other";
    case VACCEL_CLASS_GPU:
        return "gpu";
    case VACCEL_CLASS_NPU:
        return "npu";
    default:
        return fmt::format("class {}", device_class);
    }
}

std::string level_word(std::uint32_t level)
{
    switch (level) {
    case VACCEL_TOSA_LEVEL_NONE:
        return "none";
    case VACCEL_TOSA_LEVEL_8K:
        return "8K";
    default:
        return fmt::format("level {}", level);
    }
}

std::string uuid_text(const std::uint8_t (&uuid)[16])
{
    std::string out;
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out += '-';
        out += fmt::format("{:02x}", uuid[i]);
    }
    return out;
}

std::string pci_text(const vaccel_device_info& info)
{
    if (!info.pci_valid)
        return "";
    return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", info.pci_domain, info.pci_bus, info.pci_device,
                       info.pci_function);
}

std::uint32_t target_count(const vaccel_device_info& info)
{
    return std::min<std::uint32_t>(info.tosa_target_count, VACCEL_MAX_TOSA_TARGETS);
}

std::string target_text(const vaccel_tosa_target& target)
{
    return fmt::format("{}.{}  profiles {}  level {}  extensions {}", target.major, target.minor,
                       joined(words_of(target.profiles, profile_words)), level_word(target.level),
                       joined(words_of(target.extensions, extension_words)));
}

}  // namespace

DeviceSummary summary_of(const DeviceRecord& device)
{
    return DeviceSummary{device.index, bounded(device.info.name), bounded(device.info.driver),
                         device.info.device_class, device.info.formats};
}

DeviceKind kind_of(const DeviceRecord& device)
{
    return device_kind(summary_of(device));
}

std::string devices_lines(std::span<const DeviceRecord> devices)
{
    std::string out;
    std::map<DeviceKind, std::uint32_t> ordinals;
    for (const auto& device : devices) {
        const DeviceKind kind = kind_of(device);
        const std::uint32_t ordinal = ordinals[kind]++;
        const auto& info = device.info;
        out += fmt::format("[{}] {}:{}  {}  ({}, {})\n", device.index, device_kind_word(kind),
                           ordinal, bounded(info.name), bytes_text(info.memory_bytes),
                           info.state == VACCEL_DEVICE_LOST ? "lost" : state_word(info.state));
    }
    return out;
}

std::string devices_text(std::span<const DeviceRecord> devices,
                         const struct vaccel_get_version& version)
{
    std::string out = fmt::format("vaccel ABI {}.{}, {} device{}\n", version.major, version.minor,
                                  devices.size(), devices.size() == 1 ? "" : "s");
    for (const auto& device : devices) {
        const auto& info = device.info;
        const auto& limits = info.limits;
        std::vector<std::pair<std::string, std::string>> rows;
        rows.emplace_back("state", info.state == VACCEL_DEVICE_LOST
                                       ? "lost (a fault or reset: serves nothing more)"
                                       : state_word(info.state));
        rows.emplace_back("class", fmt::format("{} ({})", class_word(info.device_class),
                                               device_kind_word(kind_of(device))));
        rows.emplace_back("driver", bounded(info.driver));
        rows.emplace_back("uuid", uuid_text(info.uuid));
        rows.emplace_back("vendor:device",
                          fmt::format("{:04x}:{:04x}", info.vendor_id, info.device_id));
        if (info.pci_valid)
            rows.emplace_back("pci", pci_text(info));
        rows.emplace_back("memory",
                          fmt::format("{} ({})", bytes_text(info.memory_bytes),
                                      joined(words_of(info.memory_caps, memory_cap_words))));
        rows.emplace_back("limits", fmt::format("contexts {}, buffers {}, programs {}, queues {}",
                                                limits.max_contexts, limits.max_buffers,
                                                limits.max_programs, limits.max_queues));
        rows.emplace_back("", fmt::format("events {}, bindings {}, gates {}", limits.max_events,
                                          limits.max_bindings, limits.max_gates));
        rows.emplace_back("", fmt::format("buffer {}, artifact {}, context memory {}",
                                          bytes_text(limits.max_buffer_bytes),
                                          bytes_text(limits.max_artifact_bytes),
                                          bytes_text(limits.max_memory_bytes)));
        rows.emplace_back("formats", joined(words_of(info.formats, format_words)));
        if (target_count(info) == 0)
            rows.emplace_back("tosa targets", "none");
        for (std::uint32_t t = 0; t < target_count(info); ++t)
            rows.emplace_back(t == 0 ? "tosa targets" : "", target_text(info.tosa_targets[t]));
        rows.emplace_back("capabilities", joined(words_of(info.flags, capability_words)));

        std::size_t width = 0;
        for (const auto& row : rows)
            width = std::max(width, row.first.size());
        out += fmt::format("\n[{}] {}\n", device.index, bounded(info.name));
        for (const auto& [label, value] : rows)
            out += fmt::format("    {:<{}}  {}\n", label, width, value);
        out += descriptors_text(device.tosa);
    }
    return out;
}

nlohmann::ordered_json devices_json(std::span<const DeviceRecord> devices,
                                    const struct vaccel_get_version& version)
{
    nlohmann::ordered_json doc;
    doc["abi"] = {{"major", version.major},
                  {"minor", version.minor},
                  {"capabilities", words_of(version.capabilities, capability_words)}};
    doc["devices"] = nlohmann::ordered_json::array();
    for (const auto& device : devices) {
        const auto& info = device.info;
        const auto& limits = info.limits;
        nlohmann::ordered_json targets = nlohmann::ordered_json::array();
        for (std::uint32_t t = 0; t < target_count(info); ++t) {
            const auto& target = info.tosa_targets[t];
            targets.push_back({{"version", fmt::format("{}.{}", target.major, target.minor)},
                               {"profiles", words_of(target.profiles, profile_words)},
                               {"level", level_word(target.level)},
                               {"extensions", words_of(target.extensions, extension_words)}});
        }
        nlohmann::ordered_json entry;
        entry["index"] = device.index;
        entry["name"] = bounded(info.name);
        entry["state"] = state_word(info.state);
        entry["class"] = class_word(info.device_class);
        entry["kind"] = device_kind_word(kind_of(device));
        entry["driver"] = bounded(info.driver);
        entry["uuid"] = uuid_text(info.uuid);
        entry["vendor_id"] = info.vendor_id;
        entry["device_id"] = info.device_id;
        entry["pci"] = info.pci_valid ? nlohmann::ordered_json(pci_text(info))
                                      : nlohmann::ordered_json(nullptr);
        entry["memory_bytes"] = info.memory_bytes;
        entry["memory_caps"] = words_of(info.memory_caps, memory_cap_words);
        entry["limits"] = {{"max_contexts", limits.max_contexts},
                           {"max_buffers", limits.max_buffers},
                           {"max_programs", limits.max_programs},
                           {"max_queues", limits.max_queues},
                           {"max_events", limits.max_events},
                           {"max_bindings", limits.max_bindings},
                           {"max_gates", limits.max_gates},
                           {"max_buffer_bytes", limits.max_buffer_bytes},
                           {"max_artifact_bytes", limits.max_artifact_bytes},
                           {"max_memory_bytes", limits.max_memory_bytes}};
        entry["formats"] = words_of(info.formats, format_words);
        entry["tosa_targets"] = std::move(targets);
        entry["capabilities"] = words_of(info.flags, capability_words);
        entry["tosa_descriptors"] = descriptors_json(device.tosa);
        doc["devices"].push_back(std::move(entry));
    }
    return doc;
}

}  // namespace vaccel::ctl
