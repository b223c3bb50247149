// config_write.cpp - Config -> TOML text, the atomic file replacement, and
// ConfigFile's run-time changes.
//
// Owns the order of the steps that make a change durable and all-or-nothing
// (config.hpp): temp file in the same directory (so rename stays within one
// filesystem), write, fsync, rename over, fsync the directory. A temp file
// is removed on every failure before the rename.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "vaccel/daemon/config.hpp"
#include "vaccel/daemon/size.hpp"
#include "vaccel/daemon/unique_fd.hpp"

namespace vaccel::daemon {

namespace {

// A TOML basic string: quotes, backslashes and control characters escaped.
std::string toml_string(std::string_view text)
{
    std::string out = "\"";
    for (const char c : text) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
                out += fmt::format("\\u{:04X}", static_cast<unsigned char>(c));
            else
                out += c;
        }
    }
    return out + "\"";
}

std::string selector_line(const Selector& selector)
{
    switch (selector.kind) {
    case SelectorKind::uid: return fmt::format("uid = {}\n", selector.id);
    case SelectorKind::gid: return fmt::format("gid = {}\n", selector.id);
    case SelectorKind::cgroup: return fmt::format("cgroup = {}\n", toml_string(selector.cgroup));
    case SelectorKind::fallback: break;
    }
    return "default = true\n";
}

// "2G" as a string; a plain integer when no unit fits and TOML can hold it.
std::string size_value(std::uint64_t bytes)
{
    const std::string text = format_size(bytes);
    const bool has_unit = text.back() < '0' || text.back() > '9';
    if (!has_unit && bytes <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return text;
    return toml_string(text);
}

ConfigError system_error(const std::filesystem::path& path, std::string_view step, int err)
{
    return ConfigError{path.string(), 0, {},
                       fmt::format("could not save the policy ({}: {}); the file on disk is "
                                   "unchanged - check that its directory is writable by vacceld "
                                   "and has free space",
                                   step, std::strerror(err)),
                       err};
}

bool write_all(int fd, std::string_view bytes)
{
    while (!bytes.empty()) {
        const ssize_t put = ::write(fd, bytes.data(), bytes.size());
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0) {
            if (put == 0)
                errno = EIO;
            return false;
        }
        bytes.remove_prefix(static_cast<std::size_t>(put));
    }
    return true;
}

}  // namespace

std::string write_config(const Config& config)
{
    std::string out =
        "# vacceld configuration, rewritten by vacceld when limits change at run time\n"
        "# (comments are not kept; dist/vacceld.toml documents every setting).\n\n"
        "[daemon]\n";
    const DaemonSettings& d = config.daemon;
    if (d.devices) {
        out += "devices = [";
        for (std::size_t i = 0; i < d.devices->size(); ++i)
            out += (i == 0 ? "" : ", ") + toml_string((*d.devices)[i]);
        out += "]\n";
    }
    out += fmt::format("socket = {}\nadmin_group = {}\n", toml_string(d.socket),
                       toml_string(d.admin_group));
    // Written only when set, so files that never named it stay as they were.
    if (d.state_dir != default_state_dir)
        out += fmt::format("state_dir = {}\n", toml_string(d.state_dir));
    for (const auto& [backend, values] : d.backends) {
        out += fmt::format("\n[devices.{}]\n", backend);
        for (const auto& [key, value] : values) {
            // Numbers and booleans go back unquoted, so the file re-parses
            // to the same text values.
            const bool bare = value == "true" || value == "false" ||
                              (!value.empty() && value.find_first_not_of("0123456789") ==
                                                     std::string::npos && value.size() < 19);
            out += fmt::format("{} = {}\n", key, bare ? value : toml_string(value));
        }
    }
    for (const Rule& rule : config.policy.rules()) {
        out += "\n[[rule]]\n" + selector_line(rule.selector);
        const RuleLimits& l = rule.limits;
        auto count = [&out](std::string_view key, const std::optional<std::uint32_t>& value) {
            if (value)
                out += fmt::format("{} = {}\n", key, *value);
        };
        count("contexts", l.contexts);
        if (l.memory_bytes)
            out += fmt::format("memory = {}\n", size_value(*l.memory_bytes));
        count("buffers", l.buffers);
        count("programs", l.programs);
        count("queues", l.queues);
        count("events", l.events);
        count("gates", l.gates);
        count("sessions", l.sessions);
        count("weight", l.weight);
        if (l.priority)
            out += fmt::format("priority = \"{}\"\n", priority_name(*l.priority));
        if (l.device_share)
            out += fmt::format("device_share = \"{}\"\n", share_text(*l.device_share));
        if (!l.context.empty()) {
            const ContextCaps& c = l.context;
            out += "[rule.context]\n";
            if (c.memory_bytes)
                out += fmt::format("memory = {}\n", size_value(*c.memory_bytes));
            count("buffers", c.buffers);
            count("programs", c.programs);
            count("queues", c.queues);
            count("events", c.events);
            count("gates", c.gates);
        }
    }
    return out;
}

