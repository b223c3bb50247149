// test_c_api.cpp - the C API end to end on the embedded transport, and the
// sentences vaccel_last_error_message() gives.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

#include "test_programs.hpp"
#include "lib_support.hpp"

using namespace vaccel::test;

namespace {

// $VACCEL_TRANSPORT as ctest set it for this program ("embedded"), put back
// by the tests that change it.
void restore_transport()
{
    setenv("VACCEL_TRANSPORT", VACCEL_TRANSPORT_EMBEDDED, 1);
}

void full_flow_reads_back_the_exact_sum(void**)
{
    vaccel_client* client = nullptr;
    assert_call(vaccel_client_open(VACCEL_TRANSPORT_EMBEDDED, &client));
    assert_string_equal(vaccel_client_transport(client), "embedded");

    struct vaccel_get_version version = {};
    assert_call(vaccel_get_version(client, &version));
    assert_int_equal(version.major, VACCEL_ABI_MAJOR);
    assert_int_equal(version.minor, VACCEL_ABI_MINOR);
    assert_true(version.capabilities & VACCEL_CAP_TOSA);

    uint32_t count = 0;
    assert_call(vaccel_device_count(client, &count));
    assert_true(count >= 1);
    struct vaccel_device_info info = {};
    assert_call(vaccel_device_info(client, 0, &info));  // the device used below
    assert_true(info.formats & VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA));

    uint64_t context = 0;
    assert_call(vaccel_context_create(client, 0, &context));
    const uint64_t a = alloc_buffer(client, context, 16);
    const uint64_t b = alloc_buffer(client, context, 16);
    const uint64_t c = alloc_buffer(client, context, 16);
    const float in_a[4] = {0.5f, -1.0f, 2.25f, 1e6f};
    const float in_b[4] = {0.25f, 1.0f, -0.25f, 1.0f};
    assert_call(vaccel_buffer_write(client, a, 0, in_a, sizeof in_a));
    assert_call(vaccel_buffer_write(client, b, 0, in_b, sizeof in_b));

    const auto artifact = add_program(4);
    uint64_t program = 0;
    uint32_t inputs = 0, outputs = 0;
    assert_call(vaccel_program_load(client, context, VACCEL_FORMAT_TOSA, nullptr, artifact.data(),
                                    artifact.size(), &program, &inputs, &outputs));
    assert_int_equal(inputs, 2);
    assert_int_equal(outputs, 1);
    struct vaccel_program_slot slot = {};
    assert_call(vaccel_program_slot(client, program, 2, &slot));
    assert_int_equal(slot.role, VACCEL_SLOT_OUTPUT);
    assert_int_equal(slot.rank, 1);
    assert_int_equal(slot.shape[0], 4);
    assert_int_equal(slot.bytes, 16);
    assert_string_equal(slot.name, "c");

    uint64_t queue = 0;
    assert_call(vaccel_queue_create(client, context, &queue));
    const struct vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, a, 0, 16},
        {1, VACCEL_ACCESS_READ, b, 0, 16},
        {2, VACCEL_ACCESS_WRITE, c, 0, 16},
    };
    uint64_t event = 0;
    assert_call(vaccel_submit(client, queue, program, bindings, 3, 0, &event));
    uint32_t first = 99;
    assert_call(vaccel_event_wait(client, &event, 1, VACCEL_WAIT_ALL,
                                  vaccel_deadline_after_ns(60ull * 1000000000ull), &first));
    assert_int_equal(first, 0);
    uint32_t state = 0;
    struct vaccel_status failure = {};
    assert_call(vaccel_event_poll(client, event, &state, &failure));
    assert_int_equal(state, VACCEL_EVENT_COMPLETE);
    assert_int_equal(failure.error, VACCEL_OK);

    float out[4] = {};
    assert_call(vaccel_buffer_read(client, c, 0, out, sizeof out));
    const float expected[4] = {0.75f, 0.0f, 2.0f, 1000001.0f};
    assert_memory_equal(out, expected, sizeof out);
    assert_int_equal(vaccel_last_status()->error, VACCEL_OK);
    assert_string_equal(vaccel_last_error_message(), "");

    assert_call(vaccel_event_destroy(client, event));
    assert_call(vaccel_queue_destroy(client, queue));
    assert_call(vaccel_program_unload(client, program));
    assert_call(vaccel_buffer_free(client, a));
    assert_call(vaccel_buffer_free(client, b));
    assert_call(vaccel_buffer_free(client, c));
    struct vaccel_context_limits limits = {};
    assert_call(vaccel_context_limits(client, context, &limits));
    assert_int_equal(limits.used_buffers, 0);
    assert_int_equal(limits.used_memory_bytes, 0);
    assert_call(vaccel_context_destroy(client, context));
    vaccel_client_close(client);
}

