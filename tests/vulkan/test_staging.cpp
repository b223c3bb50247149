// test_staging.cpp - word-granular transfers through a bounded staging
// buffer, driven through a fake copier over a vector (no device): the exact
// copies made at unaligned edges, neighbouring bytes kept, and every
// offset/length pair against a plain memcpy model.
#include <cstring>
#include <string>
#include <vector>

#include "staging.hpp"

#include "cmocka.hpp"

using namespace vaccel;
using namespace vaccel::backend::vulkan;

namespace {

struct Copy {
    bool into_staging;
    std::uint64_t offset;
    std::uint64_t bytes;
    bool operator==(const Copy&) const = default;
};

// Device memory as a vector; every copy is checked against the rules a
// device copy must follow here (whole words, inside both buffers).
class FakeCopier final : public WordCopier {
public:
    FakeCopier(std::size_t memory_bytes, std::size_t staging_bytes)
        : memory(memory_bytes), staging_(staging_bytes)
    {
        for (std::size_t i = 0; i < memory.size(); ++i)
            memory[i] = std::byte(0xa0 + i);
    }
    std::span<std::byte> staging() override { return staging_; }
    Status to_staging(std::uint64_t offset, std::uint64_t bytes) override
    {
        check(offset, bytes);
        copies.push_back({true, offset, bytes});
        if (fail_at == copies.size())
            return std::unexpected(Error::of(Errc::device_lost).with_note("injected"));
        std::memcpy(staging_.data(), memory.data() + offset, bytes);
        return {};
    }
    Status from_staging(std::uint64_t offset, std::uint64_t bytes) override
    {
        check(offset, bytes);
        copies.push_back({false, offset, bytes});
        if (fail_at == copies.size())
            return std::unexpected(Error::of(Errc::device_lost).with_note("injected"));
        std::memcpy(memory.data() + offset, staging_.data(), bytes);
        return {};
    }

