// lowering_resize.cpp - ONNX's Resize (opsets 10 to 18's forms Debian's
// ONNX knows) and Upsample.
//
// Decides:
//  - what an output sample reads is computed at import, axis by axis, by
//    ONNX's own definition (its reference interpolates one axis at a time):
//    for each output index, the input indices it reads and their weights,
//    from the coordinate transformation (half_pixel, pytorch_half_pixel,
//    align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize),
//    the mode (nearest with its rounding, linear, cubic with cubic_coeff_a
//    and exclude_outside) and the scale (out / in for `sizes`, the given
//    value for `scales`), in double precision as the reference does;
//  - where TOSA's RESIZE reads exactly those samples (a 4-D input, only H
//    and W resized, nearest or linear, and a scale, offset and border
//    within TOSA 1.0's limits whose samples were compared index by index
//    with the definition's), the node is one RESIZE between NCHW <-> NHWC
//    transposes: what runs on every device, at the cost of the samples;
//  - otherwise (cubic, crop and resize, a scale TOSA cannot hold exactly, a
//    tie ONNX's double arithmetic breaks the other way, other axes) each
//    resized axis is one MATMUL by the constant [in, out] matrix of its
//    weights (the axis moved last, then back). Exact for the definition
//    up to float rounding; its cost is in * out per row, so it is the
//    fallback, not the rule. A crop-and-resize sample outside the input
//    gets extrapolation_value: its weights are zero and a constant adds
//    the value where any axis falls outside; a matrix or that constant of
//    more than max_weights values (a model declaring huge dims) is refused
//    rather than allocated;
//  - Resize of opset 10 and Upsample: asymmetric coordinates; nearest
//    takes the floor where the axis grows and the ceiling where it
//    shrinks, as onnxruntime defines those opsets.
#include <cmath>
#include <numeric>

#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

// The most values one constant the fallback makes may hold (64 MiB of FP32).
constexpr std::int64_t max_weights = std::int64_t{1} << 24;

enum class Transform { half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize };
enum class Mode { nearest, linear, cubic };
enum class Rounding { prefer_floor, prefer_ceil, floor, ceil, opset10 };

struct ResizeRule {
    Mode mode = Mode::nearest;
    Transform transform = Transform::half_pixel;
    Rounding rounding = Rounding::prefer_floor;
    double cubic_a = -0.75;
    bool exclude_outside = false;
    float extrapolation = 0.0f;
};

// One output index's reads: (input index, weight) pairs, indices clamped
// into the input (ONNX pads by repeating the edge); `outside`: a crop and
// resize sample past the input (extrapolation_value).
struct Sample {
    std::vector<std::pair<std::int64_t, double>> reads;
    bool outside = false;
};

std::vector<double> coefficients(const ResizeRule& rule, double ratio, bool integral,
                                 bool shrinking)
{
    switch (rule.mode) {
    case Mode::linear: return {1.0 - ratio, ratio};
    case Mode::cubic: {
        const double a = rule.cubic_a, r = ratio, s = 1.0 - ratio;
        return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                ((a + 2) * r - (a + 3)) * r * r + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
                ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
    }
    case Mode::nearest:
        if (integral) return {0.0, 1.0};
        switch (rule.rounding) {
        case Rounding::prefer_floor: return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
        case Rounding::prefer_ceil: return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
        case Rounding::floor: return {1.0, 0.0};
        case Rounding::ceil: return {0.0, 1.0};
        case Rounding::opset10: return shrinking ? std::vector<double>{0.0, 1.0} : std::vector<double>{1.0, 0.0};
        }
    }
    return {};
}

