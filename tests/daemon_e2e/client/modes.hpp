// modes.hpp - the modes of the daemon end-to-end test client, one per
// behaviour a script checks (main.cpp maps command lines to them).
//
// Decides: every mode returns the process exit status (0 = every check
// held); a failed check exits 1 at once through fail_check().
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace vaccel::e2e {

// `rounds` ADD fixture submissions on one context, every output compared
// byte for byte; releases everything and closes.
int add_loop_mode(const std::filesystem::path& fixture_dir, std::uint64_t rounds);
// Submits `submissions` MATMUL [n x n], prints "submitted", sleeps until
// killed.
int hold_mode(std::int64_t n, unsigned submissions);
// Submits `submissions` MATMUL [n x n], prints "parked", waits for them: the
// daemon is killed meanwhile; the wait (not before the kill time the script
// wrote to `kill_time_file`) and every later call must fail with -ENODEV /
// DeviceLost / PEER_GONE. The wait's delay after the kill is printed.
int park_mode(std::int64_t n, unsigned submissions, const std::filesystem::path& kill_time_file);

// The limit `kind` (contexts, memory, buffers, programs, queues, events, gates)
// is `value` for this client: using up to it succeeds, one more is refused
// with ResourceLimit naming the kind, the value and the use, and the refusal
// changes no counter.
int limit_mode(std::string_view kind, std::uint64_t value);
// A buffer handle of one session (sent through a pipe to a second process)
// is unknown in the other session, and the owner's buffer is untouched.
int foreign_handle_mode();
// Drops root (uid/gid 65534, no groups): the client still works, but every
// admin command is refused with PermissionDenied / NOT_ADMIN.
int admin_denied_mode();
// tenant_modes.cpp: drops to uid/gid `uid`, opens a session, a context on
// device 0 and a Host buffer of `bytes`; prints "held" (then holds until
// stdin closes) or "refused: SENTENCE" at the first refusal.
int tenant_hold_mode(std::uint32_t uid, std::uint64_t bytes);
// Sends the malformed message `kind` on a raw connection: the daemon closes
// that connection without answering, and a new connection is served.
int malformed_mode(std::string_view kind);

// contract_modes.cpp: the same checks over any transport.
// Host gates: work held until raised, raises never lower, a destroyed gate
// cancels what waits on it, foreign/cross-context/wrong-kind gates refused.
int gates_mode();
// vaccel_client_fd() becomes readable when work completes or is cancelled
// and is cleared by the next vaccel_event_poll()/vaccel_event_wait().
int notify_mode();
// The CPU's built-in kernels write exact bytes; every malformed launch is
// refused with its own detail and charges nothing.
int launch_mode();
// A SPIR-V kernel (the saxpy test kernel at the path) launched on the first
// device that loads SPIR-V, with exact output.
int spirv_launch_mode(const char* module_path);
// Needs a daemon serving the CPU as two devices with device 0 losing itself
// after `accepted_before_loss` acceptances ([devices.cpu] count = 2,
// inject_loss_after = N): the next submit is indeterminate, device 0's
// events fail and later calls are refused, device 1 keeps serving.
int loss_mode(std::uint64_t accepted_before_loss);

}  // namespace vaccel::e2e
