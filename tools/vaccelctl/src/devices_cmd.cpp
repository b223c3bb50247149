// devices_cmd.cpp - `vaccelctl devices [--json]`.
//
// Owns: listing every device the client reports, as text, one line each
// (-L) or JSON (report.hpp).
#include <fmt/format.h>

#include "commands.hpp"
#include "session.hpp"

namespace vaccel::ctl {

Result<void> devices_command(const DevicesOptions& options)
{
    auto session = Session::open(options.verbose);
    if (!session)
        return std::unexpected(session.error());
    auto version = session->version();
    if (!version)
        return std::unexpected(version.error());
    auto devices = session->devices();
    if (!devices)
        return std::unexpected(devices.error());
    if (options.json)
        fmt::print("{}\n", devices_json(*devices, *version).dump(2));
    else if (options.list)
        fmt::print("{}", devices_lines(*devices));
    else
        fmt::print("{}", devices_text(*devices, *version));
    return {};
}

}  // namespace vaccel::ctl
