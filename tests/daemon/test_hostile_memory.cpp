// test_hostile_memory.cpp - a real vacceld on its socket against clients
// that abuse the memory they share with it: the buffer memfd BUFFER_MAP
// passes, payload memfds rewritten while the daemon reads them, and
// descriptors that are no memfd at all.
//
// Owns: the attacks, each one test (the ctest names are the behaviours,
// label hostile). Decides: every attack is carried out to its end before
// anything is asserted, so a daemon that dies of it shows as "no reply"
// (the connection closed) with what the client did, and every test then
// checks that the attacking session and a second client are still served
// with exact results.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "daemon_support.hpp"
#include "test_programs.hpp"
#include "vaccel/daemon/payload_files.hpp"

using namespace vaccel;
using namespace vaccel::test;

namespace {

constexpr std::uint64_t flags_field = offsetof(vaccel_msg_header, flags);

// The daemon of the running test, whose log a failure shows.
const DaemonProcess* running = nullptr;
std::string daemon_log() { return running != nullptr ? running->log_text() : std::string(); }

std::uint64_t make_context(WireClient& client)
{
    vaccel_context_create create{};
    Received r = client.call(VACCEL_OP_CONTEXT_CREATE, create);
    assert_status(r, VACCEL_OK, VACCEL_D_NONE, 0);
    return r.as<vaccel_context_create>().context;
}

std::uint64_t make_buffer(WireClient& client, std::uint64_t context, std::uint64_t bytes)
{
    vaccel_buffer_alloc alloc{};
    alloc.context = context;
    alloc.bytes = bytes;
    alloc.domain = VACCEL_DOMAIN_HOST;
    alloc.usage = VACCEL_USAGE_ALL;
    alloc.access = VACCEL_ACCESS_RW;
    Received r = client.call(VACCEL_OP_BUFFER_ALLOC, alloc);
    assert_status(r, VACCEL_OK, VACCEL_D_NONE, 0);
    return r.as<vaccel_buffer_alloc>().buffer;
}

std::vector<std::byte> pattern(std::size_t bytes, unsigned seed)
{
    std::vector<std::byte> data(bytes);
    for (std::size_t i = 0; i < bytes; ++i)
        data[i] = static_cast<std::byte>((i * 13 + seed) & 0xff);
    return data;
}

// The reply to a request already sent, or a failure saying the daemon
// closed the connection after `what` (it died, or dropped the client).
Received reply_after(WireClient& client, const char* what)
{
    auto r = client.receive();
    if (!r)
        fail_msg("no reply after %s: the daemon closed the connection (it died?); its log:\n%s",
                 what, daemon_log().c_str());
    return std::move(*r);
}

void write_inline(WireClient& client, std::uint64_t buffer, const std::vector<std::byte>& data)
{
    vaccel_buffer_transfer write{};
    write.buffer = buffer;
    write.length = data.size();
    assert_status(client.call(VACCEL_OP_BUFFER_WRITE, write, data), VACCEL_OK, VACCEL_D_NONE, 0);
}

// Payloads above VACCEL_MSG_INLINE_MAX travel in a memfd (and only those).
constexpr std::uint64_t file_payload_bytes = 2 * VACCEL_MSG_INLINE_MAX;

UniqueFd memfd_holding(const std::vector<std::byte>& data)
{
    UniqueFd fd(::memfd_create("payload", MFD_CLOEXEC));
    assert_true(static_cast<bool>(fd));
    assert_int_equal(::pwrite(fd.get(), data.data(), data.size(), 0),
                     static_cast<ssize_t>(data.size()));
    return fd;
}

void write_from_memfd(WireClient& client, std::uint64_t buffer, const std::vector<std::byte>& data)
{
    UniqueFd file = memfd_holding(data);
    vaccel_buffer_transfer write{};
    write.buffer = buffer;
    write.length = data.size();
    std::vector<std::byte> message;
    append_request_fd(message, VACCEL_OP_BUFFER_WRITE, client.last_seq() + 100, 0,
                      bytes_of(write), data.size());
    assert_true(client.send_bytes(message, file.get()));
    auto r = client.receive();
    assert_true(r.has_value());
    assert_status(*r, VACCEL_OK, VACCEL_D_NONE, 0);
}

// BUFFER_READ (inline, or into a memfd above the inline size), whose answer
// must be `expected`; `what` names the attack before it in the failure.
void expect_contents(WireClient& client, std::uint64_t buffer,
                     const std::vector<std::byte>& expected, const char* what)
{
    vaccel_buffer_transfer read{};
    read.buffer = buffer;
    read.length = expected.size();
    if (expected.size() <= VACCEL_MSG_INLINE_MAX) {
        assert_true(client.send(VACCEL_OP_BUFFER_READ, read));
        Received r = reply_after(client, what);
        assert_status(r, VACCEL_OK, VACCEL_D_NONE, 0);
        assert_int_equal(r.payload.size(), expected.size());
        assert_memory_equal(r.payload.data(), expected.data(), expected.size());
        return;
    }
    UniqueFd target(::memfd_create("answer", MFD_CLOEXEC));
    assert_int_equal(::ftruncate(target.get(), static_cast<off_t>(expected.size())), 0);
    std::vector<std::byte> message;
    append_request_fd(message, VACCEL_OP_BUFFER_READ, client.last_seq() + 200, 0, bytes_of(read), 0);
    assert_true(client.send_bytes(message, target.get()));
    assert_status(reply_after(client, what), VACCEL_OK, VACCEL_D_NONE, 0);
    std::vector<std::byte> back(expected.size());
    assert_int_equal(::pread(target.get(), back.data(), back.size(), 0),
                     static_cast<ssize_t>(back.size()));
    assert_memory_equal(back.data(), expected.data(), expected.size());
}

// A second, well-behaved client: a buffer written and read back exactly.
void another_client_is_served(const DaemonProcess& daemon)
{
    WireClient other(daemon.socket());
    const std::uint64_t buffer = make_buffer(other, make_context(other), 4096);
    const auto data = pattern(4096, 99);
    write_inline(other, buffer, data);
    expect_contents(other, buffer, data, "the well-behaved client's write");
}

nlohmann::json admin_json(WireClient& client, std::uint32_t command)
{
    Received r = client.admin(command);
    assert_status(r, VACCEL_OK, VACCEL_D_NONE, 0);
    return nlohmann::json::parse(r.text());
}

// ---- 1. the shrink attack on a mapped buffer ---------------------------------------------

void mapped_buffer_memfd_cannot_be_resized_and_the_daemon_keeps_serving(void**)
{
    DaemonProcess daemon;
    running = &daemon;
    WireClient client(daemon.socket());
    const std::uint64_t bytes = 16384;
    const std::uint64_t buffer = make_buffer(client, make_context(client), bytes);
    const auto first = pattern(bytes, 1);
    write_inline(client, buffer, first);

    vaccel_buffer_map map{};
    map.buffer = buffer;
    Received mapped = client.call(VACCEL_OP_BUFFER_MAP, map);
    assert_status(mapped, VACCEL_OK, VACCEL_D_NONE, 0);
    assert_true(static_cast<bool>(mapped.fd));
    const int file = mapped.fd.get();
    const auto where = mapped.as<vaccel_buffer_map>();

    // The attack: shrink the daemon's buffer file to nothing, then have the
    // daemon touch the buffer (a read of it).
    const int shrunk = ::ftruncate(file, 0);
    const int shrink_errno = errno;
    vaccel_buffer_transfer read{};
    read.buffer = buffer;
    read.length = bytes;
    assert_true(client.send(VACCEL_OP_BUFFER_READ, read));
    auto after = client.receive();
    if (!after)
        fail_msg("the daemon closed the connection when the buffer was read after the client "
                 "truncated its memfd (ftruncate to 0 returned %d: %s); its log:\n%s",
                 shrunk, shrunk == 0 ? "allowed" : std::strerror(shrink_errno),
                 daemon_log().c_str());

    assert_int_equal(shrunk, -1);
    assert_int_equal(shrink_errno, EPERM);
    // Growing it is refused too, and so is any change of its seals.
    const int grown = ::ftruncate(file, static_cast<off_t>(where.map_offset + bytes * 4));
    const int grow_errno = errno;
    const int unsealed = ::fcntl(file, F_ADD_SEALS, F_SEAL_WRITE);
    const int unseal_errno = errno;
    assert_int_equal(grown, -1);
    assert_int_equal(grow_errno, EPERM);
    assert_int_equal(unsealed, -1);  // F_SEAL_SEAL: no seal can be added or removed
    assert_int_equal(unseal_errno, EPERM);
    const int seals = ::fcntl(file, F_GET_SEALS);
    assert_int_equal(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
                     F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    assert_status(*after, VACCEL_OK, VACCEL_D_NONE, 0);
    assert_memory_equal(after->payload.data(), first.data(), bytes);

    // Sharing still works both ways: bytes written through the client's
    // mapping are what the daemon reads.
    void* view = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, file,
                        static_cast<off_t>(where.map_offset));
    assert_true(view != MAP_FAILED);
    const auto second = pattern(bytes, 2);
    std::memcpy(view, second.data(), bytes);
    expect_contents(client, buffer, second, "writing through the mapping");
    ::munmap(view, bytes);
    another_client_is_served(daemon);
}

// ---- 2. a program payload rewritten while the daemon loads it ----------------------------

// A child process that rewrites the file's first `bytes` bytes, word by
// word, alternately with the valid program and the hostile one, as fast as
// it can, until killed. Invariant: it dies with the test (PR_SET_PDEATHSIG).
pid_t start_flipper(int file, const std::vector<std::byte>& valid,
                    const std::vector<std::byte>& hostile, std::size_t bytes)
{
    const pid_t pid = ::fork();
    assert_true(pid >= 0);
    if (pid > 0)
        return pid;
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    void* view = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
    if (view == MAP_FAILED)
        ::_exit(3);
    auto* words = static_cast<std::atomic<std::uint32_t>*>(view);
    const std::size_t count = bytes / 4;
    std::vector<std::uint32_t> good(count), bad(count);
    std::memcpy(good.data(), valid.data(), count * 4);
    std::memcpy(bad.data(), hostile.data(), count * 4);
    for (;;) {
        for (std::size_t i = 0; i < count; ++i)
            words[i].store(bad[i], std::memory_order_relaxed);
        for (std::size_t i = 0; i < count; ++i)
            words[i].store(good[i], std::memory_order_relaxed);
    }
}

void program_payload_rewritten_during_load_is_loaded_whole_or_refused(void**)
{
    DaemonProcess daemon;
    running = &daemon;
    WireClient client(daemon.socket());
    const std::uint64_t context = make_context(client);
    // Padded past the inline size (a flatbuffer may have trailing bytes):
    // a payload file must hold more than VACCEL_MSG_INLINE_MAX.
    auto valid = add_program(1024);
    const std::size_t program_bytes = (valid.size() + 3) / 4 * 4;
    valid.resize(file_payload_bytes);
    // The hostile variant: every word but the file identifier moved 1 GiB
    // on, so any offset the daemon reads from it points far outside the
    // file (the verifier refuses it; a decoder reading it after the
    // verifier read the valid one follows it).
    auto hostile = valid;
    for (std::size_t at = 0; at < program_bytes; at += 4) {
        if (at == 4)
            continue;
        std::uint32_t word;
        std::memcpy(&word, hostile.data() + at, 4);
        word += 0x40000000u;
        std::memcpy(hostile.data() + at, &word, 4);
    }

    vaccel_program_load load{};
    load.context = context;
    load.format = VACCEL_FORMAT_TOSA;
    load.payload_bytes = valid.size();
    // What each variant gets when it stays still.
    UniqueFd still_hostile = memfd_holding(hostile);
    std::vector<std::byte> first;
    append_request_fd(first, VACCEL_OP_PROGRAM_LOAD, client.last_seq() + 1, 0, bytes_of(load),
                      hostile.size());
    assert_true(client.send_bytes(first, still_hostile.get()));
    const vaccel_status refused_status = reply_after(client, "the hostile program").status();
    assert_int_equal(refused_status.error, VACCEL_E_INVALID_ARGUMENT);
    assert_int_equal(refused_status.detail, VACCEL_D_TOSA_MALFORMED);

    // The payload file as libvaccel makes it (sealed against shrinking,
    // which let the daemon map it), rewritten by the flipper meanwhile.
    UniqueFd file(::memfd_create("hostile-program", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    assert_true(static_cast<bool>(file));
    assert_int_equal(::pwrite(file.get(), valid.data(), valid.size(), 0),
                     static_cast<ssize_t>(valid.size()));
    assert_int_equal(::fcntl(file.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
    const pid_t flipper = start_flipper(file.get(), valid, hostile, program_bytes);

    constexpr unsigned rounds = 20000;
    unsigned loaded = 0, refused = 0;
    std::map<std::pair<std::uint32_t, std::uint32_t>, unsigned> refusals;
    std::string odd;
    for (unsigned i = 0; i < rounds && odd.empty(); ++i) {
        std::vector<std::byte> message;
        append_request_fd(message, VACCEL_OP_PROGRAM_LOAD, client.last_seq() + 1000 + i, 0,
                          bytes_of(load), valid.size());
        assert_true(client.send_bytes(message, file.get()));
        auto r = client.receive();
        if (!r) {
            odd = "round " + std::to_string(i) + ": the daemon closed the connection (it died?)";
            break;
        }
        const auto got = r->as<vaccel_program_load>();
        if (got.status.error == VACCEL_OK) {
            ++loaded;
            if (got.input_count != 2 || got.output_count != 1)
                odd = "a loaded program has " + std::to_string(got.input_count) + " inputs and " +
                      std::to_string(got.output_count) + " outputs";
            vaccel_handle_release unload{};
            unload.handle = got.program;
            assert_status(client.call(VACCEL_OP_PROGRAM_UNLOAD, unload), VACCEL_OK, VACCEL_D_NONE, 0);
        } else {
            // A torn copy (part valid, part hostile) may be refused for any
            // reason the file gives: what matters is that it was refused.
            ++refused;
            ++refusals[{got.status.error, got.status.detail}];
        }
    }
    ::kill(flipper, SIGKILL);
    ::waitpid(flipper, nullptr, 0);
    if (!odd.empty())
        fail_msg("after %u loads and %u refusals: %s; the daemon's log:\n%s", loaded, refused,
                 odd.c_str(), daemon_log().c_str());
    print_message("%u of %u loads took the valid program, %u were refused\n", loaded, rounds,
                  refused);
    for (const auto& [status, count] : refusals)
        print_message("  %u refused with error %u detail %u\n", count, status.first,
                      status.second);
    assert_int_equal(loaded + refused, rounds);
    // The attack alternated (otherwise this test proved nothing).
    assert_true(loaded > 0);
    assert_true(refused > 0);

    // Nothing was left behind, and the file, now still, loads.
    const auto devices = admin_json(client, VACCEL_ADMIN_DEVICES);
    assert_int_equal(devices["devices"][0]["programs"].get<int>(), 0);
    assert_int_equal(::pwrite(file.get(), valid.data(), valid.size(), 0),
                     static_cast<ssize_t>(valid.size()));
    std::vector<std::byte> message;
    append_request_fd(message, VACCEL_OP_PROGRAM_LOAD, client.last_seq() + 9000, 0,
                      bytes_of(load), valid.size());
    assert_true(client.send_bytes(message, file.get()));
    assert_status(reply_after(client, "the last load"), VACCEL_OK, VACCEL_D_NONE, 0);
    another_client_is_served(daemon);
}

// ---- 3. payload descriptors that are not memfds ------------------------------------------

// Sends a BUFFER_WRITE of `bytes` whose payload is `fd`: it must be refused
// as not a memfd, and the buffer keep `before`.
void write_from_is_refused(WireClient& client, std::uint64_t buffer, int fd,
                           const std::vector<std::byte>& before, const char* what)
{
    vaccel_buffer_transfer write{};
    write.buffer = buffer;
    write.length = before.size();
    std::vector<std::byte> message;
    append_request_fd(message, VACCEL_OP_BUFFER_WRITE, client.last_seq() + 500, 0,
                      bytes_of(write), before.size());
    assert_true(client.send_bytes(message, fd));
    Received r = reply_after(client, what);
    const vaccel_status s = r.status();
    if (s.error != VACCEL_E_INVALID_ARGUMENT || s.detail != VACCEL_D_BAD_VALUE ||
        s.arg0 != flags_field)
        fail_msg("a BUFFER_WRITE from %s: error %s detail %u arg0 %llu; expected InvalidArgument "
                 "BAD_VALUE arg0 %llu (not a memfd)",
                 what, std::to_string(s.error).c_str(), s.detail, (unsigned long long)s.arg0,
                 (unsigned long long)flags_field);
    expect_contents(client, buffer, before, what);
}

void payload_descriptor_that_is_not_a_memfd_is_refused_and_the_session_goes_on(void**)
{
    DaemonProcess daemon;
    running = &daemon;
    WireClient client(daemon.socket());
    const std::uint64_t context = make_context(client);
    const std::uint64_t bytes = file_payload_bytes;
    const std::uint64_t buffer = make_buffer(client, context, bytes);
    const auto before = pattern(bytes, 5);
    write_from_memfd(client, buffer, before);

    // A regular file on a disk filesystem: this program's own executable.
    UniqueFd regular(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    assert_true(static_cast<bool>(regular));
    write_from_is_refused(client, buffer, regular.get(), before, "a regular file");

    // A pipe holding the bytes.
    int ends[2];
    assert_int_equal(::pipe2(ends, O_CLOEXEC), 0);
    UniqueFd pipe_read(ends[0]), pipe_write(ends[1]);
    const auto other = pattern(bytes, 6);
    assert_int_equal(::fcntl(pipe_write.get(), F_SETPIPE_SZ, static_cast<int>(bytes)),
                     static_cast<int>(bytes));
    assert_int_equal(::write(pipe_write.get(), other.data(), other.size()),
                     static_cast<ssize_t>(other.size()));
    write_from_is_refused(client, buffer, pipe_read.get(), before, "a pipe");

    // A socket.
    int pair[2];
    assert_int_equal(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    UniqueFd socket_a(pair[0]), socket_b(pair[1]);
    write_from_is_refused(client, buffer, socket_a.get(), before, "a socket");

    // A BUFFER_READ answered into a pipe, and a program from a pipe.
    vaccel_buffer_transfer read{};
    read.buffer = buffer;
    read.length = bytes;
    std::vector<std::byte> message;
    append_request_fd(message, VACCEL_OP_BUFFER_READ, client.last_seq() + 700, 0, bytes_of(read), 0);
    assert_true(client.send_bytes(message, pipe_write.get()));
    assert_status(reply_after(client, "a read into a pipe"), VACCEL_E_INVALID_ARGUMENT,
                  VACCEL_D_BAD_VALUE, flags_field);
    auto program = add_program(16);
    program.resize(file_payload_bytes);
    vaccel_program_load load{};
    load.context = context;
    load.format = VACCEL_FORMAT_TOSA;
    load.payload_bytes = program.size();
    message.clear();
    append_request_fd(message, VACCEL_OP_PROGRAM_LOAD, client.last_seq() + 701, 0,
                      bytes_of(load), program.size());
    assert_true(client.send_bytes(message, regular.get()));
    assert_status(reply_after(client, "a program from a regular file"), VACCEL_E_INVALID_ARGUMENT,
                  VACCEL_D_BAD_VALUE, flags_field);

    // The same requests from a memfd are served: nothing else was refused.
    UniqueFd memfd = memfd_holding(other);
    vaccel_buffer_transfer write{};
    write.buffer = buffer;
    write.length = bytes;
    message.clear();
    append_request_fd(message, VACCEL_OP_BUFFER_WRITE, client.last_seq() + 702, 0,
                      bytes_of(write), bytes);
    assert_true(client.send_bytes(message, memfd.get()));
    assert_status(reply_after(client, "a write from a memfd"), VACCEL_OK, VACCEL_D_NONE, 0);
    expect_contents(client, buffer, other, "a write from a memfd");
    another_client_is_served(daemon);
}

// The check itself, on each kind of file, and the sentence a person reads.
void payload_file_check_accepts_memfds_only_and_says_pass_a_memfd(void**)
{
    UniqueFd memfd(::memfd_create("payload", MFD_CLOEXEC));
    assert_true(daemon::check_payload_file(memfd.get()).has_value());
    UniqueFd sealed(::memfd_create("payload", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    assert_int_equal(::fcntl(sealed.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL), 0);
    assert_true(daemon::check_payload_file(sealed.get()).has_value());

    int ends[2];
    assert_int_equal(::pipe2(ends, O_CLOEXEC), 0);
    UniqueFd pipe_read(ends[0]), pipe_write(ends[1]);
    UniqueFd regular(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    for (int fd : {pipe_read.get(), regular.get()}) {
        const auto checked = daemon::check_payload_file(fd);
        assert_false(checked.has_value());
        assert_int_equal(checked.error().detail, VACCEL_D_BAD_VALUE);
        assert_int_equal(checked.error().arg0, flags_field);
        assert_non_null(std::strstr(checked.error().note.c_str(), "pass a memfd"));
    }
    // A hugetlbfs memfd, where the system offers huge pages at all.
    UniqueFd huge(::memfd_create("payload", MFD_CLOEXEC | MFD_HUGETLB));
    if (huge) {
        const auto checked = daemon::check_payload_file(huge.get());
        assert_false(checked.has_value());
        assert_non_null(std::strstr(checked.error().note.c_str(), "MFD_HUGETLB"));
    }
    // Letting go of any of them returns (the closer thread takes the others).
    daemon::release_descriptor(std::move(pipe_read));
    daemon::release_descriptor(std::move(regular));
    daemon::release_descriptor(std::move(memfd));
}

}  // namespace

int main(int argc, char** argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mapped_buffer_memfd_cannot_be_resized_and_the_daemon_keeps_serving),
        cmocka_unit_test(program_payload_rewritten_during_load_is_loaded_whole_or_refused),
        cmocka_unit_test(payload_descriptor_that_is_not_a_memfd_is_refused_and_the_session_goes_on),
        cmocka_unit_test(payload_file_check_accepts_memfds_only_and_says_pass_a_memfd),
    };
    // One test by name (ctest runs each on its own), or all.
    if (argc > 1) {
        for (const auto& test : tests)
            if (std::string_view(test.name) == argv[1]) {
                const struct CMUnitTest one[] = {test};
                return cmocka_run_group_tests(one, nullptr, nullptr);
            }
        std::fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