// The samples of one axis by ONNX's definition. `scale` is the one the
// definition divides by; `roi` the axis's [start, end] for crop and resize.
std::vector<Sample> samples_of(const ResizeRule& rule, std::int64_t in, std::int64_t out,
                               double scale, double roi_start, double roi_end)
{
    std::vector<Sample> samples(static_cast<std::size_t>(out));
    const double in_d = static_cast<double>(in);
    const double out_d = scale * in_d;  // the definition's output width, not rounded
    for (std::int64_t o = 0; o < out; ++o) {
        const double x = static_cast<double>(o);
        double at = 0;
        switch (rule.transform) {
        case Transform::align_corners: at = out_d == 1 ? 0.0 : x * (in_d - 1) / (out_d - 1); break;
        case Transform::asymmetric: at = x / scale; break;
        case Transform::tf_half_pixel_for_nn: at = (x + 0.5) / scale; break;
        case Transform::pytorch_half_pixel: at = out_d == 1 ? -0.5 : (x + 0.5) / scale - 0.5; break;
        case Transform::half_pixel: at = (x + 0.5) / scale - 0.5; break;
        case Transform::tf_crop_and_resize:
            at = out_d == 1 ? (roi_end - roi_start) * (in_d - 1) / 2
                            : x * (roi_end - roi_start) * (in_d - 1) / (out_d - 1);
            at += roi_start * (in_d - 1);
            if (at < 0 || at > in_d - 1) {
                samples[static_cast<std::size_t>(o)].outside = true;
                continue;
            }
            break;
        }
        // The definition keeps the fraction in (0, 1]: a whole position is
        // 1 past the index before it.
        const bool integral = at == std::floor(at);
        const double base = integral ? at - 1 : std::floor(at);
        const double ratio = at - base;
        std::vector<double> c = coefficients(rule, ratio, integral, scale < 1.0);
        const auto taps = static_cast<std::int64_t>(c.size());
        // The definition's taps: the `taps` indices nearest `at`, ties to
        // the smaller: they start taps/2 - 1 below `base`.
        const std::int64_t first = static_cast<std::int64_t>(base) + 1 - taps / 2;
        if (rule.exclude_outside) {
            double sum = 0;
            for (std::int64_t t = 0; t < taps; ++t) {
                const std::int64_t i = first + t;
                if (i < 0 || i >= in) c[static_cast<std::size_t>(t)] = 0;
                sum += c[static_cast<std::size_t>(t)];
            }
            for (double& v : c) v /= sum;
        }
        Sample& s = samples[static_cast<std::size_t>(o)];
        for (std::int64_t t = 0; t < taps; ++t) {
            const double w = c[static_cast<std::size_t>(t)];
            if (w == 0) continue;
            const std::int64_t i = std::clamp<std::int64_t>(first + t, 0, in - 1);
            auto same = std::ranges::find_if(s.reads, [i](const auto& r) { return r.first == i; });
            if (same != s.reads.end()) same->second += w;
            else s.reads.emplace_back(i, w);
        }
    }
    return samples;
}

bool identity(const std::vector<Sample>& samples, std::int64_t in)
{
    if (static_cast<std::int64_t>(samples.size()) != in) return false;
    for (std::size_t o = 0; o < samples.size(); ++o)
        if (samples[o].outside || samples[o].reads.size() != 1 ||
            samples[o].reads[0].first != static_cast<std::int64_t>(o) || samples[o].reads[0].second != 1.0)
            return false;
    return true;
}

// One axis of a TOSA RESIZE: position (o * d + offset) / n.
struct TosaAxis {
    std::int64_t n = 1, d = 1, offset = 0, border = 0;
};

// What TOSA's RESIZE reads for output `o` of `axis` (the CPU device's
// definition, TOSA 1.0's): the floor and its successor, clamped, with the
// fraction; nearest takes the successor from half up.
std::vector<std::pair<std::int64_t, double>> tosa_reads(const TosaAxis& a, std::int64_t o,
                                                        std::int64_t in, bool bilinear)
{
    const std::int64_t y = o * a.d + a.offset;
    const std::int64_t i = y >= 0 ? y / a.n : -((-y + a.n - 1) / a.n);
    const double f = static_cast<double>(y - i * a.n) / static_cast<double>(a.n);
    const std::int64_t i0 = std::clamp<std::int64_t>(i, 0, in - 1);
    const std::int64_t i1 = std::clamp<std::int64_t>(i + 1, 0, in - 1);
    if (!bilinear) return {{f >= 0.5 ? i1 : i0, 1.0}};
    std::vector<std::pair<std::int64_t, double>> reads;
    if (1 - f != 0) reads.emplace_back(i0, 1 - f);
    if (f != 0) {
        if (!reads.empty() && reads[0].first == i1) reads[0].second += f;
        else reads.emplace_back(i1, f);
    }
    return reads;
}

