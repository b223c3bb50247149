// server_node.cpp - the kernel transport: vacceld on /dev/vaccel-server
// (uapi/vaccel_server.h, server protocol 2), through the reactor's uring_cmd.
//
// Owns the attachment: the node's descriptor, one parked command per slot,
// each slot's buffer, and the buffers of ANSWER commands in flight. Decides:
//  - attach: open the node O_RDWR at start when it exists (ServerOptions::
//    kernel) and say ABI and protocol with HELLO. -EBUSY means another
//    daemon serves it: this one logs that and serves its socket only,
//    unless the kernel transport was required.
//  - threads: every command (FETCH, COMMIT_AND_FETCH, ANSWER) is issued on
//    the reactor thread (the module's serving thread); payload pread/pwrite
//    happen on the device workers (exchange.cpp), never here, except an
//    EVENT_WAIT's handles and the bindings of a SUBMIT or RUN (at most
//    2 KiB) at intake.
//  - a delivery is a session message or a request. SESSION_OPEN makes a
//    peer (identity = the module's pid, uid, gid and cgroup path) and is
//    answered OK; SESSION_CLOSE is answered OK at once, known session or
//    not, and the peer then ends as a closed connection does (its work in
//    flight is still answered; its Session is reaped on its device's
//    reaper). WITHDRAW is answered OK at once, and the withdrawn EVENT_WAIT
//    ends without an answer. A request is taken as strictly as a socket's
//    and goes down the one request path (dispatcher.hpp); one that fails a
//    check, names no live session, or arrives while the daemon stops is
//    refused at once.
//  - no slot is held across a long wait: an EVENT_WAIT or RUN not answered
//    at its dispatch is deferred at once (COMMIT_AND_FETCH with
//    VACCEL_SRV_CMD_DEFER: the slot fetches again) and its reply goes out
//    later with ANSWER. A reply names its request by seq: it commits on its
//    slot while that slot still holds that seq, else it is answered when
//    deferred, else (withdrawn, or its deferral refused) dropped.
//  - a BUFFER_MAP that succeeded (its Reply carries the buffer's memfd)
//    commits with VACCEL_MSG_PASSES_FD and a struct vaccel_srv_map naming
//    that descriptor and the buffer's offset in the file (the answer's
//    map_offset); the module takes the file and gives its client a token
//    to mmap(). The descriptor stays open until the command completes. A
//    successful BUFFER_MAP without a file is answered Unsupported: the
//    module cannot map it.
//  - results (on_slot_done, on_answered): -ENODEV means the module let go of
//    this daemon (every kernel session ends, nothing more is committed); a
//    refused answer (-EBADMSG, -EFAULT) leaves the slot idle: it fetches
//    again; anything else is a disagreement between this daemon and the
//    module (or a daemon bug): the slot is retired, with an error log.
//  - detach: VACCEL_SRV_IOCTL_DETACH at stop, while the ring still exists,
//    so that a replacement daemon can attach at once.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <algorithm>
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
    // whose minor is at least its own and that speaks its server protocol
    // (uapi/vaccel_server.h, step 0); it writes its own back either way.
    vaccel_srv_hello hello{};
    hello.major = VACCEL_ABI_MAJOR;
    hello.minor = VACCEL_ABI_MINOR;
    hello.protocol = VACCEL_SRV_PROTOCOL;
    if (::ioctl(fd.get(), VACCEL_SRV_IOCTL_HELLO, &hello) != 0) {
        const int error = errno;
        std::string why;
        if (error == EPROTONOSUPPORT)
            why = fmt::format(
                "{} refused this vacceld: the vaccel module speaks ABI {}.{} and server protocol "
                "{}, this vacceld ABI {}.{} and protocol {}; load the vaccel module built with this "
                "vacceld (same release), or run the vacceld that matches the loaded module",
                path, hello.major, hello.minor, hello.protocol, VACCEL_ABI_MAJOR,
                VACCEL_ABI_MINOR, VACCEL_SRV_PROTOCOL);
        else
            why = fmt::format("{}: the version handshake failed: {}", path, errno_text(error));
        if (required)
            return std::unexpected(why);
        spdlog::warn("vacceld: {}: serving the socket only", why);
        return {};
    }
    std::unique_ptr<ServerNode> node(new ServerNode(reactor));
    node->path = path;
    node->fd = std::move(fd);
    // Ownership: see ServerNode::buffers.
    node->buffers.reset(new (std::nothrow) SlotBuffer[VACCEL_SRV_MAX_SLOTS]);
    if (!node->buffers)
        return std::unexpected("no memory for the server node's slot buffers");
    spdlog::info("vacceld: attached to {} ({} slots, server protocol {}{})", path,
                 VACCEL_SRV_MAX_SLOTS, VACCEL_SRV_PROTOCOL,
                 (hello.flags & VACCEL_SRV_HELLO_CANCELABLE) != 0 ? ", cancelable commands" : "");
    return node;
}

