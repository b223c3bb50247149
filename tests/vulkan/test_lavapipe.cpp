// test_lavapipe.cpp - the Vulkan backend on Mesa lavapipe (the CI's Vulkan
// device, installed by `make deps`; ctest points the loader at it alone):
// enumeration and identity, buffers round-tripping exact bytes at aligned
// and unaligned offsets through the mapping and through the staging path,
// refusals, limits, and counters back to zero. A missing lavapipe fails.
#include <cstring>
#include <string>
#include <vector>

#include "device_info.hpp"
#include "drm_node.hpp"
#include "vaccel/backend/registry.hpp"
#include "vaccel/backend/vulkan.hpp"

#include "cmocka.hpp"

using namespace vaccel;
using namespace vaccel::backend;

namespace {

std::unique_ptr<Backend> the_device(VulkanOptions options = {})
{
    VulkanDevices found = open_vulkan_devices(options);
    if (found.devices.size() != 1)
        print_error("expected exactly one Vulkan device (lavapipe), found %zu: %s\n",
                    found.devices.size(), found.unavailable.c_str());
    assert_int_equal(found.devices.size(), 1);
    return std::move(found.devices[0]);
}

std::vector<std::byte> pattern(std::size_t n, unsigned seed)
{
    std::vector<std::byte> bytes(n);
    for (std::size_t i = 0; i < n; ++i)
        bytes[i] = std::byte((i * 7 + seed) & 0xff);
    return bytes;
}

void enumeration_finds_one_cpu_device_with_its_identity(void**)
{
    VulkanDevices found = open_vulkan_devices();
    assert_string_equal(found.unavailable.c_str(), "");
    assert_int_equal(found.devices.size(), 1);
    assert_int_equal(found.probe.size(), 1);
    assert_true(found.probe[0].served);
    assert_true(found.probe[0].name.starts_with("llvmpipe"));
    assert_true(found.probe[0].name.ends_with("(CPU)"));
    const vaccel_device_info& info = found.devices[0]->device_info();
    assert_true(std::string(info.name).starts_with("llvmpipe"));
    // Lavapipe's identity: Mesa's vendor id VK_VENDOR_ID_MESA (0x10005),
    // device id 0, a CPU-type device (class OTHER), no PCI location, and its
    // device UUID begins with the bytes of "mesa".
    assert_int_equal(info.vendor_id, 0x10005);
    assert_int_equal(info.device_id, 0);
    assert_int_equal(info.device_class, VACCEL_CLASS_OTHER);
    assert_int_equal(info.pci_valid, 0);
    assert_memory_equal(info.uuid, "mesa", 4);
    const std::string driver = info.driver;
    assert_true(driver.starts_with("vaccel-vulkan llvmpipe Mesa "));
    assert_true(driver.find("renderD") == std::string::npos);  // no /dev/dri here
    // One heap, one type with every property: all three domains.
    assert_int_equal(info.memory_caps,
                     VACCEL_MEM_HOST_VISIBLE | VACCEL_MEM_DEVICE_LOCAL | VACCEL_MEM_SHARED);
    assert_true(info.memory_bytes > 0);
    // TOSA programs of the FP32 tier; host gates; SPIR-V kernels launched.
    assert_int_equal(info.formats, VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA) |
                                       VACCEL_FORMAT_BIT(VACCEL_FORMAT_SPIRV));
    assert_int_equal(info.flags, VACCEL_CAP_GATES | VACCEL_CAP_LAUNCH);
    assert_int_equal(info.tosa_target_count, 1);
    assert_int_equal(info.limits.max_buffer_bytes % 4, 0);
    assert_true(info.limits.max_buffer_bytes <= info.memory_bytes);
}

