// test_core.cpp - vacceld's pieces in process: the weighted work queue, the
// metrics escaping, cgroup parsing, TestTransport (the fuzz target's entry
// point into the daemon's dispatch) and a Server run on a thread of the
// test and stopped on request, and its start against a live or a stale socket.
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <new>
#include <thread>

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "daemon_support.hpp"
#include "test_programs.hpp"
#include "vaccel/daemon/admin.hpp"
#include "vaccel/daemon/peer.hpp"
#include "vaccel/daemon/server.hpp"
#include "vaccel/daemon/test_transport.hpp"
#include "vaccel/daemon/tenant_lanes.hpp"
#include "vaccel/daemon/work_queue.hpp"

using namespace vaccel;
using namespace vaccel::daemon;
using vaccel::test::DaemonProcess;

// malloc/free behind new/delete: GCC cannot see they match.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
// Every operator new of the test binary goes through here; those made on
// `counted_thread` are counted (the reactor thread, while a test measures).
namespace {
std::atomic<std::thread::id> counted_thread{};
std::atomic<std::uint64_t> counted_news{0};
}  // namespace

void* operator new(std::size_t bytes)
{
    if (counted_thread.load(std::memory_order_relaxed) == std::this_thread::get_id())
        counted_news.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(bytes == 0 ? 1 : bytes))
        return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

std::filesystem::path temp_dir()
{
    char pattern[] = "/tmp/vaccel-core-XXXXXX";
    return ::mkdtemp(pattern);
}

// Runs `jobs` of two lanes queued while the worker is held, records the
// order they ran in.
void work_queue_serves_backlogged_lanes_by_weight(void**)
{
    std::mutex gate;
    std::unique_lock hold(gate);
    std::vector<int> order;
    std::mutex order_mutex;
    {
        WorkQueue queue("test-queue");
        queue.push(9, 100, [&] { std::lock_guard wait_for_gate(gate); });
        for (int i = 0; i < 6; ++i) {
            queue.push(1, 200, [&] { std::lock_guard l(order_mutex); order.push_back(1); });
            queue.push(2, 100, [&] { std::lock_guard l(order_mutex); order.push_back(2); });
        }
        while (queue.queued() != 12)
            std::this_thread::yield();
        hold.unlock();
    }  // the destructor runs everything queued
    assert_int_equal(order.size(), 12);
    // While both have work, lane 1 (weight 200) runs two jobs per one of lane 2.
    const std::vector<int> expected = {1, 1, 2, 1, 1, 2, 1, 1, 2, 2, 2, 2};
    for (std::size_t i = 0; i < expected.size(); ++i)
        assert_int_equal(order[i], expected[i]);
}

// Every connection of a tenant works in one lane: more connections buy no
// more of a device worker; a lane id is never given to another tenant.
void tenants_have_one_lane_whatever_their_connections(void**)
{
    TenantLanes lanes;
    const std::uint64_t a = lanes.join("uid:1000");
    assert_int_equal(lanes.join("uid:1000"), a);
    assert_int_equal(lanes.join("uid:1000"), a);
    const std::uint64_t b = lanes.join("uid:1001");
    assert_int_not_equal(a, b);
    assert_int_equal(lanes.size(), 2);
    lanes.leave("uid:1000");
    lanes.leave("uid:1000");
    assert_int_equal(lanes.join("uid:1000"), a);  // one connection stayed throughout
    lanes.leave("uid:1000");
    lanes.leave("uid:1000");
    assert_int_equal(lanes.size(), 1);
    // Back after its last connection left: a fresh lane, not `a` (jobs
    // queued under `a` may still run) and not b.
    const std::uint64_t again = lanes.join("uid:1000");
    assert_int_not_equal(again, a);
    assert_int_not_equal(again, b);
    lanes.leave("uid:4242");  // unknown: nothing
    assert_int_equal(lanes.size(), 2);
}

