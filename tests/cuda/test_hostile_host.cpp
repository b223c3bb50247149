// test_hostile_host.cpp - the daemon's side of vaccel-cuda-host
// (host_proxy.cpp) against a host that misbehaves (hostile_host.cpp), no GPU
// needed. A host is not trusted: one that stops answering, shrinks the
// transfer window, answers out of range or completes an event twice or after
// refusing it is killed and reaped, its context fails with DeviceLost (its
// pending events too, every later call is refused with the same reason), the
// counters stay exact, and this process (the daemon) and every other context
// go on.
//
// Usage: test_cuda_hostile_host NAME, one behaviour per process (ctest runs
// each as cuda.hostile.NAME), so "no child is left" means this host's.
#include <dirent.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "host_proxy.hpp"
#include "cmocka.hpp"

namespace {

using namespace vaccel;
using namespace vaccel::backend;
using namespace vaccel::backend::cuda;
using namespace std::chrono_literals;

std::size_t open_fds()
{
    std::size_t n = 0;
    DIR* dir = opendir("/proc/self/fd");
    assert_non_null(dir);
    while (dirent* e = readdir(dir))
        if (e->d_name[0] != '.') ++n;
    closedir(dir);
    return n - 1;  // the directory's own
}

// No child of this process is left, running or a zombie.
void no_child_left()
{
    errno = 0;
    assert_int_equal(waitpid(-1, nullptr, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

std::unique_ptr<Backend> hostile_device(std::chrono::milliseconds start = 20s)
{
    auto core = std::make_shared<DeviceCore>();
    std::strcpy(core->info.name, "hostile host");
    auto& limits = core->info.limits;
    limits.max_contexts = 4;
    limits.max_buffers = 16;
    limits.max_programs = 4;
    limits.max_queues = 4;
    limits.max_gates = 4;
    limits.max_buffer_bytes = 1u << 20;
    limits.max_artifact_bytes = 1u << 20;
    limits.max_memory_bytes = 1u << 24;
    // Short bounds, so that a host that never answers costs a test seconds.
    HostDeadlines deadlines;
    deadlines.start = start;
    deadlines.load = 3s;
    deadlines.memory = 3s;
    deadlines.brief = 3s;
    deadlines.device_hold = 200ms;
    return open_host_proxy(std::move(core), VACCEL_HOSTILE_HOST_PROGRAM, deadlines);
}

std::unique_ptr<Context> context_as(Backend& device, const char* behaviour)
{
    setenv("VACCEL_HOSTILE_HOST", behaviour, 1);
    auto context = device.create_context();
    if (!context) fail_msg("create_context: %s", context.error().note.c_str());
    return std::move(*context);
}

void is_host_failure(const Error& e, std::string_view why)
{
    if (e.code != Errc::device_lost || e.note.find(why) == std::string::npos)
        fail_msg("expected DeviceLost saying \"%.*s\", got code %u: %s",
                 static_cast<int>(why.size()), why.data(), static_cast<unsigned>(e.code),
                 e.note.c_str());
}

struct CountingSink final : EventSink {
    void completed(const EventStatus& s) noexcept override
    {
        ++calls;
        status = s;
    }
    std::atomic<int> calls{0};
    EventStatus status;
};

// What a submission needs: a buffer, a program, a queue.
struct Work {
    std::unique_ptr<Buffer> buffer;
    std::unique_ptr<Program> program;
    std::unique_ptr<Queue> queue;
};

Work prepare(Backend& device, Context& context)
{
    Work w;
    BufferDesc desc;
    desc.bytes = 64;
    BufferInfo info;
    auto buffer = device.allocate_buffer(context, desc, info);
    assert_true(buffer.has_value());
    w.buffer = std::move(*buffer);
    const std::vector<std::byte> payload(16, std::byte{7});
    ProgramDesc p;
    p.format = VACCEL_FORMAT_CUDA_PTX;
    p.payload = payload;
    auto program = device.load_program(context, p);
    assert_true(program.has_value());
    w.program = std::move(*program);
    auto queue = device.create_queue(context);
    assert_true(queue.has_value());
    w.queue = std::move(*queue);
    return w;
}

Result<Submitted> submit(Backend& device, Work& w, std::shared_ptr<EventSink> sink)
{
    Binding b;
    b.slot = 0;
    b.access = VACCEL_ACCESS_READ;
    b.buffer = w.buffer.get();
    b.bytes = 64;
    SubmitDesc desc;
    desc.queue = w.queue.get();
    desc.program = w.program.get();
    desc.bindings = {&b, 1};
    desc.sink = std::move(sink);
    return device.submit(desc);
}

// Releases what prepare() made (refused by nobody: a lost host's objects go quietly).
void release(Backend& device, Work& w)
{
    if (w.queue) assert_true(device.destroy_queue(w.queue).has_value());
    if (w.program) assert_true(device.unload_program(w.program).has_value());
    if (w.buffer) assert_true(device.free_buffer(w.buffer).has_value());
}

void all_zero(const LiveCounters& c)
{
    assert_int_equal(c.contexts, 0);
    assert_int_equal(c.buffers, 0);
    assert_int_equal(c.buffer_bytes, 0);
    assert_int_equal(c.programs, 0);
    assert_int_equal(c.queues, 0);
    assert_int_equal(c.events, 0);
    assert_int_equal(c.events_in_flight, 0);
    assert_int_equal(c.gates, 0);
}

// The honest host serves; the fixture's own test (a test that can fail:
// every hostile one below compares against this).
void an_honest_host_serves_and_is_reaped(void**)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();
    {
        auto context = context_as(*device, "honest");
        Work w = prepare(*device, *context);
        const std::vector<std::byte> bytes(64, std::byte{0x5a});
        assert_true(device->write_buffer(*w.buffer, 0, bytes).has_value());
        std::vector<std::byte> back(64);
        assert_true(device->read_buffer(*w.buffer, 0, back).has_value());
        assert_true(back == bytes);
        auto sink = std::make_shared<CountingSink>();
        auto submitted = submit(*device, w, sink);
        assert_true(submitted.has_value());
        while (device->poll(*submitted->event).state == EventState::pending) usleep(1000);
        assert_int_equal(sink->calls.load(), 1);
        assert_int_equal(w.buffer->in_flight(), 0);
        assert_int_equal(device->live().events_in_flight, 0);
        assert_true(device->destroy_event(submitted->event).has_value());
        release(*device, w);
        assert_true(device->destroy_context(context).has_value());
    }
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

// A host that never answers: the call fails when its deadline passes, the
// host is killed and reaped, later calls are refused with the same reason,
// and another context of the device goes on serving.
void a_host_that_never_answers_is_killed_and_its_context_lost(void**)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();
    auto good = context_as(*device, "honest");
    auto bad = context_as(*device, "hang_on_allocate");
    BufferDesc desc;
    desc.bytes = 64;
    BufferInfo info;
    auto buffer = device->allocate_buffer(*bad, desc, info);
    assert_false(buffer.has_value());
    is_host_failure(buffer.error(), "did not answer");
    auto again = device->create_queue(*bad);
    assert_false(again.has_value());
    is_host_failure(again.error(), "did not answer");
    // The other context was never touched.
    Work w = prepare(*device, *good);
    release(*device, w);
    assert_int_equal(device->live().buffers, 0);
    assert_true(device->destroy_context(bad).has_value());
    assert_true(device->destroy_context(good).has_value());
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

// A host that never says hello: the context is refused, the host killed.
void a_host_that_never_starts_is_killed(void**)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device(3s);
    setenv("VACCEL_HOSTILE_HOST", "silent_at_start", 1);
    auto context = device->create_context();
    assert_false(context.has_value());
    assert_int_equal(static_cast<int>(context.error().code), static_cast<int>(Errc::external));
    assert_true(context.error().note.find("did not start") != std::string::npos);
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

// A host that accepted a submission and then stops answering: its pending
// event fails with DeviceLost, told once; the buffer it held is free again.
void a_host_that_stops_after_a_submission_fails_its_events(void**)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();
    auto context = context_as(*device, "hang_after_submit");
    Work w = prepare(*device, *context);
    auto sink = std::make_shared<CountingSink>();
    auto submitted = submit(*device, w, sink);
    assert_true(submitted.has_value());
    assert_int_equal(w.buffer->in_flight(), 1);
    auto gate = device->create_gate(*context);  // never answered
    assert_false(gate.has_value());
    is_host_failure(gate.error(), "did not answer");
    while (device->poll(*submitted->event).state == EventState::pending) usleep(1000);
    const EventStatus status = device->poll(*submitted->event);
    assert_int_equal(static_cast<int>(status.state), static_cast<int>(EventState::failed));
    is_host_failure(status.failure, "did not answer");
    assert_int_equal(sink->calls.load(), 1);
    assert_int_equal(w.buffer->in_flight(), 0);
    assert_int_equal(device->live().events_in_flight, 0);
    assert_true(device->destroy_event(submitted->event).has_value());
    release(*device, w);
    assert_true(device->destroy_context(context).has_value());
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

// A tenant whose work never ends (a kernel that loops for ever, a host that
// never reports it) keeps the device to itself for the hold bound only:
// then another tenant's work is released beside it. The other host ("held")
// runs work only once the scheduler releases it, as vaccel-cuda-host does;
// without the bound it would wait for ever.
void work_that_never_ends_holds_the_device_only_for_the_bound(void**)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();  // device_hold 200 ms
    auto stuck = context_as(*device, "hang_after_submit");
    auto other = context_as(*device, "held");
    ContextSchedule schedule;
    schedule.flow = "stuck";
    device->set_context_schedule(*stuck, schedule);
    schedule.flow = "other";
    device->set_context_schedule(*other, schedule);
    Work ws = prepare(*device, *stuck);
    Work wo = prepare(*device, *other);
    auto stuck_run = submit(*device, ws, std::make_shared<CountingSink>());
    assert_true(stuck_run.has_value());
    auto sink = std::make_shared<CountingSink>();
    auto other_run = submit(*device, wo, sink);
    assert_true(other_run.has_value());
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while (device->poll(*other_run->event).state == EventState::pending) {
        if (std::chrono::steady_clock::now() > give_up)
            fail_msg("the other tenant's work was never released beside the stuck one");
        usleep(1000);
    }
    assert_int_equal(static_cast<int>(device->poll(*other_run->event).state),
                     static_cast<int>(EventState::complete));
    assert_int_equal(sink->calls.load(), 1);
    // The scheduler's record: the other tenant went out a whole bound after
    // the stuck one, which has not ended.
    const auto record = device->device_service()->recent;
    const auto first = [&](std::string_view flow) {
        auto it = std::ranges::find_if(record, [&](const DispatchEntry& e) { return e.flow == flow; });
        if (it == record.end()) fail_msg("no dispatch of %s", std::string(flow).c_str());
        return *it;
    };
    const DispatchEntry s = first("stuck"), o = first("other");
    assert_false(s.ended);
    assert_true(o.ended);
    assert_true(o.at_ns - s.at_ns >= 200'000'000);
    assert_true(device->destroy_event(other_run->event).has_value());
    release(*device, wo);
    assert_true(device->destroy_context(other).has_value());
    // The stuck host ends as a silent one does: killed at its next call's deadline.
    auto gate = device->create_gate(*stuck);
    assert_false(gate.has_value());
    is_host_failure(gate.error(), "did not answer");
    while (device->poll(*stuck_run->event).state == EventState::pending) usleep(1000);
    assert_true(device->destroy_event(stuck_run->event).has_value());
    release(*device, ws);
    assert_true(device->destroy_context(stuck).has_value());
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

// A host that stops reading: messages that want no answer (event
// destructions) pile up in its socket until a send would block; that send
// has a deadline too, and past it the host is killed.
void a_host_that_stops_reading_is_killed(void**)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();
    auto context = context_as(*device, "deaf_after_submits");
    Work w = prepare(*device, *context);
    // More than a socket queues unread (net.unix.max_dgram_qlen, 10 by
    // default; and its send buffer, some hundreds of small packets).
    std::vector<std::unique_ptr<Event>> events;
    for (int i = 0; i < 1024; ++i) {
        auto submitted = submit(*device, w, std::make_shared<CountingSink>());
        assert_true(submitted.has_value());
        while (device->poll(*submitted->event).state == EventState::pending) usleep(100);
        events.push_back(std::move(submitted->event));
    }
    for (auto& event : events) assert_true(device->destroy_event(event).has_value());
    auto queue = device->create_queue(*context);
    assert_false(queue.has_value());
    is_host_failure(queue.error(), "did not take an event destruction");
    assert_int_equal(device->live().events, 0);
    assert_int_equal(device->live().events_in_flight, 0);
    release(*device, w);
    assert_true(device->destroy_context(context).has_value());
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

// A host that truncates the window: the daemon's window is sealed, so the
// truncation fails and a read still copies the right bytes (before the seal,
// the daemon's copy from the window died of SIGBUS).
void a_host_cannot_shrink_the_window(void**)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();
    auto context = context_as(*device, "shrink_window");
    Work w = prepare(*device, *context);
    const std::vector<std::byte> bytes(64, std::byte{0x33});
    assert_true(device->write_buffer(*w.buffer, 0, bytes).has_value());
    std::vector<std::byte> back(64);
    assert_true(device->read_buffer(*w.buffer, 0, back).has_value());
    assert_true(back == bytes);
    release(*device, w);
    assert_true(device->destroy_context(context).has_value());
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

// An allocation answered out of range (`behaviour`) is a host failure: no
// buffer, nothing counted, the host killed.
void malformed_allocation(const char* behaviour, std::string_view why)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();
    auto context = context_as(*device, behaviour);
    BufferDesc desc;
    desc.bytes = 64;
    BufferInfo info;
    auto buffer = device->allocate_buffer(*context, desc, info);
    assert_false(buffer.has_value());
    is_host_failure(buffer.error(), why);
    assert_int_equal(device->live().buffers, 0);
    assert_int_equal(device->live().buffer_bytes, 0);
    auto again = device->allocate_buffer(*context, desc, info);
    assert_false(again.has_value());
    is_host_failure(again.error(), why);
    assert_true(device->destroy_context(context).has_value());
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

void a_short_allocation_reply_is_a_host_failure(void**)
{
    malformed_allocation("alloc_short", "malformed");
}

void an_allocation_larger_than_asked_is_a_host_failure(void**)
{
    malformed_allocation("alloc_huge", "malformed");
}

void a_refusal_with_an_unknown_code_is_a_host_failure(void**)
{
    malformed_allocation("refusal_bad_code", "malformed");
}

void a_load_reply_with_an_impossible_slot_is_a_host_failure(void**)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();
    auto context = context_as(*device, "load_bad_rank");
    const std::vector<std::byte> payload(16, std::byte{7});
    ProgramDesc p;
    p.format = VACCEL_FORMAT_CUDA_PTX;
    p.payload = payload;
    auto program = device->load_program(*context, p);
    assert_false(program.has_value());
    is_host_failure(program.error(), "malformed");
    assert_int_equal(device->live().programs, 0);
    assert_true(device->destroy_context(context).has_value());
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

void a_cancel_count_beyond_the_pending_events_is_a_host_failure(void**)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();
    auto context = context_as(*device, "cancel_overcount");
    const std::uint64_t n = device->cancel_pending(*context, Error::of(Errc::cancelled));
    assert_int_equal(n, 0);
    auto queue = device->create_queue(*context);
    assert_false(queue.has_value());
    is_host_failure(queue.error(), "malformed");
    assert_true(device->destroy_context(context).has_value());
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

// A submission whose completion (`behaviour`) breaks the protocol: the
// engine is told of the event at most once, every count it held is given
// back exactly once, and the host is killed. Whether the submission is
// accepted first depends on whether the daemon took its reply before the
// offending completion came (`may_accept`): either way the counts are exact.
void broken_completion(const char* behaviour, bool may_accept, std::string_view why)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();
    auto context = context_as(*device, behaviour);
    Work w = prepare(*device, *context);
    auto sink = std::make_shared<CountingSink>();
    auto submitted = submit(*device, w, sink);
    const bool accepted = submitted.has_value();
    if (!may_accept) assert_false(accepted);
    if (!accepted) {
        is_host_failure(submitted.error(), why);
    } else {
        while (device->poll(*submitted->event).state == EventState::pending) usleep(1000);
        // The host sent the offending completion before it read this
        // request, so the daemon saw it before this reply: refused.
        auto queue = device->create_queue(*context);
        assert_false(queue.has_value());
        is_host_failure(queue.error(), why);
    }
    assert_int_equal(sink->calls.load(), accepted ? 1 : 0);
    assert_int_equal(w.buffer->in_flight(), 0);
    assert_int_equal(device->live().events_in_flight, 0);
    assert_int_equal(device->live().events, accepted ? 1 : 0);
    if (accepted) assert_true(device->destroy_event(submitted->event).has_value());
    release(*device, w);
    assert_true(device->destroy_context(context).has_value());
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

void a_completion_with_an_unknown_state_is_a_host_failure(void**)
{
    broken_completion("bad_state", true, "malformed");
}

void an_event_completed_twice_is_told_once_and_fails_the_host(void**)
{
    broken_completion("complete_twice", true, "twice");
}

void a_completion_of_a_refused_submission_counts_once(void**)
{
    broken_completion("complete_then_refuse", false, "refused");
}

// A completion that arrives before its submission's reply is legitimate:
// the engine is told once, after the reply accepted it.
void a_completion_before_its_reply_is_told_once(void**)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();
    auto context = context_as(*device, "complete_before_reply");
    Work w = prepare(*device, *context);
    for (int i = 0; i < 20; ++i) {
        auto sink = std::make_shared<CountingSink>();
        auto submitted = submit(*device, w, sink);
        assert_true(submitted.has_value());
        while (device->poll(*submitted->event).state == EventState::pending) usleep(1000);
        assert_int_equal(sink->calls.load(), 1);
        assert_int_equal(static_cast<int>(sink->status.state),
                         static_cast<int>(EventState::complete));
        assert_true(device->destroy_event(submitted->event).has_value());
    }
    assert_int_equal(w.buffer->in_flight(), 0);
    assert_int_equal(device->live().events_in_flight, 0);
    release(*device, w);
    assert_true(device->destroy_context(context).has_value());
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

// Work that its host cuts into segments goes out one segment per release:
// the scheduler's record holds each segment as a dispatch, every one ended
// and charged, and the engine is told once per submission, when the last
// ends.
void segmented_work_goes_out_one_segment_per_release(void**)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();
    auto context = context_as(*device, "segmented");
    ContextSchedule schedule;
    schedule.flow = "cut";
    device->set_context_schedule(*context, schedule);
    Work w = prepare(*device, *context);
    for (int i = 0; i < 4; ++i) {
        auto sink = std::make_shared<CountingSink>();
        auto submitted = submit(*device, w, sink);
        assert_true(submitted.has_value());
        const auto give_up = std::chrono::steady_clock::now() + 10s;
        while (device->poll(*submitted->event).state == EventState::pending) {
            if (std::chrono::steady_clock::now() > give_up)
                fail_msg("run %d: its segments were not all released", i);
            usleep(1000);
        }
        assert_int_equal(static_cast<int>(device->poll(*submitted->event).state),
                         static_cast<int>(EventState::complete));
        assert_int_equal(sink->calls.load(), 1);
        assert_true(device->destroy_event(submitted->event).has_value());
    }
    const auto service = device->device_service();
    assert_true(service.has_value());
    const auto dispatches = std::ranges::count_if(
        service->recent, [](const DispatchEntry& e) { return e.flow == "cut" && e.ended; });
    assert_int_equal(dispatches, 4 * 3);
    assert_int_equal(device->live().events_in_flight, 0);
    assert_int_equal(w.buffer->in_flight(), 0);
    release(*device, w);
    assert_true(device->destroy_context(context).has_value());
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

// A host that reports a segment's end the scheduler never released (here:
// the last segment's, whose end only a completion may report) breaks the
// protocol: it is killed, and its event fails, told once.
void a_segment_end_that_was_not_released_fails_the_host(void**)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();
    auto context = context_as(*device, "segment_past_last");
    Work w = prepare(*device, *context);
    auto sink = std::make_shared<CountingSink>();
    auto submitted = submit(*device, w, sink);
    if (submitted) {  // refused when the host died before its reply was taken
        while (device->poll(*submitted->event).state == EventState::pending) usleep(1000);
        const EventStatus status = device->poll(*submitted->event);
        assert_int_equal(static_cast<int>(status.state), static_cast<int>(EventState::failed));
        is_host_failure(status.failure, "not on the device");
        assert_int_equal(sink->calls.load(), 1);
        assert_true(device->destroy_event(submitted->event).has_value());
    } else {
        is_host_failure(submitted.error(), "not on the device");
        assert_int_equal(sink->calls.load(), 0);
    }
    auto queue = device->create_queue(*context);
    assert_false(queue.has_value());
    is_host_failure(queue.error(), "not on the device");
    assert_int_equal(w.buffer->in_flight(), 0);
    release(*device, w);
    assert_true(device->destroy_context(context).has_value());
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

// A reply that says a submission goes out in no segments is malformed.
void a_submission_in_zero_segments_is_a_host_failure(void**)
{
    const std::size_t fds = open_fds();
    auto device = hostile_device();
    auto context = context_as(*device, "segments_zero");
    Work w = prepare(*device, *context);
    auto sink = std::make_shared<CountingSink>();
    auto submitted = submit(*device, w, sink);
    assert_false(submitted.has_value());
    is_host_failure(submitted.error(), "malformed");
    assert_int_equal(sink->calls.load(), 0);
    assert_int_equal(w.buffer->in_flight(), 0);
    assert_int_equal(device->live().events, 0);
    release(*device, w);
    assert_true(device->destroy_context(context).has_value());
    all_zero(device->live());
    no_child_left();
    assert_int_equal(open_fds(), fds);
}

struct Named {
    const char* name;
    CMUnitTestFunction test;
};

const Named all[] = {
    {"honest_host_serves", an_honest_host_serves_and_is_reaped},
    {"silent_start_is_killed", a_host_that_never_starts_is_killed},
    {"silent_host_is_killed", a_host_that_never_answers_is_killed_and_its_context_lost},
    {"silent_host_fails_its_events", a_host_that_stops_after_a_submission_fails_its_events},
    {"deaf_host_is_killed", a_host_that_stops_reading_is_killed},
    {"window_cannot_shrink", a_host_cannot_shrink_the_window},
    {"short_allocation_reply", a_short_allocation_reply_is_a_host_failure},
    {"oversized_allocation_reply", an_allocation_larger_than_asked_is_a_host_failure},
    {"unknown_refusal_code", a_refusal_with_an_unknown_code_is_a_host_failure},
    {"impossible_program_slot", a_load_reply_with_an_impossible_slot_is_a_host_failure},
    {"cancel_overcount", a_cancel_count_beyond_the_pending_events_is_a_host_failure},
    {"unknown_completion_state", a_completion_with_an_unknown_state_is_a_host_failure},
    {"event_completed_twice", an_event_completed_twice_is_told_once_and_fails_the_host},
    {"completion_then_refusal", a_completion_of_a_refused_submission_counts_once},
    {"completion_before_reply", a_completion_before_its_reply_is_told_once},
    {"endless_work_holds_the_device_for_the_bound", work_that_never_ends_holds_the_device_only_for_the_bound},
    {"segmented_work_goes_out_by_segment", segmented_work_goes_out_one_segment_per_release},
    {"segment_end_not_released", a_segment_end_that_was_not_released_fails_the_host},
    {"zero_segments", a_submission_in_zero_segments_is_a_host_failure},
};

}  // namespace

int main(int argc, char** argv)
{
    const std::string_view only = argc > 1 ? argv[1] : "";
    for (const Named& n : all) {
        if (only != n.name) continue;
        const CMUnitTest tests[] = {{n.name, n.test, nullptr, nullptr, nullptr}};
        return cmocka_run_group_tests_name(n.name, tests, nullptr, nullptr);
    }
    std::fprintf(stderr, "usage: test_cuda_hostile_host NAME; names:\n");
    for (const Named& n : all) std::fprintf(stderr, "  %s\n", n.name);
    return 2;
}
