// work_modes.cpp - the client modes that do work: correct results under
// concurrency, a client killed mid-submission, clients parked when the
// daemon dies.
//
// Owns: each mode's protocol with the driving script (what it prints and
// when). Decides: a line a script waits for ("submitted", "parked") is
// printed and flushed only once the state it names is true; times are
// printed, never checked (what ends a wait is told by its refusal).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>

#include "e2e_client.hpp"
#include "modes.hpp"

namespace vaccel::e2e {

namespace {

void announce(std::string_view line)
{
    std::fputs(std::string(line).append("\n").c_str(), stdout);
    std::fflush(stdout);
}

}  // namespace

int add_loop_mode(const std::filesystem::path& fixture_dir, std::uint64_t rounds)
{
    const AddFixture fixture = load_add_fixture(fixture_dir);
    vaccel_client* client = open_client();
    const AddRun run = prepare_add(client, fixture);
    for (std::uint64_t round = 0; round < rounds; ++round)
        run_add_round(run, round);
    release_add(run);
    vaccel_client_close(client);
    fmt::print("add-loop: {} of {} rounds exact\n", rounds, rounds);
    return 0;
}

int hold_mode(std::int64_t n, unsigned submissions)
{
    vaccel_client* client = open_client();
    const MatmulRun run = prepare_matmul(client, n, submissions);
    for (unsigned i = 0; i < submissions; ++i) {
        std::uint64_t event = 0;
        E2E_CALL(submit_matmul(run, i, &event));
    }
    // The script picks a size that keeps these running for seconds, and
    // kills the process while they run.
    announce("submitted");
    for (;;) pause();
}

int park_mode(std::int64_t n, unsigned submissions, const std::filesystem::path& kill_time_file)
{
    constexpr std::uint64_t one_second = 1'000'000'000u;
    vaccel_client* client = open_client();
    const MatmulRun run = prepare_matmul(client, n, submissions);
    std::vector<std::uint64_t> events(submissions);
    for (unsigned i = 0; i < submissions; ++i)
        E2E_CALL(submit_matmul(run, i, &events[i]));
    announce("parked");
    const int waited = vaccel_event_wait(client, events.data(), submissions, VACCEL_WAIT_ALL,
                                         vaccel_deadline_after_ns(120 * one_second), nullptr);
    const std::uint64_t returned_at = realtime_ns();
    // PEER_GONE says the daemon's loss ended the wait: its own deadline
    // (120 s) would have ended it with DeadlineExpired / WAIT_TIMEOUT.
    expect_refusal("the parked wait", waited,
                   {-ENODEV, VACCEL_E_DEVICE_LOST, VACCEL_D_PEER_GONE});
    // The script writes the kill time (CLOCK_REALTIME ns) just before the
    // kill: the wait must not have returned before it. The delay is printed
    // only (it can only overstate the real one).
    std::ifstream file(kill_time_file);
    std::uint64_t killed_at = 0;
    file >> killed_at;
    E2E_EXPECT(killed_at != 0 && killed_at <= returned_at, "kill time {} (returned at {})",
               killed_at, returned_at);
    fmt::print("park: the wait returned -ENODEV {:.1f} ms after the kill\n",
               static_cast<double>(returned_at - killed_at) / 1e6);

    // Every later call fails the same way.
    const auto expect_gone = [&](std::string_view call, auto&& invoke) {
        expect_refusal(call, invoke(), {-ENODEV, VACCEL_E_DEVICE_LOST, VACCEL_D_PEER_GONE});
    };
    std::uint64_t handle = 0;
    std::uint32_t count = 0, state = 0;
    std::vector<float> data(16);
    expect_gone("vaccel_event_wait", [&] {
        return vaccel_event_wait(client, events.data(), 1, VACCEL_WAIT_ALL,
                                 vaccel_deadline_after_ns(60 * one_second), nullptr);
    });
    expect_gone("vaccel_event_poll",
                [&] { return vaccel_event_poll(client, events[0], &state, nullptr); });
    expect_gone("vaccel_submit", [&] { return submit_matmul(run, 0, &handle); });
    expect_gone("vaccel_buffer_read", [&] {
        return vaccel_buffer_read(client, run.a, 0, data.data(), data.size() * sizeof(float));
    });
    expect_gone("vaccel_device_count", [&] { return vaccel_device_count(client, &count); });
    expect_gone("vaccel_context_create", [&] { return vaccel_context_create(client, 0, &handle); });
    vaccel_client_close(client);
    fmt::print("park: every later call returned -ENODEV (PEER_GONE)\n");
    return 0;
}

}  // namespace vaccel::e2e
