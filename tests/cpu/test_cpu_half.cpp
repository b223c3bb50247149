// test_cpu_half.cpp - FP16, BF16 and FP8 on the CPU backend: the conversions
// (backends/cpu/src/float_formats.hpp) bit for bit, and operators on narrow
// values through the Backend interface.
//
// Every expected bit pattern is derived by hand in the comment beside it or
// was printed by NumPy (np.float16; `astype(np.float16)` of a float64
// reference for EXP). FP16 layout: sign, 5 exponent bits (bias 15), 10
// mantissa bits; BF16: sign, 8 (bias 127), 7; FP8E4M3: sign, 4 (bias 7), 3,
// S.1111.111 the only NaN, no infinity; FP8E5M2: sign, 5 (bias 15), 2.
#include <atomic>
#include <bit>
#include <cstdlib>
#include <new>
#include <cmath>
#include <limits>

#include "float_formats.hpp"
#include "raw_run_support.hpp"

// Every allocation through the global operator new, from any thread (the
// backend's workers included), for the no-allocation-after-warm-up test.
// The replacements pair malloc with free; GCC 12 sees free() under the name
// operator delete where it inlines a std::allocator and warns wrongly.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<std::uint64_t> allocations{0};
}  // namespace

void* operator new(std::size_t bytes)
{
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace cpu_test;
using vaccel::backend::cpu::cast_narrow;
using vaccel::backend::cpu::narrow_bits;
using vaccel::backend::cpu::widen_bits;

namespace {

using Shape = std::vector<std::int64_t>;
using Halves = std::vector<std::uint16_t>;
constexpr float inf = std::numeric_limits<float>::infinity();

float f32_of(std::uint32_t bits) { return std::bit_cast<float>(bits); }

void assert_bits(DType dtype, double value, std::uint32_t want)
{
    const std::uint32_t got = narrow_bits(dtype, value);
    if (got != want)
        fail_msg("%s of %.17g: got 0x%X, want 0x%X", std::string(tosa::dtype_name(dtype)).c_str(),
                 value, got, want);
}

void assert_widens(DType dtype, std::uint32_t bits, float want)
{
    const float got = widen_bits(dtype, bits);
    if (std::memcmp(&got, &want, 4) != 0)
        fail_msg("%s 0x%X: got %.9g, want %.9g", std::string(tosa::dtype_name(dtype)).c_str(),
                 bits, static_cast<double>(got), static_cast<double>(want));
}

bool fp16_is_nan(std::uint16_t bits) { return (bits & 0x7C00u) == 0x7C00u && (bits & 0x3FFu) != 0; }

void assert_halves(const Bytes& got_bytes, const Halves& want)
{
    const Halves got = from_bytes<std::uint16_t>(got_bytes);
    assert_int_equal(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
        if (got[i] != want[i])
            fail_msg("element %zu: got 0x%04X, want 0x%04X", i, got[i], want[i]);
}

// A constant [1] of `dtype` with `bits` (little-endian), written by CONST.
std::uint32_t constant(tosa::GraphBuilder& g, const char* name, DType dtype, std::uint32_t bits)
{
    std::vector<std::uint8_t> data(tosa::dtype_bytes(dtype));
    for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<std::uint8_t>(bits >> (8 * i));
    const std::uint32_t t = g.tensor(name, {1}, dtype, data);
    g.op(Op::const_, {}, {t});
    return t;
}

// ------------------------------------------------------------ conversions

void fp16_narrowing_rounds_to_nearest_even(void**)
{
    assert_bits(DType::fp16, 1.0, 0x3C00);        // exponent 15, mantissa 0
    assert_bits(DType::fp16, -2.5, 0xC100);       // -1.25 * 2^1: 0x8000 | 16 << 10 | 0x100
    assert_bits(DType::fp16, 65504.0, 0x7BFF);    // largest finite: (2 - 2^-10) * 2^15
    assert_bits(DType::fp16, 65519.0, 0x7BFF);    // below the midpoint 65520
    assert_bits(DType::fp16, 65520.0, 0x7C00);    // the midpoint ties to even: 2^16, inf
    assert_bits(DType::fp16, -1e6, 0xFC00);       // overflow keeps the sign
    assert_bits(DType::fp16, std::ldexp(1.0, -24), 0x0001);  // smallest subnormal
    assert_bits(DType::fp16, std::ldexp(1.0, -25), 0x0000);  // half of it: ties to even 0
    assert_bits(DType::fp16, std::ldexp(3.0, -26), 0x0001);  // 0.75 units: up to 1
    assert_bits(DType::fp16, std::ldexp(3.0, -25), 0x0002);  // 1.5 units: ties to even 2
    assert_bits(DType::fp16, std::ldexp(1.0, -14), 0x0400);  // smallest normal
    assert_bits(DType::fp16, std::ldexp(1023.0, -24), 0x03FF);  // largest subnormal
    assert_bits(DType::fp16, 1.0 + std::ldexp(1.0, -11), 0x3C00);  // tie: 1.0 is even
    assert_bits(DType::fp16, 1.0 + std::ldexp(3.0, -11), 0x3C02);  // tie: 0x3C02 is even
    assert_bits(DType::fp16, -0.0, 0x8000);
    assert_bits(DType::fp16, inf, 0x7C00);
    assert_bits(DType::fp16, -inf, 0xFC00);
    // NaN: exponent all ones, the quiet bit set, the sign kept.
    assert_int_equal(narrow_bits(DType::fp16, std::nan("")) & 0x7E00u, 0x7E00u);
    assert_int_equal(narrow_bits(DType::fp16, -std::nan("")), 0xFE00u);
    assert_int_equal(narrow_bits(DType::fp16, f32_of(0x7F800001u)) & 0x7E00u, 0x7E00u);  // sNaN
}

// float32 bits -> np.float16(value).view(np.uint16), printed by NumPy.
void fp16_narrowing_matches_numpy(void**)
{
    const std::pair<std::uint32_t, std::uint32_t> cases[] = {
        {0x3DCCCCCDu, 0x2E66u},  // 0.1
        {0x3EAAAAABu, 0x3555u},  // 1/3
        {0x40490FDBu, 0x4248u},  // pi
        {0x3727C5ACu, 0x00A8u},  // 1e-5 (subnormal)
        {0x387FDA40u, 0x03FFu},  // 6.1e-5 (largest subnormal)
        {0xC0F8A3D7u, 0xC7C5u},  // -7.77
        {0x447A1333u, 0x63D1u},  // 1000.3
        {0x45001000u, 0x6800u},  // 2049: tie to even 2048
        {0x45003000u, 0x6802u},  // 2051: tie to even 2052
        {0x477FEF00u, 0x7BFFu},  // 65519
    };
    for (const auto& [from, want] : cases) assert_bits(DType::fp16, f32_of(from), want);
}

void fp16_widening_is_exact_and_round_trips(void**)
{
    assert_widens(DType::fp16, 0x0001, std::ldexp(1.0f, -24));
    assert_widens(DType::fp16, 0x03FF, std::ldexp(1023.0f, -24));
    assert_widens(DType::fp16, 0x7BFF, 65504.0f);
    assert_widens(DType::fp16, 0xC100, -2.5f);
    assert_widens(DType::fp16, 0x3555, 0.333251953125f);  // 1365/4096
    assert_widens(DType::fp16, 0xFC00, -inf);
    assert_widens(DType::fp16, 0x8000, -0.0f);
    assert_true(std::isnan(widen_bits(DType::fp16, 0x7E00)));
    // Every pattern but NaN comes back unchanged; a quiet NaN stays that NaN.
    for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
        const std::uint32_t back = narrow_bits(DType::fp16, widen_bits(DType::fp16, bits));
        const bool nan = fp16_is_nan(static_cast<std::uint16_t>(bits));
        if (nan ? !fp16_is_nan(static_cast<std::uint16_t>(back)) ||
                      (back | 0x0200u) != (bits | 0x0200u)
                : back != bits)
            fail_msg("0x%04X came back as 0x%04X", bits, back);
    }
}

// The bulk conversions steps use (bit-level FP16, FP8 tables) against the
// generic encoder and against the FP16 definition evaluated here.
void bulk_conversions_agree_with_the_definitions(void**)
{
    // Every FP16 pattern: (-1)^s * mantissa * 2^-24 (exponent 0), else
    // (-1)^s * (1024 + mantissa) * 2^(exponent - 25); exponent 31: inf / NaN.
    std::vector<std::uint16_t> all(65536);
    for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits)
        all[bits] = static_cast<std::uint16_t>(bits);
    std::vector<float> wide(65536);
    vaccel::backend::cpu::widen(DType::fp16, reinterpret_cast<const std::byte*>(all.data()),
                                wide.data(), 65536);
    for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
        const std::uint32_t exponent = (bits >> 10) & 0x1F;
        const std::uint32_t mantissa = bits & 0x3FF;
        double want = exponent == 0    ? std::ldexp(mantissa, -24)
                      : exponent == 31 ? (mantissa == 0 ? inf : std::nan(""))
                                       : std::ldexp(1024.0 + mantissa,
                                                    static_cast<int>(exponent) - 25);
        if (bits & 0x8000) want = -want;
        const float got = wide[bits];
        const float want_f32 = static_cast<float>(want);  // exact: FP16 fits in FP32
        if (std::isnan(want) ? !std::isnan(got) : std::memcmp(&got, &want_f32, 4) != 0)
            fail_msg("FP16 0x%04X widened to %.9g, want %.17g", bits, static_cast<double>(got),
                     want);
    }
    // FP32 -> FP16 and FP8 on a sweep of FP32 patterns (every 4099th, both
    // signs, every exponent, NaNs and infinities) and the boundaries.
    std::vector<float> sweep;
    for (std::uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 4099)
        sweep.push_back(f32_of(static_cast<std::uint32_t>(bits)));
    for (std::uint32_t bits : {0x477FEFFFu, 0x477FF000u, 0x38800000u, 0x387FFFFFu, 0x33000000u,
                               0x33000001u, 0x7F800000u, 0x7F800001u, 0xFFC00001u})
        sweep.push_back(f32_of(bits));
    for (DType dtype : {DType::fp16, DType::fp8e4m3, DType::fp8e5m2}) {
        const std::size_t size = tosa::dtype_bytes(dtype);
        std::vector<std::uint8_t> out(sweep.size() * size);
        vaccel::backend::cpu::narrow(dtype, sweep.data(), reinterpret_cast<std::byte*>(out.data()),
                                     sweep.size());
        for (std::size_t i = 0; i < sweep.size(); ++i) {
            const std::uint32_t got = size == 1 ? out[i] : out[2 * i] | out[2 * i + 1] << 8;
            const std::uint32_t want = narrow_bits(dtype, sweep[i]);
            if (got != want)
                fail_msg("%s of 0x%08X: bulk 0x%X, generic 0x%X",
                         std::string(tosa::dtype_name(dtype)).c_str(),
                         std::bit_cast<std::uint32_t>(sweep[i]), got, want);
        }
    }
}