ServerNode::~ServerNode()
{
    detach();
    // Kept allocated unless the module confirmed it let go (ServerNode::buffers).
    if (!detach_confirmed)
        (void)buffers.release();
    if (!detach_confirmed && answers.in_flight() != 0)
        answers.abandon();
}

ServerNode::SlotBuffer* ServerNode::AnswerBuffers::take()
{
    if (free_.empty()) {
        std::unique_ptr<SlotBuffer> fresh(new (std::nothrow) SlotBuffer);
        if (!fresh)
            return nullptr;
        free_.push_back(fresh.get());
        all_.push_back(std::move(fresh));
    }
    SlotBuffer* buffer = free_.back();
    free_.pop_back();
    return buffer;
}

void ServerNode::AnswerBuffers::abandon()
{
    for (auto& buffer : all_)
        (void)buffer.release();
    all_.clear();
    free_.clear();
}

void ServerNode::arm_fetches()
{
    for (std::uint32_t slot = 0; slot < VACCEL_SRV_MAX_SLOTS; ++slot)
        slot_command(slot, VACCEL_SRV_FETCH);
}

void ServerNode::slot_command(std::uint32_t slot, std::uint32_t op, std::uint32_t flags)
{
    ServerNode::Slot& s = slots[slot];
    const vaccel_srv_cmd command{
        .slot = slot,
        .flags = flags,
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
    s.op = op;
    s.flags = flags;
}

void ServerNode::on_detached()
{
    if (detached)
        return;
    detached = true;
    deferred.clear();  // the module failed them all
    spdlog::warn("vacceld: the vaccel module detached this daemon from {}; its kernel sessions "
                 "are over (the socket still serves)",
                 path);
    std::vector<std::uint64_t> ids;
    for (const auto& [module_session, id] : sessions)
        ids.push_back(id);
    for (std::uint64_t id : ids)
        if (Peer* c = dispatcher_->find(id))
            dispatcher_->close_peer(*c, "the vaccel module detached the daemon", false);
}

// Results of a slot's command (uapi/vaccel_server.h, steps 1, 5 and 6).
void ServerNode::on_slot_done(std::uint32_t slot, int res)
{
    ServerNode::Slot& s = slots[slot];
    s.passing.reset();  // the commit that named it has been taken or refused
    const bool committed = s.op == VACCEL_SRV_COMMIT_AND_FETCH;
    const bool deferral = committed && (s.flags & VACCEL_SRV_CMD_DEFER) != 0;
    if (res >= 0) {
        // Hand-off module -> reactor: the buffer holds a request and is
        // ours until that request is committed or deferred.
        s.state = ServerNode::SlotState::serving;
        const auto bytes =
            std::min<std::size_t>(static_cast<std::size_t>(res), VACCEL_SRV_BUFFER_BYTES);
        on_delivered(slot, std::span<const std::byte>(buffers[slot].bytes).first(bytes));
        return;
    }
    s.state = ServerNode::SlotState::retired;
    if (res == -ENODEV) {
        on_detached();
        return;
    }
    if (res == -EPERM) {
        spdlog::error("vacceld: the vaccel module refused a command on slot {} of {} as issued by "
                      "another thread than its serving thread; the slot is retired. This is a "
                      "vacceld bug (commands must come from the reactor thread): report it and "
                      "restart vacceld",
                      slot, path);
        return;
    }
    if (committed && (res == -EBADMSG || res == -EFAULT)) {
        // The answer was refused; the client's call failed with EIO and the
        // slot is idle.
        spdlog::warn("vacceld: the vaccel module refused the {} of request {} on slot {} ({}); its "
                     "client got an I/O error",
                     deferral ? "deferral" : "answer", s.seq, slot, errno_text(-res));
        if (deferral)
            end_deferred(s.seq);
        if (!dispatcher_->stopping())
            slot_command(slot, VACCEL_SRV_FETCH);
        return;
    }
    if (committed && res == -EINVAL) {
        // Nothing changed: request s.seq is still delivered on this slot,
        // and a slot whose commit is malformed cannot be trusted again.
        spdlog::error("vacceld: the vaccel module found the {} of request {} on slot {} malformed "
                      "(EINVAL): the request stays unanswered until this daemon detaches and the "
                      "slot is retired. This is a vacceld bug: report it with this log",
                      deferral ? "deferral" : "commit", s.seq, slot);
        if (deferral)
            end_deferred(s.seq);
        return;
    }
    // Said once: a node that refuses one FETCH usually refuses all.
    if (retired++ == 0)
        spdlog::error("vacceld: {} refused {} on slot {} ({}); such slots are retired and no "
                      "longer serve /dev/vaccel. This vacceld and the loaded vaccel module do "
                      "not work together: load the module built with this vacceld, then restart "
                      "vacceld",
                      path, committed ? "to commit and fetch" : "to park a FETCH", slot,
                      errno_text(-res));
}

void ServerNode::on_delivered(std::uint32_t slot, std::span<const std::byte> message)
{
    const ServerSlot where{fd.get(), slot};
    vaccel_msg_header header{};
    std::memcpy(&header, message.data(), std::min(message.size(), sizeof header));
    // The one request the slot now holds (the seq its answer must echo,
    // kernel_echo() reads the same bytes).
    slots[slot].seq = header.seq;
    if (message.size() >= sizeof header && header.opcode == VACCEL_OP_SESSION_OPEN) {
        on_session_open(slot, message);
        return;
    }
    if (message.size() >= sizeof header && header.opcode == VACCEL_OP_SESSION_CLOSE) {
        on_session_close(slot, message);
        return;
    }
    if (message.size() >= sizeof header && header.opcode == VACCEL_OP_WITHDRAW) {
        on_withdraw(slot, message);
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

    auto added = dispatcher_->add_peer(*this, who);
    if (!added) {
        // The module fails the client's open() with the refusal's errno.
        spdlog::info("vacceld: kernel session {} of uid {} (pid {}) refused: {}", open.session,
                     who.uid, who.pid, describe(added.error()));
        commit(refusal(request, added.error()));
        return;
    }
    Peer& c = **added;
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

void ServerNode::on_withdraw(std::uint32_t slot, std::span<const std::byte> message)
{
    const ServerSlot where{fd.get(), slot};
    Request request = kernel_echo(message, where);
    if (!session_message_is_whole(message, sizeof(vaccel_srv_withdraw))) {
        spdlog::warn("vacceld: the vaccel module delivered a malformed WITHDRAW ({} bytes)",
                     message.size());
        commit(refusal(request, Error::of(Errc::invalid_argument, VACCEL_D_BAD_SIZE,
                                          message.size(),
                                          sizeof(vaccel_msg_header) + sizeof(vaccel_srv_withdraw))));
        return;
    }
    const auto withdraw = struct_at<vaccel_srv_withdraw>(message);
    // Answered first (VACCEL_OK, a seq already answered included): nobody
    // waits for it.
    commit(reply_with(request, request.args, {}));
    bool ended = false;
    if (auto found = sessions.find(withdraw.session); found != sessions.end()) {
        if (Peer* c = dispatcher_->find(found->second)) {
            if (auto it = deferred.find(withdraw.seq);
                it != deferred.end() && it->second == withdraw.session) {
                // Ends with no answer: the module holds nobody to give it to.
                deferred.erase(it);
                ended = dispatcher_->end_wait(*c, withdraw.seq, nullptr);
            } else {
                // Still on its slot (its deferral did not go out): it is
                // answered, so that the slot is committed; the module
                // discards the answer.
                const Error withdrawn = Error::of(Errc::device_lost, VACCEL_D_PEER_GONE)
                                            .with_note("the client withdrew the wait");
                ended = dispatcher_->end_wait(*c, withdraw.seq, &withdrawn);
            }
        }
    }
    spdlog::debug("vacceld: kernel session {} withdrew its wait {}{}", withdraw.session,
                  withdraw.seq, ended ? "" : " (already answered)");
}

void ServerNode::end_deferred(std::uint64_t seq)
{
    auto it = deferred.find(seq);
    if (it == deferred.end())
        return;
    const std::uint64_t module_session = it->second;
    deferred.erase(it);
    if (auto found = sessions.find(module_session); found != sessions.end())
        if (Peer* c = dispatcher_->find(found->second))
            dispatcher_->end_wait(*c, seq, nullptr);
}

void ServerNode::waiting(Peer& c, const Request& request)
{
    if (detached || !request.server_slot || request.server_slot->slot >= VACCEL_SRV_MAX_SLOTS)
        return;
    const std::uint32_t slot = request.server_slot->slot;
    ServerNode::Slot& s = slots[slot];
    if (s.state != ServerNode::SlotState::serving || s.seq != request.header.seq)
        return;
    // Its payload (handles, bindings) was read at intake: the module may
    // forget the slot's position of it.
    deferred.emplace(s.seq, c.module_session);
    slot_command(slot, VACCEL_SRV_COMMIT_AND_FETCH, VACCEL_SRV_CMD_DEFER);
}

void ServerNode::commit(Reply reply)
{
    if (detached || reply.bytes.size() < sizeof(vaccel_msg_header))
        return;  // the module failed the request already
    vaccel_msg_header header{};
    std::memcpy(&header, reply.bytes.data(), sizeof header);
    if (reply.slot && *reply.slot < VACCEL_SRV_MAX_SLOTS) {
        const std::uint32_t slot = *reply.slot;
        ServerNode::Slot& s = slots[slot];
        if (s.state == ServerNode::SlotState::serving && s.seq == header.seq) {
            auto& buffer = buffers[slot].bytes;
            // Invariant: a reply is the header and the struct of a request
            // that arrived in this very buffer, so it fits; only a
            // BUFFER_READ's header announces a payload, and that is already
            // in the client's pages.
            const std::size_t n = std::min(reply.bytes.size(), buffer.size());
            std::memcpy(buffer.data(), reply.bytes.data(), n);
            s.passing = pass_map_file(buffer, n, std::move(reply.fd));
            slot_command(slot, VACCEL_SRV_COMMIT_AND_FETCH);
            return;
        }
    }
    if (auto it = deferred.find(header.seq); it != deferred.end()) {
        deferred.erase(it);
        answer(header.seq, reply);
    }
    // Otherwise its client withdrew it, or the module refused its deferral.
}

void ServerNode::answer(std::uint64_t seq, const Reply& reply)
{
    SlotBuffer* buffer = answers.take();
    if (buffer == nullptr) {
        spdlog::error("vacceld: no memory to answer request {} of {}; its client waits until "
                      "this daemon detaches",
                      seq, path);
        return;
    }
    // Invariant: the answer of an EVENT_WAIT or a RUN is a header and its
    // struct, far below the buffer's size.
    const std::size_t n = std::min(reply.bytes.size(), buffer->bytes.size());
    std::memcpy(buffer->bytes.data(), reply.bytes.data(), n);
    const vaccel_srv_cmd command{
        .slot = 0,
        .flags = 0,
        .buffer = reinterpret_cast<std::uintptr_t>(buffer->bytes.data()),
    };
    // Hand-off reactor -> module until the completion: the module reads the
    // buffer when the ring issues the SQE.
    auto issued = reactor_.uring_cmd(fd.get(), VACCEL_SRV_ANSWER,
                                      std::as_bytes(std::span(&command, 1)),
                                      [this, seq, buffer](int res) {
                                          answers.give_back(buffer);
                                          on_answered(seq, res);
                                      });
    if (!issued) {
        answers.give_back(buffer);
        spdlog::warn("vacceld: the answer of request {} could not be issued ({}); the vaccel "
                     "module fails it when this daemon detaches",
                     seq, errno_text(-issued.error()));
    }
}

// Results of an ANSWER (uapi/vaccel_server.h, step 6).
void ServerNode::on_answered(std::uint64_t seq, int res)
{
    switch (res) {
    case 0:
        return;
    case -ENOENT:
        spdlog::debug("vacceld: request {} was withdrawn before its answer", seq);
        return;
    case -ENODEV:
        on_detached();
        return;
    case -EBADMSG:
    case -EFAULT:
        spdlog::warn("vacceld: the vaccel module refused the answer of request {} ({}); its client "
                     "got an I/O error",
                     seq, errno_text(-res));
        return;
    case -EPERM:
    case -EINVAL:
        spdlog::error("vacceld: the vaccel module refused the ANSWER command of request {} ({}); "
                      "its client waits until this daemon detaches. This is a vacceld bug: "
                      "report it with this log",
                      seq, errno_text(-res));
        return;
    default:
        spdlog::warn("vacceld: the answer of request {} failed: {}", seq, errno_text(-res));
        return;
    }
}

void ServerNode::deliver(Peer&, Reply& reply) { commit(std::move(reply)); }

void ServerNode::forget(Peer& c)
{
    sessions.erase(c.module_session);
    // Its deferred requests were answered (close_peer flushes); any left
    // the module failed with the session.
    std::erase_if(deferred, [&](const auto& entry) { return entry.second == c.module_session; });
}

void ServerNode::detach()
{
    if (!fd)
        return;
    // Every parked command completes with -ENODEV and every request not
    // answered fails; the module writes into none of our buffers after
    // this, and another daemon may attach at once.
    if (::ioctl(fd.get(), VACCEL_SRV_IOCTL_DETACH) == 0) {
        detach_confirmed = true;
        spdlog::info("vacceld: detached from {}", path);
    } else {
        spdlog::warn("vacceld: {} refused to detach this daemon ({}); the vaccel module lets go "
                     "when this process exits",
                     path, errno_text(errno));
    }
    detached = true;
    fd.reset();
}

}  // namespace vaccel::daemon
