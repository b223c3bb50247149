// test_cpu_sweep.cpp - every FP32 elementwise operator of the CPU backend at
// every rank from 0 to 6, with broadcasting along size-1 dimensions and
// inputs that include -0, subnormals, the largest finite values, infinities
// and NaN, checked against NumPy in float64 (tests/cpu/sweep_reference.py).
//
// The backend's outputs and inputs are written as .npy files with a
// manifest; the script computes each operator from the inputs in float64 on
// its own (it shares no code with the backend), rounds to float32 and holds
// the result to the operator's bound. No Python with NumPy is a failure,
// never a skip: `make deps` installs python3-numpy.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "vaccel/npy/npy.hpp"

#include "cpu_test_support.hpp"

using namespace cpu_test;

namespace {

// Values that exercise the edges: zeros of both signs, a subnormal, the
// largest finite, infinities, NaN, halves (ties for CEIL/FLOOR), then a
// spread of ordinary values.
std::vector<float> edge_values(std::size_t count, std::uint32_t seed)
{
    const float special[] = {0.0f,  -0.0f, 1.0f,   -1.0f, 0.5f,  -2.5f,
                             1e-40f, 3.4e38f, -3.4e38f, std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN()};
    std::vector<float> values = sample(count, seed);
    for (std::size_t i = 0; i < count; ++i)
        if ((i + seed) % 3 == 0) values[i] = special[(i / 3 + seed) % std::size(special)];
    return values;
}

// Output shapes of ranks 0..6 (at most 48 elements), and for a binary
// operator the two operand shapes: each dimension kept, or 1 in one operand.
const std::vector<std::vector<std::int64_t>> shapes = {
    {}, {5}, {3, 4}, {2, 1, 3}, {2, 3, 2, 2}, {1, 2, 3, 2, 2}, {2, 1, 2, 3, 2, 2}};

std::vector<std::int64_t> broadcast_from(const std::vector<std::int64_t>& shape, unsigned mask)
{
    std::vector<std::int64_t> out = shape;
    for (std::size_t d = 0; d < out.size(); ++d)
        if (mask & (1u << d)) out[d] = 1;
    return out;
}

struct Case {
    const char* name;  // the manifest's operator name (sweep_reference.py)
    Op op;
    unsigned arity;    // data operands
    DType out = DType::fp32;
    std::uint32_t nan_mode = 0;  // 0: none; 1 PROPAGATE, 2 IGNORE
};

const Case cases[] = {
    {"ADD", Op::add, 2},
    {"SUB", Op::sub, 2},
    {"MUL", Op::mul, 2},
    {"MAXIMUM", Op::maximum, 2, DType::fp32, 1},
    {"MAXIMUM_IGNORE", Op::maximum, 2, DType::fp32, 2},
    {"MINIMUM", Op::minimum, 2, DType::fp32, 1},
    {"MINIMUM_IGNORE", Op::minimum, 2, DType::fp32, 2},
    {"POW", Op::pow, 2},
    {"EQUAL", Op::equal, 2, DType::boolean},
    {"GREATER", Op::greater, 2, DType::boolean},
    {"GREATER_EQUAL", Op::greater_equal, 2, DType::boolean},
    {"ABS", Op::abs, 1},
    {"CEIL", Op::ceil, 1},
    {"FLOOR", Op::floor, 1},
    {"EXP", Op::exp, 1},
    {"LOG", Op::log, 1},
    {"SIN", Op::sin, 1},
    {"COS", Op::cos, 1},
    {"RECIPROCAL", Op::reciprocal, 1},
    {"RSQRT", Op::rsqrt, 1},
    {"ERF", Op::erf, 1},
    {"SIGMOID", Op::sigmoid, 1},
    {"TANH", Op::tanh, 1},
    {"NEGATE", Op::negate, 1},
};

void write_npy(const std::filesystem::path& path, npy::DType dtype,
               const std::vector<std::int64_t>& shape, const void* data, std::size_t bytes)
{
    npy::Array array{dtype, shape, std::vector<std::uint8_t>(bytes)};
    if (bytes != 0) std::memcpy(array.data.data(), data, bytes);
    auto written = npy::write_file(path, array);
    if (!written) fail_msg("cannot write %s: %s", path.c_str(), written.error().message.c_str());
}

// Runs one case at one rank; writes its inputs and output beside the manifest.
void run_case(Rig& rig, const Case& c, std::size_t rank, const std::filesystem::path& dir,
              std::ofstream& manifest, int id)
{
    const auto& out_shape = shapes[rank];
    // Binary: a loses the dimensions of the low mask bits, b of the next ones.
    const unsigned a_mask = rank == 0 ? 0u : (0b0101u >> (rank % 2)) & ((1u << rank) - 1);
    const unsigned b_mask = rank == 0 ? 0u : (0b1010u >> (rank % 2)) & ((1u << rank) - 1);
    std::vector<std::vector<std::int64_t>> in_shapes{c.arity == 2 ? broadcast_from(out_shape, a_mask)
                                                                   : out_shape};
    if (c.arity == 2) in_shapes.push_back(broadcast_from(out_shape, b_mask));

    tosa::GraphBuilder g;
    std::vector<std::uint32_t> ins;
    for (unsigned i = 0; i < c.arity; ++i)
        ins.push_back(g.tensor("in" + std::to_string(i), in_shapes[i], DType::fp32));
    const auto out = g.tensor("out", out_shape, c.out);
    std::vector<std::uint32_t> operands = ins;
    if (c.op == Op::mul) operands.push_back(mul_shift(g, "shift"));
    if (c.op == Op::negate) {
        operands.push_back(zero_point(g, "in_zp"));
        operands.push_back(zero_point(g, "out_zp"));
    }
    tosa::Attributes attributes;
    attributes.nan_mode = c.nan_mode;
    g.op(c.op, operands, {out}, attributes);
    for (auto t : ins) g.input(t);
    g.output(out);
    auto program = rig.must_load(g.finish());

    std::vector<std::vector<float>> inputs;
    for (unsigned i = 0; i < c.arity; ++i)
        inputs.push_back(edge_values(elements(in_shapes[i]), static_cast<std::uint32_t>(id * 7 + i)));
    // Run on raw bytes: the output may be BOOL.
    const auto slots = program->slots();
    std::vector<std::unique_ptr<Buffer>> owned;
    std::vector<Buffer*> raw;
    for (std::uint32_t s = 0; s < slots.size(); ++s) {
        owned.push_back(s < program->input_count() ? rig.buffer_with(inputs[s])
                                                   : rig.buffer(slots[s].bytes));
        raw.push_back(owned.back().get());
    }
    auto event = cpu_test::submit(*rig.backend, *rig.queue, *program, rig.bind(*program, raw), 0);
    assert_ok(event);
    const EventStatus status = rig.wait(**event);
    if (status.state != EventState::complete)
        fail_msg("%s rank %zu: %s", c.name, rank, status.failure.note.c_str());
    assert_ok(rig.backend->destroy_event(*event));
    std::vector<std::byte> result(slots.back().bytes);
    assert_ok(rig.backend->read_buffer(*owned.back(), 0, result));
    for (auto& b : owned) assert_ok(rig.backend->free_buffer(b));
    assert_ok(rig.backend->unload_program(program));

    const std::string stem = "case" + std::to_string(id);
    for (unsigned i = 0; i < c.arity; ++i)
        write_npy(dir / (stem + "_in" + std::to_string(i) + ".npy"), npy::DType::f4, in_shapes[i],
                  inputs[i].data(), inputs[i].size() * sizeof(float));
    write_npy(dir / (stem + "_out.npy"), c.out == DType::boolean ? npy::DType::b1 : npy::DType::f4,
              out_shape, result.data(), result.size());
    manifest << stem << ' ' << c.name << ' ' << c.arity << '\n';
}

// The first python3 with NumPy: the sweep's oracle.
std::string python_with_numpy()
{
    for (const char* candidate : {"python3", "/usr/bin/python3"}) {
        const std::string probe =
            std::string(candidate) + " -c 'import numpy' >/dev/null 2>&1";
        if (std::system(probe.c_str()) == 0) return candidate;
    }
    fail_msg("no python3 with NumPy: the sweep needs it as its oracle (make deps installs "
             "python3-numpy)");
    return {};
}

void every_elementwise_operator_at_every_rank(void**)
{
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("vaccel-sweep-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    {
        std::ofstream manifest(dir / "manifest.txt");
        Rig rig;
        int id = 0;
        for (const Case& c : cases)
            for (std::size_t rank = 0; rank < shapes.size(); ++rank)
                run_case(rig, c, rank, dir, manifest, id++);
        rig.finish();
    }
    const std::string command = python_with_numpy() + " " VACCEL_SWEEP_SCRIPT " " + dir.string();
    const int status = std::system(command.c_str());
    std::filesystem::remove_all(dir);
    if (status != 0) fail_msg("the NumPy reference disagrees (see above): %s", command.c_str());
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_elementwise_operator_at_every_rank),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