void bf16_keeps_the_upper_half_rounded_to_even(void**)
{
    assert_bits(DType::bf16, 1.0, 0x3F80);
    assert_bits(DType::bf16, -2.5, 0xC020);
    assert_bits(DType::bf16, f32_of(0x3F808000u), 0x3F80);  // tie, 0x3F80 even
    assert_bits(DType::bf16, f32_of(0x3F818000u), 0x3F82);  // tie, 0x3F82 even
    assert_bits(DType::bf16, f32_of(0x3F808001u), 0x3F81);  // just above the tie
    assert_bits(DType::bf16, f32_of(0x3F807FFFu), 0x3F80);  // just below it
    assert_bits(DType::bf16, f32_of(0x7F7FFFFFu), 0x7F80);  // FLT_MAX rounds to inf
    assert_bits(DType::bf16, f32_of(0x7F7F7FFFu), 0x7F7F);  // below the last tie
    assert_bits(DType::bf16, f32_of(0x00018000u), 0x0002);  // subnormal tie to even
    assert_bits(DType::bf16, inf, 0x7F80);
    assert_bits(DType::bf16, f32_of(0x7F800001u), 0x7FC0);   // signalling NaN made quiet
    assert_bits(DType::bf16, f32_of(0xFFC00000u), 0xFFC0);   // negative quiet NaN kept
    assert_widens(DType::bf16, 0x3F81, 1.0078125f);          // 1 + 2^-7
    assert_widens(DType::bf16, 0xFF80, -inf);
    // The fast BF16 path (bulk) agrees with the per-element one.
    const float in[] = {1.0f, f32_of(0x3F818000u), f32_of(0x7F7FFFFFu), f32_of(0x7F800001u)};
    std::uint16_t out[4];
    vaccel::backend::cpu::narrow(DType::bf16, in, reinterpret_cast<std::byte*>(out), 4);
    assert_int_equal(out[0], 0x3F80);
    assert_int_equal(out[1], 0x3F82);
    assert_int_equal(out[2], 0x7F80);
    assert_int_equal(out[3], 0x7FC0);
}

