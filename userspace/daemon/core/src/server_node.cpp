// server_node.cpp - the kernel transport: vacceld on /dev/vaccel-server
// (uapi/vaccel_server.h), through the reactor's uring_cmd.
//
// Owns the attachment: the node's descriptor, one parked command per slot
// and each slot's buffer. Decides:
//  - attach: open the node O_RDWR at start when it exists (ServerOptions::
//    kernel). -EBUSY means another daemon serves it: this one logs that
//    and serves its socket only, unless the kernel transport was required.
//  - threads: every FETCH and COMMIT_AND_FETCH is issued on the reactor
//    thread (the module's serving thread); payload pread/pwrite happen on
//    the device workers (exchange.cpp), never here, except an EVENT_WAIT's
//    handles and a SUBMIT's bindings (at most 2 KiB) at intake.
//  - a delivery is a session message or a request. SESSION_OPEN makes a
//    peer (identity = the module's pid, uid, gid and cgroup path) and is
//    answered OK; SESSION_CLOSE is answered OK at once, known session or
//    not, and the peer then ends as a closed connection does (its work in
//    flight is still answered; its Session is reaped on its device's
//    reaper). A request is taken as strictly as a socket's and goes down
//    the one request path (dispatcher.hpp); one that fails a check, names
//    no live session, or arrives while the daemon stops is refused at once.
//  - a BUFFER_MAP that succeeded (its Reply carries the buffer's memfd)
//    commits with VACCEL_MSG_PASSES_FD and a struct vaccel_srv_map naming
//    that descriptor and the buffer's offset in the file (the answer's
//    map_offset); the module takes the file and gives its client a token
//    to mmap(). The descriptor stays open until the command completes. A
//    successful BUFFER_MAP without a file is answered Unsupported: the
//    module cannot map it.
//  - a command the module completes with an error: -ENODEV means it let go
//    of this daemon (every kernel session ends, nothing more is
//    committed); after a refused commit the slot fetches again; a refused
//    FETCH retires the slot (logged).
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <system_error>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "server_node.hpp"
#include "vaccel/common/requests.hpp"
#include "vaccel/daemon/policy_limits.hpp"

