// test_host_protocol.cpp - the daemon's side of vaccel-cuda-host without a
// GPU: message bodies round-trip and a short packet is caught; a host is
// started, refuses a device it cannot find with the reason, and is reaped;
// a host program that cannot run is a clear refusal. (With a GPU,
// cuda.isolation runs contexts in real hosts.)
#include <sys/wait.h>

#include <memory>
#include <string>

#include "host_protocol.hpp"
#include "host_proxy.hpp"
#include "vaccel/backend/cuda.hpp"
#include "cmocka.hpp"

namespace {

using namespace vaccel;
using namespace vaccel::backend;
using namespace vaccel::backend::cuda;

void bodies_round_trip_and_short_packets_are_caught(void**)
{
    host::Writer w(host::Op::submit, 42);
    const Error e = Error::of(Errc::busy, VACCEL_D_IN_FLIGHT, 7, 9).with_note("in flight");
    const std::vector<std::byte> blob{std::byte{1}, std::byte{2}, std::byte{3}};
    w.put(std::uint64_t{0x1122334455667788ull}).text("saxpy").error(e).blob(blob).put(std::uint32_t{5});
    host::Reader r(w.bytes());
    const auto header = r.get<host::Header>();
    assert_int_equal(static_cast<int>(header.op), static_cast<int>(host::Op::submit));
    assert_int_equal(header.id, 42);
    assert_true(r.get<std::uint64_t>() == 0x1122334455667788ull);
    assert_string_equal(r.text().c_str(), "saxpy");
    const Error back = r.error();
    assert_int_equal(static_cast<int>(back.code), static_cast<int>(Errc::busy));
    assert_int_equal(back.detail, VACCEL_D_IN_FLIGHT);
    assert_int_equal(back.arg0, 7);
    assert_int_equal(back.arg1, 9);
    assert_string_equal(back.note.c_str(), "in flight");
    assert_true(r.blob() == blob);
    assert_int_equal(r.get<std::uint32_t>(), 5);
    assert_true(r.ok());
    (void)r.get<std::uint8_t>();  // past the end
    assert_false(r.ok());
    // A text whose length runs past the packet.
    host::Writer lying(host::Op::reply, 1);
    lying.put(std::uint32_t{1000});
    host::Reader short_read(lying.bytes());
    (void)short_read.get<host::Header>();
    assert_true(short_read.text().empty());
    assert_false(short_read.ok());
}

std::unique_ptr<Backend> proxy_of(const std::filesystem::path& program)
{
    auto core = std::make_shared<DeviceCore>();
    std::strcpy(core->info.name, "no such GPU");
    core->info.limits.max_contexts = 4;
    core->info.uuid[0] = 0xab;  // no device has this UUID
    return open_host_proxy(std::move(core), program);
}

void a_host_refuses_a_device_it_cannot_find(void**)
{
    auto device = proxy_of(VACCEL_CUDA_HOST_PROGRAM);
    auto context = device->create_context();
    assert_false(context.has_value());
    assert_int_equal(static_cast<int>(context.error().code), static_cast<int>(Errc::device_lost));
    assert_true(context.error().note.find("no device with UUID GPU-ab000000-0000-0000-0000-"
                                          "000000000000") != std::string::npos);
    assert_int_equal(device->live().contexts, 0);
    assert_int_equal(waitpid(-1, nullptr, WNOHANG), -1);  // reaped: no child left
}

void a_host_that_cannot_run_is_refused(void**)
{
    auto device = proxy_of("/nonexistent/vaccel-cuda-host");
    auto context = device->create_context();
    assert_false(context.has_value());
    assert_true(context.error().note.find("ended before it started") != std::string::npos);
    assert_int_equal(waitpid(-1, nullptr, WNOHANG), -1);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bodies_round_trip_and_short_packets_are_caught),
        cmocka_unit_test(a_host_refuses_a_device_it_cannot_find),
        cmocka_unit_test(a_host_that_cannot_run_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
