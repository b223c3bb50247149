// test_onnx_ops.cpp - forms of the imported ops that the ONNX node suite
// holds no test for (Pad's wrap mode and cropping pads, Slice's steps, OneHot's
// indices outside the depth, BitShift's wrap, MatMulInteger of INT8 by
// UINT8 at the types' extremes, the layout kept NHWC between convolutions,
// grouped and 1-D Conv, grouped ConvTranspose, integer Pow on run-time
// exponents, a onesided DFT, a bidirectional RNN),
// and their refusals, on the
// CPU device with exact results.
#include "onnx_model_support.hpp"

namespace {

using namespace onnx_test;
using cpu_test::from_bytes;
using cpu_test::to_bytes;

const std::vector<float> x23{1, 2, 3, 4, 5, 6};  // [[1, 2, 3], [4, 5, 6]]

NodeModel pad(std::string mode, std::vector<std::int64_t> pads, std::vector<std::int64_t> out)
{
    NodeModel m{.op = "Pad",
                .inputs = {{"x", T::FLOAT, {2, 3}}},
                .outputs = {{"y", T::FLOAT, out}},
                .attrs = {{"mode", {}, {}, {}, mode}}};
    m.constants.push_back({"pads", {static_cast<std::int64_t>(pads.size())}, pads});
    m.node_inputs = {"x", "pads"};
    return m;
}

std::vector<float> floats_of(const NodeModel& m, const std::vector<cpu_test::Bytes>& inputs)
{
    return from_bytes<float>(run_on_cpu(m, inputs)[0]);
}

void pad_wraps_crops_reflects_and_repeats_edges(void**)
{
    // pads: begins then ends, per axis.
    const auto wrapped = floats_of(pad("wrap", {0, 1, 0, 2}, {2, 6}), {to_bytes(x23)});
    assert_true((wrapped == std::vector<float>{3, 1, 2, 3, 1, 2, 6, 4, 5, 6, 4, 5}));
    const auto cropped = floats_of(pad("constant", {0, -1, 1, 0}, {3, 2}), {to_bytes(x23)});
    assert_true((cropped == std::vector<float>{2, 3, 5, 6, 0, 0}));
    const auto edged = floats_of(pad("edge", {0, 1, 0, 1}, {2, 5}), {to_bytes(x23)});
    assert_true((edged == std::vector<float>{1, 1, 2, 3, 3, 4, 4, 5, 6, 6}));
    const auto reflected = floats_of(pad("reflect", {1, 2, 0, 0}, {3, 5}), {to_bytes(x23)});
    assert_true((reflected == std::vector<float>{6, 5, 4, 5, 6, 3, 2, 1, 2, 3, 6, 5, 4, 5, 6}));
    assert_string_equal(refusal(pad("reflect", {0, 3, 0, 0}, {2, 6})).c_str(),
                        "node 'Pad' (Pad): mode reflect pads axis 1 of 3 elements by 3 and 0");
    assert_string_equal(refusal(pad("symmetric", {0, 1, 0, 0}, {2, 4})).c_str(),
                        "node 'Pad' (Pad): mode symmetric is none of constant, edge, reflect and wrap");
}

// x = 0 .. 6 sliced from `start` to `end` by `step`: count results.
std::vector<float> sliced(std::int64_t start, std::int64_t end, std::int64_t step, std::int64_t count)
{
    NodeModel m{.op = "Slice", .inputs = {{"x", T::FLOAT, {7}}}, .outputs = {{"y", T::FLOAT, {count}}}};
    m.constants = {{"starts", {1}, {start}}, {"ends", {1}, {end}}, {"axes", {1}, {0}}, {"steps", {1}, {step}}};
    m.node_inputs = {"x", "starts", "ends", "axes", "steps"};
    return floats_of(m, {to_bytes(std::vector<float>{0, 1, 2, 3, 4, 5, 6})});
}

void slice_takes_every_step(void**)
{
    assert_true((sliced(1, 7, 2, 3) == std::vector<float>{1, 3, 5}));
    assert_true((sliced(0, 7, 3, 3) == std::vector<float>{0, 3, 6}));  // past the end: padded, then dropped
    assert_true((sliced(-1, INT64_MIN, -2, 4) == std::vector<float>{6, 4, 2, 0}));
    assert_true((sliced(100, 0, -3, 2) == std::vector<float>{6, 3}));  // a start past the end clamps to 6
}

void one_hot_marks_nothing_outside_its_depth(void**)
{
    NodeModel m{.op = "OneHot",
                .inputs = {{"indices", T::INT64, {4}}, {"values", T::FLOAT, {2}}},
                .outputs = {{"y", T::FLOAT, {4, 4}}}};
    m.constants.push_back({"depth", {}, {4}});
    m.node_inputs = {"indices", "depth", "values"};
    // -1 counts from the depth (3); 7 and -5 lie outside [-4, 4).
    const std::vector<std::int32_t> indices{0, -1, 7, -5};
    const auto y = floats_of(m, {to_bytes(indices), to_bytes(std::vector<float>{-2, 5})});
    assert_true((y == std::vector<float>{5, -2, -2, -2, -2, -2, -2, 5, -2, -2, -2, -2, -2, -2, -2, -2}));
}

void bit_shift_left_wraps_at_the_width(void**)
{
    NodeModel m{.op = "BitShift",
                .inputs = {{"x", T::UINT8, {3}}, {"s", T::UINT8, {3}}},
                .outputs = {{"y", T::UINT8, {3}}},
                .attrs = {{"direction", {}, {}, {}, "LEFT"}}};
    // UINT8 is carried as INT32: 200 << 1 = 400 wraps to 144, 3 << 7 to 128.
    const auto y = from_bytes<std::int32_t>(
        run_on_cpu(m, {to_bytes(std::vector<std::int32_t>{200, 3, 1}), to_bytes(std::vector<std::int32_t>{1, 7, 0})})[0]);
    assert_true((y == std::vector<std::int32_t>{144, 128, 1}));
}

// A = INT8 [2, 3], B = UINT8 [3, 2], zero points -128 and 255 (the
// types' ends): exact INT32 sums of (a - za)(b - zb), past INT16.
NodeModel matmul_integer(std::vector<std::int64_t> b_zero_dims)
{
    NodeModel m{.op = "MatMulInteger",
                .inputs = {{"A", T::INT8, {2, 3}}, {"B", T::UINT8, {3, 2}}},
                .outputs = {{"Y", T::INT32, {2, 2}}}};
    // Zero points given by value keep these declared types.
    m.inputs.push_back({"za", T::INT8, {}});
    m.inputs.push_back({"zb", T::UINT8, b_zero_dims});
    return m;
}

void matmul_integer_sums_exactly_in_int32(void**)
{
    const std::vector<std::int32_t> a{127, -128, 0, 5, -7, 100}, b{0, 255, 128, 1, 255, 0};
    const std::string model = serialized(matmul_integer({}));
    vaccel::onnx::ImportOptions options;
    options.input_values["za"] = {{}, {-128}, false, {}};
    options.input_values["zb"] = {{}, {255}, false, {}};
    auto imported = vaccel::onnx::import_model(std::as_bytes(std::span(model)), options);
    assert_ok(imported);
    cpu_test::Rig rig;
    auto program = rig.must_load(std::move(imported->graph));
    const auto y = from_bytes<std::int32_t>(cpu_test::run_ok(rig, *program, {to_bytes(a), to_bytes(b)})[0]);
    assert_ok(rig.backend->unload_program(program));
    std::vector<std::int32_t> want(4, 0);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            for (int k = 0; k < 3; ++k) want[i * 2 + j] += (a[i * 3 + k] + 128) * (b[k * 2 + j] - 255);
    assert_true(y == want);
    assert_int_equal(want[0], (255 * -255) + (0 * -127) + (128 * 0));  // -65025: beyond INT16
    // A zero point per column of B: TOSA takes one per operand.
    const std::string per_column = serialized(matmul_integer({2}));
    options.input_values["zb"] = {{2}, {255, 0}, false, {}};
    auto refused = vaccel::onnx::import_model(std::as_bytes(std::span(per_column)), options);
    assert_false(refused.has_value());
    assert_string_equal(refused.error().note.c_str(),
                        "node 'MatMulInteger' (MatMulInteger): its zero point 'zb' holds 2 values; TOSA takes one per operand");
}

// X [1, 2, 5, 5] -> Conv (w1, 3 x 3, pads 1) -> Relu -> Mul by a
// per-channel [3, 1, 1] -> Add the Conv's output -> Conv (w2, 1 x 1) -> Y:
// every value between the convolutions has an NHWC twin, so the graph
// holds two TRANSPOSEs (X in, Y out) and none between.
void convolutions_stay_channels_last_between(void**)
{
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    g->set_name("chain");
    auto port = [](::onnx::ValueInfoProto* v, const char* name, std::vector<std::int64_t> dims) {
        v->set_name(name);
        auto* type = v->mutable_type()->mutable_tensor_type();
        type->set_elem_type(T::FLOAT);
        for (std::int64_t d : dims) type->mutable_shape()->add_dim()->set_dim_value(d);
    };
    port(g->add_input(), "X", {1, 2, 5, 5});
    port(g->add_output(), "Y", {1, 1, 5, 5});
    auto constant = [&](const char* name, std::vector<std::int64_t> dims, std::vector<float> values) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(T::FLOAT);
        for (std::int64_t d : dims) t->add_dims(d);
        for (float v : values) t->add_float_data(v);
    };
    std::vector<float> w1(3 * 2 * 3 * 3), x(2 * 5 * 5);
    for (std::size_t i = 0; i < w1.size(); ++i) w1[i] = static_cast<float>(static_cast<int>(i * 7 % 11) - 5) / 8;
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 5 % 13) - 6) / 4;
    const std::vector<float> scale{0.5f, -2.0f, 1.5f}, w2{1.0f, 0.25f, -0.5f};
    constant("w1", {3, 2, 3, 3}, w1);
    constant("s", {3, 1, 1}, scale);
    constant("w2", {1, 3, 1, 1}, w2);
    auto node = [&](const char* op, std::vector<const char*> in, const char* out) {
        auto* n = g->add_node();
        n->set_op_type(op);
        for (const char* i : in) n->add_input(i);
        n->add_output(out);
        return n;
    };
    auto* conv = node("Conv", {"X", "w1"}, "c");
    auto* pads = conv->add_attribute();
    pads->set_name("pads");
    pads->set_type(::onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) pads->add_ints(1);
    node("Relu", {"c"}, "r");
    node("Mul", {"r", "s"}, "m");
    node("Add", {"m", "c"}, "a");
    node("Conv", {"a", "w2"}, "Y");
    const std::string model = m.SerializeAsString();
    auto imported = vaccel::onnx::import_model(std::as_bytes(std::span(model)));
    assert_ok(imported);
    const auto& ops = imported->graph.regions[0].blocks[0].operators;
    assert_int_equal(std::ranges::count_if(ops, [](const auto& o) { return o.op == vaccel::tosa::Op::transpose; }), 2);
    cpu_test::Rig rig;
    auto program = rig.must_load(std::move(imported->graph));
    const auto y = from_bytes<float>(cpu_test::run_ok(rig, *program, {to_bytes(x)})[0]);
    assert_ok(rig.backend->unload_program(program));
    // The same in float64, NCHW, directly.
    std::vector<double> c(3 * 25, 0.0), want(25, 0.0);
    for (int o = 0; o < 3; ++o)
        for (int yy = 0; yy < 5; ++yy)
            for (int xx = 0; xx < 5; ++xx)
                for (int i = 0; i < 2; ++i)
                    for (int ky = 0; ky < 3; ++ky)
                        for (int kx = 0; kx < 3; ++kx) {
                            const int sy = yy + ky - 1, sx = xx + kx - 1;
                            if (sy < 0 || sy >= 5 || sx < 0 || sx >= 5) continue;
                            c[o * 25 + yy * 5 + xx] += w1[((o * 2 + i) * 3 + ky) * 3 + kx] * x[i * 25 + sy * 5 + sx];
                        }
    for (int o = 0; o < 3; ++o)
        for (int p = 0; p < 25; ++p) {
            const double a = std::max(c[o * 25 + p], 0.0) * scale[o] + c[o * 25 + p];
            want[p] += w2[o] * a;
        }
    cpu_test::assert_near(y, want, 1e-5);
}

