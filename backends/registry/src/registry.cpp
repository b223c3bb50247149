// registry.cpp - the factories of this build and device selection (see registry.hpp).
#include "vaccel/backend/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

#ifdef VACCEL_REGISTRY_HAS_CPU
#include "vaccel/backend/cpu.hpp"
#endif
#ifdef VACCEL_REGISTRY_HAS_VULKAN
#include "vaccel/backend/vulkan.hpp"
#endif
#ifdef VACCEL_REGISTRY_HAS_CUDA
#include "vaccel/backend/cuda.hpp"
#endif

namespace vaccel::backend {

namespace {

#ifdef VACCEL_REGISTRY_HAS_CPU
// [devices.cpu]: threads (workers per device, 0 = all cores), count (serve
// the host as that many devices, for tests of several devices), inline_us
// (tiny runs on the caller's thread: CpuOptions), and fault
// injection for tests: inject_loss_after (see CpuOptions) applied to the
// device inject_loss_device (default 0) only.
Result<std::vector<std::unique_ptr<Backend>>> enumerate_cpu(const Settings& settings,
                                                            const std::filesystem::path&,
                                                            FactoryMode mode)
{
    static constexpr std::array<std::string_view, 5> known{"threads", "count", "inline_us",
                                                           "inject_loss_after",
                                                           "inject_loss_device"};
    if (auto ok = settings_known(settings, "cpu", known); !ok)
        return fail(ok.error());
    auto threads = setting_number(settings, "cpu", "threads", 0);
    if (!threads) return fail(threads.error());
    auto count = setting_number(settings, "cpu", "count", 1);
    if (!count) return fail(count.error());
    auto loss = setting_number(settings, "cpu", "inject_loss_after", UINT64_MAX);
    if (!loss) return fail(loss.error());
    auto lossy = setting_number(settings, "cpu", "inject_loss_device", 0);
    if (!lossy) return fail(lossy.error());
    auto inline_us = setting_number(settings, "cpu", "inline_us", CpuOptions{}.inline_us);
    if (!inline_us) return fail(inline_us.error());
    if (*inline_us > 1000)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, 0, *inline_us)
                        .with_note("[devices.cpu] inline_us is at most 1000 (a millisecond: "
                                   "the calling thread serves other clients meanwhile); 0 "
                                   "never runs a submission inline"));
    if (*count == 0 || *count > 16)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, 0, *count)
                        .with_note("[devices.cpu] count is 1..16 (CPU devices to serve)"));
    if (*threads > 1024)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, 0, *threads)
                        .with_note("[devices.cpu] threads is at most 1024 (0: every core)"));
    if (mode == FactoryMode::check) return std::vector<std::unique_ptr<Backend>>{};
    std::vector<std::unique_ptr<Backend>> devices;
    for (unsigned i = 0; i < *count; ++i) {
        CpuOptions options;
        options.threads = static_cast<unsigned>(*threads);
        options.instance = i;
        options.inject_loss_after = i == *lossy ? *loss : UINT64_MAX;
        options.inline_us = static_cast<std::uint32_t>(*inline_us);
        devices.push_back(open_cpu_backend(options));
    }
    return devices;
}
#endif

#if defined(VACCEL_REGISTRY_HAS_VULKAN) || defined(VACCEL_REGISTRY_HAS_CUDA)
// latency_hold_us, read the same on every GPU (VulkanOptions, CudaOptions).
Result<std::uint32_t> latency_hold_us(const Settings& settings, std::string_view backend)
{
    auto hold = setting_number(settings, backend, "latency_hold_us", default_latency_hold_us);
    if (!hold) return fail(hold.error());
    if (*hold > 10'000)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, 0, *hold)
                        .with_note(fmt::format("[devices.{}] latency_hold_us is at most 10000 "
                                               "(10 ms of a device kept idle for a latency "
                                               "tenant); 0 never holds batch work back",
                                               backend)));
    return static_cast<std::uint32_t>(*hold);
}

