// work_modes.cpp - the client modes that do work: correct results under
// concurrency, a client killed mid-submission, clients parked when the
// daemon dies, round-trip timing and flooding.
//
// Owns: each mode's protocol with the driving script (what it prints and
// when). Decides: a line a script waits for ("submitted", "parked",
// "flooding") is printed and flushed only once the state it names is true.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
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

std::uint64_t median(std::vector<std::uint64_t> samples)
{
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
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
    expect_refusal("the parked wait", waited,
                   {-ENODEV, VACCEL_E_DEVICE_LOST, VACCEL_D_PEER_GONE});
    // The script writes the kill time (CLOCK_REALTIME ns) just before the
    // kill, so the figure below can only overstate the delay.
    std::ifstream file(kill_time_file);
    std::uint64_t killed_at = 0;
    file >> killed_at;
    E2E_EXPECT(killed_at != 0 && killed_at <= returned_at, "kill time {} (returned at {})",
               killed_at, returned_at);
    const std::uint64_t delay = returned_at - killed_at;
    fmt::print("park: the wait returned -ENODEV {:.1f} ms after the kill\n", delay / 1e6);
    E2E_EXPECT(delay < one_second, "the wait returned {} ns after the daemon was killed", delay);

    // Every later call fails the same way, each within a second.
    const auto expect_gone = [&](std::string_view call, auto&& invoke) {
        const std::uint64_t start = monotonic_ns();
        const int rc = invoke();
        const std::uint64_t took = monotonic_ns() - start;
        expect_refusal(call, rc, {-ENODEV, VACCEL_E_DEVICE_LOST, VACCEL_D_PEER_GONE});
        E2E_EXPECT(took < one_second, "{} took {} ns", call, took);
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
    const std::uint64_t start = monotonic_ns();
    vaccel_client_close(client);
    const std::uint64_t close_took = monotonic_ns() - start;
    E2E_EXPECT(close_took < one_second, "vaccel_client_close took {} ns", close_took);
    fmt::print("park: every later call returned -ENODEV within 1 s\n");
    return 0;
}

int rtt_mode(const std::filesystem::path& fixture_dir, unsigned samples,
             const std::filesystem::path& samples_file)
{
    const AddFixture fixture = load_add_fixture(fixture_dir);
    vaccel_client* client = open_client();
    const AddRun run = prepare_add(client, fixture);
    run_add_round(run, 0);  // the result is right before anything is timed
    for (unsigned i = 0; i < 20; ++i) (void)time_add_round_trip(run);  // warm up
    std::vector<std::uint64_t> took(samples);
    for (std::uint64_t& t : took) t = time_add_round_trip(run);
    if (!samples_file.empty()) {
        std::ofstream out(samples_file, std::ios::app);
        for (const std::uint64_t t : took) out << t << '\n';
        E2E_EXPECT(out.good(), "cannot append the samples to {}", samples_file.string());
    }
    std::sort(took.begin(), took.end());
    fmt::print("rtt: samples={} median_ns={} p10_ns={} p90_ns={}\n", samples, median(took),
               took[samples / 10], took[samples * 9 / 10]);
    release_add(run);
    vaccel_client_close(client);
    return 0;
}

int flood_mode(std::int64_t n, unsigned depth, unsigned queues)
{
    // Ends on SIGTERM between waits: the script stops the flood after the
    // measurement.
    static volatile std::sig_atomic_t stop = 0;
    std::signal(SIGTERM, [](int) { stop = 1; });
    vaccel_client* client = open_client();
    const MatmulRun run = prepare_matmul(client, n, depth, queues);
    std::vector<std::uint64_t> events(depth);
    for (unsigned slot = 0; slot < depth; ++slot)
        E2E_CALL(submit_matmul(run, slot, &events[slot]));
    std::uint64_t completed = 0;
    bool announced = false;
    while (!stop) {
        std::uint32_t first = 0;
        E2E_CALL(vaccel_event_wait(client, events.data(), depth, 0,
                                   vaccel_deadline_after_ns(30'000'000'000u), &first));
        std::uint32_t state = 0;
        E2E_CALL(vaccel_event_poll(client, events[first], &state, nullptr));
        E2E_EXPECT(state == VACCEL_EVENT_COMPLETE, "flood event state {}", state);
        E2E_CALL(vaccel_event_destroy(client, events[first]));
        E2E_CALL(submit_matmul(run, first, &events[first]));
        ++completed;
        if (!announced) {
            announce("flooding");
            announced = true;
        }
    }
    E2E_CALL(vaccel_event_wait(client, events.data(), depth, VACCEL_WAIT_ALL,
                               vaccel_deadline_after_ns(30'000'000'000u), nullptr));
    vaccel_client_close(client);
    fmt::print("flood: {} submissions completed\n", completed);
    return 0;
}

}  // namespace vaccel::e2e
