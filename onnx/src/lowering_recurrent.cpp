// lowering_recurrent.cpp - ONNX's RNN, GRU and LSTM, unrolled over their
// (static) sequence (lowering.hpp lists what each becomes).
//
// Decides:
//  - the input's products with W, for every step at once, are one MATMUL
//    ([seq * batch, input] by W's transpose); each step then adds its
//    hidden state's product with R (one MATMUL of [batch, hidden]) and the
//    biases, and applies the gates as ONNX defines them: RNN h = f(.);
//    GRU z, r, h~ (linear_before_reset either way); LSTM i, o, f, c with
//    peepholes, the cell clipped where `clip` says;
//  - directions forward, reverse and bidirectional (each direction its own
//    unrolled chain, the results stacked on the direction axis), layout 0
//    ([seq, batch, ...]) and 1 ([batch, seq, ...]);
//  - activations Sigmoid, Tanh and Relu (the defaults and the common
//    choices); others are refused naming them;
//  - sequence_lens must be known at import and every one the full
//    sequence: shorter sequences in a batch would need per-row masking,
//    which is not imported.
#include <limits>

#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

using tosa::DType;

enum class Cell { rnn, gru, lstm };

struct Spec {
    Cell cell;
    std::int64_t gates;                  // 1, 3, 4
    std::vector<std::string> defaults;   // the activations of one direction
};

// The activation named `name` of `v` (2-D).
Result<Value> activate(Lowering& l, const Node& node, const std::string& name, const Value& v)
{
    if (name == "Sigmoid") return l.unary(Op::sigmoid, v, v.dims);
    if (name == "Tanh") return l.unary(Op::tanh, v, v.dims);
    if (name == "Relu")
        return l.unary(Op::clamp, v, v.dims, tosa::clamp_f32_attr(0.0f, std::numeric_limits<float>::infinity()));
    return fail(l.refuse(node, fmt::format("activation {} is not imported (Sigmoid, Tanh and Relu are)", name)));
}

// Rows [from, from + count) of 2-D `v`, or columns where `columns`.
Value part(Lowering& l, const Value& v, std::int64_t from, std::int64_t count, bool columns)
{
    if (columns) return l.slice(v, {0, from}, {v.dims[0], count});
    return l.slice(v, {from, 0}, {count, v.dims[1]});
}

// [1, m, k] x [1, k, n] of 2-D operands, as [m, n].
Value product(Lowering& l, const Value& a, const Value& b)
{
    Value out = l.tensor({1, a.dims[0], b.dims[1]});
    l.builder().op(Op::matmul,
                   {l.reshape(a, {1, a.dims[0], a.dims[1]}).tensor, l.reshape(b, {1, b.dims[0], b.dims[1]}).tensor,
                    l.zero_point(), l.zero_point()},
                   {out.tensor});
    return l.reshape(out, {a.dims[0], b.dims[1]});
}

