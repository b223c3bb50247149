// device_info.cpp - the Vulkan device's description (see device_info.hpp).
#include "device_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "lowering.hpp"
#include "staging.hpp"
#include "vaccel/tosa/capability.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::backend::vulkan {

namespace {

void copy_text(char (&target)[VACCEL_NAME_LEN], const std::string& text)
{
    const std::size_t length = std::min(text.size(), sizeof target - 1);
    std::memcpy(target, text.data(), length);
    target[length] = '\0';
}

}  // namespace

std::string driver_version_text(std::uint32_t vendor_id, std::uint32_t version)
{
    if (vendor_id == 0x10de)  // NVIDIA: 10.8.8.6 bits
        return fmt::format("{}.{}.{}", version >> 22, (version >> 14) & 0xff,
                           (version >> 6) & 0xff);
    return fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version),
                       VK_API_VERSION_PATCH(version));
}

vaccel_device_info describe_device(const PhysicalRecord& record, const MemoryPlan& plan)
{
    vaccel_device_info info{};
    std::memcpy(info.uuid, record.uuid.data(), sizeof info.uuid);
    info.device_class = record.facts.type == VK_PHYSICAL_DEVICE_TYPE_CPU ? VACCEL_CLASS_OTHER
                                                                        : VACCEL_CLASS_GPU;
    info.vendor_id = record.vendor_id;
    info.device_id = record.device_id;
    if (record.pci) {
        info.pci_valid = 1;
        info.pci_domain = record.pci->domain;
        info.pci_bus = static_cast<std::uint8_t>(record.pci->bus);
        info.pci_device = static_cast<std::uint8_t>(record.pci->device);
        info.pci_function = static_cast<std::uint8_t>(record.pci->function);
    }
    info.memory_caps = memory_caps(plan);
    copy_text(info.name, record.facts.name);
    std::string driver = "vaccel-vulkan";
    if (!record.driver_name.empty())
        driver += " " + record.driver_name;
    driver += " " + (record.driver_info.empty()
                         ? driver_version_text(record.vendor_id, record.driver_version)
                         : record.driver_info);
    if (record.render_node) {
        const auto slash = record.render_node->rfind('/');
        driver += " " + record.render_node->substr(slash == std::string::npos ? 0 : slash + 1);
    }
    copy_text(info.driver, driver);

    std::uint64_t total = 0;
    std::uint64_t largest = 0;
    for (std::uint32_t h = 0; h < record.memory.memoryHeapCount; ++h) {
        total += record.memory.memoryHeaps[h].size;
        largest = std::max<std::uint64_t>(largest, record.memory.memoryHeaps[h].size);
    }
    info.memory_bytes = total;
    info.limits.max_contexts = max_contexts;
    info.limits.max_buffers = max_buffers_per_context;
    // Programs, events and bindings keep the values programs will have, so a
    // load reaches load_program and is refused there with the reason
    // (Unsupported) rather than as a zero limit.
    info.limits.max_programs = 256;
    info.limits.max_queues = max_queues_per_context;
    info.limits.max_events = 1024;
    info.limits.max_bindings = VACCEL_MAX_BINDINGS;
    // A storage buffer is bound whole by one descriptor, which cannot exceed
    // maxStorageBufferRange; sizes are rounded up to words at allocation, so
    // the bound is rounded down to keep every rounded buffer in range.
    info.limits.max_buffer_bytes =
        std::max<std::uint64_t>(std::min<std::uint64_t>(record.limits.maxStorageBufferRange,
                                                        largest) /
                                    word_bytes * word_bytes,
                                word_bytes);
    info.limits.max_artifact_bytes = tosa::max_artifact_bytes;
    info.limits.max_memory_bytes = largest;
    info.limits.max_gates = 256;  // as the CPU device; each is one timeline semaphore
    // SPIR-V compute modules are launched (launch.hpp).
    info.formats = VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA) | VACCEL_FORMAT_BIT(VACCEL_FORMAT_SPIRV);
    info.tosa_target_count = 1;
    // The target of the descriptor the device advertises (lowering.hpp).
    info.tosa_targets[0] =
        vulkan_descriptor(StorageFeatures{record.storage_8bit, record.storage_16bit})
            .target.to_uapi();
    info.flags = VACCEL_CAP_GATES | VACCEL_CAP_LAUNCH;  // timeline semaphores: device selection requires them
    return info;
}

}  // namespace vaccel::backend::vulkan
