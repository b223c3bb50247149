// test_socket_client.cpp - libvaccel's socket transport against a real
// vacceld. Not run on its own: tests/e2e/daemon_client.sh starts a daemon on
// a private socket, sets VACCEL_SOCKET, and runs one group by name:
//   transport    the automatic choice is the socket; a whole ADD run and the
//                refusals' details cross it; the admin call answers, and
//                refuses a malformed document saying where
//   transfers    64 MiB written and read back exactly (memfd payloads), and
//                transfers at offsets on both sides of the inline limit
//   threads      8 threads sharing one client, 200 ADDs each, all exact
//   daemon-loss  kill -9 of the daemon (pid in VACCEL_TEST_DAEMON_PID) wakes
//                a thread parked in a wait with -ENODEV / PEER_GONE (the
//                loss, not its 120 s deadline, ended it; how long after the
//                kill is printed, not checked), and every later call fails
//                the same way
// Without VACCEL_SOCKET, or with no daemon there, every group fails.
#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <unistd.h>

#include "test_programs.hpp"
#include "lib_support.hpp"

using namespace vaccel::test;

namespace {

vaccel_client* open_socket_client()
{
    if (std::getenv("VACCEL_SOCKET") == nullptr)
        fail_msg("VACCEL_SOCKET is not set: run this through tests/e2e/daemon_client.sh");
    vaccel_client* client = nullptr;
    assert_call(vaccel_client_open(VACCEL_TRANSPORT_SOCKET, &client));
    return client;
}

// Deterministic bytes that differ at every position and between seeds.
std::vector<std::uint8_t> pattern(std::size_t bytes, std::uint64_t seed)
{
    std::vector<std::uint8_t> out(bytes);
    std::uint64_t state = seed;
    for (std::size_t i = 0; i < bytes; i += 8) {
        state += 0x9e3779b97f4a7c15ull;  // splitmix64
        std::uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        std::memcpy(out.data() + i, &z, std::min<std::size_t>(8, bytes - i));
    }
    return out;
}

// ---- transport ---------------------------------------------------------

void automatic_choice_with_a_daemon_is_the_socket(void**)
{
    if (std::getenv("VACCEL_SOCKET") == nullptr)
        fail_msg("VACCEL_SOCKET is not set");
    unsetenv("VACCEL_TRANSPORT");
    vaccel_client* client = nullptr;
    assert_call(vaccel_client_open(nullptr, &client));
    assert_string_equal(vaccel_client_transport(client), "socket");
    vaccel_client_close(client);
}

// vaccel_client_open_at(): the path given is used, whatever $VACCEL_SOCKET
// says, named transport or automatic choice; NULL falls back to it.
void socket_path_given_to_open_at_wins_over_the_environment(void**)
{
    const char* real = std::getenv("VACCEL_SOCKET");
    if (real == nullptr)
        fail_msg("VACCEL_SOCKET is not set");
    const std::string path = real;
    setenv("VACCEL_SOCKET", "/nonexistent/vacceld.sock", 1);
    vaccel_client* client = nullptr;
    assert_call(vaccel_client_open_at(VACCEL_TRANSPORT_SOCKET, path.c_str(), &client));
    assert_string_equal(vaccel_client_transport(client), "socket");
    vaccel_client_close(client);
    const char* saved_transport = std::getenv("VACCEL_TRANSPORT");
    const std::string transport = saved_transport != nullptr ? saved_transport : "";
    unsetenv("VACCEL_TRANSPORT");
    client = nullptr;
    assert_call(vaccel_client_open_at(nullptr, path.c_str(), &client));
    assert_string_equal(vaccel_client_transport(client), "socket");
    vaccel_client_close(client);
    if (!transport.empty())
        setenv("VACCEL_TRANSPORT", transport.c_str(), 1);
    // A path nobody listens at is refused naming it, not the environment's.
    client = nullptr;
    assert_int_equal(vaccel_client_open_at(VACCEL_TRANSPORT_SOCKET, "/nonexistent/other.sock",
                                           &client),
                     -ENODEV);
    assert_null(client);
    assert_non_null(std::strstr(vaccel_last_error_message(), "/nonexistent/other.sock"));
    // NULL: the environment's path.
    assert_int_equal(vaccel_client_open_at(VACCEL_TRANSPORT_SOCKET, nullptr, &client), -ENODEV);
    assert_non_null(std::strstr(vaccel_last_error_message(), "/nonexistent/vacceld.sock"));
    setenv("VACCEL_SOCKET", path.c_str(), 1);
}

void add_through_the_daemon_reads_back_the_exact_sum(void**)
{
    vaccel_client* client = open_socket_client();
    CRun run = prepare(client, add_program(4), 16);
    const float a[4] = {0.5f, -1.0f, 2.25f, 1e6f};
    const float b[4] = {0.25f, 1.0f, -0.25f, 1.0f};
    assert_call(vaccel_buffer_write(client, run.a, 0, a, sizeof a));
    assert_call(vaccel_buffer_write(client, run.b, 0, b, sizeof b));
    uint64_t event = 0;
    assert_call(submit(client, run, &event));
    uint32_t first = 9;
    assert_call(vaccel_event_wait(client, &event, 1, VACCEL_WAIT_ALL,
                                  vaccel_deadline_after_ns(60ull * 1000000000ull), &first));
    assert_int_equal(first, 0);
    float c[4] = {};
    assert_call(vaccel_buffer_read(client, run.c, 0, c, sizeof c));
    const float expected[4] = {0.75f, 0.0f, 2.0f, 1000001.0f};
    assert_memory_equal(c, expected, sizeof c);
    vaccel_client_close(client);
}

void refusals_cross_the_socket_with_their_details(void**)
{
    vaccel_client* client = open_socket_client();
    uint64_t context = 0;
    assert_call(vaccel_context_create(client, 0, &context));
    // The daemon's refusal: an unknown handle, named.
    assert_int_equal(vaccel_context_destroy(client, context + 0x1000), -EINVAL);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_UNKNOWN_HANDLE);
    assert_int_equal(vaccel_last_status()->arg0, context + 0x1000);
    // A non-zero pad is refused before it leaves, as the engine refuses it,
    // and the session lives on.
    struct vaccel_buffer_alloc req = {};
    req.context = context;
    req.bytes = 16;
    req.domain = VACCEL_DOMAIN_HOST;
    req.usage = VACCEL_USAGE_ALL;
    req.access = VACCEL_ACCESS_RW;
    req.pad = 1;
    assert_int_equal(vaccel_buffer_alloc(client, &req), -EINVAL);
    assert_int_equal(req.status.detail, VACCEL_D_RESERVED_NONZERO);
    assert_int_equal(req.status.arg0, offsetof(struct vaccel_buffer_alloc, pad));
    req.pad = 0;
    assert_call(vaccel_buffer_alloc(client, &req));
    assert_int_equal(req.allocation_bytes >= 16, 1);
    // A range past the end: OutOfBounds with offset and bytes.
    const std::uint8_t byte = 1;
    assert_int_equal(vaccel_buffer_write(client, req.buffer, req.allocation_bytes, &byte, 1),
                     -ERANGE);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_RANGE);
    vaccel_client_close(client);
}

