// test_error.cpp - names, errno mapping, status round trip and the sentences
// describe() builds for a person.
#include "test_support.hpp"

#include <cerrno>
#include <string>

#include "vaccel/common/handles.hpp"

using namespace vaccel;

namespace {

void error_name_names_every_code(void**)
{
    assert_string_equal(error_name(Errc::unsupported).data(), "Unsupported");
    assert_string_equal(error_name(Errc::incompatible).data(), "Incompatible");
    assert_string_equal(error_name(Errc::invalid_argument).data(), "InvalidArgument");
    assert_string_equal(error_name(Errc::out_of_bounds).data(), "OutOfBounds");
    assert_string_equal(error_name(Errc::out_of_memory).data(), "OutOfMemory");
    assert_string_equal(error_name(Errc::resource_limit).data(), "ResourceLimit");
    assert_string_equal(error_name(Errc::device_lost).data(), "DeviceLost");
    assert_string_equal(error_name(Errc::busy).data(), "Busy");
    assert_string_equal(error_name(Errc::permission_denied).data(), "PermissionDenied");
    assert_string_equal(error_name(Errc::deadline_expired).data(), "DeadlineExpired");
    assert_string_equal(error_name(Errc::external).data(), "External");
}

void error_errno_follows_the_uapi_mapping(void**)
{
    assert_int_equal(error_errno(Errc::ok), 0);
    assert_int_equal(error_errno(Errc::unsupported), -EOPNOTSUPP);
    assert_int_equal(error_errno(Errc::incompatible), -ENOEXEC);
    assert_int_equal(error_errno(Errc::invalid_argument), -EINVAL);
    assert_int_equal(error_errno(Errc::out_of_bounds), -ERANGE);
    assert_int_equal(error_errno(Errc::out_of_memory), -ENOMEM);
    assert_int_equal(error_errno(Errc::resource_limit), -EDQUOT);
    assert_int_equal(error_errno(Errc::device_lost), -ENODEV);
    assert_int_equal(error_errno(Errc::busy), -EBUSY);
    assert_int_equal(error_errno(Errc::permission_denied), -EACCES);
    assert_int_equal(error_errno(Errc::deadline_expired), -ETIME);
    assert_int_equal(error_errno(Errc::external), -EIO);
}

void error_meaning_is_nonempty_for_every_code(void**)
{
    for (std::uint32_t code = VACCEL_E_UNSUPPORTED; code < VACCEL_E_COUNT; ++code)
        assert_true(error_meaning(static_cast<Errc>(code)).size() > 10);
}

void limit_name_names_every_kind(void**)
{
    assert_string_equal(limit_name(VACCEL_LIMIT_CONTEXTS).data(), "contexts");
    assert_string_equal(limit_name(VACCEL_LIMIT_MEMORY_BYTES).data(), "memory bytes");
    assert_string_equal(limit_name(VACCEL_LIMIT_BUFFERS).data(), "buffers");
    assert_string_equal(limit_name(VACCEL_LIMIT_PROGRAMS).data(), "programs");
    assert_string_equal(limit_name(VACCEL_LIMIT_QUEUES).data(), "queues");
    assert_string_equal(limit_name(VACCEL_LIMIT_EVENTS).data(), "events");
    assert_string_equal(limit_name(VACCEL_LIMIT_BINDINGS).data(), "bindings");
    assert_string_equal(limit_name(VACCEL_LIMIT_BUFFER_BYTES).data(), "buffer bytes");
    assert_string_equal(limit_name(VACCEL_LIMIT_ARTIFACT_BYTES).data(), "artifact bytes");
    assert_string_equal(limit_name(VACCEL_LIMIT_HANDLES).data(), "handles");
    assert_string_equal(limit_name(VACCEL_LIMIT_KERNEL_ARGS).data(), "kernel arguments");
    assert_string_equal(limit_name(VACCEL_LIMIT_KERNEL_ARGS_BYTES).data(),
                        "kernel argument bytes");
    assert_string_equal(limit_name(99).data(), "unknown limit");
}

void status_round_trip_keeps_every_field(void**)
{
    Error error = Error::limit_hit(VACCEL_LIMIT_QUEUES, 8, 7);
    error.scope = VACCEL_SCOPE_MAKE(VACCEL_SCOPE_CGROUP, 2, 5);
    vaccel_status status = error.to_status();
    assert_int_equal(status.error, VACCEL_E_RESOURCE_LIMIT);
    assert_int_equal(status.detail, VACCEL_D_LIMIT);
    assert_int_equal(status.limit, VACCEL_LIMIT_QUEUES);
    assert_int_equal(status.scope, VACCEL_SCOPE_MAKE(VACCEL_SCOPE_CGROUP, 2, 5));
    assert_int_equal(status.arg0, 8);
    assert_int_equal(status.arg1, 7);
    Error back = Error::from_status(status);
    assert_int_equal(static_cast<int>(back.code), VACCEL_E_RESOURCE_LIMIT);
    assert_int_equal(back.detail, VACCEL_D_LIMIT);
    assert_int_equal(back.limit, VACCEL_LIMIT_QUEUES);
    assert_int_equal(back.scope, status.scope);
    assert_int_equal(back.arg0, 8);
    assert_int_equal(back.arg1, 7);
}

void tenant_refusal_names_the_tenant_its_total_use_and_sessions(void**)
{
    Error memory = Error::limit_hit(VACCEL_LIMIT_MEMORY_BYTES, 64ull << 20, 60ull << 20);
    memory.scope = VACCEL_SCOPE_MAKE(VACCEL_SCOPE_UID, 0, 3);
    memory.note = "uid 1000";
    assert_string_equal(describe(memory).c_str(),
                        "ResourceLimit: uid 1000 holds 60.0 MiB of its 64.0 MiB of memory on "
                        "device 0 across 3 sessions; free buffers there or raise the rule");
    Error queues = Error::limit_hit(VACCEL_LIMIT_QUEUES, 4, 4);
    queues.scope = VACCEL_SCOPE_MAKE(VACCEL_SCOPE_CGROUP, 1, 1);
    queues.note = "cgroup /ml.slice";
    assert_string_equal(describe(queues).c_str(),
                        "ResourceLimit: cgroup /ml.slice holds 4 of its 4 queues on device 1 "
                        "across 1 session; destroy queues there or raise the rule");
    // From the wire (no note): the scope kind and this process's own ids.
    Error wire = Error::from_status(queues.to_status());
    assert_string_equal(describe(wire).c_str(),
                        "ResourceLimit: this process's cgroup holds 4 of its 4 queues on device "
                        "1 across 1 session; destroy queues there or raise the rule");
    Error device = Error::limit_hit(VACCEL_LIMIT_CONTEXTS, 64, 64);
    device.scope = VACCEL_SCOPE_MAKE(VACCEL_SCOPE_DEVICE, 0, 0);
    assert_string_equal(describe(device).c_str(),
                        "ResourceLimit: device 0 has all its 64 contexts in use, by every tenant "
                        "together; use another device or wait for contexts to end");
}

void from_status_turns_unknown_error_into_external(void**)
{
    vaccel_status status{};
    status.error = 77;
    Error back = Error::from_status(status);
    assert_int_equal(static_cast<int>(back.code), VACCEL_E_EXTERNAL);
    assert_int_equal(back.arg1, 77);
}

void describe_limit_names_kind_value_use_and_remedy(void**)
{
    assert_string_equal(describe(Error::limit_hit(VACCEL_LIMIT_BUFFERS, 4, 4)).c_str(),
                        "ResourceLimit: buffers limit is 4 and 4 are in use; free a buffer or "
                        "raise the limit");
}

void describe_in_flight_names_buffer_and_submissions(void**)
{
    assert_string_equal(describe(Error::of(Errc::busy, VACCEL_D_IN_FLIGHT, 0x1a, 3)).c_str(),
                        "Busy: buffer 0x1a: 3 in-flight submissions use it; wait on their "
                        "events before writing");
}

void describe_tosa_operator_names_operator_and_dtype(void**)
{
    std::string text = describe(Error::of(Errc::unsupported, VACCEL_D_TOSA_OPERATOR, 4, 7));
    assert_contains(text,
                    "Unsupported: TOSA operator CONV3D on FP32 is not supported by this device");
}

void describe_tosa_dtype_names_dtype_and_operator(void**)
{
    std::string text = describe(Error::of(Errc::unsupported, VACCEL_D_TOSA_DTYPE, 11, 28));
    assert_contains(text, "FP8E4M3");
    assert_contains(text, "MUL");
}

void describe_tosa_version_names_the_version_found(void**)
{
    std::string text = describe(Error::of(Errc::unsupported, VACCEL_D_TOSA_VERSION, 0, 80));
    assert_contains(text, "TOSA version 0.80 is not supported");
}

void describe_range_names_offset_and_length(void**)
{
    std::string text = describe(Error::of(Errc::out_of_bounds, VACCEL_D_RANGE, 4096, 16));
    assert_contains(text, "OutOfBounds: 16 bytes at offset 4096 do not fit");
}

void describe_unknown_handle_names_the_handle(void**)
{
    std::string text =
        describe(Error::of(Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE, 0xdead0001));
    assert_contains(text, "handle 0xdead0001 is unknown in this session");
}

void describe_wrong_kind_names_the_kind_the_handle_has(void**)
{
    const std::uint64_t handle = handle_bits::compose(7, HandleKind::buffer, 0, 3);
    std::string text =
        describe(Error::of(Errc::invalid_argument, VACCEL_D_WRONG_HANDLE_KIND, handle));
    assert_contains(text, "(a buffer)");
}

void describe_binding_alias_names_both_bindings(void**)
{
    std::string text = describe(Error::of(Errc::incompatible, VACCEL_D_BINDING_ALIAS, 2, 0));
    assert_contains(text, "binding 2 uses the same buffer as binding 0");
}

void describe_no_device_names_index_and_count(void**)
{
    std::string text = describe(Error::of(Errc::invalid_argument, VACCEL_D_NO_DEVICE, 5, 2));
    assert_contains(text, "device index 5 does not exist (there are 2 devices)");
}

void describe_per_request_limit_says_asked(void**)
{
    std::string text = describe(Error::limit_hit(VACCEL_LIMIT_BINDINGS, 64, 65));
    assert_contains(text, "bindings limit is 64 and 65 were asked");
}

void describe_kernel_arg_tag_names_offset_and_byte(void**)
{
    assert_string_equal(
        describe(Error::of(Errc::invalid_argument, VACCEL_D_KERNEL_ARG_TAG, 5, 0xff)).c_str(),
        "InvalidArgument: byte 5 of the kernel arguments is 0xff, which is no argument tag "
        "(0x01 to 0x07); start every argument with its tag and give exactly its value bytes "
        "after it");
}

void describe_kernel_arg_truncated_names_tag_offset_and_missing_bytes(void**)
{
    std::string text =
        describe(Error::of(Errc::invalid_argument, VACCEL_D_KERNEL_ARG_TRUNCATED, 9, 3));
    assert_contains(text, "the kernel argument whose tag is at byte 9 lacks 3 of its value bytes");
}

void describe_kernel_arg_trailing_names_offset_and_count(void**)
{
    std::string text =
        describe(Error::of(Errc::invalid_argument, VACCEL_D_KERNEL_ARG_TRAILING, 14, 2));
    assert_contains(text, "end in 2 zero bytes from byte 14");
    assert_contains(text, "set argv_bytes to end at the last argument");
}

void describe_kernel_arg_pointer_names_record_and_slot(void**)
{
    std::string text =
        describe(Error::of(Errc::invalid_argument, VACCEL_D_KERNEL_ARG_POINTER, 2, 7));
    assert_contains(text, "kernel argument 2 points into slot 7, which no binding");
}

void describe_kernel_arg_limits(void**)
{
    assert_string_equal(describe(Error::limit_hit(VACCEL_LIMIT_KERNEL_ARGS_BYTES, 4096, 5000))
                            .c_str(),
                        "ResourceLimit: kernel argument bytes limit is 4096 and 5000 were "
                        "asked; pass fewer kernel arguments (a record is 5 or 9 bytes)");
    std::string text = describe(Error::limit_hit(VACCEL_LIMIT_KERNEL_ARGS, 128, 128));
    assert_contains(text, "kernel arguments limit is 128 and the argument buffer holds more");
    assert_contains(text, "pass fewer kernel arguments");
}

void describe_appends_the_note(void**)
{
    std::string text =
        describe(Error::of(Errc::external, VACCEL_D_NONE, 2, -4).with_note("vkQueueSubmit"));
    assert_contains(text, "External: a lower layer (domain 2)");
    assert_contains(text, "(vkQueueSubmit)");
}

void describe_unknown_detail_keeps_the_numbers(void**)
{
    std::string text = describe(Error::of(Errc::busy, 999, 5, 6));
    assert_contains(text, "detail 999, arg0 5, arg1 6");
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(error_name_names_every_code),
        cmocka_unit_test(error_errno_follows_the_uapi_mapping),
        cmocka_unit_test(error_meaning_is_nonempty_for_every_code),
        cmocka_unit_test(limit_name_names_every_kind),
        cmocka_unit_test(status_round_trip_keeps_every_field),
        cmocka_unit_test(tenant_refusal_names_the_tenant_its_total_use_and_sessions),
        cmocka_unit_test(from_status_turns_unknown_error_into_external),
        cmocka_unit_test(describe_limit_names_kind_value_use_and_remedy),
        cmocka_unit_test(describe_in_flight_names_buffer_and_submissions),
        cmocka_unit_test(describe_tosa_operator_names_operator_and_dtype),
        cmocka_unit_test(describe_tosa_dtype_names_dtype_and_operator),
        cmocka_unit_test(describe_tosa_version_names_the_version_found),
        cmocka_unit_test(describe_range_names_offset_and_length),
        cmocka_unit_test(describe_unknown_handle_names_the_handle),
        cmocka_unit_test(describe_wrong_kind_names_the_kind_the_handle_has),
        cmocka_unit_test(describe_binding_alias_names_both_bindings),
        cmocka_unit_test(describe_no_device_names_index_and_count),
        cmocka_unit_test(describe_per_request_limit_says_asked),
        cmocka_unit_test(describe_kernel_arg_tag_names_offset_and_byte),
        cmocka_unit_test(describe_kernel_arg_truncated_names_tag_offset_and_missing_bytes),
        cmocka_unit_test(describe_kernel_arg_trailing_names_offset_and_count),
        cmocka_unit_test(describe_kernel_arg_pointer_names_record_and_slot),
        cmocka_unit_test(describe_kernel_arg_limits),
        cmocka_unit_test(describe_appends_the_note),
        cmocka_unit_test(describe_unknown_detail_keeps_the_numbers),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