// Conv of X [1, 4, 5, 5] by W [6, 2, 3, 3] in 2 groups (pads 1), weights
// constant or given as an input, against float64.
void grouped_conv_takes_each_groups_channels(void**)
{
    std::vector<float> x(4 * 25), w(6 * 2 * 9);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 7 % 17) - 8) / 4;
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i * 5 % 11) - 5) / 8;
    std::vector<double> want(6 * 25, 0.0);
    for (int o = 0; o < 6; ++o)
        for (int p = 0; p < 25; ++p)
            for (int i = 0; i < 2; ++i)
                for (int ky = 0; ky < 3; ++ky)
                    for (int kx = 0; kx < 3; ++kx) {
                        const int sy = p / 5 + ky - 1, sx = p % 5 + kx - 1;
                        if (sy < 0 || sy >= 5 || sx < 0 || sx >= 5) continue;
                        const int channel = (o / 3) * 2 + i;  // group o / 3 reads its two channels
                        want[o * 25 + p] += w[((o * 2 + i) * 3 + ky) * 3 + kx] * x[channel * 25 + sy * 5 + sx];
                    }
    NodeModel m{.op = "Conv",
                .inputs = {{"X", T::FLOAT, {1, 4, 5, 5}}, {"W", T::FLOAT, {6, 2, 3, 3}}},
                .outputs = {{"Y", T::FLOAT, {1, 6, 5, 5}}},
                .attrs = {{"group", {}, 2, {}, {}}, {"pads", {1, 1, 1, 1}, {}, {}, {}}}};
    cpu_test::assert_near(floats_of(m, {to_bytes(x), to_bytes(w)}), want, 1e-5);
    // The weights as a constant: sliced per group at import.
    cpu_test::assert_near(from_bytes<float>(run_model_on_cpu(with_constant_input(m, "W", w), {to_bytes(x)})[0]), want,
                          1e-5);
    m.attrs[0].i = 3;  // 3 groups of 4 channels
    m.outputs[0].dims = {1, 6, 5, 5};
    assert_string_equal(refusal(m).c_str(),
                        "node 'Conv' (Conv): group 3 does not divide its 4 input channels and 6 output channels "
                        "into groups of 2 weight channels");
}

