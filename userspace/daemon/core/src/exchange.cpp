// exchange.cpp - intake of socket requests, payloads (memfd or server
// slot) and reply encoding.
#include "vaccel/daemon/exchange.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <new>
#include <optional>
#include <utility>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "vaccel/common/codec.hpp"
#include "vaccel/common/requests.hpp"
#include "vaccel/daemon/payload_files.hpp"
#include "vaccel_server.h"

namespace vaccel::daemon {

namespace {

// The size of a payload file (intake made sure it is a memfd).
Result<std::uint64_t> file_size(int fd)
{
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_SIZE, 0, 0)
                        .with_note("the payload descriptor is not a regular file (pass a memfd)"));
    return static_cast<std::uint64_t>(st.st_size);
}

// Whether a payload of `opcode` may be used straight from the client's
// mapped file: only when it is read exactly once (exchange.hpp).
bool read_once(std::uint32_t opcode) { return opcode == VACCEL_OP_BUFFER_WRITE; }

Error short_file(std::uint64_t has, std::uint64_t needed)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_BAD_SIZE, has, needed)
        .with_note("the payload file is shorter than the message says");
}

template <class T>
T struct_of(const std::vector<std::byte>& args)
{
    T value{};
    std::memcpy(&value, args.data(), sizeof value);
    return value;
}

// A buffer of `bytes` for a payload (up to max_payload_bytes, 1 GiB), or
// OutOfMemory when the daemon cannot have it - never an exception out of
// the daemon's request path.
Result<std::vector<std::byte>> payload_buffer(std::uint64_t bytes)
{
    // Invariant: std::bad_alloc is caught here and goes no further.
    try {
        return std::vector<std::byte>(bytes);
    } catch (const std::bad_alloc&) {
        return fail(Error::of(Errc::out_of_memory, VACCEL_D_NONE, bytes)
                        .with_note("the daemon could not stage this payload; try smaller transfers"));
    }
}

// A client's payload file mapped into the daemon, for one copy straight
// between it and a buffer. Only a file sealed against shrinking
// (F_SEAL_SHRINK, as libvaccel's are) is mapped: it cannot be truncated
// under the copy, so reading or writing the mapping cannot fault. Any other
// file goes the pread/pwrite way. The client can still write the file: a
// mapping is only ever read once (read_once), never verified and then used.
// Ownership: unmaps on destruction.
class MappedPayload {
public:
    // nullopt: not sealed (or not mappable): use pread/pwrite. The file
    // must already hold `bytes` (the caller checked its size).
    static std::optional<MappedPayload> map(int fd, std::uint64_t bytes, bool writable)
    {
        const int seals = fcntl(fd, F_GET_SEALS);
        if (seals < 0 || (seals & F_SEAL_SHRINK) == 0 || bytes == 0)
            return std::nullopt;
        if (writable && (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) != 0)
            return std::nullopt;
        void* address = mmap(nullptr, bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ,
                             MAP_SHARED | MAP_POPULATE, fd, 0);
        if (address == MAP_FAILED)
            return std::nullopt;
        return MappedPayload(static_cast<std::byte*>(address), bytes);
    }
    MappedPayload(MappedPayload&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), bytes_(other.bytes_)
    {
    }
    MappedPayload& operator=(MappedPayload&&) = delete;
    ~MappedPayload()
    {
        if (data_ != nullptr)
            munmap(data_, bytes_);
    }
    std::span<std::byte> bytes() const { return {data_, bytes_}; }

private:
    MappedPayload(std::byte* data, std::uint64_t bytes) : data_(data), bytes_(bytes) {}
    std::byte* data_;
    std::uint64_t bytes_;
};

void set_status(std::span<std::byte> args, const Error& error)
{
    const vaccel_status status = error.to_status();
    std::memcpy(args.data(), &status, sizeof status);
}

Error slot_failure(const char* what, int error, std::uint64_t done, std::uint64_t bytes)
{
    return Error::of(Errc::external, VACCEL_D_NONE, done, static_cast<std::uint64_t>(error))
        .with_note(fmt::format("{} the client's payload through the vaccel module failed after "
                               "{} of {} bytes: {}",
                               what, done, bytes, std::system_category().message(error)));
}