void fp8e4m3_has_no_infinity(void**)
{
    assert_bits(DType::fp8e4m3, 1.0, 0x38);     // exponent 7
    assert_bits(DType::fp8e4m3, -2.5, 0xC2);    // -1.25 * 2: 0x80 | 8 << 3 | 2
    assert_bits(DType::fp8e4m3, 448.0, 0x7E);   // largest: 1.75 * 2^8 (S.1111.110)
    assert_bits(DType::fp8e4m3, 464.0, 0x7E);   // tie between 448 and 480: 448 is even
    assert_bits(DType::fp8e4m3, 465.0, 0x7F);   // rounds to 480, past 448: NaN (non-saturating)
    assert_bits(DType::fp8e4m3, -1000.0, 0xFF); // negative overflow: NaN with the sign
    assert_bits(DType::fp8e4m3, inf, 0x7F);     // no infinity: NaN
    assert_bits(DType::fp8e4m3, std::nan(""), 0x7F);
    assert_bits(DType::fp8e4m3, std::ldexp(1.0, -9), 0x01);   // smallest subnormal
    assert_bits(DType::fp8e4m3, std::ldexp(1.0, -10), 0x00);  // tie to even 0
    assert_bits(DType::fp8e4m3, std::ldexp(3.0, -10), 0x02);  // 1.5 units: even 2
    assert_bits(DType::fp8e4m3, std::ldexp(1.0, -6), 0x08);   // smallest normal
    assert_widens(DType::fp8e4m3, 0x7E, 448.0f);
    assert_widens(DType::fp8e4m3, 0x01, std::ldexp(1.0f, -9));
    assert_widens(DType::fp8e4m3, 0x78, 256.0f);  // exponent 15 is a normal binade
    assert_widens(DType::fp8e4m3, 0x80, -0.0f);
    assert_true(std::isnan(widen_bits(DType::fp8e4m3, 0x7F)));
    assert_true(std::isnan(widen_bits(DType::fp8e4m3, 0xFF)));
}

void fp8e5m2_overflows_to_infinity(void**)
{
    assert_bits(DType::fp8e5m2, 1.0, 0x3C);      // exponent 15
    assert_bits(DType::fp8e5m2, -2.5, 0xC1);     // -1.25 * 2: 0x80 | 16 << 2 | 1
    assert_bits(DType::fp8e5m2, 57344.0, 0x7B);  // largest: 1.75 * 2^15
    assert_bits(DType::fp8e5m2, 61439.0, 0x7B);  // below the midpoint 61440
    assert_bits(DType::fp8e5m2, 61440.0, 0x7C);  // tie: 2^16 is even, past the range: inf
    assert_bits(DType::fp8e5m2, -inf, 0xFC);
    assert_bits(DType::fp8e5m2, std::nan(""), 0x7E);  // quiet NaN
    assert_bits(DType::fp8e5m2, std::ldexp(1.0, -16), 0x01);  // smallest subnormal
    assert_bits(DType::fp8e5m2, std::ldexp(1.0, -17), 0x00);
    assert_widens(DType::fp8e5m2, 0x7B, 57344.0f);
    assert_widens(DType::fp8e5m2, 0x7C, inf);
    assert_true(std::isnan(widen_bits(DType::fp8e5m2, 0x7E)));
}

