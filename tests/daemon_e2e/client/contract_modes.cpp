// contract_modes.cpp - host gates, kernel launch and device loss, end to
// end through libvaccel's public C API over whichever transport the script
// chose (kernel in the VM test, socket against vacceld, embedded in
// process): the same checks on all three.
//
// Owns: the exact outcome each case expects. Decides: a pending state is
// made certain with a gate, never hoped for from a long computation; every
// byte a kernel writes is compared.
#include <poll.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>
#include <vector>

#include "e2e_client.hpp"
#include "modes.hpp"
#include "test_programs.hpp"

namespace vaccel::e2e {

namespace {

constexpr std::uint64_t a_while_ns = 30ull * 1000000000ull;
constexpr std::string_view builtin_library = "vaccel.builtin";

std::uint32_t poll_state(vaccel_client* client, std::uint64_t event,
                         struct vaccel_status* failure = nullptr)
{
    std::uint32_t state = 0;
    E2E_CALL(vaccel_event_poll(client, event, &state, failure));
    return state;
}

void wait_done(vaccel_client* client, std::uint64_t event)
{
    E2E_CALL(vaccel_event_wait(client, &event, 1, VACCEL_WAIT_ALL,
                               vaccel_deadline_after_ns(a_while_ns), nullptr));
}

std::vector<float> read_floats(vaccel_client* client, std::uint64_t buffer, std::size_t count)
{
    std::vector<float> out(count);
    E2E_CALL(vaccel_buffer_read(client, buffer, 0, out.data(), count * sizeof(float)));
    return out;
}

void write_floats(vaccel_client* client, std::uint64_t buffer, const std::vector<float>& values)
{
    E2E_CALL(vaccel_buffer_write(client, buffer, 0, values.data(), values.size() * sizeof(float)));
}

// out[4] = a[4] + b[4] on one context, ready to submit.
struct AddOnce {
    std::uint64_t context = 0, a = 0, b = 0, c = 0, program = 0, queue = 0;
    std::vector<vaccel_binding> bindings() const
    {
        return {{0, VACCEL_ACCESS_READ, a, 0, 16},
                {1, VACCEL_ACCESS_READ, b, 0, 16},
                {2, VACCEL_ACCESS_WRITE, c, 0, 16}};
    }
};

AddOnce prepare_add_once(vaccel_client* client, std::uint32_t device)
{
    AddOnce run;
    E2E_CALL(vaccel_context_create(client, device, &run.context));
    run.a = alloc_host_buffer(client, run.context, 16);
    run.b = alloc_host_buffer(client, run.context, 16);
    run.c = alloc_host_buffer(client, run.context, 16);
    write_floats(client, run.a, {1.0f, 2.0f, 3.0f, 4.0f});
    write_floats(client, run.b, {10.0f, 20.0f, 30.0f, 40.0f});
    const std::vector<std::byte> artifact = test::add_program(4);
    E2E_CALL(vaccel_program_load(client, run.context, VACCEL_FORMAT_TOSA, nullptr, artifact.data(),
                                 artifact.size(), &run.program, nullptr, nullptr));
    E2E_CALL(vaccel_queue_create(client, run.context, &run.queue));
    return run;
}

int submit_after(vaccel_client* client, const AddOnce& run, std::uint64_t gate,
                 std::uint64_t value, std::uint64_t* event)
{
    const auto bindings = run.bindings();
    return vaccel_submit_after(client, run.queue, run.program, bindings.data(), 3, gate, value,
                               event);
}

std::uint64_t gate_value(vaccel_client* client, std::uint64_t gate)
{
    std::uint64_t value = 0;
    E2E_CALL(vaccel_gate_value(client, gate, &value));
    return value;
}

void expect_sum(vaccel_client* client, const AddOnce& run)
{
    const auto sum = read_floats(client, run.c, 4);
    E2E_EXPECT(sum == std::vector<float>({11.0f, 22.0f, 33.0f, 44.0f}), "c = {} {} {} {}", sum[0],
               sum[1], sum[2], sum[3]);
}

// ---- gates -----------------------------------------------------------------------

void gate_holds_work_until_raised(vaccel_client* client)
{
    AddOnce run = prepare_add_once(client, 0);
    std::uint64_t gate = 0;
    E2E_CALL(vaccel_gate_create(client, run.context, &gate));
    E2E_EXPECT(gate_value(client, gate) == 0, "a new gate starts at 0");
    std::uint64_t event = 0;
    E2E_CALL(submit_after(client, run, gate, 2, &event));
    E2E_EXPECT(poll_state(client, event) == VACCEL_EVENT_PENDING, "held before any raise");

    // The held work's buffers are in flight: a write is Busy, naming the handle.
    const float ones[4] = {1, 1, 1, 1};
    expect_refusal("write to a buffer bound by held work",
                   vaccel_buffer_write(client, run.a, 0, ones, sizeof ones),
                   {-EBUSY, VACCEL_E_BUSY, VACCEL_D_IN_FLIGHT, VACCEL_LIMIT_NONE, run.a, 1});
    expect_refusal("destroy of held work's event", vaccel_event_destroy(client, event),
                   {-EBUSY, VACCEL_E_BUSY, VACCEL_D_NOT_COMPLETE, VACCEL_LIMIT_NONE, event, 0});

    E2E_CALL(vaccel_gate_raise(client, gate, 1));
    E2E_EXPECT(gate_value(client, gate) == 1, "raised to 1");
    E2E_EXPECT(poll_state(client, event) == VACCEL_EVENT_PENDING, "1 < 2: still held");
    E2E_CALL(vaccel_gate_raise(client, gate, 5));
    wait_done(client, event);
    E2E_EXPECT(poll_state(client, event) == VACCEL_EVENT_COMPLETE, "complete once released");
    expect_sum(client, run);
    // Raising never lowers: 3 after 5 changes nothing.
    E2E_CALL(vaccel_gate_raise(client, gate, 3));
    E2E_EXPECT(gate_value(client, gate) == 5, "a raise to 3 after 5 keeps 5");
    // Work after a value the gate already passed starts at once.
    std::uint64_t second = 0;
    E2E_CALL(submit_after(client, run, gate, 4, &second));
    wait_done(client, second);
    E2E_EXPECT(poll_state(client, second) == VACCEL_EVENT_COMPLETE, "4 <= 5 runs at once");

    struct vaccel_context_limits limits{};
    E2E_CALL(vaccel_context_limits(client, run.context, &limits));
    E2E_EXPECT(limits.used_gates == 1, "{} gates counted", limits.used_gates);
    E2E_CALL(vaccel_event_destroy(client, event));
    E2E_CALL(vaccel_event_destroy(client, second));
    // A context with a gate is not destroyed (its child).
    expect_refusal("destroy of a context that owns a gate",
                   vaccel_context_destroy(client, run.context),
                   {-EBUSY, VACCEL_E_BUSY, VACCEL_D_IN_USE, VACCEL_LIMIT_NONE, 6, 0});
    E2E_CALL(vaccel_gate_destroy(client, gate));
    E2E_CALL(vaccel_context_limits(client, run.context, &limits));
    E2E_EXPECT(limits.used_gates == 0, "{} gates counted after destroy", limits.used_gates);
    std::puts("gates: held until raised, raises never lower");
}

void destroyed_gate_cancels_waiting_work(vaccel_client* client)
{
    AddOnce run = prepare_add_once(client, 0);
    std::uint64_t gate = 0;
    E2E_CALL(vaccel_gate_create(client, run.context, &gate));
    std::uint64_t event = 0;
    E2E_CALL(submit_after(client, run, gate, 7, &event));
    E2E_CALL(vaccel_gate_destroy(client, gate));
    wait_done(client, event);
    struct vaccel_status failure{};
    E2E_EXPECT(poll_state(client, event, &failure) == VACCEL_EVENT_CANCELLED, "cancelled");
    E2E_EXPECT(failure.error == VACCEL_E_CANCELLED && failure.detail == VACCEL_D_GATE_DESTROYED &&
                   failure.arg1 == 7,
               "failure error {} detail {} arg1 {}", failure.error, failure.detail, failure.arg1);
    // The work never ran: c is untouched, and its buffers are free again.
    const auto c = read_floats(client, run.c, 4);
    E2E_EXPECT(c == std::vector<float>(4, 0.0f), "c was written: {}", c[0]);
    const float ones[4] = {1, 1, 1, 1};
    E2E_CALL(vaccel_buffer_write(client, run.a, 0, ones, sizeof ones));
    E2E_CALL(vaccel_event_destroy(client, event));
    std::puts("gates: a destroyed gate cancels what waits on it");
}

void gate_refusals(vaccel_client* client)
{
    AddOnce run = prepare_add_once(client, 0);
    AddOnce other = prepare_add_once(client, 0);
    std::uint64_t gate = 0;
    E2E_CALL(vaccel_gate_create(client, other.context, &gate));
    std::uint64_t event = 0;
    expect_refusal("submit after a gate of another context", submit_after(client, run, gate, 1, &event),
                   {-ENOEXEC, VACCEL_E_INCOMPATIBLE, VACCEL_D_BINDING_CONTEXT, VACCEL_LIMIT_NONE,
                    gate, 0});
    // Another session's gate is an unknown handle there.
    vaccel_client* second = open_client();
    expect_refusal("raise of another session's gate", vaccel_gate_raise(second, gate, 1),
                   {-EINVAL, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_UNKNOWN_HANDLE, VACCEL_LIMIT_NONE,
                    gate, 0});
    vaccel_client_close(second);
    // A queue handle is not a gate.
    expect_refusal("raise of a queue", vaccel_gate_raise(client, run.queue, 1),
                   {-EINVAL, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_WRONG_HANDLE_KIND,
                    VACCEL_LIMIT_NONE, run.queue, 0});
    E2E_CALL(vaccel_gate_destroy(client, gate));
    std::puts("gates: foreign, cross-context and wrong-kind handles refused");
}

// ---- launch ----------------------------------------------------------------------

void put_u32(std::vector<std::uint8_t>& argv, std::uint8_t tag, std::uint32_t value)
{
    argv.push_back(tag);
    for (int i = 0; i < 4; ++i) argv.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

void put_ptr(std::vector<std::uint8_t>& argv, std::uint32_t slot, std::uint32_t bytes)
{
    put_u32(argv, VACCEL_ARG_PTR, slot);
    for (int i = 0; i < 4; ++i) argv.push_back(static_cast<std::uint8_t>(bytes >> (8 * i)));
}

struct Kernels {
    std::uint64_t context = 0, program = 0, queue = 0, x = 0, y = 0;
};

Kernels prepare_kernels(vaccel_client* client)
{
    Kernels k;
    E2E_CALL(vaccel_context_create(client, 0, &k.context));
    E2E_CALL(vaccel_program_load(client, k.context, VACCEL_FORMAT_CPU_BUILTIN, nullptr,
                                 builtin_library.data(), builtin_library.size(), &k.program,
                                 nullptr, nullptr));
    E2E_CALL(vaccel_queue_create(client, k.context, &k.queue));
    k.x = alloc_host_buffer(client, k.context, 64);
    k.y = alloc_host_buffer(client, k.context, 64);
    return k;
}

constexpr vaccel_launch_dims one_block{{1, 1, 1}, {64, 1, 1}, 0, 0};

int launch(vaccel_client* client, const Kernels& k, const char* entry,
           const std::vector<std::uint8_t>& argv, const std::vector<vaccel_binding>& bindings,
           std::uint64_t* event, const vaccel_launch_dims& dims = one_block)
{
    return vaccel_launch(client, k.queue, k.program, entry, &dims, argv.data(),
                         static_cast<std::uint32_t>(argv.size()), bindings.data(),
                         static_cast<std::uint32_t>(bindings.size()), 0, event);
}

void builtin_kernels_compute_exact_bytes(vaccel_client* client)
{
    Kernels k = prepare_kernels(client);
    // fill_u32(ptr dst, u32 value, u32 count) over 12 of the 16 words, at
    // byte offset 4 of the buffer: words 1..12 hold the value, 0 and 13..15
    // stay zero.
    std::vector<std::uint8_t> argv;
    put_ptr(argv, 0, 48);
    put_u32(argv, VACCEL_ARG_U32, 0xdeadbeef);
    put_u32(argv, VACCEL_ARG_U32, 12);
    std::uint64_t event = 0;
    E2E_CALL(launch(client, k, "fill_u32", argv, {{0, VACCEL_ACCESS_WRITE, k.y, 4, 48}}, &event));
    wait_done(client, event);
    E2E_EXPECT(poll_state(client, event) == VACCEL_EVENT_COMPLETE, "fill_u32 completed");
    std::uint32_t words[16] = {};
    E2E_CALL(vaccel_buffer_read(client, k.y, 0, words, sizeof words));
    for (int i = 0; i < 16; ++i)
        E2E_EXPECT(words[i] == (i >= 1 && i <= 12 ? 0xdeadbeefu : 0u), "word {} = {:#x}", i,
                   words[i]);
    E2E_CALL(vaccel_event_destroy(client, event));

    // axpy_f32(f32 a, ptr x, ptr y, u32 n): y = 2.5 x + y over 16 floats.
    std::vector<float> x(16), y(16);
    for (int i = 0; i < 16; ++i) {
        x[i] = static_cast<float>(i) - 3.0f;
        y[i] = 0.25f * static_cast<float>(i);
    }
    write_floats(client, k.x, x);
    write_floats(client, k.y, y);
    argv.clear();
    float a = 2.5f;
    std::uint32_t a_bits = 0;
    std::memcpy(&a_bits, &a, 4);
    put_u32(argv, VACCEL_ARG_F32, a_bits);
    put_ptr(argv, 3, 64);
    put_ptr(argv, 5, 64);
    put_u32(argv, VACCEL_ARG_U32, 16);
    E2E_CALL(launch(client, k, "axpy_f32", argv,
                    {{3, VACCEL_ACCESS_READ, k.x, 0, 64}, {5, VACCEL_ACCESS_RW, k.y, 0, 64}},
                    &event));
    wait_done(client, event);
    E2E_EXPECT(poll_state(client, event) == VACCEL_EVENT_COMPLETE, "axpy_f32 completed");
    const auto out = read_floats(client, k.y, 16);
    for (int i = 0; i < 16; ++i) {
        const float expected = a * x[i] + y[i];
        E2E_EXPECT(std::memcmp(&out[i], &expected, 4) == 0, "y[{}] = {} (expected {})", i, out[i],
                   expected);
    }
    E2E_CALL(vaccel_event_destroy(client, event));
    std::puts("launch: fill_u32 and axpy_f32 wrote exact bytes");
}

void launch_refusals(vaccel_client* client)
{
    Kernels k = prepare_kernels(client);
    const std::vector<vaccel_binding> dst{{0, VACCEL_ACCESS_WRITE, k.y, 0, 64}};
    std::vector<std::uint8_t> fill;
    put_ptr(fill, 0, 64);
    put_u32(fill, VACCEL_ARG_U32, 1);
    put_u32(fill, VACCEL_ARG_U32, 16);
    std::uint64_t event = 0;
    const auto refused = [&](std::string_view what, int rc, const ExpectedRefusal& expected) {
        expect_refusal(what, rc, expected);
        E2E_EXPECT(event == 0, "{}: an event was handed out", what);
    };
    refused("unknown entry", launch(client, k, "no_such_kernel", fill, dst, &event),
            {-EINVAL, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_KERNEL_ENTRY});
    std::vector<std::uint8_t> bad = fill;
    bad[9] = 0x09;  // the second record's tag
    refused("unknown tag", launch(client, k, "fill_u32", bad, dst, &event),
            {-EINVAL, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_KERNEL_ARG_TAG, VACCEL_LIMIT_NONE, 9,
             0x09});
    bad = fill;
    bad.pop_back();
    refused("truncated value", launch(client, k, "fill_u32", bad, dst, &event),
            {-EINVAL, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_KERNEL_ARG_TRUNCATED, VACCEL_LIMIT_NONE,
             14, 1});
    bad = fill;
    bad.insert(bad.end(), 3, 0);
    refused("trailing zero bytes", launch(client, k, "fill_u32", bad, dst, &event),
            {-EINVAL, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_KERNEL_ARG_TRAILING, VACCEL_LIMIT_NONE,
             19, 3});
    bad.assign(VACCEL_MAX_KERNEL_ARGS_BYTES + 1, VACCEL_ARG_I32);
    refused("argument bytes past the cap", launch(client, k, "fill_u32", bad, dst, &event),
            {-EDQUOT, VACCEL_E_RESOURCE_LIMIT, VACCEL_D_LIMIT, VACCEL_LIMIT_KERNEL_ARGS_BYTES,
             VACCEL_MAX_KERNEL_ARGS_BYTES, VACCEL_MAX_KERNEL_ARGS_BYTES + 1});
    bad.clear();
    for (int i = 0; i <= VACCEL_MAX_KERNEL_ARGS; ++i) put_u32(bad, VACCEL_ARG_U32, 0);
    refused("records past the cap", launch(client, k, "fill_u32", bad, dst, &event),
            {-EDQUOT, VACCEL_E_RESOURCE_LIMIT, VACCEL_D_LIMIT, VACCEL_LIMIT_KERNEL_ARGS,
             VACCEL_MAX_KERNEL_ARGS, VACCEL_MAX_KERNEL_ARGS});
    bad.clear();
    put_ptr(bad, 2, 64);
    put_u32(bad, VACCEL_ARG_U32, 1);
    put_u32(bad, VACCEL_ARG_U32, 16);
    refused("pointer to an unbound slot", launch(client, k, "fill_u32", bad, dst, &event),
            {-EINVAL, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_KERNEL_ARG_POINTER, VACCEL_LIMIT_NONE, 0,
             2});
    bad.clear();
    put_ptr(bad, 0, 65);
    put_u32(bad, VACCEL_ARG_U32, 1);
    put_u32(bad, VACCEL_ARG_U32, 16);
    refused("pointer past its binding", launch(client, k, "fill_u32", bad, dst, &event),
            {-ERANGE, VACCEL_E_OUT_OF_BOUNDS, VACCEL_D_RANGE, VACCEL_LIMIT_NONE, 0, 65});
    bad.clear();
    put_ptr(bad, 0, 64);
    put_u32(bad, VACCEL_ARG_U32, 1);
    put_u32(bad, VACCEL_ARG_U32, 17);
    refused("count past the pointer's bytes", launch(client, k, "fill_u32", bad, dst, &event),
            {-ERANGE, VACCEL_E_OUT_OF_BOUNDS, VACCEL_D_RANGE, VACCEL_LIMIT_NONE, 0, 68});
    bad.clear();
    put_ptr(bad, 0, 64);
    put_u32(bad, VACCEL_ARG_I32, 1);
    put_u32(bad, VACCEL_ARG_U32, 16);
    refused("argument of the wrong type", launch(client, k, "fill_u32", bad, dst, &event),
            {-EINVAL, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_KERNEL_SIGNATURE, VACCEL_LIMIT_NONE, 1,
             VACCEL_ARG_U32});
    refused("destination bound read-only",
            launch(client, k, "fill_u32", fill, {{0, VACCEL_ACCESS_READ, k.y, 0, 64}}, &event),
            {-ENOEXEC, VACCEL_E_INCOMPATIBLE, VACCEL_D_ACCESS, VACCEL_LIMIT_NONE,
             VACCEL_ACCESS_WRITE, VACCEL_ACCESS_READ});
    vaccel_launch_dims dims = one_block;
    dims.block[1] = 0;
    refused("a zero block dimension", launch(client, k, "fill_u32", fill, dst, &event, dims),
            {-EINVAL, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_LAUNCH_DIMS, VACCEL_LIMIT_NONE,
             offsetof(struct vaccel_launch, dims) + offsetof(vaccel_launch_dims, block) + 4, 0});
    dims = one_block;
    dims.grid[0] = 65536;
    dims.grid[1] = 65536;
    refused("a grid past 32 bits", launch(client, k, "fill_u32", fill, dst, &event, dims),
            {-EINVAL, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_LAUNCH_DIMS, VACCEL_LIMIT_NONE,
             offsetof(struct vaccel_launch, dims) + offsetof(vaccel_launch_dims, grid),
             65536ull * 65536ull});

    // A TOSA program is submitted, not launched; a kernel program the reverse.
    const std::vector<std::byte> artifact = test::add_program(4);
    std::uint64_t tosa = 0;
    E2E_CALL(vaccel_program_load(client, k.context, VACCEL_FORMAT_TOSA, nullptr, artifact.data(),
                                 artifact.size(), &tosa, nullptr, nullptr));
    refused("launch of a TOSA program",
            vaccel_launch(client, k.queue, tosa, "fill_u32", &one_block, fill.data(),
                          static_cast<std::uint32_t>(fill.size()), dst.data(), 1, 0, &event),
            {-ENOEXEC, VACCEL_E_INCOMPATIBLE, VACCEL_D_FORMAT, VACCEL_LIMIT_NONE,
             VACCEL_FORMAT_TOSA, 0});
    const vaccel_binding one{0, VACCEL_ACCESS_READ, k.x, 0, 16};
    refused("submit of a kernel program",
            vaccel_submit(client, k.queue, k.program, &one, 1, 0, &event),
            {-ENOEXEC, VACCEL_E_INCOMPATIBLE, VACCEL_D_FORMAT, VACCEL_LIMIT_NONE,
             VACCEL_FORMAT_CPU_BUILTIN, 0});
    std::uint64_t wrong = 0;
    expect_refusal("load of an unknown built-in library",
                   vaccel_program_load(client, k.context, VACCEL_FORMAT_CPU_BUILTIN, nullptr,
                                       "vaccel.other", 12, &wrong, nullptr, nullptr),
                   {-EINVAL, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_BAD_VALUE, VACCEL_LIMIT_NONE,
                    offsetof(struct vaccel_program_load, payload), 12});
    // Nothing refused left a trace: the accounting holds no event.
    struct vaccel_context_limits limits{};
    E2E_CALL(vaccel_context_limits(client, k.context, &limits));
    E2E_EXPECT(limits.used_events == 0, "{} events charged after refusals", limits.used_events);
    std::puts("launch: every malformed launch refused with its detail, nothing charged");
}

// ---- the pollable descriptor --------------------------------------------------

bool readable(int fd, int timeout_ms)
{
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, timeout_ms);
    E2E_EXPECT(n >= 0, "poll: {}", std::strerror(errno));
    E2E_EXPECT((p.revents & (POLLERR | POLLHUP | POLLNVAL)) == 0, "poll revents {:#x}", p.revents);
    return n == 1 && (p.revents & POLLIN) != 0;
}

void client_fd_reports_completions(vaccel_client* client)
{
    const int fd = vaccel_client_fd(client);
    E2E_EXPECT(fd >= 0, "vaccel_client_fd: {} ({})", fd, vaccel_last_error_message());
    E2E_EXPECT(vaccel_client_fd(client) == fd, "a second call gives another descriptor");
    AddOnce run = prepare_add_once(client, 0);
    std::uint64_t gate = 0;
    E2E_CALL(vaccel_gate_create(client, run.context, &gate));
    std::uint64_t event = 0;
    E2E_CALL(submit_after(client, run, gate, 1, &event));
    // Held by the gate: nothing completed, nothing to report.
    E2E_EXPECT(!readable(fd, 0), "readable before any completion");
    E2E_CALL(vaccel_gate_raise(client, gate, 1));
    E2E_EXPECT(readable(fd, 30000), "not readable 30 s after the work was released");
    // The look clears it first; nothing completes after: not readable.
    E2E_EXPECT(poll_state(client, event) == VACCEL_EVENT_COMPLETE, "complete when readable");
    E2E_EXPECT(!readable(fd, 0), "still readable after vaccel_event_poll");
    expect_sum(client, run);
    E2E_CALL(vaccel_event_destroy(client, event));
    // A cancellation is reported too.
    E2E_CALL(submit_after(client, run, gate, 2, &event));
    E2E_EXPECT(!readable(fd, 0), "readable with the work held");
    E2E_CALL(vaccel_gate_destroy(client, gate));
    E2E_EXPECT(readable(fd, 30000), "a cancellation did not make it readable");
    std::uint32_t first = 0;
    E2E_CALL(vaccel_event_wait(client, &event, 1, VACCEL_WAIT_ALL, 0, &first));
    E2E_EXPECT(!readable(fd, 0), "still readable after vaccel_event_wait");
    E2E_EXPECT(poll_state(client, event) == VACCEL_EVENT_CANCELLED, "cancelled");
    E2E_CALL(vaccel_event_destroy(client, event));
    std::puts("notify: the client's descriptor reports completions and cancellations, "
              "cleared by each look");
}

}  // namespace

int notify_mode()
{
    vaccel_client* client = open_client();
    client_fd_reports_completions(client);
    vaccel_client_close(client);
    return 0;
}

int gates_mode()
{
    vaccel_client* client = open_client();
    gate_holds_work_until_raised(client);
    destroyed_gate_cancels_waiting_work(client);
    gate_refusals(client);
    vaccel_client_close(client);
    return 0;
}

int launch_mode()
{
    vaccel_client* client = open_client();
    struct vaccel_device_info info{};
    E2E_CALL(vaccel_device_info(client, 0, &info));
    E2E_EXPECT((info.formats & VACCEL_FORMAT_BIT(VACCEL_FORMAT_CPU_BUILTIN)) != 0 &&
                   (info.flags & VACCEL_CAP_LAUNCH) != 0 && (info.flags & VACCEL_CAP_GATES) != 0,
               "device 0 formats {:#x} flags {:#x}", info.formats, info.flags);
    builtin_kernels_compute_exact_bytes(client);
    launch_refusals(client);
    vaccel_client_close(client);
    return 0;
}

int loss_mode(std::uint64_t accepted_before_loss)
{
    vaccel_client* client = open_client();
    std::uint32_t count = 0;
    E2E_CALL(vaccel_device_count(client, &count));
    E2E_EXPECT(count == 2, "{} devices; the daemon must serve the CPU as two", count);
    AddOnce lost = prepare_add_once(client, 0);
    AddOnce waiting = prepare_add_once(client, 0);
    AddOnce kept = prepare_add_once(client, 1);
    std::uint64_t gate = 0;
    E2E_CALL(vaccel_gate_create(client, waiting.context, &gate));
    // One submission held by a gate, then plain ones until the device dies
    // taking one.
    std::uint64_t held = 0;
    E2E_CALL(submit_after(client, waiting, gate, 1, &held));
    const auto bindings = lost.bindings();
    for (std::uint64_t i = 1; i < accepted_before_loss; ++i) {
        std::uint64_t event = 0;
        E2E_CALL(vaccel_submit(client, lost.queue, lost.program, bindings.data(), 3, 0, &event));
        wait_done(client, event);
        E2E_CALL(vaccel_event_destroy(client, event));
    }
    std::uint64_t indeterminate = 0;
    const int rc = vaccel_submit(client, lost.queue, lost.program, bindings.data(), 3, 0,
                                 &indeterminate);
    E2E_EXPECT(indeterminate != 0, "the indeterminate submit handed out its event");
    expect_refusal("the submit the device died taking", rc,
                   {-ENODEV, VACCEL_E_DEVICE_LOST, VACCEL_D_INDETERMINATE, VACCEL_LIMIT_NONE,
                    indeterminate, 0});
    // Its event, and the held one, fail with DeviceLost naming device 0.
    for (std::uint64_t event : {indeterminate, held}) {
        wait_done(client, event);
        struct vaccel_status failure{};
        E2E_EXPECT(poll_state(client, event, &failure) == VACCEL_EVENT_FAILED, "event failed");
        E2E_EXPECT(failure.error == VACCEL_E_DEVICE_LOST &&
                       failure.detail == VACCEL_D_DEVICE_STATE && failure.arg0 == 0,
                   "failure error {} detail {} arg0 {}", failure.error, failure.detail,
                   failure.arg0);
        E2E_CALL(vaccel_event_destroy(client, event));
    }
    // Every later call on device 0 fails; device info says lost.
    struct vaccel_device_info info{};
    E2E_CALL(vaccel_device_info(client, 0, &info));
    E2E_EXPECT(info.state == VACCEL_DEVICE_LOST, "device 0 state {}", info.state);
    std::uint64_t event = 0;
    expect_refusal("submit on the lost device",
                   vaccel_submit(client, lost.queue, lost.program, bindings.data(), 3, 0, &event),
                   {-ENODEV, VACCEL_E_DEVICE_LOST, VACCEL_D_DEVICE_STATE, VACCEL_LIMIT_NONE, 0, 0});
    std::uint64_t context = 0;
    expect_refusal("context on the lost device", vaccel_context_create(client, 0, &context),
                   {-ENODEV, VACCEL_E_DEVICE_LOST, VACCEL_D_DEVICE_STATE, VACCEL_LIMIT_NONE, 0, 0});
    // The other device keeps serving.
    E2E_CALL(vaccel_device_info(client, 1, &info));
    E2E_EXPECT(info.state == VACCEL_DEVICE_OK, "device 1 state {}", info.state);
    const auto kept_bindings = kept.bindings();
    E2E_CALL(vaccel_submit(client, kept.queue, kept.program, kept_bindings.data(), 3, 0, &event));
    wait_done(client, event);
    E2E_EXPECT(poll_state(client, event) == VACCEL_EVENT_COMPLETE, "device 1 still serves");
    expect_sum(client, kept);
    E2E_CALL(vaccel_event_destroy(client, event));
    // Objects of the lost device can still be released.
    E2E_CALL(vaccel_gate_destroy(client, gate));
    for (const AddOnce* run : {&lost, &waiting}) {
        E2E_CALL(vaccel_queue_destroy(client, run->queue));
        E2E_CALL(vaccel_program_unload(client, run->program));
        for (std::uint64_t buffer : {run->a, run->b, run->c})
            E2E_CALL(vaccel_buffer_free(client, buffer));
        E2E_CALL(vaccel_context_destroy(client, run->context));
    }
    vaccel_client_close(client);
    std::puts("loss: device 0 lost with its work, device 1 kept serving");
    return 0;
}

// The first device that loads SPIR-V (a Vulkan device) runs the saxpy test
// kernel at `module_path` (tests/vulkan/kernels/saxpy.comp: y = a x + y for
// i < n; a and n push constants, x and y storage buffers): x[i] = i, y[i] =
// 1000 - 3i, a = 2, n = 100 over 128 floats in two workgroups, so y becomes
// 1000 - i below 100 and keeps 1000 - 3i above (exact small integers). An
// entry the module lacks is refused with D_KERNEL_ENTRY.
int spirv_launch_mode(const char* module_path)
{
    std::ifstream in(module_path, std::ios::binary);
    E2E_EXPECT(static_cast<bool>(in), "cannot read {}", module_path);
    const std::vector<char> module((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
    vaccel_client* client = open_client();
    std::uint32_t count = 0;
    E2E_CALL(vaccel_device_count(client, &count));
    std::uint32_t device = count;
    for (std::uint32_t i = 0; i < count && device == count; ++i) {
        struct vaccel_device_info info{};
        E2E_CALL(vaccel_device_info(client, i, &info));
        if ((info.formats & VACCEL_FORMAT_BIT(VACCEL_FORMAT_SPIRV)) != 0 &&
            (info.flags & VACCEL_CAP_LAUNCH) != 0)
            device = i;
    }
    E2E_EXPECT(device < count, "none of the {} devices loads SPIR-V", count);
    Kernels k;
    E2E_CALL(vaccel_context_create(client, device, &k.context));
    E2E_CALL(vaccel_program_load(client, k.context, VACCEL_FORMAT_SPIRV, nullptr, module.data(),
                                 module.size(), &k.program, nullptr, nullptr));
    E2E_CALL(vaccel_queue_create(client, k.context, &k.queue));
    k.x = alloc_host_buffer(client, k.context, 512);
    k.y = alloc_host_buffer(client, k.context, 512);
    std::vector<float> x(128), y(128);
    for (int i = 0; i < 128; ++i) {
        x[i] = static_cast<float>(i);
        y[i] = static_cast<float>(1000 - 3 * i);
    }
    write_floats(client, k.x, x);
    write_floats(client, k.y, y);
    std::vector<std::uint8_t> argv;
    put_ptr(argv, 0, 512);
    put_ptr(argv, 1, 512);
    const float a = 2.0f;
    std::uint32_t a_bits = 0;
    std::memcpy(&a_bits, &a, 4);
    put_u32(argv, VACCEL_ARG_F32, a_bits);
    put_u32(argv, VACCEL_ARG_U32, 100);
    const std::vector<vaccel_binding> bindings{{0, VACCEL_ACCESS_READ, k.x, 0, 512},
                                               {1, VACCEL_ACCESS_RW, k.y, 0, 512}};
    const vaccel_launch_dims two_groups{{2, 1, 1}, {1, 1, 1}, 0, 0};
    std::uint64_t event = 0;
    E2E_CALL(launch(client, k, "main", argv, bindings, &event, two_groups));
    wait_done(client, event);
    E2E_EXPECT(poll_state(client, event) == VACCEL_EVENT_COMPLETE, "saxpy completed");
    const auto out = read_floats(client, k.y, 128);
    for (int i = 0; i < 128; ++i) {
        const float expected = static_cast<float>(i < 100 ? 1000 - i : 1000 - 3 * i);
        E2E_EXPECT(std::memcmp(&out[i], &expected, 4) == 0, "y[{}] = {} (expected {})", i, out[i],
                   expected);
    }
    E2E_CALL(vaccel_event_destroy(client, event));
    expect_refusal("launching an entry the module lacks",
                   launch(client, k, "saxpy", argv, bindings, &event, two_groups),
                   {-EINVAL, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_KERNEL_ENTRY});
    vaccel_client_close(client);
    std::printf("spirv-launch: saxpy on device %u wrote exact floats\n", device);
    return 0;
}

}  // namespace vaccel::e2e