void work_queue_runs_one_lane_in_push_order(void**)
{
    std::vector<int> order;
    {
        WorkQueue queue("test-queue");
        for (int i = 0; i < 50; ++i)
            queue.push(3, 1, [&order, i] { order.push_back(i); });
    }
    for (int i = 0; i < 50; ++i)
        assert_int_equal(order[static_cast<std::size_t>(i)], i);
}

void prometheus_label_values_are_escaped(void**)
{
    assert_string_equal(prometheus_label_value("a\"b\\c\nd").c_str(), "a\\\"b\\\\c\\nd");
    assert_string_equal(prometheus_label_value("/user.slice").c_str(), "/user.slice");
}

void cgroup_is_the_unified_hierarchy_line(void**)
{
    assert_string_equal(cgroup_from_text("1:name=systemd:/x\n0::/user.slice/app.scope\n").c_str(),
                        "/user.slice/app.scope");
    assert_string_equal(cgroup_from_text("3:cpu:/legacy\n").c_str(), "");
    // A v1-only host: the name=systemd line, wherever it stands.
    assert_string_equal(cgroup_from_text("4:memory:/m\n9:name=systemd:/machine.slice/c1\n3:cpu:/\n")
                            .c_str(),
                        "/machine.slice/c1");
    assert_false(cgroup_of(::getpid()).empty() && std::filesystem::exists("/sys/fs/cgroup/cgroup.controllers"));
}

// ---- TestTransport: the fuzz target's entry point ------------------------------------

void test_transport_closes_on_a_malformed_datagram_only(void**)
{
    const auto dir = temp_dir();
    auto transport = TestTransport::create(dir / "vacceld.toml");
    assert_true(transport.has_value());
    vaccel_device_count count{};
    auto request = encode_request(VACCEL_OP_DEVICE_COUNT, 42, 0, bytes_of(count), {});
    auto outcome = (*transport)->feed(request);
    assert_false(outcome.closed);
    assert_int_equal(outcome.replies.size(), 1);
    auto view = decode_response(outcome.replies[0].bytes);
    assert_true(view.has_value());
    assert_int_equal(view->header.seq, 42);
    assert_int_equal(args_as<vaccel_device_count>(*view)->count, 1);

    const std::byte junk[5] = {};
    outcome = (*transport)->feed(junk);
    assert_true(outcome.closed);
    assert_true(outcome.replies.empty());
    assert_true(outcome.reason.starts_with("malformed message"));
    // Closed is closed: nothing more is taken.
    outcome = (*transport)->feed(request);
    assert_true(outcome.closed);
    assert_true(outcome.replies.empty());
    std::filesystem::remove_all(dir);
}

void test_transport_limits_set_writes_the_config_file(void**)
{
    const auto dir = temp_dir();
    auto transport = TestTransport::create(dir / "vacceld.toml");
    assert_true(transport.has_value());
    vaccel_admin admin{};
    admin.command = VACCEL_ADMIN_LIMITS_SET;
    const std::string doc = R"({"selector":{"uid":1000},"limits":{"events":64,"memory_bytes":"2G"}})";
    auto outcome = (*transport)->feed(
        encode_request(VACCEL_OP_ADMIN, 1, 0, bytes_of(admin), std::as_bytes(std::span(doc))));
    assert_int_equal(outcome.replies.size(), 1);
    auto view = decode_response(outcome.replies[0].bytes);
    assert_true(view.has_value());
    assert_int_equal(args_as<vaccel_admin>(*view)->status.error, VACCEL_OK);
    auto saved = load_config(dir / "vacceld.toml");
    assert_true(saved.has_value());
    const Rule* rule = saved->policy.find(Selector::uid(1000));
    assert_non_null(rule);
    assert_int_equal(*rule->limits.events, 64);
    assert_int_equal(*rule->limits.memory_bytes, std::uint64_t{2} << 30);
    std::filesystem::remove_all(dir);
}

