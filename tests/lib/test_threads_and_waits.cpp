// test_threads_and_waits.cpp - one client shared by threads, and waits that
// time out. Asserts only what is guaranteed whatever the scheduling.
#include <cerrno>
#include <thread>

#include "test_programs.hpp"
#include "lib_support.hpp"

using namespace vaccel::test;

namespace {

// Runs `rounds` ADDs of distinct values on its own buffers and queue;
// returns the number of rounds whose result was exactly right.
int add_rounds(vaccel_client* client, const std::vector<std::byte>& artifact, float seed,
               int rounds)
{
    CRun run = prepare(client, artifact, 16);
    int right = 0;
    for (int round = 0; round < rounds; ++round) {
        const float a[4] = {seed, seed + 1.0f, seed + 2.0f, static_cast<float>(round)};
        const float b[4] = {1.0f, 2.0f, 3.0f, seed};
        if (vaccel_buffer_write(client, run.a, 0, a, sizeof a) != 0 ||
            vaccel_buffer_write(client, run.b, 0, b, sizeof b) != 0)
            continue;
        uint64_t event = 0;
        if (submit(client, run, &event) != 0)
            continue;
        const bool done = vaccel_event_wait(client, &event, 1, VACCEL_WAIT_ALL,
                                            vaccel_deadline_after_ns(60ull * 1000000000ull),
                                            nullptr) == 0;
        float c[4] = {};
        const bool read = done && vaccel_buffer_read(client, run.c, 0, c, sizeof c) == 0;
        if (read && c[0] == a[0] + b[0] && c[1] == a[1] + b[1] && c[2] == a[2] + b[2] &&
            c[3] == a[3] + b[3])
            ++right;
        vaccel_event_destroy(client, event);
    }
    return right;
}

void two_threads_sharing_a_client_get_every_result_right(void**)
{
    vaccel_client* client = nullptr;
    assert_call(vaccel_client_open(nullptr, &client));
    const auto artifact = add_program(4);
    constexpr int rounds = 40;
    int right_first = 0, right_second = 0;
    std::thread first([&] { right_first = add_rounds(client, artifact, 100.0f, rounds); });
    std::thread second([&] { right_second = add_rounds(client, artifact, -7.5f, rounds); });
    first.join();
    second.join();
    assert_int_equal(right_first, rounds);
    assert_int_equal(right_second, rounds);
    vaccel_client_close(client);
}

void wait_with_a_past_timeout_reports_the_events_not_done(void**)
{
    vaccel_client* client = nullptr;
    assert_call(vaccel_client_open(nullptr, &client));
    constexpr int64_t n = 16;
    CRun run = prepare(client, matmul_program(n), n * n * sizeof(float));
    uint64_t gate = 0;
    assert_call(vaccel_gate_create(client, run.context, &gate));
    uint64_t events[2] = {};
    // Held by the gate: certainly pending when the wait looks.
    assert_call(submit_after(client, run, gate, 1, &events[0]));

    const uint64_t past = 1;  // 1 ns after boot: long gone, and not "0 = poll"
    uint32_t first = 77;
    assert_int_equal(vaccel_event_wait(client, events, 1, VACCEL_WAIT_ALL, past, &first), -ETIME);
    const struct vaccel_status* status = vaccel_last_status();
    assert_int_equal(status->error, VACCEL_E_DEADLINE_EXPIRED);
    assert_int_equal(status->detail, VACCEL_D_WAIT_TIMEOUT);
    assert_int_equal(status->arg0, 1);
    assert_int_equal(first, 77);  // nothing done: first_done untouched
    // Released, the same wait with a real timeout succeeds.
    assert_call(vaccel_gate_raise(client, gate, 1));
    assert_call(vaccel_event_wait(client, events, 1, VACCEL_WAIT_ALL,
                                  vaccel_deadline_after_ns(120ull * 1000000000ull), &first));
    assert_int_equal(first, 0);
    vaccel_client_close(client);
}

void destroying_a_pending_event_is_busy_and_keeps_it(void**)
{
    vaccel_client* client = nullptr;
    assert_call(vaccel_client_open(nullptr, &client));
    constexpr int64_t n = 16;
    CRun run = prepare(client, matmul_program(n), n * n * sizeof(float));
    uint64_t gate = 0;
    assert_call(vaccel_gate_create(client, run.context, &gate));
    uint64_t event = 0;
    assert_call(submit_after(client, run, gate, 1, &event));
    // Held by the gate: certainly pending.
    assert_int_equal(vaccel_event_destroy(client, event), -EBUSY);
    const struct vaccel_status* status = vaccel_last_status();
    assert_int_equal(status->error, VACCEL_E_BUSY);
    assert_int_equal(status->detail, VACCEL_D_NOT_COMPLETE);
    assert_int_equal(status->arg0, event);  // the handle, never a daemon address
    // Refused: the handle still names the event.
    uint32_t state = 0;
    assert_call(vaccel_event_poll(client, event, &state, nullptr));
    assert_int_equal(state, VACCEL_EVENT_PENDING);
    assert_call(vaccel_gate_raise(client, gate, 1));
    assert_call(vaccel_event_wait(client, &event, 1, VACCEL_WAIT_ALL,
                                  vaccel_deadline_after_ns(120ull * 1000000000ull), nullptr));
    assert_call(vaccel_event_destroy(client, event));
    assert_int_equal(vaccel_event_poll(client, event, &state, nullptr), -EINVAL);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_UNKNOWN_HANDLE);
    vaccel_client_close(client);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_threads_sharing_a_client_get_every_result_right),
        cmocka_unit_test(wait_with_a_past_timeout_reports_the_events_not_done),
        cmocka_unit_test(destroying_a_pending_event_is_busy_and_keeps_it),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
