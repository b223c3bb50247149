// test_programs_half.cpp - FP16, BF16, FP8E4M3 and FP8E5M2 programs and
// CAST on the Vulkan device (Mesa lavapipe), each checked against the CPU
// backend on the same graph and input bits (docs/adr/0013-vulkan-backend.md,
// Storage), plus hand-derived values and the bytes around each result.
//
// Exactness: one IEEE step per element or none (ADD SUB MUL MAXIMUM MINIMUM
// ABS NEGATE CEIL FLOOR CLAMP, comparisons, SELECT, copies, REDUCE_MAX/MIN,
// ARGMAX, MAX_POOL2D, CAST) must give the CPU's bits: computed in FP32 and
// rounded once to nearest even (docs/adr/0011), so the narrow result is the
// correctly rounded one on both. Two exceptions, both Vulkan's latitude:
// a NaN result's sign and payload are the device's (any NaN of the format
// matches), and a device may flush FP32 subnormals, which BF16 subnormals
// are (lavapipe may give a zero of either sign where the CPU keeps one).
// The transcendental builtins and REDUCE_SUM/PRODUCT (whose order the CPU
// may change) may differ by one unit in the last place of the format.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "lowering.hpp"
#include "vaccel/backend/vulkan.hpp"
#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/plan.hpp"
#include "vulkan_test_support.hpp"

