// host_proxy.cpp - contexts in vaccel-cuda-host processes (host_proxy.hpp).
#include "host_proxy.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <thread>

#include "host_protocol.hpp"
#include "program.hpp"
#include "scheduler.hpp"
#include "slicing.hpp"
#include "vaccel/backend/cuda.hpp"

namespace vaccel::backend::cuda {
namespace {

using host::Op;
using host::Reader;
using host::Writer;

Error host_gone(std::string_view how)
{
    return Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE)
        .with_note(fmt::format("the CUDA host process of this context {}; its work is lost and "
                               "the context takes no more; destroy it and create a new one "
                               "(the device and other contexts are unaffected)",
                               how));
}

class ProxyBuffer;

// How an event ended, as a host reported it.
struct Outcome {
    EventState state;
    Error failure;
};

class HostChannel;

// One submission, as the daemon sees it, from just before its request is
// sent until the engine is told (or it is withdrawn, refused). Accepted, it
// is an item of the device's scheduler (scheduler.hpp), which releases it.
struct EventRecord final : Item {
    void release() override;
    std::weak_ptr<HostChannel> host;
    std::uint64_t id = 0;  // the event's, and its request's
    std::shared_ptr<Scheduler> scheduler;

    std::atomic<std::uint32_t> state{VACCEL_EVENT_PENDING};
    Error failure;  // written before `state` leaves pending
    std::shared_ptr<EventSink> sink;
    struct Held {
        ProxyBuffer* buffer;
        bool writes;
    };
    std::vector<Held> held;
    // Guarded by the channel's mutex_: the reply accepted the submission;
    // a completion that came before that reply.
    bool accepted = false;
    std::optional<Outcome> early;
    // Segment ends (Op::segment_ended) that came before that reply; the
    // submitter tells the scheduler of them once it knows the segments.
    std::uint32_t early_segments = 0;
};

// The kinds of call, each with its deadline (HostDeadlines).
enum class Bound { load, memory, brief };

std::string_view op_name(Op op)
{
    switch (op) {
    case Op::allocate: return "an allocation";
    case Op::free_buffer: return "a free";
    case Op::write: return "a write";
    case Op::read: return "a read";
    case Op::payload: return "a program payload";
    case Op::load: return "a program load";
    case Op::unload: return "an unload";
    case Op::queue_create: return "a queue creation";
    case Op::queue_destroy: return "a queue destruction";
    case Op::gate_create: return "a gate creation";
    case Op::gate_raise: return "a gate raise";
    case Op::gate_destroy: return "a gate destruction";
    case Op::submit: return "a submission";
    case Op::launch: return "a launch";
    case Op::event_destroy: return "an event destruction";
    case Op::cancel: return "a cancel";
    case Op::release: return "a release";
    case Op::end_held: return "an end of held work";
    default: return "a request";
    }
}

// The daemon's end of one host: requests and replies, completions, death.
// A host is not trusted: a call that passes its deadline, a send the host
// does not take in time, and any message that breaks the protocol (a
// reply nobody asked for, a completion of an event it is not running, a
// field out of range) fail the host: fail_host() kills it (SIGKILL) and
// the reader thread reaps it and fails its events with the reason.
// Locking: `mutex_` guards the pending replies, the event records and
// `dead_`; sends are serialised by `send_mutex_`; `pid_mutex_` orders a kill
// before the reap (a pid is never signalled once reaped, so never reused);
// `window_mutex` is held across one bulk transfer (the window is one
// buffer).
// Invariant (in-flight accounting): what a submission holds (its buffers'
// readers/writers, the device's events_in_flight through its sink, the
// events count) is given back exactly once, by the one thread that takes
// its record out of `events_` under `mutex_`: complete() or died() for an
// accepted record (through finish(), which also tells the engine, once),
// withdraw() for a record never accepted (refused, the engine is never
// told; its caller gives back the holds). A completion that comes before
// its submission's reply is kept on the record (`early`); accept() takes
// the record out and its caller delivers it; a second one, or one for an event not in `events_` (completed
// already, refused, never submitted) is a protocol violation. died() fails
// only accepted records: an unaccepted one belongs to the submit() still
// waiting for its reply, which withdraws it.
class HostChannel {
public:
    HostChannel(int fd, pid_t pid, std::byte* w, HostDeadlines d)
        : window(w), deadlines(d), fd_(fd), pid_(pid)
    {
    }
    ~HostChannel();
    HostChannel(const HostChannel&) = delete;
    HostChannel& operator=(const HostChannel&) = delete;

    void start() { reader_ = std::thread([this] { read_loop(); }); }
    // Sends a request and waits for its reply, at most the deadline of
    // `bound`; the reply's body (after the ok byte), or the refusal. A
    // malformed reply or refusal, or none in time, fails the host.
    Result<std::vector<std::byte>> call(const Writer& request, std::uint64_t id, Bound bound);
    Status call_status(const Writer& request, std::uint64_t id, Bound bound);
    // Sends without waiting for a reply (event_destroy, release, end_held),
    // within `limit` (default: deadlines.brief).
    void post(const Writer& request, std::optional<std::chrono::milliseconds> limit = {});
    std::uint64_t next_id() { return ids_.fetch_add(1); }
    // Registers a submission before its request is sent.
    void track(std::uint64_t id, std::shared_ptr<EventRecord> record);
    // The reply accepted submission `id`: a completion that came first, to
    // deliver now; refused when the host failed meanwhile (then withdraw).
    // Segment ends that came first are left on the record (early_segments)
    // for the caller, who alone reads them after this.
    Result<std::optional<Outcome>> accept(std::uint64_t id);
    // Takes back a submission that was not accepted; true when the host had
    // completed it all the same (a contradiction the caller fails it for).
    bool withdraw(std::uint64_t id);
    // Accepted events not yet ended (a bound for a cancel's count).
    std::uint64_t accepted_pending();
    Status usable();
    // Ends the host for `why` (kept only if it is the first reason); the
    // reason every later call is refused with.
    Error fail_host(Error why);

    std::byte* const window;
    std::mutex window_mutex;
    const HostDeadlines deadlines;

private:
    void read_loop();
    void complete(std::uint64_t id, Reader& r);
    void segment_ended(std::uint64_t id, Reader& r);
    void reply(std::uint64_t id, std::vector<std::byte> packet);
    void died();
    // Waits for the host to end and reaps it: at once when it was killed,
    // else up to `grace`, then kills it. How it ended.
    std::string reap(std::chrono::milliseconds grace);

