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
// Shared memory too (daemon_input.hpp's directives): between requests the
// input may pass memfd payloads (sealed or not, then truncated, grown or
// rewritten and passed again), descriptors that are no memfd (a pipe whose
// writer stays open, a regular file, a socket, /dev/null), and use the
// memfd the last BUFFER_MAP passed: write through a mapping of it, punch
// holes into it, and try to resize it - which must fail (std::abort()
// otherwise: a client could then truncate a file the daemon has mapped).
// Directives run between requests, never during one: what a client does to
// a file while the daemon reads it is tests/daemon/test_hostile_memory's.
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
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
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
#include "vaccel/daemon/unique_fd.hpp"

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

using vaccel::daemon::UniqueFd;
using vaccel::fuzz::Directive;

// The files of one input's client. Ownership: all closed when the input ends.
struct ClientFiles {
    UniqueFd payload;                 // the payload file (attach_memfd)
    std::vector<UniqueFd> next;       // what goes with the next datagram
    std::vector<UniqueFd> other_ends; // pipe writers, socket peers: kept open
    UniqueFd mapping;                 // the memfd the last BUFFER_MAP passed
    std::uint64_t map_offset = 0, map_bytes = 0;
};

std::uint32_t u32_at(std::span<const std::byte> bytes, std::size_t at)
{
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < 4 && at + i < bytes.size(); ++i)
        value |= std::uint32_t(bytes[at + i]) << (8 * i);
    return value;
}

UniqueFd duplicate(const UniqueFd& fd) { return UniqueFd(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 0)); }

