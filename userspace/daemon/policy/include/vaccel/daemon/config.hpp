// config.hpp - vacceld's config file: daemon settings plus the limits policy.
//
// Owns: the file's schema and its reading, writing and atomic replacement.
// Decides:
//  - the schema (dist/vacceld.toml documents it for operators):
//        [daemon]  devices = ["cpu", "vulkan:*", "cuda:0", ...]
//                  (absent: every device found; patterns as the backend
//                  registry reads them: NAME, NAME:*, NAME:N)
//                  socket = "/run/vaccel/vacceld.sock"
//                  admin_group = "vaccel-admin"
//                  state_dir = "/var/lib/vaccel" (what backends keep
//                  across restarts, e.g. Vulkan pipeline caches)
//        [[rule]]  exactly one selector: uid = N | gid = N |
//                  cgroup = "/path/prefix" | default = true
//                  then any of: contexts, memory, buffers, programs, queues,
//                  events, gates (the tenant's totals on each device;
//                  memory is a size: 2G, 512M, 4096), sessions, weight
//                  (1..1000), priority ("latency" | "batch") and
//                  device_share ("0.1%".."100%")
//        [rule.context]  optional, right after its [[rule]]: caps on each
//                  single context (memory, buffers, programs, queues,
//                  events, gates)
//        [devices.NAME]  one backend's settings (e.g. [devices.cpu]
//                  threads = 4, count = 2); the backend checks the keys
//                  when the daemon opens it, and where each key stood is
//                  kept (SettingLines) so its refusal can name the line
//    Unknown tables and keys are refused (a typo must not silently lift a
//    limit); so is a second rule for the same selector.
//  - errors name the file, the line and the key (ConfigError).
//  - persistence is atomic: a temporary file in the same directory is
//    written and fsync'd, renamed over the old file, and the directory is
//    fsync'd. Readers see the old file or the new one, never a mix, and a
//    failure before the rename leaves the old file untouched. Comments are
//    not kept; the written text re-parses to the same Config.
#pragma once

#include <expected>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vaccel/daemon/config_error.hpp"
#include "vaccel/daemon/policy.hpp"

namespace vaccel::daemon {

inline constexpr std::string_view default_config_path = "/etc/vaccel/vacceld.toml";
inline constexpr std::string_view default_socket_path = "/run/vaccel/vacceld.sock";
inline constexpr std::string_view default_admin_group = "vaccel-admin";
inline constexpr std::string_view default_state_dir = "/var/lib/vaccel";

// Where each [devices.NAME] table ("NAME") and key ("NAME.KEY") stood in the
// file: for the backends' refusals, which are made after parsing. Not part
// of what the file says: two configs that say the same compare equal
// wherever their lines were (the written file re-parses to an equal
// Config).
struct SettingLines {
    std::map<std::string, std::uint32_t, std::less<>> at;
    // The line of `backend`'s `key` (empty key: its table), 0 when unknown.
    std::uint32_t line_of(std::string_view backend, std::string_view key = {}) const;
    bool operator==(const SettingLines&) const { return true; }
};

// [daemon]: parsed and kept; acting on it is the daemon's business.
struct DaemonSettings {
    std::optional<std::vector<std::string>> devices;  // nullopt: every device found
    // [devices.NAME] tables: backend -> key -> value as text.
    std::map<std::string, std::map<std::string, std::string, std::less<>>, std::less<>> backends;
    SettingLines backend_lines;
    std::string socket{default_socket_path};
    std::string admin_group{default_admin_group};
    std::string state_dir{default_state_dir};
    bool operator==(const DaemonSettings&) const = default;
};

struct Config {
    DaemonSettings daemon;
    Policy policy;
    bool operator==(const Config&) const = default;
};

// `text` as the contents of `file_name` (used only in errors).
std::expected<Config, ConfigError> parse_config(std::string_view text, std::string_view file_name);
// Reads and parses `path`; a file that cannot be read is an error (with its
// errno).
std::expected<Config, ConfigError> load_config(const std::filesystem::path& path);
// TOML text that parse_config() turns back into `config`.
std::string write_config(const Config& config);
// Replaces `path` with write_config(config), atomically (see above). The
// error says which step failed; `replaced` tells whether the rename had
// already happened (only the directory fsync failed: the new file is in
// place but its durability is not confirmed).
struct PersistError {
    ConfigError error;
    bool replaced = false;
};
std::expected<void, PersistError> persist_config(const Config& config,
                                                 const std::filesystem::path& path);

// The config file the daemon runs with, and the run-time changes to it.
// Ownership: one thread owns a ConfigFile. set_rule()/reset_rule() write and
// fsync the file, which blocks: run them on a thread that may block, never on
// the reactor (ADR 0006).
class ConfigFile {
public:
    // Loads `path`; a file that does not exist gives the default Config (it
    // is created by the first change).
    static std::expected<ConfigFile, ConfigError> open(std::filesystem::path path);

    const Config& config() const { return config_; }
    const std::filesystem::path& path() const { return path_; }

    // Policy::set() then persist. On any error the running config and the
    // file are both unchanged (except PersistError::replaced, where both
    // already hold the change).
    std::expected<void, ConfigError> set_rule(const Selector& selector, const RuleLimits& changes);
    // Policy::reset() then persist; removing a rule that does not exist is
    // an error that changes nothing.
    std::expected<void, ConfigError> reset_rule(const Selector& selector);

private:
    ConfigFile(std::filesystem::path path, Config config)
        : path_(std::move(path)), config_(std::move(config))
    {
    }
    // Persists `next` and adopts it if the file now holds it.
    std::expected<void, ConfigError> commit(Config next);

    std::filesystem::path path_;
    Config config_;
};

}  // namespace vaccel::daemon