// One request through `transport`; its one reply's args as T.
template <typename T>
T transport_call(TestTransport& transport, std::uint32_t opcode, const T& args,
                 std::span<const std::byte> payload = {})
{
    static std::uint64_t seq = 100;
    auto outcome = transport.feed(encode_request(opcode, ++seq, 0, bytes_of(args), payload));
    assert_false(outcome.closed);
    assert_int_equal(outcome.replies.size(), 1);
    auto view = decode_response(outcome.replies[0].bytes);
    assert_true(view.has_value());
    assert_int_equal(view->header.seq, seq);
    return *args_as<T>(*view);
}

// The real dispatcher parks waits: one with a timeout is answered by its
// timer, one without an end closes the peer once the budget is spent, and
// the session's teardown still gives every object back.
void test_transport_bounds_parked_waits(void**)
{
    const auto dir = temp_dir();
    auto made = TestTransport::create(dir / "vacceld.toml", TestTransport::host_root(), 300'000'000);
    assert_true(made.has_value());
    TestTransport& t = **made;
    const auto devices = t.devices();
    vaccel_context_create create{};
    const auto context = transport_call(t, VACCEL_OP_CONTEXT_CREATE, create).context;
    std::uint64_t buffer[3] = {};
    for (auto& b : buffer) {
        vaccel_buffer_alloc alloc{};
        alloc.context = context;
        alloc.bytes = 4;
        alloc.domain = VACCEL_DOMAIN_HOST;
        alloc.usage = VACCEL_USAGE_ALL;
        alloc.access = VACCEL_ACCESS_RW;
        b = transport_call(t, VACCEL_OP_BUFFER_ALLOC, alloc).buffer;
    }
    const auto artifact = vaccel::test::add_program(1);
    vaccel_program_load load{};
    load.context = context;
    load.format = VACCEL_FORMAT_TOSA;
    load.payload_bytes = artifact.size();
    const auto program = transport_call(t, VACCEL_OP_PROGRAM_LOAD, load, artifact).program;
    vaccel_queue_create queue{};
    queue.context = context;
    vaccel_gate_create gate{};
    gate.context = context;
    vaccel_submit_after after{};
    after.queue = transport_call(t, VACCEL_OP_QUEUE_CREATE, queue).queue;
    after.program = program;
    after.binding_count = 3;
    after.gate = transport_call(t, VACCEL_OP_GATE_CREATE, gate).gate;
    after.value = 1;
    const vaccel_binding bindings[3] = {{0, VACCEL_ACCESS_READ, buffer[0], 0, 4},
                                        {1, VACCEL_ACCESS_READ, buffer[1], 0, 4},
                                        {2, VACCEL_ACCESS_WRITE, buffer[2], 0, 4}};
    const std::uint64_t event =
        transport_call(t, VACCEL_OP_SUBMIT_AFTER, after, std::as_bytes(std::span(bindings))).event;

    vaccel_event_wait wait{};
    wait.count = 1;
    wait.flags = VACCEL_WAIT_ALL;
    wait.timeout_ns = monotonic_now_ns() + 50'000'000;
    const auto timed_out = transport_call(t, VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(&event, 1)));
    assert_int_equal(timed_out.status.error, VACCEL_E_DEADLINE_EXPIRED);

    wait.timeout_ns = UINT64_MAX;
    const std::uint64_t started = monotonic_now_ns();
    auto outcome = t.feed(encode_request(VACCEL_OP_EVENT_WAIT, 7, 0, bytes_of(wait),
                                         std::as_bytes(std::span(&event, 1))));
    assert_true(monotonic_now_ns() - started < 5'000'000'000u);
    assert_true(outcome.closed);
    assert_int_equal(outcome.replies.size(), 1);
    auto view = decode_response(outcome.replies[0].bytes);
    assert_true(view.has_value());
    assert_int_equal(view->header.seq, 7);
    assert_int_equal(args_as<vaccel_event_wait>(*view)->status.error, VACCEL_E_DEVICE_LOST);
    made->reset();
    const auto live = devices->device(0)->live();
    assert_int_equal(live.contexts + live.buffers + live.programs + live.queues + live.events +
                         live.gates,
                     0);
    std::filesystem::remove_all(dir);
}