void attach_memfd(std::span<const std::byte> operands, ClientFiles& files)
{
    if (operands.size() < 6) return;
    const auto seals = static_cast<std::uint8_t>(operands[0]);
    const auto fill = operands[1];
    const std::size_t size = std::min<std::size_t>(u32_at(operands, 2),
                                                   vaccel::fuzz::max_payload_file);
    const auto head = operands.subspan(6);
    UniqueFd file(::memfd_create("fuzz-payload", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!file) return;
    std::vector<std::byte> bytes(size, fill);
    std::memcpy(bytes.data(), head.data(), std::min(size, head.size()));
    if (::pwrite(file.get(), bytes.data(), bytes.size(), 0) != ssize_t(bytes.size())) return;
    int add = 0;
    if (seals & vaccel::fuzz::seal_shrink) add |= F_SEAL_SHRINK;
    if (seals & vaccel::fuzz::seal_grow) add |= F_SEAL_GROW;
    if (seals & vaccel::fuzz::seal_write) add |= F_SEAL_WRITE;
    if (seals & vaccel::fuzz::seal_future_write) add |= F_SEAL_FUTURE_WRITE;
    if (seals & vaccel::fuzz::seal_seal) add |= F_SEAL_SEAL;
    if (add != 0) (void)::fcntl(file.get(), F_ADD_SEALS, add);
    files.next.clear();
    files.next.push_back(duplicate(file));
    files.payload = std::move(file);
}

void attach_other(std::span<const std::byte> operands, ClientFiles& files)
{
    const auto kind = static_cast<vaccel::fuzz::OtherFile>(
        (operands.empty() ? 0 : std::uint8_t(operands[0])) % vaccel::fuzz::other_file_count);
    files.next.clear();
    int pair[2];
    switch (kind) {
    case vaccel::fuzz::OtherFile::pipe:
        if (::pipe2(pair, O_CLOEXEC | O_NONBLOCK) != 0) return;
        {
            const std::vector<std::byte> some(4096, std::byte{0x5a});
            (void)!::write(pair[1], some.data(), some.size());
        }
        files.next.emplace_back(pair[0]);
        files.other_ends.emplace_back(pair[1]);  // a reader would wait for more
        return;
    case vaccel::fuzz::OtherFile::regular:
        files.next.emplace_back(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
        return;
    case vaccel::fuzz::OtherFile::socket:
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return;
        files.next.emplace_back(pair[0]);
        files.other_ends.emplace_back(pair[1]);
        return;
    case vaccel::fuzz::OtherFile::dev_null:
        files.next.emplace_back(::open("/dev/null", O_RDWR | O_CLOEXEC));
        return;
    }
}

// The byte range [offset, offset + bytes) of the mapped buffer, clamped
// into it; false when there is no mapped buffer.
bool clamp_to_mapping(const ClientFiles& files, std::uint64_t& offset, std::uint64_t& bytes)
{
    if (!files.mapping || files.map_bytes == 0) return false;
    offset %= files.map_bytes;
    bytes = std::min(bytes, files.map_bytes - offset);
    return true;
}

void apply_directive(std::span<const std::byte> directive, ClientFiles& files)
{
    if (directive.empty()) return;
    const auto operands = directive.subspan(1);
    switch (static_cast<Directive>(std::uint8_t(directive[0]) % vaccel::fuzz::directive_count)) {
    case Directive::attach_memfd: attach_memfd(operands, files); return;
    case Directive::attach_other: attach_other(operands, files); return;
    case Directive::reattach:
        files.next.clear();
        if (files.payload) files.next.push_back(duplicate(files.payload));
        return;
    case Directive::resize_payload:
        if (files.payload)
            (void)::ftruncate(files.payload.get(),
                              off_t(std::min<std::uint64_t>(u32_at(operands, 0),
                                                            vaccel::fuzz::max_payload_file)));
        return;
    case Directive::rewrite_payload: {
        if (!files.payload || operands.size() < 4) return;
        const auto bytes = operands.subspan(4);
        const std::uint64_t offset =
            u32_at(operands, 0) % (vaccel::fuzz::max_payload_file - bytes.size() + 1);
        (void)!::pwrite(files.payload.get(), bytes.data(), bytes.size(), off_t(offset));
        return;
    }
    case Directive::resize_mapping: {
        // The seals refuse a new size; truncating to the size it has
        // already succeeds and changes nothing, so the size is compared.
        if (!files.mapping) return;
        struct stat before{}, after{};
        if (::fstat(files.mapping.get(), &before) != 0) return;
        if (::ftruncate(files.mapping.get(), off_t(u32_at(operands, 0))) == 0 &&
            (::fstat(files.mapping.get(), &after) != 0 || after.st_size != before.st_size))
            std::abort();  // a buffer's memfd changed size under the daemon's mapping
        return;
    }
    case Directive::write_mapping: {
        if (operands.size() < 4) return;
        const auto bytes = operands.subspan(4);
        std::uint64_t offset = u32_at(operands, 0), length = bytes.size();
        if (!clamp_to_mapping(files, offset, length) || length == 0) return;
        void* view = ::mmap(nullptr, files.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                            files.mapping.get(), off_t(files.map_offset));
        if (view == MAP_FAILED) return;
        std::memcpy(static_cast<std::byte*>(view) + offset, bytes.data(), length);
        ::munmap(view, files.map_bytes);
        return;
    }
    case Directive::punch_mapping: {
        std::uint64_t offset = u32_at(operands, 0), length = u32_at(operands, 4);
        if (!clamp_to_mapping(files, offset, length) || length == 0) return;
        (void)::fallocate(files.mapping.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                          off_t(files.map_offset + offset), off_t(length));
        return;
    }
    }
}

// A BUFFER_MAP's memfd: sealed against any change of size, or a finding.
void keep_mapping(const vaccel::daemon::Reply& reply, ClientFiles& files)
{
    vaccel_buffer_map args{};
    const auto decoded = vaccel::decode_response(reply.bytes);
    if (!decoded || decoded->args.size() != sizeof args) std::abort();
    std::memcpy(&args, decoded->args.data(), sizeof args);
    const int seals = ::fcntl(reply.fd.get(), F_GET_SEALS);
    constexpr int required = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
    if (seals < 0 || (seals & required) != required) std::abort();
    files.mapping = duplicate(reply.fd);
    files.map_offset = args.map_offset;
    files.map_bytes = args.map_bytes;
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
    ClientFiles files;
    std::size_t at = 0;
    for (std::size_t record = 0; record < vaccel::fuzz::max_records && at + 2 <= size; ++record) {
        const std::size_t raw = std::size_t(data[at]) | (std::size_t(data[at + 1]) << 8);
        const std::size_t length = raw & ~vaccel::fuzz::directive_flag;
        at += 2;
        if (length > size - at) break;
        if ((raw & vaccel::fuzz::directive_flag) != 0) {
            apply_directive(std::as_bytes(std::span(data + at, length)), files);
            at += length;
            continue;
        }
        std::vector<std::byte> datagram(length);
        std::memcpy(datagram.data(), data + at, length);
        at += length;
        substitute_handles(datagram, issued);

        auto outcome = (*endpoint)->feed(datagram, std::move(files.next));
        files.next.clear();
        if (outcome.closed) break;  // the connection ends here
        vaccel_msg_header sent;
        std::memcpy(&sent, datagram.data(), sizeof sent);  // intake checked the size
        if (outcome.replies.size() != 1) std::abort();     // exactly one reply per request
        const auto reply = vaccel::decode_response(outcome.replies.front().bytes);
        if (!reply || reply->header.opcode != sent.opcode || reply->header.seq != sent.seq)
            std::abort();  // the reply must be a well-formed echo of the request
        if (sent.opcode == VACCEL_OP_BUFFER_MAP && outcome.replies.front().fd)
            keep_mapping(outcome.replies.front(), files);
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
