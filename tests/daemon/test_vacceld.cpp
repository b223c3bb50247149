// test_vacceld.cpp - vacceld as a real process on a private socket, spoken
// to with the wire codec only: malformed messages, the admin channel and its
// permission, limits persisted and obeyed, parked waits, memfd payloads,
// sessions released on disconnect, SIGHUP reload and SIGTERM drain.
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "daemon_support.hpp"
#include "test_programs.hpp"
#include "vaccel/daemon/config.hpp"
#include "vaccel/daemon/reactor.hpp"

using namespace vaccel;
using namespace vaccel::test;
using nlohmann::json;

namespace {

constexpr std::uint64_t ms = 1'000'000;
// A matmul that runs for well over 100 ms on the CPU backend.
constexpr std::int64_t slow_matmul_n = 1536;

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

UniqueFd memfd_of_size(std::uint64_t bytes)
{
    UniqueFd fd(::memfd_create("test", MFD_CLOEXEC));
    assert_int_equal(::ftruncate(fd.get(), static_cast<off_t>(bytes)), 0);
    return fd;
}

// A context running c = a x b on [1, n, n] matrices, submitted once.
struct Matmul {
    std::uint64_t context, a, b, c, program, queue;
};

Matmul prepare_matmul(WireClient& client, std::int64_t n)
{
    Matmul m{};
    m.context = make_context(client);
    const std::uint64_t bytes = static_cast<std::uint64_t>(n * n) * 4;
    m.a = make_buffer(client, m.context, bytes);
    m.b = make_buffer(client, m.context, bytes);
    m.c = make_buffer(client, m.context, bytes);
    const auto artifact = matmul_program(n);
    vaccel_program_load load{};
    load.context = m.context;
    load.format = VACCEL_FORMAT_TOSA;
    load.payload_bytes = artifact.size();
    Received r = client.call(VACCEL_OP_PROGRAM_LOAD, load, artifact);
    assert_status(r, VACCEL_OK, VACCEL_D_NONE, 0);
    m.program = r.as<vaccel_program_load>().program;
    vaccel_queue_create queue{};
    queue.context = m.context;
    m.queue = client.call(VACCEL_OP_QUEUE_CREATE, queue).as<vaccel_queue_create>().queue;
    return m;
}

void send_submit(WireClient& client, const Matmul& m, std::int64_t n)
{
    const std::uint64_t bytes = static_cast<std::uint64_t>(n * n) * 4;
    const vaccel_binding bindings[3] = {{0, VACCEL_ACCESS_READ, m.a, 0, bytes},
                                        {1, VACCEL_ACCESS_READ, m.b, 0, bytes},
                                        {2, VACCEL_ACCESS_WRITE, m.c, 0, bytes}};
    vaccel_submit submit{};
    submit.queue = m.queue;
    submit.program = m.program;
    submit.binding_count = 3;
    assert_true(client.send(VACCEL_OP_SUBMIT, submit, std::as_bytes(std::span(bindings))));
}

std::uint64_t submit(WireClient& client, const Matmul& m, std::int64_t n)
{
    send_submit(client, m, n);
    auto r = client.receive();
    assert_true(r.has_value());
    assert_status(*r, VACCEL_OK, VACCEL_D_NONE, 0);
    return r->as<vaccel_submit>().event;
}

// A submission held by a new gate of the matmul's context that nobody
// raises: certainly pending for as long as the test needs.
std::uint64_t submit_held(WireClient& client, const Matmul& m, std::int64_t n)
{
    vaccel_gate_create create{};
    create.context = m.context;
    Received r = client.call(VACCEL_OP_GATE_CREATE, create);
    assert_status(r, VACCEL_OK, VACCEL_D_NONE, 0);
    const std::uint64_t bytes = static_cast<std::uint64_t>(n * n) * 4;
    const vaccel_binding bindings[3] = {{0, VACCEL_ACCESS_READ, m.a, 0, bytes},
                                        {1, VACCEL_ACCESS_READ, m.b, 0, bytes},
                                        {2, VACCEL_ACCESS_WRITE, m.c, 0, bytes}};
    vaccel_submit_after after{};
    after.queue = m.queue;
    after.program = m.program;
    after.binding_count = 3;
    after.gate = r.as<vaccel_gate_create>().gate;
    after.value = 1;
    r = client.call(VACCEL_OP_SUBMIT_AFTER, after, std::as_bytes(std::span(bindings)));
    assert_status(r, VACCEL_OK, VACCEL_D_NONE, 0);
    return r.as<vaccel_submit_after>().event;
}

Received wait_for(WireClient& client, std::uint64_t event, std::uint64_t timeout_ns)
{
    vaccel_event_wait wait{};
    wait.count = 1;
    wait.flags = VACCEL_WAIT_ALL;
    wait.timeout_ns = timeout_ns;
    return client.call(VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(&event, 1)));
}

