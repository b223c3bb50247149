// test_onnx_node_suite.cpp [cpu|vulkan [--all|--per-op-set]] - the ONNX
// backend node tests
// (Debian's libonnx-testdata) through the importer and one device: the CPU
// backend, or the one Vulkan device the loader offers (lavapipe in `make
// test`).
//
// For every node test: the model is imported with its inputs' shapes taken
// from test_data_set_0 (integer inputs folded as values where the model
// cannot take them as inputs), its inputs converted to the graph's types
// (vaccel/onnx/ports.hpp), run on the device, and each output converted back
// and compared with the expected one: floating types as ONNX's backend
// runner compares them (|got - want| <= 1e-7 + 1e-3 |want|, NaN equal to
// NaN), integers and BOOL exactly. Prints per test:
// passed, failed (the first element off) or not importable (the
// importer's or the device's refusal), then the counts. The tests listed in
// expected_<device>.txt must pass: a regression fails this test; a test that
// passes without being listed is printed so the list can grow.
#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <fstream>
#include <set>
#include <sstream>

#include "../cpu/raw_run_support.hpp"
#ifdef VACCEL_ONNX_TEST_VULKAN
#include "vaccel/backend/vulkan.hpp"
#endif
#include "vaccel/onnx/importer.hpp"
#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/graph.hpp"

