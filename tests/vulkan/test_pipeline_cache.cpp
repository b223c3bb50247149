// test_pipeline_cache.cpp - the Vulkan pipeline cache kept in the state
// directory: its file name and header check (fabricated headers), and on
// Mesa lavapipe a second backend instance loading the file the first wrote.
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "../cpu/cpu_test_support.hpp"
#include "pipeline_cache.hpp"
#include "vaccel/backend/vulkan.hpp"

namespace {

using namespace cpu_test;
using vaccel::backend::vulkan::pipeline_cache_file_name;
using vaccel::backend::vulkan::pipeline_cache_mismatch;
using vaccel::backend::vulkan::PipelineCacheIdentity;

PipelineCacheIdentity identity()
{
    PipelineCacheIdentity id;
    id.vendor_id = 0x10de;
    id.device_id = 0x2335;
    id.driver_version = 0x91000000;
    for (std::uint8_t i = 0; i < 16; ++i) id.cache_uuid[i] = static_cast<std::uint8_t>(0xa0 + i);
    return id;
}

// A VkPipelineCacheHeaderVersionOne (32 bytes) then `payload` bytes.
std::vector<std::byte> header(std::uint32_t size, std::uint32_t version, std::uint32_t vendor,
                              std::uint32_t device, std::size_t payload = 8)
{
    std::vector<std::byte> data(32 + payload, std::byte{0x5a});
    const std::uint32_t words[4] = {size, version, vendor, device};
    std::memcpy(data.data(), words, sizeof words);
    const auto id = identity();
    std::memcpy(data.data() + 16, id.cache_uuid.data(), 16);
    return data;
}

void the_file_is_named_by_driver_and_device(void**)
{
    assert_string_equal(pipeline_cache_file_name(identity()).c_str(),
                        "pipelines-a0a1a2a3a4a5a6a7a8a9aaabacadaeaf-10de-2335-91000000.bin");
}

void the_header_must_match_the_device(void**)
{
    const auto id = identity();
    assert_string_equal(pipeline_cache_mismatch(header(32, 1, 0x10de, 0x2335), id).c_str(), "");
    assert_string_equal(pipeline_cache_mismatch(std::vector<std::byte>(20), id).c_str(),
                        "20 bytes, shorter than a pipeline cache header (32 bytes)");
    assert_string_equal(pipeline_cache_mismatch(header(16, 1, 0x10de, 0x2335), id).c_str(),
                        "header size 16 is not between 32 and the file's 40 bytes");
    assert_string_equal(pipeline_cache_mismatch(header(41, 1, 0x10de, 0x2335), id).c_str(),
                        "header size 41 is not between 32 and the file's 40 bytes");
    assert_string_equal(pipeline_cache_mismatch(header(32, 2, 0x10de, 0x2335), id).c_str(),
                        "header version 2, not 1");
    assert_string_equal(pipeline_cache_mismatch(header(32, 1, 0x1002, 0x2335), id).c_str(),
                        "made for device 1002:2335, not 10de:2335");
    auto other_driver = header(32, 1, 0x10de, 0x2335);
    other_driver[20] = std::byte{0};
    assert_string_equal(pipeline_cache_mismatch(other_driver, id).c_str(),
                        "made by another driver build (pipelineCacheUUID differs)");
}

// A fresh directory under the build tree's temporary space.
std::filesystem::path fresh_dir(const char* name)
{
    const auto dir = std::filesystem::temp_directory_path() /
                     fmt::format("vaccel-{}-{}", name, static_cast<long>(getpid()));
    std::filesystem::remove_all(dir);
    return dir;
}

std::unique_ptr<Backend> open_lavapipe(const std::filesystem::path& state_dir)
{
    VulkanOptions options;
    options.state_dir = state_dir;
    VulkanDevices found = open_vulkan_devices(options);
    if (found.devices.size() != 1)
        fail_msg("expected exactly one Vulkan device (lavapipe), found %zu: %s",
                 found.devices.size(), found.unavailable.c_str());
    return std::move(found.devices[0]);
}

// out = (x + y) * x, then max(out, y): three pipelines.
tosa::Graph three_kernels()
{
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", {300});
    const auto y = f32(g, "y", {300});
    const auto s = f32(g, "s", {300});
    const auto m = f32(g, "m", {300});
    const auto out = f32(g, "out", {300});
    g.op(Op::add, {x, y}, {s});
    g.op(Op::mul, {s, x, mul_shift(g, "shift")}, {m});
    g.op(Op::maximum, {m, y}, {out});
    g.input(x);
    g.input(y);
    g.output(out);
    return g.finish();
}

// Loads the program on a fresh backend over `dir`, and returns the load's
// duration in microseconds (printed, never asserted).
long long load_once(const std::filesystem::path& dir)
{
    auto backend = open_lavapipe(dir);
    auto context = backend->create_context();
    assert_ok(context);
    const std::vector<std::uint8_t> bytes = tosa::serialize(three_kernels());
    ProgramDesc desc;
    desc.payload = std::as_bytes(std::span(bytes));
    const auto start = std::chrono::steady_clock::now();
    auto program = backend->load_program(**context, desc);
    const auto took = std::chrono::steady_clock::now() - start;
    assert_ok(program);
    assert_ok(backend->unload_program(*program));
    assert_ok(backend->destroy_context(*context));
    return std::chrono::duration_cast<std::chrono::microseconds>(took).count();
}

std::vector<std::filesystem::path> cache_files(const std::filesystem::path& dir)
{
    std::vector<std::filesystem::path> files;
    if (!std::filesystem::exists(dir / "vulkan")) return files;
    for (const auto& entry : std::filesystem::directory_iterator(dir / "vulkan"))
        files.push_back(entry.path());
    return files;
}

void a_second_instance_loads_the_saved_cache(void**)
{
    const auto dir = fresh_dir("pipeline-cache");
    const long long first = load_once(dir);
    // One file, named for the device, no temporary left behind.
    auto files = cache_files(dir);
    assert_int_equal(files.size(), 1);
    assert_true(files[0].filename().string().starts_with("pipelines-"));
    assert_true(files[0].filename().string().ends_with(".bin"));
    const auto size = std::filesystem::file_size(files[0]);
    assert_true(size >= 32);  // at least the header the device checks at open
    const long long second = load_once(dir);
    files = cache_files(dir);
    assert_int_equal(files.size(), 1);
    // Nothing was compiled that the cache did not hold already.
    assert_int_equal(std::filesystem::file_size(files[0]), size);
    print_message("pipeline cache: %llu bytes; load %lld us cold, %lld us from the file\n",
                  static_cast<unsigned long long>(size), first, second);
    std::filesystem::remove_all(dir);
}

void a_corrupt_file_is_ignored(void**)
{
    const auto dir = fresh_dir("pipeline-cache-corrupt");
    load_once(dir);
    const auto file = cache_files(dir).at(0);
    const auto size = std::filesystem::file_size(file);
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out << "not a pipeline cache at all, just text";
    }
    // Opens, loads, and writes a good file over the bad one.
    load_once(dir);
    assert_int_equal(std::filesystem::file_size(file), size);
    std::filesystem::remove_all(dir);
}

void an_unwritable_state_dir_keeps_the_cache_in_memory(void**)
{
    const auto dir = fresh_dir("pipeline-cache-blocked");
    {
        std::ofstream blocker(dir);  // a file where the directory would be
        blocker << "x";
    }
    load_once(dir);  // serves and loads regardless
    assert_true(std::filesystem::is_regular_file(dir));
    std::filesystem::remove(dir);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_file_is_named_by_driver_and_device),
        cmocka_unit_test(the_header_must_match_the_device),
        cmocka_unit_test(a_second_instance_loads_the_saved_cache),
        cmocka_unit_test(a_corrupt_file_is_ignored),
        cmocka_unit_test(an_unwritable_state_dir_keeps_the_cache_in_memory),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
