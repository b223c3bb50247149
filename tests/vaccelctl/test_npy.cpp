// test_npy.cpp - the .npy reader and writer (tools/npy).
//
// Specifies: the bytes vaccel writes (identical to numpy.save's), round trips
// of every dtype, version 1.0/2.0/3.0 headers, each refusal with its message,
// and reading the real fixture inputs.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "vaccel/npy/npy.hpp"

#include "cmocka.hpp"

using vaccel::npy::Array;
using vaccel::npy::DType;

namespace {

std::vector<std::uint8_t> bytes_of(std::string_view text)
{
    return std::vector<std::uint8_t>(text.begin(), text.end());
}

// A .npy file with the given version, header dictionary and data bytes; the
// header is padded like NumPy's unless `pad` is false.
std::vector<std::uint8_t> npy_file(unsigned major, std::string dict, std::size_t data_bytes,
                                   bool pad = true)
{
    std::size_t prefix = major == 1 ? 10 : 12;
    std::string header = dict;
    if (pad)
        while ((prefix + header.size() + 1) % 64 != 0)
            header += ' ';
    header += '\n';
    std::vector<std::uint8_t> out = bytes_of(std::string_view("\x93NUMPY", 6));
    out.push_back(static_cast<std::uint8_t>(major));
    out.push_back(0);
    for (std::size_t i = 0; i < prefix - 8; ++i)
        out.push_back(static_cast<std::uint8_t>(header.size() >> (8 * i)));
    out.insert(out.end(), header.begin(), header.end());
    for (std::size_t i = 0; i < data_bytes; ++i)
        out.push_back(static_cast<std::uint8_t>(i));
    return out;
}

std::string refusal_of(const std::vector<std::uint8_t>& file)
{
    auto decoded = vaccel::npy::decode(file, "x.npy");
    assert_false(decoded.has_value());
    return decoded.error().message;
}

std::string fixture(const char* relative)
{
    return std::string(VACCEL_FIXTURES_DIR) + "/" + relative;
}

void encode_matches_numpy_save_byte_for_byte(void**)
{
    // np.save(f, np.arange(3, dtype='<i2')) with NumPy 1.24.
    Array array{DType::i2, {3}, {0, 0, 1, 0, 2, 0}};
    std::string header = "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }";
    header.append(117 - header.size(), ' ');
    header += '\n';
    std::string expected = std::string("\x93NUMPY\x01\x00v\x00", 10) + header;
    expected.append("\x00\x00\x01\x00\x02\x00", 6);
    auto encoded = vaccel::npy::encode(array);
    assert_int_equal(encoded.size(), 134);
    assert_memory_equal(encoded.data(), expected.data(), expected.size());
}

void encode_pads_header_so_data_starts_at_multiple_of_64(void**)
{
    for (std::size_t rank = 0; rank <= 8; ++rank) {
        Array array{DType::f4, std::vector<std::int64_t>(rank, 1), std::vector<std::uint8_t>(4, 0)};
        auto encoded = vaccel::npy::encode(array);
        assert_int_equal((encoded.size() - 4) % 64, 0);
        assert_int_equal(encoded[encoded.size() - 5], '\n');
    }
}

void round_trip_keeps_every_dtype_shape_and_byte(void**)
{
    const DType all[] = {DType::f4, DType::f8, DType::f2, DType::i1, DType::i2, DType::i4,
                         DType::i8, DType::u1, DType::u2, DType::u4, DType::u8, DType::b1};
    for (DType dtype : all) {
        Array array{dtype, {2, 3}, {}};
        for (std::size_t i = 0; i < 6 * vaccel::npy::dtype_size(dtype); ++i)
            array.data.push_back(static_cast<std::uint8_t>(dtype == DType::b1 ? i % 2 : i * 7));
        auto decoded = vaccel::npy::decode(vaccel::npy::encode(array), "x.npy");
        assert_true(decoded.has_value());
        assert_int_equal(static_cast<int>(decoded->dtype), static_cast<int>(dtype));
        assert_true(decoded->shape == array.shape);
        assert_true(decoded->data == array.data);
    }
}

void round_trip_keeps_scalar_and_empty_arrays(void**)
{
    Array scalar{DType::f8, {}, std::vector<std::uint8_t>(8, 0x40)};
    auto decoded = vaccel::npy::decode(vaccel::npy::encode(scalar), "x.npy");
    assert_true(decoded.has_value());
    assert_int_equal(decoded->shape.size(), 0);
    assert_int_equal(decoded->data.size(), 8);

    Array empty{DType::i4, {0, 5}, {}};
    decoded = vaccel::npy::decode(vaccel::npy::encode(empty), "x.npy");
    assert_true(decoded.has_value());
    assert_true((decoded->shape == std::vector<std::int64_t>{0, 5}));
    assert_int_equal(decoded->data.size(), 0);
}

void dtype_descr_uses_pipe_for_one_byte_types(void**)
{
    assert_string_equal(vaccel::npy::dtype_descr(DType::i1).c_str(), "|i1");
    assert_string_equal(vaccel::npy::dtype_descr(DType::u1).c_str(), "|u1");
    assert_string_equal(vaccel::npy::dtype_descr(DType::b1).c_str(), "|b1");
    assert_string_equal(vaccel::npy::dtype_descr(DType::f2).c_str(), "<f2");
    assert_string_equal(vaccel::npy::dtype_descr(DType::u8).c_str(), "<u8");
}

void decode_reads_version_2_header(void**)
{
    auto file = npy_file(2, "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", 6);
    auto decoded = vaccel::npy::decode(file, "x.npy");
    assert_true(decoded.has_value());
    assert_int_equal(static_cast<int>(decoded->dtype), static_cast<int>(DType::i2));
    assert_true((decoded->data == std::vector<std::uint8_t>{0, 1, 2, 3, 4, 5}));
}

void decode_reads_version_3_header(void**)
{
    auto file = npy_file(3, "{'descr': '<u4', 'fortran_order': False, 'shape': (1, 2), }", 8);
    auto decoded = vaccel::npy::decode(file, "x.npy");
    assert_true(decoded.has_value());
    assert_true((decoded->shape == std::vector<std::int64_t>{1, 2}));
}

void decode_accepts_unpadded_header_double_quotes_and_any_key_order(void**)
{
    auto file =
        npy_file(1, "{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"|b1\"}", 2, false);
    auto decoded = vaccel::npy::decode(file, "x.npy");
    assert_true(decoded.has_value());
    assert_int_equal(static_cast<int>(decoded->dtype), static_cast<int>(DType::b1));
}

void decode_accepts_one_byte_type_marked_little_endian(void**)
{
    auto decoded = vaccel::npy::decode(
        npy_file(1, "{'descr': '<i1', 'fortran_order': False, 'shape': (4,), }", 4), "x.npy");
    assert_true(decoded.has_value());
    assert_int_equal(static_cast<int>(decoded->dtype), static_cast<int>(DType::i1));
}

void decode_refuses_fortran_order(void**)
{
    auto message =
        refusal_of(npy_file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24));
    assert_string_equal(message.c_str(), "file x.npy is in Fortran order; vaccel reads C-order "
                                         "arrays: save with np.ascontiguousarray");
}