namespace {

using namespace vulkan_test;
namespace vk = vaccel::backend::vulkan;

std::size_t width(DType d) { return tosa::dtype_bytes(d); }

std::uint32_t element(const Bytes& b, DType d, std::size_t i)
{
    std::uint32_t v = 0;
    std::memcpy(&v, b.data() + i * width(d), width(d));
    return v;
}

void set_element(Bytes& b, DType d, std::size_t i, std::uint32_t v)
{
    std::memcpy(b.data() + i * width(d), &v, width(d));
}

// Element bits as bytes of dtype `d`.
Bytes pack(DType d, const std::vector<std::uint32_t>& bits)
{
    Bytes out(bits.size() * width(d));
    for (std::size_t i = 0; i < bits.size(); ++i) std::memcpy(out.data() + i * width(d), &bits[i], width(d));
    return out;
}

// Format facts, written out here (not taken from the code under test).
struct Format {
    int exponent_bits, mantissa_bits;
    bool infinities;
};
Format format(DType d)
{
    switch (d) {
    case DType::fp16: return {5, 10, true};
    case DType::bf16: return {8, 7, true};
    case DType::fp8e4m3: return {4, 3, false};
    case DType::fp8e5m2: return {5, 2, true};
    default: return {8, 23, true};
    }
}
bool is_nan(DType d, std::uint32_t bits)
{
    const Format f = format(d);
    const std::uint32_t all = (1u << f.exponent_bits) - 1, m = bits & ((1u << f.mantissa_bits) - 1);
    const std::uint32_t e = (bits >> f.mantissa_bits) & all;
    return f.infinities ? e == all && m != 0 : e == all && m == (1u << f.mantissa_bits) - 1;
}
bool is_subnormal(DType d, std::uint32_t bits)
{
    const Format f = format(d);
    const std::uint32_t e = (bits >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
    return e == 0 && (bits & ((1u << f.mantissa_bits) - 1)) != 0;
}
bool is_zero(DType d, std::uint32_t bits)
{
    const Format f = format(d);
    return (bits & ((1u << (f.exponent_bits + f.mantissa_bits)) - 1)) == 0;
}
// Encodings ordered as the values they hold (sign-magnitude to a line).
std::int64_t ordinal(DType d, std::uint32_t bits)
{
    const Format f = format(d);
    const int top = f.exponent_bits + f.mantissa_bits;
    const std::int64_t magnitude = bits & ((1u << top) - 1);
    return ((bits >> top) & 1u) != 0 ? -magnitude : magnitude;
}

// The same bits with every subnormal replaced by a zero of its sign.
std::vector<std::uint32_t> flush_subnormals(DType d, std::vector<std::uint32_t> bits)
{
    const Format f = format(d);
    for (auto& v : bits)
        if (is_subnormal(d, v)) v &= 1u << (f.exponent_bits + f.mantissa_bits);
    return bits;
}

enum class Match { exact, any_nan, one_unit };

// Compares element by element; `match` loosens as the header says.
void compare(const Bytes& got, const Bytes& want, DType d, Match match, const std::string& what)
{
    assert_int_equal(got.size(), want.size());
    for (std::size_t i = 0; i < got.size() / width(d); ++i) {
        const std::uint32_t g = element(got, d, i), w = element(want, d, i);
        if (g == w) continue;
        if (match != Match::exact && is_nan(d, g) && is_nan(d, w)) continue;
        if (match != Match::exact && d == DType::bf16 && is_subnormal(d, w) && is_zero(d, g))
            continue;
        if (match == Match::one_unit && !is_nan(d, g) && !is_nan(d, w) &&
            std::llabs(ordinal(d, g) - ordinal(d, w)) <= 1)
            continue;
        fail_msg("%s: element %zu is %#x on the device, %#x on the CPU", what.c_str(), i, g, w);
    }
}

// Element bits: the edge values of the format first, then pseudo-random
// patterns (every class: NaNs, infinities, subnormals, normals).
std::vector<std::uint32_t> edge_bits(DType d)
{
    switch (d) {
    case DType::fp16:  // 0, -0, smallest/largest subnormal, smallest normal, 65504, inf, NaNs, 1, -2
        return {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
                0x7E00, 0x7C01, 0xFE01, 0x3C00, 0xC000, 0x3555, 0x8001};
    case DType::bf16:
        return {0x0000, 0x8000, 0x0001, 0x007F, 0x0080, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80,
                0x7FC0, 0x7F81, 0xFFC1, 0x3F80, 0xC000, 0x3EAB, 0x8001};
    case DType::fp8e4m3:  // 0, -0, subnormals, smallest normal, 448, NaN (S.1111.111)
        return {0x00, 0x80, 0x01, 0x07, 0x08, 0x7E, 0xFE, 0x7F, 0xFF, 0x38, 0xC0, 0x81};
    case DType::fp8e5m2:  // 0, -0, subnormals, smallest normal, 57344, inf, NaNs
        return {0x00, 0x80, 0x01, 0x03, 0x04, 0x7B, 0xFB, 0x7C, 0xFC, 0x7E, 0x7D, 0xFF,
                0x3C, 0xC0, 0x81};
    default: return {};
    }
}
std::vector<std::uint32_t> bits_for(DType d, std::size_t count, std::uint32_t seed)
{
    std::vector<std::uint32_t> bits = edge_bits(d);
    std::uint32_t state = seed * 2654435761u + 7u;
    const std::uint32_t mask = width(d) == 1 ? 0xFFu : (width(d) == 2 ? 0xFFFFu : 0xFFFFFFFFu);
    while (bits.size() < count) {
        state = state * 1664525u + 1013904223u;
        bits.push_back((state >> 7) & mask);
    }
    bits.resize(count);
    return bits;
}
// Values of moderate size (2^-5 to 2^3, both signs) for the builtins.
std::vector<std::uint32_t> moderate_bits(DType d, std::size_t count, std::uint32_t seed)
{
    const Format f = format(d);
    const int bias = (1 << (f.exponent_bits - 1)) - 1;
    std::vector<std::uint32_t> bits;
    std::uint32_t state = seed * 2654435761u + 11u;
    while (bits.size() < count) {
        state = state * 1664525u + 1013904223u;
        const std::uint32_t exponent = static_cast<std::uint32_t>(bias - 5) + (state >> 28) % 8;
        const std::uint32_t mantissa = (state >> 5) & ((1u << f.mantissa_bits) - 1);
        const std::uint32_t sign = (state >> 4) & 1u;
        bits.push_back(sign << (f.exponent_bits + f.mantissa_bits) | exponent << f.mantissa_bits |
                       mantissa);
    }
    return bits;
}

std::uint32_t zero_of(tosa::GraphBuilder& g, const char* name, DType d)
{
    const std::uint32_t t = g.tensor(name, {1}, d, std::vector<std::uint8_t>(width(d), 0));
    g.op(Op::const_, {}, {t});
    return t;
}

tosa::Attributes propagate(tosa::Attributes a = {})
{
    a.nan_mode = 1;
    return a;
}

constexpr DType half_types[] = {DType::fp16, DType::bf16};
constexpr DType narrow_floats[] = {DType::fp16, DType::bf16, DType::fp8e4m3, DType::fp8e5m2};

std::string name_of(DType d) { return std::string(tosa::dtype_name(d)); }
std::string name_of(Op op) { return std::string(tosa::op_name(op)); }

// ----- arithmetic -------------------------------------------------------------

tosa::Graph binary(Op op, DType d, std::int64_t n, DType out_dtype)
{
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", {n}, d);
    const auto b = g.tensor("b", {n}, d);
    const auto out = g.tensor("out", {n}, out_dtype);
    std::vector<std::uint32_t> ins{a, b};
    if (op == Op::mul) ins.push_back(mul_shift(g, "shift"));
    tosa::Attributes attr;
    if (op == Op::maximum || op == Op::minimum) attr = propagate();
    g.op(op, ins, {out}, attr);
    g.input(a);
    g.input(b);
    g.output(out);
    return g.finish();
}

void fp16_and_bf16_binary_operators_match_the_cpu_bit_for_bit(void**)
{
    constexpr std::int64_t n = 1001;  // odd: the last word holds one element
    for (DType d : half_types) {
        const auto a = bits_for(d, n, 1);
        auto b = bits_for(d, n, 2);
        // Every edge value against every other (the first 16 x 16 pairs).
        for (std::size_t i = 0; i < 256 && i < a.size(); ++i) b[i] = edge_bits(d)[i / 16 % edge_bits(d).size()];
        for (Op op : {Op::add, Op::sub, Op::mul, Op::maximum, Op::minimum}) {
            auto [want, got] = both([&] { return binary(op, d, n, d); }, {pack(d, a), pack(d, b)});
            if (d == DType::bf16) {
                // BF16 subnormals are FP32 subnormals, which Vulkan lets a
                // device flush to zero on input as well as on output (the
                // NVIDIA H200 does): an element may instead equal the CPU's
                // result on the inputs with their subnormals flushed.
                auto [flushed, unused] = both([&] { return binary(op, d, n, d); },
                                              {pack(d, flush_subnormals(d, a)),
                                               pack(d, flush_subnormals(d, b))});
                (void)unused;
                for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
                    if (element(got[0], d, i) == element(flushed[0], d, i))
                        set_element(want[0], d, i, element(got[0], d, i));
            }
            compare(got[0], want[0], d, Match::any_nan, name_of(op) + " " + name_of(d));
        }
        // POW: positive moderate bases (TOSA leaves pow undefined for x < 0
        // and x = 0, y <= 0, and so does GLSL), moderate exponents.
        auto base = moderate_bits(d, n, 15);
        for (auto& v : base) v &= ~(1u << (width(d) * 8 - 1));
        auto [want, got] = both([&] { return binary(Op::pow, d, n, d); },
                                {pack(d, base), pack(d, moderate_bits(d, n, 16))});
        compare(got[0], want[0], d, Match::one_unit, "POW " + name_of(d));
        for (Op op : {Op::equal, Op::greater, Op::greater_equal}) {
            auto [want, got] =
                both([&] { return binary(op, d, n, DType::boolean); }, {pack(d, a), pack(d, b)});
            assert_int_equal(got[0].size(), n);
            if (d == DType::bf16) {
                // As above: a device may compare BF16 subnormals as zeros.
                auto [flushed, unused] =
                    both([&] { return binary(op, d, n, DType::boolean); },
                         {pack(d, flush_subnormals(d, a)), pack(d, flush_subnormals(d, b))});
                (void)unused;
                for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
                    if (got[0][i] == flushed[0][i]) want[0][i] = got[0][i];
            }
            assert_memory_equal(got[0].data(), want[0].data(), n);
        }
    }
}

void hand_derived_fp16_and_bf16_results(void**)
{
    // FP16: 65504 + 16 = 65520 lies halfway between 65504 and 2^16 (past the
    // largest finite): ties to even picks 2^16, so infinity (0x7C00).
    // 65504 + 15 rounds down to 65504 (0x7BFF). 2^-24 + 2^-24 = 2^-23 (0x0002),
    // a subnormal kept. 1 + 2^-11 is a tie between 1 and 1 + 2^-10: 1 (0x3C00).
    // BF16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7: 1 (0x3F80); 1 + 3 * 2^-8
    // is 1.5 units of 2^-7 above 1, a tie again: even gives 1 + 2^-6 (0x3F82).
    struct Case { DType d; std::uint32_t a, b, want; };
    const Case cases[] = {
        {DType::fp16, 0x7BFF, 0x4C00, 0x7C00}, {DType::fp16, 0x7BFF, 0x4B80, 0x7BFF},
        {DType::fp16, 0x0001, 0x0001, 0x0002}, {DType::fp16, 0x3C00, 0x1000, 0x3C00},
        {DType::bf16, 0x3F80, 0x3B80, 0x3F80}, {DType::bf16, 0x3F80, 0x3C40, 0x3F82},
        {DType::fp16, 0x3C00, 0x3C00, 0x4000},
    };
    for (const Case& c : cases) {
        Rig gpu = vulkan_rig();
        auto p = gpu.must_load(binary(Op::add, c.d, 3, c.d));
        // Three elements: the result's second word is half used.
        const Bytes a = pack(c.d, {c.a, c.a, c.a}), b = pack(c.d, {c.b, c.b, c.b});
        auto out = gpu.run_raw(*p, {a, b});
        for (std::size_t i = 0; i < 3; ++i)
            if (element(out[0], c.d, i) != c.want)
                fail_msg("%s %#x + %#x: got %#x, want %#x", name_of(c.d).c_str(), c.a, c.b,
                         element(out[0], c.d, i), c.want);
        gpu.finish(p);
    }
}

tosa::Graph unary(Op op, DType d, std::int64_t n)
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {n}, d);
    const auto out = g.tensor("out", {n}, d);
    std::vector<std::uint32_t> ins{x};
    tosa::Attributes attr;
    if (op == Op::negate) {
        ins.push_back(zero_of(g, "in_zp", d));
        ins.push_back(zero_of(g, "out_zp", d));
    }
    if (op == Op::clamp) {
        // Bounds in the operand's own encoding: -0.5 and 0.75.
        attr = propagate();
        attr.present = true;
        if (d == DType::fp16) {
            attr.min_val = {0x00, 0xB8};
            attr.max_val = {0x00, 0x3A};
        } else {
            attr.min_val = {0x00, 0xBF};
            attr.max_val = {0x40, 0x3F};
        }
    }
    g.op(op, ins, {out}, attr);
    g.input(x);
    g.output(out);
    return g.finish();
}