void assert_still_serving(const std::string& socket)
{
    WireClient other(socket);
    vaccel_device_count count{};
    Received r = other.call(VACCEL_OP_DEVICE_COUNT, count);
    assert_status(r, VACCEL_OK, VACCEL_D_NONE, 0);
    assert_int_equal(r.as<vaccel_device_count>().count, 1);
}

// ---- malformed messages ------------------------------------------------------------

std::vector<std::byte> valid_count_request()
{
    vaccel_device_count count{};
    return encode_request(VACCEL_OP_DEVICE_COUNT, 1, 0, bytes_of(count), {});
}

void each_malformed_message_closes_only_its_connection(void**)
{
    DaemonProcess daemon;
    std::vector<std::pair<const char*, std::vector<std::byte>>> kinds;
    auto valid = valid_count_request();
    kinds.emplace_back("truncated", std::vector<std::byte>(valid.begin(), valid.end() - 3));
    auto oversized = valid;
    oversized.resize(valid.size() + 8);
    kinds.emplace_back("oversized", oversized);
    kinds.emplace_back("larger than any message",
                       std::vector<std::byte>(sizeof(vaccel_msg_header) + 8192 + VACCEL_MSG_INLINE_MAX));
    auto wrong_size = valid;
    vaccel_msg_header h{};
    std::memcpy(&h, wrong_size.data(), sizeof h);
    h.args_bytes += 8;
    std::memcpy(wrong_size.data(), &h, sizeof h);
    wrong_size.resize(wrong_size.size() + 8);
    kinds.emplace_back("wrong args size", wrong_size);
    auto reserved = valid;
    std::memcpy(&h, reserved.data(), sizeof h);
    h.flags = 0x8000;
    std::memcpy(reserved.data(), &h, sizeof h);
    kinds.emplace_back("reserved header bits", reserved);
    auto pad = valid;
    pad.back() = std::byte{1};  // vaccel_device_count.pad
    kinds.emplace_back("non-zero pad", pad);
    auto opcode = valid;
    std::memcpy(&h, opcode.data(), sizeof h);
    h.opcode = 0x7e;
    std::memcpy(opcode.data(), &h, sizeof h);
    kinds.emplace_back("unknown opcode", opcode);
    std::vector<std::byte> random(200);
    for (std::size_t i = 0; i < random.size(); ++i)
        random[i] = static_cast<std::byte>((i * 131 + 7) & 0xff);
    kinds.emplace_back("random bytes", random);

    for (const auto& [name, bytes] : kinds) {
        WireClient bad(daemon.socket());
        WireClient good(daemon.socket());
        assert_true(bad.send_bytes(bytes));
        if (!bad.closed_by_peer())
            fail_msg("a %s message did not close its connection", name);
        vaccel_get_version version{};
        Received r = good.call(VACCEL_OP_GET_VERSION, version);
        assert_status(r, VACCEL_OK, VACCEL_D_NONE, 0);
        assert_int_equal(r.as<vaccel_get_version>().major, VACCEL_ABI_MAJOR);
    }
    assert_still_serving(daemon.socket());
    const std::string log = daemon.log_text();
    assert_non_null(std::strstr(log.c_str(), "malformed message"));
}

void descriptor_without_payload_fd_flag_closes_the_connection(void**)
{
    DaemonProcess daemon;
    WireClient bad(daemon.socket());
    UniqueFd file = memfd_of_size(16);
    assert_true(bad.send_bytes(valid_count_request(), file.get()));
    assert_true(bad.closed_by_peer());
    assert_still_serving(daemon.socket());
}

// ---- the admin channel ----------------------------------------------------------------