namespace {

namespace fs = std::filesystem;
using namespace cpu_test;

std::string read_file(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A TensorProto's data in its ONNX type's little-endian layout, whichever
// field holds it (raw_data, or the typed repeated fields: FLOAT16, BFLOAT16,
// BOOL and the small integers are kept one per int32_data entry).
struct Tensor {
    std::int32_t type = 0;
    std::vector<std::int64_t> dims;
    std::vector<std::byte> bytes;
};

std::optional<Tensor> tensor_of(const fs::path& path)
{
    using T = ::onnx::TensorProto;
    T t;
    if (!t.ParseFromString(read_file(path))) return std::nullopt;
    Tensor out{t.data_type(), {t.dims().begin(), t.dims().end()}, {}};
    const std::size_t size = vaccel::onnx::onnx_element_size(t.data_type());
    if (size == 0) return std::nullopt;
    auto put = [&](auto value, std::size_t n) {
        const std::size_t at = out.bytes.size();
        out.bytes.resize(at + n);
        std::memcpy(out.bytes.data() + at, &value, n);  // little-endian: the low n bytes
    };
    if (!t.raw_data().empty()) {
        const auto* raw = reinterpret_cast<const std::byte*>(t.raw_data().data());
        out.bytes.assign(raw, raw + t.raw_data().size());
    } else if (t.data_type() == T::FLOAT) {
        for (float v : t.float_data()) put(v, 4);
    } else if (t.data_type() == T::DOUBLE) {
        for (double v : t.double_data()) put(v, 8);
    } else if (t.data_type() == T::INT64) {
        for (std::int64_t v : t.int64_data()) put(v, 8);
    } else if (t.data_type() == T::UINT64 || t.data_type() == T::UINT32) {
        for (std::uint64_t v : t.uint64_data()) put(v, size);
    } else {
        for (std::int32_t v : t.int32_data()) put(v, size);
    }
    std::int64_t count = 1;
    for (auto d : out.dims) count *= d;
    if (out.bytes.size() != static_cast<std::size_t>(count) * size) return std::nullopt;
    return out;
}

bool is_floating(std::int32_t type)
{
    using T = ::onnx::TensorProto;
    return type == T::FLOAT || type == T::FLOAT16 || type == T::BFLOAT16 || type == T::DOUBLE;
}

// Element i of floating data as a double.
double float_at(const Tensor& t, std::size_t i)
{
    using T = ::onnx::TensorProto;
    switch (t.type) {
    case T::FLOAT16:
    case T::BFLOAT16: {
        std::uint16_t bits;
        std::memcpy(&bits, t.bytes.data() + i * 2, 2);
        if (t.type == T::FLOAT16) return vaccel::tosa::f16_value(bits);
        const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
        float f;
        std::memcpy(&f, &wide, 4);
        return f;
    }
    case T::DOUBLE: {
        double d;
        std::memcpy(&d, t.bytes.data() + i * 8, 8);
        return d;
    }
    default: {
        float f;
        std::memcpy(&f, t.bytes.data() + i * 4, 4);
        return f;
    }
    }
}

// An integer (INT64, INT32 or narrower; the importer keeps the type the
// input declares) or FLOAT input's values, for folding
// (ImportOptions::input_values).
std::optional<vaccel::onnx::ImportOptions::Values> values_of(const Tensor& t)
{
    using T = ::onnx::TensorProto;
    vaccel::onnx::ImportOptions::Values v;
    v.dims = t.dims;
    if (t.type == T::FLOAT) {
        v.floating = true;
        v.floats.resize(t.bytes.size() / 4);
        std::memcpy(v.floats.data(), t.bytes.data(), v.floats.size() * 4);
        return v;
    }
    const std::size_t size = vaccel::onnx::onnx_element_size(t.type);
    for (std::size_t at = 0; at < t.bytes.size(); at += size) {
        const std::byte* p = t.bytes.data() + at;
        switch (t.type) {
        case T::INT64: { std::int64_t x; std::memcpy(&x, p, 8); v.values.push_back(x); break; }
        case T::INT32: { std::int32_t x; std::memcpy(&x, p, 4); v.values.push_back(x); break; }
        case T::INT16: { std::int16_t x; std::memcpy(&x, p, 2); v.values.push_back(x); break; }
        case T::UINT16: { std::uint16_t x; std::memcpy(&x, p, 2); v.values.push_back(x); break; }
        case T::INT8: { std::int8_t x; std::memcpy(&x, p, 1); v.values.push_back(x); break; }
        case T::UINT8:
        case T::BOOL: { std::uint8_t x; std::memcpy(&x, p, 1); v.values.push_back(x); break; }
        default: return std::nullopt;
        }
    }
    return v;
}

struct Outcome {
    enum Kind { passed, failed, not_importable } kind = failed;
    std::string why;
};

// Output `o` against its expected tensor: floating types as ONNX's runner
// compares them, integers and BOOL exactly.
std::optional<std::string> mismatch(std::size_t o, const Tensor& got, const Tensor& want)
{
    if (got.type != want.type)
        return fmt::format("output {} is {}, expected {}", o, vaccel::onnx::onnx_type_name(got.type),
                           vaccel::onnx::onnx_type_name(want.type));
    if (got.bytes.size() != want.bytes.size())
        return fmt::format("output {} has {} bytes, expected {}", o, got.bytes.size(), want.bytes.size());
    if (!is_floating(want.type)) {
        const std::size_t size = vaccel::onnx::onnx_element_size(want.type);
        for (std::size_t i = 0; i < want.bytes.size(); i += size)
            if (std::memcmp(got.bytes.data() + i, want.bytes.data() + i, size) != 0) {
                std::int64_t g = 0, w = 0;
                std::memcpy(&g, got.bytes.data() + i, size);
                std::memcpy(&w, want.bytes.data() + i, size);
                return fmt::format("output {} element {}: {} against {}", o, i / size, g, w);
            }
        return std::nullopt;
    }
    const std::size_t n = want.bytes.size() / vaccel::onnx::onnx_element_size(want.type);
    for (std::size_t i = 0; i < n; ++i) {
        const double g = float_at(got, i), w = float_at(want, i);
        const bool both_nan = std::isnan(g) && std::isnan(w);
        if (!both_nan && !(std::fabs(g - w) <= 1e-7 + 1e-3 * std::fabs(w)) && !(g == w))
            return fmt::format("output {} element {}: {} against {}", o, i, g, w);
    }
    return std::nullopt;
}

Outcome run_one(Rig& rig, const fs::path& dir)
{
    const std::string model_bytes = read_file(dir / "model.onnx");
    ::onnx::ModelProto model;
    if (!model.ParseFromString(model_bytes)) return {Outcome::failed, "model.onnx does not parse"};
    std::set<std::string> initializers;
    for (const auto& i : model.graph().initializer()) initializers.insert(i.name());
    std::vector<std::string> input_names;
    for (const auto& i : model.graph().input())
        if (!initializers.contains(i.name())) input_names.push_back(i.name());
    const fs::path data = dir / "test_data_set_0";
    std::map<std::string, Tensor> given;
    for (std::size_t i = 0; i < input_names.size(); ++i) {
        auto t = tensor_of(data / ("input_" + std::to_string(i) + ".pb"));
        if (!t)
            return {Outcome::not_importable,
                    fmt::format("input '{}': its test data is of a type the suite cannot read",
                                input_names[i])};
        given.emplace(input_names[i], std::move(*t));
    }
    // The inputs the importer needs as values (a Reshape's shape, a
    // Resize's scales) are folded, every other input is bound as the
    // graph's input first; where the importer or the device refuses that,
    // integer inputs are folded too (a device without integer arithmetic).
    const auto* bytes = reinterpret_cast<const std::byte*>(model_bytes.data());
    auto needed = vaccel::onnx::value_inputs(std::span(bytes, model_bytes.size()));
    if (!needed) return {Outcome::not_importable, needed.error().note};
    vaccel::onnx::ImportOptions bound, folded;
    for (const auto& [name, t] : given) {
        const bool parameter = std::ranges::find(*needed, name) != needed->end();
        auto v = values_of(t);
        if (parameter && v) bound.input_values[name] = *v;
        else bound.input_shapes[name] = t.dims;
        if (v && (parameter || !v->floating)) folded.input_values[name] = std::move(*v);
        else folded.input_shapes[name] = t.dims;
    }
    struct Loaded {
        std::unique_ptr<Program> program;
        std::vector<Bytes> inputs;
        std::vector<vaccel::onnx::Port> outputs;
    };
    auto load = [&](const vaccel::onnx::ImportOptions& options) -> Result<Loaded> {
        auto imported = vaccel::onnx::import_model(std::span(bytes, model_bytes.size()), options);
        if (!imported) return fail(imported.error());
        Loaded loaded;
        for (const auto& port : imported->inputs) {
            auto converted = vaccel::onnx::to_graph(port, given.at(port.name).bytes);
            if (!converted) return fail(converted.error());
            const auto* p = reinterpret_cast<const std::uint8_t*>(converted->data());
            loaded.inputs.emplace_back(p, p + converted->size());
        }
        loaded.outputs = imported->outputs;
        auto program = rig.load(std::move(imported->graph));
        if (!program)
            return fail(Error::of(program.error().code)
                            .with_note("the device refused it: " + program.error().note));
        loaded.program = std::move(*program);
        return loaded;
    };
    auto loaded = load(bound);
    if (!loaded && folded.input_values.size() > bound.input_values.size()) loaded = load(folded);
    if (!loaded) return {Outcome::not_importable, loaded.error().note};
    auto program = std::move(loaded->program);
    const std::vector<Bytes>& input_bytes = loaded->inputs;
    const auto& ports = loaded->outputs;
    for (const auto& slot : program->slots())
        if (slot.bytes == 0) {
            assert_ok(rig.backend->unload_program(program));
            return {Outcome::not_importable,
                    "a zero-element input or output (a binding holds at least one byte)"};
        }
    RawRun run = run_raw(rig, *program, input_bytes);
    assert_ok(rig.backend->unload_program(program));
    if (run.status.state != EventState::complete)
        return {Outcome::failed, "the run failed: " + run.status.failure.note};
    for (std::size_t o = 0; o < run.outputs.size(); ++o) {
        auto want = tensor_of(data / ("output_" + std::to_string(o) + ".pb"));
        if (!want) return {Outcome::failed, "an expected output is of a type the suite cannot read"};
        auto out = vaccel::onnx::from_graph(ports[o], std::as_bytes(std::span(run.outputs[o])));
        if (!out) return {Outcome::failed, out.error().note};
        if (auto why = mismatch(o, Tensor{ports[o].onnx_type, ports[o].dims, std::move(*out)}, *want))
            return {Outcome::failed, *why};
    }
    return {Outcome::passed, {}};
}

// The device the suite runs on (main's first argument), and whether every
// test runs there (--all) or one test per set of op types: pipeline
// compiles make a lavapipe run of every test about 8 minutes on 2 cores,
// one per set keeps each op type and each combination the tests hold.
std::string device_name = "cpu";
bool every_test = true;

// The sorted op types of a test's model, joined: tests with the same set
// exercise the same lowerings.
std::string op_set(const fs::path& dir)
{
    ::onnx::ModelProto model;
    if (!model.ParseFromString(read_file(dir / "model.onnx"))) return dir.string();
    std::set<std::string> ops;
    for (const auto& node : model.graph().node()) ops.insert(node.op_type());
    std::string joined;
    for (const auto& op : ops) joined += op + " ";
    return joined;
}

std::set<std::string> expected_passes()
{
    std::set<std::string> names;
    std::ifstream in(fs::path(VACCEL_ONNX_EXPECTED_DIR) / ("expected_" + device_name + ".txt"));
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] != '#') names.insert(line);
    return names;
}