void decode_refuses_big_endian(void**)
{
    auto message =
        refusal_of(npy_file(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8));
    assert_string_equal(message.c_str(), "file x.npy is big-endian (dtype '>f4'); vaccel reads "
                                         "little-endian arrays: save with arr.astype('<f4')");
}

void decode_refuses_unknown_dtype_naming_it(void**)
{
    auto message =
        refusal_of(npy_file(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16));
    assert_contains(message, "file x.npy has dtype '<c8', which vaccel does not read");
    assert_contains(message, "f4, f8, f2, i1, i2, i4, i8, u1, u2, u4, u8, b1");
}

void decode_refuses_structured_dtype(void**)
{
    auto message = refusal_of(
        npy_file(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8));
    assert_contains(message, "file x.npy holds a structured dtype");
}

void decode_refuses_no_byte_order_on_multibyte_type(void**)
{
    auto message =
        refusal_of(npy_file(1, "{'descr': '|f4', 'fortran_order': False, 'shape': (2,), }", 8));
    assert_contains(message, "'|' (no byte order) is only valid for one-byte types");
}

void decode_refuses_truncated_data_naming_expected_and_actual_bytes(void**)
{
    auto message = refusal_of(
        npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4, 4, 1), }", 60));
    assert_string_equal(message.c_str(), "file x.npy is truncated: shape (1, 4, 4, 1) of float32 "
                                         "needs 64 bytes of data, the file holds 60");
}

