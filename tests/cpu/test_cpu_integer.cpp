// test_cpu_integer.cpp - TOSA 1.0's integer elementwise operators on the CPU
// backend (RESCALE, TABLE, integer MUL, INTDIV, the shifts, the bitwise
// operators, CLZ, ABS, NEGATE, CLAMP, SELECT, the integer reductions and
// ARGMAX), through the Backend interface only.
//
// Expected values are derived by hand in the comment beside them; RESCALE's
// sweeps compare with rescale_reference() below, the specification's formula
// evaluated with 128-bit integers and a floor division (not the kernel's
// shift). Everything here is exact.
#include <limits>

#include "raw_run_support.hpp"

using namespace cpu_test;

namespace {

using Shape = std::vector<std::int64_t>;
constexpr std::int32_t int32_min = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t int32_max = std::numeric_limits<std::int32_t>::max();

// `value` as the little-endian bytes of one element of `dtype` (its low bits).
Bytes element_bytes_of(DType dtype, std::int64_t value)
{
    const std::size_t size = tosa::dtype_bytes(dtype);
    Bytes bytes(size);
    for (std::size_t k = 0; k < size; ++k)
        bytes[k] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(value) >> (8 * k));
    return bytes;
}

// A constant of integer `dtype` written by a CONST operator.
std::uint32_t int_constant(tosa::GraphBuilder& g, const char* name, Shape shape, DType dtype,
                           const std::vector<std::int64_t>& values)
{
    Bytes data;
    for (std::int64_t v : values) {
        const Bytes one = element_bytes_of(dtype, v);
        data.insert(data.end(), one.begin(), one.end());
    }
    const std::uint32_t t = g.tensor(name, std::move(shape), dtype, data);
    g.op(Op::const_, {}, {t});
    return t;
}

// ------------------------------------------------------------------ RESCALE

struct Rescale {
    DType from = DType::int8;
    DType to = DType::int8;
    Shape shape;
    std::vector<std::int64_t> multiplier;
    std::vector<std::int64_t> shift;
    std::int64_t input_zp = 0;
    std::int64_t output_zp = 0;
    bool scale32 = true;
    std::uint32_t rounding_mode = 1;  // SINGLE_ROUND
    bool per_channel = false;
    bool input_unsigned = false;
    bool output_unsigned = false;
    DType multiplier_dtype = DType::unknown;  // unknown: INT32 with scale32, else INT16
    bool multiplier_input = false;            // the multiplier a graph input (not constant)
};

tosa::Graph rescale_graph(const Rescale& r)
{
    tosa::GraphBuilder g;
    const auto input = g.tensor("input", r.shape, r.from);
    const DType multiplier_dtype = r.multiplier_dtype != DType::unknown ? r.multiplier_dtype
                                   : r.scale32                         ? DType::int32
                                                                       : DType::int16;
    const Shape channels{static_cast<std::int64_t>(r.multiplier.size())};
    const auto multiplier =
        r.multiplier_input ? g.tensor("multiplier", channels, multiplier_dtype)
                           : int_constant(g, "multiplier", channels, multiplier_dtype, r.multiplier);
    const auto shift = int_constant(g, "shift", {static_cast<std::int64_t>(r.shift.size())},
                                    DType::int8, r.shift);
    const auto input_zp = int_constant(g, "input_zp", {1}, r.from, {r.input_zp});
    const auto output_zp = int_constant(g, "output_zp", {1}, r.to, {r.output_zp});
    const auto out = g.tensor("out", r.shape, r.to);
    tosa::Attributes a;
    a.scale32 = r.scale32;
    a.rounding_mode = r.rounding_mode;
    a.per_channel = r.per_channel;
    a.input_unsigned = r.input_unsigned;
    a.output_unsigned = r.output_unsigned;
    g.op(Op::rescale, {input, multiplier, shift, input_zp, output_zp}, {out}, a);
    g.input(input);
    if (r.multiplier_input) g.input(multiplier);
    g.output(out);
    return g.finish();
}

// Values of `dtype` as slot bytes.
Bytes values_of(DType dtype, const std::vector<std::int64_t>& values)
{
    Bytes bytes;
    for (std::int64_t v : values) {
        const Bytes one = element_bytes_of(dtype, v);
        bytes.insert(bytes.end(), one.begin(), one.end());
    }
    return bytes;
}

// Slot bytes of `dtype` read back as signed values.
std::vector<std::int64_t> read_values(DType dtype, const Bytes& bytes)
{
    std::vector<std::int64_t> values;
    switch (dtype) {
    case DType::int8:
        for (auto v : from_bytes<std::int8_t>(bytes)) values.push_back(v);
        break;
    case DType::int16:
        for (auto v : from_bytes<std::int16_t>(bytes)) values.push_back(v);
        break;
    default:
        for (auto v : from_bytes<std::int32_t>(bytes)) values.push_back(v);
        break;
    }
    return values;
}

void assert_values(const std::vector<std::int64_t>& got, const std::vector<std::int64_t>& want)
{
    assert_int_equal(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i])
            fail_msg("element %zu: got %lld, want %lld", i, static_cast<long long>(got[i]),
                     static_cast<long long>(want[i]));
}

std::vector<std::int64_t> run_rescale(const Rescale& r, const std::vector<std::int64_t>& input)
{
    Rig rig;
    auto program = rig.must_load(rescale_graph(r));
    const auto out = run_ok(rig, *program, {values_of(r.from, input)});
    rig.finish(program);
    return read_values(r.to, out[0]);
}

// TOSA 1.0 apply_scale_32 / apply_scale_16 of a zero-point-adjusted value,
// written from the specification's formula: (value * multiplier + round) /
// 2^shift rounded down, with exact 128-bit arithmetic and a floor division.
std::int64_t rescale_reference(std::int64_t value, std::int64_t multiplier, int shift,
                               bool double_round)
{
    __int128 round = static_cast<__int128>(1) << (shift - 1);
    if (double_round && shift > 31)
        round += value >= 0 ? (static_cast<__int128>(1) << 30) : -(static_cast<__int128>(1) << 30);
    const __int128 total = static_cast<__int128>(value) * multiplier + round;
    const __int128 divisor = static_cast<__int128>(1) << shift;
    __int128 quotient = total / divisor;  // truncates toward zero
    if (total % divisor != 0 && total < 0) --quotient;
    return static_cast<std::int64_t>(quotient);
}