void the_registry_serves_it_as_vulkan_0(void**)
{
    Selection selection;
    selection.devices = {"vulkan:0"};
    auto devices = open_devices(selection);
    assert_true(devices.has_value());
    assert_int_equal(devices->size(), 1);
    assert_true(std::string((*devices)[0]->device_info().driver).starts_with("vaccel-vulkan"));
    selection.devices = {"vulkan:1"};
    auto missing = open_devices(selection);
    assert_false(missing.has_value());
    assert_int_equal(missing.error().detail, VACCEL_D_NO_DEVICE);
    assert_int_equal(missing.error().arg0, 1);
    assert_int_equal(missing.error().arg1, 1);
    selection.devices = {"vulkan"};
    selection.settings["vulkan"]["unified_memory"] = "2";
    auto bad = open_devices(selection);
    assert_false(bad.has_value());
    assert_int_equal(bad.error().code, Errc::invalid_argument);
    assert_true(bad.error().note.find("[devices.vulkan] unified_memory is 0 or 1") !=
                std::string::npos);
    // The discrete-GPU preference on lavapipe: its one type still serves
    // every domain (device-local and host-visible alike).
    selection.settings["vulkan"]["unified_memory"] = "0";
    auto discrete_plan = open_devices(selection);
    assert_true(discrete_plan.has_value());
    assert_int_equal(discrete_plan->size(), 1);
    assert_int_equal((*discrete_plan)[0]->device_info().memory_caps,
                     VACCEL_MEM_HOST_VISIBLE | VACCEL_MEM_DEVICE_LOCAL | VACCEL_MEM_SHARED);
    selection.settings["vulkan"].clear();
    selection.settings["vulkan"].emplace("unified", "1");
    auto unknown = open_devices(selection);
    assert_false(unknown.has_value());
    assert_true(unknown.error().note.find("[devices.vulkan] unified is not a setting of the vulkan backend; its settings are ") !=
                std::string::npos);
}

// Writes `data` at every offset in 0..7 of a buffer of `bytes` in `domain`
// and reads it back, checking that the bytes around it stay as written before.
void round_trips(Backend& device, std::uint32_t domain, std::uint64_t bytes,
                 std::uint64_t length, std::uint32_t expect_props)
{
    auto context = device.create_context();
    assert_true(context.has_value());
    BufferDesc desc;
    desc.bytes = bytes;
    desc.domain = domain;
    BufferInfo info;
    auto buffer = device.allocate_buffer(**context, desc, info);
    assert_true(buffer.has_value());
    assert_int_equal(info.properties, expect_props);
    assert_true(info.allocation_bytes >= (bytes + 3) / 4 * 4);
    assert_true(info.measured_alignment >= 4);
    // New memory reads as zero.
    std::vector<std::byte> all(bytes);
    assert_true(device.read_buffer(**buffer, 0, all).has_value());
    assert_true(all == std::vector<std::byte>(bytes));
    for (std::uint64_t offset = 0; offset < 8; ++offset) {
        const auto background = pattern(bytes, 0x55 + static_cast<unsigned>(offset));
        assert_true(device.write_buffer(**buffer, 0, background).has_value());
        const auto data = pattern(length, static_cast<unsigned>(offset));
        assert_true(device.write_buffer(**buffer, offset, data).has_value());
        std::vector<std::byte> back(length);
        assert_true(device.read_buffer(**buffer, offset, back).has_value());
        assert_true(back == data);
        // The model: background with data copied in at offset.
        std::vector<std::byte> model = background;
        std::memcpy(model.data() + offset, data.data(), length);
        assert_true(device.read_buffer(**buffer, 0, all).has_value());
        assert_true(all == model);
    }
    assert_true(device.free_buffer(*buffer).has_value());
    assert_true(device.destroy_context(*context).has_value());
}

constexpr std::uint32_t mapped_props = VACCEL_PROP_HOST_VISIBLE | VACCEL_PROP_COHERENT |
                                       VACCEL_PROP_DEVICE_LOCAL | VACCEL_PROP_DIRECT_BINDING;

void mapped_buffers_round_trip_exact_bytes(void**)
{
    auto device = the_device();
    for (std::uint32_t domain : {VACCEL_DOMAIN_HOST, VACCEL_DOMAIN_DEVICE, VACCEL_DOMAIN_SHARED}) {
        round_trips(*device, domain, 64, 13, mapped_props);
        round_trips(*device, domain, 4099, 4091, mapped_props);  // odd size, not whole words
    }
    const LiveCounters live = device->live();
    assert_int_equal(live.contexts + live.buffers + live.buffer_bytes + live.queues, 0);
}