void admin_sessions_lists_this_client(void**)
{
    vaccel_client* client = open_socket_client();
    char* response = nullptr;
    size_t bytes = 0;
    assert_call(vaccel_admin(client, VACCEL_ADMIN_SESSIONS, nullptr, &response, &bytes));
    assert_non_null(response);
    assert_int_equal(std::strlen(response), bytes);
    const auto doc = nlohmann::json::parse(std::string_view(response, bytes), nullptr, false);
    vaccel_free(response);
    if (doc.is_discarded() || !doc.contains("sessions"))
        fail_msg("the sessions answer is not the documented JSON document");
    int mine = 0;
    for (const auto& session : doc["sessions"])
        if (session.value("pid", -1) == getpid() && session.value("uid", -1) == int(getuid()))
            ++mine;
    assert_int_equal(mine, 1);
    vaccel_client_close(client);
}

void admin_refuses_a_malformed_document_naming_where(void**)
{
    vaccel_client* client = open_socket_client();
    char* response = reinterpret_cast<char*>(0x1);
    assert_int_equal(vaccel_admin(client, VACCEL_ADMIN_LIMITS_SET, "{\"selector\": ", &response,
                                  nullptr),
                     -EINVAL);
    assert_null(response);
    assert_int_equal(vaccel_last_status()->error, VACCEL_E_INVALID_ARGUMENT);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_ADMIN_REQUEST);
    const std::string message = vaccel_last_error_message();
    if (message.find("refused the limits set request document at byte") == std::string::npos)
        fail_msg("message does not say where the document failed: \"%s\"", message.c_str());
    // The session lives on.
    uint32_t count = 0;
    assert_call(vaccel_device_count(client, &count));
    assert_true(count >= 1);
    vaccel_client_close(client);
}