namespace vaccel::daemon {

namespace {

std::string errno_text(int error) { return std::system_category().message(error); }

template <class S>
S struct_at(std::span<const std::byte> message)
{
    S value{};
    std::memcpy(&value, message.data() + sizeof(vaccel_msg_header), sizeof value);
    return value;
}

// A session message exactly as the module sends it: magic, flags 0,
// args_bytes = sizeof(S), nothing else.
bool session_message_is_whole(std::span<const std::byte> message, std::size_t args_bytes)
{
    if (message.size() != sizeof(vaccel_msg_header) + args_bytes)
        return false;
    vaccel_msg_header header{};
    std::memcpy(&header, message.data(), sizeof header);
    return header.magic == VACCEL_MSG_MAGIC && header.flags == 0 &&
           header.args_bytes == args_bytes && header.payload_bytes == 0;
}

// A BUFFER_MAP that succeeded, as the module takes it (uapi/vaccel_server.h,
// step 6): `buffer` holds the answer's `bytes`; the buffer's `file` is named
// after the struct. Returns the descriptor to keep open until the commit
// completes (none for every other answer).
UniqueFd pass_map_file(std::span<std::byte> buffer, std::size_t bytes, UniqueFd file)
{
    constexpr std::size_t header_bytes = sizeof(vaccel_msg_header);
    constexpr std::size_t answer_bytes = sizeof(vaccel_buffer_map);
    static_assert(header_bytes + answer_bytes + sizeof(vaccel_srv_map) <= VACCEL_SRV_BUFFER_BYTES);
    if (bytes != header_bytes + answer_bytes || buffer.size() < VACCEL_SRV_BUFFER_BYTES)
        return {};
    vaccel_msg_header header{};
    std::memcpy(&header, buffer.data(), header_bytes);
    vaccel_buffer_map answer{};
    std::memcpy(&answer, buffer.data() + header_bytes, answer_bytes);
    if (header.opcode != VACCEL_OP_BUFFER_MAP || answer.status.error != VACCEL_OK)
        return {};
    header.flags = VACCEL_MSG_RESPONSE;
    header.payload_bytes = 0;
    if (!file) {
        spdlog::warn("vacceld: a BUFFER_MAP of kernel session {} succeeded without the buffer's "
                     "file; answered Unsupported",
                     header.session);
        answer.status = Error::of(Errc::unsupported, VACCEL_D_NONE).to_status();
        answer.map_offset = 0;
        answer.map_bytes = 0;
        std::memcpy(buffer.data(), &header, header_bytes);
        std::memcpy(buffer.data() + header_bytes, &answer, answer_bytes);
        return {};
    }
    header.flags |= VACCEL_MSG_PASSES_FD;
    header.payload_bytes = sizeof(vaccel_srv_map);
    const vaccel_srv_map where{.fd = file.get(), .pad = 0, .offset = answer.map_offset};
    std::memcpy(buffer.data(), &header, header_bytes);
    std::memcpy(buffer.data() + header_bytes + answer_bytes, &where, sizeof where);
    return file;
}

}  // namespace

std::expected<std::unique_ptr<ServerNode>, std::string> ServerNode::attach(const ServerOptions& options,
                                                                     Reactor& reactor)
{
    const KernelTransport mode = options.kernel;
    if (mode == KernelTransport::off)
        return {};
    const bool required = mode != KernelTransport::automatic;
    const std::string& path = options.server_node;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        if (required)
            return std::unexpected(fmt::format(
                "{} does not exist: load the vaccel module (insmod vaccel.ko) or start without "
                "--kernel/--kernel-only",
                path));
        spdlog::debug("vacceld: {} does not exist: serving the socket only", path);
        return {};
    }
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd) {
        const int error = errno;
        const std::string why =
            error == EBUSY ? fmt::format("another vacceld is attached to {}", path)
                           : fmt::format("cannot open {}: {}", path, errno_text(error));
        if (required)
            return std::unexpected(why + (error == EBUSY ? "; stop it first" : ""));
        spdlog::warn("vacceld: {}: serving the socket only", why);
        return {};
    }
    // The version handshake: the module serves a daemon of its ABI major
    // whose minor is at least its own (uapi/vaccel_server.h).
    vaccel_srv_hello hello{};
    hello.major = VACCEL_ABI_MAJOR;
    hello.minor = VACCEL_ABI_MINOR;
    if (::ioctl(fd.get(), VACCEL_SRV_IOCTL_HELLO, &hello) != 0) {
        const int error = errno;
        const std::string why =
            error == EPROTONOSUPPORT
                ? fmt::format("{} serves contract ABI {}.{}, this vacceld {}.{}: install a "
                              "matching module",
                              path, hello.major, hello.minor, VACCEL_ABI_MAJOR, VACCEL_ABI_MINOR)
                : fmt::format("{}: the version handshake failed: {}", path, errno_text(error));
        if (required)
            return std::unexpected(why);
        spdlog::warn("vacceld: {}: serving the socket only", why);
        return {};
    }
    std::unique_ptr<ServerNode> node(new ServerNode(reactor));
    node->path = path;
    node->fd = std::move(fd);
    // Ownership: leaked on purpose (peers.hpp, ServerNode::buffers).
    node->buffers = new (std::nothrow) SlotBuffer[VACCEL_SRV_MAX_SLOTS];
    if (node->buffers == nullptr)
        return std::unexpected("no memory for the server node's slot buffers");
    spdlog::info("vacceld: attached to {} ({} slots)", path, VACCEL_SRV_MAX_SLOTS);
    return node;
}

void ServerNode::arm_fetches()
{
    for (std::uint32_t slot = 0; slot < VACCEL_SRV_MAX_SLOTS; ++slot)
        slot_command(slot, VACCEL_SRV_FETCH);
}

void ServerNode::slot_command(std::uint32_t slot, std::uint32_t op)
{
    ServerNode::Slot& s = slots[slot];
    const vaccel_srv_cmd command{
        .slot = slot,
        .flags = 0,
        .buffer = reinterpret_cast<std::uintptr_t>(buffers[slot].bytes.data()),
    };
    // Hand-off reactor -> module: from the issue on, the buffer is the
    // module's (it reads the answer now and writes the next request later).
    auto issued = reactor_.uring_cmd(fd.get(), op, std::as_bytes(std::span(&command, 1)),
                                      [this, slot](int res) { on_slot_done(slot, res); });
    if (!issued) {
        // Only a stopped reactor refuses (nothing more is served), or a ring
        // without room, which next_sqe() rules out by submitting first.
        spdlog::warn("vacceld: slot {} of {} left unarmed: {}", slot, path,
                     errno_text(-issued.error()));
        s.state = ServerNode::SlotState::retired;
        return;
    }
    s.state = ServerNode::SlotState::parked;
    s.committing = op == VACCEL_SRV_COMMIT_AND_FETCH;
}

