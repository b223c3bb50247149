// reactor.cpp - the io_uring loop: preparing operations, reaping
// completions, posted functions and the clean stop.
//
// Owns the mechanics behind reactor.hpp. Decides: completions are reaped one
// CQE at a time and the CQE is marked seen before its callback runs, so a
// callback may start new operations (even fill the ring) freely.
#include "vaccel/daemon/reactor.hpp"

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
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

std::vector<UniqueFd> Received::take_fds()
{
    std::vector<UniqueFd> taken;
    taken.reserve(fd_count);
    for (std::size_t i = 0; i < fd_count; ++i)
        taken.emplace_back(fds[i]);
    fd_count = 0;
    return taken;
}

SysResult<std::unique_ptr<Reactor>> Reactor::create(unsigned entries, ReceiveBuffers buffers)
{
    std::unique_ptr<Reactor> reactor(new Reactor());
    // Blocking on purpose: io_uring waits for a blocking eventfd to become
    // readable, but completes a read of an O_NONBLOCK one with -EAGAIN.
    const int wake = eventfd(0, EFD_CLOEXEC);
    if (wake < 0)
        return std::unexpected(-errno);
    reactor->wake_fd_.reset(wake);
    // Disabled until run(): the thread that enables it becomes the single
    // issuer. Kernels before 6.1 refuse these flags: a plain ring then.
    io_uring_params params{};
    params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_R_DISABLED;
    int ret = io_uring_queue_init_params(entries, &reactor->ring_, &params);
    if (ret == -EINVAL) {
        params = io_uring_params{};
        ret = io_uring_queue_init_params(entries, &reactor->ring_, &params);
    }
    if (ret < 0)
        return std::unexpected(ret);
    reactor->ring_ready_ = true;
    reactor->ring_disabled_ = (params.flags & IORING_SETUP_R_DISABLED) != 0;
    if (buffers.count != 0)
        reactor->setup_buffers(buffers);
    return reactor;
}

bool Reactor::setup_buffers(ReceiveBuffers buffers)
{
    if ((buffers.count & (buffers.count - 1)) != 0 || buffers.count > 32768)
        return false;
    // Each buffer: the recvmsg_out header, the control space, the message.
    const std::size_t control = CMSG_SPACE(sizeof(int) * Message::max_fds);
    const std::size_t stride =
        (sizeof(io_uring_recvmsg_out) + control + buffers.bytes + 63) & ~std::size_t{63};
    const std::size_t ring_bytes = sizeof(io_uring_buf) * buffers.count;
    const std::size_t page = 4096;
    const std::size_t ring_room = (ring_bytes + page - 1) & ~(page - 1);
    const std::size_t total = ring_room + stride * buffers.count;
    void* memory = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED)
        return false;
    auto* ring = static_cast<io_uring_buf_ring*>(memory);
    io_uring_buf_ring_init(ring);
    io_uring_buf_reg reg{};
    reg.ring_addr = reinterpret_cast<std::uintptr_t>(ring);
    reg.ring_entries = buffers.count;
    reg.bgid = 0;
    if (io_uring_register_buf_ring(&ring_, &reg, 0) != 0) {
        munmap(memory, total);
        return false;
    }
    buffer_ring_ = ring;
    buffer_map_bytes_ = total;
    buffer_memory_ = static_cast<std::byte*>(memory) + ring_room;
    buffers_ = buffers;
    buffer_stride_ = stride;
    for (unsigned i = 0; i < buffers.count; ++i)
        io_uring_buf_ring_add(ring, buffer_memory_ + stride * i, static_cast<unsigned>(stride),
                              static_cast<unsigned short>(i), io_uring_buf_ring_mask(buffers.count),
                              static_cast<int>(i));
    io_uring_buf_ring_advance(ring, static_cast<int>(buffers.count));
    multishot_header_ = msghdr{};
    multishot_header_.msg_controllen = control;
    return true;
}

void Reactor::give_back_buffer(unsigned id)
{
    io_uring_buf_ring_add(buffer_ring_, buffer_memory_ + buffer_stride_ * id,
                          static_cast<unsigned>(buffer_stride_), static_cast<unsigned short>(id),
                          io_uring_buf_ring_mask(buffers_.count), 0);
    io_uring_buf_ring_advance(buffer_ring_, 1);
}