void decode_refuses_bytes_after_the_array(void**)
{
    auto message =
        refusal_of(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12));
    assert_contains(message, "file x.npy has 4 bytes after its array data");
}

void decode_refuses_truncated_header(void**)
{
    auto file = npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 0);
    file.resize(40);
    assert_contains(refusal_of(file), "file x.npy is truncated: its header should be 118 bytes "
                                      "but only 30 follow the preamble");
}

void decode_refuses_bad_magic(void**)
{
    auto file = npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
    file[1] = 'X';
    assert_contains(refusal_of(file), "file x.npy is not a NumPy .npy file");
    assert_contains(refusal_of(bytes_of("PK\x03\x04")), "file x.npy is not a NumPy .npy file");
}

void decode_refuses_unknown_format_version(void**)
{
    auto file = npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
    file[6] = 4;
    assert_string_equal(refusal_of(file).c_str(), "file x.npy is .npy format version 4.0; vaccel "
                                                  "reads versions 1.0, 2.0 and 3.0");
}

void decode_refuses_missing_key(void**)
{
    assert_contains(refusal_of(npy_file(1, "{'descr': '<f4', 'shape': (2,), }", 8)),
                    "key 'fortran_order' is missing");
}

void decode_refuses_unknown_key(void**)
{
    assert_contains(refusal_of(npy_file(
                        1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8)),
                    "unknown key 'x'");
}

void decode_refuses_duplicate_key(void**)
{
    assert_contains(refusal_of(npy_file(1,
                                        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': "
                                        "False, 'shape': (2,), }",
                                        8)),
                    "key 'descr' appears twice");
}

void decode_refuses_negative_dimension(void**)
{
    assert_contains(
        refusal_of(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8)),
        "a shape dimension is negative");
}