// ---- Server in process ----------------------------------------------------------------------

// A Server on a private socket (one CPU thread), its reactor on a thread of
// the test. finish() joins it and checks the clean exit; the destructor
// stops it if a test did not, and removes the directory.
struct ServerInProcess {
    std::filesystem::path dir = temp_dir();
    ServerOptions options;
    std::unique_ptr<Server> server;
    std::atomic<std::thread::id> reactor_id{};
    int status = -1;
    std::thread reactor;

    explicit ServerInProcess(bool multishot = true)
    {
        options.socket_path = (dir / "s.sock").string();
        options.config_path = dir / "vacceld.toml";
        options.cpu_threads = 1;
        options.multishot_receive = multishot;
        auto created = Server::create(options);
        if (!created)
            fail_msg("Server::create: %s", created.error().c_str());
        server = std::move(*created);
        reactor = std::thread([this] {
            reactor_id = std::this_thread::get_id();
            status = server->run();
        });
    }
    void finish()
    {
        reactor.join();
        assert_int_equal(status, 0);
    }
    ~ServerInProcess()
    {
        if (reactor.joinable()) {
            server->request_stop();
            reactor.join();
        }
        server.reset();
        std::filesystem::remove_all(dir);
    }
};

// A context with three 4-byte Host buffers, the ADD of [1] floats and a
// queue, made through the wire.
struct AddOnWire {
    std::uint64_t context = 0, program = 0, queue = 0;
    std::uint64_t buffer[3] = {};

    explicit AddOnWire(vaccel::test::WireClient& client)
    {
        vaccel_context_create create{};
        context = client.call(VACCEL_OP_CONTEXT_CREATE, create).as<vaccel_context_create>().context;
        for (auto& b : buffer)
            b = host_buffer(client, context, 4);
        const auto artifact = vaccel::test::add_program(1);
        vaccel_program_load load{};
        load.context = context;
        load.format = VACCEL_FORMAT_TOSA;
        load.payload_bytes = artifact.size();
        program = client.call(VACCEL_OP_PROGRAM_LOAD, load, artifact).as<vaccel_program_load>().program;
        vaccel_queue_create create_queue{};
        create_queue.context = context;
        queue = client.call(VACCEL_OP_QUEUE_CREATE, create_queue).as<vaccel_queue_create>().queue;
    }
    static std::uint64_t host_buffer(vaccel::test::WireClient& client, std::uint64_t context,
                                     std::uint64_t bytes)
    {
        vaccel_buffer_alloc alloc{};
        alloc.context = context;
        alloc.bytes = bytes;
        alloc.domain = VACCEL_DOMAIN_HOST;
        alloc.usage = VACCEL_USAGE_ALL;
        alloc.access = VACCEL_ACCESS_RW;
        return client.call(VACCEL_OP_BUFFER_ALLOC, alloc).as<vaccel_buffer_alloc>().buffer;
    }
    std::array<vaccel_binding, 3> bindings() const
    {
        return {{{0, VACCEL_ACCESS_READ, buffer[0], 0, 4},
                 {1, VACCEL_ACCESS_READ, buffer[1], 0, 4},
                 {2, VACCEL_ACCESS_WRITE, buffer[2], 0, 4}}};
    }
};

void server_in_process_serves_and_stops_on_request(void**)
{
    ServerInProcess daemon;
    {
        vaccel::test::WireClient client(daemon.options.socket_path);
        vaccel_get_version version{};
        auto r = client.call(VACCEL_OP_GET_VERSION, version);
        assert_int_equal(r.as<vaccel_get_version>().major, VACCEL_ABI_MAJOR);
        daemon.server->request_stop();
        assert_true(client.closed_by_peer());
    }
    daemon.finish();
    assert_false(std::filesystem::exists(daemon.options.socket_path));
}