void busy_context_message_names_its_children(void**)
{
    vaccel_client* client = nullptr;
    assert_call(vaccel_client_open(nullptr, &client));
    uint64_t context = 0;
    assert_call(vaccel_context_create(client, 0, &context));
    alloc_buffer(client, context, 8);
    alloc_buffer(client, context, 8);

    assert_int_equal(vaccel_context_destroy(client, context), -EBUSY);
    const struct vaccel_status* status = vaccel_last_status();
    assert_int_equal(status->error, VACCEL_E_BUSY);
    assert_int_equal(status->detail, VACCEL_D_IN_USE);
    assert_int_equal(status->arg0, 2);
    const std::string message = vaccel_last_error_message();
    if (message.find("Busy") == std::string::npos || message.find('2') == std::string::npos)
        fail_msg("message does not name the error and the count: \"%s\"", message.c_str());
    vaccel_client_close(client);  // releases the buffers and the context
}

void resource_limit_message_names_the_limit_and_the_numbers(void**)
{
    vaccel_client* client = nullptr;
    assert_call(vaccel_client_open(nullptr, &client));
    uint64_t context = 0;
    assert_call(vaccel_context_create(client, 0, &context));
    struct vaccel_context_limits limits = {};
    assert_call(vaccel_context_limits(client, context, &limits));

    struct vaccel_buffer_alloc req = {};
    req.context = context;
    req.bytes = limits.limits.max_buffer_bytes + 1;
    req.domain = VACCEL_DOMAIN_HOST;
    req.usage = VACCEL_USAGE_ALL;
    req.access = VACCEL_ACCESS_RW;
    assert_int_equal(vaccel_buffer_alloc(client, &req), -EDQUOT);
    assert_int_equal(req.status.error, VACCEL_E_RESOURCE_LIMIT);
    assert_int_equal(req.status.limit, VACCEL_LIMIT_BUFFER_BYTES);
    assert_int_equal(vaccel_last_status()->limit, VACCEL_LIMIT_BUFFER_BYTES);
    const std::string message = vaccel_last_error_message();
    const std::string limit = std::to_string(limits.limits.max_buffer_bytes);
    if (message.find("ResourceLimit") == std::string::npos ||
        message.find(limit) == std::string::npos)
        fail_msg("message does not name the limit %s: \"%s\"", limit.c_str(), message.c_str());
    vaccel_client_close(client);
}

void status_message_describes_any_status_and_truncates_safely(void**)
{
    struct vaccel_status status = {};
    status.error = VACCEL_E_RESOURCE_LIMIT;
    status.detail = VACCEL_D_LIMIT;
    status.limit = VACCEL_LIMIT_EVENTS;
    status.arg0 = 64;
    status.arg1 = 64;
    char whole[512];
    const int length = vaccel_status_message(&status, whole, sizeof whole);
    assert_int_equal(length, static_cast<int>(std::strlen(whole)));
    const std::string message = whole;
    if (message.find("ResourceLimit") == std::string::npos ||
        message.find("64") == std::string::npos)
        fail_msg("status message does not name the limit: \"%s\"", whole);

    char small[8];
    assert_int_equal(vaccel_status_message(&status, small, sizeof small), length);
    assert_int_equal(std::strlen(small), sizeof small - 1);
    assert_memory_equal(small, whole, sizeof small - 1);

    struct vaccel_status ok = {};
    assert_int_equal(vaccel_status_message(&ok, whole, sizeof whole), 0);
    assert_string_equal(whole, "");
}

// A socket path nobody listens on (its directory does not exist).
constexpr const char* no_daemon_socket = "/nonexistent-vaccel-test-dir/vacceld.sock";

// A device node path that does not exist.
constexpr const char* no_kernel_node = "/nonexistent-vaccel-test-dir/vaccel";