// A TOSA geometry for the axis that reads what `samples` says, or nothing.
// The candidates: the scale as a small fraction (or align_corners' (out-1)
// / (in-1)) in quarter units, so half a pixel is whole, each transform's
// offset, shifted so TOSA's round-half-up rounds as the nearest mode does
// (prefer_floor: one unit less, tried after none in case no sample ties),
// reduced by the common divisor; each is checked sample by sample, so a
// geometry is used only where it reads exactly what the definition does.
std::optional<TosaAxis> tosa_axis(const ResizeRule& rule, const std::vector<Sample>& samples,
                                  std::int64_t in, double scale)
{
    if (rule.mode == Mode::cubic || rule.transform == Transform::tf_crop_and_resize) return std::nullopt;
    const auto out = static_cast<std::int64_t>(samples.size());
    const auto reads_as_defined = [&](const TosaAxis& a) {
        for (std::int64_t o = 0; o < out; ++o) {
            const auto& want = samples[static_cast<std::size_t>(o)].reads;
            const auto got = tosa_reads(a, o, in, rule.mode == Mode::linear);
            if (want.size() != got.size()) return false;
            for (const auto& [i, w] : got) {
                auto match = std::ranges::find_if(want, [i](const auto& r) { return r.first == i; });
                if (match == want.end() || std::abs(match->second - w) > 1e-6) return false;
            }
        }
        return true;
    };
    const bool align = rule.transform == Transform::align_corners;
    if (align && (out == 1 || in == 1)) return std::nullopt;
    for (std::int64_t den = 1; den <= 64; ++den) {
        std::int64_t num = 0;
        if (!align) {
            const double num_d = scale * static_cast<double>(den);
            num = std::llround(num_d);
            if (num < 1 || std::abs(num_d - static_cast<double>(num)) > 1e-9 * num_d) continue;
        }
        const std::int64_t n = align ? 4 * (out - 1) : 4 * num, d = align ? 4 * (in - 1) : 4 * den;
        std::int64_t offset = 0;
        if (rule.transform == Transform::half_pixel || rule.transform == Transform::pytorch_half_pixel)
            offset = 2 * den - 2 * num;
        else if (rule.transform == Transform::tf_half_pixel_for_nn)
            offset = 2 * den;
        std::vector<std::int64_t> shifts{0};
        if (rule.mode == Mode::nearest) switch (rule.rounding) {
            case Rounding::prefer_ceil: break;
            case Rounding::prefer_floor: shifts = {0, -1}; break;
            case Rounding::floor: shifts = {-n / 2}; break;
            case Rounding::ceil: shifts = {n / 2 - 1}; break;
            case Rounding::opset10: shifts = {scale < 1.0 ? n / 2 - 1 : -n / 2}; break;
            }
        for (const std::int64_t shift : shifts) {
            TosaAxis a{n, d, offset + shift, 0};
            const std::int64_t g = std::gcd(std::gcd(a.n, a.d), std::abs(a.offset));
            a.n /= g, a.d /= g, a.offset /= g;
            a.border = (out - 1) * a.d - (in - 1) * a.n + a.offset;
            // TOSA 1.0's limits (the CPU device checks the same).
            if (a.n > 2048 || a.d >= 16 * a.n || a.offset < -a.n || a.offset >= 16 * a.n ||
                a.border < -16 * a.n || a.border >= a.n)
                continue;
            if (reads_as_defined(a)) return a;
        }
        if (align) break;
    }
    return std::nullopt;
}

// `x` with its axis `axis` resized by the constant matrix of `samples`.
Value resize_axis(Lowering& l, Value x, std::size_t axis, const std::vector<Sample>& samples)
{
    const std::int64_t in = x.dims[axis], out = static_cast<std::int64_t>(samples.size());
    std::vector<std::int32_t> perm;
    for (std::size_t i = 0; i < x.dims.size(); ++i)
        if (i != axis) perm.push_back(static_cast<std::int32_t>(i));
    perm.push_back(static_cast<std::int32_t>(axis));
    Value moved = l.transpose(x, perm);
    const std::int64_t rows = elements(moved.dims) / in;
    std::vector<float> weights(static_cast<std::size_t>(in * out), 0.0f);
    for (std::int64_t o = 0; o < out; ++o)
        for (const auto& [i, w] : samples[static_cast<std::size_t>(o)].reads)
            weights[static_cast<std::size_t>(i * out + o)] += static_cast<float>(w);
    Value product = l.tensor({1, rows, out});
    l.builder().op(Op::matmul,
                   {l.reshape(moved, {1, rows, in}).tensor, l.constant({1, in, out}, std::move(weights)).tensor,
                    l.zero_point(), l.zero_point()},
                   {product.tensor});
    Dims moved_out = moved.dims;
    moved_out.back() = out;
    std::vector<std::int32_t> back(perm.size());
    for (std::size_t i = 0; i < perm.size(); ++i) back[static_cast<std::size_t>(perm[i])] = static_cast<std::int32_t>(i);
    return l.transpose(l.reshape(product, moved_out), back);
}

