// exchange.hpp - one request taken off the wire, one reply put back on it.
//
// Owns: a received request (its struct, inline payload and passed memfd, or
// the server slot its payload waits on) and a reply ready to send. One
// implementation for both transports; what differs is only where payload
// bytes are (PayloadSource):
//  - socket: inline in the datagram, or in a memfd passed with it;
//  - kernel (/dev/vaccel-server, uapi/vaccel_server.h): on the module's
//    slot, read with pread() and (BUFFER_READ) written with pwrite() at
//    VACCEL_SRV_PAYLOAD_POS(slot, seq, offset), from the device worker; the reply
//    is header + struct only (payload_bytes = length for a BUFFER_READ that
//    succeeded) and goes back on the same slot.
// Decides:
//  - intake is strict (take_request): the codec's rules, plus exactly one
//    descriptor with VACCEL_MSG_PAYLOAD_FD and none without. A refusal here
//    means the message is malformed: the connection is closed.
//  - a payload descriptor must be a memfd (payload_files.hpp: the check,
//    made at intake, and why); any other file, pipe or socket is refused
//    for that request (the connection stays), never read, and closed off
//    the caller's thread.
//  - a memfd payload is trusted for nothing: its size is checked with
//    fstat() (too short: InvalidArgument, VACCEL_D_BAD_SIZE, arg0 = bytes
//    the file has, arg1 = bytes needed), and the client may rewrite its
//    bytes at any moment. So:
//     - BUFFER_WRITE data is read exactly once, by the copy into the buffer
//       (nothing decides anything from it): a file sealed against shrinking
//       (F_SEAL_SHRINK, as libvaccel's are) is mapped and copied straight
//       from; it cannot be truncated under the copy, so that never faults.
//       A concurrent rewrite only tears the client's own data.
//     - a BUFFER_READ's answer is written once into the client's file: a
//       file sealed against shrinking is mapped and written straight into.
//     - every other payload (a program's artifact, bindings, handles,
//       kernel arguments) is verified and then decoded, i.e. read more than
//       once: it is first copied (pread) into daemon-private memory, so
//       what was verified is what is decoded.
//    A file that is not mapped is copied with pread()/pwrite(), so a client
//    that truncates it meanwhile gets the short-file refusal and never a
//    SIGBUS.
//  - check first, then copy: a BUFFER_WRITE, BUFFER_READ or PROGRAM_LOAD
//    whose payload is not in memory (a slot's, a memfd's) is checked
//    (handle, device, range, artifact limit: Session::admit_payload) before
//    any of its payload is allocated, read or written.
//  - every reply echoes the request's opcode and seq, carries the struct
//    with its outputs and the status, and (BUFFER_READ, ADMIN) the payload:
//    inline up to VACCEL_MSG_INLINE_MAX, above it in a memfd (ADMIN: one the
//    daemon makes; BUFFER_READ: the requester's own file).
//
// Threads: nothing here touches the reactor; execute() and the memfd copies
// run on device workers or the chores thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "vaccel.h"
#include "vaccel/common/error.hpp"
#include "vaccel/daemon/unique_fd.hpp"
#include "vaccel/engine/session.hpp"

namespace vaccel::daemon {

// The kernel transport's place for a request's payload: byte `offset` of it
// is at VACCEL_SRV_PAYLOAD_POS(slot, seq, offset) of the server node, `seq`
// being the header.seq of the request delivered on the slot (the module
// refuses a position naming another request with -ESTALE).
// Ownership: `fd` is borrowed from the server, which keeps the node open
// until every request delivered on it has been answered.
struct ServerSlot {
    int fd = -1;
    std::uint32_t slot = 0;
    std::uint64_t seq = 0;
};

struct Request {
    vaccel_msg_header header{};
    std::vector<std::byte> args;     // the op's struct, exactly
    std::vector<std::byte> payload;  // the inline payload (empty with a memfd or a slot)
    UniqueFd payload_fd;             // VACCEL_MSG_PAYLOAD_FD's file (a memfd)
    std::optional<ServerSlot> server_slot;  // kernel transport only
    // Why the descriptor passed with VACCEL_MSG_PAYLOAD_FD was refused at
    // intake (not a memfd); payload_fd is then empty.
    std::optional<Error> payload_fd_refused;