Rig device_rig()
{
#ifdef VACCEL_ONNX_TEST_VULKAN
    if (device_name == "vulkan") {
        auto found = vaccel::backend::open_vulkan_devices({});
        if (found.devices.size() != 1)
            fail_msg("expected exactly one Vulkan device (lavapipe, or the GPU), found %zu: %s",
                     found.devices.size(), found.unavailable.c_str());
        return rig_on(std::move(found.devices[0]));
    }
#endif
    if (device_name != "cpu") fail_msg("no device '%s' in this build", device_name.c_str());
    return Rig();
}

void node_suite(void**)
{
    const fs::path root = VACCEL_ONNX_NODE_TESTS;
    if (!fs::is_directory(root))
        fail_msg("%s is missing: install libonnx-testdata (make deps)", root.c_str());
    std::vector<fs::path> dirs;
    for (const auto& entry : fs::directory_iterator(root))
        if (fs::exists(entry.path() / "model.onnx")) dirs.push_back(entry.path());
    std::ranges::sort(dirs);
    const std::size_t all = dirs.size();
    if (!every_test) {
        std::set<std::string> seen;
        std::erase_if(dirs, [&](const fs::path& dir) { return !seen.insert(op_set(dir)).second; });
        print_message("%s: one node test per set of op types: %zu of %zu (--all runs every one)\n",
                      device_name.c_str(), dirs.size(), all);
    }
    std::set<std::string> expected = expected_passes();
    if (!every_test)
        std::erase_if(expected, [&](const std::string& name) {
            return std::ranges::none_of(dirs, [&](const fs::path& d) { return d.filename() == name; });
        });
    Rig rig = device_rig();
    std::size_t counts[3] = {};
    std::vector<std::string> regressions, unlisted;
    for (const fs::path& dir : dirs) {
        const std::string name = dir.filename().string();
        const Outcome outcome = run_one(rig, dir);
        ++counts[outcome.kind];
        const char* word = outcome.kind == Outcome::passed   ? "passed"
                           : outcome.kind == Outcome::failed ? "failed"
                                                             : "not importable";
        print_message("%s: %s%s%s\n", name.c_str(), word, outcome.why.empty() ? "" : ": ",
                      outcome.why.c_str());
        if (outcome.kind == Outcome::passed && !expected.contains(name)) unlisted.push_back(name);
        if (outcome.kind != Outcome::passed && expected.contains(name)) regressions.push_back(name);
    }
    print_message("%s: %zu node tests: %zu passed, %zu failed, %zu not importable\n", device_name.c_str(), dirs.size(),
                  counts[Outcome::passed], counts[Outcome::failed], counts[Outcome::not_importable]);
    for (const auto& n : unlisted)
        print_message("passes, not in expected_%s.txt: %s\n", device_name.c_str(), n.c_str());
    for (const auto& n : regressions) print_message("REGRESSION: %s no longer passes\n", n.c_str());
    assert_int_equal(regressions.size(), 0);
    assert_true(counts[Outcome::passed] >= expected.size());
}