void rescale_halves_round_half_up(void**)
{
    // multiplier 2^30, shift 31: x / 2 rounded with round = 2^30, i.e.
    // floor((x + 1) / 2): ties go up (toward +infinity), -1.5 -> -1, -0.5 -> 0.
    Rescale r;
    r.shape = {9};
    r.multiplier = {1 << 30};
    r.shift = {31};
    // -128 -> floor(-127/2) = -64; -3 -> -1; -2 -> floor(-1/2) = -1; -1 -> 0;
    // 0 -> 0; 1 -> 1; 2 -> floor(3/2) = 1; 3 -> 2; 127 -> 64.
    assert_values(run_rescale(r, {-128, -3, -2, -1, 0, 1, 2, 3, 127}),
                  {-64, -1, -1, 0, 0, 1, 1, 2, 64});
}

void rescale_saturates_at_both_ends(void**)
{
    // multiplier 2^30, shift 28: x * 4. 127 * 4 = 508 -> 127, -128 * 4 = -512
    // -> -128; 31 -> 124; 32 -> 128 -> 127; -32 -> -128; -33 -> -132 -> -128.
    Rescale r;
    r.shape = {6};
    r.multiplier = {1 << 30};
    r.shift = {28};
    assert_values(run_rescale(r, {127, -128, 31, 32, -32, -33}), {127, -128, 124, 127, -128, -128});
    // INT32 -> INT16 at scale 1 (2^30, 30): clipped to [-32768, 32767].
    r.from = DType::int32;
    r.to = DType::int16;
    r.shift = {30};
    assert_values(run_rescale(r, {int32_max, int32_min, 32767, 32768, -32768, -32769}),
                  {32767, -32768, 32767, 32767, -32768, -32768});
}

void rescale_zero_points(void**)
{
    // INT8 -> INT8, input_zp -3, output_zp 5, scale 1/2:
    // floor((x + 3 + 1) / 2) + 5. -128 -> floor(-124/2) + 5 = -57; -4 ->
    // floor(0/2) + 5 = 5; -5 -> floor(-1/2) + 5 = 4; 125 -> 64 + 5 = 69;
    // 127 -> 65 + 5 = 70.
    Rescale r;
    r.shape = {5};
    r.multiplier = {1 << 30};
    r.shift = {31};
    r.input_zp = -3;
    r.output_zp = 5;
    assert_values(run_rescale(r, {-128, -4, -5, 125, 127}), {-57, 5, 4, 69, 70});
}

void rescale_double_round_differs_from_single_round(void**)
{
    // INT32 -> INT32, multiplier 2^30, shift 33: x / 8. SINGLE_ROUND adds 1/2
    // then floors; DOUBLE_ROUND adds 1/2 + 1/8 for x >= 0 and 1/2 - 1/8 below.
    // 11 (1.375): single floor(1.875) = 1, double floor(2.0) = 2.
    // -12 (-1.5): single floor(-1.0) = -1, double floor(-1.125) = -2.
    // 12 (1.5): 2 and 2. -11 (-1.375): floor(-0.875) = -1 and floor(-1.0) = -1.
    // 3 (0.375): floor(0.875) = 0 and floor(1.0) = 1.
    Rescale r;
    r.from = DType::int32;
    r.to = DType::int32;
    r.shape = {5};
    r.multiplier = {1 << 30};
    r.shift = {33};
    const std::vector<std::int64_t> input{11, -12, 12, -11, 3};
    assert_values(run_rescale(r, input), {1, -1, 2, -1, 0});
    r.rounding_mode = 3;  // DOUBLE_ROUND
    assert_values(run_rescale(r, input), {2, -2, 2, -1, 1});
    // With shift <= 31 DOUBLE_ROUND adds nothing: 2^29 and shift 30 is x / 2.
    r.shape = {3};
    r.multiplier = {1 << 29};
    r.shift = {30};
    assert_values(run_rescale(r, {3, -3, 5}), {2, -1, 3});  // floor(x/2 + 1/2)
}

void rescale_per_channel_uses_the_last_dimension(void**)
{
    // [2,3] INT32 -> INT8; channel 0: 2^30 >> 31 (1/2), channel 1: 2^30 >> 30
    // (1), channel 2: 3 * 2^29 >> 29 (3).
    // Row 0: 10 -> floor(5.5) = 5; -7 -> -7; 50 -> 150 -> 127.
    // Row 1: -3 -> floor(-1.5 + 0.5) = -1; 100 -> 100; -50 -> -150 -> -128.
    Rescale r;
    r.from = DType::int32;
    r.shape = {2, 3};
    r.per_channel = true;
    r.multiplier = {1 << 30, 1 << 30, 3 << 29};
    r.shift = {31, 30, 29};
    assert_values(run_rescale(r, {10, -7, 50, -3, 100, -50}), {5, -7, 127, -1, 100, -128});
}

void rescale_unsigned_input_and_output(void**)
{
    // input_unsigned INT8 with zp 128 (stored as byte 0x80) to signed INT8 at
    // scale 1: bytes 0xFF (255) -> 127, 0x00 -> -128, 0x80 -> 0, 0x81 -> 1.
    Rescale r;
    r.shape = {4};
    r.multiplier = {1 << 30};
    r.shift = {30};
    r.input_unsigned = true;
    r.input_zp = -128;  // the byte 0x80
    assert_values(run_rescale(r, {-1, 0, -128, -127}), {127, -128, 0, 1});
    // Signed INT16 to output_unsigned INT8 with zp 128 (0x80) at scale 1:
    // -128 -> 0; 127 -> 255 (read back signed: -1); -200 -> -72 -> 0;
    // 200 -> 328 -> 255 (-1); 0 -> 128 (-128).
    Rescale u;
    u.from = DType::int16;
    u.shape = {5};
    u.multiplier = {1 << 30};
    u.shift = {30};
    u.output_unsigned = true;
    u.output_zp = -128;
    assert_values(run_rescale(u, {-128, 127, -200, 200, 0}), {0, -1, 0, -1, -128});
    // input_unsigned INT16 with zp 32768 (0x8000) to INT16: 0xFFFF (65535)
    // -> 32767, 0 -> -32768, 0x8000 -> 0.
    Rescale w;
    w.from = DType::int16;
    w.to = DType::int16;
    w.shape = {3};
    w.multiplier = {1 << 30};
    w.shift = {30};
    w.input_unsigned = true;
    w.input_zp = -32768;
    assert_values(run_rescale(w, {-1, 0, -32768}), {32767, -32768, 0});
}

void rescale_int16_multiplier_without_scale32(void**)
{
    // scale32 false: INT16 multiplier 2^14, shift 15: x / 2 rounded up at
    // ties. -32768 -> floor(-32767/2) = -16384; -3 -> -1; 3 -> 2;
    // 32767 -> 16384.
    Rescale r;
    r.from = DType::int16;
    r.to = DType::int16;
    r.shape = {4};
    r.scale32 = false;
    r.multiplier = {1 << 14};
    r.shift = {15};
    assert_values(run_rescale(r, {-32768, -3, 3, 32767}), {-16384, -1, 2, 16384});
}