void integer_casts_round_once(void**)
{
    // INT32 16842753 = 2^24 + 2^16 + 1 lies just above the BF16 midpoint
    // between 2^24 (0x4B80) and 2^24 + 2^17 (0x4B81): nearest is 0x4B81. Via
    // FP32 it would first round to the midpoint 2^24 + 2^16 and then to even
    // 0x4B80.
    const std::int32_t ints[] = {16842753, 65519, 65520, -70000, 3};
    std::uint16_t bf16[5];
    cast_narrow(DType::int32, reinterpret_cast<const std::byte*>(ints), DType::bf16,
                reinterpret_cast<std::byte*>(bf16), 5);
    assert_int_equal(bf16[0], 0x4B81);
    std::uint16_t fp16[5];
    cast_narrow(DType::int32, reinterpret_cast<const std::byte*>(ints), DType::fp16,
                reinterpret_cast<std::byte*>(fp16), 5);
    assert_int_equal(fp16[1], 0x7BFF);  // 65519 -> 65504
    assert_int_equal(fp16[2], 0x7C00);  // 65520 -> inf
    assert_int_equal(fp16[3], 0xFC00);  // -70000 -> -inf
    assert_int_equal(fp16[4], 0x4200);  // 3 = 1.5 * 2^1
    const std::int8_t int8s[] = {-128, 127};
    cast_narrow(DType::int8, reinterpret_cast<const std::byte*>(int8s), DType::fp16,
                reinterpret_cast<std::byte*>(fp16), 2);
    assert_int_equal(fp16[0], 0xD800);  // -2^7: 0x8000 | 22 << 10
    assert_int_equal(fp16[1], 0x57F0);  // 127 = 1.984375 * 2^6: 21 << 10 | 1008
}

void narrow_to_integer_rounds_to_even_and_saturates(void**)
{
    // 2.5, 3.5, -2.5, 65504, -inf, NaN.
    const std::uint16_t halves[] = {0x4100, 0x4300, 0xC100, 0x7BFF, 0xFC00, 0x7E00};
    std::int16_t int16s[6];
    cast_narrow(DType::fp16, reinterpret_cast<const std::byte*>(halves), DType::int16,
                reinterpret_cast<std::byte*>(int16s), 6);
    const std::int16_t want[] = {2, 4, -2, 32767, -32768, 0};
    for (int i = 0; i < 6; ++i) assert_int_equal(int16s[i], want[i]);
    // FP16 -> FP8E4M3: 0x5F00 = 448 stays, 0x6000 = 512 overflows to NaN.
    const std::uint16_t big[] = {0x5F00, 0x6000};
    std::uint8_t fp8[2];
    cast_narrow(DType::fp16, reinterpret_cast<const std::byte*>(big), DType::fp8e4m3,
                reinterpret_cast<std::byte*>(fp8), 2);
    assert_int_equal(fp8[0], 0x7E);
    assert_int_equal(fp8[1], 0x7F);
}

// ---------------------------------------------------------- operators

tosa::Graph binary_graph(Op op, DType dtype, Shape shape)
{
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", shape, dtype);
    const auto b = g.tensor("b", shape, dtype);
    const auto out = g.tensor("out", shape, dtype);
    std::vector<std::uint32_t> inputs{a, b};
    if (op == Op::mul) inputs.push_back(mul_shift(g, "shift"));
    g.op(op, inputs, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    return g.finish();
}

tosa::Graph unary_graph(Op op, DType dtype, Shape shape, tosa::Attributes attributes = {})
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", shape, dtype);
    const auto out = g.tensor("out", shape, dtype);
    g.op(op, {x}, {out}, std::move(attributes));
    g.input(x);
    g.output(out);
    return g.finish();
}

// NumPy: a = np.array([0.1, -7.77, 1000.3, 3.14159265, 6.1e-5, -0.0, 65504, 1.0], np.float16),
// b = [0.2, 2.5, 0.1, -3.0, 6.1e-5, 0.0, 32.0, 2**-11]; (a + b) and (a * b) in float16.
const Halves numpy_a{0x2E66, 0xC7C5, 0x63D1, 0x4248, 0x03FF, 0x8000, 0x7BFF, 0x3C00};
const Halves numpy_b{0x3266, 0x4100, 0x2E66, 0xC200, 0x03FF, 0x0000, 0x5000, 0x1000};

void fp16_add_and_mul_match_numpy(void**)
{
    Rig rig;
    auto add = rig.must_load(binary_graph(Op::add, DType::fp16, {8}));
    assert_halves(run_ok(rig, *add, {to_bytes(numpy_a), to_bytes(numpy_b)})[0],
                  {0x34CC, 0xC545, 0x63D1, 0x3080, 0x07FE, 0x0000, 0x7C00, 0x3C00});
    auto mul = rig.must_load(binary_graph(Op::mul, DType::fp16, {8}));
    assert_halves(run_ok(rig, *mul, {to_bytes(numpy_a), to_bytes(numpy_b)})[0],
                  {0x251E, 0xCCDB, 0x5640, 0xC8B6, 0x0000, 0x8000, 0x7C00, 0x1000});
    assert_ok(rig.backend->unload_program(add));
    rig.finish(mul);
}

void fp16_reciprocal_and_exp_match_numpy(void**)
{
    Rig rig;
    // np.float16(1) / [0.5, -1.25, 3.0, -0.0] in float16.
    auto reciprocal = rig.must_load(unary_graph(Op::reciprocal, DType::fp16, {4}));
    assert_halves(run_ok(rig, *reciprocal, {to_bytes(Halves{0x3800, 0xBD00, 0x4200, 0x8000})})[0],
                  {0x4000, 0xBA66, 0x3555, 0xFC00});
    // np.exp([0.5, -1.25, 3.0, 10.0] in float64).astype(np.float16).
    auto exp = rig.must_load(unary_graph(Op::exp, DType::fp16, {4}));
    assert_halves(run_ok(rig, *exp, {to_bytes(Halves{0x3800, 0xBD00, 0x4200, 0x4900})})[0],
                  {0x3E98, 0x3496, 0x4D05, 0x7561});
    assert_ok(rig.backend->unload_program(reciprocal));
    rig.finish(exp);
}

