// registry.hpp - which backends this build has, and which devices to serve.
//
// Owns the list of backend factories compiled into this build (registry.cpp
// is the only file that names a backend) and the device selection rules.
// Decides:
//  - order: device 0 is the best device present that runs programs:
//    accelerator backends that run programs first, the CPU next, backends
//    that do not run programs yet (Vulkan, docs/adr/0013-vulkan-backend.md)
//    after it;
//  - selection: `devices` lists patterns, "NAME" or "NAME:*" (every device
//    of that backend) and "NAME:N" (its N-th device); empty = every device
//    every backend finds. Devices are served in registry order, each once.
//    An unknown backend name, or "NAME:N" naming a device that does not
//    exist, is refused (InvalidArgument) so a typo in a config never
//    silently serves something else; "NAME:*" finding none is fine.
//  - settings: each backend reads its own table ([devices.NAME] in the
//    daemon's config) as text values and refuses keys it does not know;
//    the note of every refusal of a setting begins "[devices.NAME] KEY "
//    (of a table for no backend of this build: "[devices.NAME] "), so the
//    daemon can put the file's line before it;
//  - state: every backend gets the daemon's state directory ([daemon]
//    state_dir) and keeps what it wants there under a folder of its own
//    name; empty means nothing is kept across restarts.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vaccel/backend/backend.hpp"
#include "vaccel/common/error.hpp"

namespace vaccel::backend {

// One backend's settings: key -> value as text ("2", "true").
using Settings = std::map<std::string, std::string, std::less<>>;

// What a factory is asked: open the devices, or only check the settings.
enum class FactoryMode { open, check };

struct Factory {
    std::string_view name;  // "cpu", "vulkan", "cuda"
    // Opens every device of this backend that the machine has (none is not
    // an error). Refuses unknown or malformed settings (InvalidArgument,
    // with a note naming the key). With FactoryMode::check it refuses the
    // same, opens nothing and returns no device.
    Result<std::vector<std::unique_ptr<Backend>>> (*enumerate)(
        const Settings& settings, const std::filesystem::path& state_dir, FactoryMode mode);
};

// The factories of this build, in serving order.
std::span<const Factory> factories();

struct Selection {
    std::vector<std::string> devices;         // patterns; empty = all found
    std::map<std::string, Settings, std::less<>> settings;  // per backend name
    std::filesystem::path state_dir;  // the daemon's; empty: nothing kept across restarts
};

// The devices a selection names, in order. Refuses an unknown backend name
// in `devices` or `settings`, a bad pattern, a missing "NAME:N", and no
// device at all (Unsupported, VACCEL_D_NO_DEVICE).
Result<std::vector<std::unique_ptr<Backend>>> open_devices(const Selection& selection);

// What open_devices() refuses without opening a device: unknown backend
// names, bad patterns, unknown or malformed settings. (Whether "NAME:N"
// exists, and whether there is any device at all, needs the devices.)
Status check_selection(const Selection& selection);

// Helpers for factories: a setting as an unsigned number (absent = fallback;
// not a number = InvalidArgument naming backend and key).
Result<std::uint64_t> setting_number(const Settings& settings, std::string_view backend,
                                     std::string_view key, std::uint64_t fallback);
// A setting that is one of `choices`, as its index (absent = 0, the first
// being the default; anything else = InvalidArgument listing them).
Result<std::size_t> setting_choice(const Settings& settings, std::string_view backend,
                                   std::string_view key,
                                   std::initializer_list<std::string_view> choices);
// InvalidArgument when `settings` has a key outside `known`.
Status settings_known(const Settings& settings, std::string_view backend,
                      std::span<const std::string_view> known);

}  // namespace vaccel::backend
