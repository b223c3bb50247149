// hostile_host.cpp - a stand-in for vaccel-cuda-host that speaks the host
// protocol (backends/cuda/src/host_protocol.hpp) without a GPU and, on
// command, misbehaves the ways a compromised or broken host could. The
// daemon side (host_proxy.cpp) is driven against it by
// test_hostile_host.cpp.
//
// Usage: as vaccel-cuda-host (SOCKET_FD WINDOW_FD UUID [STATE_DIR]); the
// behaviour is $VACCEL_HOSTILE_HOST (inherited from the test, which sets it
// before each create_context):
//   honest               serves every request correctly (buffers are bytes
//                        in this process; every submission completes at once)
//   silent_at_start      never says hello
//   hang_on_allocate     never answers an allocation (and reads no more)
//   hang_after_submit    accepts submissions and never completes them; never
//                        answers the next request after one
//   deaf_after_submits   completes submissions; after one, reads nothing but
//                        submissions (so event destructions pile up unread)
//   shrink_window        truncates the transfer window, then answers reads
//                        without writing it; honest where the shrink failed
//   alloc_short          answers an allocation with ok and no fields
//   alloc_huge           answers an allocation with 2^62 allocation bytes
//   refusal_bad_code     refuses an allocation with error code 99
//   bad_state            completes submissions with state 99
//   complete_twice       completes each submission twice
//   complete_then_refuse completes a submission, then refuses it
//   complete_before_reply completes each submission before accepting it
//                        (legitimate: the backend's completion thread races
//                        the reply)
//   load_bad_rank        answers a load with a slot of rank 9
//   cancel_overcount     answers a cancel with 1000 cancelled
//   segmented            as held, each submission in 3 segments: every
//                        release runs one, whose end is reported
//                        (Op::segment_ended), the last's as a completion
//   segment_past_last    2 segments; at the first release reports both
//                        segments' ends, the last's as a segment's
//   segments_zero        says a submission goes out in 0 segments
// Ownership: everything is in this process and ends with it.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "host_protocol.hpp"

namespace {

using namespace vaccel;
using namespace vaccel::backend::cuda::host;

int channel = -1;
std::string mode;
std::byte* window = nullptr;
bool window_shrunk = false;

void send(const Writer& w)
{
    if (!send_packet(channel, w.bytes())) std::_Exit(0);
}

[[noreturn]] void hang()
{
    for (;;) pause();  // until the daemon kills it
}

void reply_ok(std::uint64_t id)
{
    Writer w(Op::reply, id);
    w.put(std::uint8_t{1});
    send(w);
}

void reply_error(std::uint64_t id, const Error& e)
{
    Writer w(Op::reply, id);
    w.put(std::uint8_t{0}).error(e);
    send(w);
}

void completed(std::uint64_t event, std::uint32_t state)
{
    Writer w(Op::completed, event);
    w.put(state).error(Error::of(Errc::ok));
    send(w);
}

Error unknown(const char* what)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE)
        .with_note(std::string("the hostile host has no such ") + what);
}

std::map<std::uint64_t, std::vector<std::byte>> buffers;
// "held": as vaccel-cuda-host, work runs (here: completes at once) only when
// the daemon releases it, by the request's last byte or Op::release.
std::uint8_t request_last_byte = 0;
std::set<std::uint64_t> held;
std::uint64_t next_identity = 1;
bool submitted = false;
// "segmented" and "segment_past_last": releases taken per held event.
std::map<std::uint64_t, std::uint32_t> releases;

std::uint32_t segments_said()
{
    if (mode == "segmented") return 3;
    if (mode == "segment_past_last") return 2;
    if (mode == "segments_zero") return 0;
    return 1;
}

void segment_ended(std::uint64_t event, std::uint32_t index)
{
    Writer w(Op::segment_ended, event);
    w.put(index);
    send(w);
}

// One release of a segmented event: its next segment runs (here: ends at once).
void run_segment(std::uint64_t event)
{
    const std::uint32_t k = releases[event]++;
    if (mode == "segment_past_last") {
        segment_ended(event, 0);
        segment_ended(event, 1);  // the last segment's end is a completion
        return;
    }
    if (k + 1 < segments_said()) return segment_ended(event, k);
    releases.erase(event);
    completed(event, VACCEL_EVENT_COMPLETE);
}

bool segmented() { return mode == "segmented" || mode == "segment_past_last"; }

void submission(std::uint64_t id, std::uint64_t event)
{
    if (mode == "complete_then_refuse") {
        completed(event, VACCEL_EVENT_COMPLETE);
        return reply_error(id, Error::of(Errc::busy).with_note("refused after completing"));
    }
    if (mode == "complete_before_reply") completed(event, VACCEL_EVENT_COMPLETE);
    Writer w(Op::reply, id);
    w.put(std::uint8_t{1}).put(segments_said()).put(std::uint8_t{0});
    send(w);
    submitted = true;
    if (segmented()) {
        releases[event] = 0;
        if (request_last_byte == 1) run_segment(event);
        return;
    }
    if (mode == "complete_before_reply") return;
    if (mode == "hang_after_submit") return;  // pending for ever
    if (mode == "held" && request_last_byte != 1) {
        held.insert(event);
        return;
    }
    if (mode == "bad_state") return completed(event, 99);
    completed(event, VACCEL_EVENT_COMPLETE);
    if (mode == "complete_twice") completed(event, VACCEL_EVENT_COMPLETE);
}