void fp16_and_bf16_unary_operators_match_the_cpu(void**)
{
    constexpr std::int64_t n = 333;
    for (DType d : half_types) {
        for (Op op : {Op::abs, Op::negate, Op::ceil, Op::floor, Op::clamp}) {
            const auto x = bits_for(d, n, 3);
            auto [want, got] = both([&] { return unary(op, d, n); }, {pack(d, x)});
            compare(got[0], want[0], d, Match::any_nan, name_of(op) + " " + name_of(d));
        }
        for (Op op : {Op::exp, Op::log, Op::reciprocal, Op::rsqrt, Op::sin, Op::cos, Op::sigmoid,
                      Op::tanh, Op::erf}) {
            auto x = moderate_bits(d, n, 4);
            const bool positive = op == Op::log || op == Op::rsqrt;
            const std::uint32_t sign = 1u << (width(d) * 8 - 1);
            if (positive)
                for (auto& v : x) v &= ~sign;
            auto [want, got] = both([&] { return unary(op, d, n); }, {pack(d, x)});
            compare(got[0], want[0], d, Match::one_unit, name_of(op) + " " + name_of(d));
        }
    }
}

void fp16_and_bf16_select_reductions_and_pools_match_the_cpu(void**)
{
    for (DType d : half_types) {
        // SELECT moves the chosen element's bits (a signalling NaN included).
        const auto make_select = [&] {
            tosa::GraphBuilder g;
            const auto c = g.tensor("c", {37}, DType::boolean);
            const auto a = g.tensor("a", {37}, d);
            const auto b = g.tensor("b", {37}, d);
            const auto out = g.tensor("out", {37}, d);
            g.op(Op::select, {c, a, b}, {out});
            g.input(c);
            g.input(a);
            g.input(b);
            g.output(out);
            return g.finish();
        };
        Bytes cond(37);
        for (std::size_t i = 0; i < cond.size(); ++i) cond[i] = std::byte(i % 3 == 0 ? 1 : 0);
        const auto a = bits_for(d, 37, 5), b = bits_for(d, 37, 6);
        auto [want, got] = both(make_select, {cond, pack(d, a), pack(d, b)});
        compare(got[0], want[0], d, Match::exact, "SELECT " + name_of(d));
        for (std::size_t i = 0; i < 37; ++i)  // and independently of the CPU
            assert_int_equal(element(got[0], d, i), i % 3 == 0 ? a[i] : b[i]);

        // Reductions over each axis of [3, 5, 7].
        const auto x = bits_for(d, 105, 7);
        for (int axis = 0; axis < 3; ++axis) {
            for (Op op : {Op::reduce_max, Op::reduce_min, Op::reduce_sum, Op::reduce_product}) {
                std::vector<std::int64_t> out_shape{3, 5, 7};
                out_shape[axis] = 1;
                auto make = [&] {
                    tosa::GraphBuilder g;
                    const auto in = g.tensor("x", {3, 5, 7}, d);
                    const auto out = g.tensor("out", out_shape, d);
                    g.op(op, {in}, {out}, propagate(tosa::axis_attr(axis)));
                    g.input(in);
                    g.output(out);
                    return g.finish();
                };
                const bool ordered = op == Op::reduce_max || op == Op::reduce_min;
                // Moderate values keep sums and products finite and NaN-free.
                const auto values = ordered ? x : moderate_bits(d, 105, 8);
                auto [w, gt] = both(make, {pack(d, values)});
                compare(gt[0], w[0], d, ordered ? Match::any_nan : Match::one_unit,
                        name_of(op) + " " + name_of(d));
            }
        }
    }
}

void max_pool2d_and_argmax_match_the_cpu_on_every_narrow_float(void**)
{
    for (DType d : narrow_floats) {
        // 3x3 kernel, stride 2, padding 1: 7x7 -> 4x4, 3 channels.
        const auto make_pool = [&] {
            tosa::GraphBuilder g;
            const auto x = g.tensor("x", {1, 7, 7, 3}, d);
            const auto out = g.tensor("out", {1, 4, 4, 3}, d);
            g.op(Op::max_pool2d, {x}, {out}, tosa::pool_attr({3, 3}, {2, 2}, {1, 1, 1, 1}));
            g.input(x);
            g.output(out);
            return g.finish();
        };
        auto x = bits_for(d, 147, 9);
        auto [want, got] = both(make_pool, {pack(d, x)});
        compare(got[0], want[0], d, Match::any_nan, "MAX_POOL2D " + name_of(d));
        for (int axis = 0; axis < 2; ++axis) {
            std::vector<std::int64_t> out_shape{axis == 0 ? 21 : 7};
            const auto make_argmax = [&] {
                tosa::GraphBuilder g;
                const auto in = g.tensor("x", {7, 21}, d);
                const auto out = g.tensor("out", out_shape, DType::int32);
                g.op(Op::argmax, {in}, {out}, propagate(tosa::axis_attr(axis)));
                g.input(in);
                g.output(out);
                return g.finish();
            };
            auto [w, gt] = both(make_argmax, {pack(d, x)});
            assert_int_equal(gt[0].size(), w[0].size());
            assert_memory_equal(gt[0].data(), w[0].data(), gt[0].size());
        }
    }
}

// ----- copies and the bytes around a result -------------------------------------

void copies_move_every_narrow_pattern_exactly(void**)
{
    for (DType d : narrow_floats) {
        // x [3, 5, 7]: TRANSPOSE (2, 0, 1), REVERSE axis 1, CONCAT with y on
        // axis 2, IDENTITY and a RESHAPE to [105] of the transpose.
        const auto make = [&] {
            tosa::GraphBuilder g;
            const auto x = g.tensor("x", {3, 5, 7}, d);
            const auto y = g.tensor("y", {3, 5, 1}, d);
            const auto t = g.tensor("t", {7, 3, 5}, d);
            const auto r = g.tensor("r", {3, 5, 7}, d);
            const auto c = g.tensor("c", {3, 5, 8}, d);
            const auto i = g.tensor("i", {3, 5, 7}, d);
            const auto s = g.tensor("s", {105}, d);
            g.op(Op::transpose, {x}, {t}, tosa::transpose_attr({2, 0, 1}));
            g.op(Op::reverse, {x}, {r}, tosa::axis_attr(1));
            g.op(Op::concat, {x, y}, {c}, tosa::axis_attr(2));
            g.op(Op::identity, {x}, {i});
            g.op(Op::reshape, {t, shape_const(g, "shape", {105})}, {s});
            g.input(x);
            g.input(y);
            for (auto o : {t, r, c, i, s}) g.output(o);
            return g.finish();
        };
        // Every pattern of an 8-bit format appears; 16-bit: edges and random.
        const auto x = bits_for(d, 105, 10), y = bits_for(d, 15, 11);
        auto [want, got] = both(make, {pack(d, x), pack(d, y)});
        for (std::size_t k = 0; k < got.size(); ++k)
            compare(got[k], want[k], d, Match::exact, "copy " + name_of(d));
        // Independently: t[a][b][c] = x[b][c][a]; r[a][b][c] = x[a][4-b][c];
        // c[a][b][7] = y[a][b]; i = x; s = t.
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 5; ++b) {
                for (int c = 0; c < 7; ++c) {
                    const std::uint32_t v = x[static_cast<std::size_t>((a * 5 + b) * 7 + c)];
                    assert_int_equal(element(got[0], d, static_cast<std::size_t>((c * 3 + a) * 5 + b)), v);
                    assert_int_equal(element(got[1], d, static_cast<std::size_t>((a * 5 + (4 - b)) * 7 + c)), v);
                    assert_int_equal(element(got[2], d, static_cast<std::size_t>((a * 5 + b) * 8 + c)), v);
                    assert_int_equal(element(got[3], d, static_cast<std::size_t>((a * 5 + b) * 7 + c)), v);
                }
                assert_int_equal(element(got[2], d, static_cast<std::size_t>((a * 5 + b) * 8 + 7)),
                                 y[static_cast<std::size_t>(a * 5 + b)]);
            }
        assert_memory_equal(got[4].data(), got[0].data(), got[0].size());
    }
}