std::expected<void, PersistError> persist_config(const Config& config,
                                                 const std::filesystem::path& path)
{
    auto failed = [&path](std::string_view step, int err, bool replaced = false) {
        return std::unexpected(PersistError{system_error(path, step, err), replaced});
    };
    const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
    std::string temp = (dir / ("." + path.filename().string() + ".XXXXXX")).string();

    // Ownership: from mkostemp until rename, the temp file is ours to delete.
    UniqueFd fd(::mkostemp(temp.data(), O_CLOEXEC));
    if (!fd)
        return failed("create a temporary file beside it", errno);
    auto abandon = [&](std::string_view step) {
        const int err = errno;
        fd.reset();
        ::unlink(temp.c_str());
        return failed(step, err);
    };
    // Keep the old file's permissions; a new file is world-readable (it
    // holds no secrets and vaccelctl shows it anyway).
    struct stat old {};
    const mode_t mode = ::stat(path.c_str(), &old) == 0 ? (old.st_mode & 07777) : 0644;
    if (::fchmod(fd.get(), mode) != 0)
        return abandon("set its permissions");
    if (!write_all(fd.get(), write_config(config)))
        return abandon("write the temporary file");
    if (::fsync(fd.get()) != 0)
        return abandon("flush the temporary file");
    if (::close(fd.release()) != 0) {
        const int err = errno;
        ::unlink(temp.c_str());
        return failed("close the temporary file", err);
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(temp.c_str());
        return failed("rename it over the old file", err);
    }
    // The rename is durable only once the directory entry is.
    UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir_fd || ::fsync(dir_fd.get()) != 0) {
        PersistError error{system_error(path, "flush its directory", errno), true};
        error.error.reason = fmt::format(
            "the new policy is in place but may not survive a power loss (flush its directory: "
            "{})",
            std::strerror(error.error.sys_errno));
        return std::unexpected(std::move(error));
    }
    return {};
}

std::expected<ConfigFile, ConfigError> ConfigFile::open(std::filesystem::path path)
{
    auto loaded = load_config(path);
    if (!loaded) {
        if (loaded.error().sys_errno == ENOENT)
            return ConfigFile(std::move(path), Config{});
        return std::unexpected(std::move(loaded.error()));
    }
    return ConfigFile(std::move(path), std::move(*loaded));
}

std::expected<void, ConfigError> ConfigFile::commit(Config next)
{
    auto persisted = persist_config(next, path_);
    if (!persisted && !persisted.error().replaced)
        return std::unexpected(std::move(persisted.error().error));
    // The file holds `next` now (possibly not yet durably): run with it.
    config_ = std::move(next);
    if (!persisted)
        return std::unexpected(std::move(persisted.error().error));
    return {};
}

std::expected<void, ConfigError> ConfigFile::set_rule(const Selector& selector,
                                                      const RuleLimits& changes)
{
    Config next = config_;
    if (auto set = next.policy.set(selector, changes); !set) {
        ConfigError error = std::move(set.error());
        error.file = path_.string();
        return std::unexpected(std::move(error));
    }
    return commit(std::move(next));
}

std::expected<void, ConfigError> ConfigFile::reset_rule(const Selector& selector)
{
    Config next = config_;
    if (!next.policy.reset(selector))
        return std::unexpected(ConfigError{
            path_.string(), 0, {},
            fmt::format("there is no rule for {} to reset; `vaccelctl limits get` lists the "
                        "rules",
                        selector.describe()),
            0});
    return commit(std::move(next));
}

}  // namespace vaccel::daemon