void ServerNode::on_slot_done(std::uint32_t slot, int res)
{
    ServerNode::Slot& s = slots[slot];
    s.passing.reset();  // the commit that named it has been taken or refused
    if (res == -ENODEV) {
        s.state = ServerNode::SlotState::retired;
        if (!detached) {
            detached = true;
            spdlog::warn("vacceld: the vaccel module detached this daemon from {}; its kernel "
                         "sessions are over (the socket still serves)",
                         path);
            std::vector<std::uint64_t> ids;
            for (const auto& [module_session, id] : sessions)
                ids.push_back(id);
            for (std::uint64_t id : ids)
                if (Peer* c = dispatcher_->find(id))
                    dispatcher_->close_peer(*c, "the vaccel module detached the daemon", false);
        }
        return;
    }
    if (res < 0) {
        if (s.committing && !dispatcher_->stopping()) {
            spdlog::warn("vacceld: the vaccel module refused an answer on slot {} ({}); its client "
                         "got an I/O error; fetching again",
                         slot, errno_text(-res));
            slot_command(slot, VACCEL_SRV_FETCH);
        } else {
            s.state = ServerNode::SlotState::retired;
            // Said once: a node that refuses one FETCH usually refuses all.
            if (retired++ == 0)
                spdlog::error("vacceld: {} refused to park a command on slot {} ({}); such "
                              "slots are retired (is this the vaccel module's node?)",
                              path, slot, errno_text(-res));
        }
        return;
    }
    // Hand-off module -> reactor: the buffer holds a request and is ours
    // until the commit of its one answer.
    s.state = ServerNode::SlotState::serving;
    const auto bytes = std::min<std::size_t>(static_cast<std::size_t>(res), VACCEL_SRV_BUFFER_BYTES);
    on_delivered(slot, std::span<const std::byte>(buffers[slot].bytes).first(bytes));
}

void ServerNode::on_delivered(std::uint32_t slot, std::span<const std::byte> message)
{
    const ServerSlot where{fd.get(), slot};
    vaccel_msg_header header{};
    std::memcpy(&header, message.data(), std::min(message.size(), sizeof header));
    if (message.size() >= sizeof header && header.opcode == VACCEL_OP_SESSION_OPEN) {
        on_session_open(slot, message);
        return;
    }
    if (message.size() >= sizeof header && header.opcode == VACCEL_OP_SESSION_CLOSE) {
        on_session_close(slot, message);
        return;
    }
    auto request = take_kernel_request(message, where);
    if (!request) {
        spdlog::warn("vacceld: the vaccel module delivered a request that fails the contract's "
                     "checks (opcode {}, session {}): {}; refused",
                     header.opcode, header.session, describe(request.error()));
        commit(refusal(kernel_echo(message, where), request.error()));
        return;
    }
    auto found = sessions.find(header.session);
    Peer* c = found == sessions.end() ? nullptr : dispatcher_->find(found->second);
    if (c == nullptr || c->closing || dispatcher_->stopping()) {
        commit(refusal(*request, Error::of(Errc::device_lost, VACCEL_D_PEER_GONE)
                                     .with_note(dispatcher_->stopping() ? "the daemon is stopping"
                                                          : "the session is closed")));
        return;
    }
    dispatcher_->dispatch(*c, *request);
}

