// reactor.hpp - vacceld's single-threaded io_uring event loop.
//
// Owns: the io_uring ring, the table of operations in flight (one completion
// callback each), the queue of functions posted from other threads and the
// eventfd that wakes the loop for them, and the ring of provided buffers
// that multishot receives fill. Decides: the loop's only blocking point is
// the wait for completions in io_uring_enter (submit-and-wait); no callback
// may block (ADR 0006). Every operation is single-shot but recv_multishot():
// a caller that wants the next connection or message arms the operation
// again from its completion.
//
// Threads: everything except post() and stop() must be called on the thread
// running run() (or, before run(), on any one thread: the ring is created
// disabled and enabled by run(), so with IORING_SETUP_SINGLE_ISSUER the
// thread that runs the loop is its one submitter). post() and stop() may be
// called from any thread while the Reactor lives. Where the kernel accepts
// them the ring uses SINGLE_ISSUER | DEFER_TASKRUN: completions are then
// processed only inside the loop's own io_uring_enter.
//
// Completion results are the CQE's `res`: >= 0 on success (an fd for
// accept, a byte count for recv/send/read), a negative errno on failure.
// A cancelled operation completes with -ECANCELED (or with its own result if
// it finished first); a timeout that expires completes with -ETIME.
// Every operation started completes exactly once, stop() included - except
// a uring_cmd still parked in its driver when the loop stops (below).
//
// uring_cmd (IORING_OP_URING_CMD, a driver's own command such as the
// vaccel module's FETCH): it completes when the driver says so, possibly
// never. Kernel 6.1 cannot cancel one, so stop() does not wait for parked
// commands: run() returns once every other operation drained, and the
// commands still parked are abandoned (their completions never run; the
// driver learns of it when this thread exits). The 16 command bytes are
// copied into the SQE; the memory they point to must outlive the thread
// that runs the loop (see uring_cmd()).
//
// Ownership of buffers: callbacks own nothing implicitly. A Message (and the
// bytes it points to) given to recv_message()/send_message() stays
// caller-owned and must stay valid and untouched until that operation's
// completion has run. Timeouts and eventfd reads keep their small state
// inside the reactor.
//
// Descriptors: the reactor never closes a caller's descriptor. Give it
// blocking descriptors: io_uring reports -EAGAIN instead of waiting for a
// read on an O_NONBLOCK eventfd or file.
#pragma once

#include <liburing.h>

#include <array>
#include <cstdint>
#include <deque>
#include <expected>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "vaccel/daemon/message.hpp"
#include "vaccel/daemon/unique_fd.hpp"

namespace vaccel::daemon {

// Names one operation in flight (its io_uring user_data). Never 0.
using OpId = std::uint64_t;

// Result of a call that can only fail with an errno: the negative errno.
template <class T>
using SysResult = std::expected<T, int>;

using Completion = std::function<void(int res)>;

// One message of a multishot receive, valid only while its completion runs
// (its bytes then go back to the buffer ring).
struct Received {
    // >= 0: payload bytes (the message's length); 0 with !more: the peer
    // closed. < 0: the receive failed and ended (-ENOBUFS: the buffer ring
    // ran dry; arm it again).
    int res = 0;
    std::span<const std::byte> bytes;
    bool truncated = false;  // MSG_TRUNC or MSG_CTRUNC: bytes or descriptors cut
    bool more = false;       // still armed: more completions follow
    // Descriptors that came with it; those not taken are closed afterwards.
    std::array<int, Message::max_fds> fds{};
    std::size_t fd_count = 0;
    std::vector<UniqueFd> take_fds();
};
using ReceiveCompletion = std::function<void(Received& message)>;

// Provided buffers for multishot receives: `count` (a power of two) buffers
// each holding a message of up to `bytes`. count 0: none (recv_multishot()
// then fails with -EOPNOTSUPP).
struct ReceiveBuffers {
    unsigned count = 0;
    std::size_t bytes = 0;
};
// An eventfd read: res is 8 on success, `count` the counter it drained.
using CounterCompletion = std::function<void(int res, std::uint64_t count)>;

// Nanoseconds on CLOCK_MONOTONIC, the clock of every deadline in vaccel.
std::uint64_t monotonic_now_ns();

class Reactor {
public:
    // A ring of `entries` submission slots (the completion queue is twice
    // that). Fails with the negative errno of io_uring_queue_init/eventfd.
    // `buffers`: see ReceiveBuffers; a kernel without buffer rings (< 5.19)
    // or multishot recvmsg (< 6.0) leaves recv_multishot() unsupported.
    static SysResult<std::unique_ptr<Reactor>> create(unsigned entries = 256,
                                                      ReceiveBuffers buffers = {});
    // Call only on the reactor thread, with run() not running. Operations
    // still in flight (run() never ran) are cancelled and reaped without
    // running their completions, so no caller buffer is touched afterwards.
    ~Reactor();
    Reactor(const Reactor&) = delete;
    Reactor& operator=(const Reactor&) = delete;

    // Each start returns the operation's id, or -ECANCELED once stop() began
    // and -EBUSY if the ring has no free submission slot even after
    // submitting; on failure the completion never runs.