// slice_us, read the same on every GPU: the device time a segment of a run
// aims at (VulkanOptions, CudaOptions; docs/adr/0026-gpu-device-scheduler.md).
Result<std::uint32_t> slice_us(const Settings& settings, std::string_view backend)
{
    auto slice = setting_number(settings, backend, "slice_us", default_slice_us);
    if (!slice) return fail(slice.error());
    if (*slice > 100'000)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, 0, *slice)
                        .with_note(fmt::format("[devices.{}] slice_us is at most 100000 (a "
                                               "tenth of a second); 0 never cuts a run",
                                               backend)));
    return static_cast<std::uint32_t>(*slice);
}
#endif

#ifdef VACCEL_REGISTRY_HAS_VULKAN
// [devices.vulkan]: unified_memory (1 = on a single-heap device the Device
// domain takes host-visible memory and transfers are mapped copies; 0 =
// staged as on a discrete GPU); fault injection for tests, as the CPU's:
// inject_loss_after (see VulkanOptions) on device inject_loss_device;
// fp32_math, "fp32" only: the Vulkan kernels have no TF32 path (the
// cooperative-matrix extension they use offers no TF32 component type), so
// "tf32" is refused rather than ignored. Every Vulkan 1.3 device with
// synchronization2, timeline semaphores and a compute queue is found; the
// others are named in the log with the reason (docs/adr/0013-vulkan-backend.md).
// Each device keeps its pipeline cache under <state_dir>/vulkan/.
// slice_us: the device time a segment of a run aims at (VulkanOptions);
// latency_hold_us: how long batch work waits for a latency tenant's next item.
Result<std::vector<std::unique_ptr<Backend>>> enumerate_vulkan(const Settings& settings,
                                                               const std::filesystem::path& state_dir,
                                                               FactoryMode mode)
{
    static constexpr std::array<std::string_view, 6> known{
        "unified_memory", "fp32_math", "slice_us", "latency_hold_us", "inject_loss_after",
        "inject_loss_device"};
    if (auto ok = settings_known(settings, "vulkan", known); !ok)
        return fail(ok.error());
    auto math = setting_choice(settings, "vulkan", "fp32_math", {"fp32", "tf32"});
    if (!math) return fail(math.error());
    if (*math != 0)
        return fail(Error::of(Errc::unsupported, VACCEL_D_BAD_VALUE)
                        .with_note("[devices.vulkan] fp32_math = \"tf32\": the Vulkan backend "
                                   "multiplies FP32 in FP32 only (it has no TF32 kernels); "
                                   "remove the key or set it to \"fp32\""));
    auto unified = setting_number(settings, "vulkan", "unified_memory", 1);
    if (!unified) return fail(unified.error());
    if (*unified > 1)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, 0, *unified)
                        .with_note("[devices.vulkan] unified_memory is 0 or 1"));
    auto slice = slice_us(settings, "vulkan");
    if (!slice) return fail(slice.error());
    auto hold = latency_hold_us(settings, "vulkan");
    if (!hold) return fail(hold.error());
    auto loss = setting_number(settings, "vulkan", "inject_loss_after", UINT64_MAX);
    if (!loss) return fail(loss.error());
    auto lossy = setting_number(settings, "vulkan", "inject_loss_device", 0);
    if (!lossy) return fail(lossy.error());
    if (mode == FactoryMode::check) return std::vector<std::unique_ptr<Backend>>{};
    VulkanOptions options;
    options.slice_us = *slice;
    options.latency_hold_us = *hold;
    options.unified_memory = *unified == 1;
    options.state_dir = state_dir;
    options.inject_loss_after = *loss;
    options.inject_loss_device = static_cast<std::uint32_t>(*lossy);
    return std::move(open_vulkan_devices(options).devices);
}
#endif

