// message.cpp - msghdr set-up for sendmsg/recvmsg and SCM_RIGHTS parsing.
//
// Owns the byte layout of the control message; decides nothing beyond
// message.hpp.
#include "vaccel/daemon/message.hpp"

#include <cstring>

namespace vaccel::daemon {

void Message::prepare_receive(std::span<std::byte> buffer)
{
    received_fds_.clear();
    iov_.iov_base = buffer.data();
    iov_.iov_len = buffer.size();
    header_ = msghdr{};
    header_.msg_iov = &iov_;
    header_.msg_iovlen = 1;
    header_.msg_control = control_.data();
    header_.msg_controllen = control_.size();
}

bool Message::prepare_send(std::span<const std::byte> bytes, std::span<const int> fds)
{
    if (fds.size() > max_fds)
        return false;
    received_fds_.clear();
    // sendmsg never writes through msg_iov; the iovec type is just not const.
    iov_.iov_base = const_cast<std::byte*>(bytes.data());
    iov_.iov_len = bytes.size();
    header_ = msghdr{};
    header_.msg_iov = &iov_;
    header_.msg_iovlen = 1;
    if (!fds.empty()) {
        control_.fill(0);
        header_.msg_control = control_.data();
        header_.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
        cmsghdr* cmsg = CMSG_FIRSTHDR(&header_);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
    }
    return true;
}

bool Message::truncated() const { return (header_.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0; }

void Message::collect_received_fds()
{
    received_fds_.clear();
    // The kernel wrote back msg_controllen: only that much is valid.
    for (cmsghdr* cmsg = CMSG_FIRSTHDR(&header_); cmsg != nullptr;
         cmsg = CMSG_NXTHDR(&header_, cmsg)) {
        if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
            continue;
        const std::size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
            received_fds_.emplace_back(fd);
        }
    }
}

}  // namespace vaccel::daemon
