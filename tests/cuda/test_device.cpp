// test_device.cpp - a CUDA device through the Backend contract: identity,
// the three memory domains with exact bytes, limits refused before any
// driver call, the in-flight rules, host gates, and device loss by fault
// injection.
#include <algorithm>

#include "cuda_test_support.hpp"

namespace {

using namespace cuda_test;

void identity_is_the_drivers(void**)
{
    auto backend = cuda_device();
    const vaccel_device_info& info = backend->device_info();
    assert_true(std::any_of(std::begin(info.uuid), std::end(info.uuid),
                            [](std::uint8_t b) { return b != 0; }));
    assert_int_equal(info.pci_valid, 1);
    assert_true(std::strlen(info.name) > 0);
    assert_true(std::string(info.driver).starts_with("vaccel-cuda CUDA "));
    assert_true(info.memory_bytes > (std::uint64_t{1} << 30));
    assert_int_equal(info.memory_caps & VACCEL_MEM_DEVICE_LOCAL, VACCEL_MEM_DEVICE_LOCAL);
    assert_int_equal(info.memory_caps & VACCEL_MEM_HOST_VISIBLE, VACCEL_MEM_HOST_VISIBLE);
    assert_int_equal(info.tosa_target_count, 1);
    assert_int_equal(backend->tosa_descriptors().size(), 1);
    // UUID as nvidia-smi prints it, for the record.
    std::printf("cuda:0 \"%s\" GPU-", info.name);
    for (int i = 0; i < 16; ++i)
        std::printf("%02x%s", info.uuid[i], i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
    std::printf(" PCI %04x:%02x:%02x.%x, %s\n", info.pci_domain, info.pci_bus, info.pci_device,
                info.pci_function, info.driver);
}

// Every domain: starts zeroed, takes and gives back exact bytes at an
// offset, and a kernel reads what the host wrote and writes what it reads.
void every_memory_domain_holds_exact_bytes(void**)
{
    Rig gpu = cuda_rig();
    auto p = must_load_kernels(gpu);
    for (std::uint32_t domain : {VACCEL_DOMAIN_DEVICE, VACCEL_DOMAIN_HOST, VACCEL_DOMAIN_SHARED}) {
        if ((domain == VACCEL_DOMAIN_SHARED &&
             (gpu.backend->device_info().memory_caps & VACCEL_MEM_SHARED) == 0))
            continue;
        BufferDesc desc;
        desc.bytes = 1000;
        desc.domain = domain;
        BufferInfo info;
        auto b = gpu.backend->allocate_buffer(*gpu.context, desc, info);
        assert_ok(b);
        assert_int_equal(info.allocation_bytes, 1024);
        assert_true(info.measured_alignment >= 256);
        assert_int_equal(info.properties & VACCEL_PROP_DIRECT_BINDING, VACCEL_PROP_DIRECT_BINDING);
        assert_int_equal((info.properties & VACCEL_PROP_HOST_VISIBLE) != 0,
                         domain != VACCEL_DOMAIN_DEVICE);
        std::vector<std::uint8_t> zeros(1000, 0xff);
        assert_ok(gpu.backend->read_buffer(**b, 0, std::as_writable_bytes(std::span(zeros))));
        assert_true(std::all_of(zeros.begin(), zeros.end(), [](std::uint8_t v) { return v == 0; }));
        std::vector<std::uint8_t> pattern(300);
        for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<std::uint8_t>(i * 7 + domain);
        assert_ok(gpu.backend->write_buffer(**b, 513, std::as_bytes(std::span(pattern))));
        std::vector<std::uint8_t> back(300);
        assert_ok(gpu.backend->read_buffer(**b, 513, std::as_writable_bytes(std::span(back))));
        assert_memory_equal(back.data(), pattern.data(), 300);
        // The kernel writes words 0..63 = 3 + i through the domain's address.
        run(gpu, *p, "fill64", {Arg::u32(3), Arg::u64(0), Arg::u32(64), Arg::ptr(0, 256)},
            {{0, VACCEL_ACCESS_WRITE, b->get(), 0, 256}}, dims(1));
        std::vector<std::uint32_t> words(64);
        assert_ok(gpu.backend->read_buffer(**b, 0, std::as_writable_bytes(std::span(words))));
        for (std::uint32_t i = 0; i < 64; ++i) assert_int_equal(words[i], 3 + i);
        assert_ok(gpu.backend->free_buffer(*b));
    }
    gpu.finish(p);
}

void limits_are_refused_before_the_driver(void**)
{
    Rig gpu = cuda_rig();
    const auto& limits = gpu.backend->device_info().limits;
    BufferDesc desc;
    desc.bytes = limits.max_memory_bytes + 1;
    BufferInfo info;
    // Past the device's memory: the buffer rules (max_buffer_bytes).
    auto refused = gpu.backend->allocate_buffer(*gpu.context, desc, info);
    assert_false(refused.has_value());
    assert_int_equal(gpu.backend->live().buffers, 0);
    // A context cannot be destroyed while it owns a buffer.
    auto b = gpu.buffer(64);
    // (The rig's queue is the other child.)
    assert_refused(gpu.backend->destroy_context(gpu.context), Errc::busy, VACCEL_D_IN_USE, 2, 0);
    assert_ok(gpu.backend->free_buffer(b));
    gpu.finish();
}

// A buffer bound by a running launch cannot be freed, written or read, nor
// bound for writing by another; once done it can.
void in_flight_buffers_are_protected(void**)
{
    Rig gpu = cuda_rig();
    auto p = must_load_kernels(gpu);
    auto out = gpu.buffer(256 * 4);
    auto running = launch(gpu, *p, "spin_then_write",
                          {Arg::u64(200'000'000ull), Arg::ptr(0, 1024), Arg::u32(256)},
                          {{0, VACCEL_ACCESS_WRITE, out.get(), 0, 1024}}, dims(1, 256));
    assert_ok(running);
    assert_refused(gpu.backend->free_buffer(out), Errc::busy, VACCEL_D_IN_FLIGHT,
                   out->identity(), 1);
    std::vector<std::byte> bytes(16);
    assert_refused(gpu.backend->write_buffer(*out, 0, bytes), Errc::busy, VACCEL_D_IN_FLIGHT,
                   out->identity(), 1);
    assert_refused(launch(gpu, *p, "fill64",
                          {Arg::u32(0), Arg::u64(0), Arg::u32(1), Arg::ptr(0, 1024)},
                          {{0, VACCEL_ACCESS_WRITE, out.get(), 0, 1024}}, dims(1)),
                   Errc::busy, VACCEL_D_IN_FLIGHT, out->identity(), 1);
    assert_refused(gpu.backend->unload_program(p), Errc::busy, VACCEL_D_IN_USE, 1, 0);
    assert_int_equal(static_cast<int>(gpu.wait(*running->event).state),
                     static_cast<int>(EventState::complete));
    assert_ok(gpu.backend->destroy_event(running->event));
    const auto words = gpu.read(*out, 256);
    std::uint32_t last = 0;
    std::memcpy(&last, &words[255], 4);
    assert_int_equal(last, 256);
    assert_ok(gpu.backend->free_buffer(out));
    gpu.finish(p);
}

Result<Submitted> submit_after(Rig& rig, Program& program, const std::vector<Binding>& bindings,
                               Gate* gate, std::uint64_t value)
{
    SubmitDesc desc;
    desc.queue = rig.queue.get();
    desc.program = &program;
    desc.bindings = bindings;
    desc.after = gate;
    desc.after_value = value;
    desc.sink = std::make_shared<CallbackSink>();
    return rig.backend->submit(desc);
}

// SUBMIT_AFTER is held until the raise; destroying the gate cancels what
// still waits.
void gates_hold_and_cancel(void**)
{
    Rig gpu = cuda_rig();
    auto p = gpu.must_load(doubling(70));
    std::vector<float> x(70);
    for (int i = 0; i < 70; ++i) x[i] = static_cast<float>(i) - 20.5f;
    auto in = gpu.buffer_with(x), out = gpu.buffer(70 * 4);
    auto g = gpu.backend->create_gate(*gpu.context);
    assert_ok(g);
    const auto bindings = gpu.bind(*p, {in.get(), out.get()});
    auto held = submit_after(gpu, *p, bindings, g->get(), 2);
    assert_ok(held);
    usleep(20000);
    assert_int_equal(static_cast<int>(gpu.backend->poll(*held->event).state),
                     static_cast<int>(EventState::pending));
    assert_ok(gpu.backend->raise_gate(**g, 1));
    usleep(20000);
    assert_int_equal(static_cast<int>(gpu.backend->poll(*held->event).state),
                     static_cast<int>(EventState::pending));
    assert_ok(gpu.backend->raise_gate(**g, 2));
    assert_int_equal(static_cast<int>(gpu.wait(*held->event).state),
                     static_cast<int>(EventState::complete));
    std::vector<float> want(70);
    for (int i = 0; i < 70; ++i) want[i] = 2 * x[i];
    assert_exactly(gpu.read(*out, 70), want);
    assert_ok(gpu.backend->destroy_event(held->event));
    auto cancelled = submit_after(gpu, *p, bindings, g->get(), 5);
    assert_ok(cancelled);
    assert_ok(gpu.backend->destroy_gate(*g));
    const EventStatus s = gpu.backend->poll(*cancelled->event);
    assert_int_equal(static_cast<int>(s.state), static_cast<int>(EventState::cancelled));
    assert_int_equal(s.failure.detail, VACCEL_D_GATE_DESTROYED);
    assert_int_equal(s.failure.arg1, 5);
    assert_ok(gpu.backend->destroy_event(cancelled->event));
    assert_ok(gpu.backend->free_buffer(in));
    assert_ok(gpu.backend->free_buffer(out));
    gpu.finish(p);
}

// inject_loss_after = 1: the second submission is accepted indeterminately
// as the device is lost; everything after is refused.
void an_injected_loss_loses_the_device(void**)
{
    CudaOptions options;  // injection runs the device in this process
    options.inject_loss_after = 1;
    Rig gpu = cuda_rig(options);
    auto p = gpu.must_load(doubling(70));
    auto in = gpu.buffer(70 * 4), out = gpu.buffer(70 * 4);
    const auto bindings = gpu.bind(*p, {in.get(), out.get()});
    auto first = submit_after(gpu, *p, bindings, nullptr, 0);
    assert_ok(first);
    assert_int_equal(static_cast<int>(gpu.wait(*first->event).state),
                     static_cast<int>(EventState::complete));
    assert_ok(gpu.backend->destroy_event(first->event));
    auto second = submit_after(gpu, *p, bindings, nullptr, 0);
    assert_ok(second);
    assert_true(second->indeterminate.has_value());
    assert_int_equal(static_cast<int>(second->indeterminate->code),
                     static_cast<int>(Errc::device_lost));
    assert_int_equal(static_cast<int>(gpu.backend->poll(*second->event).state),
                     static_cast<int>(EventState::failed));
    assert_int_equal(static_cast<int>(gpu.backend->state()), static_cast<int>(DeviceState::lost));
    assert_refused(submit_after(gpu, *p, bindings, nullptr, 0), Errc::device_lost,
                   VACCEL_D_DEVICE_STATE, 0, 0);
    assert_ok(gpu.backend->destroy_event(second->event));
    assert_ok(gpu.backend->free_buffer(in));
    assert_ok(gpu.backend->free_buffer(out));
    gpu.finish(p);
}

}  // namespace

int main()
{
    cuda_test::require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(identity_is_the_drivers),
        cmocka_unit_test(every_memory_domain_holds_exact_bytes),
        cmocka_unit_test(limits_are_refused_before_the_driver),
        cmocka_unit_test(in_flight_buffers_are_protected),
        cmocka_unit_test(gates_hold_and_cancel),
        cmocka_unit_test(an_injected_loss_loses_the_device),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