void bytes_beside_a_narrow_result_are_untouched(void**)
{
    // Results of 7 FP16 (14 bytes) and 5 FP8 (5 bytes) elements written into
    // 32-byte buffers full of 0xA5: every byte past the result keeps it, while
    // neighbouring elements inside one word come from different invocations.
    for (DType d : {DType::fp16, DType::bf16, DType::fp8e4m3, DType::fp8e5m2}) {
        const std::int64_t n = width(d) == 2 ? 7 : 5;
        Rig gpu = vulkan_rig();
        tosa::GraphBuilder g;
        const auto x = g.tensor("x", {n}, d);
        const auto out = g.tensor("out", {n}, d);
        g.op(Op::reverse, {x}, {out}, tosa::axis_attr(0));
        g.input(x);
        g.output(out);
        auto p = gpu.must_load(g.finish());
        const auto bits = bits_for(d, static_cast<std::size_t>(n), 12);
        auto in = gpu.buffer(32), result = gpu.buffer(32);
        const Bytes input = pack(d, bits);
        assert_ok(gpu.backend->write_buffer(*in, 0, input));
        const Bytes fill(32, std::byte{0xA5});
        assert_ok(gpu.backend->write_buffer(*result, 0, fill));
        auto event = cpu_test::submit(*gpu.backend, *gpu.queue, *p, gpu.bind(*p, {in.get(), result.get()}), 0);
        assert_ok(event);
        assert_int_equal(gpu.wait(**event).state, EventState::complete);
        assert_ok(gpu.backend->destroy_event(*event));
        Bytes back(32);
        assert_ok(gpu.backend->read_buffer(*result, 0, back));
        const std::size_t used = static_cast<std::size_t>(n) * width(d);
        for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
            assert_int_equal(element(back, d, i), bits[static_cast<std::size_t>(n) - 1 - i]);
        for (std::size_t i = used; i < back.size(); ++i)
            if (back[i] != std::byte{0xA5}) fail_msg("%s: byte %zu past the result changed", name_of(d).c_str(), i);
        assert_ok(gpu.backend->free_buffer(in));
        assert_ok(gpu.backend->free_buffer(result));
        gpu.finish(p);
    }
}

void a_narrow_chain_through_the_arena_matches_the_cpu(void**)
{
    // ADD -> ABS -> MUL -> REDUCE_MAX on FP16, intermediates in the arena.
    const auto make = [] {
        tosa::GraphBuilder g;
        const DType h = DType::fp16;
        const auto a = g.tensor("a", {9, 11}, h);
        const auto b = g.tensor("b", {9, 11}, h);
        const auto s = g.tensor("s", {9, 11}, h);
        const auto m = g.tensor("m", {9, 11}, h);
        const auto p = g.tensor("p", {9, 11}, h);
        const auto out = g.tensor("out", {9, 1}, h);
        g.op(Op::add, {a, b}, {s});
        g.op(Op::abs, {s}, {m});
        g.op(Op::mul, {m, a, mul_shift(g, "shift")}, {p});
        g.op(Op::reduce_max, {p}, {out}, propagate(tosa::axis_attr(1)));
        g.input(a);
        g.input(b);
        g.output(out);
        return g.finish();
    };
    auto [want, got] = both(make, {pack(DType::fp16, moderate_bits(DType::fp16, 99, 13)),
                                   pack(DType::fp16, moderate_bits(DType::fp16, 99, 14))});
    compare(got[0], want[0], DType::fp16, Match::exact, "FP16 chain");
}

// ----- the spatial operators on narrow floats ---------------------------------
// The spatial kernels have no 16-bit views: they load 16-bit elements from
// words and store them with atomics on the word (common.glsl's STORE_HALF),
// so neighbouring results of one word come from different invocations.

void pad_slice_and_tile_move_narrow_elements_exactly(void**)
{
    for (DType d : narrow_floats) {
        // x [3, 5] (odd: results start mid-word): PAD [1,0],[2,1] with a
        // constant; SLICE start [1,1] size [2,3]; TILE [2,1].
        const std::uint32_t fill_bits = bits_for(d, 20, 30)[19];
        const auto make = [&] {
            tosa::GraphBuilder g;
            const auto x = g.tensor("x", {3, 5}, d);
            const auto padded = g.tensor("padded", {4, 8}, d);
            const auto sliced = g.tensor("sliced", {2, 3}, d);
            const auto tiled = g.tensor("tiled", {6, 5}, d);
            std::vector<std::uint8_t> fill(width(d));
            std::memcpy(fill.data(), &fill_bits, fill.size());
            const auto value = g.tensor("pad_const", {1}, d, fill);
            g.op(Op::const_, {}, {value});
            g.op(Op::pad, {x, shape_const(g, "padding", {1, 0, 2, 1}), value}, {padded});
            g.op(Op::slice, {x, shape_const(g, "start", {1, 1}), shape_const(g, "size", {2, 3})},
                 {sliced});
            g.op(Op::tile, {x, shape_const(g, "multiples", {2, 1})}, {tiled});
            g.input(x);
            for (auto o : {padded, sliced, tiled}) g.output(o);
            return g.finish();
        };
        const auto x = bits_for(d, 15, 31);
        auto [want, got] = both(make, {pack(d, x)});
        for (std::size_t k = 0; k < got.size(); ++k)
            compare(got[k], want[k], d, Match::exact, "PAD/SLICE/TILE " + name_of(d));
        // Independently of the CPU.
        for (std::size_t r = 0; r < 4; ++r)
            for (std::size_t c = 0; c < 8; ++c) {
                const bool inside = r >= 1 && c >= 2 && c < 7;
                assert_int_equal(element(got[0], d, r * 8 + c),
                                 inside ? x[(r - 1) * 5 + (c - 2)] : fill_bits);
            }
        for (std::size_t r = 0; r < 2; ++r)
            for (std::size_t c = 0; c < 3; ++c)
                assert_int_equal(element(got[1], d, r * 3 + c), x[(r + 1) * 5 + c + 1]);
        for (std::size_t i = 0; i < 30; ++i) assert_int_equal(element(got[2], d, i), x[i % 15]);
    }
}

