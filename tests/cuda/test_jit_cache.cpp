// test_jit_cache.cpp - the compiled-PTX cache's rules (jit_cache.hpp), no
// GPU needed: keys change with every input, files round-trip, and a file
// that is damaged, truncated, extended or another key's is never loaded.
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "jit_cache.hpp"
#include "cmocka.hpp"

namespace {

using namespace vaccel::backend::cuda;

std::vector<std::byte> bytes_of(const std::string& s)
{
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    return {p, p + s.size()};
}

std::filesystem::path fresh_dir(const char* tag)
{
    auto dir = std::filesystem::temp_directory_path() /
               (std::string("vaccel-jit-") + tag + "-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    return dir;
}

void keys_change_with_every_input(void**)
{
    const auto ptx = bytes_of(".version 8.0\n.target sm_90\n");
    const JitKey base = jit_key(ptx, 9, 0, 13000);
    assert_int_equal(jit_key(ptx, 9, 0, 13000).value, base.value);
    auto other = ptx;
    other.back() = std::byte{' '};
    assert_true(jit_key(other, 9, 0, 13000).value != base.value);
    assert_true(jit_key(ptx, 10, 0, 13000).value != base.value);
    assert_true(jit_key(ptx, 9, 1, 13000).value != base.value);
    assert_true(jit_key(ptx, 9, 0, 13010).value != base.value);
}

void files_round_trip_and_bad_ones_are_ignored(void**)
{
    const auto dir = fresh_dir("rt");
    const JitKey key{0x1234abcdull};
    const auto cubin = bytes_of(std::string("\x7f" "ELF and some code bytes", 27));
    assert_false(jit_cache_read(dir, key).has_value());  // no directory yet
    assert_true(jit_cache_write(dir, key, cubin));
    auto back = jit_cache_read(dir, key);
    assert_true(back.has_value());
    assert_true(*back == cubin);
    assert_false(jit_cache_read(dir, JitKey{key.value + 1}).has_value());
    const auto file = dir / "000000001234abcd.cubin";
    assert_true(std::filesystem::exists(file));
    const auto size = std::filesystem::file_size(file);
    // Truncated.
    std::filesystem::resize_file(file, size - 1);
    assert_false(jit_cache_read(dir, key).has_value());
    // Extended.
    std::filesystem::resize_file(file, size + 1);
    assert_false(jit_cache_read(dir, key).has_value());
    // Another key's file under this name.
    assert_true(jit_cache_write(dir, JitKey{7}, cubin));
    std::filesystem::copy_file(dir / "0000000000000007.cubin", file,
                               std::filesystem::copy_options::overwrite_existing);
    assert_false(jit_cache_read(dir, key).has_value());
    // A damaged magic.
    assert_true(jit_cache_write(dir, key, cubin));
    {
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(0);
        f.put('X');
    }
    assert_false(jit_cache_read(dir, key).has_value());
    // Rewritten whole, and no temporary left behind.
    assert_true(jit_cache_write(dir, key, cubin));
    assert_true(jit_cache_read(dir, key).has_value());
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
    assert_int_equal(files, 2);
    // No directory: nothing kept, nothing read.
    assert_false(jit_cache_write({}, key, cubin));
    assert_false(jit_cache_read({}, key).has_value());
    std::filesystem::remove_all(dir);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keys_change_with_every_input),
        cmocka_unit_test(files_round_trip_and_bad_ones_are_ignored),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
