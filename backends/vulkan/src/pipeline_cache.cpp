// pipeline_cache.cpp - the persistent pipeline cache and shader modules (pipeline_cache.hpp).
#include "pipeline_cache.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace vaccel::backend::vulkan {

std::string pipeline_cache_file_name(const PipelineCacheIdentity& identity)
{
    std::string uuid;
    for (std::uint8_t byte : identity.cache_uuid) uuid += fmt::format("{:02x}", byte);
    return fmt::format("pipelines-{}-{:04x}-{:04x}-{:08x}.bin", uuid, identity.vendor_id,
                       identity.device_id, identity.driver_version);
}

std::string pipeline_cache_mismatch(std::span<const std::byte> data,
                                    const PipelineCacheIdentity& identity)
{
    // VkPipelineCacheHeaderVersionOne: headerSize, headerVersion, vendorID,
    // deviceID (4 bytes each, host order), then pipelineCacheUUID.
    constexpr std::size_t header_bytes = 16 + VK_UUID_SIZE;
    if (data.size() < header_bytes)
        return fmt::format("{} bytes, shorter than a pipeline cache header ({} bytes)",
                           data.size(), header_bytes);
    std::uint32_t words[4];
    std::memcpy(words, data.data(), sizeof words);
    if (words[0] < header_bytes || words[0] > data.size())
        return fmt::format("header size {} is not between {} and the file's {} bytes", words[0],
                           header_bytes, data.size());
    if (words[1] != VK_PIPELINE_CACHE_HEADER_VERSION_ONE)
        return fmt::format("header version {}, not {}", words[1],
                           static_cast<int>(VK_PIPELINE_CACHE_HEADER_VERSION_ONE));
    if (words[2] != identity.vendor_id || words[3] != identity.device_id)
        return fmt::format("made for device {:04x}:{:04x}, not {:04x}:{:04x}", words[2], words[3],
                           identity.vendor_id, identity.device_id);
    if (std::memcmp(data.data() + 16, identity.cache_uuid.data(), VK_UUID_SIZE) != 0)
        return "made by another driver build (pipelineCacheUUID differs)";
    return {};
}

std::unique_ptr<PipelineCache> PipelineCache::open(VkDevice device,
                                                   const PipelineCacheIdentity& identity,
                                                   const std::filesystem::path& state_dir)
{
    std::unique_ptr<PipelineCache> cache(new PipelineCache(device));
    std::vector<std::byte> data;
    if (!state_dir.empty()) {
        const std::filesystem::path dir = state_dir / "vulkan";
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        if (ec) {
            spdlog::warn("vulkan: pipeline cache kept in memory only: cannot create {} ({})",
                         dir.string(), ec.message());
        } else {
            cache->file_ = dir / pipeline_cache_file_name(identity);
            std::ifstream in(cache->file_, std::ios::binary);
            if (in) {
                std::vector<char> raw((std::istreambuf_iterator<char>(in)),
                                      std::istreambuf_iterator<char>());
                data.resize(raw.size());
                std::memcpy(data.data(), raw.data(), raw.size());
                if (const std::string why = pipeline_cache_mismatch(data, identity); !why.empty()) {
                    spdlog::info("vulkan: ignoring the pipeline cache {}: {}",
                                 cache->file_.string(), why);
                    data.clear();
                }
            }
        }
    }
    VkPipelineCacheCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
    create.initialDataSize = data.size();
    create.pInitialData = data.empty() ? nullptr : data.data();
    if (vkCreatePipelineCache(device, &create, nullptr, &cache->cache_) == VK_SUCCESS) {
        cache->loaded_bytes_ = data.size();
    } else {
        // The driver refused the data: start empty rather than fail the device.
        if (!data.empty())
            spdlog::info("vulkan: the driver refused the pipeline cache {}; starting empty",
                         cache->file_.string());
        create.initialDataSize = 0;
        create.pInitialData = nullptr;
        if (vkCreatePipelineCache(device, &create, nullptr, &cache->cache_) != VK_SUCCESS)
            cache->cache_ = VK_NULL_HANDLE;
    }
    return cache;
}

PipelineCache::~PipelineCache()
{
    {
        std::lock_guard lock(mutex_);
        if (dirty_) save_locked();
    }
    for (const auto& [code, module] : modules_) vkDestroyShaderModule(device_, module, nullptr);
    if (cache_ != VK_NULL_HANDLE) vkDestroyPipelineCache(device_, cache_, nullptr);
}

void PipelineCache::programs_loaded()
{
    std::lock_guard lock(mutex_);
    dirty_ = true;
    const auto now = std::chrono::steady_clock::now();
    if (last_save_ != std::chrono::steady_clock::time_point{} && now - last_save_ < save_interval)
        return;  // saved recently: the next load or the close writes it
    save_locked();
}

bool PipelineCache::save()
{
    std::lock_guard lock(mutex_);
    return save_locked();
}

bool PipelineCache::save_locked()
{
    last_save_ = std::chrono::steady_clock::now();
    if (file_.empty() || cache_ == VK_NULL_HANDLE) return false;
    std::size_t size = 0;
    if (vkGetPipelineCacheData(device_, cache_, &size, nullptr) != VK_SUCCESS) return false;
    std::vector<char> data(size);
    if (vkGetPipelineCacheData(device_, cache_, &size, data.data()) != VK_SUCCESS) return false;
    data.resize(size);
    // Renamed over the old file only once complete: a reader (or a crash)
    // never sees half a cache.
    const std::filesystem::path temporary =
        file_.string() + fmt::format(".tmp.{}", static_cast<long>(getpid()));
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out.write(data.data(), static_cast<std::streamsize>(data.size()));
        out.flush();
        if (!out) {
            spdlog::warn("vulkan: cannot write the pipeline cache {}", temporary.string());
            std::error_code ignored;
            std::filesystem::remove(temporary, ignored);
            return false;
        }
    }
    std::error_code ec;
    std::filesystem::rename(temporary, file_, ec);
    if (ec) {
        spdlog::warn("vulkan: cannot replace the pipeline cache {}: {}", file_.string(),
                     ec.message());
        std::filesystem::remove(temporary, ec);
        return false;
    }
    dirty_ = false;
    return true;
}

Result<VkShaderModule> PipelineCache::module(std::span<const std::uint32_t> code)
{
    std::lock_guard lock(mutex_);
    if (auto found = modules_.find(code.data()); found != modules_.end()) return found->second;
    VkShaderModuleCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    create.codeSize = code.size_bytes();
    create.pCode = code.data();
    VkShaderModule module = VK_NULL_HANDLE;
    if (VkResult r = vkCreateShaderModule(device_, &create, nullptr, &module); r != VK_SUCCESS)
        return fail(Error::of(Errc::out_of_memory)
                        .with_note(fmt::format("creating a shader module failed (VkResult {})",
                                               static_cast<int>(r))));
    modules_.emplace(code.data(), module);
    return module;
}

}  // namespace vaccel::backend::vulkan