Reactor::~Reactor()
{
    if (!ring_ready_)
        return;
    // Operations left in flight (run() never ran, or it failed): cancel them
    // and wait for their CQEs without running callbacks, so the kernel is done
    // with every caller buffer before this returns. Parked uring_cmds cannot
    // be cancelled (6.1): they are abandoned (reactor.hpp). A ring never
    // enabled never gave the kernel anything.
    if (!ring_disabled_ && live_ > commands_) {
        stopping_ = true;
        if (io_uring_sqe* sqe = next_sqe(); sqe != nullptr) {
            io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
            track(sqe, OpKind::internal);
        }
        while (live_ > commands_) {
            io_uring_cqe* cqe = nullptr;
            const int ret = io_uring_submit_and_wait(&ring_, 1);
            if (ret < 0 && ret != -EINTR)
                break;
            while (io_uring_peek_cqe(&ring_, &cqe) == 0) {
                const io_uring_cqe copy = *cqe;
                io_uring_cqe_seen(&ring_, cqe);
                Op* op = find_op(io_uring_cqe_get_data64(&copy));
                if (op == nullptr)
                    continue;
                // Descriptors that arrived go to the Message, which closes
                // them unless its owner takes them.
                if (op->kind == OpKind::receive && copy.res >= 0)
                    op->message->collect_received_fds();
                if (op->kind == OpKind::multishot) {
                    // No callback: deliver() only closes what came and
                    // returns the buffer.
                    op->received = nullptr;
                    deliver(*op, copy);
                    if ((copy.flags & IORING_CQE_F_MORE) != 0)
                        continue;
                }
                if (op->kind == OpKind::command)
                    --commands_;
                release(*op);
            }
        }
    }
    io_uring_queue_exit(&ring_);
    if (buffer_ring_ != nullptr)
        munmap(buffer_ring_, buffer_map_bytes_);
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
    std::uint32_t index = 0;
    if (!free_ops_.empty()) {
        index = free_ops_.back();
        free_ops_.pop_back();
    } else {
        index = static_cast<std::uint32_t>(ops_.size());
        ops_.emplace_back();
    }
    Op& op = ops_[index];
    ++op.generation;
    op.id = (static_cast<OpId>(op.generation) << 32) | (static_cast<OpId>(index) + 1);
    op.kind = kind;
    ++live_;
    io_uring_sqe_set_data64(sqe, op.id);
    return {op.id, &op};
}

Reactor::Op* Reactor::find_op(OpId id)
{
    const std::uint64_t index = (id & 0xffffffffu) - 1;
    if (id == 0 || index >= ops_.size() || ops_[index].id != id)
        return nullptr;
    return &ops_[index];
}

void Reactor::release(Op& op)
{
    const auto index = static_cast<std::uint32_t>((op.id & 0xffffffffu) - 1);
    op.id = 0;
    op.done = nullptr;
    op.counted = nullptr;
    op.received = nullptr;
    op.message = nullptr;
    --live_;
    free_ops_.push_back(index);
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

SysResult<OpId> Reactor::recv_multishot(int fd, ReceiveCompletion done)
{
    if (stopping_)
        return std::unexpected(-ECANCELED);
    if (buffer_ring_ == nullptr)
        return std::unexpected(-EOPNOTSUPP);
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr)
        return std::unexpected(-EBUSY);
    io_uring_prep_recvmsg_multishot(sqe, fd, &multishot_header_, MSG_CMSG_CLOEXEC);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = 0;
    auto [id, op] = track(sqe, OpKind::multishot);
    op->received = std::move(done);
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
    const Op* op = find_op(id);
    if (op == nullptr || op->kind == OpKind::internal || op->kind == OpKind::command ||
        id == wake_id_)
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
    // Swapped with a kept vector: no allocation once both have grown.
    {
        std::lock_guard lock(posted_mutex_);
        running_.swap(posted_);
    }
    for (auto& fn : running_)
        fn();
    running_.clear();
}