    std::uint32_t opcode() const { return header.opcode; }
    bool has_fd_payload() const { return (header.flags & VACCEL_MSG_PAYLOAD_FD) != 0; }
    // The payload is still on the module's slot (not yet read into `payload`).
    bool payload_on_slot() const { return server_slot.has_value() && payload.empty(); }
};

struct Reply {
    std::vector<std::byte> bytes;  // the whole message
    UniqueFd fd;                   // a memfd to pass with it, if any
    // Kernel transport: the slot the reply commits on (its request's).
    std::optional<std::uint32_t> slot;
};

// Decodes one datagram and the descriptors that came with it into `into`,
// whose vectors keep their capacity (the reactor's per-connection request:
// no allocation once it has grown). The error says why the message is
// malformed (for the log); the caller closes the connection, and `into` is
// then unspecified.
Status take_request(std::span<const std::byte> datagram, std::vector<UniqueFd> fds, Request& into);

// Kernel transport: takes the message the module delivered into a slot's
// buffer (`message`: the fetch completion's bytes, header + struct) as
// strictly as take_request() takes a datagram: magic, flags 0, a contract
// opcode (ADMIN has no ioctl), args_bytes exact, the message exactly that
// long, payload_bytes what the op requires, check_request_wire() on the
// struct. An EVENT_WAIT's handles (at most VACCEL_MAX_WAIT_EVENTS x 8 bytes)
// and the bindings of a SUBMIT or a RUN (at most VACCEL_MAX_BINDINGS) are
// read from the slot here, since waits and runs park on the reactor; every
// other payload stays on the slot for execute(). The error is the
// refusal to answer with (see kernel_echo()).
Result<Request> take_kernel_request(std::span<const std::byte> message, ServerSlot where);
// A request as close to `message` as it can be read (header, struct padded
// to hold at least a status), to answer a message take_kernel_request() or
// the session messages refused.
Request kernel_echo(std::span<const std::byte> message, ServerSlot where);

// The reply refusing `request` with `error` (its struct echoed, outputs as
// the handler left them).
Reply refusal(const Request& request, const Error& error);
// A reply of `request`'s opcode and seq with `args` (status already set in
// it) and `payload` (inline, or in a new memfd above the inline maximum).
Reply reply_with(const Request& request, std::span<const std::byte> args,
                 std::span<const std::byte> payload);

// The reply to an EVENT_WAIT: done_count and first_done from `progress`,
// the status from `refused` (nullptr: success).
Reply wait_reply(const Request& request, const engine::WaitProgress& progress,
                 const Error* refused);

// Runs a contract request (not ADMIN) on `session`: resolves a memfd
// payload, calls Session::call, and encodes the reply. Blocks on the device:
// a worker's job, never the reactor's. EVENT_WAIT here blocks like the
// embedded transport; the daemon parks waits instead (Server).
Reply execute(engine::Session& session, Request& request);
// The same into `into` (its bytes keep their capacity). A request with an
// inline payload that is no BUFFER_READ is answered with no allocation
// here and no copy: the call runs on request.args and request.payload.
void execute(engine::Session& session, Request& request, Reply& into);

// The payload of `request`: its inline bytes, or `bytes` read from its memfd
// or its server slot.
Result<std::vector<std::byte>> payload_of(Request& request, std::uint64_t bytes);

// Writes `data` at offset 0 of `fd` (pwrite, all of it), checking first that
// the file holds at least that many bytes.
Status write_into_fd(int fd, std::span<const std::byte> data);

// A sealed-size memfd holding `data` (for replies above the inline maximum).
Result<UniqueFd> memfd_with(std::span<const std::byte> data, std::string_view name);

}  // namespace vaccel::daemon
