// e2e_client.cpp - the shared part of the daemon end-to-end test client:
// failure reporting, clocks, and the prepared ADD and MATMUL runs.
//
// Owns: the ADD fixture's oracle. Decides: the expected output of a round is
// computed here in fp32 with the same operation (a broadcast add), and is
// first checked against TFLite's recorded result, so the oracle itself is
// tested every time it is built.
#include "e2e_client.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>

#include "test_programs.hpp"
#include "vaccel/npy/npy.hpp"

namespace vaccel::e2e {

void fail_check(const std::string& message)
{
    std::fprintf(stderr, "FAIL: %s\n", message.c_str());
    std::fflush(stderr);
    std::exit(1);
}

void expect_refusal(std::string_view call, int rc, const ExpectedRefusal& want)
{
    const vaccel_status& got = *vaccel_last_status();
    const auto show = [](int r, std::uint32_t error, std::uint32_t detail, std::uint32_t limit,
                         std::uint64_t arg0, std::uint64_t arg1) {
        return fmt::format("rc {} {} detail {} limit {} arg0 {} arg1 {}", r,
                           vaccel_error_name(error), detail, limit, arg0, arg1);
    };
    if (rc != want.rc || got.error != want.error || got.detail != want.detail ||
        got.limit != want.limit || got.arg0 != want.arg0 || got.arg1 != want.arg1)
        fail_check(fmt::format("{}: expected {}, got {} ({})", call,
                               show(want.rc, want.error, want.detail, want.limit, want.arg0,
                                    want.arg1),
                               show(rc, got.error, got.detail, got.limit, got.arg0, got.arg1),
                               vaccel_last_error_message()));
}

std::uint64_t realtime_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return std::uint64_t(ts.tv_sec) * 1'000'000'000u + std::uint64_t(ts.tv_nsec);
}

vaccel_client* open_client()
{
    const char* transport = std::getenv("VACCEL_TRANSPORT");
    E2E_EXPECT(transport != nullptr && *transport != '\0',
               "set VACCEL_TRANSPORT (the test scripts set it to socket)");
    vaccel_client* client = nullptr;
    E2E_CALL(vaccel_client_open(transport, &client));
    E2E_EXPECT(std::string_view(vaccel_client_transport(client)) == transport,
               "the client runs over '{}'", vaccel_client_transport(client));
    return client;
}

namespace {

std::vector<float> floats_of(const npy::Array& array)
{
    std::vector<float> out(array.data.size() / sizeof(float));
    std::memcpy(out.data(), array.data.data(), out.size() * sizeof(float));
    return out;
}

npy::Array read_npy(const std::filesystem::path& path)
{
    auto array = npy::read_file(path);
    if (!array) fail_check(array.error().message);
    E2E_EXPECT(array->dtype == npy::DType::f4, "{} is not float32", path.string());
    return std::move(*array);
}

// out[h][w][ch] = sign * a[h][w][0] + sign * b[h][w][ch] in fp32.
std::vector<float> broadcast_add(const AddFixture& f, float sign)
{
    std::vector<float> out(f.b.size());
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = sign * f.a[i / 4] + sign * f.b[i];
    return out;
}

std::vector<float> signed_copy(const std::vector<float>& values, float sign)
{
    std::vector<float> out(values);
    for (float& v : out) v *= sign;
    return out;
}

constexpr std::uint64_t wait_limit_ns = 30'000'000'000u;

}  // namespace

AddFixture load_add_fixture(const std::filesystem::path& dir)
{
    AddFixture f;
    std::ifstream model(dir / "flatbuffer-tflite" / "test_add_1x4x4x4_f32.tosa", std::ios::binary);
    E2E_EXPECT(model.good(), "cannot read the ADD fixture under {}", dir.string());
    for (auto it = std::istreambuf_iterator<char>(model); it != std::istreambuf_iterator<char>();
         ++it)
        f.artifact.push_back(static_cast<std::byte>(*it));
    f.a = floats_of(read_npy(dir / "placeholder_0.npy"));
    f.b = floats_of(read_npy(dir / "placeholder_1.npy"));
    f.expected = read_npy(dir / "tflite_result.npy").data;
    E2E_EXPECT(f.a.size() == 16 && f.b.size() == 64 && f.expected.size() == 256,
               "fixture sizes {} {} {}", f.a.size(), f.b.size(), f.expected.size());
    const auto oracle = broadcast_add(f, 1.0f);
    E2E_EXPECT(std::memcmp(oracle.data(), f.expected.data(), f.expected.size()) == 0,
               "the fp32 oracle differs from tflite_result.npy");
    return f;
}

std::uint64_t alloc_host_buffer(vaccel_client* client, std::uint64_t context, std::uint64_t bytes)
{
    struct vaccel_buffer_alloc req{};
    req.context = context;
    req.bytes = bytes;
    req.domain = VACCEL_DOMAIN_HOST;
    req.usage = VACCEL_USAGE_ALL;
    req.access = VACCEL_ACCESS_RW;
    E2E_CALL(vaccel_buffer_alloc(client, &req));
    return req.buffer;
}