void narrow_convolutions_and_average_pools_match_the_cpu(void**)
{
    // FP32 sums on both (the CPU's in another order): the narrow result may
    // differ by one unit where the FP32 sums straddle a rounding boundary.
    for (DType d : half_types) {
        for (Op op : {Op::conv2d, Op::depthwise_conv2d}) {
            const bool depthwise = op == Op::depthwise_conv2d;
            // x [1,6,7,3]; 3x3, stride 1, pad 1; CONV2D 5 outputs, DEPTHWISE M = 2.
            const std::vector<std::int64_t> weight =
                depthwise ? std::vector<std::int64_t>{3, 3, 3, 2} : std::vector<std::int64_t>{5, 3, 3, 3};
            const std::int64_t oc = depthwise ? 6 : 5;
            const auto make = [&] {
                tosa::GraphBuilder g;
                const auto x = g.tensor("x", {1, 6, 7, 3}, d);
                const auto w = g.tensor("w", weight, d);
                const auto b = g.tensor("b", {oc}, d);
                const auto y = g.tensor("y", {1, 6, 7, oc}, d);
                const auto zx = zero_of(g, "x_zp", d), zw = zero_of(g, "w_zp", d);
                g.op(op, {x, w, b, zx, zw}, {y},
                     tosa::conv_attr({1, 1, 1, 1}, {1, 1}, {1, 1}, DType::fp32));
                for (auto t : {x, w, b}) g.input(t);
                g.output(y);
                return g.finish();
            };
            auto [want, got] = both(make, {pack(d, moderate_bits(d, 126, 32)),
                                           pack(d, moderate_bits(d, depthwise ? 54 : 135, 33)),
                                           pack(d, moderate_bits(d, static_cast<std::size_t>(oc), 34))});
            compare(got[0], want[0], d, Match::one_unit, name_of(op) + " " + name_of(d));
        }
        // AVG_POOL2D 3x3, stride 2, pad 1 (windows of 4, 6 and 9): 7x7 -> 4x4.
        const auto make_pool = [&] {
            tosa::GraphBuilder g;
            const auto x = g.tensor("x", {1, 7, 7, 3}, d);
            const auto out = g.tensor("out", {1, 4, 4, 3}, d);
            const auto z = zero_of(g, "zp", d);
            g.op(Op::avg_pool2d, {x, z, z}, {out},
                 tosa::pool_attr({3, 3}, {2, 2}, {1, 1, 1, 1}, DType::fp32));
            g.input(x);
            g.output(out);
            return g.finish();
        };
        auto [want, got] = both(make_pool, {pack(d, moderate_bits(d, 147, 35))});
        compare(got[0], want[0], d, Match::one_unit, "AVG_POOL2D " + name_of(d));
    }
}

// acc_type as TOSA 1.0 allows it: FP16 data may accumulate in FP16 (run in
// FP32, which that allows), BF16 only in FP32; operands of one dtype.
void narrow_accumulators_and_mixed_dtypes_are_checked(void**)
{
    const auto conv = [](Op op, DType data, DType weight_dtype, DType acc) {
        tosa::GraphBuilder g;
        const bool depthwise = op == Op::depthwise_conv2d;
        const auto x = g.tensor("x", {1, 5, 5, 2}, data);
        const auto w = g.tensor("w", depthwise ? std::vector<std::int64_t>{3, 3, 2, 1}
                                               : std::vector<std::int64_t>{2, 3, 3, 2},
                                weight_dtype);
        const auto b = g.tensor("b", {2}, data);
        const auto y = g.tensor("y", {1, 5, 5, 2}, data);
        const auto zx = zero_of(g, "x_zp", data), zw = zero_of(g, "w_zp", weight_dtype);
        g.op(op, {x, w, b, zx, zw}, {y}, tosa::conv_attr({1, 1, 1, 1}, {1, 1}, {1, 1}, acc));
        for (auto t : {x, w, b}) g.input(t);
        g.output(y);
        return g.finish();
    };
    // FP16 DEPTHWISE_CONV2D with an FP16 accumulator runs as the CPU runs it.
    auto [want, got] = both([&] { return conv(Op::depthwise_conv2d, DType::fp16, DType::fp16,
                                              DType::fp16); },
                            {pack(DType::fp16, moderate_bits(DType::fp16, 50, 40)),
                             pack(DType::fp16, moderate_bits(DType::fp16, 18, 41)),
                             pack(DType::fp16, moderate_bits(DType::fp16, 2, 42))});
    compare(got[0], want[0], DType::fp16, Match::one_unit, "DEPTHWISE_CONV2D FP16, FP16 sums");
    Rig gpu = vulkan_rig();
    // BF16 with an FP16 accumulator: refused, naming what TOSA allows.
    auto bf16 = gpu.load(conv(Op::conv2d, DType::bf16, DType::bf16, DType::fp16));
    assert_refused(bf16, Errc::invalid_argument, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_BAD_ATTRIBUTE,
                   Op::conv2d);
    assert_non_null(std::strstr(bf16.error().note.c_str(),
                                "acc_type is FP16; TOSA 1.0 allows only FP32 for BF16 data"));
    // An FP32 weight under FP16 data: no kernel mixes them.
    assert_refused(gpu.load(conv(Op::conv2d, DType::fp16, DType::fp32, DType::fp32)),
                   Errc::unsupported, VACCEL_D_TOSA_DTYPE, DType::fp32, Op::conv2d);
    gpu.finish();
}

// ----- CAST ---------------------------------------------------------------------

constexpr DType stored[] = {DType::fp32, DType::fp16, DType::bf16, DType::fp8e4m3, DType::fp8e5m2,
                            DType::int8, DType::int16, DType::int32, DType::boolean};

tosa::Graph cast_graph(DType from, DType to, std::int64_t n)
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {n}, from);
    const auto out = g.tensor("out", {n}, to);
    g.op(Op::cast, {x}, {out});
    g.input(x);
    g.output(out);
    return g.finish();
}

std::vector<std::uint32_t> cast_inputs(DType from, std::size_t n)
{
    if (from == DType::boolean) {
        std::vector<std::uint32_t> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = i % 2;
        return v;
    }
    std::vector<std::uint32_t> v;
    if (from == DType::fp32) {
        // Edges, ties of every narrower format, values past each integer's range.
        for (float f : {0.0f, -0.0f, 2.5f, 3.5f, -2.5f, 127.5f, -128.5f, 300.0f, -129.0f, 32767.5f,
                        -40000.0f, 2147483520.0f, 3e9f, -3e9f, 65504.0f, 65520.0f, 65519.0f,
                        448.0f, 464.0f, 465.0f, 57344.0f, 61440.0f, 1e-40f, 0x1p-24f, 0x1p-25f,
                        0x1.8p-25f, std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN(), 0x1p-9f, 0x1p-10f, 0x1.8p-10f,
                        0x1p-126f, 1.0f + 0x1p-8f})
            v.push_back(std::bit_cast<std::uint32_t>(f));
        v.push_back(0x7F800001u);  // a signalling NaN
        v.push_back(0xFFC12345u);  // a negative NaN with a payload
    } else if (from == DType::int32) {
        for (std::int32_t i : {0, 1, -1, 127, 128, -128, -129, 255, 256, 300, 32767, 32768, -32769,
                               65519, 65520, 2049, 257, 16777217, 2147483647,
                               std::numeric_limits<std::int32_t>::min()})
            v.push_back(static_cast<std::uint32_t>(i));
    } else {
        v = edge_bits(from);
    }
    std::uint32_t state = static_cast<std::uint32_t>(from) * 2654435761u + 5u;
    const std::uint32_t mask = width(from) == 1 ? 0xFFu : (width(from) == 2 ? 0xFFFFu : 0xFFFFFFFFu);
    while (v.size() < n) {
        state = state * 1664525u + 1013904223u;
        std::uint32_t r = state & mask;
        if (from == DType::fp32 && (v.size() % 2) == 0)  // half within +-2^17
            r = (r & 0x80FFFFFFu) | ((0x60u + (state >> 27)) << 23);
        v.push_back(r);
    }
    v.resize(n);
    return v;
}