    int fd_;
    std::atomic<std::uint64_t> ids_{1};
    std::mutex send_mutex_;
    std::mutex mutex_;
    std::condition_variable replied_;
    std::map<std::uint64_t, std::optional<std::vector<std::byte>>> replies_;
    std::map<std::uint64_t, std::shared_ptr<EventRecord>> events_;
    std::optional<Error> dead_;
    std::mutex pid_mutex_;
    pid_t pid_;           // -1 once reaped
    bool killed_ = false;  // SIGKILL sent
    std::thread reader_;
};

void finish(EventRecord& record, EventState state, Error failure);

Error malformed(std::string_view what)
{
    return host_gone(fmt::format("answered {} with a malformed message and was killed", what));
}

HostChannel::~HostChannel()
{
    ::shutdown(fd_, SHUT_RDWR);  // the host sees the end and exits
    if (reader_.joinable())
        reader_.join();  // it reaps the host
    else if (pid_ > 0)
        (void)reap(std::chrono::seconds(5));
    ::close(fd_);
    munmap(window, host::window_bytes);
}

std::string HostChannel::reap(std::chrono::milliseconds grace)
{
    bool killed;
    pid_t pid;
    {
        std::lock_guard lock(pid_mutex_);
        killed = killed_;
        pid = pid_;
    }
    if (pid <= 0) return "ended";
    siginfo_t info{};
    if (!killed) {
        // It exits by itself once its socket closes; one that does not
        // within `grace` is killed.
        const auto until = std::chrono::steady_clock::now() + grace;
        bool ended = false;
        for (;;) {
            info.si_pid = 0;
            if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
                if (errno == EINTR) continue;
                ended = true;  // not a child any more: never signal that pid
                break;
            }
            if (info.si_pid == pid) {
                ended = true;
                break;
            }
            if (std::chrono::steady_clock::now() >= until) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (!ended) {
            std::lock_guard lock(pid_mutex_);
            kill(pid, SIGKILL);
            killed_ = true;
        }
    }
    // Not reaped yet (WNOWAIT), so a kill racing this wait still hits the
    // host (a zombie) and never a process that took its pid.
    while (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
    std::lock_guard lock(pid_mutex_);
    int status = 0;
    const pid_t reaped = waitpid(pid, &status, 0);
    pid_ = -1;
    if (reaped != pid) return "ended";
    if (WIFSIGNALED(status)) return fmt::format("was killed by signal {}", WTERMSIG(status));
    if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
    return "ended";
}

Error HostChannel::fail_host(Error why)
{
    Error first;
    {
        std::lock_guard lock(mutex_);
        if (!dead_) dead_ = std::move(why);
        first = *dead_;
    }
    replied_.notify_all();
    {
        std::lock_guard lock(pid_mutex_);
        if (pid_ > 0 && !killed_) {
            kill(pid_, SIGKILL);
            killed_ = true;
        }
    }
    ::shutdown(fd_, SHUT_RDWR);  // the reader wakes, reaps the host and fails its events
    return first;
}

Status HostChannel::usable()
{
    std::lock_guard lock(mutex_);
    if (dead_) return fail(*dead_);
    return {};
}

void HostChannel::post(const Writer& request, std::optional<std::chrono::milliseconds> limit)
{
    const std::chrono::milliseconds bound = limit.value_or(deadlines.brief);
    const auto deadline = std::chrono::steady_clock::now() + bound;
    host::Sent sent;
    {
        std::lock_guard lock(send_mutex_);
        sent = host::send_packet_before(fd_, request.bytes(), deadline);
    }
    if (sent == host::Sent::expired) {
        Reader r(request.bytes());
        (void)fail_host(host_gone(fmt::format("did not take {} within {} ms and was killed",
                                              op_name(r.get<host::Header>().op),
                                              bound.count())));
    }
}

// A release is a few bytes to a host that reads its socket all the time; one
// that does not take it within a second is hung (the scheduler's lock is
// held meanwhile, so every tenant of the device waits for this send).
void EventRecord::release()
{
    auto channel = host.lock();
    if (!channel) return;  // gone: died() fails this record
    Writer w(Op::release, id);
    w.put(id);
    channel->post(w, std::min(channel->deadlines.brief, std::chrono::milliseconds(1000)));
}

Result<std::vector<std::byte>> HostChannel::call(const Writer& request, std::uint64_t id,
                                                 Bound bound)
{
    const std::chrono::milliseconds limit = bound == Bound::load     ? deadlines.load
                                            : bound == Bound::memory ? deadlines.memory
                                                                     : deadlines.brief;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    const Op op = Reader(request.bytes()).get<host::Header>().op;
    {
        std::lock_guard lock(mutex_);
        if (dead_) return fail(*dead_);
        replies_[id];
    }
    host::Sent sent;
    {
        std::lock_guard lock(send_mutex_);
        sent = host::send_packet_before(fd_, request.bytes(), deadline);
    }
    if (sent != host::Sent::ok) {
        {
            std::lock_guard lock(mutex_);
            replies_.erase(id);
        }
        return fail(fail_host(host_gone(
            sent == host::Sent::expired
                ? fmt::format("did not take {} within {} ms and was killed", op_name(op),
                              limit.count())
                : std::string("cannot be reached"))));
    }
    std::optional<std::vector<std::byte>> packet;
    {
        std::unique_lock lock(mutex_);
        const bool answered = replied_.wait_until(lock, deadline, [&] {
            return replies_[id].has_value() || dead_.has_value();
        });
        packet = std::move(replies_[id]);
        replies_.erase(id);
        if (!packet && dead_) return fail(*dead_);
        if (!answered && !packet) {
            lock.unlock();
            return fail(fail_host(host_gone(fmt::format(
                "did not answer {} within {} ms and was killed", op_name(op), limit.count()))));
        }
    }
    Reader r(*packet);
    (void)r.get<host::Header>();
    const auto ok = r.get<std::uint8_t>();
    if (ok == 0 && r.ok()) {
        Error e = r.error();
        if (!r.done() || !host::well_formed(e)) return fail(fail_host(malformed(op_name(op))));
        return fail(std::move(e));
    }
    if (ok != 1 || !r.ok()) return fail(fail_host(malformed(op_name(op))));
    std::vector<std::byte> body(packet->begin() + sizeof(host::Header) + 1, packet->end());
    return body;
}

Status HostChannel::call_status(const Writer& request, std::uint64_t id, Bound bound)
{
    auto reply = call(request, id, bound);
    if (!reply) return fail(reply.error());
    if (!reply->empty()) {
        Reader r(request.bytes());
        return fail(fail_host(malformed(op_name(r.get<host::Header>().op))));
    }
    return {};
}

void HostChannel::track(std::uint64_t id, std::shared_ptr<EventRecord> record)
{
    std::lock_guard lock(mutex_);
    events_[id] = std::move(record);
}

Result<std::optional<Outcome>> HostChannel::accept(std::uint64_t id)
{
    std::lock_guard lock(mutex_);
    if (dead_) return fail(*dead_);
    auto it = events_.find(id);
    if (it == events_.end()) return fail(Error::of(Errc::external).with_note("no such event"));
    it->second->accepted = true;
    std::optional<Outcome> early = std::move(it->second->early);
    if (early) events_.erase(it);  // ended already: the caller delivers it
    return early;
}

bool HostChannel::withdraw(std::uint64_t id)
{
    std::lock_guard lock(mutex_);
    auto it = events_.find(id);
    if (it == events_.end()) return false;
    const bool completed = it->second->early.has_value();
    events_.erase(it);
    return completed;
}

std::uint64_t HostChannel::accepted_pending()
{
    std::lock_guard lock(mutex_);
    return static_cast<std::uint64_t>(std::count_if(
        events_.begin(), events_.end(), [](const auto& e) { return e.second->accepted; }));
}

void HostChannel::complete(std::uint64_t id, Reader& r)
{
    const auto state = r.get<std::uint32_t>();
    Error failure = r.error();
    const bool ended = state == VACCEL_EVENT_COMPLETE || state == VACCEL_EVENT_FAILED ||
                       state == VACCEL_EVENT_CANCELLED;
    if (!r.done() || !ended ||
        (state != VACCEL_EVENT_COMPLETE && !host::well_formed(failure))) {
        (void)fail_host(
            host_gone(fmt::format("sent a malformed completion of event {} and was killed", id)));
        return;
    }
    std::shared_ptr<EventRecord> record;
    {
        std::lock_guard lock(mutex_);
        if (dead_) return;
        auto it = events_.find(id);
        if (it == events_.end() || it->second->early) {
            dead_ = host_gone(fmt::format("completed event {}, which it was not running "
                                          "(completed twice, or refused), and was killed",
                                          id));
        } else if (!it->second->accepted) {
            it->second->early = Outcome{static_cast<EventState>(state), std::move(failure)};
            return;  // accept() delivers it
        } else {
            record = std::move(it->second);
            events_.erase(it);
        }
    }
    if (!record) {
        (void)fail_host(Error{});  // dead_ is set: this only kills
        return;
    }
    finish(*record, static_cast<EventState>(state), std::move(failure));
}

void HostChannel::segment_ended(std::uint64_t id, Reader& r)
{
    // The index is not trusted: the scheduler counts the segments it released
    // and refuses an end past them (Scheduler::segment_ended).
    (void)r.get<std::uint32_t>();
    if (!r.done()) {
        (void)fail_host(host_gone(
            fmt::format("sent a malformed segment end of event {} and was killed", id)));
        return;
    }
    std::shared_ptr<EventRecord> record;
    {
        std::lock_guard lock(mutex_);
        if (dead_) return;
        auto it = events_.find(id);
        if (it == events_.end() || it->second->early) {
            dead_ = host_gone(fmt::format("ended a segment of event {}, which it was not "
                                          "running, and was killed",
                                          id));
        } else if (!it->second->accepted) {
            ++it->second->early_segments;  // its submitter tells the scheduler
            return;
        } else {
            record = it->second;
        }
    }
    if (record && record->scheduler && record->scheduler->segment_ended(*record)) return;
    if (record)
        (void)fail_host(host_gone(fmt::format("ended a segment of event {} that was not on the "
                                              "device (more than it was released, or its "
                                              "last) and was killed",
                                              id)));
    else
        (void)fail_host(Error{});  // dead_ is set: this only kills
}

void HostChannel::reply(std::uint64_t id, std::vector<std::byte> packet)
{
    {
        std::lock_guard lock(mutex_);
        if (dead_) return;
        auto it = replies_.find(id);
        if (it != replies_.end() && !it->second) {
            it->second = std::move(packet);
            replied_.notify_all();
            return;
        }
        dead_ = host_gone(fmt::format("answered request {}, which was not waiting for an "
                                      "answer, and was killed",
                                      id));
    }
    (void)fail_host(Error{});
}

void HostChannel::died()
{
    // The socket closed: the host ended, or was told to (its socket shut
    // down, or killed); reap it so the error can say how it ended.
    const std::string how = reap(std::chrono::seconds(5));
    std::vector<std::shared_ptr<EventRecord>> orphans;
    {
        std::lock_guard lock(mutex_);
        if (!dead_) dead_ = host_gone(how);
        for (auto it = events_.begin(); it != events_.end();) {
            if (it->second->accepted) {
                orphans.push_back(std::move(it->second));
                it = events_.erase(it);
            } else {
                ++it;  // its submit() withdraws it
            }
        }
    }
    replied_.notify_all();
    for (auto& record : orphans) finish(*record, EventState::failed, *dead_);
}

void HostChannel::read_loop()
{
    while (auto packet = host::receive_packet(fd_)) {
        if (!usable()) break;  // failed: nothing it says counts any more
        Reader r(*packet);
        const auto header = r.get<host::Header>();
        if (r.ok() && header.op == Op::completed) {
            complete(header.id, r);
        } else if (r.ok() && header.op == Op::segment_ended) {
            segment_ended(header.id, r);
        } else if (r.ok() && header.op == Op::reply) {
            reply(header.id, std::move(*packet));
        } else {
            (void)fail_host(host_gone("sent a message that is neither a reply, a completion "
                                      "nor a segment's end, and was killed"));
        }
    }
    died();
}

// The proxy's objects: ids on the host, and what the engine asks without a request.
struct ProxyContext final : Context {
    std::shared_ptr<HostChannel> host;
    std::shared_ptr<sched::FlowTag> flow;  // its tenant's flow (scheduler.hpp)
    std::atomic<std::uint64_t> buffers{0}, programs{0}, queues{0}, gates{0};
    // The host's buffer identities, for refusals that name a buffer.
    std::mutex identities_mutex;
    std::map<std::uint64_t, std::uint64_t> identities;  // host's -> ours
};

class ProxyBuffer final : public Buffer {
public:
    ProxyBuffer(ProxyContext& o, const BufferDesc& d, std::uint64_t i) : owner(o), id(i), desc_(d) {}
    const BufferDesc& desc() const override { return desc_; }
    std::uint64_t in_flight() const override { return readers.load() + writers.load(); }
    std::uint64_t identity() const override { return serial; }

    ProxyContext& owner;
    std::uint64_t id;
    std::uint64_t serial = 0;
    std::uint64_t allocation_bytes = 0;
    std::uint64_t host_identity = 0;  // the host's Buffer::identity()
    std::atomic<std::uint64_t> readers{0}, writers{0};

private:
    BufferDesc desc_;
};

struct ProxyProgram final : Program {
    ProxyContext* owner = nullptr;
    std::uint64_t id = 0;
    std::uint32_t format_ = 0;
    std::uint32_t inputs = 0;
    std::uint64_t bytes = 0;  // the host's program's device_bytes()
    std::vector<SlotInfo> slots_;
    std::span<const SlotInfo> slots() const override { return slots_; }
    std::uint32_t input_count() const override { return inputs; }
    std::uint32_t format() const override { return format_; }
    std::uint64_t device_bytes() const override { return bytes; }
};

struct ProxyQueue final : Queue {
    ProxyContext* owner = nullptr;
    std::uint64_t id = 0;
};

// The gate's value and its waiters are the daemon's: work after a gate is
// accepted by its host like any other and released by the scheduler once the
// gate reaches its value (host_protocol.hpp).
struct ProxyGate final : Gate {
    ProxyContext* owner = nullptr;
    std::uint64_t id = 0;
    std::atomic<std::uint64_t> value{0};
    struct Waiter {
        std::shared_ptr<EventRecord> record;
        std::uint64_t value;
    };
    std::mutex mutex;             // guards `waiters` and raises of `value`
    std::vector<Waiter> waiters;  // in arrival order
};

struct ProxyEvent final : Event {
    std::shared_ptr<EventRecord> record;
    std::shared_ptr<HostChannel> host;
    std::uint64_t id = 0;
};

void finish(EventRecord& record, EventState state, Error failure)
{
    // The device is free of it before its sink can submit more.
    if (record.scheduler) record.scheduler->ended(record);
    record.failure = std::move(failure);
    for (const auto& h : record.held) (h.writes ? h.buffer->writers : h.buffer->readers).fetch_sub(1);
    record.held.clear();
    record.state.store(static_cast<std::uint32_t>(state), std::memory_order_release);
    if (auto sink = std::move(record.sink)) {
        EventStatus status;
        status.state = state;
        if (state != EventState::complete) status.failure = record.failure;
        sink->completed(status);
    }
}

// Starts a host for `uuid`; its socket and window, or why not.
struct Started {
    int fd;
    pid_t pid;
    std::byte* window;
};
Result<Started> start_host(const std::filesystem::path& program, const std::string& uuid,
                           const std::filesystem::path& state_dir, Fp32Math fp32_math,
                           std::uint32_t slice_us)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return fail(Error::of(Errc::external).with_note("socketpair for a CUDA host failed"));
    // Sealed at its size before the host exists: a host cannot truncate the
    // window under the daemon's mapping (a read of it would be SIGBUS here).
    const int memory = memfd_create("vaccel-cuda-window", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (memory < 0 || ftruncate(memory, static_cast<off_t>(host::window_bytes)) != 0 ||
        fcntl(memory, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        ::close(sv[0]);
        ::close(sv[1]);
        if (memory >= 0) ::close(memory);
        return fail(Error::of(Errc::out_of_memory).with_note("the CUDA host's transfer window"));
    }
    void* window = mmap(nullptr, host::window_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memory, 0);
    const std::string path = program.string(), dir = state_dir.string();
    const std::string slice = std::to_string(slice_us);
    pid_t pid = window == MAP_FAILED ? -1 : fork();
    if (pid == 0) {
        // Only async-signal-safe calls until exec: move both fds above 9,
        // then onto 3 and 4 (dup2 leaves the copies without CLOEXEC).
        const int s = fcntl(sv[1], F_DUPFD, 10), m = fcntl(memory, F_DUPFD, 10);
        if (s < 0 || m < 0 || dup2(s, 3) < 0 || dup2(m, 4) < 0) _exit(127);
        // STATE_DIR may be empty (nothing kept); FP32_MATH as the config
        // spells it; SLICE_US a decimal number.
        const char* argv[] = {path.c_str(), "3", "4", uuid.c_str(), dir.c_str(),
                              fp32_math == Fp32Math::tf32 ? "tf32" : "fp32", slice.c_str(),
                              nullptr};
        execv(path.c_str(), const_cast<char* const*>(argv));
        _exit(127);
    }
    ::close(sv[1]);
    ::close(memory);
    if (pid < 0) {
        ::close(sv[0]);
        if (window != MAP_FAILED) munmap(window, host::window_bytes);
        return fail(Error::of(Errc::external).with_note("starting a CUDA host process failed"));
    }
    return Started{sv[0], pid, static_cast<std::byte*>(window)};
}

class ProxyBackend final : public Backend {
public:
    ProxyBackend(std::shared_ptr<DeviceCore> core, std::filesystem::path program,
                 HostDeadlines deadlines)
        : core_(std::move(core)),
          program_(std::move(program)),
          uuid_(cuda_uuid_text(core_->info)),
          deadlines_(deadlines)
    {
    }

    const vaccel_device_info& device_info() const override { return core_->info; }
    std::vector<tosa::CapabilityDescriptor> tosa_descriptors() const override
    {
        return {cuda_descriptor()};
    }
    DeviceState state() const override { return DeviceState::ok; }

    Result<std::unique_ptr<Context>> create_context() override
    {
        const std::uint64_t used = core_->counters.contexts.load();
        if (used >= core_->info.limits.max_contexts)
            return fail(Error::limit_hit(VACCEL_LIMIT_CONTEXTS, core_->info.limits.max_contexts,
                                         used));
        auto started = start_host(program_, uuid_, core_->options.state_dir, core_->options.fp32_math,
                                  core_->options.slice_us);
        if (!started) return fail(started.error());
        auto host = std::make_shared<HostChannel>(started->fd, started->pid, started->window,
                                                  deadlines_);
        // The hello: the host's context exists, or why not. A host that
        // says nothing within deadlines_.start is taken as failed, and
        // killed (by `host`'s end, as every host that gives no hello).
        auto hello = host::receive_packet_before(
            started->fd, std::chrono::steady_clock::now() + deadlines_.start);
        if (hello.expired) {
            return fail(host->fail_host(
                Error::of(Errc::external)
                    .with_note(fmt::format("the CUDA host {} did not start within {} ms and "
                                           "was killed; see the daemon's log for why",
                                           program_.string(), deadlines_.start.count()))));
        }
        if (!hello.packet)
            return fail(Error::of(Errc::external)
                            .with_note(fmt::format("the CUDA host {} ended before it started "
                                                   "(is it installed and executable?)",
                                                   program_.string())));
        Reader r(*hello.packet);
        const auto header = r.get<host::Header>();
        const auto ok = r.get<std::uint8_t>();
        if (header.op != Op::hello || !r.ok() || ok > 1)
            return fail(host->fail_host(
                Error::of(Errc::external).with_note("the CUDA host did not say hello")));
        if (ok == 0) {
            Error why = r.error();
            if (!r.done() || !host::well_formed(why))
                return fail(host->fail_host(malformed("its start")));
            return fail(std::move(why));
        }
        if (!r.done()) return fail(host->fail_host(malformed("its start")));
        host->start();
        auto context = std::make_unique<ProxyContext>();
        context->host = std::move(host);
        context->flow = scheduler_->own_flow();
        core_->counters.contexts.fetch_add(1);
        return std::unique_ptr<Context>(std::move(context));
    }
    Status destroy_context(std::unique_ptr<Context>& context) override
    {
        auto& c = static_cast<ProxyContext&>(*context);
        const std::uint64_t children = c.buffers + c.programs + c.queues + c.gates;
        if (children != 0)
            return fail(Error::of(Errc::busy, VACCEL_D_IN_USE, children)
                            .with_note(fmt::format("the context still owns {} buffers, {} "
                                                   "programs, {} queues and {} gates; release "
                                                   "them first",
                                                   c.buffers.load(), c.programs.load(),
                                                   c.queues.load(), c.gates.load())));
        context.reset();  // the host exits
        core_->counters.contexts.fetch_sub(1);
        return {};
    }

    // The tenant's flow is joined only before the context has queues (its
    // work so far is in its own flow); the policy applies from now on.
    void set_context_schedule(Context& context, const ContextSchedule& schedule) override
    {
        auto& c = static_cast<ProxyContext&>(context);
        ContextSchedule applied = schedule;
        if (c.queues != 0) applied.flow = c.flow->key;
        c.flow = scheduler_->flow_for(applied, c.flow);
    }
    std::optional<DeviceService> device_service() const override { return scheduler_->report(); }

    Result<std::unique_ptr<Buffer>> allocate_buffer(Context& context, const BufferDesc& desc,
                                                    BufferInfo& info) override
    {
        auto& c = static_cast<ProxyContext&>(context);
        if (c.buffers >= core_->info.limits.max_buffers)
            return fail(Error::limit_hit(VACCEL_LIMIT_BUFFERS, core_->info.limits.max_buffers,
                                         c.buffers));
        const std::uint64_t id = c.host->next_id();
        Writer w(Op::allocate, id);
        w.put(id).put(desc.bytes).put(desc.alignment).put(desc.domain).put(desc.usage).put(desc.access);
        auto reply = c.host->call(w, id, Bound::memory);
        if (!reply) return fail(reply.error());
        Reader r(*reply);
        const auto allocation_bytes = r.get<std::uint64_t>();
        const auto alignment = r.get<std::uint64_t>();
        const auto properties = r.get<std::uint32_t>();
        const auto host_identity = r.get<std::uint64_t>();
        // The host's backend gives whole 256-byte units (cuda_backend.cpp),
        // aligned as asked, with known properties, under a fresh identity.
        constexpr std::uint32_t known_properties =
            VACCEL_PROP_HOST_VISIBLE | VACCEL_PROP_DEVICE_LOCAL | VACCEL_PROP_COHERENT |
            VACCEL_PROP_DIRECT_BINDING;
        bool fresh = host_identity != 0;
        if (fresh) {
            std::lock_guard lock(c.identities_mutex);
            fresh = !c.identities.contains(host_identity);
        }
        if (!r.done() || allocation_bytes != (desc.bytes + 255) / 256 * 256 ||
            !std::has_single_bit(alignment) || alignment < desc.alignment ||
            (properties & ~known_properties) != 0 || !fresh) {
            // What it may have allocated is the host's, and goes with it.
            return fail(c.host->fail_host(malformed("an allocation")));
        }
        info.allocation_bytes = allocation_bytes;
        info.measured_alignment = alignment;
        info.properties = properties;
        auto buffer = std::make_unique<ProxyBuffer>(c, desc, id);
        buffer->serial = core_->next_identity++;
        buffer->allocation_bytes = info.allocation_bytes;
        buffer->host_identity = host_identity;
        {
            std::lock_guard lock(c.identities_mutex);
            c.identities[host_identity] = buffer->serial;
        }
        c.buffers += 1;
        core_->counters.buffers.fetch_add(1);
        core_->counters.buffer_bytes.fetch_add(info.allocation_bytes);
        return std::unique_ptr<Buffer>(std::move(buffer));
    }
    Status free_buffer(std::unique_ptr<Buffer>& buffer) override
    {
        auto& b = static_cast<ProxyBuffer&>(*buffer);
        if (b.in_flight() != 0) return fail(in_flight(b, "free"));
        const std::uint64_t id = b.owner.host->next_id();
        Writer w(Op::free_buffer, id);
        w.put(b.id);
        // A dead host freed everything already.
        if (auto ok = b.owner.host->call_status(w, id, Bound::memory);
            !ok && b.owner.host->usable())
            return fail(translate(b.owner, ok.error()));
        {
            std::lock_guard lock(b.owner.identities_mutex);
            b.owner.identities.erase(b.host_identity);
        }
        b.owner.buffers -= 1;
        core_->counters.buffers.fetch_sub(1);
        core_->counters.buffer_bytes.fetch_sub(b.allocation_bytes);
        buffer.reset();
        return {};
    }
    Status write_buffer(Buffer& buffer, std::uint64_t offset,
                        std::span<const std::byte> data) override
    {
        return transfer(static_cast<ProxyBuffer&>(buffer), offset,
                        {const_cast<std::byte*>(data.data()), data.size()}, Op::write);
    }
    Status read_buffer(Buffer& buffer, std::uint64_t offset, std::span<std::byte> data) override
    {
        return transfer(static_cast<ProxyBuffer&>(buffer), offset, data, Op::read);
    }

    Result<std::unique_ptr<Program>> load_program(Context& context,
                                                  const ProgramDesc& desc) override
    {
        auto& c = static_cast<ProxyContext&>(context);
        if (desc.payload.size() > core_->info.limits.max_artifact_bytes)
            return fail(Error::limit_hit(VACCEL_LIMIT_ARTIFACT_BYTES,
                                         core_->info.limits.max_artifact_bytes,
                                         desc.payload.size()));
        if (c.programs >= core_->info.limits.max_programs)
            return fail(Error::limit_hit(VACCEL_LIMIT_PROGRAMS, core_->info.limits.max_programs,
                                         c.programs));
        std::lock_guard window(c.host->window_mutex);  // the payload, then the load
        for (std::size_t at = 0; at < desc.payload.size(); at += host::window_bytes) {
            const std::size_t n = std::min<std::size_t>(host::window_bytes, desc.payload.size() - at);
            std::memcpy(c.host->window, desc.payload.data() + at, n);
            const std::uint64_t id = c.host->next_id();
            Writer w(Op::payload, id);
            w.put(static_cast<std::uint64_t>(n));
            if (auto ok = c.host->call_status(w, id, Bound::brief); !ok) return fail(ok.error());
        }
        const std::uint64_t id = c.host->next_id();
        Writer w(Op::load, id);
        w.put(id).put(desc.format).put(desc.target).put(desc.memory_budget);
        auto reply = c.host->call(w, id, Bound::load);
        if (!reply) return fail(reply.error());
        Reader r(*reply);
        auto program = std::make_unique<ProxyProgram>();
        program->owner = &c;
        program->id = id;
        program->format_ = r.get<std::uint32_t>();
        program->inputs = r.get<std::uint32_t>();
        program->bytes = r.get<std::uint64_t>();
        const auto count = r.get<std::uint32_t>();
        // Each slot's shape is a rank of at most VACCEL_MAX_RANK dimensions,
        // none negative; inputs come first and are counted right; nothing is
        // larger than a buffer may be, or the program than its budget.
        bool sane = r.ok() && program->format_ == desc.format &&
                    program->bytes <= desc.memory_budget &&
                    program->bytes <= core_->info.limits.max_memory_bytes &&
                    count <= host::max_message / 24;  // a slot is at least 24 bytes
        std::uint32_t inputs = 0;
        for (std::uint32_t i = 0; i < count && sane; ++i) {
            SlotInfo s;
            s.role = r.get<std::uint32_t>();
            s.dtype = r.get<std::uint32_t>();
            s.bytes = r.get<std::uint64_t>();
            const auto rank = r.get<std::uint32_t>();
            sane = r.ok() && rank <= VACCEL_MAX_RANK &&
                   (s.role == VACCEL_SLOT_INPUT || s.role == VACCEL_SLOT_OUTPUT) &&
                   (s.role == VACCEL_SLOT_OUTPUT || inputs == i) &&
                   s.bytes <= core_->info.limits.max_buffer_bytes;
            for (std::uint32_t d = 0; d < rank && sane; ++d) {
                s.shape.push_back(r.get<std::int64_t>());
                sane = s.shape.back() >= 0;
            }
            s.name = r.text();
            inputs += s.role == VACCEL_SLOT_INPUT ? 1 : 0;
            program->slots_.push_back(std::move(s));
        }
        if (!sane || !r.done() || inputs != program->inputs)
            return fail(c.host->fail_host(malformed("a program load")));
        c.programs += 1;
        core_->counters.programs.fetch_add(1);
        return std::unique_ptr<Program>(std::move(program));
    }
    Status unload_program(std::unique_ptr<Program>& program) override
    {
        auto& p = static_cast<ProxyProgram&>(*program);
        if (auto ok = release(*p.owner, Op::unload, p.id, Bound::memory); !ok) return ok;
        p.owner->programs -= 1;
        core_->counters.programs.fetch_sub(1);
        program.reset();
        return {};
    }

    Result<std::unique_ptr<Queue>> create_queue(Context& context) override
    {
        auto& c = static_cast<ProxyContext&>(context);
        auto queue = std::make_unique<ProxyQueue>();
        queue->owner = &c;
        queue->id = c.host->next_id();
        Writer w(Op::queue_create, queue->id);
        w.put(queue->id);
        if (auto ok = c.host->call_status(w, queue->id, Bound::brief); !ok)
            return fail(ok.error());
        c.queues += 1;
        core_->counters.queues.fetch_add(1);
        return std::unique_ptr<Queue>(std::move(queue));
    }
    Status destroy_queue(std::unique_ptr<Queue>& queue) override
    {
        auto& q = static_cast<ProxyQueue&>(*queue);
        if (auto ok = release(*q.owner, Op::queue_destroy, q.id, Bound::brief); !ok) return ok;
        q.owner->queues -= 1;
        core_->counters.queues.fetch_sub(1);
        queue.reset();
        return {};
    }

    Result<std::unique_ptr<Gate>> create_gate(Context& context) override
    {
        auto& c = static_cast<ProxyContext&>(context);
        auto gate = std::make_unique<ProxyGate>();
        gate->owner = &c;
        gate->id = c.host->next_id();
        Writer w(Op::gate_create, gate->id);
        w.put(gate->id);
        if (auto ok = c.host->call_status(w, gate->id, Bound::brief); !ok)
            return fail(ok.error());
        c.gates += 1;
        core_->counters.gates.fetch_add(1);
        return std::unique_ptr<Gate>(std::move(gate));
    }
    Status raise_gate(Gate& gate, std::uint64_t value) override
    {
        auto& g = static_cast<ProxyGate&>(gate);
        const std::uint64_t id = g.owner->host->next_id();
        Writer w(Op::gate_raise, id);
        w.put(g.id).put(value);
        if (auto ok = g.owner->host->call_status(w, id, Bound::brief); !ok) return ok;
        std::vector<ProxyGate::Waiter> reached;
        {
            std::lock_guard lock(g.mutex);
            if (value > g.value.load()) g.value.store(value);
            auto moved = std::ranges::stable_partition(
                g.waiters, [&](const ProxyGate::Waiter& w) { return w.value > value; });
            reached.assign(std::make_move_iterator(moved.begin()),
                           std::make_move_iterator(moved.end()));
            g.waiters.erase(moved.begin(), moved.end());
        }
        for (ProxyGate::Waiter& waiter : reached) scheduler_->enqueue(std::move(waiter.record));
        return {};
    }
    std::uint64_t gate_value(const Gate& gate) const override
    {
        return static_cast<const ProxyGate&>(gate).value.load();
    }
    Status destroy_gate(std::unique_ptr<Gate>& gate) override
    {
        auto& g = static_cast<ProxyGate&>(*gate);
        const std::uint64_t id = g.owner->host->next_id();
        Writer w(Op::gate_destroy, id);
        w.put(g.id);
        // What waited ends unstarted (its host says so; a dead host has
        // failed it already, and one that ended is no longer held). The
        // host serves in order and sends those completions before its
        // answer to the gate's destruction, so they are in when it returns.
        std::vector<ProxyGate::Waiter> waiting;
        {
            std::lock_guard lock(g.mutex);
            waiting.swap(g.waiters);
        }
        for (const ProxyGate::Waiter& waiter : waiting) {
            Writer end(Op::end_held, waiter.record->id);
            end.put(waiter.record->id)
                .put(static_cast<std::uint32_t>(VACCEL_EVENT_CANCELLED))
                .error(Error::of(Errc::cancelled, VACCEL_D_GATE_DESTROYED, 0, waiter.value)
                           .with_note(fmt::format("the gate this submission waited on was "
                                                  "destroyed before it reached {}; the work "
                                                  "never ran",
                                                  waiter.value)));
            g.owner->host->post(end);
        }
        (void)g.owner->host->call_status(w, id, Bound::brief);
        g.owner->gates -= 1;
        core_->counters.gates.fetch_sub(1);
        gate.reset();
        return {};
    }

    Result<Submitted> submit(const SubmitDesc& desc) override
    {
        auto& q = static_cast<ProxyQueue&>(*desc.queue);
        auto& p = static_cast<ProxyProgram&>(*desc.program);
        auto* g = static_cast<ProxyGate*>(desc.after);
        if (p.owner != q.owner || (g != nullptr && g->owner != q.owner))
            return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT)
                            .with_note("the program or gate belongs to another context than "
                                       "the queue"));
        if (auto ok = check_bindings(desc.bindings, *q.owner); !ok) return fail(ok.error());
        const std::uint64_t id = q.owner->host->next_id();
        // The gate is the daemon's (ProxyGate): the host holds this work as
        // it holds any, and the scheduler releases it once the gate is there.
        Writer w(Op::submit, id);
        w.put(id).put(q.id).put(p.id).put(desc.deadline_ns).put(std::uint64_t{0})
            .put(std::uint64_t{0});
        put_bindings(w, desc.bindings);
        return go(*q.owner, w, id, desc.bindings, desc.sink, g, desc.after_value);  // + start byte
    }
    Result<Submitted> launch(const LaunchDesc& desc) override
    {
        auto& q = static_cast<ProxyQueue&>(*desc.queue);
        auto& p = static_cast<ProxyProgram&>(*desc.program);
        if (p.owner != q.owner)
            return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT)
                            .with_note("the program belongs to another context than the queue"));
        if (auto ok = check_bindings(desc.bindings, *q.owner); !ok) return fail(ok.error());
        const auto argv = kernel_args::encode(desc.args);
        const std::uint64_t id = q.owner->host->next_id();
        Writer w(Op::launch, id);
        w.put(id).put(q.id).put(p.id).put(desc.deadline_ns).put(desc.dims).text(desc.entry).blob(argv);
        put_bindings(w, desc.bindings);
        if (w.bytes().size() + 1 > host::max_message)  // + the start byte go() adds
            return fail(Error::limit_hit(VACCEL_LIMIT_KERNEL_ARGS_BYTES, host::max_message / 2,
                                         argv.size()));
        return go(*q.owner, w, id, desc.bindings, desc.sink, nullptr, 0);
    }
    EventStatus poll(Event& event) override
    {
        const EventRecord& r = *static_cast<ProxyEvent&>(event).record;
        EventStatus status;
        status.state = static_cast<EventState>(r.state.load(std::memory_order_acquire));
        if (status.state == EventState::failed || status.state == EventState::cancelled)
            status.failure = r.failure;
        return status;
    }
    Status destroy_event(std::unique_ptr<Event>& event) override
    {
        auto& e = static_cast<ProxyEvent&>(*event);
        if (e.record->state.load(std::memory_order_acquire) == VACCEL_EVENT_PENDING)
            return fail(Error::of(Errc::busy, VACCEL_D_NOT_COMPLETE)
                            .with_note("the event is still pending; wait for it first"));
        Writer w(Op::event_destroy, e.id);
        w.put(e.id);
        e.host->post(w);
        core_->counters.events.fetch_sub(1);
        event.reset();
        return {};
    }
    std::uint64_t cancel_pending(Context& context, const Error& why) override
    {
        auto& c = static_cast<ProxyContext&>(context);
        const std::uint64_t id = c.host->next_id();
        Writer w(Op::cancel, id);
        w.error(why);
        // Only accepted, unended events can be cancelled (their completions
        // may come before this reply, so count them before asking).
        const std::uint64_t pending = c.host->accepted_pending();
        auto reply = c.host->call(w, id, Bound::brief);
        if (!reply) return 0;
        Reader r(*reply);
        const auto n = r.get<std::uint64_t>();
        if (!r.done() || n > pending) {
            (void)c.host->fail_host(malformed("a cancel"));
            return 0;
        }
        return n;
    }

    LiveCounters live() const override { return core_->counters.snapshot(); }

