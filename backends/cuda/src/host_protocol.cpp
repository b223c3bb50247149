// host_protocol.cpp - messages between vacceld and a CUDA host (host_protocol.hpp).
#include "host_protocol.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace vaccel::backend::cuda::host {

Writer& Writer::text(std::string_view s)
{
    put(static_cast<std::uint32_t>(s.size()));
    const std::size_t at = bytes_.size();
    bytes_.resize(at + s.size());
    if (!s.empty()) std::memcpy(bytes_.data() + at, s.data(), s.size());
    return *this;
}

Writer& Writer::blob(std::span<const std::byte> b)
{
    put(static_cast<std::uint32_t>(b.size()));
    const std::size_t at = bytes_.size();
    bytes_.resize(at + b.size());
    if (!b.empty()) std::memcpy(bytes_.data() + at, b.data(), b.size());
    return *this;
}

Writer& Writer::error(const Error& e)
{
    put(static_cast<std::uint32_t>(e.code)).put(e.detail).put(e.limit).put(e.arg0).put(e.arg1);
    return text(e.note.size() > max_note ? std::string_view(e.note).substr(0, max_note) : e.note);
}

std::string Reader::text()
{
    const auto n = get<std::uint32_t>();
    if (!ok_ || data_.size() - at_ < n) {
        ok_ = false;
        return {};
    }
    std::string s(reinterpret_cast<const char*>(data_.data() + at_), n);
    at_ += n;
    return s;
}

std::vector<std::byte> Reader::blob()
{
    const auto n = get<std::uint32_t>();
    if (!ok_ || data_.size() - at_ < n) {
        ok_ = false;
        return {};
    }
    std::vector<std::byte> b(data_.begin() + static_cast<std::ptrdiff_t>(at_),
                             data_.begin() + static_cast<std::ptrdiff_t>(at_ + n));
    at_ += n;
    return b;
}

Error Reader::error()
{
    Error e;
    e.code = static_cast<Errc>(get<std::uint32_t>());
    e.detail = get<std::uint32_t>();
    e.limit = get<std::uint32_t>();
    e.arg0 = get<std::uint64_t>();
    e.arg1 = get<std::uint64_t>();
    e.note = text();
    return e;
}

bool well_formed(const Error& e)
{
    const auto code = static_cast<std::uint32_t>(e.code);
    return code > VACCEL_OK && code < VACCEL_E_COUNT && e.detail < VACCEL_D_COUNT &&
           e.limit < VACCEL_LIMIT_COUNT && e.note.size() <= max_note;
}

namespace {

// Waits until `fd` is ready for `events` or `deadline` passes; false when it passed.
bool ready_before(int fd, short events, std::chrono::steady_clock::time_point deadline)
{
    for (;;) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 60'000)));
        if (n > 0) return true;  // ready, or an error/hang-up the next call reports
        if (n < 0 && errno != EINTR) return true;
    }
}

}  // namespace

Sent send_packet_before(int fd, std::span<const std::byte> packet,
                        std::chrono::steady_clock::time_point deadline)
{
    if (packet.size() > max_message) return Sent::gone;
    for (;;) {
        const ssize_t n = ::send(fd, packet.data(), packet.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n == static_cast<ssize_t>(packet.size())) return Sent::ok;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!ready_before(fd, POLLOUT, deadline)) return Sent::expired;
            continue;
        }
        return Sent::gone;
    }
}

Received receive_packet_before(int fd, std::chrono::steady_clock::time_point deadline)
{
    std::vector<std::byte> packet(max_message);
    for (;;) {
        const ssize_t n = ::recv(fd, packet.data(), packet.size(), MSG_DONTWAIT);
        if (n > 0) {
            packet.resize(static_cast<std::size_t>(n));
            return {std::move(packet), false};
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!ready_before(fd, POLLIN, deadline)) return {std::nullopt, true};
            continue;
        }
        return {};
    }
}

bool send_packet(int fd, std::span<const std::byte> packet)
{
    if (packet.size() > max_message) return false;
    for (;;) {
        const ssize_t n = ::send(fd, packet.data(), packet.size(), MSG_NOSIGNAL);
        if (n == static_cast<ssize_t>(packet.size())) return true;
        if (n < 0 && errno == EINTR) continue;
        return false;
    }
}

std::optional<std::vector<std::byte>> receive_packet(int fd)
{
    std::vector<std::byte> packet(max_message);
    for (;;) {
        const ssize_t n = ::recv(fd, packet.data(), packet.size(), 0);
        if (n > 0) {
            packet.resize(static_cast<std::size_t>(n));
            return packet;
        }
        if (n < 0 && errno == EINTR) continue;
        return std::nullopt;  // 0: the peer closed; else an error
    }
}

}  // namespace vaccel::backend::cuda::host