void kernel_transport_without_the_node_is_device_lost_naming_it(void**)
{
    setenv("VACCEL_DEVICE", no_kernel_node, 1);
    vaccel_client* client = reinterpret_cast<vaccel_client*>(0x1);
    assert_int_equal(vaccel_client_open(VACCEL_TRANSPORT_KERNEL, &client), -ENODEV);
    assert_null(client);
    assert_int_equal(vaccel_last_status()->error, VACCEL_E_DEVICE_LOST);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_PEER_GONE);
    const std::string message = vaccel_last_error_message();
    if (message.find(std::string("cannot open ") + no_kernel_node) == std::string::npos ||
        message.find("insmod vaccel.ko") == std::string::npos)
        fail_msg("unexpected message: \"%s\"", message.c_str());

    setenv("VACCEL_TRANSPORT", "kernel", 1);
    assert_int_equal(vaccel_client_open(nullptr, &client), -ENODEV);
    restore_transport();
    unsetenv("VACCEL_DEVICE");
}

// The CPU device's descriptor over the embedded transport, and the two
// refusals (no such descriptor, no such device) with their sentences.
void device_tosa_answers_the_cpu_descriptor_and_refuses_past_it(void**)
{
    vaccel_client* client = nullptr;
    assert_call(vaccel_client_open(VACCEL_TRANSPORT_EMBEDDED, &client));
    struct vaccel_get_version version = {};
    assert_call(vaccel_get_version(client, &version));
    assert_true(version.capabilities & VACCEL_CAP_TOSA_DESCRIPTORS);
    uint32_t count = 0;
    assert_call(vaccel_device_count(client, &count));
    uint32_t cpu = count;
    for (uint32_t i = 0; i < count; ++i) {
        struct vaccel_device_info info = {};
        assert_call(vaccel_device_info(client, i, &info));
        if (std::strcmp(info.driver, "vaccel-cpu") == 0) cpu = i;
    }
    assert_true(cpu < count);

    struct vaccel_tosa_descriptor d = {};
    assert_call(vaccel_device_tosa(client, cpu, 0, &d));
    assert_int_equal(d.descriptor_count, 1);
    assert_int_equal(d.target.major, 1);
    assert_int_equal(d.target.level, VACCEL_TOSA_LEVEL_8K);
    // ADD is Op 15, FP32 is DType 7, FP8E4M3 DType 11 (TOSA 1.0 has no FP8
    // ADD); SHAPE (DType 10) is no tensor to a descriptor.
    assert_int_equal(d.operators[15].present, 1);
    assert_int_equal(d.operators[15].dtypes & (1u << 7), 1u << 7);
    assert_int_equal(d.operators[15].dtypes & (1u << 11), 0);
    assert_int_equal(d.dtypes[10].roles, 0);

    assert_int_equal(vaccel_device_tosa(client, cpu, 1, &d), -EINVAL);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_NO_TOSA_DESCRIPTOR);
    assert_int_equal(vaccel_last_status()->arg0, 1);
    assert_int_equal(vaccel_last_status()->arg1, 1);
    const std::string message = vaccel_last_error_message();
    assert_true(message.find("TOSA descriptor index 1 does not exist (the device has 1); pick "
                             "an index below 1") != std::string::npos);
    assert_int_equal(vaccel_device_tosa(client, count, 0, &d), -EINVAL);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_NO_DEVICE);
    assert_int_equal(vaccel_last_status()->arg0, count);
    assert_int_equal(vaccel_device_tosa(client, cpu, 0, nullptr), -EINVAL);
    vaccel_client_close(client);
}

// /dev/null opens but knows no vaccel ioctl: the kernel's -ENOTTY comes back
// as it is, with a status made from it (the kernel wrote none).
void kernel_transport_refusal_without_status_gets_one_from_the_errno(void**)
{
    setenv("VACCEL_DEVICE", "/dev/null", 1);
    vaccel_client* client = nullptr;
    assert_call(vaccel_client_open(VACCEL_TRANSPORT_KERNEL, &client));
    assert_string_equal(vaccel_client_transport(client), "kernel");
    uint32_t count = 7;
    assert_int_equal(vaccel_device_count(client, &count), -ENOTTY);
    assert_int_equal(count, 7);
    assert_int_equal(vaccel_last_status()->error, VACCEL_E_UNSUPPORTED);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_UNKNOWN_OPCODE);
    assert_int_equal(vaccel_last_status()->arg0, VACCEL_OP_DEVICE_COUNT);
    vaccel_client_close(client);
    unsetenv("VACCEL_DEVICE");
}

