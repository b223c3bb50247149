// test_fast_path.cpp - vaccel_run and vaccel_buffer_map through the C API,
// on the transport named by argv[1] (default "embedded"). lib.fast_path
// runs it embedded; e2e_daemon_fast_path runs it against a real vacceld
// on a private socket (tests/e2e/daemon_client.sh).
//   - a run completes and its output is exact; a refused run says why and
//     leaves *failure zero; a run whose work fails returns that failure;
//     runs leave no event behind (2000 runs, max_events far lower);
//   - a mapped Host buffer is the buffer: bytes written through the mapping
//     are what the run reads, the run's output is in the mapping; mapping
//     twice gives the same address; the memory limit counts it once;
//     unmap and free unmap it; a buffer bound by pending work cannot be
//     mapped (-EBUSY) until the work ended; an unknown handle is refused.
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "test_programs.hpp"
#include "lib_support.hpp"

using namespace vaccel::test;

namespace {

const char* transport = VACCEL_TRANSPORT_EMBEDDED;

vaccel_client* open_client()
{
    vaccel_client* client = nullptr;
    assert_call(vaccel_client_open(transport, &client));
    assert_string_equal(vaccel_client_transport(client), transport);
    return client;
}

struct Bindings {
    vaccel_binding items[3];
    explicit Bindings(const CRun& run)
        : items{{0, VACCEL_ACCESS_READ, run.a, 0, run.bytes},
                {1, VACCEL_ACCESS_READ, run.b, 0, run.bytes},
                {2, VACCEL_ACCESS_WRITE, run.c, 0, run.bytes}}
    {
    }
};

void run_completes_with_the_exact_sum(void**)
{
    vaccel_client* client = open_client();
    CRun run = prepare(client, add_program(4), 16);
    const float a[4] = {0.5f, -1.0f, 2.25f, 1e6f};
    const float b[4] = {0.25f, 1.0f, -0.25f, 1.0f};
    assert_call(vaccel_buffer_write(client, run.a, 0, a, sizeof a));
    assert_call(vaccel_buffer_write(client, run.b, 0, b, sizeof b));
    Bindings bind(run);
    vaccel_status failure{};
    failure.error = 99;  // must be zeroed
    assert_call(vaccel_run(client, run.queue, run.program, bind.items, 3, 0, &failure));
    assert_int_equal(failure.error, VACCEL_OK);
    float c[4] = {};
    assert_call(vaccel_buffer_read(client, run.c, 0, c, sizeof c));
    const float sum[4] = {0.75f, 0.0f, 2.0f, 1000001.0f};
    assert_memory_equal(c, sum, sizeof c);
    vaccel_client_close(client);
}

void refused_run_says_why_and_ran_nothing(void**)
{
    vaccel_client* client = open_client();
    CRun run = prepare(client, add_program(4), 16);
    Bindings bind(run);
    bind.items[2].bytes = 8;  // the output slot needs 16
    vaccel_status failure{};
    failure.error = 99;
    const int rc = vaccel_run(client, run.queue, run.program, bind.items, 3, 0, &failure);
    assert_int_equal(rc, -ENOEXEC);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_BINDING_SIZE);
    assert_int_equal(vaccel_last_status()->arg0, 2);
    assert_int_equal(failure.error, VACCEL_OK);
    // Nothing is in flight: the output buffer can be freed at once.
    assert_call(vaccel_buffer_free(client, run.c));
    vaccel_client_close(client);
}

void run_whose_work_fails_returns_the_failure(void**)
{
    vaccel_client* client = open_client();
    CRun run = prepare(client, intdiv_program(4), 16);
    const int32_t a[4] = {7, 8, 9, 10};
    const int32_t b[4] = {1, 0, 3, 5};  // element 1 divides by zero
    assert_call(vaccel_buffer_write(client, run.a, 0, a, sizeof a));
    assert_call(vaccel_buffer_write(client, run.b, 0, b, sizeof b));
    Bindings bind(run);
    vaccel_status failure{};
    const int rc = vaccel_run(client, run.queue, run.program, bind.items, 3, 0, &failure);
    assert_int_equal(rc, -EINVAL);
    assert_int_equal(failure.error, VACCEL_E_INVALID_ARGUMENT);
    assert_int_equal(failure.detail, VACCEL_D_EXECUTION);
    assert_int_equal(failure.arg0, 0);  // operator 0
    assert_int_equal(failure.arg1, 1);  // element 1
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_EXECUTION);
    // Nothing was written, and nothing stays in flight.
    int32_t c[4] = {-1, -1, -1, -1};
    assert_call(vaccel_buffer_read(client, run.c, 0, c, sizeof c));
    const int32_t zero[4] = {};
    assert_memory_equal(c, zero, sizeof c);
    assert_call(vaccel_buffer_free(client, run.c));
    vaccel_client_close(client);
}