// ADR 0007's short path costs the reactor thread no allocation of the
// daemon's own once a connection's request and reply buffers have grown;
// a SUBMIT's remaining allocations are the engine's.
void short_calls_allocate_nothing_in_the_daemon(void**)
{
    ServerInProcess daemon;
    {
        vaccel::test::WireClient client(daemon.options.socket_path);
        const AddOnWire add(client);
        const auto bindings = add.bindings();
        vaccel_submit submit{};
        submit.queue = add.queue;
        submit.program = add.program;
        submit.binding_count = 3;
        auto round = [&] {
            auto r = client.call(VACCEL_OP_SUBMIT, submit, std::as_bytes(std::span(bindings)));
            assert_int_equal(r.as<vaccel_submit>().status.error, VACCEL_OK);
            const std::uint64_t event = r.as<vaccel_submit>().event;
            // Done before it is destroyed, without a parked wait: poll.
            for (;;) {
                vaccel_event_poll poll{};
                poll.event = event;
                auto p = client.call(VACCEL_OP_EVENT_POLL, poll);
                if (p.as<vaccel_event_poll>().state != VACCEL_EVENT_PENDING)
                    break;
                std::this_thread::yield();
            }
            vaccel_handle_release destroy{};
            destroy.handle = event;
            client.call(VACCEL_OP_EVENT_DESTROY, destroy);
        };
        for (int i = 0; i < 50; ++i)  // the reused buffers grow here
            round();
        // The daemon's own path (receive, check, run, reply, send): an
        // EVENT_POLL, whose engine side allocates nothing either.
        vaccel_event_poll poll{};
        poll.event = client.call(VACCEL_OP_SUBMIT, submit, std::as_bytes(std::span(bindings)))
                         .as<vaccel_submit>()
                         .event;
        constexpr int calls = 200;
        counted_news = 0;
        counted_thread = daemon.reactor_id.load();
        for (int i = 0; i < calls; ++i)
            client.call(VACCEL_OP_EVENT_POLL, poll);
        counted_thread = std::thread::id{};
        assert_int_equal(counted_news.load(), 0);
        // A SUBMIT: only what Session::call itself allocates (its event and
        // work item), printed for the record.
        counted_thread = daemon.reactor_id.load();
        for (int i = 0; i < calls; ++i)
            round();
        counted_thread = std::thread::id{};
        print_message("reactor thread: %.2f allocations per SUBMIT + EVENT_POLLs + EVENT_DESTROY "
                      "(the engine's)\n",
                      static_cast<double>(counted_news.load()) / calls);
        daemon.server->request_stop();
        assert_true(client.closed_by_peer());
    }
    daemon.finish();
}