AddRun prepare_add(vaccel_client* client, const AddFixture& fixture)
{
    AddRun run;
    run.client = client;
    run.fixture = &fixture;
    E2E_CALL(vaccel_context_create(client, 0, &run.context));
    run.a = alloc_host_buffer(client, run.context, fixture.a.size() * sizeof(float));
    run.b = alloc_host_buffer(client, run.context, fixture.b.size() * sizeof(float));
    run.c = alloc_host_buffer(client, run.context, fixture.expected.size());
    std::uint32_t inputs = 0, outputs = 0;
    E2E_CALL(vaccel_program_load(client, run.context, VACCEL_FORMAT_TOSA, nullptr,
                                 fixture.artifact.data(), fixture.artifact.size(), &run.program,
                                 &inputs, &outputs));
    E2E_EXPECT(inputs == 2 && outputs == 1, "{} inputs, {} outputs", inputs, outputs);
    // Slot 0 must be the broadcast [1,4,4,1] input (placeholder_0).
    struct vaccel_program_slot slot{};
    E2E_CALL(vaccel_program_slot(client, run.program, 0, &slot));
    E2E_EXPECT(slot.bytes == 64, "slot 0 covers {} bytes", slot.bytes);
    E2E_CALL(vaccel_queue_create(client, run.context, &run.queue));
    const auto a = fixture.a;
    const auto b = fixture.b;
    E2E_CALL(vaccel_buffer_write(client, run.a, 0, a.data(), a.size() * sizeof(float)));
    E2E_CALL(vaccel_buffer_write(client, run.b, 0, b.data(), b.size() * sizeof(float)));
    return run;
}

namespace {

int submit_add(const AddRun& run, std::uint64_t* event)
{
    const vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, run.a, 0, run.fixture->a.size() * sizeof(float)},
        {1, VACCEL_ACCESS_READ, run.b, 0, run.fixture->b.size() * sizeof(float)},
        {2, VACCEL_ACCESS_WRITE, run.c, 0, run.fixture->expected.size()},
    };
    return vaccel_submit(run.client, run.queue, run.program, bindings, 3, 0, event);
}

}  // namespace

void run_add_round(const AddRun& run, std::uint64_t round)
{
    const AddFixture& f = *run.fixture;
    const float sign = round % 2 == 0 ? 1.0f : -1.0f;
    const auto a = signed_copy(f.a, sign);
    const auto b = signed_copy(f.b, sign);
    const auto expected = broadcast_add(f, sign);
    E2E_CALL(vaccel_buffer_write(run.client, run.a, 0, a.data(), a.size() * sizeof(float)));
    E2E_CALL(vaccel_buffer_write(run.client, run.b, 0, b.data(), b.size() * sizeof(float)));
    std::uint64_t event = 0;
    E2E_CALL(submit_add(run, &event));
    E2E_CALL(vaccel_event_wait(run.client, &event, 1, VACCEL_WAIT_ALL,
                               vaccel_deadline_after_ns(wait_limit_ns), nullptr));
    std::uint32_t state = 0;
    vaccel_status failure{};
    E2E_CALL(vaccel_event_poll(run.client, event, &state, &failure));
    E2E_EXPECT(state == VACCEL_EVENT_COMPLETE, "round {}: event state {} ({})", round, state,
               vaccel_error_name(failure.error));
    std::vector<float> c(expected.size());
    E2E_CALL(vaccel_buffer_read(run.client, run.c, 0, c.data(), c.size() * sizeof(float)));
    E2E_EXPECT(std::memcmp(c.data(), expected.data(), c.size() * sizeof(float)) == 0,
               "round {}: output bytes differ from the expected sum (c[0] = {}, expected {})",
               round, c[0], expected[0]);
    E2E_CALL(vaccel_event_destroy(run.client, event));
}

void release_add(const AddRun& run)
{
    E2E_CALL(vaccel_queue_destroy(run.client, run.queue));
    E2E_CALL(vaccel_program_unload(run.client, run.program));
    for (const std::uint64_t buffer : {run.a, run.b, run.c})
        E2E_CALL(vaccel_buffer_free(run.client, buffer));
    E2E_CALL(vaccel_context_destroy(run.client, run.context));
}

MatmulRun prepare_matmul(vaccel_client* client, std::int64_t n, unsigned slots, unsigned queues)
{
    MatmulRun run;
    run.client = client;
    run.n = n;
    const std::uint64_t bytes = std::uint64_t(n) * std::uint64_t(n) * sizeof(float);
    E2E_CALL(vaccel_context_create(client, 0, &run.context));
    run.a = alloc_host_buffer(client, run.context, bytes);
    run.b = alloc_host_buffer(client, run.context, bytes);
    for (unsigned i = 0; i < slots; ++i)
        run.outputs.push_back(alloc_host_buffer(client, run.context, bytes));
    const auto artifact = test::matmul_program(n);
    E2E_CALL(vaccel_program_load(client, run.context, VACCEL_FORMAT_TOSA, nullptr,
                                 artifact.data(), artifact.size(), &run.program, nullptr,
                                 nullptr));
    for (unsigned i = 0; i < queues; ++i) {
        std::uint64_t queue = 0;
        E2E_CALL(vaccel_queue_create(client, run.context, &queue));
        run.queues.push_back(queue);
    }
    const std::vector<float> ones(std::size_t(n) * std::size_t(n), 1.0f);
    E2E_CALL(vaccel_buffer_write(client, run.a, 0, ones.data(), bytes));
    E2E_CALL(vaccel_buffer_write(client, run.b, 0, ones.data(), bytes));
    return run;
}

int submit_matmul(const MatmulRun& run, unsigned slot, std::uint64_t* event)
{
    const std::uint64_t bytes = std::uint64_t(run.n) * std::uint64_t(run.n) * sizeof(float);
    const vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, run.a, 0, bytes},
        {1, VACCEL_ACCESS_READ, run.b, 0, bytes},
        {2, VACCEL_ACCESS_WRITE, run.outputs[slot], 0, bytes},
    };
    return vaccel_submit(run.client, run.queues[slot % run.queues.size()], run.program, bindings,
                         3, 0, event);
}

}  // namespace vaccel::e2e