    // One accept4(SOCK_CLOEXEC) on a listening socket: res = the new fd,
    // which the completion owns.
    SysResult<OpId> accept(int listen_fd, Completion done);
    // One recvmsg(MSG_CMSG_CLOEXEC): res = bytes (0: the peer closed). Before
    // `done` runs, received descriptors are collected into `message`.
    SysResult<OpId> recv_message(int fd, Message& message, Completion done);
    // A multishot recvmsg(MSG_CMSG_CLOEXEC) into the provided buffers: `done`
    // runs once per message while `more`; the last completion (more false:
    // EOF, an error, cancel, -ENOBUFS) ends the operation. -EOPNOTSUPP when
    // unsupported (see multishot_receive()).
    SysResult<OpId> recv_multishot(int fd, ReceiveCompletion done);
    bool multishot_receive() const { return buffer_ring_ != nullptr; }
    // One sendmsg(MSG_NOSIGNAL): res = bytes sent.
    SysResult<OpId> send_message(int fd, Message& message, Completion done);
    // One 8-byte read of an eventfd: drains its counter.
    SysResult<OpId> read_eventfd(int fd, CounterCompletion done);
    // One read(2) of up to buffer.size() bytes at the file's current
    // position (a signalfd, a pipe): res = bytes read. `buffer` is the
    // caller's and must stay valid until the completion ran.
    SysResult<OpId> read(int fd, std::span<std::byte> buffer, Completion done);
    // A timer that fires at `deadline_ns` (absolute CLOCK_MONOTONIC): res =
    // -ETIME when it expires, -ECANCELED when cancelled first.
    SysResult<OpId> timeout_at(std::uint64_t deadline_ns, Completion done);
    // One IORING_OP_URING_CMD on `fd`: sqe->cmd_op = `op`, `command` (at
    // most 16 bytes, no SQE128) copied into sqe->cmd. res = the driver's
    // answer. Never cancellable (cancel() returns false): see above for
    // what stop() does with a parked one. Ownership: any memory `command`
    // names belongs to the driver until the completion ran - and, for a
    // command abandoned at stop, until this thread has exited.
    SysResult<OpId> uring_cmd(int fd, std::uint32_t op, std::span<const std::byte> command,
                              Completion done);

    // Asks the kernel to cancel operation `id`; its completion then runs with
    // -ECANCELED (or its own result if it already finished). False if `id`
    // is not in flight (already completed, or never started).
    bool cancel(OpId id);

    // Runs `fn` on the reactor thread soon. Any thread. Functions posted
    // before run() returns run before it returns; later ones are destroyed
    // unrun with the Reactor.
    void post(std::function<void()> fn);

    // Stops the loop cleanly: new starts are refused, every operation in
    // flight is cancelled, and run() returns once all their completions have
    // run (parked uring_cmds excepted: abandoned). Any thread; idempotent.
    void stop();

    // The loop. Returns 0 after stop() drained everything, or the negative
    // errno if the ring itself failed.
    int run();
    // Turns of the loop on the calling thread until `done()` holds (checked
    // before each wait) or `deadline_ns` (CLOCK_MONOTONIC) passes: true when
    // `done()` held. The caller is the reactor thread from its first call
    // on; a server driven by a test transport never calls run().
    bool run_until(const std::function<bool()>& done, std::uint64_t deadline_ns);

    // Operations in flight (reactor thread). Includes the reactor's own
    // wake-up read while run() is looping.
    std::size_t in_flight() const { return live_; }
    // uring_cmds among them (reactor thread).
    std::size_t commands_in_flight() const { return commands_; }

private:
    enum class OpKind : std::uint8_t { plain, receive, multishot, counter, timeout, command, internal };

    // Invariant: an Op holds its slot of ops_ from its SQE's preparation
    // until its last CQE is reaped; the kernel may write `count` and read
    // `when` only in that window, and a deque never moves its elements.
    // id 0: the slot is free.
    struct Op {
        OpId id = 0;
        std::uint32_t generation = 0;
        OpKind kind = OpKind::plain;
        Completion done;
        CounterCompletion counted;
        ReceiveCompletion received;
        Message* message = nullptr;
        __kernel_timespec when{};
        std::uint64_t count = 0;
    };

    Reactor() = default;
    // A free SQE (submitting queued ones if the ring is full), or nullptr.
    io_uring_sqe* next_sqe();
    // Registers an op for `sqe` (stamping its id as user_data); the caller
    // fills in the callback.
    std::pair<OpId, Op*> track(io_uring_sqe* sqe, OpKind kind);
    Op* find_op(OpId id);
    void release(Op& op);
    void complete(const io_uring_cqe& cqe);
    void deliver(Op& op, const io_uring_cqe& cqe);
    void give_back_buffer(unsigned id);
    bool setup_buffers(ReceiveBuffers buffers);
    void arm_wake_read();
    // Enables the ring and arms the wake-up read, once: 0 or -errno.
    int begin_loop();
    // Runs the completions ready now.
    void reap_ready();
    void run_posted();
    void begin_stop();

    io_uring ring_{};
    bool ring_ready_ = false;
    bool ring_disabled_ = false;  // created disabled; run() enables it
    bool looping_ = false;        // begin_loop() ran
    UniqueFd wake_fd_;  // eventfd written by post(), read by the loop
    OpId wake_id_ = 0;  // the loop's own read of wake_fd_: never cancellable by callers
    // Slots of operations; id = generation << 32 | (index + 1).
    std::deque<Op> ops_;
    std::vector<std::uint32_t> free_ops_;
    std::size_t live_ = 0;
    // The provided buffers (IORING_REGISTER_PBUF_RING, group 0).
    io_uring_buf_ring* buffer_ring_ = nullptr;
    std::byte* buffer_memory_ = nullptr;
    std::size_t buffer_map_bytes_ = 0;
    ReceiveBuffers buffers_{};
    std::size_t buffer_stride_ = 0;
    msghdr multishot_header_{};  // read by the kernel at each multishot prep
    std::size_t commands_ = 0;  // ops_ of kind command
    bool stopping_ = false;

    std::mutex posted_mutex_;  // guards posted_
    std::vector<std::function<void()>> posted_;
    std::vector<std::function<void()>> running_;  // the batch being run (reactor thread)
};

}  // namespace vaccel::daemon