void every_cast_pair_the_cpu_runs_matches_it_exactly(void**)
{
    constexpr std::size_t n = 301;
    int pairs = 0;
    for (DType from : stored)
        for (DType to : stored) {
            if (from == to) continue;
            Rig cpu(1);
            auto cpu_program = cpu.load(cast_graph(from, to, n));
            Rig gpu = vulkan_rig();
            auto gpu_program = gpu.load(cast_graph(from, to, n));
            const std::string what = "CAST " + name_of(from) + " -> " + name_of(to);
            if (!cpu_program) {
                // What the CPU does not run, the device refuses the same way.
                if (gpu_program) fail_msg("%s: the device runs it, the CPU does not", what.c_str());
                const Error& c = cpu_program.error();
                assert_refused(gpu_program, c.code, c.detail, c.arg0, c.arg1);
                cpu.finish();
                gpu.finish();
                continue;
            }
            if (!gpu_program)
                fail_msg("%s: refused by the device: %s", what.c_str(),
                         gpu_program.error().note.c_str());
            const Bytes input = pack(from, cast_inputs(from, n));
            auto want = cpu.run_raw(**cpu_program, {input});
            auto got = gpu.run_raw(**gpu_program, {input});
            if (got[0] != want[0]) {
                for (std::size_t i = 0; i < n; ++i)
                    if (element(got[0], to, i) != element(want[0], to, i))
                        fail_msg("%s: element %zu (input %#x) is %#x on the device, %#x on the CPU",
                                 what.c_str(), i, element(input, from, i), element(got[0], to, i),
                                 element(want[0], to, i));
            }
            cpu.finish(*cpu_program);
            gpu.finish(*gpu_program);
            ++pairs;
        }
    // The CPU's pairs among these dtypes (docs/operators.md): BOOL and the
    // integers among themselves 12, integers and FP32/FP16/BF16 both ways 18,
    // FP32 and FP16/BF16 both ways 4, FP8 and FP32/FP16/BF16 both ways 12.
    assert_int_equal(pairs, 46);
}

void hand_derived_casts(void**)
{
    struct Case { DType from, to; std::uint32_t in, want; const char* why; };
    const auto f = [](float v) { return std::bit_cast<std::uint32_t>(v); };
    const Case cases[] = {
        {DType::fp32, DType::int8, f(2.5f), 2, "ties to even"},
        {DType::fp32, DType::int8, f(3.5f), 4, "ties to even"},
        {DType::fp32, DType::int8, f(300.0f), 0x7F, "saturates at 127"},
        {DType::fp32, DType::int8, f(-129.0f), 0x80, "saturates at -128"},
        {DType::fp32, DType::int16, f(std::numeric_limits<float>::quiet_NaN()), 0, "NaN gives 0"},
        {DType::fp32, DType::int32, f(3e9f), 0x7FFFFFFF, "saturates at 2^31 - 1"},
        {DType::fp32, DType::fp16, f(65520.0f), 0x7C00, "tie past 65504: infinity"},
        {DType::fp32, DType::fp16, f(65519.0f), 0x7BFF, "below the tie: 65504"},
        {DType::fp32, DType::fp16, f(0x1p-25f), 0x0000, "half the smallest subnormal: even 0"},
        {DType::fp32, DType::fp16, f(0x1.8p-25f), 0x0001, "above half: 2^-24"},
        {DType::fp32, DType::bf16, f(1.0f + 0x1p-8f), 0x3F80, "tie: even"},
        {DType::fp32, DType::fp8e4m3, f(448.0f), 0x7E, "largest finite"},
        {DType::fp32, DType::fp8e4m3, f(464.0f), 0x7E, "tie with 480: even 448"},
        {DType::fp32, DType::fp8e4m3, f(465.0f), 0x7F, "past the tie: NaN, E4M3 has no infinity"},
        {DType::fp32, DType::fp8e4m3, f(-0.0f), 0x80, "-0 kept"},
        {DType::fp32, DType::fp8e4m3, f(0x1p-10f), 0x00, "half of 2^-9: even 0"},
        {DType::fp32, DType::fp8e4m3, f(0x1.8p-10f), 0x01, "above half: 2^-9"},
        {DType::fp32, DType::fp8e5m2, f(57344.0f), 0x7B, "largest finite"},
        {DType::fp32, DType::fp8e5m2, f(61440.0f), 0x7C, "tie with 65536 (even): infinity"},
        {DType::fp32, DType::fp8e5m2, 0xFFC12345u, 0xFE, "NaN: quiet, sign kept, payload's top bits 10"},
        {DType::fp8e4m3, DType::fp32, 0xFF, 0xFFF00000u, "E4M3's NaN: mantissa 111 on top"},
        {DType::fp8e5m2, DType::fp16, 0x7D, 0x7F00, "signalling NaN: quiet, payload kept"},
        {DType::fp16, DType::fp8e5m2, 0x7BFF, 0x7C, "65504 rounds past 57344 to infinity"},
        {DType::int32, DType::fp16, 2049, 0x6800, "tie between 2048 and 2050: 2048"},
        {DType::int32, DType::bf16, 257, 0x4380, "tie between 256 and 258: 256"},
        {DType::int32, DType::fp32, 16777217, 0x4B800000u, "tie: 2^24"},
        {DType::int32, DType::int8, 300, 0x2C, "low 8 bits"},
        {DType::int16, DType::boolean, 0x100, 1, "non-zero"},
        {DType::boolean, DType::int32, 1, 1, "true is 1"},
    };
    for (const Case& c : cases) {
        Rig gpu = vulkan_rig();
        auto p = gpu.must_load(cast_graph(c.from, c.to, 3));
        auto out = gpu.run_raw(*p, {pack(c.from, {c.in, c.in, c.in})});
        for (std::size_t i = 0; i < 3; ++i)
            if (element(out[0], c.to, i) != c.want)
                fail_msg("CAST %s -> %s of %#x (%s): got %#x, want %#x", name_of(c.from).c_str(),
                         name_of(c.to).c_str(), c.in, c.why, element(out[0], c.to, i), c.want);
        gpu.finish(p);
    }
}

// ----- variants ---------------------------------------------------------------

// The kernel and the dtype specialization words the lowering gives `graph`'s
// one computing operator.
tosa::KernelSpec planned_kernel(const tosa::Graph& graph)
{
    auto analysis = tosa::analyze(graph);
    assert_ok(analysis);
    auto plan = tosa::plan_block(graph, *analysis, tosa::BlockRef{0, 0}, tosa::PlanOptions{},
                                 [](const tosa::OperatorView& view) { return vk::lower(view, {}); });
    assert_ok(plan);
    assert_int_equal(plan->dispatches.size(), 1);
    return plan->dispatches[0].kernel;
}