    std::vector<std::byte> memory;
    std::vector<Copy> copies;
    std::size_t fail_at = 0;  // 1-based copy that fails; 0 = none

private:
    void check(std::uint64_t offset, std::uint64_t bytes)
    {
        assert_int_equal(offset % word_bytes, 0);
        assert_int_equal(bytes % word_bytes, 0);
        assert_true(bytes > 0 && bytes <= staging_.size());
        assert_true(offset + bytes <= memory.size());
    }
    std::vector<std::byte> staging_;
};

std::vector<std::byte> counting(std::size_t n, unsigned first = 1)
{
    std::vector<std::byte> bytes(n);
    for (std::size_t i = 0; i < n; ++i)
        bytes[i] = std::byte(first + i);
    return bytes;
}

void an_unaligned_write_patches_its_head_word(void**)
{
    // Offset 3, 9 bytes, 8-byte staging: head word [0,4) read and written
    // back with byte 3 changed; then words [4,12) in one chunk; no tail.
    FakeCopier copier(40, 8);
    const auto data = counting(9);
    assert_true(write_through_staging(copier, 3, data).has_value());
    const std::vector<Copy> expected = {{true, 0, 4}, {false, 0, 4}, {false, 4, 8}};
    assert_true(copier.copies == expected);
    for (std::size_t i = 0; i < 40; ++i) {
        const auto want = i >= 3 && i < 12 ? std::byte(1 + i - 3) : std::byte(0xa0 + i);
        assert_int_equal(copier.memory[i], want);
    }
}

void a_write_inside_one_word_keeps_both_neighbours(void**)
{
    // Offset 5, 2 bytes: the word [4,8) only; bytes 4 and 7 keep 0xa4, 0xa7.
    FakeCopier copier(16, 8);
    const auto data = counting(2, 0x11);
    assert_true(write_through_staging(copier, 5, data).has_value());
    const std::vector<Copy> expected = {{true, 4, 4}, {false, 4, 4}};
    assert_true(copier.copies == expected);
    assert_int_equal(copier.memory[4], std::byte(0xa4));
    assert_int_equal(copier.memory[5], std::byte(0x11));
    assert_int_equal(copier.memory[6], std::byte(0x12));
    assert_int_equal(copier.memory[7], std::byte(0xa7));
}

void an_unaligned_tail_is_read_modified_written(void**)
{
    // Offset 4, 10 bytes: [4,12) whole; tail word [12,16) patched (bytes 12, 13).
    FakeCopier copier(16, 8);
    assert_true(write_through_staging(copier, 4, counting(10)).has_value());
    const std::vector<Copy> expected = {{false, 4, 8}, {true, 12, 4}, {false, 12, 4}};
    assert_true(copier.copies == expected);
    assert_int_equal(copier.memory[13], std::byte(10));
    assert_int_equal(copier.memory[14], std::byte(0xae));
    assert_int_equal(copier.memory[15], std::byte(0xaf));
}

void long_transfers_are_chunked_by_the_staging_size(void**)
{
    // Offset 2, 21 bytes, 8-byte staging: head [0,4), chunks [4,12) and
    // [12,20), tail [20,24) (3 bytes: 20, 21, 22).
    FakeCopier copier(24, 8);
    assert_true(write_through_staging(copier, 2, counting(21)).has_value());
    const std::vector<Copy> expected = {{true, 0, 4},  {false, 0, 4},  {false, 4, 8},
                                        {false, 12, 8}, {true, 20, 4}, {false, 20, 4}};
    assert_true(copier.copies == expected);
    assert_int_equal(copier.memory[22], std::byte(21));
    assert_int_equal(copier.memory[23], std::byte(0xa0 + 23));
    // Reading the same range back: head, two chunks, tail, all into staging.
    copier.copies.clear();
    std::vector<std::byte> back(21);
    assert_true(read_through_staging(copier, 2, back).has_value());
    const std::vector<Copy> reads = {{true, 0, 4}, {true, 4, 8}, {true, 12, 8}, {true, 20, 4}};
    assert_true(copier.copies == reads);
    assert_true(back == counting(21));
}

void every_offset_and_length_matches_a_plain_copy(void**)
{
    // The model: the same bytes memcpy'd into a copy of the initial memory.
    for (std::uint64_t offset = 0; offset < 12; ++offset)
        for (std::uint64_t length = 1; offset + length <= 40; ++length) {
            FakeCopier copier(40, 8);
            std::vector<std::byte> model = copier.memory;
            const auto data = counting(length, 0x31);
            std::memcpy(model.data() + offset, data.data(), length);
            assert_true(write_through_staging(copier, offset, data).has_value());
            assert_true(copier.memory == model);
            std::vector<std::byte> back(length);
            assert_true(read_through_staging(copier, offset, back).has_value());
            assert_true(back == data);
        }
}

void a_failed_copy_stops_the_transfer(void**)
{
    FakeCopier copier(40, 8);
    copier.fail_at = 2;  // the head's write-back
    auto done = write_through_staging(copier, 3, counting(9));
    assert_false(done.has_value());
    assert_int_equal(done.error().code, Errc::device_lost);
    assert_int_equal(copier.copies.size(), 2);
}

void the_staging_size_covers_the_words_up_to_the_bound(void**)
{
    assert_int_equal(staging_size_for(3, 9), 12);   // words [0,12)
    assert_int_equal(staging_size_for(4, 4), 4);
    assert_int_equal(staging_size_for(5, 2), 4);
    assert_int_equal(staging_size_for(0, 100u << 20), staging_bytes);
    assert_int_equal(staging_bytes, 4u << 20);
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(an_unaligned_write_patches_its_head_word),
        cmocka_unit_test(a_write_inside_one_word_keeps_both_neighbours),
        cmocka_unit_test(an_unaligned_tail_is_read_modified_written),
        cmocka_unit_test(long_transfers_are_chunked_by_the_staging_size),
        cmocka_unit_test(every_offset_and_length_matches_a_plain_copy),
        cmocka_unit_test(a_failed_copy_stops_the_transfer),
        cmocka_unit_test(the_staging_size_covers_the_words_up_to_the_bound),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