// Conv of X [1, 2, 7] by W [3, 2, 3], stride 2, pads 1: [1, 3, 4].
void one_d_conv_is_a_conv_of_height_one(void**)
{
    std::vector<float> x(2 * 7), w(3 * 2 * 3);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 3 % 7) - 3);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i * 5 % 9) - 4) / 2;
    std::vector<double> want(3 * 4, 0.0);
    for (int o = 0; o < 3; ++o)
        for (int p = 0; p < 4; ++p)
            for (int i = 0; i < 2; ++i)
                for (int k = 0; k < 3; ++k) {
                    const int at = p * 2 + k - 1;
                    if (at >= 0 && at < 7) want[o * 4 + p] += w[(o * 2 + i) * 3 + k] * x[i * 7 + at];
                }
    NodeModel m{.op = "Conv",
                .inputs = {{"X", T::FLOAT, {1, 2, 7}}, {"W", T::FLOAT, {3, 2, 3}}},
                .outputs = {{"Y", T::FLOAT, {1, 3, 4}}},
                .attrs = {{"strides", {2}, {}, {}, {}}, {"pads", {1, 1}, {}, {}, {}}}};
    cpu_test::assert_near(floats_of(m, {to_bytes(x), to_bytes(w)}), want, 1e-6);
}

// ConvTranspose of X [1, 4, 3, 3] by W [4, 2, 2, 2] in 2 groups, stride 2:
// [1, 4, 6, 6], against float64.
void grouped_conv_transpose_takes_each_groups_channels(void**)
{
    std::vector<float> x(4 * 9), w(4 * 2 * 4);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 5 % 11) - 5) / 2;
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i * 3 % 7) - 3) / 4;
    std::vector<double> want(4 * 36, 0.0);
    for (int g = 0; g < 2; ++g)
        for (int ic = 0; ic < 2; ++ic)
            for (int oc = 0; oc < 2; ++oc)
                for (int i = 0; i < 3; ++i)
                    for (int j = 0; j < 3; ++j)
                        for (int ky = 0; ky < 2; ++ky)
                            for (int kx = 0; kx < 2; ++kx)
                                want[(g * 2 + oc) * 36 + (i * 2 + ky) * 6 + j * 2 + kx] +=
                                    x[(g * 2 + ic) * 9 + i * 3 + j] * w[(((g * 2 + ic) * 2 + oc) * 2 + ky) * 2 + kx];
    NodeModel m{.op = "ConvTranspose",
                .inputs = {{"X", T::FLOAT, {1, 4, 3, 3}}, {"W", T::FLOAT, {4, 2, 2, 2}}},
                .outputs = {{"Y", T::FLOAT, {1, 4, 6, 6}}},
                .attrs = {{"group", {}, 2, {}, {}}, {"strides", {2, 2}, {}, {}, {}}}};
    cpu_test::assert_near(floats_of(m, {to_bytes(x), to_bytes(w)}), want, 1e-6);
    // The weights as a constant, reordered per group at import.
    cpu_test::assert_near(from_bytes<float>(run_model_on_cpu(with_constant_input(m, "W", w), {to_bytes(x)})[0]), want,
                          1e-6);
}

