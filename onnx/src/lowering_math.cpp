// lowering_math.cpp - the trigonometric, hyperbolic and classifying ONNX
// ops TOSA 1.0 has no operator for, and DFT (lowering.hpp lists what each
// becomes).
//
// TOSA has SIN, COS, EXP, LOG, POW, RECIPROCAL and RSQRT; the rest are
// built from them. Where a textbook identity cancels (asinh and atanh near
// 0, sinh near 0, acos near 1) the form below keeps the relative error near
// FP32's: log1p by Kahan's correction, sinh by its series below |x| = 0.5,
// acos as 2 atan(sqrt((1 - x) / (1 + x))). atan itself is Cephes' atanf:
// the argument reduced to |t| <= tan(pi / 8) and a degree-9 odd
// polynomial, within a few ULP of FP32 over the whole line.
#include "lowering_context.hpp"

#include <limits>
#include <numbers>

namespace vaccel::onnx::lowering {

namespace {

using tosa::DType;

// The operations of one node's formula, all over the node's dims.
struct Math {
    Lowering& l;
    Dims dims;
    DType type;  // the operands' (a classifying op's result is BOOL)

    std::size_t rank() const { return dims.size(); }
    Value k(float c) const { return l.constant_typed(Dims(rank(), 1), {c}, type); }
    Value add(Value a, Value b) const { return l.binary(Op::add, a, b, dims); }
    Value sub(Value a, Value b) const { return l.binary(Op::sub, a, b, dims); }
    Value mul(Value a, Value b) const { return l.mul(a, b, dims); }
    Value div(Value a, Value b) const { return mul(a, l.unary(Op::reciprocal, b, dims)); }
    Value un(Op op, Value a) const { return l.unary(op, a, dims); }
    Value sqrt(Value a) const { return l.binary(Op::pow, a, k(0.5f), dims); }
    Value greater(Value a, Value b) const { return l.apply(Op::greater, {a, b}, dims, DType::boolean); }
    Value equal(Value a, Value b) const { return l.apply(Op::equal, {a, b}, dims, DType::boolean); }
    Value select(Value c, Value a, Value b) const { return l.apply(Op::select, {c, a, b}, dims, a.dtype); }
    // x with the sign of s (s's sign bit: -0 counts as negative).
    Value signed_like(Value x, Value s) const
    {
        return select(greater(k(0.0f), s), un(Op::negate, x), x);
    }

    // log(1 + y) for y >= -1, exact to a few ULP near 0: u = 1 + y rounds,
    // and log(u) * y / (u - 1) undoes that rounding (u == 1: y itself).
    Value log1p(Value y) const
    {
        Value u = add(k(1.0f), y);
        Value corrected = mul(un(Op::log, u), div(y, sub(u, k(1.0f))));
        // u == inf: log(u) itself (the correction would be inf / inf).
        Value finite = greater(k(std::numeric_limits<float>::infinity()), u);
        return select(equal(u, k(1.0f)), y, select(finite, corrected, un(Op::log, u)));
    }

