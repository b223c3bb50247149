// socket_connection.cpp - connecting, sending, and the leader/follower
// receiver of one daemon connection (socket_connection.hpp explains the
// scheme and its invariant).
#include "socket_connection.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "payload_file.hpp"
#include "wire_frames.hpp"

namespace vaccel::lib {

namespace {

// The largest struct of any op (DEVICE_TOSA) with room to spare: a response
// larger than header + this + VACCEL_MSG_INLINE_MAX breaks the wire rules.
constexpr std::size_t args_room = 2048;
static_assert(sizeof(vaccel_device_query) <= args_room);
static_assert(sizeof(vaccel_device_tosa) <= args_room);
constexpr std::size_t receive_capacity =
    sizeof(vaccel_msg_header) + args_room + VACCEL_MSG_INLINE_MAX;

// Room for the one fd a response may carry, and a few more that a faulty
// peer might send (they are closed, and the response refused).
constexpr std::size_t max_passed_fds = 4;

std::unexpected<Error> peer_gone()
{
    return fail(Errc::device_lost, VACCEL_D_PEER_GONE);
}

}  // namespace

Result<std::unique_ptr<SocketConnection>> SocketConnection::connect(const std::string& path,
                                                                    int* connect_errno)
{
    auto refuse = [&](int error) -> std::unexpected<Error> {
        if (connect_errno != nullptr)
            *connect_errno = error;
        return peer_gone();
    };
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof address.sun_path)
        return refuse(ENAMETOOLONG);
    std::memcpy(address.sun_path, path.data(), path.size());

    const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return refuse(errno);
    int rc;
    do
        rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
    while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        const int error = errno;
        close(fd);
        return refuse(error);
    }
    return std::unique_ptr<SocketConnection>(new SocketConnection(fd, path));
}

SocketConnection::SocketConnection(int fd, std::string path)
    : fd_(fd), path_(std::move(path)), receive_buffer_(receive_capacity)
{
}

SocketConnection::~SocketConnection()
{
    // No call is in flight (vaccel_client_close() is the last call of a
    // client); closing ends the daemon's session.
    close(fd_);
}

int SocketConnection::send_request(const Outgoing& outgoing, std::uint64_t seq)
{
    // Ownership: one frame buffer per thread, reused (the codec appends
    // without allocating once its capacity suffices).
    thread_local std::vector<std::byte> frame;
    frame_request(frame, outgoing.opcode, seq, outgoing.args, outgoing.inline_payload,
                  (outgoing.flags & VACCEL_MSG_PAYLOAD_FD) != 0, outgoing.payload_bytes);
    iovec part{frame.data(), frame.size()};
    msghdr message{};
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (outgoing.fd >= 0) {
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        cmsghdr* passed = CMSG_FIRSTHDR(&message);
        passed->cmsg_level = SOL_SOCKET;
        passed->cmsg_type = SCM_RIGHTS;
        passed->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(passed), &outgoing.fd, sizeof(int));
    }
    ssize_t sent;
    do
        sent = sendmsg(fd_, &message, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    return sent < 0 ? errno : 0;
}

Status SocketConnection::exchange(const Outgoing& outgoing, Incoming& incoming)
{
    Waiting me;
    me.opcode = outgoing.opcode;
    me.incoming = &incoming;
    std::uint64_t seq;
    {
        std::lock_guard lock(mutex_);
        if (lost_)
            return peer_gone();
        seq = next_seq_++;
        // In the table before the request leaves: the response may come back
        // (to another thread, the leader) before sendmsg() returns here.
        // Ownership: the request's bytes are read by the kernel inside
        // sendmsg(), before any response can exist, so the leader writing
        // the response into the caller's struct cannot race with the send.
        waiting_.emplace(seq, &me);
    }
    if (send_request(outgoing, seq) != 0) {
        std::unique_lock lock(mutex_);
        waiting_.erase(seq);  // absent if a receiver already failed it
        // EPIPE, ECONNRESET: the daemon is gone. Any other failure (ENOBUFS,
        // EMSGSIZE) leaves the session in an unknown state too, and is rare
        // enough that ending it is the simpler honest answer.
        lose(lock);
        return peer_gone();
    }

    std::unique_lock lock(mutex_);
    while (!me.done) {
        if (!receiving_) {
            receiving_ = true;
            while (!me.done)
                receive_one(lock);
            receiving_ = false;
            promote_next_leader(lock);
            break;
        }
        me.wake.wait(lock, [&] { return me.done || !receiving_; });
    }
    if (me.lost)
        return peer_gone();
    return {};
}

