// refusal_modes.cpp - the client modes that must be refused: limits, a
// foreign handle, the admin channel without the right.
//
// Owns: the exact refusal each case expects. Decides: "a failed call
// leaves accounting unchanged" is shown twice: the context's limits and use
// (vaccel_context_limits) are identical before and after the refusal, and
// where the refused resource is per client (contexts) the freed unit can
// be taken again.
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "e2e_client.hpp"
#include "modes.hpp"
#include "test_programs.hpp"

namespace vaccel::e2e {

namespace {

struct vaccel_context_limits limits_of(vaccel_client* client, std::uint64_t context)
{
    struct vaccel_context_limits out{};
    E2E_CALL(vaccel_context_limits(client, context, &out));
    out.status = {};
    return out;
}

void expect_same_accounting(const struct vaccel_context_limits& before,
                            const struct vaccel_context_limits& after)
{
    E2E_EXPECT(std::memcmp(&before, &after, sizeof before) == 0,
               "the refusal changed the context's accounting: memory {} -> {}, buffers {} -> {}, "
               "programs {} -> {}, queues {} -> {}, events {} -> {}, gates {} -> {}",
               before.used_memory_bytes, after.used_memory_bytes, before.used_buffers,
               after.used_buffers, before.used_programs, after.used_programs, before.used_queues,
               after.used_queues, before.used_events, after.used_events, before.used_gates,
               after.used_gates);
}

ExpectedRefusal limit_refusal(std::uint32_t kind, std::uint64_t value, std::uint64_t use)
{
    return {-EDQUOT, VACCEL_E_RESOURCE_LIMIT, VACCEL_D_LIMIT, kind, value, use};
}

void contexts_limit(vaccel_client* client, std::uint64_t value)
{
    std::vector<std::uint64_t> contexts(value);
    for (std::uint64_t& context : contexts) E2E_CALL(vaccel_context_create(client, 0, &context));
    std::uint64_t extra = 0;
    expect_refusal("context create past the limit", vaccel_context_create(client, 0, &extra),
                   limit_refusal(VACCEL_LIMIT_CONTEXTS, value, value));
    // The refusal took nothing: freeing one makes room for exactly one.
    E2E_CALL(vaccel_context_destroy(client, contexts.back()));
    E2E_CALL(vaccel_context_create(client, 0, &contexts.back()));
    expect_refusal("context create past the limit again", vaccel_context_create(client, 0, &extra),
                   limit_refusal(VACCEL_LIMIT_CONTEXTS, value, value));
    for (const std::uint64_t context : contexts) E2E_CALL(vaccel_context_destroy(client, context));
}

void memory_limit(vaccel_client* client, std::uint64_t context, std::uint64_t value)
{
    const std::uint64_t effective = limits_of(client, context).limits.max_memory_bytes;
    E2E_EXPECT(effective == value, "effective max_memory_bytes is {}", effective);
    struct vaccel_buffer_alloc req{};
    req.context = context;
    req.bytes = value / 2;
    req.domain = VACCEL_DOMAIN_HOST;
    req.usage = VACCEL_USAGE_ALL;
    req.access = VACCEL_ACCESS_RW;
    E2E_CALL(vaccel_buffer_alloc(client, &req));
    const std::uint64_t used = limits_of(client, context).used_memory_bytes;
    E2E_EXPECT(used >= value / 2 && used < value, "{} bytes in use", used);
    const auto before = limits_of(client, context);
    req = {};
    req.context = context;
    req.bytes = value - used + 1;
    req.domain = VACCEL_DOMAIN_HOST;
    req.usage = VACCEL_USAGE_ALL;
    req.access = VACCEL_ACCESS_RW;
    expect_refusal("buffer alloc past the memory limit", vaccel_buffer_alloc(client, &req),
                   limit_refusal(VACCEL_LIMIT_MEMORY_BYTES, value, used));
    expect_same_accounting(before, limits_of(client, context));
}

void buffers_limit(vaccel_client* client, std::uint64_t context, std::uint64_t value)
{
    E2E_EXPECT(limits_of(client, context).limits.max_buffers == value, "effective max_buffers");
    for (std::uint64_t i = 0; i < value; ++i) (void)alloc_host_buffer(client, context, 64);
    const auto before = limits_of(client, context);
    struct vaccel_buffer_alloc req{};
    req.context = context;
    req.bytes = 64;
    req.domain = VACCEL_DOMAIN_HOST;
    req.usage = VACCEL_USAGE_ALL;
    req.access = VACCEL_ACCESS_RW;
    expect_refusal("buffer alloc past the buffers limit", vaccel_buffer_alloc(client, &req),
                   limit_refusal(VACCEL_LIMIT_BUFFERS, value, value));
    expect_same_accounting(before, limits_of(client, context));
}

void programs_limit(vaccel_client* client, std::uint64_t context, std::uint64_t value)
{
    E2E_EXPECT(limits_of(client, context).limits.max_programs == value, "effective max_programs");
    const auto artifact = test::add_program(4);
    std::uint64_t program = 0;
    for (std::uint64_t i = 0; i < value; ++i)
        E2E_CALL(vaccel_program_load(client, context, VACCEL_FORMAT_TOSA, nullptr, artifact.data(),
                                     artifact.size(), &program, nullptr, nullptr));
    const auto before = limits_of(client, context);
    expect_refusal("program load past the programs limit",
                   vaccel_program_load(client, context, VACCEL_FORMAT_TOSA, nullptr,
                                       artifact.data(), artifact.size(), &program, nullptr,
                                       nullptr),
                   limit_refusal(VACCEL_LIMIT_PROGRAMS, value, value));
    expect_same_accounting(before, limits_of(client, context));
}

void queues_limit(vaccel_client* client, std::uint64_t context, std::uint64_t value)
{
    E2E_EXPECT(limits_of(client, context).limits.max_queues == value, "effective max_queues");
    std::uint64_t queue = 0;
    for (std::uint64_t i = 0; i < value; ++i)
        E2E_CALL(vaccel_queue_create(client, context, &queue));
    const auto before = limits_of(client, context);
    expect_refusal("queue create past the queues limit",
                   vaccel_queue_create(client, context, &queue),
                   limit_refusal(VACCEL_LIMIT_QUEUES, value, value));
    expect_same_accounting(before, limits_of(client, context));
}

void gates_limit(vaccel_client* client, std::uint64_t context, std::uint64_t value)
{
    E2E_EXPECT(limits_of(client, context).limits.max_gates == value, "effective max_gates");
    std::uint64_t gate = 0;
    for (std::uint64_t i = 0; i < value; ++i)
        E2E_CALL(vaccel_gate_create(client, context, &gate));
    const auto before = limits_of(client, context);
    E2E_EXPECT(before.used_gates == value, "{} gates counted", before.used_gates);
    expect_refusal("gate create past the gates limit", vaccel_gate_create(client, context, &gate),
                   limit_refusal(VACCEL_LIMIT_GATES, value, value));
    expect_same_accounting(before, limits_of(client, context));
}

// Events count from submit until destroyed: `value` completed, undestroyed
// events fill the limit.
void events_limit(vaccel_client* client, std::uint64_t value)
{
    const auto artifact = test::add_program(4);
    std::uint64_t context = 0, program = 0, queue = 0;
    E2E_CALL(vaccel_context_create(client, 0, &context));
    E2E_EXPECT(limits_of(client, context).limits.max_events == value, "effective max_events");
    const std::uint64_t a = alloc_host_buffer(client, context, 16);
    const std::uint64_t c = alloc_host_buffer(client, context, 16);
    E2E_CALL(vaccel_program_load(client, context, VACCEL_FORMAT_TOSA, nullptr, artifact.data(),
                                 artifact.size(), &program, nullptr, nullptr));
    E2E_CALL(vaccel_queue_create(client, context, &queue));
    const float ones[4] = {1, 1, 1, 1};
    E2E_CALL(vaccel_buffer_write(client, a, 0, ones, sizeof ones));
    const vaccel_binding bindings[3] = {{0, VACCEL_ACCESS_READ, a, 0, 16},
                                        {1, VACCEL_ACCESS_READ, a, 0, 16},
                                        {2, VACCEL_ACCESS_WRITE, c, 0, 16}};
    std::uint64_t event = 0;
    for (std::uint64_t i = 0; i < value; ++i) {
        E2E_CALL(vaccel_submit(client, queue, program, bindings, 3, 0, &event));
        E2E_CALL(vaccel_event_wait(client, &event, 1, VACCEL_WAIT_ALL,
                                   vaccel_deadline_after_ns(30'000'000'000u), nullptr));
    }
    const auto before = limits_of(client, context);
    E2E_EXPECT(before.used_events == value, "{} events counted", before.used_events);
    expect_refusal("submit past the events limit",
                   vaccel_submit(client, queue, program, bindings, 3, 0, &event),
                   limit_refusal(VACCEL_LIMIT_EVENTS, value, value));
    expect_same_accounting(before, limits_of(client, context));
}

}  // namespace

int limit_mode(std::string_view kind, std::uint64_t value)
{
    vaccel_client* client = open_client();
    if (kind == "contexts") {
        contexts_limit(client, value);
    } else if (kind == "events") {
        events_limit(client, value);
    } else {
        std::uint64_t context = 0;
        E2E_CALL(vaccel_context_create(client, 0, &context));
        if (kind == "memory") memory_limit(client, context, value);
        else if (kind == "buffers") buffers_limit(client, context, value);
        else if (kind == "programs") programs_limit(client, context, value);
        else if (kind == "queues") queues_limit(client, context, value);
        else if (kind == "gates") gates_limit(client, context, value);
        else fail_check(fmt::format("unknown limit kind '{}'", kind));
    }
    vaccel_client_close(client);
    fmt::print("limit: {} refused at {} with the detail, accounting unchanged\n", kind, value);
    return 0;
}

int foreign_handle_mode()
{
    int pipe_fds[2];
    E2E_EXPECT(pipe(pipe_fds) == 0, "pipe: {}", std::strerror(errno));
    // Fork before any client exists: each process opens its own session.
    const pid_t other = fork();
    E2E_EXPECT(other >= 0, "fork: {}", std::strerror(errno));
    if (other == 0) {
        close(pipe_fds[1]);
        vaccel_client* client = open_client();
        std::uint64_t context = 0;
        E2E_CALL(vaccel_context_create(client, 0, &context));
        (void)alloc_host_buffer(client, context, 64);  // a table that is not empty
        std::uint64_t foreign = 0;
        E2E_EXPECT(read(pipe_fds[0], &foreign, sizeof foreign) == sizeof foreign, "no handle");
        const ExpectedRefusal unknown{-EINVAL, VACCEL_E_INVALID_ARGUMENT,
                                      VACCEL_D_UNKNOWN_HANDLE, VACCEL_LIMIT_NONE, foreign, 0};
        const float junk[16] = {};
        float out[16];
        expect_refusal("write to another session's buffer",
                       vaccel_buffer_write(client, foreign, 0, junk, sizeof junk), unknown);
        expect_refusal("read of another session's buffer",
                       vaccel_buffer_read(client, foreign, 0, out, sizeof out), unknown);
        expect_refusal("free of another session's buffer", vaccel_buffer_free(client, foreign),
                       unknown);
        vaccel_client_close(client);
        std::_Exit(0);
    }
    close(pipe_fds[0]);
    vaccel_client* client = open_client();
    std::uint64_t context = 0;
    E2E_CALL(vaccel_context_create(client, 0, &context));
    const std::uint64_t buffer = alloc_host_buffer(client, context, 64);
    float mine[16];
    for (int i = 0; i < 16; ++i) mine[i] = float(i) + 0.5f;
    E2E_CALL(vaccel_buffer_write(client, buffer, 0, mine, sizeof mine));
    E2E_EXPECT(write(pipe_fds[1], &buffer, sizeof buffer) == sizeof buffer, "pipe write");
    int status = 0;
    E2E_EXPECT(waitpid(other, &status, 0) == other, "waitpid: {}", std::strerror(errno));
    E2E_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0,
               "the other session's checks failed (status {:#x})", status);
    float back[16];
    E2E_CALL(vaccel_buffer_read(client, buffer, 0, back, sizeof back));
    E2E_EXPECT(std::memcmp(back, mine, sizeof mine) == 0, "the owner's buffer changed");
    E2E_CALL(vaccel_buffer_free(client, buffer));
    E2E_CALL(vaccel_context_destroy(client, context));
    vaccel_client_close(client);
    fmt::print("foreign-handle: the handle is unknown in the other session; the owner's "
               "buffer is intact\n");
    return 0;
}

int admin_denied_mode()
{
    constexpr std::uint32_t nobody = 65534;
    E2E_EXPECT(setgroups(0, nullptr) == 0 && setgid(nobody) == 0 && setuid(nobody) == 0,
               "dropping to uid/gid {}: {} (run as root)", nobody, std::strerror(errno));
    // An ordinary client is served...
    vaccel_client* client = open_client();
    std::uint32_t devices = 0;
    E2E_CALL(vaccel_device_count(client, &devices));
    E2E_EXPECT(devices >= 1, "{} devices", devices);
    vaccel_client_close(client);
    // ...but no admin command is, whatever its document.
    client = open_client();
    const std::pair<std::uint32_t, const char*> commands[] = {
        {VACCEL_ADMIN_DEVICES, nullptr},
        {VACCEL_ADMIN_SESSIONS, nullptr},
        {VACCEL_ADMIN_LIMITS_GET, nullptr},
        {VACCEL_ADMIN_LIMITS_SET, R"({"selector":{"uid":65534},"limits":{"contexts":64}})"},
        {VACCEL_ADMIN_LIMITS_RESET, R"({"selector":{"default":true}})"},
        {VACCEL_ADMIN_METRICS, nullptr},
    };
    for (const auto& [command, document] : commands) {
        char* response = nullptr;
        const int rc = vaccel_admin(client, command, document, &response, nullptr);
        expect_refusal(fmt::format("admin command {}", command), rc,
                       {-EACCES, VACCEL_E_PERMISSION_DENIED, VACCEL_D_NOT_ADMIN,
                        VACCEL_LIMIT_NONE, nobody, nobody});
        E2E_EXPECT(response == nullptr, "a refused admin command returned a document");
    }
    vaccel_client_close(client);
    fmt::print("admin-denied: uid {} is served as a client, refused every admin command\n",
               nobody);
    return 0;
}

}  // namespace vaccel::e2e