void runs_leave_no_event_behind(void**)
{
    vaccel_client* client = open_client();
    CRun run = prepare(client, add_program(4), 16);
    struct vaccel_context_limits limits{};
    assert_call(vaccel_context_limits(client, run.context, &limits));
    const uint32_t runs = limits.limits.max_events * 2 + 10;
    Bindings bind(run);
    for (uint32_t i = 0; i < runs; ++i)
        assert_call(vaccel_run(client, run.queue, run.program, bind.items, 3, 0, nullptr));
    assert_call(vaccel_context_limits(client, run.context, &limits));
    assert_int_equal(limits.used_events, 0);
    vaccel_client_close(client);
}

void mapped_buffers_are_the_buffers(void**)
{
    vaccel_client* client = open_client();
    CRun run = prepare(client, add_program(1024), 4096);
    struct vaccel_context_limits before{};
    assert_call(vaccel_context_limits(client, run.context, &before));
    void* pa = nullptr;
    void* pb = nullptr;
    void* pc = nullptr;
    assert_call(vaccel_buffer_map(client, run.a, &pa));
    assert_call(vaccel_buffer_map(client, run.b, &pb));
    assert_call(vaccel_buffer_map(client, run.c, &pc));
    void* again = nullptr;
    assert_call(vaccel_buffer_map(client, run.a, &again));
    assert_ptr_equal(again, pa);
    auto* a = static_cast<float*>(pa);
    auto* b = static_cast<float*>(pb);
    auto* c = static_cast<float*>(pc);
    for (int i = 0; i < 1024; ++i) {
        a[i] = static_cast<float>(i) * 0.5f;
        b[i] = 1000.0f - static_cast<float>(i);
    }
    Bindings bind(run);
    assert_call(vaccel_run(client, run.queue, run.program, bind.items, 3, 0, nullptr));
    std::vector<float> read(1024);
    assert_call(vaccel_buffer_read(client, run.c, 0, read.data(), 4096));
    for (int i = 0; i < 1024; ++i) {
        const float expected = static_cast<float>(i) * 0.5f + (1000.0f - static_cast<float>(i));
        if (c[i] != expected || read[i] != expected)
            fail_msg("element %d: mapping %g, read %g, expected %g", i, c[i], read[i], expected);
    }
    // A write through the API shows in the mapping too.
    const float seven = 7.0f;
    assert_call(vaccel_buffer_write(client, run.a, 0, &seven, sizeof seven));
    assert_true(a[0] == 7.0f);
    // Mapped bytes count once.
    struct vaccel_context_limits after{};
    assert_call(vaccel_context_limits(client, run.context, &after));
    assert_int_equal(after.used_memory_bytes, before.used_memory_bytes);
    // Unmapped once; a second unmap has nothing to undo.
    assert_call(vaccel_buffer_unmap(client, run.b));
    assert_int_equal(vaccel_buffer_unmap(client, run.b), -EINVAL);
    // Freeing a mapped buffer unmaps it.
    assert_call(vaccel_buffer_free(client, run.c));
    assert_int_equal(vaccel_buffer_unmap(client, run.c), -EINVAL);
    vaccel_client_close(client);
}

void buffer_bound_by_pending_work_cannot_be_mapped(void**)
{
    vaccel_client* client = open_client();
    CRun run = prepare(client, add_program(4), 16);
    uint64_t gate = 0;
    assert_call(vaccel_gate_create(client, run.context, &gate));
    uint64_t held = 0;
    assert_call(submit_after(client, run, gate, 1, &held));
    void* address = nullptr;
    assert_int_equal(vaccel_buffer_map(client, run.c, &address), -EBUSY);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_IN_FLIGHT);
    assert_int_equal(vaccel_last_status()->arg0, run.c);
    assert_call(vaccel_gate_raise(client, gate, 1));
    assert_call(vaccel_event_wait(client, &held, 1, VACCEL_WAIT_ALL, 0xffffffffffffffffull,
                                  nullptr));
    assert_call(vaccel_buffer_map(client, run.c, &address));
    assert_non_null(address);
    assert_call(vaccel_event_destroy(client, held));
    vaccel_client_close(client);
}

void unknown_buffer_is_refused(void**)
{
    vaccel_client* client = open_client();
    void* address = nullptr;
    assert_int_equal(vaccel_buffer_map(client, 0x1234, &address), -EINVAL);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_UNKNOWN_HANDLE);
    assert_null(address);
    assert_int_equal(vaccel_buffer_map(client, 0x1234, nullptr), -EINVAL);
    vaccel_client_close(client);
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc > 1)
        transport = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(run_completes_with_the_exact_sum),
        cmocka_unit_test(refused_run_says_why_and_ran_nothing),
        cmocka_unit_test(run_whose_work_fails_returns_the_failure),
        cmocka_unit_test(runs_leave_no_event_behind),
        cmocka_unit_test(mapped_buffers_are_the_buffers),
        cmocka_unit_test(buffer_bound_by_pending_work_cannot_be_mapped),
        cmocka_unit_test(unknown_buffer_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