void bf16_add_rounds_to_even(void**)
{
    Rig rig;
    auto program = rig.must_load(binary_graph(Op::add, DType::bf16, {3}));
    // 1 + 2^-8 ties between 1 (0x3F80) and 1 + 2^-7: even 0x3F80;
    // (1 + 2^-7) + 2^-8 ties between 0x3F81 and 0x3F82: even 0x3F82;
    // 3e38 (0x7F62) + 3e38 overflows: inf.
    assert_halves(run_ok(rig, *program,
                         {to_bytes(Halves{0x3F80, 0x3F81, 0x7F62}),
                          to_bytes(Halves{0x3B80, 0x3B80, 0x7F62})})[0],
                  {0x3F80, 0x3F82, 0x7F80});
    rig.finish(program);
}

tosa::Attributes fp16_clamp(std::uint16_t min, std::uint16_t max)
{
    tosa::Attributes attributes;
    attributes.min_val = {static_cast<std::uint8_t>(min), static_cast<std::uint8_t>(min >> 8)};
    attributes.max_val = {static_cast<std::uint8_t>(max), static_cast<std::uint8_t>(max >> 8)};
    attributes.nan_mode = 1;  // PROPAGATE
    return attributes;
}

void fp16_clamp_reads_fp16_bounds(void**)
{
    Rig rig;
    // Bounds -0.5 (0xB800) and 1.0 (0x3C00): -2 -> -0.5, 0.25 stays, 3 -> 1, NaN stays NaN.
    auto program =
        rig.must_load(unary_graph(Op::clamp, DType::fp16, {4}, fp16_clamp(0xB800, 0x3C00)));
    const Halves got = from_bytes<std::uint16_t>(
        run_ok(rig, *program, {to_bytes(Halves{0xC000, 0x3400, 0x4200, 0x7E00})})[0]);
    assert_int_equal(got[0], 0xB800);
    assert_int_equal(got[1], 0x3400);
    assert_int_equal(got[2], 0x3C00);
    assert_true(fp16_is_nan(got[3]));
    // Bounds of FP32 size (4 bytes) are read as their first FP16 element; one
    // byte is too short.
    tosa::Attributes short_bounds = fp16_clamp(0xB800, 0x3C00);
    short_bounds.min_val.resize(1);
    assert_malformed(rig.load(unary_graph(Op::clamp, DType::fp16, {4}, short_bounds)),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 0 (CLAMP): min_val and max_val must each hold one FP16 value");
    // min above max, compared as FP16 numbers: 1.0 > -0.5.
    assert_malformed(rig.load(unary_graph(Op::clamp, DType::fp16, {4}, fp16_clamp(0x3C00, 0xB800))),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 0 (CLAMP): bounds [1, -0.5] must be numbers with min <= max");
    rig.finish(program);
}

void fp16_pad_reads_an_fp16_pad_const(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {2}, DType::fp16);
    const auto padding = shape_const(g, "padding", {1, 1});
    const auto value = constant(g, "pad_const", DType::fp16, 0xC100);  // -2.5
    const auto out = g.tensor("out", {4}, DType::fp16);
    g.op(Op::pad, {x, padding, value}, {out});
    g.input(x);
    g.output(out);
    auto program = rig.must_load(g.finish());
    assert_halves(run_ok(rig, *program, {to_bytes(Halves{0x3C00, 0x4000})})[0],
                  {0xC100, 0x3C00, 0x4000, 0xC100});
    rig.finish(program);
}

tosa::Graph negate_graph(std::uint16_t input_zp)
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {2}, DType::fp16);
    const auto izp = constant(g, "izp", DType::fp16, input_zp);
    const auto ozp = constant(g, "ozp", DType::fp16, 0x0000);
    const auto out = g.tensor("out", {2}, DType::fp16);
    g.op(Op::negate, {x, izp, ozp}, {out});
    g.input(x);
    g.output(out);
    return g.finish();
}