// Every INT32 -> INT32 channel of a sweep against rescale_reference(),
// saturated to INT32 (the backend's result where TOSA's REQUIREs fail: the
// exact scaled value, saturated), with SINGLE_ROUND and DOUBLE_ROUND.
void rescale_sweep_matches_the_reference(void**)
{
    const std::vector<std::int64_t> multipliers{0,       1,          1 << 30,  int32_max,
                                                12345,   1 << 20,    999999,   1518500250};
    const std::vector<std::int64_t> shifts{2, 13, 30, 31, 32, 40, 55, 62};
    const std::int64_t channels = 8;
    const std::int64_t rows = 24;
    std::vector<std::int64_t> input;
    std::uint64_t state = 0x9E3779B97F4A7C15ull;
    for (std::int64_t i = 0; i < rows * channels; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const auto random = static_cast<std::int32_t>(state >> 32);
        // Extremes, small values and random ones, each scaled down by a
        // random shift so that most stay within TOSA's REQUIREs.
        const std::int64_t pick = i / channels;
        input.push_back(pick == 0   ? int32_min
                        : pick == 1 ? int32_max
                        : pick == 2 ? -1
                        : pick == 3 ? 0
                                    : random >> (state >> 59));
    }
    for (const std::uint32_t mode : {1u, 3u}) {
        Rescale r;
        r.from = DType::int32;
        r.to = DType::int32;
        r.shape = {rows, channels};
        r.per_channel = true;
        r.multiplier = multipliers;
        r.shift = shifts;
        r.rounding_mode = mode;
        std::vector<std::int64_t> want;
        for (std::size_t i = 0; i < input.size(); ++i) {
            const std::size_t c = i % channels;
            const std::int64_t exact = rescale_reference(input[i], multipliers[c],
                                                         static_cast<int>(shifts[c]), mode == 3);
            want.push_back(std::clamp<std::int64_t>(exact, int32_min, int32_max));
        }
        assert_values(run_rescale(r, input), want);
    }
}

// A quantized ADD as TFLite lowers it: RESCALE both INT8 inputs to INT32,
// ADD, RESCALE back to INT8 (intermediates in the arena).
void rescale_add_rescale_chain(void**)
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {4}, DType::int8);
    const auto y = g.tensor("y", {4}, DType::int8);
    const auto out = g.tensor("out", {4}, DType::int8);
    const auto one = int_constant(g, "one", {1}, DType::int32, {1 << 30});
    const auto half = int_constant(g, "half", {1}, DType::int32, {1 << 30});
    const auto shift30 = int_constant(g, "shift30", {1}, DType::int8, {30});
    const auto shift31 = int_constant(g, "shift31", {1}, DType::int8, {31});
    const auto x_zp = int_constant(g, "x_zp", {1}, DType::int8, {-5});
    const auto zero8 = int_constant(g, "zero8", {1}, DType::int8, {0});
    const auto zero32 = int_constant(g, "zero32", {1}, DType::int32, {0});
    const auto out_zp = int_constant(g, "out_zp", {1}, DType::int8, {3});
    const auto x32 = g.tensor("x32", {4}, DType::int32);
    const auto y32 = g.tensor("y32", {4}, DType::int32);
    const auto sum = g.tensor("sum", {4}, DType::int32);
    tosa::Attributes a;
    a.scale32 = true;
    a.rounding_mode = 1;
    g.op(Op::rescale, {x, one, shift30, x_zp, zero32}, {x32}, a);
    g.op(Op::rescale, {y, one, shift30, zero8, zero32}, {y32}, a);
    g.op(Op::add, {x32, y32}, {sum});
    g.op(Op::rescale, {sum, half, shift31, zero32, out_zp}, {out}, a);
    g.input(x);
    g.input(y);
    g.output(out);
    Rig rig;
    auto program = rig.must_load(g.finish());
    // x - (-5) = {-123, 5, 105, 132}; + y = {-113, -5, 132, 259};
    // floor((s + 1) / 2) + 3 = {-56 + 3, -2 + 3, 66 + 3, 130 + 3 -> 127}.
    const auto got = run_ok(rig, *program, {values_of(DType::int8, {-128, 0, 100, 127}),
                                            values_of(DType::int8, {10, -10, 27, 127})});
    assert_values(read_values(DType::int8, got[0]), {-53, 1, 69, 127});
    rig.finish(program);
}