void staged_buffers_round_trip_exact_bytes(void**)
{
    // Lavapipe's only memory type is host-visible, so the staging path is
    // forced (VulkanOptions::stage_all_transfers): copies through the
    // bounded staging buffer with the word read-modify-write at the edges.
    VulkanOptions options;
    options.stage_all_transfers = true;
    auto device = the_device(options);
    round_trips(*device, VACCEL_DOMAIN_DEVICE, 64, 13, mapped_props);
    round_trips(*device, VACCEL_DOMAIN_DEVICE, 61, 1, mapped_props);
    round_trips(*device, VACCEL_DOMAIN_HOST, 4099, 4091, mapped_props);
    // Larger than the 4 MiB staging bound: two chunks and an unaligned tail.
    round_trips(*device, VACCEL_DOMAIN_DEVICE, (5u << 20) + 11, (5u << 20) + 2, mapped_props);
    const LiveCounters live = device->live();
    assert_int_equal(live.contexts + live.buffers + live.buffer_bytes + live.queues, 0);
}

void bad_transfers_and_allocations_are_refused(void**)
{
    auto device = the_device();
    auto context = device->create_context();
    assert_true(context.has_value());
    BufferDesc desc;
    desc.bytes = 16;
    desc.usage = VACCEL_USAGE_STORAGE | VACCEL_USAGE_TRANSFER_DST;
    BufferInfo info;
    auto buffer = device->allocate_buffer(**context, desc, info);
    assert_true(buffer.has_value());
    std::vector<std::byte> bytes(8);
    auto denied = device->read_buffer(**buffer, 0, bytes);
    assert_false(denied.has_value());
    assert_int_equal(denied.error().code, Errc::permission_denied);
    assert_int_equal(denied.error().detail, VACCEL_D_USAGE);
    assert_true(denied.error().note.find("without the TRANSFER_SRC usage") != std::string::npos);
    auto past = device->write_buffer(**buffer, 9, bytes);  // 9 + 8 > 16
    assert_false(past.has_value());
    assert_int_equal(past.error().code, Errc::out_of_bounds);
    assert_int_equal(past.error().detail, VACCEL_D_RANGE);
    // Too large for one storage descriptor.
    BufferDesc huge;
    huge.bytes = device->device_info().limits.max_buffer_bytes + 1;
    auto refused = device->allocate_buffer(**context, huge, info);
    assert_false(refused.has_value());
    assert_int_equal(refused.error().detail, VACCEL_D_LIMIT);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_BUFFER_BYTES);
    // Busy while the buffer lives, fine after.
    auto busy = device->destroy_context(*context);
    assert_false(busy.has_value());
    assert_int_equal(busy.error().code, Errc::busy);
    assert_int_equal(busy.error().arg0, 1);
    assert_true(device->free_buffer(*buffer).has_value());
    assert_true(device->destroy_context(*context).has_value());
}

void other_formats_and_gates_past_the_limit_are_refused(void**)
{
    auto device = the_device();
    auto context = device->create_context();
    assert_true(context.has_value());
    for (std::uint32_t format : {VACCEL_FORMAT_CUDA_PTX, VACCEL_FORMAT_CPU_BUILTIN}) {
        ProgramDesc desc;
        desc.format = format;
        auto program = device->load_program(**context, desc);
        assert_false(program.has_value());
        assert_int_equal(program.error().code, Errc::unsupported);
        assert_int_equal(program.error().detail, VACCEL_D_FORMAT);
        assert_int_equal(program.error().arg0, format);
        assert_true(program.error().note.starts_with(
            "the Vulkan device loads TOSA 1.0 programs and SPIR-V compute modules only"));
    }
    // Gates: max_gates (256, as the CPU device) per context, then refused
    // as a limit; a context with a gate cannot be destroyed.
    std::vector<std::unique_ptr<Gate>> gates;
    for (int i = 0; i < 256; ++i) {
        auto gate = device->create_gate(**context);
        assert_true(gate.has_value());
        gates.push_back(std::move(*gate));
    }
    auto gate = device->create_gate(**context);
    assert_false(gate.has_value());
    assert_int_equal(gate.error().code, Errc::resource_limit);
    assert_int_equal(gate.error().limit, VACCEL_LIMIT_GATES);
    assert_int_equal(gate.error().arg0, 256);
    assert_int_equal(gate.error().arg1, 256);
    assert_int_equal(device->live().gates, 256);
    assert_int_equal(device->destroy_context(*context).error().code, Errc::busy);
    for (auto& g : gates) assert_true(device->destroy_gate(g).has_value());
    assert_int_equal(device->live().gates, 0);
    auto queue = device->create_queue(**context);
    assert_true(queue.has_value());
    assert_int_equal(device->live().queues, 1);
    assert_true(device->destroy_queue(*queue).has_value());
    assert_true(device->destroy_context(*context).has_value());
}