// Payloads in memfds (SCM_RIGHTS) both ways, with multishot receives into
// the reactor's buffers and with single-shot ones (older kernels).
void memfd_payloads_travel_with_either_receive(void**)
{
    for (const bool multishot : {true, false}) {
        ServerInProcess daemon(multishot);
        {
            vaccel::test::WireClient client(daemon.options.socket_path);
            vaccel_context_create create{};
            const auto context =
                client.call(VACCEL_OP_CONTEXT_CREATE, create).as<vaccel_context_create>().context;
            constexpr std::uint64_t bytes = 256 * 1024;
            const auto buffer = AddOnWire::host_buffer(client, context, bytes);
            UniqueFd source(::memfd_create("in", MFD_CLOEXEC));
            assert_int_equal(::ftruncate(source.get(), bytes), 0);
            std::vector<std::byte> data(bytes);
            for (std::size_t i = 0; i < data.size(); ++i)
                data[i] = static_cast<std::byte>((i * 13) & 0xff);
            assert_int_equal(::pwrite(source.get(), data.data(), bytes, 0), static_cast<ssize_t>(bytes));
            vaccel_buffer_transfer transfer{};
            transfer.buffer = buffer;
            transfer.length = bytes;
            std::vector<std::byte> message;
            append_request_fd(message, VACCEL_OP_BUFFER_WRITE, 100, 0, bytes_of(transfer), bytes);
            assert_true(client.send_bytes(message, source.get()));
            auto r = client.receive();
            assert_true(r.has_value());
            assert_int_equal(r->as<vaccel_buffer_transfer>().status.error, VACCEL_OK);
            UniqueFd target(::memfd_create("out", MFD_CLOEXEC));
            assert_int_equal(::ftruncate(target.get(), bytes), 0);
            message.clear();
            append_request_fd(message, VACCEL_OP_BUFFER_READ, 101, 0, bytes_of(transfer), 0);
            assert_true(client.send_bytes(message, target.get()));
            r = client.receive();
            assert_true(r.has_value());
            assert_int_equal(r->as<vaccel_buffer_transfer>().status.error, VACCEL_OK);
            std::vector<std::byte> back(bytes);
            assert_int_equal(::pread(target.get(), back.data(), bytes, 0), static_cast<ssize_t>(bytes));
            assert_memory_equal(back.data(), data.data(), bytes);
            // A descriptor without VACCEL_MSG_PAYLOAD_FD: malformed, the
            // connection ends.
            vaccel_get_version version{};
            assert_true(client.send_bytes(encode_request(VACCEL_OP_GET_VERSION, 102, 0, bytes_of(version), {}),
                                          source.get()));
            assert_true(client.closed_by_peer());
        }
        daemon.server->request_stop();
        daemon.finish();
    }
}

// More requests than a connection may have in the daemon (parked waits that
// time out): reading pauses at the limit and resumes as they are answered;
// every request gets its one reply, with either receive.
void backpressure_pauses_and_resumes_reading(void**)
{
    for (const bool multishot : {true, false}) {
        ServerInProcess daemon(multishot);
        {
            vaccel::test::WireClient client(daemon.options.socket_path);
            const AddOnWire add(client);
            vaccel_gate_create gate{};
            gate.context = add.context;
            vaccel_submit_after after{};
            after.queue = add.queue;
            after.program = add.program;
            after.binding_count = 3;
            after.gate = client.call(VACCEL_OP_GATE_CREATE, gate).as<vaccel_gate_create>().gate;
            after.value = 1;
            const auto bindings = add.bindings();
            const std::uint64_t event =
                client.call(VACCEL_OP_SUBMIT_AFTER, after, std::as_bytes(std::span(bindings)))
                    .as<vaccel_submit_after>()
                    .event;
            // Held by a gate nobody raises: every wait times out.
            constexpr int waits = Server::max_outstanding + 8;
            vaccel_event_wait wait{};
            wait.count = 1;
            wait.flags = VACCEL_WAIT_ALL;
            wait.timeout_ns = monotonic_now_ns() + 300'000'000;
            for (int i = 0; i < waits; ++i)
                assert_true(client.send(VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(&event, 1))));
            for (int i = 0; i < waits; ++i) {
                auto r = client.receive();
                assert_true(r.has_value());
                assert_int_equal(r->as<vaccel_event_wait>().status.error, VACCEL_E_DEADLINE_EXPIRED);
            }
        }
        daemon.server->request_stop();
        daemon.finish();
    }
}

void second_daemon_on_a_live_socket_is_refused(void**)
{
    DaemonProcess daemon;
    ServerOptions options;
    options.socket_path = daemon.socket();
    options.config_path = daemon.config();
    auto second = Server::create(options);
    assert_false(second.has_value());
    assert_non_null(std::strstr(second.error().c_str(), "another vacceld"));
}