// Reads `bytes` payload bytes of the request on `where` (pread, in pieces
// the kernel chooses). The module announced exactly that many: fewer is
// InvalidArgument / VACCEL_D_BAD_SIZE (arg0 = bytes there, arg1 = needed).
Result<std::vector<std::byte>> read_slot(const ServerSlot& where, std::uint64_t bytes)
{
    auto staged = payload_buffer(bytes);
    if (!staged)
        return fail(std::move(staged.error()));
    std::vector<std::byte>& data = *staged;
    std::uint64_t done = 0;
    while (done < bytes) {
        const ssize_t n = pread(where.fd, data.data() + done, bytes - done,
                                static_cast<off_t>(VACCEL_SRV_PAYLOAD_POS(where.slot, where.seq, done)));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail(slot_failure("reading", errno, done, bytes));
        if (n == 0)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_SIZE, done, bytes)
                            .with_note("the request carried fewer payload bytes than it announced"));
        done += static_cast<std::uint64_t>(n);
    }
    return staged;
}

// Writes a BUFFER_READ's answer straight into the client's destination.
Status write_slot(const ServerSlot& where, std::span<const std::byte> data)
{
    std::uint64_t done = 0;
    while (done < data.size()) {
        const ssize_t n = pwrite(where.fd, data.data() + done, data.size() - done,
                                 static_cast<off_t>(VACCEL_SRV_PAYLOAD_POS(where.slot, where.seq, done)));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail(slot_failure("writing", n < 0 ? errno : ENOSPC, done, data.size()));
        done += static_cast<std::uint64_t>(n);
    }
    return {};
}

}  // namespace

Status take_request(std::span<const std::byte> datagram, std::vector<UniqueFd> fds, Request& into)
{
    auto view = decode_request(datagram);
    if (!view) {
        release_descriptors(fds);
        return fail(std::move(view.error()));
    }
    const bool in_fd = (view->header.flags & VACCEL_MSG_PAYLOAD_FD) != 0;
    if (fds.size() != (in_fd ? 1u : 0u)) {
        const std::size_t passed = fds.size();
        release_descriptors(fds);
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                              offsetof(vaccel_msg_header, flags), passed)
                        .with_note(in_fd ? "VACCEL_MSG_PAYLOAD_FD needs exactly one descriptor"
                                         : "descriptors came without VACCEL_MSG_PAYLOAD_FD"));
    }
    Request& request = into;
    request.header = view->header;
    request.args.assign(view->args.begin(), view->args.end());
    request.payload.assign(view->payload.begin(), view->payload.end());
    request.payload_fd = UniqueFd();
    request.payload_fd_refused.reset();
    if (in_fd) {
        // Invariant: only a memfd goes further; anything else is let go of
        // off this thread and its request refused when it is executed.
        if (Status memfd = check_payload_file(fds.front().get()); !memfd) {
            request.payload_fd_refused = std::move(memfd.error());
            release_descriptor(std::move(fds.front()));
        } else {
            request.payload_fd = std::move(fds.front());
        }
    }
    request.server_slot.reset();
    return {};
}


Reply reply_with(const Request& request, std::span<const std::byte> args,
                 std::span<const std::byte> payload)
{
    Reply reply;
    if (request.server_slot)
        reply.slot = request.server_slot->slot;
    if (payload.size() > VACCEL_MSG_INLINE_MAX) {
        auto file = memfd_with(payload, "vaccel-reply");
        if (!file) {
            std::vector<std::byte> refused(args.begin(), args.end());
            set_status(refused, file.error());
            append_response(reply.bytes, request.opcode(), request.header.seq,
                            request.header.session, refused, {});
            return reply;
        }
        reply.fd = std::move(*file);
        append_response_fd(reply.bytes, request.opcode(), request.header.seq,
                           request.header.session, args,
                           static_cast<std::uint32_t>(payload.size()));
        return reply;
    }
    reply.bytes.reserve(sizeof(vaccel_msg_header) + args.size() + payload.size());
    append_response(reply.bytes, request.opcode(), request.header.seq, request.header.session,
                    args, payload);
    return reply;
}

Reply refusal(const Request& request, const Error& error)
{
    std::vector<std::byte> args = request.args;
    set_status(args, error);
    return reply_with(request, args, {});
}