void fp16_zero_points_are_read_as_fp16(void**)
{
    Rig rig;
    auto program = rig.must_load(negate_graph(0x8000));  // -0.0 is a zero
    assert_halves(run_ok(rig, *program, {to_bytes(Halves{0x3C00, 0x8000})})[0], {0xBC00, 0x0000});
    // 0x0100 has a zero low byte but is the subnormal 2^-16, not zero.
    assert_malformed(rig.load(negate_graph(0x0100)), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (NEGATE): input1_zp 'izp' must be zero for FP16");
    rig.finish(program);
}

tosa::Graph matmul_graph(DType in, DType out, Shape a, Shape b, Shape c)
{
    tosa::GraphBuilder g;
    const auto ta = g.tensor("a", a, in);
    const auto tb = g.tensor("b", b, in);
    const auto azp = constant(g, "a_zp", in, 0);
    const auto bzp = constant(g, "b_zp", in, 0);
    const auto tc = g.tensor("c", c, out);
    g.op(Op::matmul, {ta, tb, azp, bzp}, {tc});
    g.input(ta);
    g.input(tb);
    g.output(tc);
    return g.finish();
}

void matmul_accumulates_in_fp32(void**)
{
    Rig rig;
    // [2048, 1, 0.5] . [1, 1, 1] = 2049.5 exactly in FP32. FP16 output: nearest
    // is 2050 (0x6801; FP16 steps by 2 there). Summed in FP16 it would be
    // 2048 + 1 -> 2048 (tie to even), + 0.5 -> 2048: FP32 accumulation, which
    // TOSA 1.0 allows for an FP16 accumulator, is the correctly rounded one.
    const Bytes a = to_bytes(Halves{0x6800, 0x3C00, 0x3800});
    const Bytes b = to_bytes(Halves{0x3C00, 0x3C00, 0x3C00});
    const Shape a_shape{1, 1, 3}, b_shape{1, 3, 1}, c_shape{1, 1, 1};
    auto fp16_out =
        rig.must_load(matmul_graph(DType::fp16, DType::fp16, a_shape, b_shape, c_shape));
    assert_halves(run_ok(rig, *fp16_out, {a, b})[0], {0x6801});
    auto fp32_out =
        rig.must_load(matmul_graph(DType::fp16, DType::fp32, a_shape, b_shape, c_shape));
    assert_exactly(from_bytes<float>(run_ok(rig, *fp32_out, {a, b})[0]), {2049.5f});
    // FP8E4M3 [1, 448] . [2, 0.5] = 226 in FP16: 1.765625 * 2^7 = 22 << 10 | 784.
    const Shape a2{1, 1, 2}, b2{1, 2, 1};
    auto fp8 = rig.must_load(matmul_graph(DType::fp8e4m3, DType::fp16, a2, b2, c_shape));
    assert_halves(run_ok(rig, *fp8, {Bytes{0x38, 0x7E}, Bytes{0x40, 0x30}})[0], {0x5B10});
    // BF16 MATMUL yields FP32 only.
    assert_refused(rig.load(matmul_graph(DType::bf16, DType::bf16, a2, b2, c_shape)),
                   Errc::unsupported, VACCEL_D_TOSA_OPERATOR,
                   static_cast<std::uint32_t>(Op::matmul),
                   static_cast<std::uint32_t>(DType::bf16));
    assert_ok(rig.backend->unload_program(fp16_out));
    assert_ok(rig.backend->unload_program(fp32_out));
    rig.finish(fp8);
}

// CONV2D, 1x1 kernel: input [1,1,2,2], weight [1,1,1,2], bias [1] graph inputs.
tosa::Graph conv_graph(DType dtype, DType acc)
{
    tosa::GraphBuilder g;
    const auto input = g.tensor("input", {1, 1, 2, 2}, dtype);
    const auto weight = g.tensor("weight", {1, 1, 1, 2}, dtype);
    const auto bias = g.tensor("bias", {1}, dtype);
    const auto izp = constant(g, "input_zp", dtype, 0);
    const auto wzp = constant(g, "weight_zp", dtype, 0);
    const auto out = g.tensor("out", {1, 1, 2, 1}, dtype);
    g.op(Op::conv2d, {input, weight, bias, izp, wzp}, {out},
         tosa::conv_attr({0, 0, 0, 0}, {1, 1}, {1, 1}, acc));
    g.input(input);
    g.input(weight);
    g.input(bias);
    g.output(out);
    return g.finish();
}

void fp16_conv2d_takes_either_accumulator(void**)
{
    Rig rig;
    // Pixels [1, 2] and [3, 4], weights [0.5, 0.25], bias 2048:
    // 0.5 + 0.5 + 2048 = 2049 -> 2048 (tie to even, 0x6800);
    // 1.5 + 1 + 2048 = 2050.5 -> 2050 (0x6801).
    const Bytes input = to_bytes(Halves{0x3C00, 0x4000, 0x4200, 0x4400});
    const Bytes weight = to_bytes(Halves{0x3800, 0x3400});
    const Bytes bias = to_bytes(Halves{0x6800});
    for (DType acc : {DType::fp16, DType::fp32}) {
        auto program = rig.must_load(conv_graph(DType::fp16, acc));
        assert_halves(run_ok(rig, *program, {input, weight, bias})[0], {0x6800, 0x6801});
        assert_ok(rig.backend->unload_program(program));
    }
    assert_malformed(rig.load(conv_graph(DType::bf16, DType::fp16)), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (CONV2D): acc_type is FP16; TOSA 1.0 allows only FP32 for BF16 "
                     "data");
    rig.finish();
}

void fp8_conv2d_yields_fp16(void**)
{
    Rig rig;
    // FP8E5M2 input and weight, FP16 bias, FP16 accumulator and output:
    // pixels [1, 2] and [3, 4] (0x3C 0x40 0x42 0x44), weights [0.5, 0.25]
    // (0x38 0x34), bias 1 (0x3C00): 1*0.5 + 2*0.25 + 1 = 2 (0x4000) and
    // 3*0.5 + 4*0.25 + 1 = 3.5 (0x4300).
    tosa::GraphBuilder g;
    const DType e = DType::fp8e5m2;
    const auto input = g.tensor("input", {1, 1, 2, 2}, e);
    const auto weight = g.tensor("weight", {1, 1, 1, 2}, e);
    const auto bias = g.tensor("bias", {1}, DType::fp16);
    const auto izp = constant(g, "input_zp", e, 0x80);  // -0 is a zero
    const auto wzp = constant(g, "weight_zp", e, 0);
    const auto out = g.tensor("out", {1, 1, 2, 1}, DType::fp16);
    g.op(Op::conv2d, {input, weight, bias, izp, wzp}, {out},
         tosa::conv_attr({0, 0, 0, 0}, {1, 1}, {1, 1}, DType::fp16));
    g.input(input);
    g.input(weight);
    g.input(bias);
    g.output(out);
    auto program = rig.must_load(g.finish());
    assert_halves(run_ok(rig, *program,
                         {Bytes{0x3C, 0x40, 0x42, 0x44}, Bytes{0x38, 0x34},
                          to_bytes(Halves{0x3C00})})[0],
                  {0x4000, 0x4300});
    rig.finish(program);
}

tosa::Graph avg_pool_graph(DType dtype, DType acc)
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {1, 2, 2, 1}, dtype);
    const auto izp = constant(g, "input_zp", dtype, 0);
    const auto ozp = constant(g, "output_zp", dtype, 0);
    const auto out = g.tensor("out", {1, 1, 1, 1}, dtype);
    g.op(Op::avg_pool2d, {x, izp, ozp}, {out},
         tosa::pool_attr({2, 2}, {1, 1}, {0, 0, 0, 0}, acc));
    g.input(x);
    g.output(out);
    return g.finish();
}

