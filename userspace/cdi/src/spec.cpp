// spec.cpp - the CDI spec's YAML text and its atomic write.
#include "vaccel/cdi/spec.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace vaccel::cdi {

namespace {

// A YAML double-quoted scalar: every character that could end or bend it
// escaped, so any path or name stays one string.
std::string yaml_quoted(std::string_view text)
{
    std::string out = "\"";
    for (char c : text) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20)
                out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
            else
                out += c;
        }
    }
    return out + "\"";
}

// A flow sequence of quoted scalars: ["a", "b"].
std::string sequence(const std::vector<std::string>& items)
{
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i)
        out += (i == 0 ? "" : ", ") + yaml_quoted(items[i]);
    return out + "]";
}

std::string hook(const SpecInput& input, const char* name, std::vector<std::string> command,
                 const char* indent)
{
    std::vector<std::string> args{input.hook_program, "--socket", input.socket_path, "cdi",
                                  "hook"};
    args.insert(args.end(), command.begin(), command.end());
    return fmt::format("{0}- hookName: {1}\n{0}  path: {2}\n{0}  args: {3}\n", indent,
                       yaml_quoted(name), yaml_quoted(input.hook_program), sequence(args));
}

// What every device gives the container: the node, or the socket.
std::string way_in(const SpecInput& input, const char* indent)
{
    if (!input.kernel_node.empty())
        return fmt::format("{0}deviceNodes:\n{0}  - path: {1}\n", indent,
                           yaml_quoted(input.kernel_node));
    const std::filesystem::path socket(input.socket_path);
    const std::string inside =
        (std::filesystem::path(container_socket_dir) / socket.filename()).string();
    return fmt::format("{0}env: {1}\n{0}mounts:\n{0}  - hostPath: {2}\n{0}    containerPath: "
                       "{3}\n{0}    options: [\"bind\", \"rw\"]\n",
                       indent, sequence({"VACCEL_SOCKET=" + inside}),
                       yaml_quoted(socket.parent_path().string()), yaml_quoted(container_socket_dir));
}

// A comment line's text: control characters (a newline would end the
// comment) become '?'.
std::string comment_text(std::string text)
{
    for (char& c : text)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            c = '?';
    return text;
}

std::string device(const SpecInput& input, const std::string& name, const std::string& devices,
                   const std::string& comment)
{
    std::string out = fmt::format("  # {}\n  - name: {}\n    containerEdits:\n",
                                  comment_text(comment), yaml_quoted(name));
    out += "      hooks:\n";
    out += hook(input, "createRuntime", {"create", "--devices", devices}, "        ");
    return out;
}

}  // namespace

std::string input_problem(const SpecInput& input)
{
    if (input.devices.empty())
        return "the daemon serves no device, so the spec would offer none";
    if (input.socket_path.empty() || input.socket_path.front() != '/')
        return fmt::format("the daemon's socket path '{}' is not absolute; the CDI hooks reach "
                           "the daemon there, so it must serve a socket with an absolute path",
                           input.socket_path);
    if (input.hook_program.empty() || input.hook_program.front() != '/')
        return fmt::format("the hook program '{}' is not an absolute path; name vaccelctl by "
                           "its absolute path",
                           input.hook_program);
    if (!input.kernel_node.empty() && input.kernel_node.front() != '/')
        return fmt::format("the node '{}' is not an absolute path", input.kernel_node);
    return {};
}

std::string spec_yaml(const SpecInput& input)
{
    std::string out = fmt::format(
        "# vaccel's devices for containers (CDI {}), written by {}.\n"
        "# Use: podman run --device {}=all IMAGE ...   (or ={{index}} for one device)\n"
        "# Containers reach vacceld {}. Regenerate after the daemon's devices change.\n",
        version, input.written_by, kind,
        input.kernel_node.empty() ? "through its socket " + input.socket_path
                                  : "through " + input.kernel_node);
    out += fmt::format("cdiVersion: {}\nkind: {}\ndevices:\n", yaml_quoted(version), yaml_quoted(kind));
    out += device(input, "all", "all", "every device the daemon serves");
    for (const Device& d : input.devices)
        out += device(input, std::to_string(d.index), std::to_string(d.index),
                      fmt::format("device {}: {} (its sessions may open this device only)",
                                  d.index, d.name));
    // Applied once for any number of this spec's devices.
    out += "containerEdits:\n";
    out += way_in(input, "  ");
    out += "  hooks:\n";
    out += hook(input, "poststop", {"remove"}, "    ");
    return out;
}

std::string write_spec(const std::string& path, const std::string& text)
{
    const std::filesystem::path target(path);
    std::error_code ec;
    if (target.has_parent_path())
        std::filesystem::create_directories(target.parent_path(), ec);
    if (ec)
        return fmt::format("cannot create {}: {}", target.parent_path().string(), ec.message());
    const std::string temporary = path + ".tmp";
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return fmt::format("cannot write {}: {}", temporary, std::strerror(errno));
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int error = errno;
            ::close(fd);
            ::unlink(temporary.c_str());
            return fmt::format("cannot write {}: {}", temporary, std::strerror(error));
        }
        done += static_cast<std::size_t>(n);
    }
    ::fchmod(fd, 0644);  // whatever the umask
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        ::unlink(temporary.c_str());
        return fmt::format("cannot write {}: {}", temporary, std::strerror(errno));
    }
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(temporary.c_str());
        return fmt::format("cannot replace {}: {}", path, std::strerror(error));
    }
    return {};
}

}  // namespace vaccel::cdi