// ---- transfers ---------------------------------------------------------

void sixty_four_mib_written_and_read_back_exactly(void**)
{
    vaccel_client* client = open_socket_client();
    constexpr std::uint64_t bytes = std::uint64_t{64} << 20;
    uint64_t context = 0;
    assert_call(vaccel_context_create(client, 0, &context));
    const uint64_t buffer = alloc_buffer(client, context, bytes);
    // Twice, with different bytes: the second reuses the connection's memfd.
    for (std::uint64_t seed : {1u, 2u}) {
        const auto written = pattern(bytes, seed);
        assert_call(vaccel_buffer_write(client, buffer, 0, written.data(), bytes));
        std::vector<std::uint8_t> read(bytes, 0xee);
        assert_call(vaccel_buffer_read(client, buffer, 0, read.data(), bytes));
        if (std::memcmp(read.data(), written.data(), bytes) != 0)
            fail_msg("64 MiB read back differs from what was written (seed %u)",
                     static_cast<unsigned>(seed));
    }
    vaccel_client_close(client);
}

void transfers_at_offsets_round_trip_on_both_sides_of_the_inline_limit(void**)
{
    vaccel_client* client = open_socket_client();
    constexpr std::uint64_t bytes = std::uint64_t{1} << 20;
    uint64_t context = 0;
    assert_call(vaccel_context_create(client, 0, &context));
    const uint64_t buffer = alloc_buffer(client, context, bytes);
    auto expected = pattern(bytes, 7);
    assert_call(vaccel_buffer_write(client, buffer, 0, expected.data(), bytes));
    // Exactly the inline limit, one byte over, and small: at odd offsets.
    for (std::uint64_t length : {std::uint64_t{VACCEL_MSG_INLINE_MAX},
                                 std::uint64_t{VACCEL_MSG_INLINE_MAX} + 1, std::uint64_t{4093}}) {
        const std::uint64_t offset = 12347;
        const auto patch = pattern(length, length);
        assert_call(vaccel_buffer_write(client, buffer, offset, patch.data(), length));
        std::memcpy(expected.data() + offset, patch.data(), length);
        std::vector<std::uint8_t> part(length);
        assert_call(vaccel_buffer_read(client, buffer, offset, part.data(), length));
        assert_memory_equal(part.data(), patch.data(), length);
    }
    std::vector<std::uint8_t> whole(bytes);
    assert_call(vaccel_buffer_read(client, buffer, 0, whole.data(), bytes));
    assert_memory_equal(whole.data(), expected.data(), bytes);
    vaccel_client_close(client);
}

// ---- threads -----------------------------------------------------------

constexpr int thread_count = 8;
constexpr int rounds_per_thread = 200;

