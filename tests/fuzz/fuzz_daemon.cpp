// fuzz_daemon.cpp - libFuzzer target: vacceld's intake and dispatch.
//
// Feeds the datagrams of one input (daemon_input.hpp) to a fresh
// TestTransport - the daemon's own dispatcher: strict intake, short calls
// on the reactor, the device worker of a real CPU device, parked waits and
// RUNs, the admin channel on the chores thread - as one connection of uid 0
// would. Replies are not compared with anything but must keep the
// protocol: while the connection stays open every request gets exactly one
// reply, which decodes as a response with the request's opcode and seq
// (std::abort() otherwise, a finding). A datagram that makes the daemon
// close the connection ends the input, as it would end the connection; the
// session's teardown (its reaper) must then leave the device with no object
// of it.
//
// Bounded in time: a request still in flight after wait_budget_ns (an
// EVENT_WAIT or RUN held by a gate nobody raises, a long timeout) closes the
// connection, which answers it PEER_GONE and ends the input.
//
// Bounded: every input starts from the same config (rewritten before each
// one, on tmpfs where there is one) whose rule caps memory, objects and
// events, so no input can make the process large. An input ends after an
// admin LIMITS_SET too: the document is fuzzed, but a raised limit is never
// used. With VACCEL_FUZZ_WRITE_SEEDS=DIR the binary writes its seed inputs
// into DIR and exits (the build does it).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "daemon_input.hpp"
#include "vaccel/common/codec.hpp"
#include "vaccel/daemon/test_transport.hpp"