// Every node-test model with bytes overwritten at a few places: the importer
// either imports it or refuses it with a sentence; it never crashes or
// throws (the suite's fuzzing of the importer, deterministic).
void corrupted_models_are_imported_or_refused(void**)
{
    const fs::path root = VACCEL_ONNX_NODE_TESTS;
    std::uint32_t state = 12345;
    auto next = [&] { return state = state * 1664525u + 1013904223u; };
    std::size_t refused = 0, imported = 0;
    for (const auto& entry : fs::directory_iterator(root)) {
        const std::string bytes = read_file(entry.path() / "model.onnx");
        if (bytes.empty()) continue;
        for (int variant = 0; variant < 3; ++variant) {
            std::string broken = bytes;
            for (int k = 0; k < 1 + variant; ++k)
                broken[next() % broken.size()] = static_cast<char>(next() & 0xff);
            const auto* p = reinterpret_cast<const std::byte*>(broken.data());
            auto result = vaccel::onnx::import_model(std::span(p, broken.size()));
            if (result) {
                ++imported;
            } else {
                ++refused;
                assert_false(result.error().note.empty());
            }
        }
    }
    print_message("corrupted models: %zu imported, %zu refused\n", imported, refused);
    assert_true(refused > 0);
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc > 1) device_name = argv[1];
    if (argc > 2) every_test = std::string_view(argv[2]) == "--all";
    else every_test = device_name == "cpu";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(node_suite),
        cmocka_unit_test(corrupted_models_are_imported_or_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