void integer_pow_squares_over_every_exponent_bit(void**)
{
    NodeModel m{.op = "Pow",
                .inputs = {{"x", T::INT32, {5}}, {"e", T::INT32, {5}}},
                .outputs = {{"y", T::INT32, {5}}}};
    // The exponents are graph inputs, so all 31 bits are squared in.
    const auto y = from_bytes<std::int32_t>(run_on_cpu(m, {to_bytes(std::vector<std::int32_t>{3, -2, 7, 2, 5}),
                                                           to_bytes(std::vector<std::int32_t>{4, 3, 0, 30, -1})})[0]);
    assert_true((y == std::vector<std::int32_t>{81, -8, 1, 1 << 30, 0}));
}

// DFT of the real signal 1, 2, 3, 4 (axis 1), onesided: 10, -2 + 2i, -2.
void onesided_dft_keeps_the_first_half(void**)
{
    NodeModel m{.op = "DFT",
                .inputs = {{"x", T::FLOAT, {1, 4, 1}}},
                .outputs = {{"y", T::FLOAT, {1, 3, 2}}},
                .attrs = {{"onesided", {}, 1, {}, {}}}};
    cpu_test::assert_near(floats_of(m, {to_bytes(std::vector<float>{1, 2, 3, 4})}), {10, 0, -2, 2, -2, 0}, 1e-6);
}