    // atan(x): sign(x) (offset + t + t z p(z)), z = t^2, from
    //  a = |x| > tan(3 pi / 8): t = -1 / a, offset pi / 2;
    //  a > tan(pi / 8):         t = (a - 1) / (a + 1), offset pi / 4;
    //  otherwise:               t = a, offset 0.
    Value atan(Value x) const
    {
        const float pi = std::numbers::pi_v<float>;
        Value a = un(Op::abs, x);
        Value high = greater(a, k(2.414213562373095f));
        Value mid = greater(a, k(0.4142135623730950f));
        Value t = select(high, un(Op::negate, un(Op::reciprocal, a)),
                         select(mid, div(sub(a, k(1.0f)), add(a, k(1.0f))), a));
        Value offset = select(high, k(pi / 2), select(mid, k(pi / 4), k(0.0f)));
        Value z = mul(t, t);
        Value p = add(mul(k(8.05374449538e-2f), z), k(-1.38776856032e-1f));
        p = add(mul(p, z), k(1.99777106478e-1f));
        p = add(mul(p, z), k(-3.33329491539e-1f));
        Value r = add(offset, add(t, mul(mul(p, z), t)));
        return signed_like(r, x);
    }
};

// An op whose formula is `f` of its one input.
template <class F>
Lower formula(F f)
{
    return [f](Lowering& l, const Node& node) -> Status {
        auto ops = l.operands(node, 1);
        if (!ops) return fail(ops.error());
        const Math m{l, ops->dims, ops->in[0].dtype};
        return l.bind(node, 0, f(m, ops->in[0]));
    };
}

Value tan_of(const Math& m, Value x) { return m.div(m.un(Op::sin, x), m.un(Op::cos, x)); }

Value atan_of(const Math& m, Value x) { return m.atan(x); }

// asin(x) = atan(x / sqrt((1 - x)(1 + x))): +-1 divide to +-inf, whose
// atan is +-pi / 2.
Value asin_of(const Math& m, Value x)
{
    Value one = m.k(1.0f);
    return m.atan(m.div(x, m.sqrt(m.mul(m.sub(one, x), m.add(one, x)))));
}

// acos(x) = 2 atan(sqrt((1 - x) / (1 + x))): no cancellation near 1, and
// -1 gives 2 atan(inf) = pi.
Value acos_of(const Math& m, Value x)
{
    Value one = m.k(1.0f);
    return m.mul(m.k(2.0f), m.atan(m.sqrt(m.div(m.sub(one, x), m.add(one, x)))));
}

// sinh(x): (e^x - e^-x) / 2, which cancels near 0, where the series
// x + x^3/3! + x^5/5! + x^7/7! is exact to FP32 (|x| < 0.5).
Value sinh_of(const Math& m, Value x)
{
    Value e = m.un(Op::exp, x);
    Value wide = m.mul(m.k(0.5f), m.sub(e, m.un(Op::reciprocal, e)));
    Value z = m.mul(x, x);
    Value p = m.add(m.mul(m.k(1.0f / 5040.0f), z), m.k(1.0f / 120.0f));
    p = m.add(m.mul(p, z), m.k(1.0f / 6.0f));
    Value series = m.add(x, m.mul(m.mul(p, z), x));
    return m.select(m.greater(m.k(0.5f), m.un(Op::abs, x)), series, wide);
}

Value cosh_of(const Math& m, Value x)
{
    Value e = m.un(Op::exp, x);
    return m.mul(m.k(0.5f), m.add(e, m.un(Op::reciprocal, e)));
}

// asinh(x) = sign(x) log1p(a + a^2 / (1 + sqrt(1 + a^2))), a = |x|; past
// 2^26, a^2 overflows or adds nothing: log(a) + log(2).
Value asinh_of(const Math& m, Value x)
{
    Value a = m.un(Op::abs, x);
    Value a2 = m.mul(a, a);
    Value near = m.log1p(m.add(a, m.div(a2, m.add(m.k(1.0f), m.sqrt(m.add(m.k(1.0f), a2))))));
    Value far = m.add(m.un(Op::log, a), m.k(std::numbers::ln2_v<float>));
    Value r = m.select(m.greater(a, m.k(67108864.0f)), far, near);
    return m.signed_like(r, x);
}

// acosh(x) = log1p((x - 1) + sqrt((x - 1)(x + 1))) for x >= 1 (NaN
// below; x - 1 is exact near 1, where the result is about sqrt(2 (x - 1)));
// past 2^26, log(x) + log(2).
Value acosh_of(const Math& m, Value x)
{
    Value one = m.k(1.0f);
    Value above = m.sub(x, one);
    Value near = m.log1p(m.add(above, m.sqrt(m.mul(above, m.add(x, one)))));
    Value far = m.add(m.un(Op::log, x), m.k(std::numbers::ln2_v<float>));
    return m.select(m.greater(x, m.k(67108864.0f)), far, near);
}

// atanh(x) = sign(x) log1p(2a / (1 - a)) / 2, a = |x|.
Value atanh_of(const Math& m, Value x)
{
    Value a = m.un(Op::abs, x);
    Value r = m.mul(m.k(0.5f), m.log1p(m.div(m.mul(m.k(2.0f), a), m.sub(m.k(1.0f), a))));
    return m.signed_like(r, x);
}

// Sign: 1, -1 or 0 (and NaN for NaN), in the input's type.
Status lower_sign(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 1);
    if (!ops) return fail(ops.error());
    const Value& x = ops->in[0];
    const Math m{l, ops->dims, x.dtype};
    Value zero = m.k(0.0f);
    Value s = m.select(m.greater(x, zero), m.k(1.0f), m.select(m.greater(zero, x), m.k(-1.0f), zero));
    if (x.dtype != DType::int32) s = m.select(m.equal(x, x), s, x);  // NaN stays NaN
    return l.bind(node, 0, s);
}

Status lower_is_nan(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 1);
    if (!ops) return fail(ops.error());
    const Math m{l, ops->dims, ops->in[0].dtype};
    const Value& x = ops->in[0];
    return l.bind(node, 0, l.apply(Op::logical_not, {m.equal(x, x)}, ops->dims, DType::boolean));
}

