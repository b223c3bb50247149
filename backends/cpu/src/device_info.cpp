// device_info.cpp - the CPU device's description (see device_info.hpp).
#include "device_info.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "descriptor.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::backend::cpu {

namespace {

std::string cpu_model()
{
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (!line.starts_with("model name")) continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos) break;
        std::string model = line.substr(colon + 1);
        model.erase(0, model.find_first_not_of(" \t"));
        return model;
    }
    return {};
}

void copy_name(char (&target)[VACCEL_NAME_LEN], const std::string& text)
{
    const std::size_t length = std::min(text.size(), sizeof target - 1);
    std::memcpy(target, text.data(), length);
    target[length] = '\0';
}

// Two FNV-1a 64-bit hashes with different offsets, marked as an RFC 4122
// name-based uuid (version 5 bits, variant 10).
void derive_uuid(std::uint8_t (&uuid)[16], const char* name)
{
    std::uint64_t halves[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
    for (std::uint64_t& hash : halves)
        for (const char* c = name; *c != '\0'; ++c) {
            hash ^= static_cast<unsigned char>(*c);
            hash *= 0x100000001b3ull;
        }
    std::memcpy(uuid, halves, sizeof uuid);
    uuid[6] = static_cast<std::uint8_t>((uuid[6] & 0x0f) | 0x50);
    uuid[8] = static_cast<std::uint8_t>((uuid[8] & 0x3f) | 0x80);
}

}  // namespace

vaccel_device_info describe_cpu(unsigned threads, unsigned instance)
{
    vaccel_device_info info{};
    info.device_class = VACCEL_CLASS_OTHER;
    const std::string model = cpu_model();
    const std::string label = instance == 0 ? "cpu" : fmt::format("cpu:{}", instance);
    copy_name(info.name, model.empty() ? fmt::format("{} ({} threads)", label, threads)
                                       : fmt::format("{} ({} threads) {}", label, threads, model));
    copy_name(info.driver, "vaccel-cpu");
    derive_uuid(info.uuid, info.name);
    info.memory_caps = VACCEL_MEM_HOST_VISIBLE | VACCEL_MEM_SHARED;
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    info.memory_bytes = pages > 0 && page_size > 0
                            ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size)
                            : std::uint64_t{1} << 30;
    info.limits.max_contexts = 64;
    info.limits.max_buffers = 1024;
    info.limits.max_programs = 256;
    info.limits.max_queues = 64;
    info.limits.max_events = 1024;
    info.limits.max_bindings = VACCEL_MAX_BINDINGS;
    info.limits.max_buffer_bytes = std::min<std::uint64_t>(std::uint64_t{4} << 30, info.memory_bytes);
    info.limits.max_artifact_bytes = tosa::max_artifact_bytes;
    info.limits.max_memory_bytes = info.memory_bytes;
    info.limits.max_gates = 256;
    info.formats = VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA) | VACCEL_FORMAT_BIT(VACCEL_FORMAT_CPU_BUILTIN);
    info.tosa_target_count = 1;
    info.tosa_targets[0] = cpu_descriptor().target.to_uapi();
    info.flags = VACCEL_CAP_TOSA | VACCEL_CAP_DEADLINES | VACCEL_CAP_GATES | VACCEL_CAP_LAUNCH;
    return info;
}

}  // namespace vaccel::backend::cpu