void fp32_keeps_the_plain_kernels_and_narrow_dtypes_take_the_narrow_ones(void**)
{
    using K = vk::KernelId;
    const auto id = [](K k) { return static_cast<std::uint32_t>(k); };
    // Elementwise: constants 1..41, the four operand dtypes (42..45),
    // common.glsl's codes FP32 0, BOOL 2, FP16 3, BF16 4, then nan_mode (46),
    // DENSE (47) and the 20 words of an epilogue (48..67; none here).
    auto fp32 = planned_kernel(binary(Op::add, DType::fp32, 5, DType::fp32));
    assert_int_equal(fp32.kernel, id(K::elementwise));
    assert_int_equal(fp32.spec.size(), 67);
    assert_int_equal(fp32.spec[47], 0);
    for (std::size_t k = 41; k < 45; ++k) assert_int_equal(fp32.spec[k], 0);
    auto fp16 = planned_kernel(binary(Op::add, DType::fp16, 5, DType::fp16));
    assert_int_equal(fp16.kernel, id(K::elementwise_narrow));
    assert_int_equal(fp16.spec[41], 3);
    assert_int_equal(fp16.spec[42], 3);
    auto compare_bf16 = planned_kernel(binary(Op::greater, DType::bf16, 5, DType::boolean));
    assert_int_equal(compare_bf16.kernel, id(K::elementwise_narrow));
    assert_int_equal(compare_bf16.spec[41], 2);
    assert_int_equal(compare_bf16.spec[42], 4);
    // BOOL results alone stay on the plain kernel (bytes through atomics).
    auto compare_fp32 = planned_kernel(binary(Op::equal, DType::fp32, 5, DType::boolean));
    assert_int_equal(compare_fp32.kernel, id(K::elementwise));
    // CAST FP32 -> INT32 needs no narrow storage; FP32 -> FP8E4M3 (code 5) does.
    assert_int_equal(planned_kernel(cast_graph(DType::fp32, DType::int32, 5)).kernel, id(K::elementwise));
    auto to_fp8 = planned_kernel(cast_graph(DType::fp32, DType::fp8e4m3, 5));
    assert_int_equal(to_fp8.kernel, id(K::elementwise_narrow));
    assert_int_equal(to_fp8.spec[41], 5);
    assert_int_equal(to_fp8.spec[42], 0);
    // Reduce: IN_DT and OUT_DT are constants 9 and 10.
    const auto reduce = [](DType d) {
        tosa::GraphBuilder g;
        const auto in = g.tensor("x", {3, 4}, d);
        const auto out = g.tensor("out", {3, 1}, d);
        g.op(Op::reduce_sum, {in}, {out}, tosa::axis_attr(1));
        g.input(in);
        g.output(out);
        return g.finish();
    };
    auto r32 = planned_kernel(reduce(DType::fp32));
    assert_int_equal(r32.kernel, id(K::reduce));
    auto r16 = planned_kernel(reduce(DType::bf16));
    assert_int_equal(r16.kernel, id(K::reduce_narrow));
    assert_int_equal(r16.spec[8], 4);
    assert_int_equal(r16.spec[9], 4);
}

// The spec word of constant_id 47 (index 46), DENSE: 4 = uvec4 quads, 1 =
// dense one element at a time, 0 = the general path.
void contiguous_32_bit_operands_take_the_dense_elementwise_path(void**)
{
    auto add = planned_kernel(binary(Op::add, DType::fp32, 5, DType::fp32));
    assert_int_equal(add.spec[46], 4);
    assert_int_equal(add.work, 2);  // ceil(5 / 4) invocations, one per quad
    // CAST FP32 -> INT32 (32 bits both sides) is dense; to FP16 it is not.
    assert_int_equal(planned_kernel(cast_graph(DType::fp32, DType::int32, 5)).spec[46], 4);
    assert_int_equal(planned_kernel(cast_graph(DType::fp32, DType::fp16, 5)).spec[46], 0);
    // A BOOL result and FP16 operands keep the general path, one invocation
    // per element.
    auto equal = planned_kernel(binary(Op::equal, DType::fp32, 5, DType::boolean));
    assert_int_equal(equal.spec[46], 0);
    assert_int_equal(equal.work, 5);
    assert_int_equal(planned_kernel(binary(Op::add, DType::fp16, 5, DType::fp16)).spec[46], 0);
    // Broadcast: b [1,3] over a [2,3] is the general path; [1,3] + [1,3]
    // is dense (the stride of an extent-1 dimension never matters).
    const auto add_shapes = [](std::vector<std::int64_t> a_shape, std::vector<std::int64_t> out) {
        tosa::GraphBuilder g;
        const auto a = g.tensor("a", a_shape, DType::fp32);
        const auto b = g.tensor("b", {1, 3}, DType::fp32);
        const auto o = g.tensor("out", out, DType::fp32);
        g.op(Op::add, {a, b}, {o});
        g.input(a);
        g.input(b);
        g.output(o);
        return g.finish();
    };
    assert_int_equal(planned_kernel(add_shapes({2, 3}, {2, 3})).spec[46], 0);
    assert_int_equal(planned_kernel(add_shapes({1, 3}, {1, 3})).spec[46], 4);
    // CONCAT of [3] and [5] into [8]: two dense copies; the second writes
    // from element 3, not a whole quad: dense, one element at a time.
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {3}, DType::fp32);
    const auto y = g.tensor("y", {5}, DType::fp32);
    const auto c = g.tensor("c", {8}, DType::fp32);
    g.op(Op::concat, {x, y}, {c}, tosa::axis_attr(0));
    g.input(x);
    g.input(y);
    g.output(c);
    const tosa::Graph concat = g.finish();
    auto analysis = tosa::analyze(concat);
    assert_ok(analysis);
    auto plan = tosa::plan_block(concat, *analysis, tosa::BlockRef{0, 0}, tosa::PlanOptions{},
                                 [](const tosa::OperatorView& view) { return vk::lower(view, {}); });
    assert_ok(plan);
    assert_int_equal(plan->dispatches.size(), 2);
    assert_int_equal(plan->dispatches[0].kernel.spec[46], 4);
    assert_int_equal(plan->dispatches[1].kernel.spec[8], 3);  // BASE0: element 3
    assert_int_equal(plan->dispatches[1].kernel.spec[46], 1);
    assert_int_equal(plan->dispatches[1].kernel.work, 5);
}

// ----- descriptor and refusals --------------------------------------------------

