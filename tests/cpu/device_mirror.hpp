// device_mirror.hpp - the CPU backend's operator tests as a conformance
// suite for another device.
//
// Built into a CPU test only when VACCEL_TEST_MIRROR is defined (the
// vulkan.conformance.* tests of tests/vulkan/CMakeLists.txt and the
// cuda.conformance.* tests of tests/cuda/CMakeLists.txt, with
// VACCEL_TEST_MIRROR_CUDA, compile the CPU test sources a second time with
// it). Then every graph the test's Rig loads on the CPU is also loaded on
// the first Vulkan (or CUDA) device, and every run the
// Rig makes (run(), run_raw()) is repeated there on the same input bytes and
// its outputs compared with the CPU's:
//  - exact (bit for bit) unless the graph holds an operator below; any NaN
//    matches any NaN, and a subnormal CPU result matches a zero of either
//    sign (Vulkan lets a device flush subnormals; lavapipe does);
//  - the device's builtin functions (EXP, LOG, SIN, COS, POW, SIGMOID, TANH,
//    ERF, RECIPROCAL, RSQRT): |got - want| <= t * (1 + |want|) with t = 2e-6
//    for FP32 results, one unit of the result's precision for narrow ones;
//  - operators that sum in the kernel's own order (reductions, MATMUL,
//    convolutions, AVG_POOL2D, RESIZE): for FP32 t = max(1e-5, n * 2^-22)
//    where n is the most terms one output adds up (MATMUL: C; CONV2D:
//    KH*KW*IC + 1; ...), two ULPs per term.
// A graph the device does not run (it refuses it at load as Unsupported: an
// operator, dtype or shape its descriptor or kernels lack) is listed by name
// at exit, never silently dropped; any other refusal of a graph the CPU
// accepted fails the test. A test binary that mirrored no run at all fails:
// a conformance suite that compares nothing proves nothing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unistd.h>
#include <vector>

#ifdef VACCEL_TEST_MIRROR_CUDA
#include "vaccel/backend/cuda.hpp"
#else
#include "vaccel/backend/vulkan.hpp"
#endif
#include "vaccel/tosa/graph.hpp"

namespace cpu_test {

class DeviceMirror {
public:
    // The process's mirror, opened on first use; fails the test when the
    // device is missing (the suite exists to run on it).
    static DeviceMirror& get()
    {
        static DeviceMirror* mirror = [] {
            auto* m = new DeviceMirror();  // released by report() at exit
            std::atexit([] { get().report(); });
            return m;
        }();
        return *mirror;
    }

    void loaded(const Program& cpu_program, std::span<const std::uint8_t> bytes)
    {
        forget(cpu_program);  // an address reused by a newer program
        auto graph = tosa::parse(std::as_bytes(bytes));
        if (!graph) fail_msg("mirror: the CPU loaded a graph that does not parse");
        Mirrored m;
        m.ops = ops_of(*graph, m);
        ProgramDesc desc;
        desc.payload = std::as_bytes(bytes);
        auto program = backend_->load_program(*context_, desc);
        if (!program) {
            if (program.error().code != Errc::unsupported)
                fail_msg("mirror: %s refused a graph the CPU runs (%s): %s", device_.c_str(),
                         m.ops.c_str(), vaccel::describe(program.error()).c_str());
            not_run_.push_back(m.ops + ": " + vaccel::describe(program.error()));
            return;
        }
        m.program = std::move(*program);
        programs_.emplace(&cpu_program, std::move(m));
        ++graphs_;
    }