void serve(Op op, std::uint64_t id, Reader& r)
{
    if (mode == "hang_after_submit" && submitted && op != Op::submit && op != Op::event_destroy &&
        op != Op::release)
        hang();
    if (mode == "deaf_after_submits" && submitted && op != Op::submit && op != Op::release) hang();
    switch (op) {
    case Op::allocate: {
        const auto handle = r.get<std::uint64_t>();
        const auto bytes = r.get<std::uint64_t>();
        if (mode == "hang_on_allocate") hang();
        if (mode == "refusal_bad_code") {
            Error e = Error::of(Errc::busy);
            e.code = static_cast<Errc>(99);
            return reply_error(id, e);
        }
        Writer w(Op::reply, id);
        w.put(std::uint8_t{1});
        if (mode == "alloc_short") return send(w);
        const std::uint64_t rounded = (bytes + 255) / 256 * 256;
        w.put(mode == "alloc_huge" ? std::uint64_t{1} << 62 : rounded)
            .put(std::uint64_t{4096})
            .put(std::uint32_t{VACCEL_PROP_HOST_VISIBLE | VACCEL_PROP_DIRECT_BINDING})
            .put(next_identity++);
        buffers[handle].assign(rounded, std::byte{0});
        return send(w);
    }
    case Op::free_buffer:
        if (buffers.erase(r.get<std::uint64_t>()) == 0) return reply_error(id, unknown("buffer"));
        return reply_ok(id);
    case Op::write:
    case Op::read: {
        auto it = buffers.find(r.get<std::uint64_t>());
        const auto offset = r.get<std::uint64_t>();
        const auto length = r.get<std::uint64_t>();
        if (it == buffers.end()) return reply_error(id, unknown("buffer"));
        if (length > window_bytes || offset > it->second.size() ||
            length > it->second.size() - offset)
            return reply_error(id, Error::of(Errc::out_of_bounds, VACCEL_D_RANGE, offset, length));
        if (window_shrunk) return reply_ok(id);  // the window is gone: touch nothing
        if (op == Op::write)
            std::memcpy(it->second.data() + offset, window, length);
        else
            std::memcpy(window, it->second.data() + offset, length);
        return reply_ok(id);
    }
    case Op::payload:
        return reply_ok(id);
    case Op::load: {
        (void)r.get<std::uint64_t>();
        const auto format = r.get<std::uint32_t>();
        Writer w(Op::reply, id);
        w.put(std::uint8_t{1}).put(format).put(std::uint32_t{1}).put(std::uint64_t{0});
        w.put(std::uint32_t{1});  // one slot: an input of 64 bytes
        const std::uint32_t rank = mode == "load_bad_rank" ? 9 : 1;
        w.put(std::uint32_t{VACCEL_SLOT_INPUT}).put(std::uint32_t{1}).put(std::uint64_t{64})
            .put(rank);
        for (std::uint32_t d = 0; d < rank; ++d) w.put(std::int64_t{64});
        w.text("x");
        return send(w);
    }
    case Op::unload:
    case Op::queue_create:
    case Op::queue_destroy:
    case Op::gate_create:
    case Op::gate_raise:
    case Op::gate_destroy:
        return reply_ok(id);
    case Op::submit:
    case Op::launch:
        return submission(id, r.get<std::uint64_t>());
    case Op::release:
    case Op::end_held:
        if (mode == "held" && op == Op::release && held.erase(r.get<std::uint64_t>()) == 1)
            completed(id, VACCEL_EVENT_COMPLETE);
        if (segmented() && op == Op::release && releases.contains(id)) run_segment(id);
        return;  // no reply (other modes complete their work without waiting for a release)
    case Op::event_destroy:
        return;  // no reply
    case Op::cancel: {
        Writer w(Op::reply, id);
        w.put(std::uint8_t{1}).put(std::uint64_t{mode == "cancel_overcount" ? 1000u : 0u});
        return send(w);
    }
    default:
        return reply_error(id, unknown("request"));
    }
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: hostile_host SOCKET_FD WINDOW_FD UUID [STATE_DIR]\n");
        return 2;
    }
    channel = std::atoi(argv[1]);
    const int window_fd = std::atoi(argv[2]);
    const char* behaviour = std::getenv("VACCEL_HOSTILE_HOST");
    mode = behaviour != nullptr ? behaviour : "honest";
    if (mode == "shrink_window") window_shrunk = ftruncate(window_fd, 0) == 0;
    void* mapped = mmap(nullptr, window_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, window_fd, 0);
    if (mapped == MAP_FAILED) return 1;
    close(window_fd);
    window = static_cast<std::byte*>(mapped);
    if (mode == "silent_at_start") hang();
    {
        Writer hello(Op::hello);
        hello.put(std::uint8_t{1});
        send(hello);
    }
    while (auto packet = receive_packet(channel)) {
        Reader r(*packet);
        const auto header = r.get<Header>();
        if (!r.ok()) continue;
        request_last_byte = std::to_integer<std::uint8_t>(packet->back());
        serve(header.op, header.id, r);
    }
    return 0;
}
