// reactor.cpp - the io_uring loop: preparing operations, reaping
// completions, posted functions and the clean stop.
//
// Owns the mechanics behind reactor.hpp. Decides: completions are reaped one
// CQE at a time and the CQE is marked seen before its callback runs, so a
// callback may start new operations (even fill the ring) freely.
#include "vaccel/daemon/reactor.hpp"

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <utility>

namespace vaccel::daemon {

std::uint64_t monotonic_now_ns()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(now.tv_nsec);
}

SysResult<std::unique_ptr<Reactor>> Reactor::create(unsigned entries)
{
    std::unique_ptr<Reactor> reactor(new Reactor());
    // Blocking on purpose: io_uring waits for a blocking eventfd to become
    // readable, but completes a read of an O_NONBLOCK one with -EAGAIN.
    const int wake = eventfd(0, EFD_CLOEXEC);
    if (wake < 0)
        return std::unexpected(-errno);
    reactor->wake_fd_.reset(wake);
    const int ret = io_uring_queue_init(entries, &reactor->ring_, 0);
    if (ret < 0)
        return std::unexpected(ret);
    reactor->ring_ready_ = true;
    return reactor;
}

Reactor::~Reactor()
{
    if (!ring_ready_)
        return;
    // Operations left in flight (run() never ran, or it failed): cancel them
    // and wait for their CQEs without running callbacks, so the kernel is done
    // with every caller buffer before this returns. Parked uring_cmds cannot
    // be cancelled (6.1): they are abandoned (reactor.hpp).
    if (ops_.size() > commands_) {
        stopping_ = true;
        if (io_uring_sqe* sqe = next_sqe(); sqe != nullptr) {
            io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
            track(sqe, OpKind::internal);
        }
        while (ops_.size() > commands_) {
            io_uring_cqe* cqe = nullptr;
            const int ret = io_uring_submit_and_wait(&ring_, 1);
            if (ret < 0 && ret != -EINTR)
                break;
            while (io_uring_peek_cqe(&ring_, &cqe) == 0) {
                auto node = ops_.extract(io_uring_cqe_get_data64(cqe));
                if (!node.empty() && node.mapped().kind == OpKind::command)
                    --commands_;
                // Descriptors that arrived go to the Message, which closes
                // them unless its owner takes them.
                if (!node.empty() && node.mapped().kind == OpKind::receive && cqe->res >= 0)
                    node.mapped().message->collect_received_fds();
                io_uring_cqe_seen(&ring_, cqe);
            }
        }
    }
    io_uring_queue_exit(&ring_);
}

io_uring_sqe* Reactor::next_sqe()
{
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {
        // Ring full of unsubmitted entries: hand them to the kernel first.
        io_uring_submit(&ring_);
        sqe = io_uring_get_sqe(&ring_);
    }
    return sqe;
}

std::pair<OpId, Reactor::Op*> Reactor::track(io_uring_sqe* sqe, OpKind kind)
{
    const OpId id = next_id_++;
    Op& op = ops_[id];
    op.kind = kind;
    io_uring_sqe_set_data64(sqe, id);
    return {id, &op};
}

SysResult<OpId> Reactor::accept(int listen_fd, Completion done)
{
    if (stopping_)
        return std::unexpected(-ECANCELED);
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr)
        return std::unexpected(-EBUSY);
    io_uring_prep_accept(sqe, listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    auto [id, op] = track(sqe, OpKind::plain);
    op->done = std::move(done);
    return id;
}

SysResult<OpId> Reactor::recv_message(int fd, Message& message, Completion done)
{
    if (stopping_)
        return std::unexpected(-ECANCELED);
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr)
        return std::unexpected(-EBUSY);
    io_uring_prep_recvmsg(sqe, fd, message.header(), MSG_CMSG_CLOEXEC);
    auto [id, op] = track(sqe, OpKind::receive);
    op->done = std::move(done);
    op->message = &message;
    return id;
}

SysResult<OpId> Reactor::send_message(int fd, Message& message, Completion done)
{
    if (stopping_)
        return std::unexpected(-ECANCELED);
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr)
        return std::unexpected(-EBUSY);
    io_uring_prep_sendmsg(sqe, fd, message.header(), MSG_NOSIGNAL);
    auto [id, op] = track(sqe, OpKind::plain);
    op->done = std::move(done);
    return id;
}

SysResult<OpId> Reactor::read_eventfd(int fd, CounterCompletion done)
{
    if (stopping_)
        return std::unexpected(-ECANCELED);
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr)
        return std::unexpected(-EBUSY);
    auto [id, op] = track(sqe, OpKind::counter);
    op->counted = std::move(done);
    // prep_* never touches user_data, so preparing after track() is fine.
    io_uring_prep_read(sqe, fd, &op->count, sizeof(op->count), 0);
    return id;
}

SysResult<OpId> Reactor::read(int fd, std::span<std::byte> buffer, Completion done)
{
    if (stopping_)
        return std::unexpected(-ECANCELED);
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr)
        return std::unexpected(-EBUSY);
    // Offset -1: the file's current position (required for non-seekable
    // files such as a signalfd).
    io_uring_prep_read(sqe, fd, buffer.data(), static_cast<unsigned>(buffer.size()),
                       static_cast<__u64>(-1));
    auto [id, op] = track(sqe, OpKind::plain);
    op->done = std::move(done);
    return id;
}