void ServerNode::on_session_open(std::uint32_t slot, std::span<const std::byte> message)
{
    const ServerSlot where{fd.get(), slot};
    Request request = kernel_echo(message, where);
    if (!session_message_is_whole(message, sizeof(vaccel_srv_session_open))) {
        spdlog::warn("vacceld: the vaccel module delivered a malformed SESSION_OPEN ({} bytes); "
                     "refused",
                     message.size());
        commit(refusal(request, Error::of(Errc::invalid_argument, VACCEL_D_BAD_SIZE,
                                          message.size(),
                                          sizeof(vaccel_msg_header) + sizeof(vaccel_srv_session_open))));
        return;
    }
    const auto open = struct_at<vaccel_srv_session_open>(message);
    if (dispatcher_->stopping()) {
        commit(refusal(request, Error::of(Errc::device_lost, VACCEL_D_PEER_GONE)));
        return;
    }
    if (sessions.contains(open.session) || open.session != request.header.session) {
        spdlog::warn("vacceld: the vaccel module opened session {} twice (or under another id); "
                     "refused",
                     open.session);
        commit(refusal(request, Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                                          offsetof(vaccel_srv_session_open, session), open.session)));
        return;
    }
    engine::SessionIdentity who;
    who.pid = static_cast<pid_t>(open.pid);
    who.uid = open.uid;
    who.gid = open.gid;
    who.cgroup.assign(open.cgroup, strnlen(open.cgroup, sizeof open.cgroup));

    Peer& c = dispatcher_->add_peer(*this, who);
    c.module_session = open.session;
    // The session's notify file; the module resolves its number in this
    // (the serving) thread's table at the commit and holds the file for
    // the session's life, so poll() on /dev/vaccel reports it.
    auto answer = open;
    answer.notify_fd = -1;
    if (auto notify = std::make_shared<engine::NotifyFd>(); notify->fd() >= 0) {
        c.notify = std::move(notify);
        c.session->set_completion_listener(c.notify);
        answer.notify_fd = c.notify->fd();
    }
    spdlog::debug("vacceld: session {} opened (kernel session {}): pid {} uid {} gid {} cgroup '{}'",
                  c.id, open.session, who.pid, who.uid, who.gid, who.cgroup);
    sessions.emplace(open.session, c.id);
    commit(reply_with(request, std::as_bytes(std::span(&answer, 1)), {}));
}

void ServerNode::on_session_close(std::uint32_t slot, std::span<const std::byte> message)
{
    const ServerSlot where{fd.get(), slot};
    Request request = kernel_echo(message, where);
    if (!session_message_is_whole(message, sizeof(vaccel_srv_session_close))) {
        spdlog::warn("vacceld: the vaccel module delivered a malformed SESSION_CLOSE ({} bytes)",
                     message.size());
        commit(refusal(request, Error::of(Errc::invalid_argument, VACCEL_D_BAD_SIZE,
                                          message.size(),
                                          sizeof(vaccel_msg_header) + sizeof(vaccel_srv_session_close))));
        return;
    }
    // Answered first: nobody waits for it, and a session never opened here
    // (its opener died before the OPEN was delivered) closes all the same.
    commit(reply_with(request, request.args, {}));
    auto found = sessions.find(request.header.session);
    if (found == sessions.end())
        return;
    if (Peer* c = dispatcher_->find(found->second))
        dispatcher_->close_peer(*c, "the client closed /dev/vaccel", true);
}

void ServerNode::commit(Reply reply)
{
    if (!reply.slot || *reply.slot >= VACCEL_SRV_MAX_SLOTS)
        return;
    const std::uint32_t slot = *reply.slot;
    ServerNode::Slot& s = slots[slot];
    if (detached || s.state != ServerNode::SlotState::serving)
        return;  // the module failed the request already
    auto& buffer = buffers[slot].bytes;
    // Invariant: a reply is the header and the struct of a request that
    // arrived in this very buffer, so it fits; only a BUFFER_READ's header
    // announces a payload, and that is already in the client's pages.
    const std::size_t n = std::min(reply.bytes.size(), buffer.size());
    std::memcpy(buffer.data(), reply.bytes.data(), n);
    s.passing = pass_map_file(buffer, n, std::move(reply.fd));
    slot_command(slot, VACCEL_SRV_COMMIT_AND_FETCH);
}

void ServerNode::deliver(Peer&, Reply& reply) { commit(std::move(reply)); }

void ServerNode::detach()
{
    if (!fd)
        return;
    // Parked commands keep the file itself open until this thread exits
    // (6.1 cannot cancel them); closing our descriptor is all a daemon can
    // do before it exits.
    fd.reset();
    spdlog::info("vacceld: detached from {}", path);
}

}  // namespace vaccel::daemon