void avg_pool2d_on_fp16_and_fp8(void**)
{
    Rig rig;
    // FP16 (1 + 2 + 4 + 2050) / 4 = 514.25: FP16 steps by 0.5 from 512, so it
    // ties between 514 (mantissa 4, even) and 514.5: 514, 0x6004 (24 << 10 | 4).
    auto fp16 = rig.must_load(avg_pool_graph(DType::fp16, DType::fp16));
    assert_halves(run_ok(rig, *fp16, {to_bytes(Halves{0x3C00, 0x4000, 0x4400, 0x6801})})[0],
                  {0x6004});
    // FP8E4M3 (1 + 2 + 4 + 448) / 4 = 113.75 -> 112 (E4M3 steps by 8 from 64,
    // 113.75 is nearer 112 than 120): 1.75 * 2^6 = 0 1101 110 = 0x6E.
    auto fp8 = rig.must_load(avg_pool_graph(DType::fp8e4m3, DType::fp16));
    assert_true(run_ok(rig, *fp8, {Bytes{0x38, 0x40, 0x48, 0x7E}})[0] == Bytes{0x6E});
    assert_malformed(rig.load(avg_pool_graph(DType::fp8e4m3, DType::fp32)),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (AVG_POOL2D): acc_type is FP32; TOSA 1.0 allows only FP16 for "
                     "FP8E4M3 data");
    assert_ok(rig.backend->unload_program(fp16));
    rig.finish(fp8);
}

void bf16_compare_and_select(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", {3}, DType::bf16);
    const auto b = g.tensor("b", {3}, DType::bf16);
    const auto greater = g.tensor("greater", {3}, DType::boolean);
    const auto larger = g.tensor("larger", {3}, DType::bf16);
    g.op(Op::greater, {a, b}, {greater});
    g.op(Op::select, {greater, a, b}, {larger});
    g.input(a);
    g.input(b);
    g.output(larger);
    auto program = rig.must_load(g.finish());
    // a = [1, -2.5, NaN], b = [1.0078125, -3, 0]: a > b is [no, yes, no]
    // (NaN compares false), so the larger is [b, a, b].
    assert_halves(run_ok(rig, *program,
                         {to_bytes(Halves{0x3F80, 0xC020, 0x7FC0}),
                          to_bytes(Halves{0x3F81, 0xC040, 0x0000})})[0],
                  {0x3F81, 0xC020, 0x0000});
    rig.finish(program);
}

// The FP32 working copies of narrow steps come from per-worker scratch that
// only grows: once warm, an FP16 run allocates exactly what the same graph
// on FP32 allocates (the submission machinery's own allocations).
void narrow_steps_allocate_nothing_once_warm(void**)
{
    // One worker thread and no runs on the calling thread (inline_us 0), so
    // the warm-up warms the thread that runs.
    CpuOptions options;
    options.threads = 1;
    options.inline_us = 0;
    Rig rig(options);
    const auto allocations_of_a_run = [&](DType dtype) {
        auto program = rig.must_load(binary_graph(Op::add, dtype, {4096}));
        const Bytes input(4096 * tosa::dtype_bytes(dtype), 0);
        for (int warm_up = 0; warm_up < 2; ++warm_up) run_ok(rig, *program, {input, input});
#ifdef VACCEL_TEST_MIRROR
        const DeviceMirror::Pause pause;  // counts the CPU's allocations, not the mirror's
#endif
        const std::uint64_t before = allocations.load();
        run_ok(rig, *program, {input, input});
        const std::uint64_t used = allocations.load() - before;
        assert_ok(rig.backend->unload_program(program));
        return used;
    };
    const std::uint64_t fp32 = allocations_of_a_run(DType::fp32);
    const std::uint64_t fp16 = allocations_of_a_run(DType::fp16);
    if (fp16 != fp32)
        fail_msg("a warm FP16 run made %llu allocations, the FP32 run %llu",
                 static_cast<unsigned long long>(fp16), static_cast<unsigned long long>(fp32));
    rig.finish();
}

tosa::Graph cast_graph(DType from, DType to, Shape shape)
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", shape, from);
    const auto out = g.tensor("out", shape, to);
    g.op(Op::cast, {x}, {out});
    g.input(x);
    g.output(out);
    return g.finish();
}

