// daemon_support.hpp - a real vacceld process on a private socket and a raw
// wire client, for the daemon's tests.
//
// Owns: the daemon (tests/support/vacceld_process.hpp: its directory, made
// 0755 so a client that drops to another uid can still reach the socket,
// config file and process); a client that speaks the wire protocol with
// the codec only (no libvaccel). Decides: a test waits for the daemon by
// polling for a connectable socket (5 s at most) and for a reply by poll()
// (5 s at most), so a broken daemon fails a test instead of hanging it.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"
#include "vacceld_process.hpp"
#include "vaccel/common/codec.hpp"
#include "vaccel/daemon/unique_fd.hpp"

namespace vaccel::test {

using daemon::UniqueFd;

inline std::string read_text(const std::filesystem::path& path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text)
{
    std::ofstream(path) << text;
}

inline UniqueFd connect_to(const std::string& path)
{
    UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
        return UniqueFd();
    return fd;
}

// vacceld with `config_text` as its config (nullopt: no file), serving the
// CPU alone at log level debug: these tests are about the daemon, not about
// which devices the machine has. Fails the test when it does not start.
class DaemonProcess {
public:
    explicit DaemonProcess(std::optional<std::string> config_text = std::string(),
                           std::vector<std::string> extra = {})
    {
        VacceldOptions options;
        // VACCELD names another build's vacceld (to run these tests against it).
        const char* other = std::getenv("VACCELD");
        options.binary = other != nullptr && *other != '\0' ? other : VACCELD_PATH;
        options.config = std::move(config_text);
        options.log_level = "debug";
        options.args = {"--devices", "cpu"};
        options.args.insert(options.args.end(), extra.begin(), extra.end());
        options.ready_within = std::chrono::seconds(5);
        if (!process_.start(options))
            fail_msg("vacceld did not start (%s); its log:\n%s", process_.error().c_str(),
                     process_.log_text().c_str());
        config_ = process_.config_path();
    }

    void signal(int signo) { process_.signal(signo); }
    // The exit status (5 s at most); -1 if it did not exit.
    int wait_exit() { return process_.wait_exit(); }

    const std::string& socket() const { return process_.socket_path(); }
    pid_t pid() const { return process_.pid(); }
    const std::filesystem::path& config() const { return config_; }
    std::string log_text() const { return process_.log_text(); }

private:
    VacceldProcess process_;
    std::filesystem::path config_;
};

// One reply as received.
struct Received {
    vaccel_msg_header header{};
    std::vector<std::byte> args;
    std::vector<std::byte> payload;
    UniqueFd fd;

    vaccel_status status() const
    {
        vaccel_status s{};
        std::memcpy(&s, args.data(), sizeof s);
        return s;
    }
    template <class S>
    S as() const
    {
        S value{};
        std::memcpy(&value, args.data(), sizeof value);
        return value;
    }
    std::string text() const { return {reinterpret_cast<const char*>(payload.data()), payload.size()}; }
};

class WireClient {
public:
    explicit WireClient(const std::string& path) : fd_(connect_to(path))
    {
        if (!fd_)
            fail_msg("cannot connect to %s", path.c_str());
    }

    int fd() const { return fd_.get(); }

    bool send_bytes(std::span<const std::byte> bytes, int pass_fd = -1)
    {
        iovec iov{const_cast<std::byte*>(bytes.data()), bytes.size()};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        if (pass_fd >= 0) {
            msg.msg_control = control;
            msg.msg_controllen = sizeof control;
            cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
            cmsg->cmsg_level = SOL_SOCKET;
            cmsg->cmsg_type = SCM_RIGHTS;
            cmsg->cmsg_len = CMSG_LEN(sizeof(int));
            std::memcpy(CMSG_DATA(cmsg), &pass_fd, sizeof(int));
        }
        return ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
    }

    template <class S>
    bool send(std::uint32_t opcode, const S& args, std::span<const std::byte> payload = {})
    {
        return send_bytes(encode_request(opcode, ++seq_, 0, bytes_of(args), payload));
    }

    // The next message: nullopt on EOF or after `timeout_ms` without one.
    std::optional<Received> receive(int timeout_ms = 5000)
    {
        pollfd p{fd_.get(), POLLIN, 0};
        if (::poll(&p, 1, timeout_ms) != 1)
            return std::nullopt;
        std::vector<std::byte> buffer(sizeof(vaccel_msg_header) + 4096 + VACCEL_MSG_INLINE_MAX);
        iovec iov{buffer.data(), buffer.size()};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        const ssize_t n = ::recvmsg(fd_.get(), &msg, MSG_CMSG_CLOEXEC);
        if (n <= 0)
            return std::nullopt;
        Received r;
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
            if (c->cmsg_type == SCM_RIGHTS) {
                int passed = -1;
                std::memcpy(&passed, CMSG_DATA(c), sizeof passed);
                r.fd.reset(passed);
            }
        auto view = decode_response(std::span(buffer).first(static_cast<std::size_t>(n)));
        if (!view)
            fail_msg("the daemon sent a malformed reply: %s", describe(view.error()).c_str());
        r.header = view->header;
        r.args.assign(view->args.begin(), view->args.end());
        r.payload.assign(view->payload.begin(), view->payload.end());
        if (r.fd && (r.header.flags & VACCEL_MSG_PAYLOAD_FD)) {
            r.payload.resize(r.header.payload_bytes);
            if (::pread(r.fd.get(), r.payload.data(), r.payload.size(), 0) !=
                static_cast<ssize_t>(r.payload.size()))
                fail_msg("short reply memfd");
        }
        return r;
    }

    template <class S>
    Received call(std::uint32_t opcode, const S& args, std::span<const std::byte> payload = {})
    {
        if (!send(opcode, args, payload))
            fail_msg("send failed: %s", std::strerror(errno));
        auto r = receive();
        if (!r)
            fail_msg("no reply to opcode %u", opcode);
        if (r->header.seq != seq_)
            fail_msg("reply seq %llu, expected %llu", (unsigned long long)r->header.seq,
                     (unsigned long long)seq_);
        return std::move(*r);
    }

    Received admin(std::uint32_t command, std::string_view document = {})
    {
        vaccel_admin args{};
        args.command = command;
        return call(VACCEL_OP_ADMIN, args, std::as_bytes(std::span(document.data(), document.size())));
    }

    // True when the daemon closed this connection (EOF within `timeout_ms`).
    bool closed_by_peer(int timeout_ms = 5000)
    {
        pollfd p{fd_.get(), POLLIN, 0};
        if (::poll(&p, 1, timeout_ms) != 1)
            return false;
        std::byte byte{};
        return ::recv(fd_.get(), &byte, 1, MSG_DONTWAIT) == 0;
    }

    std::uint64_t last_seq() const { return seq_; }

private:
    UniqueFd fd_;
    std::uint64_t seq_ = 0;
};

}  // namespace vaccel::test

// A reply whose status must be exactly these fields.
#define assert_status(received, error_, detail_, arg0_)                                       \
    do {                                                                                      \
        const vaccel_status s_ = (received).status();                                         \
        if (s_.error != (error_) || s_.detail != (detail_) || s_.arg0 != (arg0_))              \
            fail_msg("status: error %u detail %u arg0 %llu; expected %u %u %llu", s_.error,    \
                     s_.detail, (unsigned long long)s_.arg0, (unsigned)(error_),               \
                     (unsigned)(detail_), (unsigned long long)(arg0_));                       \
    } while (0)