Result<ResizeRule> rule_of(Lowering& l, const Node& node, bool legacy)
{
    ResizeRule rule;
    const auto* mode = attribute(node, "mode");
    const std::string m = mode != nullptr ? mode->s() : "nearest";
    if (m == "nearest") rule.mode = Mode::nearest;
    else if (m == "linear" || (legacy && m == "bilinear")) rule.mode = Mode::linear;
    else if (m == "cubic" && !legacy) rule.mode = Mode::cubic;
    else return fail(l.refuse(node, fmt::format("mode '{}' is not an ONNX mode of this op", m)));
    if (legacy) {
        rule.transform = Transform::asymmetric;
        rule.rounding = Rounding::opset10;
        return rule;
    }
    const auto* t = attribute(node, "coordinate_transformation_mode");
    const std::string transform = t != nullptr ? t->s() : "half_pixel";
    static const std::pair<const char*, Transform> transforms[] = {
        {"half_pixel", Transform::half_pixel},
        {"pytorch_half_pixel", Transform::pytorch_half_pixel},
        {"align_corners", Transform::align_corners},
        {"asymmetric", Transform::asymmetric},
        {"tf_half_pixel_for_nn", Transform::tf_half_pixel_for_nn},
        {"tf_crop_and_resize", Transform::tf_crop_and_resize}};
    const auto* found = std::ranges::find_if(transforms, [&](const auto& p) { return transform == p.first; });
    if (found == std::end(transforms))
        return fail(l.refuse(node, fmt::format("coordinate_transformation_mode '{}' is not an ONNX mode", transform)));
    rule.transform = found->second;
    const auto* r = attribute(node, "nearest_mode");
    const std::string rounding = r != nullptr ? r->s() : "round_prefer_floor";
    if (rounding == "round_prefer_floor") rule.rounding = Rounding::prefer_floor;
    else if (rounding == "round_prefer_ceil") rule.rounding = Rounding::prefer_ceil;
    else if (rounding == "floor") rule.rounding = Rounding::floor;
    else if (rounding == "ceil") rule.rounding = Rounding::ceil;
    else return fail(l.refuse(node, fmt::format("nearest_mode '{}' is not an ONNX mode", rounding)));
    rule.cubic_a = float_attr(node, "cubic_coeff_a", -0.75f);
    rule.exclude_outside = int_attr(node, "exclude_outside", 0) != 0;
    rule.extrapolation = float_attr(node, "extrapolation_value", 0.0f);
    if (int_attr(node, "antialias", 0) != 0)
        return fail(l.refuse(node, "antialias is not imported"));
    return rule;
}

// A constant input of floats (roi, scales); empty when absent.
Result<std::vector<float>> float_input(Lowering& l, const Node& node, int i, const char* what)
{
    if (node.input_size() <= i || node.input(i).empty()) return std::vector<float>{};
    const ConstantData* data = l.constant_of(node.input(i));
    if (data == nullptr)
        return fail(l.refuse(node, fmt::format("its {} are computed at run time; only constant {} "
                                               "are imported (give the input's value)",
                                               what, what)));
    return data->floats;
}

