// e2e_client.hpp - the daemon end-to-end test client: what its modes share.
//
// Owns: the failure convention of every mode (a failed check prints
// "FAIL: <what was expected, what happened>" on stderr and exits 1, so the
// driving script sees the exit status and the sentence), the clock, and the
// prepared runs (ADD fixture, MATMUL) that the modes submit.
// Decides: a client opens the transport $VACCEL_TRANSPORT names (the
// scripts set "socket") and refuses to run over any other one, so a test
// can never silently pass in process.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "vaccel/vaccel.h"

namespace vaccel::e2e {

// Prints "FAIL: message" and exits 1.
[[noreturn]] void fail_check(const std::string& message);

// A call that must succeed; names the call and libvaccel's sentence if not.
#define E2E_CALL(expr)                                                                      \
    do {                                                                                    \
        const int rc_ = (expr);                                                             \
        if (rc_ != 0)                                                                       \
            ::vaccel::e2e::fail_check(fmt::format("{} returned {}: {}", #expr, rc_,         \
                                                  vaccel_last_error_message()));            \
    } while (0)

// A condition that must hold; `...` is a fmt message saying what was found.
#define E2E_EXPECT(cond, ...)                                                               \
    do {                                                                                    \
        if (!(cond))                                                                        \
            ::vaccel::e2e::fail_check(fmt::format("{}: ", #cond) + fmt::format(__VA_ARGS__)); \
    } while (0)

// The refusal a call must end with: its return value and the contract
// status of this thread's last call.
struct ExpectedRefusal {
    int rc;                 // e.g. -EDQUOT
    std::uint32_t error;    // enum vaccel_error
    std::uint32_t detail;   // enum vaccel_detail
    std::uint32_t limit = VACCEL_LIMIT_NONE;
    std::uint64_t arg0 = 0;
    std::uint64_t arg1 = 0;
};
// Checks `rc` and vaccel_last_status() against `expected`, field by field;
// `call` names the call in the failure.
void expect_refusal(std::string_view call, int rc, const ExpectedRefusal& expected);

std::uint64_t realtime_ns();

// A client over $VACCEL_TRANSPORT (which must be set); fails the check if
// the library chose another transport.
vaccel_client* open_client();

// The real TOSA 1.0 ADD fixture (tests/fixtures/tosa/v1.0-add_1x4x4x4_f32):
// c[1,4,4,4] = a[1,4,4,1] (broadcast) + b[1,4,4,4].
struct AddFixture {
    std::vector<std::byte> artifact;
    std::vector<float> a, b;            // placeholder_0, placeholder_1
    std::vector<std::uint8_t> expected; // tflite_result.npy data bytes
};
AddFixture load_add_fixture(const std::filesystem::path& fixture_dir);

// One context with the fixture loaded: buffers a, b, c and one queue.
struct AddRun {
    vaccel_client* client = nullptr;
    const AddFixture* fixture = nullptr;
    std::uint64_t context = 0, a = 0, b = 0, c = 0, program = 0, queue = 0;
};
AddRun prepare_add(vaccel_client* client, const AddFixture& fixture);
// One submission of round `round`: even rounds add the fixture's inputs,
// odd rounds their negations (expected: the negated sum), so an output left
// over from the previous round can never pass. Writes the inputs, submits,
// waits (30 s at most), checks the event completed, reads c and compares
// every byte; destroys the event.
void run_add_round(const AddRun& run, std::uint64_t round);
void release_add(const AddRun& run);

// A context with c[1,n,n] = a x b loaded (a, b filled with ones), `queues`
// queues and `slots` output buffers: slot i writes outputs[i] on queue
// i % queues, so up to `slots` submissions can be in flight at once (a
// buffer written by a pending submission cannot be bound again).
struct MatmulRun {
    vaccel_client* client = nullptr;
    std::int64_t n = 0;
    std::uint64_t context = 0, a = 0, b = 0, program = 0;
    std::vector<std::uint64_t> outputs;
    std::vector<std::uint64_t> queues;
};
MatmulRun prepare_matmul(vaccel_client* client, std::int64_t n, unsigned slots,
                         unsigned queues = 1);
// Submits slot `slot`; returns vaccel_submit's value.
int submit_matmul(const MatmulRun& run, unsigned slot, std::uint64_t* event);
std::uint64_t alloc_host_buffer(vaccel_client* client, std::uint64_t context,
                                std::uint64_t bytes);

}  // namespace vaccel::e2e
