// config_error.hpp - why a policy config could not be read, changed or saved.
//
// Owns nothing. Decides the shape of every refusal of the policy module:
// which file, which line (1-based; 0 when no single line is at fault), which
// key, why, and the errno when the system refused. message() is the
// sentence an operator reads, e.g.
//   "/etc/vaccel/vacceld.toml:12: key 'memory': \"2X\" is not a size; ..."
#pragma once

#include <cstdint>
#include <expected>
#include <string>

namespace vaccel::daemon {

struct ConfigError {
    std::string file;        // may be empty (a change not yet tied to a file)
    std::uint32_t line = 0;  // 1-based; 0: not about one line
    std::string key;         // dotted key ("daemon.socket", "rule.memory"), may be empty
    std::string reason;      // what is wrong and what to write instead
    int sys_errno = 0;       // the system's refusal, when there was one

    std::string message() const;
};

}  // namespace vaccel::daemon