// `rounds` ADDs of distinct values on this thread's own buffers and queue
// in the shared context; returns how many came back exactly right.
int add_rounds(vaccel_client* client, uint64_t context, uint64_t program, float seed, int rounds)
{
    const uint64_t a = alloc_buffer(client, context, 16);
    const uint64_t b = alloc_buffer(client, context, 16);
    const uint64_t c = alloc_buffer(client, context, 16);
    uint64_t queue = 0;
    if (vaccel_queue_create(client, context, &queue) != 0)
        return 0;
    const struct vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, a, 0, 16},
        {1, VACCEL_ACCESS_READ, b, 0, 16},
        {2, VACCEL_ACCESS_WRITE, c, 0, 16},
    };
    int right = 0;
    for (int round = 0; round < rounds; ++round) {
        const float in_a[4] = {seed, seed + 1.0f, static_cast<float>(round), -seed};
        const float in_b[4] = {1.0f, 2.0f, seed, static_cast<float>(round) * 0.5f};
        if (vaccel_buffer_write(client, a, 0, in_a, sizeof in_a) != 0 ||
            vaccel_buffer_write(client, b, 0, in_b, sizeof in_b) != 0)
            continue;
        uint64_t event = 0;
        if (vaccel_submit(client, queue, program, bindings, 3, 0, &event) != 0)
            continue;
        const bool done = vaccel_event_wait(client, &event, 1, VACCEL_WAIT_ALL,
                                            vaccel_deadline_after_ns(120ull * 1000000000ull),
                                            nullptr) == 0;
        float out[4] = {};
        if (done && vaccel_buffer_read(client, c, 0, out, sizeof out) == 0 &&
            out[0] == in_a[0] + in_b[0] && out[1] == in_a[1] + in_b[1] &&
            out[2] == in_a[2] + in_b[2] && out[3] == in_a[3] + in_b[3])
            ++right;
        vaccel_event_destroy(client, event);
    }
    return right;
}

void eight_threads_sharing_a_client_get_every_add_exact(void**)
{
    vaccel_client* client = open_socket_client();
    uint64_t context = 0;
    assert_call(vaccel_context_create(client, 0, &context));
    const auto artifact = add_program(4);
    uint64_t program = 0;
    assert_call(vaccel_program_load(client, context, VACCEL_FORMAT_TOSA, nullptr, artifact.data(),
                                    artifact.size(), &program, nullptr, nullptr));
    int right[thread_count] = {};
    std::vector<std::thread> threads;
    for (int t = 0; t < thread_count; ++t)
        threads.emplace_back([&, t] {
            right[t] = add_rounds(client, context, program, 10.0f * t + 0.25f, rounds_per_thread);
        });
    for (auto& thread : threads)
        thread.join();
    for (int t = 0; t < thread_count; ++t)
        if (right[t] != rounds_per_thread)
            fail_msg("thread %d got %d of %d results right", t, right[t], rounds_per_thread);
    vaccel_client_close(client);
}

// ---- daemon loss -------------------------------------------------------

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

