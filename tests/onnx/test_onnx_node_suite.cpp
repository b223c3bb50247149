// test_onnx_node_suite.cpp [cpu|vulkan [--all|--per-op-set]] - the ONNX
// backend node tests
// (Debian's libonnx-testdata) through the importer and one device: the CPU
// backend, or the one Vulkan device the loader offers (lavapipe in `make
// test`).
//
// For every node test: the model is imported with its inputs' shapes taken
// from test_data_set_0, run on the CPU backend, and each output compared
// with the expected one as ONNX's backend runner compares them
// (|got - want| <= 1e-7 + 1e-3 |want|, NaN equal to NaN). Prints per test:
// passed, failed (the first element off) or not importable (the
// importer's or the device's refusal), then the counts. The tests listed in
// expected_<device>.txt must pass: a regression fails this test; a test that
// passes without being listed is printed so the list can grow.
#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "../cpu/raw_run_support.hpp"
#ifdef VACCEL_ONNX_TEST_VULKAN
#include "vaccel/backend/vulkan.hpp"
#endif
#include "vaccel/onnx/importer.hpp"
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

// A TensorProto of FP32 data as floats; nullopt for anything else.
std::optional<std::pair<std::vector<std::int64_t>, std::vector<float>>> floats_of(
    const fs::path& path)
{
    ::onnx::TensorProto t;
    const std::string bytes = read_file(path);
    if (!t.ParseFromString(bytes) || t.data_type() != ::onnx::TensorProto::FLOAT) return std::nullopt;
    std::vector<std::int64_t> dims(t.dims().begin(), t.dims().end());
    std::vector<float> values;
    if (!t.raw_data().empty()) {
        values.resize(t.raw_data().size() / 4);
        std::memcpy(values.data(), t.raw_data().data(), values.size() * 4);
    } else {
        values.assign(t.float_data().begin(), t.float_data().end());
    }
    return std::make_pair(std::move(dims), std::move(values));
}

// A TensorProto of INT64 or INT32 data; nullopt for anything else.
std::optional<vaccel::onnx::ImportOptions::Values> integers_of(const fs::path& path)
{
    ::onnx::TensorProto t;
    if (!t.ParseFromString(read_file(path))) return std::nullopt;
    vaccel::onnx::ImportOptions::Values v;
    v.dims.assign(t.dims().begin(), t.dims().end());
    const std::string& raw = t.raw_data();
    if (t.data_type() == ::onnx::TensorProto::INT64) {
        if (raw.empty()) v.values.assign(t.int64_data().begin(), t.int64_data().end());
        for (std::size_t i = 0; i + 8 <= raw.size(); i += 8) {
            std::int64_t x;
            std::memcpy(&x, raw.data() + i, 8);
            v.values.push_back(x);
        }
    } else if (t.data_type() == ::onnx::TensorProto::INT32) {
        if (raw.empty()) v.values.assign(t.int32_data().begin(), t.int32_data().end());
        for (std::size_t i = 0; i + 4 <= raw.size(); i += 4) {
            std::int32_t x;
            std::memcpy(&x, raw.data() + i, 4);
            v.values.push_back(x);
        }
    } else {
        return std::nullopt;
    }
    return v;
}

struct Outcome {
    enum Kind { passed, failed, not_importable } kind = failed;
    std::string why;
};

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
    vaccel::onnx::ImportOptions options;
    std::vector<std::vector<float>> inputs;
    for (std::size_t i = 0; i < input_names.size(); ++i) {
        const fs::path file = data / ("input_" + std::to_string(i) + ".pb");
        if (auto t = floats_of(file)) {
            options.input_shapes[input_names[i]] = t->first;
            inputs.push_back(std::move(t->second));
        } else if (auto v = integers_of(file)) {
            options.input_values[input_names[i]] = std::move(*v);  // folded (importer.hpp)
        } else {
            return {Outcome::not_importable,
                    fmt::format("input '{}' is neither FLOAT nor integer data", input_names[i])};
        }
    }
    const auto* bytes = reinterpret_cast<const std::byte*>(model_bytes.data());
    auto imported = vaccel::onnx::import_model(std::span(bytes, model_bytes.size()), options);
    if (!imported) return {Outcome::not_importable, imported.error().note};
    auto program = rig.load(std::move(imported->graph));
    if (!program) return {Outcome::not_importable, "the CPU device refused it: " + program.error().note};
    for (const auto& slot : (*program)->slots())
        if (slot.bytes == 0) {
            assert_ok(rig.backend->unload_program(*program));
            return {Outcome::not_importable,
                    "a zero-element input or output (a binding holds at least one byte)"};
        }
    std::vector<Bytes> input_bytes;
    for (const auto& values : inputs) input_bytes.push_back(to_bytes(values));
    RawRun run = run_raw(rig, **program, input_bytes);
    assert_ok(rig.backend->unload_program(*program));
    if (run.status.state != EventState::complete)
        return {Outcome::failed, "the run failed: " + run.status.failure.note};
    std::vector<std::vector<float>> outputs;
    for (const Bytes& b : run.outputs) outputs.push_back(from_bytes<float>(b));
    for (std::size_t o = 0; o < outputs.size(); ++o) {
        auto want = floats_of(data / ("output_" + std::to_string(o) + ".pb"));
        if (!want) return {Outcome::failed, "an expected output is not FLOAT data"};
        if (want->second.size() != outputs[o].size())
            return {Outcome::failed, fmt::format("output {} has {} elements, expected {}", o,
                                                 outputs[o].size(), want->second.size())};
        for (std::size_t i = 0; i < outputs[o].size(); ++i) {
            const double got = outputs[o][i], w = want->second[i];
            const bool both_nan = std::isnan(got) && std::isnan(w);
            if (!both_nan && !(std::fabs(got - w) <= 1e-7 + 1e-3 * std::fabs(w)))
                return {Outcome::failed,
                        fmt::format("output {} element {}: {} against {}", o, i, got, w)};
        }
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