Status lower_resize_as(Lowering& l, const Node& node, bool legacy)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    auto rule = rule_of(l, node, legacy);
    if (!rule) return fail(rule.error());
    const std::size_t rank = x->dims.size();
    if (dims->size() != rank) return fail(l.refuse(node, "its output's rank is not its input's"));
    // Where the scales are: Upsample-7's attribute, Upsample-9's and
    // Resize-10's input 1, Resize-11's input 2 (or sizes, input 3).
    std::vector<float> scales, roi;
    if (legacy && l.model().opset() < 9) {
        const auto* a = attribute(node, "scales");
        if (a != nullptr) scales.assign(a->floats().begin(), a->floats().end());
    } else {
        auto s = float_input(l, node, legacy ? 1 : 2, "scales");
        if (!s) return fail(s.error());
        scales = std::move(*s);
        if (!legacy) {
            auto r = float_input(l, node, 1, "roi");
            if (!r) return fail(r.error());
            roi = std::move(*r);
        }
    }
    const bool by_sizes = scales.empty();
    if (!by_sizes && scales.size() != rank)
        return fail(l.refuse(node, fmt::format("it has {} scales for an input of rank {}", scales.size(), rank)));
    if (rule->transform == Transform::tf_crop_and_resize && roi.size() != 2 * rank)
        return fail(l.refuse(node, "tf_crop_and_resize needs a constant roi of 2 values per axis"));
    std::vector<std::vector<Sample>> axes(rank);
    std::vector<double> scale(rank);
    std::vector<bool> resized(rank, false);
    bool outside = false;  // a crop and resize sample past the input, on some axis
    for (std::size_t a = 0; a < rank; ++a) {
        const std::int64_t in = x->dims[a], out = (*dims)[a];
        if (in < 1 || out < 1) return fail(l.refuse(node, "an axis of its input or output is empty"));
        if (out > max_weights)
            return fail(l.refuse(node, fmt::format("axis {} resizes to {}, more samples than the "
                                                   "{} the importer computes",
                                                   a, out, max_weights)));
        scale[a] = by_sizes ? static_cast<double>(out) / static_cast<double>(in)
                            : static_cast<double>(scales[a]);
        if (!(scale[a] > 0)) return fail(l.refuse(node, fmt::format("scale {} is not positive", scale[a])));
        axes[a] = samples_of(*rule, in, out, scale[a], roi.empty() ? 0.0 : roi[a],
                             roi.empty() ? 1.0 : roi[a + rank]);
        resized[a] = !identity(axes[a], in);
        outside = outside || std::ranges::any_of(axes[a], [](const Sample& s) { return s.outside; });
    }
    // One TOSA RESIZE where it reads exactly those samples.
    if (rank == 4 && !resized[0] && !resized[1] && rule->mode != Mode::cubic) {
        const auto h = tosa_axis(*rule, axes[2], x->dims[2], scale[2]);
        const auto w = tosa_axis(*rule, axes[3], x->dims[3], scale[3]);
        if (h && w) {
            Value xt = l.to_channels_last(*x);
            Value yt = l.tensor({(*dims)[0], (*dims)[2], (*dims)[3], (*dims)[1]});
            tosa::Attributes attrs;
            attrs.present = true;
            attrs.resize_mode = rule->mode == Mode::linear ? 2 : 1;  // BILINEAR, NEAREST_NEIGHBOR
            l.builder().op(Op::resize,
                           {xt.tensor, l.shape_operand({h->n, h->d, w->n, w->d}),
                            l.shape_operand({h->offset, w->offset}), l.shape_operand({h->border, w->border})},
                           {yt.tensor}, attrs);
            return l.bind(node, 0, l.to_channels_first(yt));
        }
    }
    // Else one MATMUL per resized axis, then extrapolation_value where a
    // crop and resize sample fell outside.
    Value y = *x;
    for (std::size_t a = 0; a < rank; ++a) {
        if (!resized[a]) continue;
        if (x->dims[a] > max_weights / (*dims)[a])
            return fail(l.refuse(node, fmt::format("axis {} resizes {} to {}: its weight matrix "
                                                   "would hold more than {} values (TOSA's "
                                                   "RESIZE cannot read these samples)",
                                                   a, x->dims[a], (*dims)[a], max_weights)));
        y = resize_axis(l, y, a, axes[a]);
    }
    if (outside && rule->extrapolation != 0.0f) {
        if (elements(*dims) > max_weights)
            return fail(l.refuse(node, fmt::format("its extrapolation_value fills an output of {} "
                                                   "elements, more than the {} the importer "
                                                   "computes",
                                                   elements(*dims), max_weights)));
        std::vector<float> fill(static_cast<std::size_t>(elements(*dims)), 0.0f);
        for (std::int64_t i = 0; i < elements(*dims); ++i) {
            std::int64_t rest = i;
            bool out = false;
            for (std::size_t a = rank; a-- > 0;) {
                const std::int64_t at = rest % (*dims)[a];
                rest /= (*dims)[a];
                out = out || axes[a][static_cast<std::size_t>(at)].outside;
            }
            if (out) fill[static_cast<std::size_t>(i)] = rule->extrapolation;
        }
        y = l.binary(Op::add, y, l.constant(*dims, std::move(fill)), *dims);
    }
    return l.bind(node, 0, y);
}

}  // namespace

void add_resize(Table& table)
{
    table.emplace("Resize", [](Lowering& l, const Node& node) {
        return lower_resize_as(l, node, l.model().opset() < 11);
    });
    table.emplace("Upsample", [](Lowering& l, const Node& node) { return lower_resize_as(l, node, true); });
}

}  // namespace vaccel::onnx::lowering