void Reactor::deliver(Op& op, const io_uring_cqe& cqe)
{
    Received message;
    message.more = (cqe.flags & IORING_CQE_F_MORE) != 0;
    const bool has_buffer = (cqe.flags & IORING_CQE_F_BUFFER) != 0;
    const unsigned buffer = cqe.flags >> IORING_CQE_BUFFER_SHIFT;
    if (cqe.res < 0 || !has_buffer) {
        message.res = cqe.res < 0 ? cqe.res : -EIO;
        message.more = message.more && cqe.res >= 0;
    } else if (io_uring_recvmsg_out* out =
                   io_uring_recvmsg_validate(buffer_memory_ + buffer_stride_ * buffer, cqe.res,
                                             &multishot_header_);
               out == nullptr) {
        message.res = -EIO;
    } else {
        message.truncated = (out->flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
        const auto length = static_cast<std::size_t>(
            io_uring_recvmsg_payload_length(out, cqe.res, &multishot_header_));
        message.bytes = std::span(
            static_cast<const std::byte*>(io_uring_recvmsg_payload(out, &multishot_header_)), length);
        message.res = static_cast<int>(length);
        for (cmsghdr* cmsg = io_uring_recvmsg_cmsg_firsthdr(out, &multishot_header_); cmsg != nullptr;
             cmsg = io_uring_recvmsg_cmsg_nexthdr(out, &multishot_header_, cmsg)) {
            if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
                continue;
            const std::size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (std::size_t i = 0; i < count; ++i) {
                int fd = -1;
                std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
                if (message.fd_count < message.fds.size())
                    message.fds[message.fd_count++] = fd;
                else
                    ::close(fd);
            }
        }
    }
    if (op.received)
        op.received(message);
    for (std::size_t i = 0; i < message.fd_count; ++i)
        ::close(message.fds[i]);
    // The message was copied out (or dropped): its buffer is free again.
    if (has_buffer)
        give_back_buffer(buffer);
}

void Reactor::complete(const io_uring_cqe& cqe)
{
    Op* found = find_op(io_uring_cqe_get_data64(&cqe));
    if (found == nullptr)
        return;  // not ours: cannot happen, every SQE is tracked
    Op& op = *found;
    if (op.kind == OpKind::multishot) {
        // Invariant: the slot stays taken while F_MORE, and a deque keeps
        // `op` in place whatever the callback starts.
        if ((cqe.flags & IORING_CQE_F_MORE) != 0) {
            deliver(op, cqe);
            return;
        }
        // The last one: the slot is free before the callback may re-arm.
        Op last;
        last.received = std::move(op.received);
        release(op);
        deliver(last, cqe);
        return;
    }
    if (op.kind == OpKind::command)
        --commands_;
    if (op.kind == OpKind::receive && cqe.res >= 0)
        op.message->collect_received_fds();
    if (op.kind == OpKind::counter) {
        CounterCompletion counted = std::move(op.counted);
        const std::uint64_t count = op.count;
        release(op);
        if (counted)
            counted(cqe.res, cqe.res == sizeof(count) ? count : 0);
        return;
    }
    Completion done = std::move(op.done);
    release(op);
    if (done)
        done(cqe.res);
}

int Reactor::begin_loop()
{
    if (looping_)
        return 0;
    if (ring_disabled_) {
        // liburing 2.3 declares io_uring_enable_rings but does not export it.
        if (syscall(__NR_io_uring_register, ring_.ring_fd, IORING_REGISTER_ENABLE_RINGS, nullptr, 0) < 0)
            return -errno;
        ring_disabled_ = false;
    }
    arm_wake_read();
    looping_ = true;
    return 0;
}

void Reactor::reap_ready()
{
    io_uring_cqe* cqe = nullptr;
    while (io_uring_peek_cqe(&ring_, &cqe) == 0) {
        const io_uring_cqe copy = *cqe;
        // Seen before the callback: the slot is free for what it starts.
        io_uring_cqe_seen(&ring_, cqe);
        complete(copy);
    }
}

bool Reactor::run_until(const std::function<bool()>& done, std::uint64_t deadline_ns)
{
    if (begin_loop() < 0)
        return false;
    while (!done()) {
        const std::uint64_t now = monotonic_now_ns();
        if (now >= deadline_ns)
            return false;
        const std::uint64_t left = deadline_ns - now;
        __kernel_timespec wait{static_cast<long long>(left / 1'000'000'000u),
                               static_cast<long long>(left % 1'000'000'000u)};
        io_uring_cqe* cqe = nullptr;
        const int ret = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &wait, nullptr);
        if (ret < 0 && ret != -EINTR && ret != -ETIME && ret != -EBUSY)
            return false;
        reap_ready();
    }
    return true;
}

int Reactor::run()
{
    if (const int ret = begin_loop(); ret < 0)
        return ret;
    // Stopped: every operation drained but parked uring_cmds (abandoned).
    while (!(stopping_ && live_ == commands_)) {
        // The one place the reactor blocks: io_uring_enter(GETEVENTS).
        const int ret = io_uring_submit_and_wait(&ring_, 1);
        if (ret < 0 && ret != -EINTR && ret != -ETIME && ret != -EBUSY)
            return ret;
        reap_ready();
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
