// device_info.cpp - a CUDA device's description (device_info.hpp).
#include "device_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "program.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::backend::cuda {
namespace {

void copy_text(char (&target)[VACCEL_NAME_LEN], const std::string& text)
{
    const std::size_t length = std::min(text.size(), sizeof target - 1);
    std::memcpy(target, text.data(), length);
    target[length] = '\0';
}

// The PCI device id from sysfs (0 when it cannot be read).
std::uint32_t pci_device_id(const vaccel_device_info& info)
{
    std::ifstream in(fmt::format("/sys/bus/pci/devices/{:04x}:{:02x}:{:02x}.{}/device",
                                 info.pci_domain, info.pci_bus, info.pci_device,
                                 info.pci_function));
    std::string text;
    if (!(in >> text)) return 0;
    try {
        return static_cast<std::uint32_t>(std::stoul(text, nullptr, 16));
    } catch (...) {
        return 0;
    }
}

}  // namespace

Result<std::pair<DeviceFacts, vaccel_device_info>> describe_device(const Driver& cu,
                                                                   CUdevice device)
{
    DeviceFacts facts;
    vaccel_device_info info{};
    auto attribute = [&](CUdevice_attribute a, int& out) -> Status {
        if (CUresult r = cu.cuDeviceGetAttribute(&out, a, device); r != CUDA_SUCCESS)
            return fail(Error::of(Errc::external)
                            .with_note(fmt::format("reading device attribute {}: {}",
                                                   static_cast<int>(a), cu.describe(r))));
        return {};
    };
    int domain = 0, bus = 0, slot = 0, managed = 0, mapped = 0;
    for (auto [a, out] : std::initializer_list<std::pair<CUdevice_attribute, int*>>{
             {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &facts.compute_major},
             {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &facts.compute_minor},
             {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &facts.multiprocessors},
             {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &facts.max_threads_per_block},
             {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &facts.max_block[0]},
             {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &facts.max_block[1]},
             {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &facts.max_block[2]},
             {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &facts.max_grid[0]},
             {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &facts.max_grid[1]},
             {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &facts.max_grid[2]},
             {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &facts.max_shared_per_block},
             {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &facts.max_shared_optin},
             {CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, &domain},
             {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, &bus},
             {CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, &slot},
             {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, &managed},
             {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, &mapped}})
        if (auto ok = attribute(a, *out); !ok) return fail(ok.error());
    facts.managed_memory = managed != 0;
    facts.mapped_host_memory = mapped != 0;

    char name[256] = {};
    if (CUresult r = cu.cuDeviceGetName(name, sizeof name - 1, device); r != CUDA_SUCCESS)
        return fail(Error::of(Errc::external)
                        .with_note(fmt::format("reading the device name: {}", cu.describe(r))));
    CUuuid uuid{};
    if (CUresult r = cu.cuDeviceGetUuid(&uuid, device); r != CUDA_SUCCESS)
        return fail(Error::of(Errc::external)
                        .with_note(fmt::format("reading the device UUID: {}", cu.describe(r))));
    std::size_t total = 0;
    if (CUresult r = cu.cuDeviceTotalMem(&total, device); r != CUDA_SUCCESS)
        return fail(Error::of(Errc::external)
                        .with_note(fmt::format("reading the device memory: {}", cu.describe(r))));

    std::memcpy(info.uuid, uuid.bytes, sizeof info.uuid);
    info.device_class = VACCEL_CLASS_GPU;
    info.vendor_id = 0x10de;
    info.pci_valid = 1;
    info.pci_domain = static_cast<std::uint32_t>(domain);
    info.pci_bus = static_cast<std::uint8_t>(bus);
    info.pci_device = static_cast<std::uint8_t>(slot);
    info.pci_function = 0;
    info.device_id = pci_device_id(info);
    info.memory_caps = VACCEL_MEM_DEVICE_LOCAL;
    if (facts.mapped_host_memory) info.memory_caps |= VACCEL_MEM_HOST_VISIBLE;
    if (facts.managed_memory) info.memory_caps |= VACCEL_MEM_SHARED;
    copy_text(info.name, name);
    int version = 0;
    cu.cuDriverGetVersion(&version);
    copy_text(info.driver, fmt::format("vaccel-cuda CUDA {}.{} sm_{}{}", version / 1000,
                                       version % 1000 / 10, facts.compute_major,
                                       facts.compute_minor));
    info.memory_bytes = total;
    info.limits.max_contexts = max_contexts;
    info.limits.max_buffers = max_buffers_per_context;
    info.limits.max_programs = 256;
    info.limits.max_queues = max_queues_per_context;
    info.limits.max_events = 1024;
    info.limits.max_bindings = VACCEL_MAX_BINDINGS;
    info.limits.max_buffer_bytes = total;
    info.limits.max_artifact_bytes = tosa::max_artifact_bytes;
    info.limits.max_memory_bytes = total;
    info.limits.max_gates = 256;
    info.formats = VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA) | VACCEL_FORMAT_BIT(VACCEL_FORMAT_CUDA_PTX) |
                   VACCEL_FORMAT_BIT(VACCEL_FORMAT_CUDA_CUBIN);
    info.tosa_target_count = 1;
    info.tosa_targets[0] = cuda_descriptor().target.to_uapi();
    info.flags = VACCEL_CAP_GATES | VACCEL_CAP_LAUNCH;
    return std::pair{facts, info};
}

}  // namespace vaccel::backend::cuda