void SocketConnection::receive_one(std::unique_lock<std::mutex>& lock)
{
    lock.unlock();
    iovec part{receive_buffer_.data(), receive_buffer_.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * max_passed_fds)] = {};
    msghdr message{};
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    ssize_t received;
    do
        received = recvmsg(fd_, &message, MSG_CMSG_CLOEXEC);
    while (received < 0 && errno == EINTR);

    // Every fd that came along is ours to close; at most one is meaningful.
    std::vector<int> fds;
    if (received > 0)
        for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                continue;
            const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (std::size_t i = 0; i < count; ++i) {
                int fd;
                std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                fds.push_back(fd);
            }
        }
    auto close_fds = [&] {
        for (int fd : fds)
            close(fd);
    };

    const bool well_framed = received >= static_cast<ssize_t>(sizeof(vaccel_msg_header)) &&
                             (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) == 0 &&
                             fds.size() <= 1;
    lock.lock();
    if (!well_framed) {  // EOF (0), an error, or a message no daemon sends
        close_fds();
        lose(lock);
        return;
    }
    vaccel_msg_header header;
    std::memcpy(&header, receive_buffer_.data(), sizeof header);
    auto found = waiting_.find(header.seq);
    if (found == waiting_.end()) {  // a response to nothing asked
        close_fds();
        lose(lock);
        return;
    }
    Waiting* waiting = found->second;
    waiting_.erase(found);

    lock.unlock();
    const bool delivered = deliver(waiting->opcode, *waiting->incoming,
                                   static_cast<std::size_t>(received),
                                   fds.empty() ? -1 : fds.front());
    close_fds();
    lock.lock();
    waiting->done = true;
    if (!delivered) {
        waiting->lost = true;
        lose(lock);
    }
    waiting->wake.notify_one();
}

bool SocketConnection::deliver(std::uint32_t opcode, Incoming& incoming, std::size_t received,
                               int passed_fd)
{
    auto message = decode_reply(std::span<const std::byte>(receive_buffer_.data(), received),
                                opcode);
    if (!message || message->args.size() != incoming.args.size())
        return false;
    const vaccel_msg_header& header = message->header;
    const bool by_file = (header.flags & VACCEL_MSG_PAYLOAD_FD) != 0;
    const bool passes_fd = (header.flags & VACCEL_MSG_PASSES_FD) != 0;
    // Only an admin document comes back in a file the daemon passes (a large
    // BUFFER_READ's data is already in the requester's own file), and only
    // SESSION_NOTIFY's and BUFFER_MAP's answers pass a descriptor of
    // another kind (the codec checks which ops may).
    if (((by_file && opcode == VACCEL_OP_ADMIN) || passes_fd) != (passed_fd >= 0))
        return false;
    if (passes_fd) {
        if (incoming.passed_fd == nullptr)
            return false;
        // Ownership: a copy for the caller; the received one is closed by
        // receive_one() with every other descriptor of the message.
        *incoming.passed_fd = fcntl(passed_fd, F_DUPFD_CLOEXEC, 0);
        if (*incoming.passed_fd < 0)
            return false;
    }

    if (incoming.document != nullptr) {
        incoming.document->resize(header.payload_bytes);
        if (by_file) {
            if (!read_passed_file(passed_fd, *incoming.document))
                return false;
        } else if (!message->payload.empty()) {
            std::memcpy(incoming.document->data(), message->payload.data(),
                        message->payload.size());
        }
    } else if (!message->payload.empty()) {
        // The codec admits a payload only on a successful BUFFER_READ, of
        // the length the response names: it must be what was asked for.
        if (message->payload.size() != incoming.read_destination.size())
            return false;
        std::memcpy(incoming.read_destination.data(), message->payload.data(),
                    message->payload.size());
    }
    incoming.flags = header.flags;
    incoming.payload_bytes = header.payload_bytes;
    std::memcpy(incoming.args.data(), message->args.data(), message->args.size());
    return true;
}

void SocketConnection::lose(std::unique_lock<std::mutex>& lock)
{
    (void)lock;  // held by the caller
    if (!lost_) {
        lost_ = true;
        // Wakes a leader blocked in recvmsg() (EOF) and tells the daemon.
        shutdown(fd_, SHUT_RDWR);
    }
    for (auto& [seq, waiting] : waiting_) {
        waiting->done = true;
        waiting->lost = true;
        waiting->wake.notify_one();
    }
    waiting_.clear();
}

void SocketConnection::promote_next_leader(std::unique_lock<std::mutex>& lock)
{
    (void)lock;  // held by the caller
    // Any waiting call will do: it sees receiving_ clear and takes over.
    if (!waiting_.empty())
        waiting_.begin()->second->wake.notify_one();
}

}  // namespace vaccel::lib
