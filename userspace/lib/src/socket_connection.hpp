// socket_connection.hpp - one SOCK_SEQPACKET connection to vacceld, shared
// by every thread of one client.
//
// Owns: the connected socket, the table of requests waiting for their
// response (by seq), and the receive buffer. Decides how responses reach
// the threads that wait for them, and what happens when the daemon goes.
//
// Sending: each thread sends its own request with one sendmsg() (the codec's
// frame, built in a per-thread buffer, with at most one memfd attached). A
// SOCK_SEQPACKET send is one record, all or nothing, so concurrent senders
// need no lock. MSG_NOSIGNAL: a gone daemon is EPIPE,
// never SIGPIPE.
//
// Receiving ("leader/follower"): there is no receive thread. A waiting
// thread that finds nobody receiving becomes the receiver (the leader): it
// reads responses one at a time and hands each to the thread whose seq it
// carries, until its own has come; then it steps down and wakes one other
// waiter, which becomes the next leader. The others (followers) sleep on
// their own condition variable until their response is handed over or they
// are promoted.
// Invariant: at most one thread is the leader (receiving_ is set), and only
// the leader calls recvmsg() and touches the receive buffer. A waiting
// call's Incoming is written only by the leader, after the leader took the
// call out of the table under the lock; the caller reads it only once it
// sees `done`, under the lock.
//
// Losing the daemon: EOF, ECONNRESET, EPIPE or a response that breaks the
// wire rules marks the connection lost (and shuts the socket down): every
// waiting call is woken and fails, and every later call fails at once, with
// DeviceLost / VACCEL_D_PEER_GONE. A thread parked in a long EVENT_WAIT is
// woken too, because some thread is always receiving while any call waits.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "vaccel.h"
#include "vaccel/common/error.hpp"

namespace vaccel::lib {

// What one request sends.
struct Outgoing {
    std::uint32_t opcode = 0;
    std::uint16_t flags = 0;  // VACCEL_MSG_PAYLOAD_FD or 0
    std::span<const std::byte> args;
    std::span<const std::byte> inline_payload;  // empty when the payload is in `fd`
    std::size_t payload_bytes = 0;              // announced in the header
    int fd = -1;                                // memfd sent with the request, or -1
};

// Where the response goes. Set up by the caller; filled in by the receiver.
struct Incoming {
    std::span<std::byte> args;  // the op's struct, exactly its size
    // BUFFER_READ answered inline: exactly `length` bytes.
    std::span<std::byte> read_destination;
    // ADMIN: the document, inline or from the passed memfd.
    std::vector<std::byte>* document = nullptr;
    // Out: the response header's flags and payload_bytes.
    std::uint16_t flags = 0;
    std::uint32_t payload_bytes = 0;
    // SESSION_NOTIFY: receives the descriptor the answer passes (the
    // caller owns it then); nullptr for every other op.
    int* passed_fd = nullptr;
};

class SocketConnection {
public:
    // Connects to the daemon's socket at `path`. On failure the Error is
    // DeviceLost / PEER_GONE and `*connect_errno` (if given) says why.
    static Result<std::unique_ptr<SocketConnection>> connect(const std::string& path,
                                                             int* connect_errno = nullptr);
    ~SocketConnection();
    SocketConnection(const SocketConnection&) = delete;
    SocketConnection& operator=(const SocketConnection&) = delete;

    // Sends one request and waits for its response (written into
    // `incoming`). Fails only when the connection is lost.
    // Thread-safety: any number of threads at once.
    Status exchange(const Outgoing& outgoing, Incoming& incoming);

    const std::string& path() const { return path_; }

private:
    struct Waiting {
        std::uint32_t opcode = 0;  // of the request: the response must echo it
        Incoming* incoming = nullptr;
        bool done = false;
        bool lost = false;
        std::condition_variable wake;
    };

    SocketConnection(int fd, std::string path);

    int send_request(const Outgoing& outgoing, std::uint64_t seq);
    // Leader only, `lock` held on entry and on return (released while
    // blocked in recvmsg and while copying).
    void receive_one(std::unique_lock<std::mutex>& lock);
    // Copies one received response into the waiting call; false when the
    // response breaks the wire rules.
    bool deliver(std::uint32_t opcode, Incoming& incoming, std::size_t received, int passed_fd);
    void lose(std::unique_lock<std::mutex>& lock);
    void promote_next_leader(std::unique_lock<std::mutex>& lock);

    const int fd_;
    const std::string path_;

    std::mutex mutex_;  // guards everything below but the receive buffer
    std::unordered_map<std::uint64_t, Waiting*> waiting_;
    std::uint64_t next_seq_ = 1;
    bool receiving_ = false;
    bool lost_ = false;

    std::vector<std::byte> receive_buffer_;  // the leader's only
};

}  // namespace vaccel::lib