    void ran(const Program& cpu_program, const std::vector<std::span<const std::byte>>& inputs,
             const std::vector<std::vector<std::byte>>& want)
    {
        auto it = programs_.find(&cpu_program);
        if (it == programs_.end()) return;  // listed in not_run_ at load
        if (paused_) return;
        ++started_;  // a run that fails leaves its buffers behind (see report())
        Program& program = *it->second.program;
        const auto slots = program.slots();
        std::vector<std::unique_ptr<Buffer>> owned;
        std::vector<Binding> bindings;
        for (std::uint32_t s = 0; s < slots.size(); ++s) {
            BufferDesc desc;
            desc.bytes = slots[s].bytes == 0 ? 1 : slots[s].bytes;
            BufferInfo info;
            auto b = backend_->allocate_buffer(*context_, desc, info);
            if (!b) fail_msg("mirror: allocate: %s", vaccel::describe(b.error()).c_str());
            if (s < program.input_count() && !inputs[s].empty())
                check(backend_->write_buffer(**b, 0, inputs[s]), "write");
            bindings.push_back(Binding{s,
                                       slots[s].role == VACCEL_SLOT_INPUT ? VACCEL_ACCESS_READ
                                                                          : VACCEL_ACCESS_WRITE,
                                       b->get(), 0, slots[s].bytes});
            owned.push_back(std::move(*b));
        }
        auto event = cpu_test::submit(*backend_, *queue_, program, bindings, 0);
        if (!event) fail_msg("mirror: %s refused a run: %s", device_.c_str(),
                             vaccel::describe(event.error()).c_str());
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(300);
        EventStatus status;
        while ((status = backend_->poll(**event)).state == EventState::pending) {
            if (std::chrono::steady_clock::now() > give_up) fail_msg("mirror: run never ended");
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        if (status.state != EventState::complete)
            fail_msg("mirror: %s failed a run of %s: %s", device_.c_str(), it->second.ops.c_str(),
                     status.failure.note.c_str());
        check(backend_->destroy_event(*event), "destroy event");
        for (std::uint32_t s = program.input_count(); s < slots.size(); ++s) {
            std::vector<std::byte> got(slots[s].bytes);
            if (!got.empty()) check(backend_->read_buffer(*owned[s], 0, got), "read");
            compare(it->second, slots[s], got, want[s - program.input_count()]);
        }
        for (auto& b : owned) check(backend_->free_buffer(b), "free");
        ++runs_;
    }

    // Runs made while a Pause lives are not mirrored: for the few CPU tests
    // that measure the CPU process itself (allocations counted around a
    // run), which the mirror's own work would disturb.
    struct Pause {
        Pause() { get().paused_ = true; }
        ~Pause() { get().paused_ = false; }
        Pause(const Pause&) = delete;
        Pause& operator=(const Pause&) = delete;
    };

private:
    enum class Tolerance { exact = 0, function = 1, sum = 2 };
    struct Mirrored {
        std::unique_ptr<Program> program;
        Tolerance tolerance = Tolerance::exact;
        double terms = 1;  // the most terms one output of a summing operator adds
        std::string ops;  // "CONV2D+AVG_POOL2D" (the graph, for messages)
    };

    DeviceMirror()
    {
#ifdef VACCEL_TEST_MIRROR_CUDA
        // The cuda.conformance.* tests: skipped (exit 77) without a CUDA
        // device, failed with VACCEL_REQUIRE_GPU=1 (make test-gpu).
        CudaDevices found = open_cuda_devices();
        if (found.devices.empty()) {
            const char* required = std::getenv("VACCEL_REQUIRE_GPU");
            if (required != nullptr && std::string(required) == "1")
                fail_msg("mirror: no CUDA device to mirror onto: %s", found.unavailable.c_str());
            std::printf("skipped: no CUDA device to mirror onto (%s)\n", found.unavailable.c_str());
            std::fflush(stdout);
            std::_Exit(77);
        }
#else
        VulkanDevices found = open_vulkan_devices();
        if (found.devices.empty())
            fail_msg("mirror: no Vulkan device to mirror onto: %s", found.unavailable.c_str());
#endif
        backend_ = std::move(found.devices[0]);
        device_ = backend_->device_info().name;  // a NUL-terminated char array
        auto c = backend_->create_context();
        if (!c) fail_msg("mirror: context: %s", vaccel::describe(c.error()).c_str());
        context_ = std::move(*c);
        auto q = backend_->create_queue(*context_);
        if (!q) fail_msg("mirror: queue: %s", vaccel::describe(q.error()).c_str());
        queue_ = std::move(*q);
    }

    void forget(const Program& cpu_program)
    {
        auto it = programs_.find(&cpu_program);
        if (it == programs_.end()) return;
        check(backend_->unload_program(it->second.program), "unload");
        programs_.erase(it);
    }

    static void check(const Status& s, const char* what)
    {
        if (!s) fail_msg("mirror: %s: %s", what, vaccel::describe(s.error()).c_str());
    }

    static std::string ops_of(const tosa::Graph& graph, Mirrored& m)
    {
        std::string ops;
        for (const auto& region : graph.regions)
            for (const auto& block : region.blocks)
                for (const auto& op : block.operators) {
                    if (op.op == Op::const_ || op.op == Op::const_shape) continue;
                    if (!ops.empty()) ops += '+';
                    ops += tosa::op_name(op.op);
                    const Tolerance t = tolerance_of(op.op);
                    if (t > m.tolerance) m.tolerance = t;
                    if (t == Tolerance::sum) m.terms = std::max(m.terms, terms_of(block, op));
                }
        return ops.empty() ? "CONST" : ops;
    }

    // How many terms one output element of a summing operator adds up.
    static double terms_of(const tosa::Block& block, const tosa::Operator& op)
    {
        const auto shape = [&](std::size_t input) -> const std::vector<std::int64_t>& {
            return block.tensors[op.inputs[input]].shape;
        };
        double product = 1;
        switch (op.op) {
        case Op::matmul: return static_cast<double>(shape(0).back());  // A [N, H, C]
        case Op::conv2d: case Op::conv3d: case Op::transpose_conv2d:  // weight [OC, ..., IC]
            for (std::size_t d = 1; d < shape(1).size(); ++d) product *= shape(1)[d];
            return product + 1;
        case Op::depthwise_conv2d: return static_cast<double>(shape(1)[0] * shape(1)[1]) + 1;
        case Op::avg_pool2d:
            for (auto k : op.attributes.kernel) product *= k;
            return product;
        case Op::reduce_sum: case Op::reduce_product: {
            const auto axis = static_cast<std::size_t>(op.attributes.axis);
            return axis < shape(0).size() ? static_cast<double>(shape(0)[axis]) : 1;
        }
        case Op::fft2d: case Op::rfft2d: return static_cast<double>(shape(0)[1] * shape(0)[2]);
        default: return 4;  // RESIZE: four taps
        }
    }

    static Tolerance tolerance_of(Op op)
    {
        switch (op) {
        case Op::exp: case Op::log: case Op::sin: case Op::cos: case Op::pow:
        case Op::sigmoid: case Op::tanh: case Op::erf: case Op::reciprocal: case Op::rsqrt:
            return Tolerance::function;
        case Op::reduce_sum: case Op::reduce_product: case Op::matmul: case Op::conv2d:
        case Op::conv3d: case Op::depthwise_conv2d: case Op::transpose_conv2d:
        case Op::avg_pool2d: case Op::resize: case Op::fft2d: case Op::rfft2d:
            return Tolerance::sum;
        default:
            return Tolerance::exact;
        }
    }

    // One element as a double, for the float dtypes the bound applies to.
    static bool decode(DType dtype, const std::byte* p, double& value)
    {
        std::uint32_t bits = 0;
        switch (dtype) {
        case DType::fp32: {
            float f;
            std::memcpy(&f, p, 4);
            value = f;
            return true;
        }
        case DType::bf16:
            std::memcpy(&bits, p, 2);
            bits <<= 16;
            float f;
            std::memcpy(&f, &bits, 4);
            value = f;
            return true;
        case DType::fp16: {
            std::uint16_t h;
            std::memcpy(&h, p, 2);
            const int exponent = (h >> 10) & 0x1f;
            const double mantissa = h & 0x3ff;
            value = exponent == 0    ? std::ldexp(mantissa, -24)
                    : exponent == 31 ? (mantissa != 0 ? NAN : INFINITY)
                                     : std::ldexp(1024 + mantissa, exponent - 25);
            if (h & 0x8000) value = -value;
            return true;
        }
        default:
            return false;
        }
    }

    // Smallest normal and unit of precision of each float dtype.
    static double smallest_normal(DType d)
    {
        return d == DType::fp16 ? 6.103515625e-05 : 1.1754943508222875e-38;
    }
    static double precision(DType d, const Mirrored& m)
    {
        if (d == DType::fp16) return 1.0 / 1024;
        if (d == DType::bf16) return 1.0 / 128;
        // Summing: two float32 ULPs per term added, at least 1e-5.
        return m.tolerance == Tolerance::function ? 2e-6 : std::max(1e-5, m.terms * 0x1p-22);
    }

    void compare(const Mirrored& m, const SlotInfo& slot, const std::vector<std::byte>& got,
                 const std::vector<std::byte>& want)
    {
        if (got.size() != want.size())
            fail_msg("mirror: %s output '%s' is %zu bytes, the CPU's %zu", m.ops.c_str(),
                     slot.name.c_str(), got.size(), want.size());
        const auto dtype = static_cast<DType>(slot.dtype);
        const std::size_t size = tosa::dtype_bytes(dtype);
        double g = 0, w = 0;
        if (size == 0 || !decode(dtype, want.data(), w)) {
            if (std::memcmp(got.data(), want.data(), got.size()) != 0)
                fail_msg("mirror: %s on %s: output '%s' (%s) differs from the CPU's bytes",
                         m.ops.c_str(), device_.c_str(), slot.name.c_str(),
                         std::string(tosa::dtype_name(dtype)).c_str());
            return;
        }
        for (std::size_t i = 0; i + size <= got.size(); i += size) {
            decode(dtype, got.data() + i, g);
            decode(dtype, want.data() + i, w);
            if (std::isnan(w) && std::isnan(g)) continue;
            if (w != 0 && std::fabs(w) < smallest_normal(dtype) && g == 0) continue;
            bool ok;
            if (m.tolerance == Tolerance::exact)
                ok = std::memcmp(got.data() + i, want.data() + i, size) == 0;
            else
                ok = (std::isinf(w) || std::isinf(g))
                         ? g == w
                         : std::fabs(g - w) <= precision(dtype, m) * (1 + std::fabs(w));
            if (!ok)
                fail_msg("mirror: %s on %s: output '%s' element %zu is %.9g, the CPU's %.9g",
                         m.ops.c_str(), device_.c_str(), slot.name.c_str(), i / size, g, w);
        }
    }

    // At exit: what ran, what the device does not run, and every object
    // released (each live counter back at zero).
    void report()
    {
        bool clean = true;
        for (auto& [key, m] : programs_) clean = backend_->unload_program(m.program).has_value() && clean;
        programs_.clear();
        std::printf("mirror: %zu runs of %zu graphs matched the CPU on %s\n", runs_, graphs_,
                    device_.c_str());
        for (const auto& line : not_run_) std::printf("mirror: not run on the device: %s\n",
                                                      line.c_str());
        clean = backend_->destroy_queue(queue_).has_value() && clean;
        clean = backend_->destroy_context(context_).has_value() && clean;
        const LiveCounters live = backend_->live();
        clean = clean && live.contexts == 0 && live.buffers == 0 && live.programs == 0 &&
                live.events == 0;
        if (started_ != runs_) {
            std::printf("mirror: a failed run left its objects; release not checked\n");
        } else if (!clean) {
            std::fprintf(stderr, "mirror: %s kept objects after release\n", device_.c_str());
            std::fflush(stdout);
            _exit(1);
        }
        if (runs_ == 0) {
            std::fprintf(stderr, "mirror: no run was mirrored: this suite compared nothing\n");
            std::fflush(stdout);
            _exit(1);
        }
    }

    std::unique_ptr<Backend> backend_;
    std::unique_ptr<Context> context_;
    std::unique_ptr<Queue> queue_;
    std::string device_;
    std::map<const Program*, Mirrored> programs_;
    std::vector<std::string> not_run_;
    std::size_t started_ = 0, runs_ = 0, graphs_ = 0;
    bool paused_ = false;
};

}  // namespace cpu_test