void unknown_transport_is_refused_by_name(void**)
{
    vaccel_client* client = reinterpret_cast<vaccel_client*>(0x1);
    assert_int_equal(vaccel_client_open("carrier-pigeon", &client), -EPROTONOSUPPORT);
    assert_null(client);
    const std::string message = vaccel_last_error_message();
    if (message.find("transport 'carrier-pigeon' is unknown") == std::string::npos)
        fail_msg("unexpected message: \"%s\"", message.c_str());
}

void socket_transport_without_a_daemon_is_device_lost_naming_the_path(void**)
{
    setenv("VACCEL_SOCKET", no_daemon_socket, 1);
    vaccel_client* client = reinterpret_cast<vaccel_client*>(0x1);
    assert_int_equal(vaccel_client_open(VACCEL_TRANSPORT_SOCKET, &client), -ENODEV);
    assert_null(client);
    assert_int_equal(vaccel_last_status()->error, VACCEL_E_DEVICE_LOST);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_PEER_GONE);
    const std::string message = vaccel_last_error_message();
    if (message.find(std::string("no daemon accepts connections at ") + no_daemon_socket) ==
            std::string::npos ||
        message.find("No such file or directory") == std::string::npos)
        fail_msg("message does not name the path and the reason: \"%s\"", message.c_str());

    // Forced through the environment: the same refusal, never embedded.
    setenv("VACCEL_TRANSPORT", "socket", 1);
    assert_int_equal(vaccel_client_open(nullptr, &client), -ENODEV);
    restore_transport();
    unsetenv("VACCEL_SOCKET");
}

// The last refusal's sentence holds `wanted`.
void said(const std::string& wanted)
{
    const std::string message = vaccel_last_error_message();
    if (message.find(wanted) == std::string::npos)
        fail_msg("the refusal \"%s\" does not say \"%s\"", message.c_str(), wanted.c_str());
}

// A daemon named explicitly ($VACCEL_SOCKET, $VACCEL_DEVICE, a path given to
// vaccel_client_open_at) is never replaced by embedded: the automatic choice
// (the node, then the socket) is refused as the named socket is, so a
// daemon's limits cannot be bypassed unnoticed.
void an_explicit_endpoint_is_never_replaced_by_embedded(void**)
{
    setenv("VACCEL_TRANSPORT", "", 1);  // empty: the automatic choice
    // Both named, neither there: the node was tried, then the socket.
    setenv("VACCEL_DEVICE", no_kernel_node, 1);
    setenv("VACCEL_SOCKET", no_daemon_socket, 1);
    vaccel_client* client = reinterpret_cast<vaccel_client*>(0x1);
    assert_int_equal(vaccel_client_open(nullptr, &client), -ENODEV);
    assert_null(client);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_PEER_GONE);
    said(std::string("no daemon accepts connections at ") + no_daemon_socket);
    // A socket path given, and the node named: the same.
    unsetenv("VACCEL_SOCKET");
    assert_int_equal(vaccel_client_open_at(nullptr, no_daemon_socket, &client), -ENODEV);
    said(std::string("no daemon accepts connections at ") + no_daemon_socket);
    // Only the node named: its refusal, where no daemon listens at the
    // default socket either.
    if (access(VACCEL_SOCKET_DEFAULT, F_OK) != 0) {
        assert_int_equal(vaccel_client_open(nullptr, &client), -ENODEV);
        said(std::string("cannot open ") + no_kernel_node);
    }
    unsetenv("VACCEL_DEVICE");
    restore_transport();
}

