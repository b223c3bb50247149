// pipeline_cache.hpp - one VkPipelineCache per device, kept across daemon
// restarts in the state directory, and the device's shader modules.
//
// Decides (docs/adr/0013-vulkan-backend.md, Pipeline cache):
//  - the file is `<state_dir>/vulkan/pipelines-<pipelineCacheUUID>-<vendor>-
//    <device>-<driverVersion>.bin`, so another driver or device never reads
//    it; it is loaded at device open when its VkPipelineCacheHeaderVersionOne
//    header matches the device, and a missing, mismatching or corrupt file is
//    ignored with a log line, never an error;
//  - it is written atomically (a temporary file renamed over it) after a
//    program loads, at most once per `save_interval` (a load within it leaves
//    the cache dirty for the next one), and at close when dirty;
//  - no state directory: an in-memory cache only;
//  - one VkShaderModule per distinct SPIR-V blob (kernel) per device, made on
//    first use and destroyed with the device.
// Locking: modules_ and the save bookkeeping under mutex_; vkCreate*Pipelines
// may use the VkPipelineCache from several threads (Vulkan synchronises it).
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "vaccel/common/error.hpp"

namespace vaccel::backend::vulkan {

struct PipelineCacheIdentity {
    std::uint32_t vendor_id = 0;
    std::uint32_t device_id = 0;
    std::uint32_t driver_version = 0;
    std::array<std::uint8_t, VK_UUID_SIZE> cache_uuid{};  // pipelineCacheUUID
};

// pipelines-<uuid hex>-<vendor hex>-<device hex>-<driverVersion hex>.bin
std::string pipeline_cache_file_name(const PipelineCacheIdentity& identity);

// Empty when `data` starts with a VkPipelineCacheHeaderVersionOne for this
// device, else why not (for the log).
std::string pipeline_cache_mismatch(std::span<const std::byte> data,
                                    const PipelineCacheIdentity& identity);

class PipelineCache {
public:
    static constexpr std::chrono::milliseconds save_interval{1000};

    // Never fails: without a usable file (or directory) the cache starts
    // empty, and without a VkPipelineCache pipelines are made uncached.
    static std::unique_ptr<PipelineCache> open(VkDevice device, const PipelineCacheIdentity& identity,
                                               const std::filesystem::path& state_dir);
    PipelineCache(const PipelineCache&) = delete;
    PipelineCache& operator=(const PipelineCache&) = delete;
    // Saves when dirty, then destroys the modules and the cache.
    ~PipelineCache();

    VkPipelineCache handle() const { return cache_; }
    // The file, or empty without a state directory.
    const std::filesystem::path& file() const { return file_; }
    // Bytes taken from the file at open (0: started empty).
    std::size_t loaded_bytes() const { return loaded_bytes_; }
    // A program was loaded: save now unless one was saved within save_interval.
    void programs_loaded();
    // Writes the cache data now (temporary file + rename); false (logged) on failure.
    bool save();
    // The device's module for this SPIR-V (one per distinct blob).
    Result<VkShaderModule> module(std::span<const std::uint32_t> code);

private:
    PipelineCache(VkDevice device) : device_(device) {}
    bool save_locked();

    VkDevice device_;
    VkPipelineCache cache_ = VK_NULL_HANDLE;
    std::filesystem::path file_;
    std::size_t loaded_bytes_ = 0;
    std::mutex mutex_;  // guards everything below
    bool dirty_ = false;
    std::chrono::steady_clock::time_point last_save_{};
    std::map<const std::uint32_t*, VkShaderModule> modules_;  // keyed by the blob's address
};

}  // namespace vaccel::backend::vulkan