SysResult<OpId> Reactor::timeout_at(std::uint64_t deadline_ns, Completion done)
{
    if (stopping_)
        return std::unexpected(-ECANCELED);
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr)
        return std::unexpected(-EBUSY);
    auto [id, op] = track(sqe, OpKind::timeout);
    op->done = std::move(done);
    op->when.tv_sec = static_cast<long long>(deadline_ns / 1'000'000'000u);
    op->when.tv_nsec = static_cast<long long>(deadline_ns % 1'000'000'000u);
    // count 0: a pure timer, not "after N completions". The default clock of
    // an io_uring timeout is CLOCK_MONOTONIC.
    io_uring_prep_timeout(sqe, &op->when, 0, IORING_TIMEOUT_ABS);
    return id;
}

SysResult<OpId> Reactor::uring_cmd(int fd, std::uint32_t op, std::span<const std::byte> command,
                                   Completion done)
{
    if (stopping_)
        return std::unexpected(-ECANCELED);
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr)
        return std::unexpected(-EBUSY);
    // Invariant: without IORING_SETUP_SQE128 the command area is the 16
    // bytes from sqe->cmd to the end of the SQE.
    constexpr std::size_t command_room = sizeof(io_uring_sqe) - offsetof(io_uring_sqe, cmd);
    static_assert(command_room == 16);
    if (command.size() > command_room)
        return std::unexpected(-EINVAL);
    // liburing 2.3 has no io_uring_prep_cmd: a plain rw prep, then the
    // command fields.
    io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, nullptr, 0, 0);
    sqe->cmd_op = op;
    sqe->__pad1 = 0;
    std::memset(sqe->cmd, 0, command_room);
    std::memcpy(sqe->cmd, command.data(), command.size());
    auto [id, entry] = track(sqe, OpKind::command);
    entry->done = std::move(done);
    ++commands_;
    return id;
}

bool Reactor::cancel(OpId id)
{
    auto it = ops_.find(id);
    if (it == ops_.end() || it->second.kind == OpKind::internal ||
        it->second.kind == OpKind::command || id == wake_id_)
        return false;
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr)
        return false;
    io_uring_prep_cancel64(sqe, id, 0);
    // The cancel request's own CQE (0, -ENOENT or -EALREADY) needs no
    // callback: the cancelled op reports through its own completion.
    track(sqe, OpKind::internal);
    return true;
}

void Reactor::post(std::function<void()> fn)
{
    {
        std::lock_guard lock(posted_mutex_);
        posted_.push_back(std::move(fn));
    }
    // Invariant: the push happens before the write, and the loop re-arms its
    // read only after draining, so no posted function waits for a later one.
    const std::uint64_t one = 1;
    while (::write(wake_fd_.get(), &one, sizeof(one)) < 0 && errno == EINTR) {
    }
}

void Reactor::stop()
{
    post([this] { begin_stop(); });
}

void Reactor::begin_stop()
{
    if (stopping_)
        return;
    stopping_ = true;
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr)
        return;  // cannot happen after next_sqe() submitted; ops still drain
    // One request cancels every op in flight, timeouts included; only the
    // cancel request itself is not its own match.
    io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
    track(sqe, OpKind::internal);
}

void Reactor::arm_wake_read()
{
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr)
        return;
    auto [id, op] = track(sqe, OpKind::counter);
    wake_id_ = id;
    op->counted = [this](int res, std::uint64_t) {
        run_posted();
        // Re-armed after draining (see post()); while stopping, only a
        // stray read could keep the loop alive, so none is armed.
        if (res != -ECANCELED && !stopping_)
            arm_wake_read();
    };
    io_uring_prep_read(sqe, wake_fd_.get(), &op->count, sizeof(op->count), 0);
}

void Reactor::run_posted()
{
    std::vector<std::function<void()>> batch;
    {
        std::lock_guard lock(posted_mutex_);
        batch.swap(posted_);
    }
    for (auto& fn : batch)
        fn();
}

void Reactor::complete(const io_uring_cqe& cqe)
{
    auto node = ops_.extract(io_uring_cqe_get_data64(&cqe));
    if (node.empty())
        return;  // not ours: cannot happen, every SQE is tracked
    Op& op = node.mapped();
    if (op.kind == OpKind::command)
        --commands_;
    switch (op.kind) {
    case OpKind::receive:
        if (cqe.res >= 0)
            op.message->collect_received_fds();
        [[fallthrough]];
    case OpKind::command:
    case OpKind::plain:
    case OpKind::timeout:
        if (op.done)
            op.done(cqe.res);
        break;
    case OpKind::counter:
        if (op.counted)
            op.counted(cqe.res, cqe.res == sizeof(op.count) ? op.count : 0);
        break;
    case OpKind::internal:
        break;
    }
}

int Reactor::run()
{
    arm_wake_read();
    // Stopped: every operation drained but parked uring_cmds (abandoned).
    while (!(stopping_ && ops_.size() == commands_)) {
        // The one place the reactor blocks: io_uring_enter(GETEVENTS).
        const int ret = io_uring_submit_and_wait(&ring_, 1);
        if (ret < 0 && ret != -EINTR && ret != -ETIME && ret != -EBUSY)
            return ret;
        io_uring_cqe* cqe = nullptr;
        while (io_uring_peek_cqe(&ring_, &cqe) == 0) {
            const io_uring_cqe copy = *cqe;
            // Seen before the callback: the slot is free for what it starts.
            io_uring_cqe_seen(&ring_, cqe);
            complete(copy);
        }
    }
    // Functions posted while the last completions drained (and any they
    // post in turn).
    for (;;) {
        {
            std::lock_guard lock(posted_mutex_);
            if (posted_.empty())
                break;
        }
        run_posted();
    }
    return 0;
}

}  // namespace vaccel::daemon
