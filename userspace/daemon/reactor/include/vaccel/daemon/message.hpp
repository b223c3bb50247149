// message.hpp - one SOCK_SEQPACKET message as the reactor sends or receives it.
//
// Owns: the msghdr, the single iovec and the SCM_RIGHTS control space that
// io_uring's sendmsg/recvmsg read and write, and - after a receive - the
// descriptors that came with the message until the caller takes them.
// Decides: at most `max_fds` descriptors travel with one message; a receive
// that brought more data or descriptors than fit reports truncated() (the
// kernel drops the excess bytes and closes the excess descriptors).
//
// Ownership: a Message is caller-owned. From Reactor::recv_message() or
// send_message() until that operation's completion has run, the kernel and
// the reactor read (send) or write (receive) the Message and the bytes it
// points to: neither may move, be destroyed or be reused for another
// operation in that window. The byte buffer itself is never owned here.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "vaccel/daemon/unique_fd.hpp"

namespace vaccel::daemon {

class Message {
public:
    // Descriptors one message can carry (a memfd per payload is the use).
    static constexpr std::size_t max_fds = 4;

    Message() = default;
    Message(const Message&) = delete;
    Message& operator=(const Message&) = delete;

    // Receive into `buffer` (up to buffer.size() bytes) and up to max_fds
    // descriptors. Drops descriptors of an earlier receive not yet taken.
    void prepare_receive(std::span<std::byte> buffer);
    // Send `bytes` with copies of `fds` (at most max_fds; more is refused:
    // returns false and prepares nothing). The descriptors stay the
    // caller's: it closes them when it likes after the completion ran.
    bool prepare_send(std::span<const std::byte> bytes, std::span<const int> fds = {});

    // After a receive completed with res >= 0: true if the kernel cut the
    // data (MSG_TRUNC) or the descriptors (MSG_CTRUNC).
    bool truncated() const;
    // After a receive: the descriptors that arrived, now the caller's.
    // Descriptors never taken are closed with the Message.
    std::vector<UniqueFd> take_fds() { return std::move(received_fds_); }

    // For the reactor: the header io_uring reads, and the step that
    // collects SCM_RIGHTS descriptors once a receive completed.
    msghdr* header() { return &header_; }
    void collect_received_fds();

private:
    msghdr header_{};
    iovec iov_{};
    // Invariant: aligned for cmsghdr and large enough for max_fds ints.
    alignas(cmsghdr) std::array<unsigned char, CMSG_SPACE(sizeof(int) * max_fds)> control_{};
    std::vector<UniqueFd> received_fds_;
};

}  // namespace vaccel::daemon
