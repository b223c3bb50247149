// main.cpp - vaccel-e2e-client: a real libvaccel client for the daemon
// end-to-end tests (tests/daemon_e2e/*.sh drive it).
//
// Owns: the command line only; each mode is in modes.hpp.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "modes.hpp"

namespace {

constexpr const char* usage =
    "usage: vaccel-e2e-client MODE ARGS...\n"
    "  add-loop FIXTURE_DIR ROUNDS       ROUNDS exact ADD fixture submissions\n"
    "  hold N SUBMISSIONS                submit MATMUL [N x N], print 'submitted', sleep\n"
    "  park N SUBMISSIONS KILL_TIME_FILE wait through the daemon's death\n"
    "  limit KIND VALUE                  KIND is enforced at VALUE\n"
    "  foreign-handle                    another session's handle is unknown\n"
    "  admin-denied                      drop root; admin commands are refused\n"
    "  malformed KIND                    the daemon drops a malformed connection\n"
    "  tenant-hold UID BYTES             as UID: a context and a BYTES buffer, held\n"
    "  gates                             host gates hold, release and cancel work\n"
    "  launch                            built-in kernels run, bad launches are refused\n"
    "  spirv-launch MODULE.spv           the saxpy SPIR-V test kernel on a Vulkan device\n"
    "  notify                            vaccel_client_fd() reports completions\n"
    "  loss N                            device 0 is lost at its (N+1)th acceptance\n";

std::uint64_t number(const char* text)
{
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (end == text || *end != '\0') {
        std::fprintf(stderr, "vaccel-e2e-client: '%s' is not a number\n%s", text, usage);
        std::exit(2);
    }
    return value;
}

}  // namespace

int main(int argc, char** argv)
{
    using namespace vaccel::e2e;
    const std::string_view mode = argc > 1 ? argv[1] : "";
    const int args = argc - 2;
    if (mode == "add-loop" && args == 2) return add_loop_mode(argv[2], number(argv[3]));
    if (mode == "hold" && args == 2)
        return hold_mode(std::int64_t(number(argv[2])), unsigned(number(argv[3])));
    if (mode == "park" && args == 3)
        return park_mode(std::int64_t(number(argv[2])), unsigned(number(argv[3])), argv[4]);
    if (mode == "limit" && args == 2) return limit_mode(argv[2], number(argv[3]));
    if (mode == "foreign-handle" && args == 0) return foreign_handle_mode();
    if (mode == "admin-denied" && args == 0) return admin_denied_mode();
    if (mode == "malformed" && args == 1) return malformed_mode(argv[2]);
    if (mode == "tenant-hold" && args == 2)
        return tenant_hold_mode(std::uint32_t(number(argv[2])), number(argv[3]));
    if (mode == "gates" && args == 0) return gates_mode();
    if (mode == "launch" && args == 0) return launch_mode();
    if (mode == "spirv-launch" && args == 1) return spirv_launch_mode(argv[2]);
    if (mode == "notify" && args == 0) return notify_mode();
    if (mode == "loss" && args == 1) return loss_mode(number(argv[2]));
    std::fputs(usage, stderr);
    return 2;
}