// The socket is checked before the server node: a second daemon that must
// attach (here to a node that does not exist) is refused for the live
// socket, having not tried the node at all.
void second_daemon_is_refused_for_the_socket_before_the_node(void**)
{
    DaemonProcess daemon;
    ServerOptions options;
    options.socket_path = daemon.socket();
    options.config_path = daemon.config();
    options.devices = std::vector<std::string>{"cpu"};
    options.kernel = KernelTransport::required;
    options.server_node = "/nonexistent/vaccel-server";
    auto second = Server::create(options);
    assert_false(second.has_value());
    if (std::strstr(second.error().c_str(), "another vacceld is serving") == nullptr)
        fail_msg("refused for '%s', not for the live socket", second.error().c_str());
}

// A killed daemon's listening socket can outlive its process (io_uring
// drops the accept it held after the exit): connect() still succeeds, but
// nobody listens. Here the listener's process has exited and been reaped
// while this process holds the socket it listened on: a new daemon takes
// the path over.
void a_socket_whose_listener_is_gone_is_replaced(void**)
{
    char dir_template[] = "/tmp/vaccel-stale-XXXXXX";
    const char* dir = ::mkdtemp(dir_template);
    assert_non_null(dir);
    const std::string path = std::string(dir) + "/vacceld.sock";
    const std::string config = std::string(dir) + "/vacceld.toml";
    std::FILE* file = std::fopen(config.c_str(), "w");
    assert_non_null(file);
    std::fclose(file);
    int pair[2];
    assert_int_equal(::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair), 0);
    const pid_t listener = ::fork();
    assert_true(listener >= 0);
    if (listener == 0) {
        // The stale listener: listens, hands its socket over, exits.
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
        const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
        if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
            ::listen(fd, 8) != 0)
            ::_exit(1);
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        char byte = 'l';
        iovec iov{&byte, 1};
        msghdr message{};
        message.msg_iov = &iov;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
        ::_exit(::sendmsg(pair[1], &message, 0) == 1 ? 0 : 1);
    }
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    char byte = 0;
    iovec iov{&byte, 1};
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    assert_int_equal(::recvmsg(pair[0], &message, 0), 1);
    int held = -1;
    std::memcpy(&held, CMSG_DATA(CMSG_FIRSTHDR(&message)), sizeof held);
    UniqueFd stale(held);
    int status = 0;
    assert_int_equal(::waitpid(listener, &status, 0), listener);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ::close(pair[0]);
    ::close(pair[1]);

    // What the old probe saw: the path still accepts connections.
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    UniqueFd probe(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    assert_int_equal(::connect(probe.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);

    ServerOptions options;
    options.socket_path = path;
    options.config_path = config;
    options.devices = std::vector<std::string>{"cpu"};
    options.kernel = KernelTransport::off;
    auto server = Server::create(options);
    if (!server)
        fail_msg("a socket whose listener is gone was not replaced: %s", server.error().c_str());
    server->reset();
    std::filesystem::remove_all(dir);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(work_queue_serves_backlogged_lanes_by_weight),
        cmocka_unit_test(work_queue_runs_one_lane_in_push_order),
        cmocka_unit_test(tenants_have_one_lane_whatever_their_connections),
        cmocka_unit_test(prometheus_label_values_are_escaped),
        cmocka_unit_test(cgroup_is_the_unified_hierarchy_line),
        cmocka_unit_test(test_transport_closes_on_a_malformed_datagram_only),
        cmocka_unit_test(test_transport_limits_set_writes_the_config_file),
        cmocka_unit_test(test_transport_bounds_parked_waits),
        cmocka_unit_test(server_in_process_serves_and_stops_on_request),
        cmocka_unit_test(short_calls_allocate_nothing_in_the_daemon),
        cmocka_unit_test(memfd_payloads_travel_with_either_receive),
        cmocka_unit_test(backpressure_pauses_and_resumes_reading),
        cmocka_unit_test(second_daemon_on_a_live_socket_is_refused),
        cmocka_unit_test(second_daemon_is_refused_for_the_socket_before_the_node),
        cmocka_unit_test(a_socket_whose_listener_is_gone_is_replaced),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