// A bidirectional RNN (tanh) over 3 steps of batch 2, input 2, hidden 3:
// Y [3, 2, 2, 3] and Y_h [2, 2, 3] against float64, the reverse direction
// running from the last step.
void bidirectional_rnn_runs_both_ways(void**)
{
    const int seq = 3, batch = 2, input = 2, hidden = 3;
    std::vector<float> x(seq * batch * input), w(2 * hidden * input), r(2 * hidden * hidden);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 5 % 7) - 3) / 4;
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i * 3 % 5) - 2) / 3;
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<float>(static_cast<int>(i * 7 % 9) - 4) / 6;
    std::vector<double> y(seq * 2 * batch * hidden), yh(2 * batch * hidden);
    for (int d = 0; d < 2; ++d) {
        std::vector<double> h(batch * hidden, 0.0);
        for (int i = 0; i < seq; ++i) {
            const int t = d == 0 ? i : seq - 1 - i;
            std::vector<double> next(batch * hidden);
            for (int b = 0; b < batch; ++b)
                for (int k = 0; k < hidden; ++k) {
                    double a = 0;
                    for (int j = 0; j < input; ++j) a += w[(d * hidden + k) * input + j] * x[(t * batch + b) * input + j];
                    for (int j = 0; j < hidden; ++j) a += r[(d * hidden + k) * hidden + j] * h[b * hidden + j];
                    next[b * hidden + k] = std::tanh(a);
                }
            h = next;
            for (int b = 0; b < batch; ++b)
                for (int k = 0; k < hidden; ++k) y[((t * 2 + d) * batch + b) * hidden + k] = h[b * hidden + k];
        }
        for (int j = 0; j < batch * hidden; ++j) yh[d * batch * hidden + j] = h[j];
    }
    NodeModel m{.op = "RNN",
                .inputs = {{"X", T::FLOAT, {seq, batch, input}}, {"W", T::FLOAT, {2, hidden, input}},
                           {"R", T::FLOAT, {2, hidden, hidden}}},
                .outputs = {{"Y", T::FLOAT, {seq, 2, batch, hidden}}, {"Y_h", T::FLOAT, {2, batch, hidden}}},
                .attrs = {{"hidden_size", {}, hidden, {}, {}}, {"direction", {}, {}, {}, "bidirectional"}}};
    const auto out = run_on_cpu(m, {to_bytes(x), to_bytes(w), to_bytes(r)});
    cpu_test::assert_near(from_bytes<float>(out[0]), y, 1e-6);
    cpu_test::assert_near(from_bytes<float>(out[1]), yh, 1e-6);
}