#ifdef VACCEL_REGISTRY_HAS_CUDA
// [devices.cuda]: fp32_math ("fp32", the default, or "tf32": the opt-in of
// CudaOptions::fp32_math); slice_us and latency_hold_us (CudaOptions); fault
// injection for tests, as the CPU's:
// inject_loss_after (see CudaOptions) on device inject_loss_device. Every device the CUDA
// driver reports is found; without a driver there are none
// (docs/adr/0018-cuda-backend.md). Compiled PTX is kept under
// <state_dir>/cuda/.
Result<std::vector<std::unique_ptr<Backend>>> enumerate_cuda(const Settings& settings,
                                                             const std::filesystem::path& state_dir,
                                                             FactoryMode mode)
{
    static constexpr std::array<std::string_view, 5> known{
        "fp32_math", "slice_us", "latency_hold_us", "inject_loss_after", "inject_loss_device"};
    if (auto ok = settings_known(settings, "cuda", known); !ok)
        return fail(ok.error());
    auto math = setting_choice(settings, "cuda", "fp32_math", {"fp32", "tf32"});
    if (!math) return fail(math.error());
    auto slice = slice_us(settings, "cuda");
    if (!slice) return fail(slice.error());
    auto hold = latency_hold_us(settings, "cuda");
    if (!hold) return fail(hold.error());
    auto loss = setting_number(settings, "cuda", "inject_loss_after", UINT64_MAX);
    if (!loss) return fail(loss.error());
    auto lossy = setting_number(settings, "cuda", "inject_loss_device", 0);
    if (!lossy) return fail(lossy.error());
    if (mode == FactoryMode::check) return std::vector<std::unique_ptr<Backend>>{};
    CudaOptions options;
    options.slice_us = *slice;
    options.latency_hold_us = *hold;
    options.state_dir = state_dir;
    options.fp32_math = *math == 1 ? Fp32Math::tf32 : Fp32Math::fp32;
    options.inject_loss_after = *loss;
    options.inject_loss_device = static_cast<std::uint32_t>(*lossy);
    return std::move(open_cuda_devices(options).devices);
}
#endif

// The CPU comes first: device 0 runs every format and operator (the Vulkan
// backend runs the FP32 tier only; docs/adr/0013-vulkan-backend.md), so
// clients of device 0 keep working.
constexpr std::array builtin_factories{
#ifdef VACCEL_REGISTRY_HAS_CPU
    Factory{"cpu", enumerate_cpu},
#endif
#ifdef VACCEL_REGISTRY_HAS_VULKAN
    Factory{"vulkan", enumerate_vulkan},
#endif
#ifdef VACCEL_REGISTRY_HAS_CUDA
    Factory{"cuda", enumerate_cuda},
#endif
};

const Factory* find(std::string_view name)
{
    for (const Factory& factory : builtin_factories)
        if (factory.name == name)
            return &factory;
    return nullptr;
}

std::string names()
{
    std::string text;
    for (const Factory& factory : builtin_factories)
        text += (text.empty() ? "" : ", ") + std::string(factory.name);
    return text.empty() ? "none" : text;
}

Error unknown_backend(std::string_view name)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
        .with_note(fmt::format("no backend named \"{}\" in this build (built in: {})", name,
                               names()));
}

// A [devices.NAME] table for a backend this build lacks.
Error unknown_settings_table(std::string_view name)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
        .with_note(fmt::format("[devices.{}] names no backend of this build (built in: {})", name,
                               names()));
}

struct Pattern {
    std::string_view backend;
    std::optional<std::uint64_t> index;  // nullopt = every device
};

Result<Pattern> parse_pattern(std::string_view text)
{
    const auto colon = text.find(':');
    Pattern pattern{text.substr(0, colon), std::nullopt};
    if (find(pattern.backend) == nullptr)
        return fail(unknown_backend(pattern.backend));
    if (colon == std::string_view::npos)
        return pattern;
    const std::string_view rest = text.substr(colon + 1);
    if (rest == "*")
        return pattern;
    std::uint64_t index = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
    if (ec != std::errc{} || end != rest.data() + rest.size() || rest.empty())
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
                        .with_note(fmt::format("device pattern \"{}\" is not NAME, NAME:* or "
                                               "NAME:N",
                                               text)));
    pattern.index = index;
    return pattern;
}

}  // namespace

std::span<const Factory> factories() { return builtin_factories; }

