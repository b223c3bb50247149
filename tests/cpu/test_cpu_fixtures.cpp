// test_cpu_fixtures.cpp - real TOSA 1.0 files (tests/fixtures/tosa/SOURCES.md names their sources).
//
// Inputs and the expected output are .npy files (little-endian float32,
// C order); the reader below checks the header names exactly that. The
// INT8 MAX_POOL2D file has no data: its input and expected output are made
// in the test.
#include <fstream>
#include <iterator>
#include <string>

#include "cpu_test_support.hpp"

using namespace cpu_test;

namespace {

std::vector<char> slurp(const std::string& path)
{
    std::ifstream file(path, std::ios::binary);
    if (!file) fail_msg("cannot open %s", path.c_str());
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// A version 1.0 .npy file of '<f4' in C order.
std::vector<float> read_npy(const std::string& path)
{
    const std::vector<char> bytes = slurp(path);
    assert_true(bytes.size() >= 10);
    assert_memory_equal(bytes.data(), "\x93NUMPY\x01\x00", 8);
    const std::size_t header = static_cast<unsigned char>(bytes[8]) |
                               static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    const std::string dict(bytes.data() + 10, header);
    assert_true(dict.find("'descr': '<f4'") != std::string::npos);
    assert_true(dict.find("'fortran_order': False") != std::string::npos);
    const std::size_t start = 10 + header;
    std::vector<float> values((bytes.size() - start) / sizeof(float));
    std::memcpy(values.data(), bytes.data() + start, values.size() * sizeof(float));
    return values;
}

std::unique_ptr<Program> load_file(Rig& rig, const std::string& path)
{
    const std::vector<char> bytes = slurp(path);
    ProgramDesc desc;
    desc.payload = std::as_bytes(std::span(bytes));
    auto program = rig.backend->load_program(*rig.context, desc);
    assert_ok(program);
    return std::move(*program);
}

const std::string fixtures = VACCEL_TOSA_FIXTURES;

void add_fixture_matches_tflite_exactly(void**)
{
    Rig rig;
    const std::string dir = fixtures + "/v1.0-add_1x4x4x4_f32";
    auto program = load_file(rig, dir + "/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa");
    const auto slots = program->slots();
    assert_int_equal(slots.size(), 3);
    assert_int_equal(slots[0].bytes, 1 * 4 * 4 * 1 * 4);
    assert_int_equal(slots[1].bytes, 1 * 4 * 4 * 4 * 4);
    const auto outputs =
        rig.run(*program, {read_npy(dir + "/placeholder_0.npy"), read_npy(dir + "/placeholder_1.npy")});
    assert_exactly(outputs[0], read_npy(dir + "/tflite_result.npy"));
    rig.finish(program);
}

void conv2d_fixture_matches_tflite(void**)
{
    Rig rig;
    const std::string dir = fixtures + "/v1.0-conv2d_1x1_1x32x32x8_f32";
    auto program = load_file(
        rig, dir + "/flatbuffer-tflite/test_conv2d_1x1_1x32x32x8_f32_st11_padSAME_dilat11.tosa");
    const auto outputs = rig.run(*program, {read_npy(dir + "/placeholder_0.npy")});
    // TFLite sums the eight products in its own order.
    assert_close(outputs[0], read_npy(dir + "/tflite_result.npy"), 1e-5f);
    rig.finish(program);
}

// MAX_POOL2D on INT8, 2x2 kernel, stride 2, [1,16,16,16] -> [1,8,8,16]; the
// file carries no data, so the input is made here. in(y,x,c) = 7y + 3x + c
// - 100 (-100..65) grows with y and x, so each window's maximum is its
// bottom-right element: out(oy,ox,c) = in(2oy+1, 2ox+1, c) = 14oy + 6ox +
// c - 90. The negated ramp 65 - (7y + 3x + c) peaks at the top-left
// instead: out = in(2oy, 2ox, c) = 65 - (14oy + 6ox + c).
void maxpool2d_int8_fixture_gives_the_window_maxima(void**)
{
    Rig rig;
    auto program = load_file(rig, fixtures + "/v1.0-maxpool2d_int8/simple_maxpool2d.tosa");
    const auto slots = program->slots();
    assert_int_equal(slots.size(), 2);
    assert_int_equal(slots[0].dtype, static_cast<std::uint32_t>(DType::int8));
    assert_int_equal(slots[0].bytes, 16 * 16 * 16);
    assert_int_equal(slots[1].dtype, static_cast<std::uint32_t>(DType::int8));
    assert_int_equal(slots[1].bytes, 8 * 8 * 16);
    for (const bool rising : {true, false}) {
        std::vector<std::int8_t> in;
        for (int y = 0; y < 16; ++y)
            for (int x = 0; x < 16; ++x)
                for (int c = 0; c < 16; ++c)
                    in.push_back(static_cast<std::int8_t>(rising ? 7 * y + 3 * x + c - 100
                                                                 : 65 - (7 * y + 3 * x + c)));
        std::vector<std::int8_t> want;
        for (int oy = 0; oy < 8; ++oy)
            for (int ox = 0; ox < 8; ++ox)
                for (int c = 0; c < 16; ++c)
                    want.push_back(static_cast<std::int8_t>(rising ? 14 * oy + 6 * ox + c - 90
                                                                   : 65 - (14 * oy + 6 * ox + c)));
        const auto out = rig.run_raw(*program, {std::as_bytes(std::span(in))});
        assert_int_equal(out[0].size(), want.size());
        assert_memory_equal(out[0].data(), want.data(), want.size());
    }
    rig.finish(program);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(add_fixture_matches_tflite_exactly),
        cmocka_unit_test(conv2d_fixture_matches_tflite),
        cmocka_unit_test(maxpool2d_int8_fixture_gives_the_window_maxima),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