Result<std::vector<std::byte>> payload_of(Request& request, std::uint64_t bytes)
{
    if (request.payload_on_slot())
        return bytes == 0 ? std::vector<std::byte>{} : read_slot(*request.server_slot, bytes);
    if (!request.has_fd_payload())
        return std::move(request.payload);
    if (request.payload_fd_refused)
        return fail(*request.payload_fd_refused);
    const int fd = request.payload_fd.get();
    auto size = file_size(fd);
    if (!size)
        return fail(std::move(size.error()));
    if (*size < bytes)
        return fail(short_file(*size, bytes));
    auto staged = payload_buffer(bytes);
    if (!staged)
        return fail(std::move(staged.error()));
    std::vector<std::byte>& data = *staged;
    std::uint64_t done = 0;
    while (done < bytes) {
        // Invariant: pread copies; a file truncated meanwhile ends the loop
        // with a short read, never a fault.
        const ssize_t n = pread(fd, data.data() + done, bytes - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail(short_file(done, bytes));
        done += static_cast<std::uint64_t>(n);
    }
    return staged;
}

Status write_into_fd(int fd, std::span<const std::byte> data)
{
    auto size = file_size(fd);
    if (!size)
        return fail(std::move(size.error()));
    if (*size < data.size())
        return fail(short_file(*size, data.size()));
    std::uint64_t done = 0;
    while (done < data.size()) {
        const ssize_t n = pwrite(fd, data.data() + done, data.size() - done,
                                 static_cast<off_t>(done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail(short_file(done, data.size()));
        done += static_cast<std::uint64_t>(n);
    }
    return {};
}

Result<UniqueFd> memfd_with(std::span<const std::byte> data, std::string_view name)
{
    UniqueFd fd(memfd_create(std::string(name).c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd)
        return fail(Errc::out_of_memory, VACCEL_D_NONE, data.size());
    if (ftruncate(fd.get(), static_cast<off_t>(data.size())) != 0)
        return fail(Errc::out_of_memory, VACCEL_D_NONE, data.size());
    if (auto written = write_into_fd(fd.get(), data); !written)
        return fail(std::move(written.error()));
    // The reader may trust the size it is told: the file can no longer shrink.
    (void)fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
    return fd;
}

Reply wait_reply(const Request& request, const engine::WaitProgress& progress,
                 const Error* refused)
{
    auto args = struct_of<vaccel_event_wait>(request.args);
    args.done_count = progress.done_count;
    args.first_done = progress.first_done;
    if (refused != nullptr)
        args.status = refused->to_status();
    return reply_with(request, std::as_bytes(std::span(&args, 1)), {});
}

namespace {

// BUFFER_MAP: the answer passes a duplicate of the buffer's memfd
// (socket: VACCEL_MSG_PASSES_FD; kernel: the commit hands it to the module).
Reply map_reply(engine::Session& session, const Request& request)
{
    auto args = struct_of<vaccel_buffer_map>(request.args);
    auto mapping = session.buffer_mapping(args.buffer);
    if (!mapping)
        return refusal(request, mapping.error());
    UniqueFd fd(mapping->fd);
    if (!fd)
        return refusal(request, Error::of(Errc::unsupported)
                                    .with_note("the buffer's memory has no file to share"));
    args.map_offset = mapping->offset;
    args.map_bytes = mapping->bytes;
    const auto bytes = std::as_bytes(std::span(&args, 1));
    Reply reply;
    if (request.server_slot)
        reply.slot = request.server_slot->slot;
    append_response_passing_fd(reply.bytes, request.opcode(), request.header.seq,
                               request.header.session, bytes);
    reply.fd = std::move(fd);
    return reply;
}

}  // namespace

void execute(engine::Session& session, Request& request, Reply& into)
{
    const std::uint32_t opcode = request.opcode();
    if (opcode == VACCEL_OP_BUFFER_READ || opcode == VACCEL_OP_BUFFER_MAP || request.has_fd_payload() ||
        request.server_slot) {
        into = execute(session, request);
        return;
    }
    // The codec bounded an inline payload by VACCEL_MSG_INLINE_MAX; the
    // reply carries the struct only.
    Status status = session.call(opcode, request.args, request.payload, {});
    if (!status)
        set_status(request.args, status.error());
    into.fd.reset();
    into.slot.reset();
    into.bytes.clear();
    append_response(into.bytes, opcode, request.header.seq, request.header.session, request.args, {});
}

Reply execute(engine::Session& session, Request& request)
{
    const std::uint32_t opcode = request.opcode();
    std::vector<std::byte> args = request.args;
    if (request.payload_fd_refused)
        return refusal(request, *request.payload_fd_refused);

    // Check first, then copy: a payload that is not in memory yet (on the
    // module's slot, in a memfd) is neither allocated nor read for a
    // request its handle, range or size limit already refuses - a 1 GiB
    // BUFFER_WRITE to a bad handle costs the daemon nothing.
    if (request.payload_on_slot() || request.has_fd_payload())
        if (Status admitted = session.admit_payload(opcode, args); !admitted)
            return refusal(request, admitted.error());

    // The bytes the call takes in (write data, artifact, bindings, handles).
    std::uint64_t in_bytes = request.header.payload_bytes;
    if (opcode == VACCEL_OP_BUFFER_READ)
        in_bytes = 0;
    if (read_once(opcode) && request.has_fd_payload()) {
        // One copy: from the client's sealed file straight into the buffer.
        auto size = file_size(request.payload_fd.get());
        if (!size)
            return refusal(request, size.error());
        if (*size < in_bytes)
            return refusal(request, short_file(*size, in_bytes));
        if (auto mapped = MappedPayload::map(request.payload_fd.get(), in_bytes, false)) {
            Status status = session.call(opcode, args, mapped->bytes(), {});
            if (!status)
                set_status(args, status.error());
            return reply_with(request, args, {});
        }
    }
    // Invariant: any other payload from a file is now a private copy.
    auto in = payload_of(request, in_bytes);
    if (!in)
        return refusal(request, in.error());

    if (opcode == VACCEL_OP_BUFFER_MAP)
        return map_reply(session, request);
    if (opcode != VACCEL_OP_BUFFER_READ) {
        Status status = session.call(opcode, args, *in, {});
        if (!status)
            set_status(args, status.error());
        return reply_with(request, args, {});
    }

    // BUFFER_READ: into the reply inline, through the requester's file, or
    // (kernel) into the client's own pages before the commit.
    const auto transfer = struct_of<vaccel_buffer_transfer>(request.args);
    if (request.server_slot) {
        auto staged = payload_buffer(transfer.length);
        if (!staged)
            return refusal(request, staged.error());
        Status status = session.call(opcode, args, {}, *staged);
        if (status)
            status = write_slot(*request.server_slot, *staged);
        if (!status) {
            set_status(args, status.error());
            return reply_with(request, args, {});
        }
        Reply reply = reply_with(request, args, {});
        // The data is already in place: the header only says how much.
        const auto length = static_cast<std::uint32_t>(transfer.length);
        std::memcpy(reply.bytes.data() + offsetof(vaccel_msg_header, payload_bytes), &length,
                    sizeof length);
        return reply;
    }
    if (!request.has_fd_payload()) {
        // The codec bounded length by VACCEL_MSG_INLINE_MAX.
        std::vector<std::byte> data(transfer.length);
        Status status = session.call(opcode, args, {}, data);
        if (!status) {
            set_status(args, status.error());
            return reply_with(request, args, {});
        }
        return reply_with(request, args, data);
    }
    // The file must hold the answer before any work is done for it.
    auto room = file_size(request.payload_fd.get());
    if (!room)
        return refusal(request, room.error());
    if (*room < transfer.length)
        return refusal(request, short_file(*room, transfer.length));
    Status status;
    if (auto mapped = MappedPayload::map(request.payload_fd.get(), transfer.length, true)) {
        // One copy: from the buffer straight into the client's sealed file.
        status = session.call(opcode, args, {}, mapped->bytes());
    } else {
        auto staged = payload_buffer(transfer.length);
        if (!staged)
            return refusal(request, staged.error());
        status = session.call(opcode, args, {}, *staged);
        if (status)
            status = write_into_fd(request.payload_fd.get(), *staged);
    }
    if (!status) {
        set_status(args, status.error());
        return reply_with(request, args, {});
    }
    Reply reply;
    append_response_fd(reply.bytes, opcode, request.header.seq, request.header.session, args,
                       static_cast<std::uint32_t>(transfer.length));
    return reply;
}

}  // namespace vaccel::daemon
