// test_isolation.cpp - one client's fault is its own (docs/adr/0018): a
// kernel of context A writes through an address A never allocated while
// context B's kernel is still running on the same GPU. A's launch fails
// with the fault and A refuses everything after it; B's work completes with
// the right bytes; a new context works; the device stays ok. CUDA keeps a
// fault for the whole process, so this holds because every context runs in
// a vaccel-cuda-host process of its own; the same test also kills a host
// outright while another context's kernel runs.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "cuda_test_support.hpp"

namespace {

using namespace cuda_test;

// CUresult of a kernel's access to an address its context never mapped
// (CUDA_ERROR_ILLEGAL_ADDRESS), carried in arg0 of the fault.
constexpr std::uint64_t illegal_address = 700;

struct Client {
    std::unique_ptr<Context> context;
    std::unique_ptr<Queue> queue;
};

Client open_client(Backend& backend)
{
    Client c;
    auto context = backend.create_context();
    assert_ok(context);
    c.context = std::move(*context);
    auto queue = backend.create_queue(*c.context);
    assert_ok(queue);
    c.queue = std::move(*queue);
    return c;
}

std::unique_ptr<Program> load_into(Backend& backend, Context& context)
{
    const auto module = kernel_file("launch_kernels.ptx");
    ProgramDesc desc;
    desc.format = VACCEL_FORMAT_CUDA_PTX;
    desc.payload = module;
    auto p = backend.load_program(context, desc);
    assert_ok(p);
    return std::move(*p);
}

std::unique_ptr<Buffer> buffer_of(Backend& backend, Context& context, std::uint64_t bytes)
{
    BufferDesc desc;
    desc.bytes = bytes;
    desc.domain = VACCEL_DOMAIN_DEVICE;
    BufferInfo info;
    auto b = backend.allocate_buffer(context, desc, info);
    assert_ok(b);
    return std::move(*b);
}

EventStatus wait_for(Backend& backend, Event& event)
{
    for (int i = 0; i < 200000; ++i) {
        const EventStatus s = backend.poll(event);
        if (s.state != EventState::pending) return s;
        usleep(100);
    }
    fail_msg("an event stayed pending for 20 s");
    return {};
}

void a_fault_fails_its_own_context_only(void**)
{
    auto backend = cuda_device();
    Client a = open_client(*backend), b = open_client(*backend);
    auto pa = load_into(*backend, *a.context), pb = load_into(*backend, *b.context);
    const std::uint32_t n = 4096;
    auto out = buffer_of(*backend, *b.context, n * 4);
    // B: about 0.2 s of spinning per thread (the H200 clocks near 2 GHz),
    // then out[i] = i + 1.
    auto running = launch(*backend, *b.queue, *pb, "spin_then_write",
                      {Arg::u64(400'000'000ull), Arg::ptr(0, n * 4), Arg::u32(n)},
                      {{0, VACCEL_ACCESS_WRITE, out.get(), 0, n * 4}}, dims(n / 256, 256));
    assert_ok(running);
    // A: a write to an address no allocation of A covers, then work queued
    // behind it on A's stream.
    auto faulting = launch(*backend, *a.queue, *pa, "fault", {Arg::u64(0x10000ull)}, {}, dims(1, 1));
    assert_ok(faulting);
    auto behind = launch(*backend, *a.queue, *pa, "noop", {}, {}, dims(1, 1));
    const EventStatus fault = wait_for(*backend, *faulting->event);
    assert_int_equal(static_cast<int>(fault.state), static_cast<int>(EventState::failed));
    assert_int_equal(static_cast<int>(fault.failure.code), static_cast<int>(Errc::device_lost));
    assert_true(fault.failure.note.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
    assert_true(fault.failure.note.find("other contexts are unaffected") != std::string::npos);
    if (behind.has_value()) {
        const EventStatus after = wait_for(*backend, *behind->event);
        assert_int_equal(static_cast<int>(after.state), static_cast<int>(EventState::failed));
        assert_ok(backend->destroy_event(behind->event));
    }
    // B's work was running all along and finishes with its own bytes.
    const EventStatus ok = wait_for(*backend, *running->event);
    if (ok.state != EventState::complete)
        fail_msg("context B's work ended in state %u: %s", static_cast<unsigned>(ok.state),
                 ok.failure.note.c_str());
    std::vector<std::uint32_t> got(n), want(n);
    for (std::uint32_t i = 0; i < n; ++i) want[i] = i + 1;
    assert_ok(backend->read_buffer(*out, 0, std::as_writable_bytes(std::span(got))));
    assert_memory_equal(got.data(), want.data(), n * 4);
    assert_int_equal(static_cast<int>(backend->state()), static_cast<int>(DeviceState::ok));
    // A refuses everything after its fault, with the fault.
    BufferDesc desc;
    desc.bytes = 64;
    BufferInfo info;
    assert_refused(backend->allocate_buffer(*a.context, desc, info), Errc::device_lost,
                   VACCEL_D_NONE, illegal_address, 0);
    assert_refused(launch(*backend, *a.queue, *pa, "noop", {}, {}, dims(1, 1)), Errc::device_lost,
                   VACCEL_D_NONE, illegal_address, 0);
    // ...and is released like any other.
    assert_ok(backend->destroy_event(faulting->event));
    assert_ok(backend->unload_program(pa));
    assert_ok(backend->destroy_queue(a.queue));
    assert_ok(backend->destroy_context(a.context));
    // B goes on, and a new client works.
    auto again = launch(*backend, *b.queue, *pb, "fill64",
                    {Arg::u32(5), Arg::u64(0), Arg::u32(n), Arg::ptr(0, n * 4)},
                    {{0, VACCEL_ACCESS_WRITE, out.get(), 0, n * 4}}, dims(n / 256, 256));
    assert_ok(again);
    assert_int_equal(static_cast<int>(wait_for(*backend, *again->event).state),
                     static_cast<int>(EventState::complete));
    assert_ok(backend->destroy_event(again->event));
    assert_ok(backend->destroy_event(running->event));
    Client c = open_client(*backend);
    auto pc = load_into(*backend, *c.context);
    auto mine = buffer_of(*backend, *c.context, 256);
    auto fresh = launch(*backend, *c.queue, *pc, "fill64",
                    {Arg::u32(9), Arg::u64(0), Arg::u32(64), Arg::ptr(0, 256)},
                    {{0, VACCEL_ACCESS_WRITE, mine.get(), 0, 256}}, dims(1));
    assert_ok(fresh);
    assert_int_equal(static_cast<int>(wait_for(*backend, *fresh->event).state),
                     static_cast<int>(EventState::complete));
    std::vector<std::uint32_t> small(64);
    assert_ok(backend->read_buffer(*mine, 0, std::as_writable_bytes(std::span(small))));
    assert_int_equal(small[0], 9);
    assert_int_equal(small[63], 72);
    assert_ok(backend->destroy_event(fresh->event));
    assert_ok(backend->free_buffer(mine));
    assert_ok(backend->unload_program(pc));
    assert_ok(backend->destroy_queue(c.queue));
    assert_ok(backend->destroy_context(c.context));
    assert_ok(backend->free_buffer(out));
    assert_ok(backend->unload_program(pb));
    assert_ok(backend->destroy_queue(b.queue));
    assert_ok(backend->destroy_context(b.context));
    const LiveCounters live = backend->live();
    assert_int_equal(live.contexts + live.buffers + live.programs + live.queues + live.events, 0);
}

// The vaccel-cuda-host processes this process started, oldest first.
std::vector<pid_t> host_processes()
{
    std::vector<pid_t> out;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        std::getline(stat, line);
        const auto close = line.rfind(')');
        if (close == std::string::npos || line.find("(vaccel-cuda-hos") == std::string::npos)
            continue;
        std::istringstream rest(line.substr(close + 2));
        char state = 0;
        pid_t parent = 0;
        rest >> state >> parent;
        if (parent == getpid()) out.push_back(static_cast<pid_t>(std::stoi(name)));
    }
    std::sort(out.begin(), out.end());
    return out;
}

// A's host is killed (SIGKILL) while B's kernel runs: A's pending work fails
// with DeviceLost saying how its host ended, A refuses later calls, B
// completes.
void a_killed_host_fails_its_own_context_only(void**)
{
    auto backend = cuda_device();
    Client a = open_client(*backend);
    const auto before = host_processes();
    assert_int_equal(before.size(), 1);
    Client b = open_client(*backend);
    auto pa = load_into(*backend, *a.context), pb = load_into(*backend, *b.context);
    const std::uint32_t n = 1024;
    auto out_a = buffer_of(*backend, *a.context, n * 4), out_b = buffer_of(*backend, *b.context, n * 4);
    const auto spin = [&](Client& c, Program& p, Buffer& out) {
        return launch(*backend, *c.queue, p, "spin_then_write",
                  {Arg::u64(400'000'000ull), Arg::ptr(0, n * 4), Arg::u32(n)},
                  {{0, VACCEL_ACCESS_WRITE, &out, 0, n * 4}}, dims(n / 256, 256));
    };
    auto running_a = spin(a, *pa, *out_a);
    auto running_b = spin(b, *pb, *out_b);
    assert_ok(running_a);
    assert_ok(running_b);
    assert_int_equal(kill(before[0], SIGKILL), 0);
    const EventStatus lost = wait_for(*backend, *running_a->event);
    assert_int_equal(static_cast<int>(lost.state), static_cast<int>(EventState::failed));
    assert_int_equal(static_cast<int>(lost.failure.code), static_cast<int>(Errc::device_lost));
    assert_true(lost.failure.note.find("killed by signal 9") != std::string::npos);
    assert_int_equal(static_cast<int>(wait_for(*backend, *running_b->event).state),
                     static_cast<int>(EventState::complete));
    std::vector<std::uint32_t> got(n);
    assert_ok(backend->read_buffer(*out_b, 0, std::as_writable_bytes(std::span(got))));
    assert_int_equal(got[n - 1], n);
    assert_refused(launch(*backend, *a.queue, *pa, "noop", {}, {}, dims(1, 1)), Errc::device_lost,
                   VACCEL_D_DEVICE_STATE, 0, 0);
    for (auto* e : {&running_a->event, &running_b->event}) assert_ok(backend->destroy_event(*e));
    assert_ok(backend->free_buffer(out_a));
    assert_ok(backend->free_buffer(out_b));
    assert_ok(backend->unload_program(pa));
    assert_ok(backend->unload_program(pb));
    for (Client* c : {&a, &b}) {
        assert_ok(backend->destroy_queue(c->queue));
        assert_ok(backend->destroy_context(c->context));
    }
    assert_int_equal(host_processes().size(), 0);  // every host is gone and reaped
}

}  // namespace

int main()
{
    cuda_test::require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_fault_fails_its_own_context_only),
        cmocka_unit_test(a_killed_host_fails_its_own_context_only),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
