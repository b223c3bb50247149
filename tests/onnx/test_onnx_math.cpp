// test_onnx_math.cpp - the error of the ONNX ops built from other TOSA
// operators (onnx/src/lowering_math.cpp) over their whole domains, in
// units in the last place of FP32 against a float64 reference, on the CPU
// device. The node suite checks these ops only to ONNX's 1e-3 relative
// tolerance, at a few points; this sweeps each domain and its small
// arguments, where the textbook identities cancel.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "onnx_model_support.hpp"

namespace {

using namespace cpu_test;
using onnx_test::T;

// Evenly spaced points of [lo, hi] and, where the domain holds them,
// anchor +- 2^-20 .. 2^-1: the arguments where cancellation would show.
std::vector<float> sweep(float lo, float hi, float anchor)
{
    std::vector<float> x;
    constexpr int steps = 20000;
    for (int i = 0; i <= steps; ++i) x.push_back(lo + (hi - lo) * static_cast<float>(i) / steps);
    for (float s = 0x1p-20f; s < 0.5f; s *= 1.0625f)
        for (float v : {anchor + s, anchor - s})
            if (v > lo && v < hi) x.push_back(v);
    return x;
}

// |got - want| in units of FP32's spacing at want.
double ulps(float got, double want)
{
    const float w = static_cast<float>(want);
    const double spacing = std::nextafter(std::fabs(w), std::numeric_limits<float>::infinity()) - std::fabs(w);
    return std::fabs(static_cast<double>(got) - want) / spacing;
}

struct Case {
    const char* op;
    float lo, hi;
    double (*reference)(double);
    double max_ulps;  // what the formula holds to on the CPU device
    float anchor = 0.0f;  // where the formula could cancel
};

void check(const Case& c)
{
    const std::vector<float> x = sweep(c.lo, c.hi, c.anchor);
    const std::int64_t n = static_cast<std::int64_t>(x.size());
    const std::vector<float> y = from_bytes<float>(
        onnx_test::run_on_cpu({.op = c.op, .inputs = {{"x", T::FLOAT, {n}}}, .outputs = {{"y", T::FLOAT, {n}}}},
                              {to_bytes(x)})[0]);
    double worst = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double e = ulps(y[i], c.reference(x[i]));
        if (!(e <= worst)) worst = e, at = i;  // NaN counts as worst
    }
    print_message("%s over [%g, %g]: at most %.1f ULP (x = %.9g: %.9g, want %.17g)\n", c.op,
                  static_cast<double>(c.lo), static_cast<double>(c.hi), worst, static_cast<double>(x[at]),
                  static_cast<double>(y[at]), c.reference(x[at]));
    if (!(worst <= c.max_ulps)) fail_msg("%s: %.1f ULP, over its bound of %.0f", c.op, worst, c.max_ulps);
}

const Case cases[] = {
    {"Tan", -1.5f, 1.5f, [](double x) { return std::tan(x); }, 4},
    {"Atan", -1e4f, 1e4f, [](double x) { return std::atan(x); }, 4},
    {"Asin", -1.0f, 1.0f, [](double x) { return std::asin(x); }, 4},
    {"Acos", -1.0f, 1.0f, [](double x) { return std::acos(x); }, 4, 1.0f},
    {"Sinh", -20.0f, 20.0f, [](double x) { return std::sinh(x); }, 4},
    {"Cosh", -20.0f, 20.0f, [](double x) { return std::cosh(x); }, 4},
    {"Asinh", -1e6f, 1e6f, [](double x) { return std::asinh(x); }, 4},
    {"Acosh", 1.0f, 1e6f, [](double x) { return std::acosh(x); }, 4, 1.0f},
    {"Atanh", -0.9999f, 0.9999f, [](double x) { return std::atanh(x); }, 4},
};

void each_case(void**)
{
    for (const Case& c : cases) check(c);
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {cmocka_unit_test(each_case)};
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