void training_dropout_is_refused_unless_it_drops_nothing(void**)
{
    NodeModel m{.op = "Dropout",
                .inputs = {{"x", T::FLOAT, {4}}, {"ratio", T::FLOAT, {}}, {"training", T::BOOL, {}}},
                .outputs = {{"y", T::FLOAT, {4}}}};
    const std::string model = serialized(m);
    vaccel::onnx::ImportOptions options;
    options.input_values["training"] = {{}, {1}, false, {}};
    options.input_values["ratio"] = {{}, {}, true, {0.25f}};
    auto refused = vaccel::onnx::import_model(std::as_bytes(std::span(model)), options);
    assert_false(refused.has_value());
    assert_string_equal(refused.error().note.c_str(),
                        "node 'Dropout' (Dropout): in training mode with a ratio other than a constant 0 "
                        "it drops random elements, which an imported graph cannot draw");
    options.input_values["ratio"] = {{}, {}, true, {0.0f}};
    auto imported = vaccel::onnx::import_model(std::as_bytes(std::span(model)), options);
    assert_ok(imported);
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(pad_wraps_crops_reflects_and_repeats_edges),
        cmocka_unit_test(slice_takes_every_step),
        cmocka_unit_test(one_hot_marks_nothing_outside_its_depth),
        cmocka_unit_test(bit_shift_left_wraps_at_the_width),
        cmocka_unit_test(matmul_integer_sums_exactly_in_int32),
        cmocka_unit_test(convolutions_stay_channels_last_between),
        cmocka_unit_test(grouped_conv_takes_each_groups_channels),
        cmocka_unit_test(one_d_conv_is_a_conv_of_height_one),
        cmocka_unit_test(grouped_conv_transpose_takes_each_groups_channels),
        cmocka_unit_test(integer_pow_squares_over_every_exponent_bit),
        cmocka_unit_test(onesided_dft_keeps_the_first_half),
        cmocka_unit_test(bidirectional_rnn_runs_both_ways),
        cmocka_unit_test(training_dropout_is_refused_unless_it_drops_nothing),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