void the_descriptor_lists_the_narrow_dtypes_only_with_narrow_storage(void**)
{
    // Without 8- and 16-bit storage: the FP32 tier and the spatial
    // operators (test_programs_spatial.cpp) exactly, no BF16, no CAST.
    const auto plain = vk::vulkan_descriptor(vk::StorageFeatures{});
    assert_true(plain == vk::vulkan_descriptor());
    assert_null(plain.dtype(DType::bf16));
    // FP16 is there, for MATMUL and the spatial operators (neither needs
    // 16-bit storage), not for ADD.
    using V = std::vector<DType>;
    assert_true(plain.operator_capability(Op::conv2d)->dtypes == (V{DType::fp32, DType::fp16}));
    assert_true(plain.operator_capability(Op::slice)->dtypes ==
                (V{DType::boolean, DType::int32, DType::fp32, DType::fp16}));
    assert_true(plain.operator_capability(Op::add)->dtypes.empty());
    assert_false(plain.supports_operator(Op::cast));
    assert_true(vk::vulkan_descriptor(vk::StorageFeatures{true, false}) == vk::vulkan_descriptor());
    // With both (lavapipe has them): the narrow dtypes in every role, CAST.
    auto backend = lavapipe();
    const auto descriptors = backend->tosa_descriptors();
    assert_int_equal(descriptors.size(), 1);
    const auto& d = descriptors[0];
    for (DType t : {DType::fp16, DType::bf16, DType::fp8e4m3, DType::fp8e5m2, DType::int8,
                    DType::int16, DType::fp32, DType::int32, DType::boolean})
        for (auto role : {tosa::Role::input, tosa::Role::output, tosa::Role::constant,
                          tosa::Role::intermediate})
            assert_true(d.supports_dtype(t, role));
    assert_true(d.supports_operator(Op::cast));
    assert_int_equal(d.operators.size(), tosa::fp32_tier().operators.size() + 1 + 8);  // CAST, spatial
    // Each operator states the dtypes its kernels run (DType values ascending:
    // BOOL 1, INT8 3, INT16 4, INT32 5, FP32 7, FP16 8, BF16 9, FP8E4M3 11,
    // FP8E5M2 12), as the tables of docs/operators.md list them.
    const auto dtypes = [&](Op op) { return d.operator_capability(op)->dtypes; };
    assert_true(dtypes(Op::add) == (V{DType::fp32, DType::fp16, DType::bf16}));
    assert_true(dtypes(Op::mul) == (V{DType::int8, DType::fp32, DType::fp16, DType::bf16}));
    assert_true(dtypes(Op::greater) == (V{DType::boolean, DType::fp32, DType::fp16, DType::bf16}));
    assert_true(dtypes(Op::matmul) == (V{DType::fp32, DType::fp16}));
    assert_true(dtypes(Op::argmax) == (V{DType::int32, DType::fp32, DType::fp16, DType::bf16,
                                         DType::fp8e4m3, DType::fp8e5m2}));
    assert_true(dtypes(Op::transpose) == (V{DType::boolean, DType::int32, DType::fp32, DType::fp16,
                                            DType::bf16, DType::fp8e4m3, DType::fp8e5m2}));
    assert_true(dtypes(Op::cast) == (V{DType::boolean, DType::int8, DType::int16, DType::int32,
                                       DType::fp32, DType::fp16, DType::bf16, DType::fp8e4m3,
                                       DType::fp8e5m2}));
    assert_true(dtypes(Op::logical_not) == (V{DType::boolean}));
    assert_true(dtypes(Op::depthwise_conv2d) == (V{DType::fp32, DType::fp16, DType::bf16}));
    assert_true(dtypes(Op::pad) == (V{DType::boolean, DType::int32, DType::fp32, DType::fp16,
                                      DType::bf16, DType::fp8e4m3, DType::fp8e5m2}));
    assert_int_equal(d.target.profiles, VACCEL_TOSA_PRO_FP | VACCEL_TOSA_PRO_INT);
    assert_int_equal(d.target.extensions, VACCEL_TOSA_EXT_BF16 | VACCEL_TOSA_EXT_FP8E4M3 |
                                              VACCEL_TOSA_EXT_FP8E5M2 | VACCEL_TOSA_EXT_INT16);
    assert_int_equal(backend->device_info().tosa_targets[0].extensions, d.target.extensions);
}

void dtypes_without_a_kernel_are_refused_with_the_reason(void**)
{
    // A device without narrow storage: admission refuses BF16 (the
    // descriptor does not list it; FP16 it lists for MATMUL alone):
    // Unsupported, VACCEL_D_TOSA_DTYPE, arg0 = BF16, arg1 = the input's
    // first consumer, ADD.
    const auto bf16_add = binary(Op::add, DType::bf16, 4, DType::bf16);
    auto analysis = tosa::analyze(bf16_add);
    assert_ok(analysis);
    assert_refused(tosa::admit(bf16_add, *analysis, vk::vulkan_descriptor(vk::StorageFeatures{})),
                   Errc::unsupported, VACCEL_D_TOSA_DTYPE, DType::bf16, Op::add);
    // On lavapipe FP8 is listed, but no kernel adds FP8 (nor does the CPU).
    Rig gpu = vulkan_rig();
    auto refused = gpu.load(binary(Op::add, DType::fp8e4m3, 4, DType::fp8e4m3));
    assert_refused(refused, Errc::unsupported, VACCEL_D_TOSA_DTYPE, DType::fp8e4m3, Op::add);
    assert_non_null(std::strstr(refused.error().note.c_str(), "no kernel for ADD on FP8E4M3"));
    // TOSA 1.0 has no FP16 -> BF16 CAST: refused as the CPU refuses it,
    // arg0 = CAST, arg1 = the result's dtype.
    auto no_pair = gpu.load(cast_graph(DType::fp16, DType::bf16, 4));
    assert_refused(no_pair, Errc::unsupported, VACCEL_D_TOSA_OPERATOR, Op::cast, DType::bf16);
    assert_non_null(std::strstr(no_pair.error().note.c_str(), "no CAST from FP16 to BF16"));
    // CLAMP's bounds must be one element of the operand's dtype.
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {4}, DType::fp16);
    const auto out = g.tensor("out", {4}, DType::fp16);
    g.op(Op::clamp, {x}, {out}, tosa::clamp_f32_attr(-1.0f, 1.0f));  // 4-byte bounds
    g.input(x);
    g.output(out);
    assert_refused(gpu.load(g.finish()), Errc::invalid_argument, VACCEL_D_TOSA_GRAPH,
                   VACCEL_TOSA_BAD_ATTRIBUTE, Op::clamp);
    gpu.finish();
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fp16_and_bf16_binary_operators_match_the_cpu_bit_for_bit),
        cmocka_unit_test(hand_derived_fp16_and_bf16_results),
        cmocka_unit_test(fp16_and_bf16_unary_operators_match_the_cpu),
        cmocka_unit_test(fp16_and_bf16_select_reductions_and_pools_match_the_cpu),
        cmocka_unit_test(max_pool2d_and_argmax_match_the_cpu_on_every_narrow_float),
        cmocka_unit_test(copies_move_every_narrow_pattern_exactly),
        cmocka_unit_test(bytes_beside_a_narrow_result_are_untouched),
        cmocka_unit_test(a_narrow_chain_through_the_arena_matches_the_cpu),
        cmocka_unit_test(pad_slice_and_tile_move_narrow_elements_exactly),
        cmocka_unit_test(narrow_convolutions_and_average_pools_match_the_cpu),
        cmocka_unit_test(narrow_accumulators_and_mixed_dtypes_are_checked),
        cmocka_unit_test(every_cast_pair_the_cpu_runs_matches_it_exactly),
        cmocka_unit_test(hand_derived_casts),
        cmocka_unit_test(fp32_keeps_the_plain_kernels_and_narrow_dtypes_take_the_narrow_ones),
        cmocka_unit_test(contiguous_32_bit_operands_take_the_dense_elementwise_path),
        cmocka_unit_test(the_descriptor_lists_the_narrow_dtypes_only_with_narrow_storage),
        cmocka_unit_test(dtypes_without_a_kernel_are_refused_with_the_reason),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