// With no endpoint named, the automatic choice runs in process where no
// daemon serves the default endpoints (the CI machine: neither exists).
void the_implicit_choice_without_a_daemon_is_embedded(void**)
{
    unsetenv("VACCEL_SOCKET");
    unsetenv("VACCEL_DEVICE");
    const bool defaults_exist =
        access(VACCEL_SOCKET_DEFAULT, F_OK) == 0 || access(VACCEL_DEVICE_DEFAULT, F_OK) == 0;
    for (const char* automatic : {"", static_cast<const char*>(nullptr)}) {
        if (automatic != nullptr)
            setenv("VACCEL_TRANSPORT", automatic, 1);  // empty: the automatic choice too
        else
            unsetenv("VACCEL_TRANSPORT");
        vaccel_client* client = nullptr;
        assert_call(vaccel_client_open(nullptr, &client));
        if (!defaults_exist)
            assert_string_equal(vaccel_client_transport(client), "embedded");
        else
            print_message("a daemon's default endpoint exists here: the automatic choice took "
                          "'%s'\n",
                          vaccel_client_transport(client));
        vaccel_client_close(client);
    }
    restore_transport();
}

void admin_over_embedded_is_refused_saying_it_needs_the_daemon(void**)
{
    vaccel_client* client = nullptr;
    assert_call(vaccel_client_open(VACCEL_TRANSPORT_EMBEDDED, &client));
    char* response = reinterpret_cast<char*>(0x1);
    size_t bytes = 7;
    assert_int_equal(vaccel_admin(client, VACCEL_ADMIN_SESSIONS, nullptr, &response, &bytes),
                     -EOPNOTSUPP);
    assert_null(response);
    assert_int_equal(bytes, 0);
    assert_int_equal(vaccel_last_status()->error, VACCEL_E_UNSUPPORTED);
    const std::string message = vaccel_last_error_message();
    if (message.find("needs the daemon") == std::string::npos ||
        message.find("'embedded'") == std::string::npos)
        fail_msg("message does not say admin needs the daemon: \"%s\"", message.c_str());
    vaccel_free(nullptr);  // NULL is ignored
    vaccel_client_close(client);
}

void handle_of_another_client_is_unknown(void**)
{
    vaccel_client* first = nullptr;
    vaccel_client* second = nullptr;
    assert_call(vaccel_client_open(nullptr, &first));
    assert_call(vaccel_client_open(nullptr, &second));
    uint64_t context = 0;
    assert_call(vaccel_context_create(first, 0, &context));
    assert_int_equal(vaccel_context_destroy(second, context), -EINVAL);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_UNKNOWN_HANDLE);
    assert_int_equal(vaccel_last_status()->arg0, context);
    vaccel_client_close(second);
    vaccel_client_close(first);
}

void strerror_and_error_name_cover_errno_and_codes(void**)
{
    assert_string_equal(vaccel_error_name(VACCEL_E_RESOURCE_LIMIT), "ResourceLimit");
    assert_string_equal(vaccel_error_name(VACCEL_E_COUNT), "Unknown");
    assert_true(std::strncmp(vaccel_strerror(-EBUSY), "Busy: ", 6) == 0);
    assert_true(std::strncmp(vaccel_strerror(VACCEL_E_DEADLINE_EXPIRED), "DeadlineExpired: ", 17) == 0);
    assert_string_equal(vaccel_strerror(-EPROTONOSUPPORT), std::strerror(EPROTONOSUPPORT));
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_flow_reads_back_the_exact_sum),
        cmocka_unit_test(device_tosa_answers_the_cpu_descriptor_and_refuses_past_it),
        cmocka_unit_test(busy_context_message_names_its_children),
        cmocka_unit_test(resource_limit_message_names_the_limit_and_the_numbers),
        cmocka_unit_test(status_message_describes_any_status_and_truncates_safely),
        cmocka_unit_test(kernel_transport_without_the_node_is_device_lost_naming_it),
        cmocka_unit_test(kernel_transport_refusal_without_status_gets_one_from_the_errno),
        cmocka_unit_test(unknown_transport_is_refused_by_name),
        cmocka_unit_test(socket_transport_without_a_daemon_is_device_lost_naming_the_path),
        cmocka_unit_test(an_explicit_endpoint_is_never_replaced_by_embedded),
        cmocka_unit_test(the_implicit_choice_without_a_daemon_is_embedded),
        cmocka_unit_test(admin_over_embedded_is_refused_saying_it_needs_the_daemon),
        cmocka_unit_test(handle_of_another_client_is_unknown),
        cmocka_unit_test(strerror_and_error_name_cover_errno_and_codes),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