void cast_runs_the_tosa_float_pairs(void**)
{
    Rig rig;
    auto to_fp16 = rig.must_load(cast_graph(DType::fp32, DType::fp16, {4}));
    assert_halves(run_ok(rig, *to_fp16, {to_bytes(std::vector<float>{1.0f, -2.5f, 65520.0f,
                                                                     std::ldexp(1.0f, -24)})})[0],
                  {0x3C00, 0xC100, 0x7C00, 0x0001});
    auto to_fp32 = rig.must_load(cast_graph(DType::bf16, DType::fp32, {2}));
    assert_exactly(from_bytes<float>(run_ok(rig, *to_fp32, {to_bytes(Halves{0x3F81, 0xC020})})[0]),
                   {1.0078125f, -2.5f});
    auto to_fp8 = rig.must_load(cast_graph(DType::fp16, DType::fp8e5m2, {2}));
    // 57344 (0x7B00) stays 0x7B; 65504 (0x7BFF) is past the midpoint 61440: inf.
    assert_true(run_ok(rig, *to_fp8, {to_bytes(Halves{0x7B00, 0x7BFF})})[0] == (Bytes{0x7B, 0x7C}));
    // TOSA 1.0 has no FP16 <-> BF16 CAST and no integer -> FP8 CAST.
    auto refused = rig.load(cast_graph(DType::fp16, DType::bf16, {2}));
    assert_refused(refused, Errc::unsupported, VACCEL_D_TOSA_OPERATOR,
                   static_cast<std::uint32_t>(Op::cast), static_cast<std::uint32_t>(DType::bf16));
    assert_string_equal(refused.error().note.c_str(),
                        "TOSA operator CAST from FP16 to BF16 is not supported by the CPU backend "
                        "(docs/operators.md lists the pairs it runs)");
    assert_refused(rig.load(cast_graph(DType::int8, DType::fp8e4m3, {2})), Errc::unsupported,
                   VACCEL_D_TOSA_OPERATOR, static_cast<std::uint32_t>(Op::cast),
                   static_cast<std::uint32_t>(DType::fp8e4m3));
    assert_ok(rig.backend->unload_program(to_fp16));
    assert_ok(rig.backend->unload_program(to_fp32));
    rig.finish(to_fp8);
}

void fp8_transpose_keeps_every_pattern(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {2, 3}, DType::fp8e5m2);
    const auto out = g.tensor("out", {3, 2}, DType::fp8e5m2);
    g.op(Op::transpose, {x}, {out}, tosa::transpose_attr({1, 0}));
    g.input(x);
    g.output(out);
    auto program = rig.must_load(g.finish());
    // inf, NaN, smallest subnormal / -0, largest finite, -inf; out[j][i] = in[i][j].
    const Bytes got = run_ok(rig, *program, {Bytes{0x7C, 0x7E, 0x01, 0x80, 0x7B, 0xFC}})[0];
    assert_true(got == (Bytes{0x7C, 0x80, 0x7E, 0x7B, 0x01, 0xFC}));
    rig.finish(program);
}

void fp16_argmax_and_max_pool(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {1, 2, 2, 1}, DType::fp16);
    const auto pooled = g.tensor("pooled", {1, 1, 1, 1}, DType::fp16);
    const auto index = g.tensor("index", {1, 2, 1}, DType::int32);
    g.op(Op::max_pool2d, {x}, {pooled}, tosa::pool_attr({2, 2}, {1, 1}, {0, 0, 0, 0}));
    tosa::Attributes argmax = tosa::axis_attr(1);
    argmax.nan_mode = 1;  // PROPAGATE
    g.op(Op::argmax, {x}, {index}, argmax);
    g.input(x);
    g.output(pooled);
    g.output(index);
    auto program = rig.must_load(g.finish());
    // [[1, -2.5], [65504, 2]]: the maximum is 65504; per column (axis 1 of
    // [1,2,2,1]) the larger row is 1 (65504 > 1) and 1 (2 > -2.5).
    const auto got = run_ok(rig, *program, {to_bytes(Halves{0x3C00, 0xC100, 0x7BFF, 0x4000})});
    assert_halves(got[0], {0x7BFF});
    const auto indices = from_bytes<std::int32_t>(got[1]);
    assert_int_equal(indices[0], 1);
    assert_int_equal(indices[1], 1);
    rig.finish(program);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fp16_narrowing_rounds_to_nearest_even),
        cmocka_unit_test(fp16_narrowing_matches_numpy),
        cmocka_unit_test(fp16_widening_is_exact_and_round_trips),
        cmocka_unit_test(bulk_conversions_agree_with_the_definitions),
        cmocka_unit_test(bf16_keeps_the_upper_half_rounded_to_even),
        cmocka_unit_test(fp8e4m3_has_no_infinity),
        cmocka_unit_test(fp8e5m2_overflows_to_infinity),
        cmocka_unit_test(integer_casts_round_once),
        cmocka_unit_test(narrow_to_integer_rounds_to_even_and_saturates),
        cmocka_unit_test(fp16_add_and_mul_match_numpy),
        cmocka_unit_test(fp16_reciprocal_and_exp_match_numpy),
        cmocka_unit_test(bf16_add_rounds_to_even),
        cmocka_unit_test(fp16_clamp_reads_fp16_bounds),
        cmocka_unit_test(fp16_pad_reads_an_fp16_pad_const),
        cmocka_unit_test(fp16_zero_points_are_read_as_fp16),
        cmocka_unit_test(matmul_accumulates_in_fp32),
        cmocka_unit_test(fp16_conv2d_takes_either_accumulator),
        cmocka_unit_test(fp8_conv2d_yields_fp16),
        cmocka_unit_test(avg_pool2d_on_fp16_and_fp8),
        cmocka_unit_test(bf16_compare_and_select),
        cmocka_unit_test(narrow_steps_allocate_nothing_once_warm),
        cmocka_unit_test(cast_runs_the_tosa_float_pairs),
        cmocka_unit_test(fp8_transpose_keeps_every_pattern),
        cmocka_unit_test(fp16_argmax_and_max_pool),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