Lower recurrent(Spec spec)
{
    return [spec](Lowering& l, const Node& node) -> Status {
        // Not operands(): output 0 (Y) may be absent.
        Value in[3];
        for (int i = 0; i < 3; ++i) {
            auto v = l.input(node, i);
            if (!v) return fail(v.error());
            in[i] = *v;
        }
        Value x = in[0];
        const Value &w = in[1], &r = in[2];
        const std::int64_t hidden = int_attr(node, "hidden_size", 0);
        const bool batch_first = int_attr(node, "layout", 0) != 0;
        const auto* direction = attribute(node, "direction");
        const std::string dir = direction != nullptr ? direction->s() : "forward";
        const std::int64_t dirs = dir == "bidirectional" ? 2 : 1;
        if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
            return fail(l.refuse(node, fmt::format("direction {} is not an ONNX direction", dir)));
        if (x.dims.size() != 3 || hidden < 1 || w.dims != Dims{dirs, spec.gates * hidden, x.dims[2]} ||
            r.dims != Dims{dirs, spec.gates * hidden, hidden})
            return fail(l.refuse(node, "its input, W, R and hidden_size do not fit one another"));
        if (batch_first) x = l.transpose(x, {1, 0, 2});
        const std::int64_t seq = x.dims[0], batch = x.dims[1], input = x.dims[2], g = spec.gates * hidden;
        auto optional_input = [&](int i) -> Result<std::optional<Value>> {
            if (node.input_size() <= i || node.input(i).empty()) return std::optional<Value>{};
            auto v = l.input(node, i);
            if (!v) return fail(v.error());
            return std::optional<Value>(*v);
        };
        if (node.input_size() > 4 && !node.input(4).empty()) {
            const ConstantData* lens = l.constant_of(node.input(4));
            if (lens == nullptr || std::ranges::any_of(lens->ints, [&](std::int64_t n) { return n != seq; }))
                return fail(l.refuse(node, "its sequence_lens are not all the full sequence (known at import)"));
        }
        auto bias = optional_input(3);
        if (!bias) return fail(bias.error());
        auto initial_h = optional_input(5);
        if (!initial_h) return fail(initial_h.error());
        auto initial_c = spec.cell == Cell::lstm ? optional_input(6) : Result<std::optional<Value>>{};
        if (!initial_c) return fail(initial_c.error());
        auto peepholes = spec.cell == Cell::lstm ? optional_input(7) : Result<std::optional<Value>>{};
        if (!peepholes) return fail(peepholes.error());
        std::vector<std::string> names = spec.defaults;
        if (const auto* a = attribute(node, "activations"); a != nullptr && a->strings_size() > 0) {
            names.assign(a->strings().begin(), a->strings().end());
            if (names.size() != spec.defaults.size() * static_cast<std::size_t>(dirs))
                return fail(l.refuse(node, "its activations are not one set per direction"));
        } else if (dirs == 2) {
            names.insert(names.end(), spec.defaults.begin(), spec.defaults.end());
        }
        if (attribute(node, "activation_alpha") != nullptr || attribute(node, "activation_beta") != nullptr)
            return fail(l.refuse(node, "activation_alpha and activation_beta are not imported"));
        const float clip = float_attr(node, "clip", 0.0f);
        const bool linear_before_reset = int_attr(node, "linear_before_reset", 0) != 0;
        if (spec.cell == Cell::lstm && int_attr(node, "input_forget", 0) != 0)
            return fail(l.refuse(node, "input_forget is not imported"));

        const Value x2 = l.reshape(x, {seq * batch, input});
        std::vector<std::uint32_t> ys, last_h, last_c;  // per direction: [seq, 1, batch, hidden], [1, batch, hidden]
        for (std::int64_t d = 0; d < dirs; ++d) {
            const bool backward = dir == "reverse" || d == 1;
            auto of_direction = [&](const Value& v, Dims rest) {
                Dims start(v.dims.size(), 0), size = v.dims;
                start[0] = d;
                size[0] = 1;
                return l.reshape(l.slice(v, start, size), rest);
            };
            const Value wt = l.transpose(of_direction(w, {g, input}), {1, 0});   // [input, g]
            const Value rt = l.transpose(of_direction(r, {g, hidden}), {1, 0});  // [hidden, g]
            Value xw = product(l, x2, wt);                                       // [seq * batch, g]
            std::optional<Value> wb, rb;
            if (*bias) {
                const Value both = of_direction(**bias, {1, 2 * g});
                wb = part(l, both, 0, g, true);
                rb = part(l, both, g, g, true);
                xw = l.binary(Op::add, xw, *wb, xw.dims);
            }
            const auto act = [&](std::size_t i, const Value& v) {
                return activate(l, node, names[static_cast<std::size_t>(d) * spec.defaults.size() + i], v);
            };
            auto clipped = [&](const Value& v) {
                return clip > 0.0f ? l.unary(Op::clamp, v, v.dims, tosa::clamp_f32_attr(-clip, clip)) : v;
            };
            const Dims state{batch, hidden};
            Value h = *initial_h ? of_direction(**initial_h, state) : l.constant(state, std::vector<float>(static_cast<std::size_t>(batch * hidden), 0.0f));
            Value c = *initial_c ? of_direction(**initial_c, state) : l.constant(state, std::vector<float>(static_cast<std::size_t>(batch * hidden), 0.0f));
            std::optional<Value> p;
            if (*peepholes) p = of_direction(**peepholes, {1, 3 * hidden});
            std::vector<Value> steps(static_cast<std::size_t>(seq));
            for (std::int64_t i = 0; i < seq; ++i) {
                const std::int64_t t = backward ? seq - 1 - i : i;
                const Value xt = part(l, xw, t * batch, batch, false);  // [batch, g]
                auto gate = [&](const Value& all, std::int64_t k) { return part(l, all, k * hidden, hidden, true); };
                if (spec.cell == Cell::rnn) {
                    Value pre = l.binary(Op::add, xt, product(l, h, rt), xt.dims);
                    if (rb) pre = l.binary(Op::add, pre, *rb, pre.dims);
                    auto nh = act(0, clipped(pre));
                    if (!nh) return fail(nh.error());
                    h = *nh;
                } else if (spec.cell == Cell::gru) {  // gates z, r, h
                    const Value rt_zr = part(l, rt, 0, 2 * hidden, true), rt_h = part(l, rt, 2 * hidden, hidden, true);
                    Value zr = l.binary(Op::add, part(l, xt, 0, 2 * hidden, true), product(l, h, rt_zr),
                                      Dims{batch, 2 * hidden});
                    if (rb) zr = l.binary(Op::add, zr, part(l, *rb, 0, 2 * hidden, true), zr.dims);
                    auto z = act(0, clipped(gate(zr, 0)));
                    if (!z) return fail(z.error());
                    auto rg = act(0, clipped(gate(zr, 1)));
                    if (!rg) return fail(rg.error());
                    const std::optional<Value> rbh = rb ? std::optional(part(l, *rb, 2 * hidden, hidden, true)) : std::nullopt;
                    Value recurrent_h;
                    if (linear_before_reset) {
                        recurrent_h = product(l, h, rt_h);
                        if (rbh) recurrent_h = l.binary(Op::add, recurrent_h, *rbh, state);
                        recurrent_h = l.mul(*rg, recurrent_h, state);
                    } else {
                        recurrent_h = product(l, l.mul(*rg, h, state), rt_h);
                        if (rbh) recurrent_h = l.binary(Op::add, recurrent_h, *rbh, state);
                    }
                    auto candidate = act(1, clipped(l.binary(Op::add, gate(xt, 2), recurrent_h, state)));
                    if (!candidate) return fail(candidate.error());
                    // h = (1 - z) h~ + z h = h~ + z (h - h~)
                    h = l.binary(Op::add, *candidate, l.mul(*z, l.binary(Op::sub, h, *candidate, state), state), state);
                } else {  // LSTM: gates i, o, f, c; peepholes i, o, f
                    Value pre = l.binary(Op::add, xt, product(l, h, rt), xt.dims);
                    if (rb) pre = l.binary(Op::add, pre, *rb, pre.dims);
                    auto peep = [&](Value v, std::int64_t k, const Value& cell) {
                        return p ? l.binary(Op::add, v, l.mul(part(l, *p, k * hidden, hidden, true), cell, state), state) : v;
                    };
                    auto in = act(0, clipped(peep(gate(pre, 0), 0, c)));
                    if (!in) return fail(in.error());
                    auto forget = act(0, clipped(peep(gate(pre, 2), 2, c)));
                    if (!forget) return fail(forget.error());
                    auto candidate = act(1, clipped(gate(pre, 3)));
                    if (!candidate) return fail(candidate.error());
                    c = l.binary(Op::add, l.mul(*forget, c, state), l.mul(*in, *candidate, state), state);
                    auto out = act(0, clipped(peep(gate(pre, 1), 1, c)));
                    if (!out) return fail(out.error());
                    auto hc = act(2, c);
                    if (!hc) return fail(hc.error());
                    h = l.mul(*out, *hc, state);
                }
                steps[static_cast<std::size_t>(t)] = h;
            }
            std::vector<std::uint32_t> stacked;
            for (const Value& s : steps) stacked.push_back(l.reshape(s, {1, 1, batch, hidden}).tensor);
            Value y = l.tensor({seq, 1, batch, hidden});
            l.builder().op(Op::concat, stacked, {y.tensor}, tosa::axis_attr(0));
            ys.push_back(y.tensor);
            last_h.push_back(l.reshape(h, {1, batch, hidden}).tensor);
            last_c.push_back(l.reshape(c, {1, batch, hidden}).tensor);
        }
        auto joined = [&](const std::vector<std::uint32_t>& parts, Dims dims, std::int32_t axis) {
            if (parts.size() == 1) return Value{parts[0], dims, DType::fp32};
            Value v = l.tensor(dims);
            l.builder().op(Op::concat, parts, {v.tensor}, tosa::axis_attr(axis));
            return v;
        };
        Value y = joined(ys, {seq, dirs, batch, hidden}, 1);
        Value yh = joined(last_h, {dirs, batch, hidden}, 0), yc = joined(last_c, {dirs, batch, hidden}, 0);
        if (batch_first) {
            y = l.transpose(y, {2, 0, 1, 3});
            yh = l.transpose(yh, {1, 0, 2});
            yc = l.transpose(yc, {1, 0, 2});
        }
        const Value results[3] = {y, yh, yc};
        for (int o = 0; o < node.output_size() && o < 3; ++o) {
            if (node.output(o).empty()) continue;
            auto dims = l.output_dims(node, o);
            if (!dims) return fail(dims.error());
            if (*dims != results[o].dims) return fail(l.refuse(node, fmt::format("output {} is not of the shape it computes", o)));
            if (auto bound = l.bind(node, o, l.unary(Op::identity, results[o], *dims)); !bound) return bound;
        }
        return {};
    };
}

}  // namespace

void add_recurrent(Table& table)
{
    table.emplace("RNN", recurrent({Cell::rnn, 1, {"Tanh"}}));
    table.emplace("GRU", recurrent({Cell::gru, 3, {"Sigmoid", "Tanh"}}));
    table.emplace("LSTM", recurrent({Cell::lstm, 4, {"Sigmoid", "Tanh", "Tanh"}}));
}

}  // namespace vaccel::onnx::lowering