void rescale_refusals(void**)
{
    Rig rig;
    Rescale base;
    base.shape = {2};
    base.multiplier = {1 << 30};
    base.shift = {31};
    const auto refused = [&](Rescale r, std::uint32_t reason, const char* note) {
        assert_malformed(rig.load(rescale_graph(r)), reason, note);
    };
    Rescale r = base;
    r.scale32 = false;
    r.multiplier = {1 << 14};
    r.rounding_mode = 3;
    refused(r, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 4 (RESCALE): TOSA 1.0 forbids DOUBLE_ROUND without scale32");
    r = base;
    r.shift = {1};
    refused(r, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 4 (RESCALE): channel 0 has multiplier 1073741824 and shift 1; TOSA 1.0 "
            "requires multiplier >= 0 and 2 <= shift <= 62");
    r.shift = {63};
    refused(r, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 4 (RESCALE): channel 0 has multiplier 1073741824 and shift 63; TOSA 1.0 "
            "requires multiplier >= 0 and 2 <= shift <= 62");
    r = base;
    r.multiplier = {-1};
    refused(r, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 4 (RESCALE): channel 0 has multiplier -1 and shift 31; TOSA 1.0 requires "
            "multiplier >= 0 and 2 <= shift <= 62");
    r = base;
    r.input_unsigned = r.output_unsigned = true;
    refused(r, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 4 (RESCALE): TOSA 1.0 forbids input_unsigned and output_unsigned "
            "together");
    r = base;
    r.to = DType::int32;
    r.input_unsigned = true;
    refused(r, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 4 (RESCALE): TOSA 1.0 forbids input_unsigned or output_unsigned with an "
            "INT32 input or output");
    r = base;
    r.from = DType::int16;
    r.input_zp = 1;
    refused(r, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 4 (RESCALE): input_zp 'input_zp' is 1; TOSA 1.0 allows a non-zero zero "
            "point only for INT8, and 32768 for unsigned INT16");
    r.input_unsigned = true;
    r.input_zp = 100;
    refused(r, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 4 (RESCALE): input_zp 'input_zp' is 100; TOSA 1.0 allows a non-zero zero "
            "point only for INT8, and 32768 for unsigned INT16");
    r = base;
    r.to = DType::int32;
    r.output_zp = 7;
    refused(r, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 4 (RESCALE): output_zp 'output_zp' is 7; TOSA 1.0 allows a non-zero zero "
            "point only for INT8, and 32768 for unsigned INT16");
    r = base;
    r.multiplier_dtype = DType::int16;
    refused(r, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 4 (RESCALE): multiplier 'multiplier' is INT16; TOSA 1.0 takes INT32 with "
            "scale32 and INT16 without");
    r = base;
    r.per_channel = true;  // shape [2] needs two multipliers and shifts
    refused(r, VACCEL_TOSA_BAD_SHAPE,
            "operator 4 (RESCALE): multiplier 'multiplier' is [1]; per_channel needs [2]");
    r = base;
    r.rounding_mode = 0;
    refused(r, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 4 (RESCALE): rounding_mode 0 is none of SINGLE_ROUND (1), INEXACT_ROUND "
            "(2), DOUBLE_ROUND (3)");
    r = base;
    r.multiplier_input = true;
    refused(r, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 3 (RESCALE): multiplier 'multiplier' must be a constant");
    // INEXACT_ROUND is an extension the backend does not run.
    r = base;
    r.rounding_mode = 2;
    auto inexact = rig.load(rescale_graph(r));
    assert_refused(inexact, Errc::unsupported, VACCEL_D_TOSA_OPERATOR,
                   static_cast<std::uint32_t>(Op::rescale),
                   static_cast<std::uint32_t>(DType::int8));
    assert_string_equal(inexact.error().note.c_str(),
                        "operator 4 (RESCALE): rounding_mode INEXACT_ROUND (TOSA 1.0 extension "
                        "EXT-INEXACTROUND) is not supported by the CPU backend; use SINGLE_ROUND "
                        "or DOUBLE_ROUND");
    rig.finish();
}

// -------------------------------------------------------------------- TABLE

tosa::Graph table_graph(DType from, Shape shape, const std::vector<std::int64_t>& entries)
{
    tosa::GraphBuilder g;
    const auto input = g.tensor("input", shape, from);
    const auto table = int_constant(g, "table", {static_cast<std::int64_t>(entries.size())},
                                    from, entries);
    const auto out = g.tensor("out", shape, from == DType::int8 ? DType::int8 : DType::int32);
    g.op(Op::table, {input, table}, {out});
    g.input(input);
    g.output(out);
    return g.finish();
}

void table_int8_indexes_by_value_plus_128(void**)
{
    // table[k] = 127 - k, so out = table[x + 128] = -1 - x.
    std::vector<std::int64_t> entries;
    for (std::int64_t k = 0; k < 256; ++k) entries.push_back(127 - k);
    Rig rig;
    auto program = rig.must_load(table_graph(DType::int8, {5}, entries));
    const auto out = run_ok(rig, *program, {values_of(DType::int8, {-128, 127, 0, 5, -1})});
    assert_values(read_values(DType::int8, out[0]), {127, -128, -1, -6, 0});
    rig.finish(program);
}

void table_int16_interpolates_513_entries(void**)
{
    Rig rig;
    // A linear table k * 64 - 16384 interpolates exactly: with b = x + 32768,
    // (b >> 7) * 64 * 128 - 16384 * 128 + 64 * (b & 127) = 64 b - 2^21 = 64 x.
    std::vector<std::int64_t> linear;
    for (std::int64_t k = 0; k < 513; ++k) linear.push_back(k * 64 - 16384);
    auto program = rig.must_load(table_graph(DType::int16, {5}, linear));
    auto out = run_ok(rig, *program, {values_of(DType::int16, {-32768, 32767, -1, 0, 100})});
    assert_values(read_values(DType::int32, out[0]), {-2097152, 2097088, -64, 0, 6400});
    assert_ok(rig.backend->unload_program(program));
    // A step: table[256] = 1000, table[257] = -1000, table[512] = 32767.
    // x = 0: entry 256, fraction 0 -> 1000 * 128 = 128000; x = 1: 128000 +
    // (-2000) * 1 = 126000; x = 127: 128000 - 2000 * 127 = -126000; x = 128:
    // entry 257 -> -128000; x = -1: entry 255 (0), fraction 127, next 1000 ->
    // 127000; x = 32767: entry 511 (0), fraction 127, next 32767 -> 4161409.
    std::vector<std::int64_t> step(513, 0);
    step[256] = 1000;
    step[257] = -1000;
    step[512] = 32767;
    program = rig.must_load(table_graph(DType::int16, {6}, step));
    out = run_ok(rig, *program, {values_of(DType::int16, {0, 1, 127, 128, -1, 32767})});
    assert_values(read_values(DType::int32, out[0]),
                  {128000, 126000, -126000, -128000, 127000, 4161409});
    rig.finish(program);
}

void table_refuses_a_table_of_the_wrong_length(void**)
{
    Rig rig;
    assert_malformed(rig.load(table_graph(DType::int8, {2}, std::vector<std::int64_t>(255, 0))),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 1 (TABLE): table 'table' is [255]; an INT8 input needs [256]");
    assert_malformed(rig.load(table_graph(DType::int16, {2}, std::vector<std::int64_t>(512, 0))),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 1 (TABLE): table 'table' is [512]; an INT16 input needs [513]");
    rig.finish();
}

// ------------------------------------------------------ binary operators

// a [shape_a] (op) b [shape_b] -> out, dtype `dtype` (MUL: INT32 out, with
// an INT8 shift constant).
tosa::Graph binary_graph(Op op, DType dtype, Shape shape_a, Shape shape_b, Shape shape_out,
                         tosa::Attributes attributes = {}, std::int64_t shift = 0)
{
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", std::move(shape_a), dtype);
    const auto b = g.tensor("b", std::move(shape_b), dtype);
    const auto out = g.tensor("out", std::move(shape_out), op == Op::mul ? DType::int32 : dtype);
    if (op == Op::mul) {
        const auto s = int_constant(g, "shift", {1}, DType::int8, {shift});
        g.op(op, {a, b, s}, {out}, attributes);
    } else {
        g.op(op, {a, b}, {out}, attributes);
    }
    g.input(a);
    g.input(b);
    g.output(out);
    return g.finish();
}

std::vector<std::int64_t> run_binary(Op op, DType dtype, const std::vector<std::int64_t>& a,
                                     const std::vector<std::int64_t>& b,
                                     tosa::Attributes attributes = {}, std::int64_t shift = 0)
{
    const Shape shape{static_cast<std::int64_t>(a.size())};
    Rig rig;
    auto program = rig.must_load(binary_graph(op, dtype, shape, shape, shape, attributes, shift));
    const auto out = run_ok(rig, *program, {values_of(dtype, a), values_of(dtype, b)});
    rig.finish(program);
    return read_values(op == Op::mul ? DType::int32 : dtype, out[0]);
}

// A submission that must fail while running, leaving its output untouched.
void assert_run_fails(Rig& rig, Program& program, const std::vector<Bytes>& inputs,
                      std::uint64_t op_index, std::uint64_t position, const char* note)
{
    const RawRun run = run_raw(rig, program, inputs);
    assert_int_equal(static_cast<unsigned>(run.status.state),
                     static_cast<unsigned>(EventState::failed));
    const Error& e = run.status.failure;
    if (e.code != Errc::invalid_argument || e.detail != VACCEL_D_EXECUTION ||
        e.arg0 != op_index || e.arg1 != position)
        fail_msg("got code %u detail %u arg0 %llu arg1 %llu (%s)", static_cast<unsigned>(e.code),
                 e.detail, static_cast<unsigned long long>(e.arg0),
                 static_cast<unsigned long long>(e.arg1), e.note.c_str());
    assert_string_equal(e.note.c_str(), note);
    for (const Bytes& output : run.outputs)
        for (std::uint8_t byte : output) assert_int_equal(byte, 0xA5);
}

void mul_widens_int8_and_int16_to_int32(void**)
{
    // Exact products: -128 * -128 = 16384, 127 * -128 = -16256, 0 * 5 = 0.
    assert_values(run_binary(Op::mul, DType::int8, {-128, 127, 0}, {-128, -128, 5}),
                  {16384, -16256, 0});
    // -32768 * -32768 = 2^30 = 1073741824; 32767 * -32768 = -1073709056.
    assert_values(run_binary(Op::mul, DType::int16, {-32768, 32767}, {-32768, -32768}),
                  {1073741824, -1073709056});
}

void mul_int32_rounds_by_its_shift_and_wraps(void**)
{
    // shift 0: the low 32 bits. 65536 * 65536 = 2^32 -> 0; 46341^2 =
    // 2147488281 -> 2147488281 - 2^32 = -2147479015; 3 * -5 = -15.
    assert_values(run_binary(Op::mul, DType::int32, {65536, 46341, 3}, {65536, 46341, -5}),
                  {0, -2147479015, -15});
    // shift 1: (p + 1) >> 1. 15 -> 8; -15 -> -7; 7 -> 4; -1 -> 0.
    assert_values(run_binary(Op::mul, DType::int32, {3, -3, 7, -1}, {5, 5, 1, 1}, {}, 1),
                  {8, -7, 4, 0});
    // shift 31: 6 * 2^30 -> (6 * 2^30 + 2^30) >> 31 = floor(3.5) = 3;
    // INT32_MIN * INT32_MIN = 2^62 -> (2^62 + 2^30) >> 31 = 2^31 -> wraps to
    // INT32_MIN.
    assert_values(run_binary(Op::mul, DType::int32, {6, int32_min}, {1 << 30, int32_min}, {}, 31),
                  {3, int32_min});
    // shift 63: 2^62 + 2^62 = 2^63 (past int64) >> 63 = 1.
    assert_values(run_binary(Op::mul, DType::int32, {int32_min}, {int32_min}, {}, 63), {1});
}

void mul_refuses_a_shift_tosa_forbids(void**)
{
    Rig rig;
    assert_malformed(rig.load(binary_graph(Op::mul, DType::int8, {2}, {2}, {2}, {}, 1)),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 1 (MUL): shift 'shift' is 1; TOSA 1.0 requires 0 for INT8 "
                     "operands");
    assert_malformed(rig.load(binary_graph(Op::mul, DType::int32, {2}, {2}, {2}, {}, 64)),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 1 (MUL): shift 'shift' is 64; TOSA 1.0 requires 0..63 for INT32 "
                     "operands");
    rig.finish();
}

void intdiv_truncates_toward_zero_with_broadcast(void**)
{
    // a [2,3] / b [1,3], b broadcast along the rows.
    Rig rig;
    auto program = rig.must_load(binary_graph(Op::intdiv, DType::int32, {2, 3}, {1, 3}, {2, 3}));
    // b = {2, -2, -1}. Row 0: 7/2 = 3, 7/-2 = -3, INT32_MIN/-1 = INT32_MIN.
    // Row 1: -7/2 = -3, -7/-2 = 3, INT32_MAX/-1 = -INT32_MAX.
    const auto out = run_ok(rig, *program,
                            {values_of(DType::int32, {7, 7, int32_min, -7, -7, int32_max}),
                             values_of(DType::int32, {2, -2, -1})});
    assert_values(read_values(DType::int32, out[0]), {3, -3, int32_min, -3, 3, -int32_max});
    // A zero divisor (element 4 of the output: b broadcast, b[1] = 0) fails
    // the submission.
    assert_run_fails(rig, *program,
                     {values_of(DType::int32, {1, 2, 3, 4, 5, 6}),
                      values_of(DType::int32, {1, 0, 1})},
                     0, 1,
                     "operator 0 (INTDIV): element 1 divides by zero; TOSA 1.0 INTDIV requires "
                     "a non-zero divisor; nothing was written to the outputs: fix the operand");
    rig.finish(program);
}

void arithmetic_right_shift_with_and_without_round(void**)
{
    // INT8: -128 >> 1 = -64; -128 >> 7 = -1; 127 >> 7 = 0; -1 >> 0 = -1;
    // 5 >> 1 = 2; 6 >> 2 = 1.
    const std::vector<std::int64_t> a{-128, -128, 127, -1, 5, -5, 6};
    const std::vector<std::int64_t> b{1, 7, 7, 0, 1, 1, 2};
    assert_values(run_binary(Op::arithmetic_right_shift, DType::int8, a, b),
                  {-64, -1, 0, -1, 2, -3, 1});
    // round adds the last bit shifted out: -128 >> 1 (bit 0) = -64; -128 >> 7
    // (bit 6 of 0x80: 0) = -1; 127 >> 7 (bit 6: 1) = 1; shift 0 adds nothing;
    // 5 >> 1 + 1 = 3; -5 >> 1 = -3, + 1 = -2; 6 >> 2 = 1, bit 1 of 6 is 1 -> 2.
    tosa::Attributes round;
    round.round = true;
    assert_values(run_binary(Op::arithmetic_right_shift, DType::int8, a, b, round),
                  {-64, -1, 1, -1, 3, -2, 2});
    // INT32: INT32_MIN >> 31 = -1; INT32_MAX >> 30 = 1.
    assert_values(run_binary(Op::arithmetic_right_shift, DType::int32, {int32_min, int32_max},
                             {31, 30}),
                  {-1, 1});
}

void logical_shifts_work_on_the_element_width(void**)
{
    // LEFT, INT8: 1 << 7 = 0x80 = -128; 3 << 7 = 0x180 -> 0x80 = -128;
    // -1 << 1 = -2. INT16: 1 << 15 = -32768.
    assert_values(run_binary(Op::logical_left_shift, DType::int8, {1, 3, -1}, {7, 7, 1}),
                  {-128, -128, -2});
    assert_values(run_binary(Op::logical_left_shift, DType::int16, {1}, {15}), {-32768});
    // RIGHT shifts in zeros: INT8 -128 (0x80) >> 7 = 1; -1 (0xFF) >> 1 = 127;
    // INT16 -1 >> 4 = 0x0FFF = 4095; INT32 -1 >> 28 = 15, INT32_MIN >> 31 = 1.
    assert_values(run_binary(Op::logical_right_shift, DType::int8, {-128, -1}, {7, 1}), {1, 127});
    assert_values(run_binary(Op::logical_right_shift, DType::int16, {-1}, {4}), {4095});
    assert_values(run_binary(Op::logical_right_shift, DType::int32, {-1, int32_min}, {28, 31}),
                  {15, 1});
}

void shift_amounts_outside_the_width_fail_the_submission(void**)
{
    Rig rig;
    auto program = rig.must_load(
        binary_graph(Op::arithmetic_right_shift, DType::int8, {3}, {3}, {3}));
    assert_run_fails(rig, *program, {values_of(DType::int8, {1, 2, 3}), values_of(DType::int8, {0, 7, 8})},
                     0, 2,
                     "operator 0 (ARITHMETIC_RIGHT_SHIFT): element 2 shifts by 8; TOSA 1.0 "
                     "requires a shift of 0 to 7 for INT8; nothing was written to the outputs: "
                     "fix the operand");
    assert_ok(rig.backend->unload_program(program));
    program = rig.must_load(binary_graph(Op::logical_left_shift, DType::int32, {2}, {2}, {2}));
    assert_run_fails(rig, *program, {values_of(DType::int32, {1, 2}), values_of(DType::int32, {-1, 0})},
                     0, 0,
                     "operator 0 (LOGICAL_LEFT_SHIFT): element 0 shifts by -1; TOSA 1.0 "
                     "requires a shift of 0 to 31 for INT32; nothing was written to the outputs: "
                     "fix the operand");
    assert_ok(rig.backend->unload_program(program));
    program = rig.must_load(binary_graph(Op::logical_right_shift, DType::int16, {1}, {1}, {1}));
    assert_run_fails(rig, *program, {values_of(DType::int16, {1}), values_of(DType::int16, {16})},
                     0, 0,
                     "operator 0 (LOGICAL_RIGHT_SHIFT): element 0 shifts by 16; TOSA 1.0 "
                     "requires a shift of 0 to 15 for INT16; nothing was written to the outputs: "
                     "fix the operand");
    rig.finish(program);
}

void bitwise_and_or_xor(void**)
{
    // 0x0F0F with 0x00FF: and 0x000F = 15, or 0x0FFF = 4095, xor 0x0FF0 =
    // 4080; -1 with 0x1234 = 4660: and 4660, or -1, xor ~0x1234 = -4661.
    const std::vector<std::int64_t> a{0x0F0F, -1};
    const std::vector<std::int64_t> b{0x00FF, 0x1234};
    assert_values(run_binary(Op::bitwise_and, DType::int16, a, b), {15, 4660});
    assert_values(run_binary(Op::bitwise_or, DType::int16, a, b), {4095, -1});
    assert_values(run_binary(Op::bitwise_xor, DType::int16, a, b), {4080, -4661});
    // INT8 and INT32: -128 & 127 = 0, -128 | 127 = -1.
    assert_values(run_binary(Op::bitwise_and, DType::int8, {-128}, {127}), {0});
    assert_values(run_binary(Op::bitwise_or, DType::int32, {int32_min}, {int32_max}), {-1});
}

// ------------------------------------------------------- unary operators

tosa::Graph unary_graph(Op op, DType dtype, Shape shape, tosa::Attributes attributes = {},
                        std::int64_t input_zp = 0, std::int64_t output_zp = 0)
{
    tosa::GraphBuilder g;
    const auto input = g.tensor("input", shape, dtype);
    const auto out = g.tensor("out", shape, dtype);
    if (op == Op::negate) {
        const auto in_zp = int_constant(g, "input1_zp", {1}, dtype, {input_zp});
        const auto out_zp = int_constant(g, "output_zp", {1}, dtype, {output_zp});
        g.op(op, {input, in_zp, out_zp}, {out}, attributes);
    } else {
        g.op(op, {input}, {out}, attributes);
    }
    g.input(input);
    g.output(out);
    return g.finish();
}

std::vector<std::int64_t> run_unary(Op op, DType dtype, const std::vector<std::int64_t>& input,
                                    tosa::Attributes attributes = {}, std::int64_t input_zp = 0,
                                    std::int64_t output_zp = 0)
{
    Rig rig;
    auto program = rig.must_load(unary_graph(op, dtype, {static_cast<std::int64_t>(input.size())},
                                             attributes, input_zp, output_zp));
    const auto out = run_ok(rig, *program, {values_of(dtype, input)});
    rig.finish(program);
    return read_values(dtype, out[0]);
}

void abs_bitwise_not_and_clz(void**)
{
    // ABS: INT32_MIN has no positive counterpart and wraps to itself.
    assert_values(run_unary(Op::abs, DType::int32, {-5, int32_min, int32_max, 0}),
                  {5, int32_min, int32_max, 0});
    // BITWISE_NOT: ~0 = -1; ~-128 = 127; ~0x12345678 = -0x12345679.
    assert_values(run_unary(Op::bitwise_not, DType::int8, {0, -128}), {-1, 127});
    assert_values(run_unary(Op::bitwise_not, DType::int32, {0x12345678}), {-0x12345679});
    // CLZ: 0 -> 32, 1 -> 31, -1 -> 0, 0x10000 -> 15, INT32_MAX -> 1.
    assert_values(run_unary(Op::clz, DType::int32, {0, 1, -1, 0x10000, int32_max}),
                  {32, 31, 0, 15, 1});
}

void negate_with_zero_points_saturates(void**)
{
    // INT8, input1_zp 10, output_zp -20: -20 - (x - 10). x = 10 -> -20;
    // x = 127 -> -137 -> -128; x = -128 -> 118; x = 0 -> -10.
    assert_values(run_unary(Op::negate, DType::int8, {10, 127, -128, 0}, {}, 10, -20),
                  {-20, -128, 118, -10});
    // Without zero points: -(-128) = 128 -> 127; INT16: -(-32768) -> 32767;
    // INT32: INT32_MIN wraps to itself.
    assert_values(run_unary(Op::negate, DType::int8, {-128, 127, 0}), {127, -127, 0});
    assert_values(run_unary(Op::negate, DType::int16, {-32768, 5}), {32767, -5});
    assert_values(run_unary(Op::negate, DType::int32, {int32_min, 5, int32_max}),
                  {int32_min, -5, -int32_max});
}

tosa::Attributes int_clamp_attr(DType dtype, std::int64_t min, std::int64_t max)
{
    tosa::Attributes a;
    a.min_val = element_bytes_of(dtype, min);
    a.max_val = element_bytes_of(dtype, max);
    a.nan_mode = 1;
    return a;
}

void clamp_on_int8_and_int16(void**)
{
    assert_values(run_unary(Op::clamp, DType::int8, {-128, -10, 0, 20, 127},
                            int_clamp_attr(DType::int8, -10, 20)),
                  {-10, -10, 0, 20, 20});
    assert_values(run_unary(Op::clamp, DType::int16, {-32768, 299, 32767},
                            int_clamp_attr(DType::int16, -300, 300)),
                  {-300, 299, 300});
}

void unary_refusals(void**)
{
    Rig rig;
    assert_malformed(rig.load(unary_graph(Op::negate, DType::int16, {2}, {}, 1, 0)),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (NEGATE): input1_zp 'input1_zp' is 1; TOSA 1.0 allows a "
                     "non-zero zero point only for INT8");
    assert_malformed(rig.load(unary_graph(Op::clamp, DType::int8, {2},
                                          int_clamp_attr(DType::int8, 5, 4))),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 0 (CLAMP): bounds [5, 4] need min <= max");
    // CLZ is INT32 only in TOSA 1.0.
    assert_refused(rig.load(unary_graph(Op::clz, DType::int8, {2})), Errc::unsupported,
                   VACCEL_D_TOSA_OPERATOR, static_cast<std::uint32_t>(Op::clz),
                   static_cast<std::uint32_t>(DType::int8));
    rig.finish();
}

// --------------------------------------------- selection and reductions

void select_on_integers_and_bool_with_broadcast(void**)
{
    for (const DType dtype : {DType::int8, DType::int16, DType::int32, DType::boolean}) {
        tosa::GraphBuilder g;
        const auto c = g.tensor("c", {2, 1}, DType::boolean);
        const auto a = g.tensor("a", {1, 3}, dtype);
        const auto b = g.tensor("b", {2, 3}, dtype);
        const auto out = g.tensor("out", {2, 3}, dtype);
        g.op(Op::select, {c, a, b}, {out});
        g.input(c);
        g.input(a);
        g.input(b);
        g.output(out);
        Rig rig;
        auto program = rig.must_load(g.finish());
        // Row 0 takes a (broadcast along rows), row 1 takes b.
        const bool boolean = dtype == DType::boolean;
        const std::vector<std::int64_t> a_values = boolean ? std::vector<std::int64_t>{1, 0, 1}
                                                           : std::vector<std::int64_t>{-1, 2, -3};
        const std::vector<std::int64_t> b_values =
            boolean ? std::vector<std::int64_t>{0, 1, 0, 0, 1, 1}
                    : std::vector<std::int64_t>{10, 20, 30, 40, 50, 60};
        const DType storage = boolean ? DType::int8 : dtype;
        const auto got = run_ok(rig, *program,
                                {Bytes{1, 0}, values_of(storage, a_values),
                                 values_of(storage, b_values)});
        assert_values(read_values(storage, got[0]),
                      boolean ? std::vector<std::int64_t>{1, 0, 1, 0, 1, 1}
                              : std::vector<std::int64_t>{-1, 2, -3, 40, 50, 60});
        rig.finish(program);
    }
}

std::vector<std::int64_t> run_reduce(Op op, DType in_dtype, DType out_dtype, Shape shape,
                                     Shape out_shape, std::int32_t axis,
                                     const std::vector<std::int64_t>& input)
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", shape, in_dtype);
    const auto out = g.tensor("out", out_shape, out_dtype);
    tosa::Attributes a = tosa::axis_attr(axis);
    a.nan_mode = 1;
    g.op(op, {x}, {out}, a);
    g.input(x);
    g.output(out);
    Rig rig;
    auto program = rig.must_load(g.finish());
    const auto got = run_ok(rig, *program, {values_of(in_dtype, input)});
    rig.finish(program);
    return read_values(out_dtype, got[0]);
}

void integer_reductions_and_argmax(void**)
{
    // REDUCE_SUM [2,3] along 1: INT32_MAX + 1 + 0 wraps to INT32_MIN; 1+2+3 = 6.
    assert_values(run_reduce(Op::reduce_sum, DType::int32, DType::int32, {2, 3}, {2, 1}, 1,
                             {int32_max, 1, 0, 1, 2, 3}),
                  {int32_min, 6});
    // REDUCE_MAX INT8 [2,2] along 0: max(-128, -100) = -100, max(5, -7) = 5.
    assert_values(run_reduce(Op::reduce_max, DType::int8, DType::int8, {2, 2}, {1, 2}, 0,
                             {-128, 5, -100, -7}),
                  {-100, 5});
    // REDUCE_MIN INT16 along 1: min(32767, -32768, 0) = -32768; min(7) = 7.
    assert_values(run_reduce(Op::reduce_min, DType::int16, DType::int16, {2, 3}, {2, 1}, 1,
                             {32767, -32768, 0, 7, 7, 7}),
                  {-32768, 7});
    // REDUCE_MAX INT32 of all INT32_MIN stays INT32_MIN.
    assert_values(run_reduce(Op::reduce_max, DType::int32, DType::int32, {2}, {1}, 0,
                             {int32_min, int32_min}),
                  {int32_min});
    // ARGMAX INT8 along 1: [-128, -128, -5] -> 2; [7, 7, 3] -> 0 (first);
    // [-128, -128, -128] -> 0.
    assert_values(run_reduce(Op::argmax, DType::int8, DType::int32, {3, 3}, {3}, 1,
                             {-128, -128, -5, 7, 7, 3, -128, -128, -128}),
                  {2, 0, 0});
    // ARGMAX INT16 along 0: columns [1, 300] -> 1, [-2, -3] -> 0.
    assert_values(run_reduce(Op::argmax, DType::int16, DType::int32, {2, 2}, {2}, 0,
                             {1, -2, 300, -3}),
                  {1, 0});
}


// Operator/dtype pairs TOSA 1.0 does not define are refused at load.
void pairs_tosa_does_not_define_are_refused(void**)
{
    Rig rig;
    const auto refused = [&](tosa::Graph graph, Op op, DType dtype) {
        auto loaded = rig.load(std::move(graph));
        assert_refused(loaded, Errc::unsupported, VACCEL_D_TOSA_OPERATOR,
                       static_cast<std::uint32_t>(op), static_cast<std::uint32_t>(dtype));
    };
    // ADD, INTDIV and the comparisons are INT32 only.
    refused(binary_graph(Op::add, DType::int8, {2}, {2}, {2}), Op::add, DType::int8);
    refused(binary_graph(Op::intdiv, DType::int16, {2}, {2}, {2}), Op::intdiv, DType::int16);
    // ABS is INT32 only; CLAMP is INT8 and INT16 only.
    refused(unary_graph(Op::abs, DType::int16, {2}), Op::abs, DType::int16);
    refused(unary_graph(Op::clamp, DType::int32, {2}, int_clamp_attr(DType::int32, 0, 1)),
            Op::clamp, DType::int32);
    // REDUCE_SUM is INT32 only; REDUCE_PRODUCT has no integer form.
    {
        tosa::GraphBuilder g;
        const auto x = g.tensor("x", {2}, DType::int8);
        const auto out = g.tensor("out", {1}, DType::int8);
        g.op(Op::reduce_sum, {x}, {out}, tosa::axis_attr(0));
        g.input(x);
        g.output(out);
        refused(g.finish(), Op::reduce_sum, DType::int8);
    }
    {
        tosa::GraphBuilder g;
        const auto x = g.tensor("x", {2}, DType::int32);
        const auto out = g.tensor("out", {1}, DType::int32);
        g.op(Op::reduce_product, {x}, {out}, tosa::axis_attr(0));
        g.input(x);
        g.output(out);
        refused(g.finish(), Op::reduce_product, DType::int32);
    }
    rig.finish();
}

// ------------------------------------------------------------ data layout

// TRANSPOSE, SLICE, PAD, TILE, REVERSE and CONCAT of x = [[x0, x1, x2],
// [x3, x4, x5]] move elements of any stored dtype bit for bit.
void data_layout_on_every_stored_dtype(void**)
{
    struct Case {
        DType dtype;
        std::vector<std::int64_t> x;
        std::int64_t pad;
    };
    const Case cases[] = {
        {DType::int8, {-128, 127, 1, -1, 0, 5}, -7},
        {DType::int16, {-32768, 32767, 300, -300, 0, 7}, -1000},
        {DType::int32, {int32_min, int32_max, 70000, -70000, 0, 9}, 123456789},
        {DType::boolean, {1, 0, 1, 1, 0, 0}, 1},
    };
    for (const Case& c : cases) {
        tosa::GraphBuilder g;
        const auto x = g.tensor("x", {2, 3}, c.dtype);
        const auto transposed = g.tensor("transposed", {3, 2}, c.dtype);
        g.op(Op::transpose, {x}, {transposed}, tosa::transpose_attr({1, 0}));
        const auto start = shape_const(g, "start", {0, 1});
        const auto size = shape_const(g, "size", {2, 2});
        const auto sliced = g.tensor("sliced", {2, 2}, c.dtype);
        g.op(Op::slice, {x, start, size}, {sliced});
        const auto padding = shape_const(g, "padding", {1, 0, 0, 1});
        const auto pad_const = int_constant(g, "pad_const", {1},
                                            c.dtype == DType::boolean ? DType::int8 : c.dtype,
                                            {c.pad});
        g.block().tensors[pad_const].dtype = c.dtype;  // BOOL: the same one byte
        const auto padded = g.tensor("padded", {3, 4}, c.dtype);
        g.op(Op::pad, {x, padding, pad_const}, {padded});
        const auto multiples = shape_const(g, "multiples", {1, 2});
        const auto tiled = g.tensor("tiled", {2, 6}, c.dtype);
        g.op(Op::tile, {x, multiples}, {tiled});
        const auto reversed = g.tensor("reversed", {2, 3}, c.dtype);
        g.op(Op::reverse, {x}, {reversed}, tosa::axis_attr(1));
        const auto joined = g.tensor("joined", {4, 3}, c.dtype);
        g.op(Op::concat, {x, x}, {joined}, tosa::axis_attr(0));
        g.input(x);
        for (auto t : {transposed, sliced, padded, tiled, reversed, joined}) g.output(t);
        Rig rig;
        auto program = rig.must_load(g.finish());
        const DType storage = c.dtype == DType::boolean ? DType::int8 : c.dtype;
        const auto out = run_ok(rig, *program, {values_of(storage, c.x)});
        const auto& v = c.x;
        const std::int64_t p = c.pad;
        assert_values(read_values(storage, out[0]), {v[0], v[3], v[1], v[4], v[2], v[5]});
        assert_values(read_values(storage, out[1]), {v[1], v[2], v[4], v[5]});
        assert_values(read_values(storage, out[2]),
                      {p, p, p, p, v[0], v[1], v[2], p, v[3], v[4], v[5], p});
        assert_values(read_values(storage, out[3]),
                      {v[0], v[1], v[2], v[0], v[1], v[2], v[3], v[4], v[5], v[3], v[4], v[5]});
        assert_values(read_values(storage, out[4]), {v[2], v[1], v[0], v[5], v[4], v[3]});
        assert_values(read_values(storage, out[5]),
                      {v[0], v[1], v[2], v[3], v[4], v[5], v[0], v[1], v[2], v[3], v[4], v[5]});
        rig.finish(program);
    }
}
}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rescale_halves_round_half_up),
        cmocka_unit_test(rescale_saturates_at_both_ends),
        cmocka_unit_test(rescale_zero_points),
        cmocka_unit_test(rescale_double_round_differs_from_single_round),
        cmocka_unit_test(rescale_per_channel_uses_the_last_dimension),
        cmocka_unit_test(rescale_unsigned_input_and_output),
        cmocka_unit_test(rescale_int16_multiplier_without_scale32),
        cmocka_unit_test(rescale_sweep_matches_the_reference),
        cmocka_unit_test(rescale_add_rescale_chain),
        cmocka_unit_test(rescale_refusals),
        cmocka_unit_test(table_int8_indexes_by_value_plus_128),
        cmocka_unit_test(table_int16_interpolates_513_entries),
        cmocka_unit_test(table_refuses_a_table_of_the_wrong_length),
        cmocka_unit_test(mul_widens_int8_and_int16_to_int32),
        cmocka_unit_test(mul_int32_rounds_by_its_shift_and_wraps),
        cmocka_unit_test(mul_refuses_a_shift_tosa_forbids),
        cmocka_unit_test(intdiv_truncates_toward_zero_with_broadcast),
        cmocka_unit_test(arithmetic_right_shift_with_and_without_round),
        cmocka_unit_test(logical_shifts_work_on_the_element_width),
        cmocka_unit_test(shift_amounts_outside_the_width_fail_the_submission),
        cmocka_unit_test(bitwise_and_or_xor),
        cmocka_unit_test(abs_bitwise_not_and_clz),
        cmocka_unit_test(negate_with_zero_points_saturates),
        cmocka_unit_test(clamp_on_int8_and_int16),
        cmocka_unit_test(unary_refusals),
        cmocka_unit_test(select_on_integers_and_bool_with_broadcast),
        cmocka_unit_test(integer_reductions_and_argmax),
        cmocka_unit_test(data_layout_on_every_stored_dtype),
        cmocka_unit_test(pairs_tosa_does_not_define_are_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