void daemon_killed_wakes_a_parked_wait_and_fails_later_calls(void**)
{
    const char* pid_text = std::getenv("VACCEL_TEST_DAEMON_PID");
    if (pid_text == nullptr)
        fail_msg("VACCEL_TEST_DAEMON_PID is not set");
    const pid_t daemon = static_cast<pid_t>(std::atoll(pid_text));
    vaccel_client* client = open_socket_client();

    // A submission held by a gate nobody raises: certainly pending.
    constexpr int64_t n = 16;
    CRun run = prepare(client, matmul_program(n), n * n * sizeof(float));
    uint64_t gate = 0;
    assert_call(vaccel_gate_create(client, run.context, &gate));
    uint64_t last = 0;
    assert_call(submit_after(client, run, gate, 1, &last));

    std::atomic<int> wait_rc{1};
    vaccel_status wait_status{};
    Clock::time_point woke;
    std::thread parked([&] {
        wait_rc = vaccel_event_wait(client, &last, 1, VACCEL_WAIT_ALL,
                                    vaccel_deadline_after_ns(120ull * 1000000000ull), nullptr);
        wait_status = *vaccel_last_status();
        woke = Clock::now();
    });
    // Certainly parked: the daemon lists the wait (10 s at most; the admin
    // channel is another client's, so the parked one is left alone).
    vaccel_client* admin = open_socket_client();
    int waits = 0;
    for (int tries = 0; tries < 1000 && waits == 0; ++tries) {
        char* response = nullptr;
        size_t bytes = 0;
        assert_call(vaccel_admin(admin, VACCEL_ADMIN_SESSIONS, nullptr, &response, &bytes));
        const auto doc = nlohmann::json::parse(std::string_view(response, bytes));
        vaccel_free(response);
        for (const auto& session : doc["sessions"])
            waits += session["waits_parked"].get<int>();
        if (waits == 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    vaccel_client_close(admin);
    assert_int_equal(waits, 1);
    assert_int_equal(wait_rc.load(), 1);  // still parked
    uint32_t state = 0;

    const auto killed = Clock::now();
    assert_int_equal(kill(daemon, SIGKILL), 0);
    parked.join();
    const double woke_after = std::chrono::duration<double>(woke - killed).count();
    print_message("the parked wait returned %.3f s after the kill\n", woke_after);
    // PEER_GONE: the loss ended the wait (its deadline would have ended it
    // with DeadlineExpired / WAIT_TIMEOUT).
    assert_int_equal(wait_rc.load(), -ENODEV);
    assert_int_equal(wait_status.error, VACCEL_E_DEVICE_LOST);
    assert_int_equal(wait_status.detail, VACCEL_D_PEER_GONE);

    // Every later call of the client: -ENODEV.
    uint32_t count = 0;
    assert_int_equal(vaccel_device_count(client, &count), -ENODEV);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_PEER_GONE);
    assert_int_equal(vaccel_event_poll(client, last, &state, nullptr), -ENODEV);
    const std::string message = vaccel_last_error_message();
    if (message.find("DeviceLost") == std::string::npos ||
        message.find("daemon went away") == std::string::npos)
        fail_msg("message does not say the daemon went away: \"%s\"", message.c_str());
    vaccel_client_close(client);

    // A new client finds nobody at the socket once the dying process has
    // closed its listening socket too (the kernel tears the process down
    // asynchronously); 10 s is where the test gives up waiting for that,
    // not a bound it checks.
    const auto start = Clock::now();
    int rc = 0;
    do {
        vaccel_client* again = nullptr;
        rc = vaccel_client_open(VACCEL_TRANSPORT_SOCKET, &again);
        vaccel_client_close(again);
    } while (rc == 0 && seconds_since(start) < 10.0);
    assert_int_equal(rc, -ENODEV);
}

int run_group(std::string_view group)
{
    if (group == "transport") {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(automatic_choice_with_a_daemon_is_the_socket),
            cmocka_unit_test(socket_path_given_to_open_at_wins_over_the_environment),
            cmocka_unit_test(add_through_the_daemon_reads_back_the_exact_sum),
            cmocka_unit_test(refusals_cross_the_socket_with_their_details),
            cmocka_unit_test(admin_sessions_lists_this_client),
            cmocka_unit_test(admin_refuses_a_malformed_document_naming_where),
        };
        return cmocka_run_group_tests_name("transport", tests, nullptr, nullptr);
    }
    if (group == "transfers") {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(sixty_four_mib_written_and_read_back_exactly),
            cmocka_unit_test(transfers_at_offsets_round_trip_on_both_sides_of_the_inline_limit),
        };
        return cmocka_run_group_tests_name("transfers", tests, nullptr, nullptr);
    }
    if (group == "threads") {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(eight_threads_sharing_a_client_get_every_add_exact),
        };
        return cmocka_run_group_tests_name("threads", tests, nullptr, nullptr);
    }
    if (group == "daemon-loss") {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(daemon_killed_wakes_a_parked_wait_and_fails_later_calls),
        };
        return cmocka_run_group_tests_name("daemon-loss", tests, nullptr, nullptr);
    }
    std::fprintf(stderr, "unknown group '%.*s': transport, transfers, threads, daemon-loss\n",
                 static_cast<int>(group.size()), group.data());
    return 2;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s transport|transfers|threads|daemon-loss\n", argv[0]);
        return 2;
    }
    return run_group(argv[1]);
}