Result<std::uint64_t> setting_number(const Settings& settings, std::string_view backend,
                                     std::string_view key, std::uint64_t fallback)
{
    auto it = settings.find(key);
    if (it == settings.end())
        return fallback;
    std::uint64_t value = 0;
    const std::string& text = it->second;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
                        .with_note(fmt::format("[devices.{}] {} = \"{}\" is not an unsigned "
                                               "number",
                                               backend, key, text)));
    return value;
}

Result<std::size_t> setting_choice(const Settings& settings, std::string_view backend,
                                   std::string_view key,
                                   std::initializer_list<std::string_view> choices)
{
    auto it = settings.find(key);
    if (it == settings.end()) return 0;
    std::size_t index = 0;
    std::string valid;
    for (std::string_view choice : choices) {
        if (it->second == choice) return index;
        valid += fmt::format("{}\"{}\"{}", valid.empty() ? "" : ", ", choice,
                             index == 0 ? " (the default)" : "");
        ++index;
    }
    return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
                    .with_note(fmt::format("[devices.{}] {} = \"{}\" is not one of {}", backend,
                                           key, it->second, valid)));
}

Status settings_known(const Settings& settings, std::string_view backend,
                      std::span<const std::string_view> known)
{
    for (const auto& [key, value] : settings)
        if (std::ranges::find(known, std::string_view(key)) == known.end())
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
                            .with_note(fmt::format("[devices.{}] {} is not a setting of the {} "
                                                   "backend; its settings are {}",
                                                   backend, key, backend, fmt::join(known, ", "))));
    return {};
}

Status check_selection(const Selection& selection)
{
    for (const auto& [name, settings] : selection.settings)
        if (find(name) == nullptr)
            return fail(unknown_settings_table(name));
    for (const std::string& text : selection.devices)
        if (auto pattern = parse_pattern(text); !pattern) return fail(pattern.error());
    static const Settings none;
    for (const Factory& factory : builtin_factories) {
        auto it = selection.settings.find(factory.name);
        auto checked = factory.enumerate(it == selection.settings.end() ? none : it->second,
                                         selection.state_dir, FactoryMode::check);
        if (!checked) return fail(checked.error());
    }
    return {};
}

Result<std::vector<std::unique_ptr<Backend>>> open_devices(const Selection& selection)
{
    for (const auto& [name, settings] : selection.settings)
        if (find(name) == nullptr)
            return fail(unknown_settings_table(name));
    std::vector<Pattern> patterns;
    for (const std::string& text : selection.devices) {
        auto pattern = parse_pattern(text);
        if (!pattern) return fail(pattern.error());
        patterns.push_back(*pattern);
    }

    std::vector<std::unique_ptr<Backend>> served;
    for (const Factory& factory : builtin_factories) {
        const bool wanted = patterns.empty() || std::ranges::any_of(patterns, [&](const Pattern& p) {
                                return p.backend == factory.name;
                            });
        if (!wanted)
            continue;
        static const Settings none;
        auto it = selection.settings.find(factory.name);
        auto found = factory.enumerate(it == selection.settings.end() ? none : it->second,
                                       selection.state_dir, FactoryMode::open);
        if (!found) return fail(found.error());
        for (const Pattern& p : patterns)
            if (p.backend == factory.name && p.index && *p.index >= found->size())
                return fail(Error::of(Errc::invalid_argument, VACCEL_D_NO_DEVICE, *p.index,
                                      found->size())
                                .with_note(fmt::format("{}:{} asked for, but {} has {} device(s)",
                                                       factory.name, *p.index, factory.name,
                                                       found->size())));
        for (std::size_t i = 0; i < found->size(); ++i) {
            const bool selected =
                patterns.empty() || std::ranges::any_of(patterns, [&](const Pattern& p) {
                    return p.backend == factory.name && (!p.index || *p.index == i);
                });
            if (selected)
                served.push_back(std::move((*found)[i]));
        }
    }
    if (served.empty())
        return fail(Error::of(Errc::unsupported, VACCEL_D_NO_DEVICE, 0, 0)
                        .with_note(fmt::format("no device to serve (backends built in: {})",
                                               names())));
    return served;
}

}  // namespace vaccel::backend