void limits_hold_and_counters_return_to_zero(void**)
{
    auto device = the_device();
    const auto& limits = device->device_info().limits;
    auto context = device->create_context();
    assert_true(context.has_value());
    std::vector<std::unique_ptr<Buffer>> buffers;
    BufferDesc desc;
    desc.bytes = 6;  // allocated as 8 bytes (two words) or more
    for (std::uint32_t i = 0; i < limits.max_buffers; ++i) {
        BufferInfo info;
        auto buffer = device->allocate_buffer(**context, desc, info);
        assert_true(buffer.has_value());
        buffers.push_back(std::move(*buffer));
    }
    BufferInfo info;
    auto over = device->allocate_buffer(**context, desc, info);
    assert_false(over.has_value());
    assert_int_equal(over.error().detail, VACCEL_D_LIMIT);
    assert_int_equal(over.error().limit, VACCEL_LIMIT_BUFFERS);
    LiveCounters live = device->live();
    assert_int_equal(live.buffers, limits.max_buffers);
    assert_true(live.buffer_bytes >= 8u * limits.max_buffers);
    std::vector<std::unique_ptr<Queue>> queues;
    for (std::uint32_t i = 0; i < limits.max_queues; ++i)
        queues.push_back(std::move(*device->create_queue(**context)));
    auto no_queue = device->create_queue(**context);
    assert_false(no_queue.has_value());
    assert_int_equal(no_queue.error().limit, VACCEL_LIMIT_QUEUES);
    for (auto& buffer : buffers)
        assert_true(device->free_buffer(buffer).has_value());
    for (auto& queue : queues)
        assert_true(device->destroy_queue(queue).has_value());
    assert_true(device->destroy_context(*context).has_value());
    live = device->live();
    assert_int_equal(live.contexts, 0);
    assert_int_equal(live.buffers, 0);
    assert_int_equal(live.buffer_bytes, 0);
    assert_int_equal(live.queues, 0);
}

void identity_helpers_degrade_and_decode(void**)
{
    using namespace vaccel::backend::vulkan;
    // PCI 0000:00:00.0 is the host bridge, never a DRM device; with no
    // /dev/dri (this machine) libdrm lists nothing at all. Either way: no node.
    assert_false(render_node_for(PciLocation{0, 0, 0, 0}).has_value());
    assert_false(render_node_for_minor(100000).has_value());
    // NVIDIA packs 10.8.8.6 bits: 535.104.5 = 535<<22 | 104<<14 | 5<<6.
    assert_string_equal(driver_version_text(0x10de, (535u << 22) | (104u << 14) | (5u << 6)).c_str(),
                        "535.104.5");
    // Everyone else uses VK_MAKE_API_VERSION: 22.3.6 = 22<<22 | 3<<12 | 6.
    assert_string_equal(driver_version_text(0x1002, (22u << 22) | (3u << 12) | 6u).c_str(),
                        "22.3.6");
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(enumeration_finds_one_cpu_device_with_its_identity),
        cmocka_unit_test(the_registry_serves_it_as_vulkan_0),
        cmocka_unit_test(mapped_buffers_round_trip_exact_bytes),
        cmocka_unit_test(staged_buffers_round_trip_exact_bytes),
        cmocka_unit_test(bad_transfers_and_allocations_are_refused),
        cmocka_unit_test(other_formats_and_gates_past_the_limit_are_refused),
        cmocka_unit_test(limits_hold_and_counters_return_to_zero),
        cmocka_unit_test(identity_helpers_degrade_and_decode),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