// IsInf: x == +inf (detect_positive) or x == -inf (detect_negative).
Status lower_is_inf(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 1);
    if (!ops) return fail(ops.error());
    const Math m{l, ops->dims, ops->in[0].dtype};
    const Value& x = ops->in[0];
    const float inf = std::numeric_limits<float>::infinity();
    const bool positive = int_attr(node, "detect_positive", 1) != 0;
    const bool negative = int_attr(node, "detect_negative", 1) != 0;
    const Value none = l.constant_ints(Dims(m.rank(), 1), {0}, DType::boolean);
    Value pos = positive ? m.equal(x, m.k(inf)) : none;
    Value neg = negative ? m.equal(x, m.k(-inf)) : none;
    return l.bind(node, 0, l.apply(Op::logical_or, {pos, neg}, ops->dims, DType::boolean));
}

// DFT along `axis` of a real ([..., 1]) or complex ([..., 2]) signal, as
// MATMULs by constant cos and sin matrices (made at import in double):
// forward X[k] = sum x[n] e^(-2 pi i k n / N), inverse with e^(+...) and
// 1 / N; onesided keeps k <= N / 2. The signal axis is moved to rows of
// [1, N, B], B the product of the other dims.
Status lower_dft(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 1);
    if (!ops) return fail(ops.error());
    const Value& x = ops->in[0];
    const Dims& out = ops->dims;
    const std::size_t rank = x.dims.size();
    if (rank < 2 || (x.dims.back() != 1 && x.dims.back() != 2) || out.size() != rank || out.back() != 2)
        return fail(l.refuse(node, "its signal is not [..., 1] (real) or [..., 2] (complex)"));
    auto axis = static_cast<std::int64_t>(int_attr(node, "axis", 1));
    if (axis < 0) axis += static_cast<std::int64_t>(rank);
    if (axis < 0 || axis + 1 >= static_cast<std::int64_t>(rank))
        return fail(l.refuse(node, fmt::format("axis {} is not one of the signal's dims", int_attr(node, "axis", 1))));
    const auto a = static_cast<std::size_t>(axis);
    const std::int64_t n = x.dims[a];
    if (node.input_size() > 1 && !node.input(1).empty()) {
        const ConstantData* length = l.constant_of(node.input(1));
        if (length == nullptr || length->ints.size() != 1 || length->ints[0] != n)
            return fail(l.refuse(node, "its dft_length is not the signal's own length (padding or cutting the "
                                       "signal is not imported)"));
    }
    const bool inverse = int_attr(node, "inverse", 0) != 0, onesided = int_attr(node, "onesided", 0) != 0;
    if (inverse && onesided) return fail(l.refuse(node, "an inverse onesided DFT is not imported"));
    const std::int64_t k = out[a];
    if (k != (onesided ? n / 2 + 1 : n)) return fail(l.refuse(node, "its result's length along the axis does not fit"));
    // [.., N at a, .., c] -> [N, B] per component: the signal axis first.
    std::vector<std::int32_t> perm{static_cast<std::int32_t>(a)};
    for (std::size_t d = 0; d + 1 < rank; ++d)
        if (d != a) perm.push_back(static_cast<std::int32_t>(d));
    perm.push_back(static_cast<std::int32_t>(rank - 1));
    const Value moved = l.transpose(x, perm);
    const std::int64_t b = elements(x.dims) / (n * x.dims.back());
    auto component = [&](std::int64_t c) {
        Dims start(rank, 0), size = moved.dims;
        start.back() = c;
        size.back() = 1;
        return l.reshape(l.slice(moved, start, size), {1, n, b});
    };
    const double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
    std::vector<float> cosines, sines;  // [K, N]: cos and sign * sin of 2 pi k n / N, scaled
    for (std::int64_t i = 0; i < k; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            const double phase = 2.0 * std::numbers::pi * static_cast<double>((i * j) % n) / static_cast<double>(n);
            cosines.push_back(static_cast<float>(scale * std::cos(phase)));
            sines.push_back(static_cast<float>(scale * sign * std::sin(phase)));
        }
    const Value cos_m = l.constant({1, k, n}, std::move(cosines)), sin_m = l.constant({1, k, n}, std::move(sines));
    auto product = [&](const Value& m, const Value& v) {
        Value y = l.tensor({1, k, b});
        l.builder().op(Op::matmul, {m.tensor, v.tensor, l.zero_point(), l.zero_point()}, {y.tensor});
        return y;
    };
    // (xr + i xi)(cos + i s sin) = xr cos - xi s sin + i (xr s sin + xi cos).
    const Value xr = component(0);
    Value re = product(cos_m, xr), im = product(sin_m, xr);
    if (x.dims.back() == 2) {
        const Value xi = component(1);
        re = l.binary(Op::sub, re, product(sin_m, xi), re.dims);
        im = l.binary(Op::add, im, product(cos_m, xi), im.dims);
    }
    // [1, K, B] each -> [K, other dims..., 1], joined on the last dim, then
    // the axis put back.
    Dims part = moved.dims;
    part[0] = k;
    part.back() = 1;
    Dims joined = part;
    joined.back() = 2;
    Value y = l.tensor(joined);
    l.builder().op(Op::concat, {l.reshape(re, part).tensor, l.reshape(im, part).tensor}, {y.tensor},
                   tosa::axis_attr(static_cast<std::int32_t>(rank - 1)));
    std::vector<std::int32_t> back(rank);
    for (std::size_t d = 0; d < rank; ++d) back[static_cast<std::size_t>(perm[d])] = static_cast<std::int32_t>(d);
    return l.bind(node, 0, l.transpose(y, back));
}

}  // namespace

void add_math(Table& table)
{
    table.emplace("Tan", formula(tan_of));
    table.emplace("Atan", formula(atan_of));
    table.emplace("Asin", formula(asin_of));
    table.emplace("Acos", formula(acos_of));
    table.emplace("Sinh", formula(sinh_of));
    table.emplace("Cosh", formula(cosh_of));
    table.emplace("Asinh", formula(asinh_of));
    table.emplace("Acosh", formula(acosh_of));
    table.emplace("Atanh", formula(atanh_of));
    table.emplace("Sign", Entry(lower_sign, number_values));
    table.emplace("IsNaN", Entry(lower_is_nan, float_values | bool_values));  // a BOOL result
    table.emplace("IsInf", Entry(lower_is_inf, float_values | bool_values));
    table.emplace("DFT", lower_dft);
}

}  // namespace vaccel::onnx::lowering
