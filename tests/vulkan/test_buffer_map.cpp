// test_buffer_map.cpp - BUFFER_MAP on the Vulkan device (lavapipe), through
// a Session: a Host buffer moves into a memfd on its first map with its
// bytes, the device then reads and writes those very pages (a RUN of an ADD
// over mapped inputs lands in a mapped output), a buffer bound by pending
// work is refused, and a Device buffer is refused with VACCEL_D_DOMAIN.
#include <sys/mman.h>
#include <unistd.h>

#include "vaccel/backend/vulkan.hpp"
#include "../engine/test_programs.hpp"
#include "../engine/engine_support.hpp"

using namespace vaccel;
using namespace vaccel::test;

namespace {

std::shared_ptr<engine::DeviceManager> lavapipe_devices()
{
    backend::VulkanDevices found = backend::open_vulkan_devices();
    if (found.devices.size() != 1) fail_msg("expected lavapipe alone: %s", found.unavailable.c_str());
    return std::make_shared<engine::DeviceManager>(std::move(found.devices));
}

std::uint64_t buffer_in(engine::Session& session, std::uint64_t context, std::uint32_t domain)
{
    vaccel_buffer_alloc args = buffer_request(context, 4096);
    args.domain = domain;
    assert_ok(call(session, VACCEL_OP_BUFFER_ALLOC, args));
    return args.buffer;
}

float* mapped(engine::Session& session, std::uint64_t buffer)
{
    auto mapping = session.buffer_mapping(buffer);
    if (!mapping)
        fail_msg("mapping refused: %s", describe(mapping.error()).c_str());
    assert_true(mapping->fd >= 0);
    assert_int_equal(mapping->bytes, 4096);
    // The client's view: the memfd, mapped as libvaccel maps it.
    void* view = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mapping->fd,
                      static_cast<off_t>(mapping->offset));
    assert_true(view != MAP_FAILED);
    close(mapping->fd);
    return static_cast<float*>(view);
}

void host_buffers_map_and_the_device_uses_the_same_pages(void**)
{
    engine::Session session(lavapipe_devices());
    const std::uint64_t context = make_context(session);
    const std::uint64_t a = buffer_in(session, context, VACCEL_DOMAIN_HOST);
    const std::uint64_t b = buffer_in(session, context, VACCEL_DOMAIN_HOST);
    const std::uint64_t c = buffer_in(session, context, VACCEL_DOMAIN_HOST);
    // Bytes written before the first map move with the buffer.
    std::vector<float> first(1024, 0.5f);
    vaccel_buffer_transfer write{};
    write.buffer = a;
    write.length = 4096;
    assert_ok(call(session, VACCEL_OP_BUFFER_WRITE, write, std::as_bytes(std::span(first))));
    float* pa = mapped(session, a);
    float* pb = mapped(session, b);
    float* pc = mapped(session, c);
    assert_true(pa[0] == 0.5f && pa[1023] == 0.5f);
    for (int i = 0; i < 1024; ++i) {
        pa[i] = static_cast<float>(i);
        pb[i] = 0.25f * static_cast<float>(i);
    }
    const std::uint64_t program = load_program(session, context, add_program(1024));
    vaccel_queue_create queue{};
    queue.context = context;
    assert_ok(call(session, VACCEL_OP_QUEUE_CREATE, queue));
    const vaccel_binding bindings[3] = {{0, VACCEL_ACCESS_READ, a, 0, 4096},
                                        {1, VACCEL_ACCESS_READ, b, 0, 4096},
                                        {2, VACCEL_ACCESS_WRITE, c, 0, 4096}};
    vaccel_run run{};
    run.queue = queue.queue;
    run.program = program;
    run.binding_count = 3;
    assert_ok(call(session, VACCEL_OP_RUN, run, std::as_bytes(std::span(bindings))));
    assert_int_equal(run.state, VACCEL_EVENT_COMPLETE);
    std::vector<float> read(1024);
    vaccel_buffer_transfer back{};
    back.buffer = c;
    back.length = 4096;
    assert_ok(call(session, VACCEL_OP_BUFFER_READ, back, {}, std::as_writable_bytes(std::span(read))));
    for (int i = 0; i < 1024; ++i) {
        const float expected = 1.25f * static_cast<float>(i);
        if (pc[i] != expected || read[i] != expected)
            fail_msg("element %d: mapping %g, read %g, expected %g", i, pc[i], read[i], expected);
    }
    munmap(pa, 4096);
    munmap(pb, 4096);
    munmap(pc, 4096);
}

void device_buffers_are_refused(void**)
{
    engine::Session session(lavapipe_devices());
    const std::uint64_t context = make_context(session);
    vaccel_buffer_alloc args = buffer_request(context, 4096);
    args.domain = VACCEL_DOMAIN_DEVICE;
    if (!call(session, VACCEL_OP_BUFFER_ALLOC, args))
        fail_msg("this Vulkan device offers no Device domain");
    vaccel_buffer_map map{};
    map.buffer = args.buffer;
    assert_refused(call(session, VACCEL_OP_BUFFER_MAP, map), Errc::incompatible, VACCEL_D_DOMAIN,
                   args.buffer, VACCEL_DOMAIN_DEVICE);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_buffers_map_and_the_device_uses_the_same_pages),
        cmocka_unit_test(device_buffers_are_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