void decode_refuses_one_dimension_without_tuple_comma(void**)
{
    assert_contains(
        refusal_of(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", 8)),
        "'shape' of one dimension must be written (n,)");
}

void decode_refuses_text_after_the_dictionary(void**)
{
    assert_contains(
        refusal_of(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x", 8)),
        "unexpected text after the closing '}'");
}

void decode_refuses_shape_overflowing_64_bits(void**)
{
    assert_contains(refusal_of(npy_file(1,
                                        "{'descr': '<f8', 'fortran_order': False, 'shape': "
                                        "(4294967296, 4294967296), }",
                                        8)),
                    "does not fit in 64 bits");
}

void read_file_reads_fixture_placeholder_0(void**)
{
    auto array = vaccel::npy::read_file(fixture("v1.0-add_1x4x4x4_f32/placeholder_0.npy"));
    assert_true(array.has_value());
    assert_int_equal(static_cast<int>(array->dtype), static_cast<int>(DType::f4));
    assert_true((array->shape == std::vector<std::int64_t>{1, 4, 4, 1}));
    assert_int_equal(array->data.size(), 64);
    std::uint32_t first = 0;
    std::memcpy(&first, array->data.data(), 4);
    assert_int_equal(first, 1064726411u);  // 0.96263951f
}

void read_file_reads_fixture_placeholder_1(void**)
{
    auto array = vaccel::npy::read_file(fixture("v1.0-add_1x4x4x4_f32/placeholder_1.npy"));
    assert_true(array.has_value());
    assert_true((array->shape == std::vector<std::int64_t>{1, 4, 4, 4}));
    std::uint32_t last = 0;
    std::memcpy(&last, array->data.data() + 252, 4);
    assert_int_equal(last, 1067214259u);  // 1.2218536f
}

void read_file_reads_fixture_conv2d_input(void**)
{
    auto array = vaccel::npy::read_file(fixture("v1.0-conv2d_1x1_1x32x32x8_f32/placeholder_0.npy"));
    assert_true(array.has_value());
    assert_true((array->shape == std::vector<std::int64_t>{1, 32, 32, 8}));
    assert_int_equal(array->data.size(), 32 * 32 * 8 * 4);
    std::uint32_t first = 0;
    std::memcpy(&first, array->data.data(), 4);
    assert_int_equal(first, 1069812305u);
}

void write_file_then_read_file_round_trips(void**)
{
    auto path = std::filesystem::temp_directory_path() /
                ("vaccelctl-npy-" + std::to_string(::getpid()) + ".npy");
    Array array{
        DType::i8, {2}, {1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
    assert_true(vaccel::npy::write_file(path, array).has_value());
    auto back = vaccel::npy::read_file(path);
    std::filesystem::remove(path);
    assert_true(back.has_value());
    assert_true(back->data == array.data);
}

void read_file_names_a_missing_file(void**)
{
    auto result = vaccel::npy::read_file("/nonexistent/in.npy");
    assert_false(result.has_value());
    assert_string_equal(result.error().message.c_str(),
                        "cannot open /nonexistent/in.npy: No such file or directory");
}

void write_file_refuses_data_not_matching_shape(void**)
{
    Array array{DType::f4, {2}, {1, 2, 3}};
    auto result = vaccel::npy::write_file("/tmp/never-written.npy", array);
    assert_false(result.has_value());
    assert_contains(result.error().message, "the array's data (3 bytes) does not match shape (2,)");
    assert_false(std::filesystem::exists("/tmp/never-written.npy"));
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(encode_matches_numpy_save_byte_for_byte),
        cmocka_unit_test(encode_pads_header_so_data_starts_at_multiple_of_64),
        cmocka_unit_test(round_trip_keeps_every_dtype_shape_and_byte),
        cmocka_unit_test(round_trip_keeps_scalar_and_empty_arrays),
        cmocka_unit_test(dtype_descr_uses_pipe_for_one_byte_types),
        cmocka_unit_test(decode_reads_version_2_header),
        cmocka_unit_test(decode_reads_version_3_header),
        cmocka_unit_test(decode_accepts_unpadded_header_double_quotes_and_any_key_order),
        cmocka_unit_test(decode_accepts_one_byte_type_marked_little_endian),
        cmocka_unit_test(decode_refuses_fortran_order),
        cmocka_unit_test(decode_refuses_big_endian),
        cmocka_unit_test(decode_refuses_unknown_dtype_naming_it),
        cmocka_unit_test(decode_refuses_structured_dtype),
        cmocka_unit_test(decode_refuses_no_byte_order_on_multibyte_type),
        cmocka_unit_test(decode_refuses_truncated_data_naming_expected_and_actual_bytes),
        cmocka_unit_test(decode_refuses_bytes_after_the_array),
        cmocka_unit_test(decode_refuses_truncated_header),
        cmocka_unit_test(decode_refuses_bad_magic),
        cmocka_unit_test(decode_refuses_unknown_format_version),
        cmocka_unit_test(decode_refuses_missing_key),
        cmocka_unit_test(decode_refuses_unknown_key),
        cmocka_unit_test(decode_refuses_duplicate_key),
        cmocka_unit_test(decode_refuses_negative_dimension),
        cmocka_unit_test(decode_refuses_one_dimension_without_tuple_comma),
        cmocka_unit_test(decode_refuses_text_after_the_dictionary),
        cmocka_unit_test(decode_refuses_shape_overflowing_64_bits),
        cmocka_unit_test(read_file_reads_fixture_placeholder_0),
        cmocka_unit_test(read_file_reads_fixture_placeholder_1),
        cmocka_unit_test(read_file_reads_fixture_conv2d_input),
        cmocka_unit_test(write_file_then_read_file_round_trips),
        cmocka_unit_test(read_file_names_a_missing_file),
        cmocka_unit_test(write_file_refuses_data_not_matching_shape),
    };
    return cmocka_run_group_tests_name("npy", tests, nullptr, nullptr);
}