private:
    static Error in_flight(const ProxyBuffer& b, std::string_view what)
    {
        return Error::of(Errc::busy, VACCEL_D_IN_FLIGHT, b.identity(), b.in_flight())
            .with_note(fmt::format("{} refused: {} submission(s) in flight bind this buffer; "
                                   "wait for their events first",
                                   what, b.in_flight()));
    }
    // A refusal naming a host's buffer names ours instead (none, 0, where
    // the host named a buffer this context does not have).
    static Error translate(ProxyContext& c, Error e)
    {
        if (e.detail == VACCEL_D_IN_FLIGHT) {
            std::lock_guard lock(c.identities_mutex);
            auto it = c.identities.find(e.arg0);
            e.arg0 = it != c.identities.end() ? it->second : 0;
        }
        return e;
    }
    Status release(ProxyContext& c, Op op, std::uint64_t object, Bound bound)
    {
        const std::uint64_t id = c.host->next_id();
        Writer w(op, id);
        w.put(object);
        if (auto ok = c.host->call_status(w, id, bound); !ok && c.host->usable())
            return fail(translate(c, ok.error()));
        return {};
    }
    Status transfer(ProxyBuffer& b, std::uint64_t offset, std::span<std::byte> data, Op op)
    {
        HostChannel& host = *b.owner.host;
        std::lock_guard window(host.window_mutex);
        std::size_t at = 0;
        do {
            const std::size_t n = std::min<std::size_t>(host::window_bytes, data.size() - at);
            if (op == Op::write) std::memcpy(host.window, data.data() + at, n);
            const std::uint64_t id = host.next_id();
            Writer w(op, id);
            w.put(b.id).put(offset + at).put(static_cast<std::uint64_t>(n));
            if (auto ok = host.call_status(w, id, Bound::brief); !ok)
                return fail(translate(b.owner, ok.error()));
            // The only bytes the daemon takes from the window: copied once,
            // `n` being the daemon's own length, never parsed (the host may
            // write the window at any time; the seals keep it mapped).
            if (op == Op::read) std::memcpy(data.data() + at, host.window, n);
            at += n;
        } while (at < data.size());
        return {};
    }
    static Status check_bindings(std::span<const Binding> bindings, const ProxyContext& owner)
    {
        for (std::size_t i = 0; i < bindings.size(); ++i) {
            if (bindings[i].buffer == nullptr)
                return fail(Error::of(Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE, 0)
                                .with_note(fmt::format("binding {} names no buffer", i)));
            if (&static_cast<const ProxyBuffer&>(*bindings[i].buffer).owner != &owner)
                return fail(Error::of(Errc::incompatible, VACCEL_D_BINDING_CONTEXT, i)
                                .with_note(fmt::format("binding {} names a buffer of another "
                                                       "context",
                                                       i)));
        }
        return {};
    }
    static void put_bindings(Writer& w, std::span<const Binding> bindings)
    {
        w.put(static_cast<std::uint32_t>(bindings.size()));
        for (const Binding& b : bindings)
            w.put(b.slot).put(b.access).put(static_cast<const ProxyBuffer&>(*b.buffer).id)
                .put(b.offset).put(b.bytes);
    }
    // Registers the event, sends the request; accepted (then queued for the
    // scheduler, or parked on its gate) or refused.
    Result<Submitted> go(ProxyContext& c, Writer& w, std::uint64_t id,
                         std::span<const Binding> bindings, std::shared_ptr<EventSink> sink,
                         ProxyGate* gate, std::uint64_t after_value)
    {
        auto record = std::make_shared<EventRecord>();
        record->sink = std::move(sink);
        record->host = c.host;
        record->id = id;
        record->flow = c.flow->id;
        record->scheduler = scheduler_;
        for (const Binding& b : bindings) {
            auto* buffer = static_cast<ProxyBuffer*>(b.buffer);
            const bool writes = (b.access & VACCEL_ACCESS_WRITE) != 0;
            (writes ? buffer->writers : buffer->readers).fetch_add(1);
            record->held.push_back({buffer, writes});
        }
        core_->counters.events.fetch_add(1);
        core_->counters.events_in_flight.fetch_add(1);
        record->sink = std::make_shared<CountingSink>(std::move(record->sink), core_);
        // The request's last byte: start as soon as accepted (the scheduler
        // released it already), else hold for a release.
        const bool started = gate == nullptr && scheduler_->start_now(*record);
        w.put(static_cast<std::uint8_t>(started));
        c.host->track(id, record);
        // Accepted (told through the sink, once) or refused (never told):
        // see HostChannel's in-flight invariant.
        std::optional<Error> refused;
        Submitted out;
        if (auto reply = c.host->call(w, id, Bound::brief); !reply) {
            refused = translate(c, reply.error());
        } else {
            Reader r(*reply);
            const auto segments = r.get<std::uint32_t>();
            const auto indeterminate = r.get<std::uint8_t>();
            if (indeterminate == 1) out.indeterminate = r.error();
            if (!r.done() || indeterminate > 1 || segments == 0 || segments > max_segments ||
                (out.indeterminate && !host::well_formed(*out.indeterminate)))
                refused = c.host->fail_host(
                    malformed(op_name(Reader(w.bytes()).get<host::Header>().op)));
            else if (segments > 1)
                scheduler_->set_segments(record, segments);
        }
        if (!refused) {
            if (auto early = c.host->accept(id); !early) {
                refused = early.error();  // the host failed before the reply was taken
            } else {
                // Accepted: a host that broke the protocol here fails it
                // as it fails every accepted record (died()).
                for (std::uint32_t i = 0; i < record->early_segments; ++i)
                    if (!scheduler_->segment_ended(*record)) {
                        (void)c.host->fail_host(host_gone(fmt::format(
                            "ended a segment of event {} that was not on the device and was "
                            "killed",
                            id)));
                        break;
                    }
                if (*early) finish(*record, (*early)->state, std::move((*early)->failure));
            }
        }
        if (refused) {
            if (started) scheduler_->unstart(*record);
            if (c.host->withdraw(id))
                refused = c.host->fail_host(host_gone(
                    fmt::format("completed submission {}, which it refused, and was killed", id)));
            // Refused: nothing ran; give back what was held, report nothing.
            for (const auto& h : record->held) (h.writes ? h.buffer->writers : h.buffer->readers).fetch_sub(1);
            record->held.clear();
            core_->counters.events.fetch_sub(1);
            core_->counters.events_in_flight.fetch_sub(1);
            return fail(std::move(*refused));
        }
        bool parked = false;
        if (gate != nullptr) {
            std::lock_guard lock(gate->mutex);
            parked = gate->value.load() < after_value;
            if (parked) gate->waiters.push_back({record, after_value});
        }
        if (!parked) scheduler_->enqueue(record);
        auto event = std::make_unique<ProxyEvent>();
        event->record = std::move(record);
        event->host = c.host;
        event->id = id;
        out.event = std::move(event);
        return out;
    }
    // The engine's sink, after the event stops counting as in flight.
    struct CountingSink final : EventSink {
        CountingSink(std::shared_ptr<EventSink> s, std::shared_ptr<DeviceCore> c)
            : sink(std::move(s)), core(std::move(c))
        {
        }
        void completed(const EventStatus& status) noexcept override
        {
            core->counters.events_in_flight.fetch_sub(1);
            if (sink) sink->completed(status);
        }
        std::shared_ptr<EventSink> sink;
        std::shared_ptr<DeviceCore> core;
    };

    std::shared_ptr<DeviceCore> core_;
    std::filesystem::path program_;
    std::string uuid_;
    HostDeadlines deadlines_;
    // Shared with every accepted record, which tells it when it ends.
    std::shared_ptr<Scheduler> scheduler_ = std::make_shared<Scheduler>(
        deadlines_.device_hold, std::chrono::microseconds(core_->options.latency_hold_us));
};

}  // namespace

std::unique_ptr<Backend> open_host_proxy(std::shared_ptr<DeviceCore> core,
                                         std::filesystem::path host_program,
                                         HostDeadlines deadlines)
{
    return std::make_unique<ProxyBackend>(std::move(core), std::move(host_program), deadlines);
}

}  // namespace vaccel::backend::cuda
