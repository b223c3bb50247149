// test_onnx_ports.cpp - data across an imported graph's boundary
// (vaccel/onnx/ports.hpp): which TOSA type carries each ONNX type, INT64
// inputs narrowed with a range check, INT32 results widened or wrapped to
// the model's output types, and sizes that do not match refused.
#include <onnx/onnx_pb.h>

#include <cstring>
#include <vector>

#include "../support/cmocka.hpp"
#include "vaccel/onnx/ports.hpp"

namespace {

using namespace vaccel;
namespace vo = vaccel::onnx;
using T = ::onnx::TensorProto;

template <class V>
std::vector<std::byte> bytes_of(const std::vector<V>& values)
{
    std::vector<std::byte> out(values.size() * sizeof(V));
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

template <class V>
std::vector<V> values_of(const std::vector<std::byte>& bytes)
{
    std::vector<V> out(bytes.size() / sizeof(V));
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

vo::Port port(std::int32_t type, std::vector<std::int64_t> dims)
{
    return vo::Port{"x", type, std::move(dims), vo::carrier_of(type).value_or(tosa::DType::unknown)};
}

void every_type_has_its_carrier_or_none(void**)
{
    assert_true(vo::carrier_of(T::FLOAT) == tosa::DType::fp32);
    assert_true(vo::carrier_of(T::FLOAT16) == tosa::DType::fp16);
    assert_true(vo::carrier_of(T::BFLOAT16) == tosa::DType::bf16);
    assert_true(vo::carrier_of(T::BOOL) == tosa::DType::boolean);
    for (auto t : {T::INT8, T::INT16, T::INT32, T::INT64, T::UINT8, T::UINT16, T::UINT32, T::UINT64})
        assert_true(vo::carrier_of(t) == tosa::DType::int32);
    for (auto t : {T::DOUBLE, T::STRING, T::COMPLEX64, T::UNDEFINED})
        assert_false(vo::carrier_of(t).has_value());
    assert_string_equal(vo::onnx_type_name(T::INT64).c_str(), "INT64");
    assert_string_equal(vo::onnx_type_name(999).c_str(), "type 999");
}

void int64_inputs_are_narrowed_exactly(void**)
{
    const std::vector<std::int64_t> in{0, -1, INT32_MAX, INT32_MIN, 7};
    auto got = vo::to_graph(port(T::INT64, {5}), bytes_of(in));
    assert_true(got.has_value());
    const auto narrowed = values_of<std::int32_t>(*got);
    assert_true((narrowed == std::vector<std::int32_t>{0, -1, INT32_MAX, INT32_MIN, 7}));
}

void an_int64_outside_int32_is_refused_by_element(void**)
{
    const std::vector<std::int64_t> in{1, 2, std::int64_t{1} << 31};
    auto got = vo::to_graph(port(T::INT64, {3}), bytes_of(in));
    assert_false(got.has_value());
    assert_int_equal(static_cast<int>(got.error().code), static_cast<int>(Errc::out_of_bounds));
    assert_string_equal(got.error().note.c_str(),
                        "input 'x' element 2 holds 2147483648, outside INT32: the imported graph "
                        "carries INT64 as INT32; give values from -2147483648 to 2147483647");
    const std::vector<std::uint64_t> big{~std::uint64_t{0}};
    auto unsigned_big = vo::to_graph(port(T::UINT64, {1}), bytes_of(big));
    assert_false(unsigned_big.has_value());
    assert_non_null(std::strstr(unsigned_big.error().note.c_str(), "holds 18446744073709551615"));
}

void small_integers_widen_and_results_wrap_to_the_output_type(void**)
{
    const std::vector<std::uint8_t> in{0, 200, 255};
    auto widened = vo::to_graph(port(T::UINT8, {3}), bytes_of(in));
    assert_true(widened.has_value());
    assert_true((values_of<std::int32_t>(*widened) == std::vector<std::int32_t>{0, 200, 255}));
    // uint8 200 + 100 as the graph computes it in INT32: 300, written back as 44.
    auto wrapped = vo::from_graph(port(T::UINT8, {2}), bytes_of(std::vector<std::int32_t>{300, -1}));
    assert_true(wrapped.has_value());
    assert_true((values_of<std::uint8_t>(*wrapped) == std::vector<std::uint8_t>{44, 255}));
    auto signed_wide = vo::from_graph(port(T::INT64, {2}), bytes_of(std::vector<std::int32_t>{-1, 5}));
    assert_true(signed_wide.has_value());
    assert_true((values_of<std::int64_t>(*signed_wide) == std::vector<std::int64_t>{-1, 5}));
    auto unsigned_wide = vo::from_graph(port(T::UINT32, {1}), bytes_of(std::vector<std::int32_t>{-1}));
    assert_true(unsigned_wide.has_value());
    assert_true((values_of<std::uint32_t>(*unsigned_wide) == std::vector<std::uint32_t>{UINT32_MAX}));
}

void floats_and_bools_cross_unchanged(void**)
{
    const std::vector<float> f{1.5f, -0.0f};
    auto got = vo::to_graph(port(T::FLOAT, {2}), bytes_of(f));
    assert_true(got.has_value());
    assert_true(*got == bytes_of(f));
    const std::vector<std::uint8_t> b{1, 0, 1};
    auto back = vo::from_graph(port(T::BOOL, {3}), bytes_of(b));
    assert_true(back.has_value());
    assert_true(*back == bytes_of(b));
}

void sizes_that_do_not_match_are_refused(void**)
{
    auto short_input = vo::to_graph(port(T::INT64, {2, 2}), bytes_of(std::vector<std::int64_t>{1, 2, 3}));
    assert_false(short_input.has_value());
    assert_string_equal(short_input.error().note.c_str(),
                        "input 'x': 24 bytes given; its 4 elements take 32 bytes as INT64");
    auto long_output = vo::from_graph(port(T::INT64, {1}), bytes_of(std::vector<std::int32_t>{1, 2}));
    assert_false(long_output.has_value());
    assert_string_equal(long_output.error().note.c_str(),
                        "output 'x': 8 bytes given; its 1 elements take 4 bytes as the graph holds "
                        "them");
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_type_has_its_carrier_or_none),
        cmocka_unit_test(int64_inputs_are_narrowed_exactly),
        cmocka_unit_test(an_int64_outside_int32_is_refused_by_element),
        cmocka_unit_test(small_integers_widen_and_results_wrap_to_the_output_type),
        cmocka_unit_test(floats_and_bools_cross_unchanged),
        cmocka_unit_test(sizes_that_do_not_match_are_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
