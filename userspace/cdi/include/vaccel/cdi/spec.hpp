// spec.hpp - the CDI spec of vaccel's devices (kind vaccel.dev/accel).
//
// Owns nothing. Decides what a container that asks for vaccel gets
// (docs/adr/0023-containers-through-cdi.md):
//  - cdiVersion 0.5.0 (what podman 4.3 reads), kind "vaccel.dev/accel";
//  - device "all" and one device per accelerator index ("0", "1", ...);
//  - the spec's own edits (applied once, whichever devices are asked for)
//    give the way in: /dev/vaccel when the module's node exists, otherwise
//    the directory of the daemon's socket bind-mounted at /run/vaccel with
//    VACCEL_SOCKET naming the socket there;
//  - every device runs the createRuntime hook
//    `vaccelctl --socket HOST_SOCKET cdi hook create --devices all|N`
//    (the runtime runs it on the host, as root, in the host's namespaces:
//    an administrator; the container's own processes never are),
//    which registers the container with the daemon and the devices it was
//    given, and the spec runs `... cdi hook remove` at poststop;
//  - the file is written whole or not at all (temporary file, fsync,
//    rename), mode 0644.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vaccel::cdi {

inline constexpr const char* kind = "vaccel.dev/accel";
inline constexpr const char* version = "0.5.0";
inline constexpr const char* default_spec_path = "/etc/cdi/vaccel.yaml";
// Where a container finds the daemon's socket directory.
inline constexpr const char* container_socket_dir = "/run/vaccel";

struct Device {
    std::uint32_t index = 0;
    std::string name;  // shown in a comment only
};

struct SpecInput {
    std::vector<Device> devices;
    // The module's client node, given to containers when it exists.
    std::string kernel_node;  // empty: serve the socket
    // The daemon's socket on the host (absolute): hooks reach the daemon
    // there, and without a node containers get its directory.
    std::string socket_path;
    // The hook program on the host (absolute): vaccelctl.
    std::string hook_program;
    // Who wrote it, for the file's first comment ("vaccelctl cdi generate").
    std::string written_by;
};

// Why `input` cannot make a spec (a relative path, no device, ...), or empty.
std::string input_problem(const SpecInput& input);
// The spec as YAML. `input` must have no problem.
std::string spec_yaml(const SpecInput& input);
// Writes `text` to `path` atomically; the error is a sentence, or empty.
std::string write_spec(const std::string& path, const std::string& text);

}  // namespace vaccel::cdi