void non_admin_peer_is_refused_the_admin_channel(void**)
{
    DaemonProcess daemon;
    const pid_t child = ::fork();
    if (child == 0) {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0)
            ::_exit(10);
        const UniqueFd fd = connect_to(daemon.socket());
        if (!fd)
            ::_exit(11);
        vaccel_admin args{};
        args.command = VACCEL_ADMIN_SESSIONS;
        auto request = encode_request(VACCEL_OP_ADMIN, 5, 0, bytes_of(args), {});
        if (::send(fd.get(), request.data(), request.size(), 0) != static_cast<ssize_t>(request.size()))
            ::_exit(12);
        std::vector<std::byte> reply(4096);
        const ssize_t n = ::recv(fd.get(), reply.data(), reply.size(), 0);
        if (n <= 0)
            ::_exit(13);
        auto view = decode_response(std::span(reply).first(static_cast<std::size_t>(n)));
        if (!view || view->header.seq != 5 || view->payload.size() != 0)
            ::_exit(14);
        vaccel_status status{};
        std::memcpy(&status, view->args.data(), sizeof status);
        if (status.error != VACCEL_E_PERMISSION_DENIED || status.detail != VACCEL_D_NOT_ADMIN ||
            status.arg0 != 65534 || status.arg1 != 65534)
            ::_exit(15);
        ::_exit(0);
    }
    int status = 0;
    assert_int_equal(::waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

// MINE answers any caller, with its own rule, limits and use only: a
// user outside the admin group sees its rule's totals and caps, its own
// context counted, and nothing of another tenant.
void any_caller_sees_its_own_limits_and_use(void**)
{
    DaemonProcess daemon;
    WireClient admin(daemon.socket());
    assert_status(admin.admin(VACCEL_ADMIN_LIMITS_SET,
                              R"({"selector":{"uid":65534},"limits":{"contexts":2,"memory_bytes":1048576,"sessions":3,"weight":250,"context":{"memory_bytes":65536}}})"),
                  VACCEL_OK, VACCEL_D_NONE, 0);
    make_context(admin);  // another tenant's use, which the caller must not see
    const pid_t child = ::fork();
    if (child == 0) {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0)
            ::_exit(10);
        WireClient client(daemon.socket());
        // The other admin commands stay closed to it.
        if (client.admin(VACCEL_ADMIN_TENANTS).status().detail != VACCEL_D_NOT_ADMIN)
            ::_exit(11);
        make_context(client);
        const Received r = client.admin(VACCEL_ADMIN_MINE);
        if (r.status().error != VACCEL_OK)
            ::_exit(12);
        const json mine = json::parse(r.text());
        if (mine["rule"] != "uid:65534" || mine["tenant"] != "uid:65534" || mine["weight"] != 250 ||
            mine["caller"]["uid"] != 65534 || mine.contains("tenants"))
            ::_exit(13);
        if (mine["sessions"]["open"] != 1 || mine["sessions"]["total"] != 3)
            ::_exit(14);
        const json& device = mine["devices"].at(0);
        if (device["index"] != 0 || device["contexts"]["used"] != 1 ||
            device["contexts"]["total"] != 2 || device["memory_bytes"]["total"] != 1048576 ||
            !device["buffers"]["total"].is_null() || device["context"]["memory_bytes"] != 65536 ||
            !device["name"].is_string())
            ::_exit(15);
        // MINE takes no request document.
        if (client.admin(VACCEL_ADMIN_MINE, "{}").status().detail != VACCEL_D_ADMIN_REQUEST)
            ::_exit(16);
        ::_exit(0);
    }
    int status = 0;
    assert_int_equal(::waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    // The admin's own MINE: the default (no rule), its uid's tenant, its one context.
    const json own = json::parse(admin.admin(VACCEL_ADMIN_MINE).text());
    assert_string_equal(own["rule"].get<std::string>().c_str(), "none");
    assert_string_equal(own["tenant"].get<std::string>().c_str(), "uid:0");
    assert_int_equal(own["devices"][0]["contexts"]["used"].get<int>(), 1);
}

void unknown_admin_command_is_refused_with_its_value(void**)
{
    DaemonProcess daemon;
    WireClient admin(daemon.socket());
    Received r = admin.admin(0x44);
    assert_status(r, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_BAD_VALUE, offsetof(vaccel_admin, command));
    r = admin.admin(VACCEL_ADMIN_LIMITS_SET, "{\"selector\":");
    assert_status(r, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_ADMIN_REQUEST, 12);
    r = admin.admin(VACCEL_ADMIN_LIMITS_SET, R"({"selector":{"uid":5},"limits":{"colours":3}})");
    assert_int_equal(r.status().detail, VACCEL_D_ADMIN_REQUEST);
    assert_true(admin.call(VACCEL_OP_GET_VERSION, vaccel_get_version{}).status().error == VACCEL_OK);
}

void limits_set_persists_and_a_new_context_obeys_it(void**)
{
    DaemonProcess daemon;
    WireClient admin(daemon.socket());
    Received r = admin.admin(VACCEL_ADMIN_LIMITS_SET,
                             R"({"selector":{"default":true},"limits":{"contexts":1,"memory_bytes":4096,"weight":300,"priority":"latency","device_share":"30%"}})");
    assert_status(r, VACCEL_OK, VACCEL_D_NONE, 0);
    const json rule = json::parse(r.text());
    assert_int_equal(rule["rule"]["contexts"].get<int>(), 1);
    assert_int_equal(rule["rule"]["memory_bytes"].get<int>(), 4096);
    assert_true(rule["rule"]["selector"]["default"].get<bool>());

    // On disk, before the reply came.
    auto saved = daemon::load_config(daemon.config());
    assert_true(saved.has_value());
    const daemon::Rule* on_disk = saved->policy.find(daemon::Selector::fallback());
    assert_non_null(on_disk);
    assert_int_equal(*on_disk->limits.contexts, 1);
    assert_int_equal(*on_disk->limits.memory_bytes, 4096);
    assert_int_equal(*on_disk->limits.weight, 300);
    assert_true(*on_disk->limits.priority == daemon::TenantPriority::latency);
    assert_int_equal(*on_disk->limits.device_share, 300);
    assert_string_equal(rule["rule"]["priority"].get<std::string>().c_str(), "latency");
    assert_string_equal(rule["rule"]["device_share"].get<std::string>().c_str(), "30%");
    // Bad forms are refused by name, and change nothing.
    for (const char* bad : {R"({"selector":{"uid":5},"limits":{"priority":"soon"}})",
                            R"({"selector":{"uid":5},"limits":{"device_share":30}})",
                            R"({"selector":{"uid":5},"limits":{"device_share":"0%"}})"}) {
        const Received refused = admin.admin(VACCEL_ADMIN_LIMITS_SET, bad);
        assert_int_equal(refused.status().detail, VACCEL_D_ADMIN_REQUEST);
    }
    assert_null(daemon::load_config(daemon.config())->policy.find(daemon::Selector::uid(5)));

    WireClient client(daemon.socket());
    const std::uint64_t context = make_context(client);
    vaccel_context_create second{};
    r = client.call(VACCEL_OP_CONTEXT_CREATE, second);
    assert_status(r, VACCEL_E_RESOURCE_LIMIT, VACCEL_D_LIMIT, 1);
    assert_int_equal(r.status().limit, VACCEL_LIMIT_CONTEXTS);
    vaccel_buffer_alloc alloc{};
    alloc.context = context;
    alloc.bytes = 8192;
    alloc.domain = VACCEL_DOMAIN_HOST;
    alloc.usage = VACCEL_USAGE_ALL;
    alloc.access = VACCEL_ACCESS_RW;
    r = client.call(VACCEL_OP_BUFFER_ALLOC, alloc);
    assert_status(r, VACCEL_E_RESOURCE_LIMIT, VACCEL_D_LIMIT, 4096);

    r = admin.admin(VACCEL_ADMIN_LIMITS_GET);
    assert_int_equal(json::parse(r.text())["rules"][0]["weight"].get<int>(), 300);
    r = admin.admin(VACCEL_ADMIN_LIMITS_RESET, R"({"selector":{"default":true}})");
    assert_string_equal(r.text().c_str(), R"({"removed":true})");
    r = admin.admin(VACCEL_ADMIN_LIMITS_RESET, R"({"selector":{"default":true}})");
    assert_string_equal(r.text().c_str(), R"({"removed":false})");
    assert_null(daemon::load_config(daemon.config())->policy.find(daemon::Selector::fallback()));
}

void sessions_and_devices_list_use_and_disconnect_releases_it(void**)
{
    DaemonProcess daemon;
    WireClient admin(daemon.socket());
    {
        WireClient client(daemon.socket());
        const std::uint64_t context = make_context(client);
        make_buffer(client, context, 1000);
        const json sessions = json::parse(admin.admin(VACCEL_ADMIN_SESSIONS).text())["sessions"];
        assert_int_equal(sessions.size(), 2);
        bool seen = false;
        for (const json& s : sessions)
            if (s["contexts"] == 1) {
                seen = true;
                assert_int_equal(s["buffers"].get<int>(), 1);
                assert_int_equal(s["memory_bytes"].get<int>(), 1000);
                assert_int_equal(s["uid"].get<int>(), 0);
                assert_int_equal(s["pid"].get<int>(), ::getpid());
                assert_string_equal(s["rule"].get<std::string>().c_str(), "none");
                assert_string_equal(s["transport"].get<std::string>().c_str(), "socket");
            }
        assert_true(seen);
        const json device = json::parse(admin.admin(VACCEL_ADMIN_DEVICES).text())["devices"][0];
        assert_int_equal(device["contexts"].get<int>(), 1);
        assert_int_equal(device["sessions"].get<int>(), 1);
        assert_string_equal(device["class"].get<std::string>().c_str(), "other");
    }  // the client's socket closes without releasing anything
    for (int i = 0; i < 500; ++i) {
        const json device = json::parse(admin.admin(VACCEL_ADMIN_DEVICES).text())["devices"][0];
        if (device["contexts"] == 0 && device["buffers"] == 0 && device["sessions"] == 0) {
            assert_int_equal(json::parse(admin.admin(VACCEL_ADMIN_SESSIONS).text())["sessions"].size(), 1);
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    fail_msg("the closed session's objects were not released");
}

void metrics_are_prometheus_text_with_help_and_type(void**)
{
    DaemonProcess daemon;
    WireClient admin(daemon.socket());
    const std::string text = admin.admin(VACCEL_ADMIN_METRICS).text();
    for (const char* needle : {"# HELP vaccel_device_sessions ", "# TYPE vaccel_device_sessions gauge",
                               "# TYPE vaccel_device_submissions_total counter",
                               "vaccel_device_contexts{device=\"0\",name=\"",
                               "# TYPE vaccel_session_errors_total counter",
                               "vaccel_session_memory_bytes{session=\"",
                               "vaccel_sessions 1\n", "# TYPE vaccel_daemon_uptime_seconds gauge"})
        if (text.find(needle) == std::string::npos)
            fail_msg("metrics lack \"%s\":\n%s", needle, text.c_str());
    const std::string own = "transport=\"socket\",pid=\"" + std::to_string(::getpid()) +
                            "\",uid=\"0\",cgroup=\"";
    if (text.find(own) == std::string::npos)
        fail_msg("metrics lack this client's session labels %s", own.c_str());
}

// ---- waits and payloads ------------------------------------------------------------------

// The device time the CPU device's scheduler charged a tenant is shown the
// same in SESSIONS (every session of the tenant), TENANTS and the metrics.
void device_time_is_shown_per_tenant(void**)
{
    DaemonProcess daemon;
    WireClient admin(daemon.socket());
    WireClient client(daemon.socket());
    const std::int64_t n = 64;
    const Matmul m = prepare_matmul(client, n);
    for (int i = 0; i < 3; ++i)
        assert_status(wait_for(client, submit(client, m, n), UINT64_MAX), VACCEL_OK, VACCEL_D_NONE, 0);
    const json sessions = json::parse(admin.admin(VACCEL_ADMIN_SESSIONS).text())["sessions"];
    assert_int_equal(sessions.size(), 2);
    std::uint64_t charged = 0;
    std::string tenant;
    for (const json& s : sessions) {
        // Both sessions are uid 0's: one tenant, one account.
        assert_int_equal(s["device_time"].size(), 1);
        const json& d = s["device_time"][0];
        assert_int_equal(d["device"].get<int>(), 0);
        assert_true(d["charged_ns"].get<std::uint64_t>() > 0);
        assert_true(d["share"].get<double>() > 0.0 && d["share"].get<double>() <= 1.0);
        // The CPU device holds no idle time for anyone (the latency hold
        // is the GPUs').
        assert_int_equal(d["held_ns"].get<std::uint64_t>(), 0);
        if (charged != 0) assert_int_equal(d["charged_ns"].get<std::uint64_t>(), charged);
        charged = d["charged_ns"].get<std::uint64_t>();
        tenant = s["tenant"].get<std::string>();
    }
    const json tenants = json::parse(admin.admin(VACCEL_ADMIN_TENANTS).text())["tenants"];
    assert_int_equal(tenants.size(), 1);
    assert_int_equal(tenants[0]["devices"][0]["device_time_ns"].get<std::uint64_t>(), charged);
    assert_int_equal(tenants[0]["devices"][0]["device_held_ns"].get<std::uint64_t>(), 0);
    const std::string text = admin.admin(VACCEL_ADMIN_METRICS).text();
    const std::string line = fmt::format("vaccel_tenant_device_seconds_total{{tenant=\"{}\",device=\"0\"}} {:.9f}\n",
                                         tenant, static_cast<double>(charged) / 1e9);
    if (text.find(line) == std::string::npos)
        fail_msg("metrics lack \"%s\":\n%s", line.c_str(), text.c_str());
    const std::string held = fmt::format(
        "vaccel_tenant_device_held_seconds_total{{tenant=\"{}\",device=\"0\"}} 0.000000000\n", tenant);
    if (text.find(held) == std::string::npos)
        fail_msg("metrics lack \"%s\":\n%s", held.c_str(), text.c_str());
    if (text.find("# TYPE vaccel_tenant_device_share gauge") == std::string::npos)
        fail_msg("metrics lack vaccel_tenant_device_share");
}

void wait_parks_until_done_and_times_out_at_its_deadline(void**)
{
    DaemonProcess daemon;
    WireClient client(daemon.socket());
    // Runs for well over 100 ms, so it is still pending when the first
    // wait's deadline (1 ms after submitting) passes: the timeout is
    // checked on every run, never left out because the work was done.
    const std::int64_t n = slow_matmul_n;
    const Matmul m = prepare_matmul(client, n);
    const std::uint64_t event = submit(client, m, n);
    const std::uint64_t start = daemon::monotonic_now_ns();
    Received r = wait_for(client, event, start + 1 * ms);
    assert_status(r, VACCEL_E_DEADLINE_EXPIRED, VACCEL_D_WAIT_TIMEOUT, 1);
    assert_int_equal(r.as<vaccel_event_wait>().done_count, 0);
    r = wait_for(client, event, UINT64_MAX);
    assert_status(r, VACCEL_OK, VACCEL_D_NONE, 0);
    assert_int_equal(r.as<vaccel_event_wait>().done_count, 1);
    // An unknown event is refused as the engine refuses it.
    r = wait_for(client, 0x9999, 0);
    assert_status(r, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_UNKNOWN_HANDLE, 0x9999);
}

void memfd_payloads_carry_large_writes_and_reads(void**)
{
    DaemonProcess daemon;
    WireClient client(daemon.socket());
    const std::uint64_t bytes = 1u << 20;
    const std::uint64_t buffer = make_buffer(client, make_context(client), bytes);

    UniqueFd source = memfd_of_size(bytes);
    std::vector<std::byte> data(bytes);
    for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<std::byte>((i * 7) & 0xff);
    assert_int_equal(::pwrite(source.get(), data.data(), data.size(), 0), static_cast<ssize_t>(bytes));
    vaccel_buffer_transfer write{};
    write.buffer = buffer;
    write.length = bytes;
    std::vector<std::byte> message;
    append_request_fd(message, VACCEL_OP_BUFFER_WRITE, 1, 0, bytes_of(write), bytes);
    assert_true(client.send_bytes(message, source.get()));
    auto r = client.receive();
    assert_true(r.has_value());
    assert_status(*r, VACCEL_OK, VACCEL_D_NONE, 0);

    UniqueFd target = memfd_of_size(bytes);
    vaccel_buffer_transfer read = write;
    message.clear();
    append_request_fd(message, VACCEL_OP_BUFFER_READ, 2, 0, bytes_of(read), 0);
    assert_true(client.send_bytes(message, target.get()));
    r = client.receive();
    assert_true(r.has_value());
    assert_status(*r, VACCEL_OK, VACCEL_D_NONE, 0);
    assert_int_equal(r->header.flags, VACCEL_MSG_RESPONSE | VACCEL_MSG_PAYLOAD_FD);
    assert_int_equal(r->header.payload_bytes, bytes);
    std::vector<std::byte> back(bytes);
    assert_int_equal(::pread(target.get(), back.data(), back.size(), 0), static_cast<ssize_t>(bytes));
    assert_memory_equal(back.data(), data.data(), bytes);
}

void memfd_shorter_than_stated_is_refused_and_the_connection_stays(void**)
{
    DaemonProcess daemon;
    WireClient client(daemon.socket());
    const std::uint64_t bytes = 1u << 20;
    const std::uint64_t buffer = make_buffer(client, make_context(client), bytes);
    UniqueFd liar = memfd_of_size(4096);
    vaccel_buffer_transfer write{};
    write.buffer = buffer;
    write.length = bytes;
    std::vector<std::byte> message;
    append_request_fd(message, VACCEL_OP_BUFFER_WRITE, 1, 0, bytes_of(write), bytes);
    assert_true(client.send_bytes(message, liar.get()));
    auto r = client.receive();
    assert_true(r.has_value());
    assert_status(*r, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_BAD_SIZE, 4096);
    assert_int_equal(r->status().arg1, bytes);
    // The same lie for a read: the file cannot hold what was asked.
    message.clear();
    append_request_fd(message, VACCEL_OP_BUFFER_READ, 2, 0, bytes_of(write), 0);
    assert_true(client.send_bytes(message, liar.get()));
    r = client.receive();
    assert_true(r.has_value());
    assert_status(*r, VACCEL_E_INVALID_ARGUMENT, VACCEL_D_BAD_SIZE, 4096);
    assert_true(client.call(VACCEL_OP_GET_VERSION, vaccel_get_version{}).status().error == VACCEL_OK);
}

// ---- signals --------------------------------------------------------------------------------

void sighup_reload_applies_an_edited_config(void**)
{
    DaemonProcess daemon(std::string("[[rule]]\ndefault = true\ncontexts = 1\n"));
    {
        WireClient client(daemon.socket());
        make_context(client);
        vaccel_context_create second{};
        assert_status(client.call(VACCEL_OP_CONTEXT_CREATE, second), VACCEL_E_RESOURCE_LIMIT,
                      VACCEL_D_LIMIT, 1);
    }
    write_text(daemon.config(), "[[rule]]\ndefault = true\ncontexts = 3\n");
    daemon.signal(SIGHUP);
    WireClient admin(daemon.socket());
    for (int i = 0; i < 500; ++i) {
        const json rules = json::parse(admin.admin(VACCEL_ADMIN_LIMITS_GET).text())["rules"];
        if (rules.size() == 1 && rules[0]["contexts"] == 3) {
            WireClient client(daemon.socket());
            make_context(client);
            make_context(client);
            make_context(client);
            assert_status(client.call(VACCEL_OP_CONTEXT_CREATE, vaccel_context_create{}),
                          VACCEL_E_RESOURCE_LIMIT, VACCEL_D_LIMIT, 3);
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    fail_msg("SIGHUP did not reload the config; log:\n%s", daemon.log_text().c_str());
}

void sigterm_drains_work_in_flight_and_exits_zero(void**)
{
    DaemonProcess daemon;
    WireClient client(daemon.socket());
    const std::int64_t n = 384;
    const Matmul m = prepare_matmul(client, n);
    send_submit(client, m, n);
    const std::uint64_t submit_seq = client.last_seq();
    daemon.signal(SIGTERM);
    auto r = client.receive();
    assert_true(r.has_value());
    assert_int_equal(r->header.seq, submit_seq);
    assert_status(*r, VACCEL_OK, VACCEL_D_NONE, 0);
    assert_true(client.closed_by_peer());
    assert_int_equal(daemon.wait_exit(), 0);
    const std::string log = daemon.log_text();
    assert_non_null(std::strstr(log.c_str(), "stopped"));
}

void sigterm_answers_a_parked_wait_with_peer_gone(void**)
{
    DaemonProcess daemon;
    WireClient client(daemon.socket());
    const std::int64_t n = 16;
    const Matmul m = prepare_matmul(client, n);
    const std::uint64_t event = submit_held(client, m, n);
    vaccel_event_wait wait{};
    wait.count = 1;
    wait.timeout_ns = UINT64_MAX;
    assert_true(client.send(VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(&event, 1))));
    // Certainly parked: the event is held, and the daemon lists the wait
    // (10 s at most).
    WireClient admin(daemon.socket());
    int parked = 0;
    for (int tries = 0; tries < 1000 && parked == 0; ++tries) {
        const json sessions = json::parse(admin.admin(VACCEL_ADMIN_SESSIONS).text())["sessions"];
        for (const json& s : sessions)
            parked += s["waits_parked"].get<int>();
        if (parked == 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    assert_int_equal(parked, 1);
    daemon.signal(SIGTERM);
    auto r = client.receive();
    assert_true(r.has_value());
    assert_int_equal(r->header.opcode, VACCEL_OP_EVENT_WAIT);
    assert_status(*r, VACCEL_E_DEVICE_LOST, VACCEL_D_PEER_GONE, 0);
    assert_true(client.closed_by_peer());
    // The held submission was cancelled, the session released, the daemon
    // stopped cleanly.
    assert_int_equal(daemon.wait_exit(), 0);
}

// ---- the service manager ----------------------------------------------------------------

// A datagram socket standing in for systemd's notify socket, named by
// NOTIFY_SOCKET in the environment the daemon inherits while this lives.
class NotifySocket {
public:
    NotifySocket() : directory_(temp_directory())
    {
        path_ = directory_ + "/notify";
        fd_.reset(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        assert_true(static_cast<bool>(fd_));
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
        assert_int_equal(::bind(fd_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
        assert_int_equal(::setenv("NOTIFY_SOCKET", path_.c_str(), 1), 0);
    }
    ~NotifySocket()
    {
        ::unsetenv("NOTIFY_SOCKET");
        std::filesystem::remove_all(directory_);
    }
    // The next message, or "" after 10 s without one.
    std::string next()
    {
        pollfd ready{fd_.get(), POLLIN, 0};
        if (::poll(&ready, 1, 10000) != 1)
            return {};
        char bytes[4096];
        const ssize_t n = ::recv(fd_.get(), bytes, sizeof bytes, 0);
        return n > 0 ? std::string(bytes, static_cast<std::size_t>(n)) : std::string();
    }

private:
    static std::string temp_directory()
    {
        char pattern[] = "/tmp/vaccel-notify-XXXXXX";
        assert_non_null(::mkdtemp(pattern));
        return pattern;
    }
    std::string directory_, path_;
    UniqueFd fd_;
};

bool has_line(const std::string& message, const std::string& line)
{
    return ("\n" + message + "\n").find("\n" + line + "\n") != std::string::npos;
}

void service_manager_hears_ready_reloading_and_stopping(void**)
{
    NotifySocket notify;
    DaemonProcess daemon;
    // READY comes once the socket accepts connections (it listens before
    // the daemon says so).
    const std::string ready = notify.next();
    if (!has_line(ready, "READY=1"))
        fail_msg("expected READY=1, got '%s'; log:\n%s", ready.c_str(), daemon.log_text().c_str());
    assert_true(connectable(daemon.socket()));
    assert_non_null(std::strstr(ready.c_str(), ("STATUS=serving 1 device(s) on " + daemon.socket()).c_str()));

    daemon.signal(SIGHUP);
    const std::string reloading = notify.next();
    assert_true(has_line(reloading, "RELOADING=1"));
    assert_non_null(std::strstr(reloading.c_str(), "MONOTONIC_USEC="));
    assert_true(has_line(notify.next(), "READY=1"));

    daemon.signal(SIGTERM);
    assert_true(has_line(notify.next(), "STOPPING=1"));
    assert_int_equal(daemon.wait_exit(), 0);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_malformed_message_closes_only_its_connection),
        cmocka_unit_test(descriptor_without_payload_fd_flag_closes_the_connection),
        cmocka_unit_test(non_admin_peer_is_refused_the_admin_channel),
        cmocka_unit_test(unknown_admin_command_is_refused_with_its_value),
        cmocka_unit_test(any_caller_sees_its_own_limits_and_use),
        cmocka_unit_test(limits_set_persists_and_a_new_context_obeys_it),
        cmocka_unit_test(sessions_and_devices_list_use_and_disconnect_releases_it),
        cmocka_unit_test(metrics_are_prometheus_text_with_help_and_type),
        cmocka_unit_test(device_time_is_shown_per_tenant),
        cmocka_unit_test(wait_parks_until_done_and_times_out_at_its_deadline),
        cmocka_unit_test(memfd_payloads_carry_large_writes_and_reads),
        cmocka_unit_test(memfd_shorter_than_stated_is_refused_and_the_connection_stays),
        cmocka_unit_test(sighup_reload_applies_an_edited_config),
        cmocka_unit_test(sigterm_drains_work_in_flight_and_exits_zero),
        cmocka_unit_test(sigterm_answers_a_parked_wait_with_peer_gone),
        cmocka_unit_test(service_manager_hears_ready_reloading_and_stopping),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