namespace {

std::filesystem::path config_path;

// How long one request may stay in flight (see above).
constexpr std::uint64_t wait_budget_ns = 200'000'000;

constexpr const char* bounded_config =
    "[daemon]\n"
    "devices = [\"cpu\"]\n"
    "[[rule]]\n"
    "uid = 0\n"
    "contexts = 4\n"
    "memory = \"16M\"\n"
    "buffers = 32\n"
    "programs = 8\n"
    "queues = 8\n"
    "events = 32\n";

void write_bounded_config()
{
    std::ofstream file(config_path, std::ios::trunc);
    file << bounded_config;
    if (!file.good()) {
        std::fprintf(stderr, "fuzz_daemon: cannot write %s\n", config_path.c_str());
        std::abort();
    }
}

// Offsets (in the op's struct) of the handle a successful reply issues.
std::optional<std::size_t> issued_handle_offset(std::uint32_t opcode)
{
    switch (opcode) {
    case VACCEL_OP_CONTEXT_CREATE: return offsetof(vaccel_context_create, context);
    case VACCEL_OP_BUFFER_ALLOC: return offsetof(vaccel_buffer_alloc, buffer);
    case VACCEL_OP_PROGRAM_LOAD: return offsetof(vaccel_program_load, program);
    case VACCEL_OP_QUEUE_CREATE: return offsetof(vaccel_queue_create, queue);
    case VACCEL_OP_SUBMIT: return offsetof(vaccel_submit, event);
    case VACCEL_OP_GATE_CREATE: return offsetof(vaccel_gate_create, gate);
    case VACCEL_OP_SUBMIT_AFTER: return offsetof(vaccel_submit_after, event);
    case VACCEL_OP_LAUNCH: return offsetof(struct vaccel_launch, event);
    default: return std::nullopt;
    }
}

// Replaces the placeholders of daemon_input.hpp with the handles issued.
void substitute_handles(std::vector<std::byte>& datagram, const std::vector<std::uint64_t>& issued)
{
    if (issued.empty()) return;
    for (std::size_t at = sizeof(vaccel_msg_header); at + 8 <= datagram.size(); at += 8) {
        std::uint64_t word;
        std::memcpy(&word, datagram.data() + at, 8);
        if ((word & vaccel::fuzz::handle_placeholder_mask) != vaccel::fuzz::handle_placeholder_mask)
            continue;
        const std::uint64_t handle = issued[(word & 0xffff) % issued.size()];
        std::memcpy(datagram.data() + at, &handle, 8);
    }
}

bool is_limits_set(std::span<const std::byte> datagram)
{
    if (datagram.size() < sizeof(vaccel_msg_header) + sizeof(vaccel_admin)) return false;
    vaccel_msg_header header;
    vaccel_admin admin;
    std::memcpy(&header, datagram.data(), sizeof header);
    std::memcpy(&admin, datagram.data() + sizeof header, sizeof admin);
    return header.opcode == VACCEL_OP_ADMIN && admin.command == VACCEL_ADMIN_LIMITS_SET;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    if (const char* seeds = std::getenv("VACCEL_FUZZ_WRITE_SEEDS"))
        std::exit(vaccel::fuzz::write_daemon_seeds(seeds) ? 0 : 1);
    spdlog::set_level(spdlog::level::off);
    const std::filesystem::path base = std::filesystem::is_directory("/dev/shm")
                                           ? std::filesystem::path("/dev/shm")
                                           : std::filesystem::temp_directory_path();
    config_path = base / ("vaccel-fuzz-daemon-" + std::to_string(getpid()) + ".toml");
    std::atexit([] {
        std::error_code ignored;
        std::filesystem::remove(config_path, ignored);
    });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using vaccel::daemon::TestTransport;
    write_bounded_config();
    // Root on the host: the fuzzed admin channel is open to it.
    vaccel::engine::SessionIdentity root = TestTransport::host_root();
    root.pid = getpid();
    auto endpoint = TestTransport::create(config_path, root, wait_budget_ns);
    if (!endpoint) {
        std::fprintf(stderr, "fuzz_daemon: %s\n", endpoint.error().c_str());
        std::abort();
    }
    std::vector<std::uint64_t> issued;
    std::size_t at = 0;
    for (std::size_t record = 0; record < vaccel::fuzz::max_records && at + 2 <= size; ++record) {
        const std::size_t length = std::size_t(data[at]) | (std::size_t(data[at + 1]) << 8);
        at += 2;
        if (length > size - at) break;
        std::vector<std::byte> datagram(length);
        std::memcpy(datagram.data(), data + at, length);
        at += length;
        substitute_handles(datagram, issued);

        const auto outcome = (*endpoint)->feed(datagram);
        if (outcome.closed) break;  // the connection ends here
        vaccel_msg_header sent;
        std::memcpy(&sent, datagram.data(), sizeof sent);  // intake checked the size
        if (outcome.replies.size() != 1) std::abort();     // exactly one reply per request
        const auto reply = vaccel::decode_response(outcome.replies.front().bytes);
        if (!reply || reply->header.opcode != sent.opcode || reply->header.seq != sent.seq)
            std::abort();  // the reply must be a well-formed echo of the request
        if (const auto offset = issued_handle_offset(sent.opcode)) {
            vaccel_status status;
            std::memcpy(&status, reply->args.data(), sizeof status);
            std::uint64_t handle;
            std::memcpy(&handle, reply->args.data() + *offset, sizeof handle);
            if (status.error == VACCEL_OK && handle != 0) issued.push_back(handle);
        }
        if (is_limits_set(datagram)) break;  // never use a limit the input raised
    }
    // The connection ends: its teardown must give every object back (held
    // work cancelled, running work finished), whatever the input did. The
    // transport's end hands the session to its reaper; the server's end
    // joins the reapers.
    const auto devices = (*endpoint)->devices();
    endpoint->reset();
    for (std::uint32_t i = 0; i < devices->count(); ++i) {
        const auto live = devices->device(i)->live();
        if (live.contexts != 0 || live.buffers != 0 || live.programs != 0 || live.queues != 0 ||
            live.events != 0 || live.events_in_flight != 0 || live.gates != 0)
            std::abort();  // the session's teardown leaked backend objects
    }
    return 0;
}
