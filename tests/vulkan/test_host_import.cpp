// test_host_import.cpp - host memory imported as a buffer of a context
// (VK_EXT_external_memory_host) on Mesa lavapipe: the host writes the input
// through its own pointer, a program reads it, and the output is read back
// through the host's pointer; misaligned memory is refused clearly.
#include <cstdlib>

#include <sys/mman.h>
#include "vulkan_test_support.hpp"
#include "vaccel/backend/vulkan.hpp"

namespace {

using namespace vulkan_test;

// Page-aligned host memory, freed at scope exit.
struct HostPages {
    void* memory;
    std::size_t size;
    // Anonymous pages of their own: the NVIDIA driver imports those (and
    // huge pages) only, not pages of the C heap.
    explicit HostPages(std::size_t bytes)
        : memory(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)),
          size(bytes)
    {
        if (memory == MAP_FAILED) fail_msg("mmap of %zu bytes failed", bytes);
    }
    ~HostPages() { munmap(memory, size); }
    float* floats() const { return static_cast<float*>(memory); }
};

BufferDesc host_desc(std::uint64_t bytes)
{
    BufferDesc desc;
    desc.bytes = bytes;
    desc.domain = VACCEL_DOMAIN_HOST;
    desc.usage = VACCEL_USAGE_ALL;
    return desc;
}

void a_program_reads_and_writes_imported_host_memory(void**)
{
    Rig gpu = vulkan_rig();
    // Lavapipe offers the extension with a 4096-byte alignment.
    assert_true(vulkan_host_import_alignment(*gpu.backend).has_value());
    assert_int_equal(*vulkan_host_import_alignment(*gpu.backend), 4096);
    auto p = gpu.must_load(doubling(1000));
    HostPages in_pages(4096), out_pages(4096);
    BufferInfo in_info, out_info;
    auto in = import_host_buffer(*gpu.backend, *gpu.context, host_desc(4000), in_pages.memory, 4096,
                                 in_info);
    assert_ok(in);
    auto out = import_host_buffer(*gpu.backend, *gpu.context, host_desc(4000), out_pages.memory,
                                  4096, out_info);
    assert_ok(out);
    assert_int_equal(in_info.allocation_bytes, 4096);
    assert_true(in_info.measured_alignment >= 4096);
    assert_int_equal(in_info.properties & VACCEL_PROP_HOST_VISIBLE, VACCEL_PROP_HOST_VISIBLE);
    // Written through the host's own pointer, no write_buffer.
    for (int i = 0; i < 1000; ++i) in_pages.floats()[i] = static_cast<float>(i) * 0.25f - 40.0f;
    auto event = cpu_test::submit(*gpu.backend, *gpu.queue, *p,
                                  gpu.bind(*p, {in->get(), out->get()}), 0);
    assert_ok(event);
    assert_int_equal(static_cast<int>(gpu.wait(**event).state),
                     static_cast<int>(EventState::complete));
    assert_ok(gpu.backend->destroy_event(*event));
    // Read through the host's pointer: i/2 - 80, exact (quarters doubled).
    for (int i = 0; i < 1000; ++i)
        if (out_pages.floats()[i] != static_cast<float>(i) * 0.5f - 80.0f)
            fail_msg("out[%d] = %g, want %g", i, out_pages.floats()[i], i * 0.5 - 80.0);
    // read_buffer sees the same bytes.
    const auto via_read = gpu.read(**out, 1000);
    assert_memory_equal(via_read.data(), out_pages.memory, 4000);
    assert_int_equal(gpu.backend->live().buffers, 2);
    assert_ok(gpu.backend->free_buffer(*in));
    assert_ok(gpu.backend->free_buffer(*out));
    gpu.finish(p);
}

void misaligned_or_short_host_memory_is_refused(void**)
{
    Rig gpu = vulkan_rig();
    HostPages pages(3 * 4096);
    BufferInfo info;
    auto* base = static_cast<std::byte*>(pages.memory);
    const auto address = reinterpret_cast<std::uintptr_t>(base + 16);
    const auto shifted = import_host_buffer(*gpu.backend, *gpu.context, host_desc(64), base + 16,
                                            4096, info);
    assert_refused(shifted, Errc::invalid_argument, VACCEL_D_BAD_VALUE, address, 4096);
    assert_true(shifted.error().note.find("4096-byte import alignment") != std::string::npos);
    assert_refused(import_host_buffer(*gpu.backend, *gpu.context, host_desc(64), base, 100, info),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   reinterpret_cast<std::uintptr_t>(base), 100);
    // A buffer larger than the memory given.
    assert_refused(import_host_buffer(*gpu.backend, *gpu.context, host_desc(8192), base, 4096,
                                      info),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE, 8192, 4096);
    // Imported memory is never the DEVICE domain.
    auto device_desc = host_desc(64);
    device_desc.domain = VACCEL_DOMAIN_DEVICE;
    assert_refused(import_host_buffer(*gpu.backend, *gpu.context, device_desc, base, 4096, info),
                   Errc::unsupported, VACCEL_D_BAD_VALUE, offsetof(vaccel_buffer_alloc, domain),
                   VACCEL_DOMAIN_DEVICE);
    assert_int_equal(gpu.backend->live().buffers, 0);
    gpu.finish();
}

void a_cpu_device_cannot_import(void**)
{
    Rig cpu(1);
    assert_false(vulkan_host_import_alignment(*cpu.backend).has_value());
    HostPages pages(4096);
    BufferInfo info;
    const auto refused =
        import_host_buffer(*cpu.backend, *cpu.context, host_desc(64), pages.memory, 4096, info);
    assert_refused(refused, Errc::unsupported, VACCEL_D_NONE, 0, 0);
    cpu.finish();
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_program_reads_and_writes_imported_host_memory),
        cmocka_unit_test(misaligned_or_short_host_memory_is_refused),
        cmocka_unit_test(a_cpu_device_cannot_import),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
