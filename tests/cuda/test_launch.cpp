// test_launch.cpp - raw CUDA kernels (VACCEL_FORMAT_CUDA_PTX and
// VACCEL_FORMAT_CUDA_CUBIN) on the first CUDA device: the reference
// design's launch tests on a real GPU. Kernels from tests/cuda/kernels are
// launched with the tagged argv (pointers resolved to the bound buffers'
// device addresses plus their offsets), with exact outputs and every
// refusal: entry, signature (the kernel's own parameter layout), dims
// against the device and the function, pointers, bad modules; and the
// compiled-PTX cache of the state directory.
#include <filesystem>

#include "cuda_test_support.hpp"

namespace {

using namespace cuda_test;

void the_device_advertises_cuda_launches(void**)
{
    Rig gpu = cuda_rig();
    const vaccel_device_info& info = gpu.backend->device_info();
    assert_int_equal(info.formats, VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA) |
                                       VACCEL_FORMAT_BIT(VACCEL_FORMAT_CUDA_PTX) |
                                       VACCEL_FORMAT_BIT(VACCEL_FORMAT_CUDA_CUBIN));
    assert_int_equal(info.flags & VACCEL_CAP_LAUNCH, VACCEL_CAP_LAUNCH);
    assert_int_equal(info.device_class, VACCEL_CLASS_GPU);
    assert_int_equal(info.vendor_id, 0x10de);
    assert_int_equal(info.pci_valid, 1);
    gpu.finish();
}

// y = 2x + y over the first 100 of 128 elements, two blocks of 64: x[i] =
// i, y[i] = 1000 - 3i, so y becomes 1000 - i (exact small integers);
// elements 100..127 keep 1000 - 3i. From PTX and from the cubin.
void saxpy_runs_from_ptx_and_cubin(void**)
{
    Rig gpu = cuda_rig();
    for (bool cubin : {false, true}) {
        auto p = must_load_kernels(gpu, cubin);
        std::vector<float> x(128), y(128), want(128);
        for (int i = 0; i < 128; ++i) {
            x[i] = static_cast<float>(i);
            y[i] = static_cast<float>(1000 - 3 * i);
            want[i] = static_cast<float>(i < 100 ? 1000 - i : 1000 - 3 * i);
        }
        auto xs = gpu.buffer_with(x), ys = gpu.buffer_with(y);
        const std::vector<Binding> bindings{
            {0, VACCEL_ACCESS_READ, xs.get(), 0, 512},
            {1, VACCEL_ACCESS_READ | VACCEL_ACCESS_WRITE, ys.get(), 0, 512}};
        const std::vector<Arg> args{Arg::ptr(0, 512), Arg::ptr(1, 512), Arg::f32(2.0f),
                                    Arg::u32(100)};
        run(gpu, *p, "saxpy", args, bindings, dims(2));
        assert_exactly(gpu.read(*ys, 128), want);
        for (int i = 0; i < 100; ++i) want[i] = static_cast<float>(1000 + i);
        run(gpu, *p, "saxpy", args, bindings, dims(2));  // the entry is resolved once
        assert_exactly(gpu.read(*ys, 128), want);
        assert_ok(gpu.backend->free_buffer(xs));
        assert_ok(gpu.backend->free_buffer(ys));
        assert_ok(gpu.backend->unload_program(p));
    }
    gpu.finish();
}

// Pointers at binding offsets: x from byte 256 of its buffer, y from byte
// 512 of one that holds bytes before and after it: y[i] = -x[i] + y[i]
// with x[i] = i + 1 and y[i] = 10 i gives 9 i - 1; the bytes around y
// are untouched.
void pointers_start_at_their_binding_offsets(void**)
{
    Rig gpu = cuda_rig();
    auto p = must_load_kernels(gpu);
    std::vector<float> xwords(128, -7.0f), ywords(224, 5.5f);
    for (int i = 0; i < 64; ++i) {
        xwords[64 + i] = static_cast<float>(i + 1);
        ywords[128 + i] = static_cast<float>(10 * i);
    }
    auto xs = gpu.buffer_with(xwords), ys = gpu.buffer_with(ywords);
    std::vector<float> want = ywords;
    for (int i = 0; i < 64; ++i) want[128 + i] = static_cast<float>(9 * i - 1);
    run(gpu, *p, "saxpy", {Arg::ptr(3, 256), Arg::ptr(4, 256), Arg::f32(-1.0f), Arg::u32(64)},
        {{3, VACCEL_ACCESS_READ, xs.get(), 256, 256},
         {4, VACCEL_ACCESS_READ | VACCEL_ACCESS_WRITE, ys.get(), 512, 256}},
        dims(1));
    assert_exactly(gpu.read(*ys, ywords.size()), want);
    assert_ok(gpu.backend->free_buffer(xs));
    assert_ok(gpu.backend->free_buffer(ys));
    gpu.finish(p);
}

// A u64 between two u32s: u32 at 0, padding, u64 at 8, u32 at 16, pointer
// at 24, as the kernel's own layout says (checked before launch).
void scalars_keep_their_natural_alignment(void**)
{
    Rig gpu = cuda_rig();
    auto p = must_load_kernels(gpu);
    auto out = gpu.buffer(128 * 4);
    run(gpu, *p, "fill64",
        {Arg::u32(7), Arg::u64(0xdeadbeefcafef00dull), Arg::u32(70), Arg::ptr(0, 512)},
        {{0, VACCEL_ACCESS_WRITE, out.get(), 0, 512}}, dims(2));
    std::vector<std::uint32_t> got(128), want(128, 0);
    for (std::uint32_t i = 0; i < 70; ++i) want[i] = 7 + i;
    assert_ok(gpu.backend->read_buffer(*out, 0, std::as_writable_bytes(std::span(got))));
    assert_memory_equal(got.data(), want.data(), 512);
    assert_ok(gpu.backend->free_buffer(out));
    gpu.finish(p);
}

void bad_modules_and_launches_are_refused(void**)
{
    Rig gpu = cuda_rig();
    // A cubin without the ELF magic; an ELF built for no GPU here (the
    // PTX file's bytes behind an ELF magic); PTX that does not compile.
    auto cubin = kernel_file("launch_kernels.cubin");
    cubin[0] = std::byte{0};
    assert_refused(load_kernel(gpu, VACCEL_FORMAT_CUDA_CUBIN, cubin), Errc::invalid_argument,
                   VACCEL_D_FORMAT, VACCEL_FORMAT_CUDA_CUBIN, 0);
    std::string bad_ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry broken() { this is not ptx; }\n";
    const auto bad = load_kernel(gpu, VACCEL_FORMAT_CUDA_PTX, std::as_bytes(std::span(bad_ptx)));
    if (bad.has_value()) fail_msg("PTX that does not compile was loaded");
    assert_int_equal(static_cast<int>(bad.error().code), static_cast<int>(Errc::invalid_argument));
    assert_int_equal(bad.error().detail, VACCEL_D_FORMAT);
    assert_int_equal(bad.error().arg0, VACCEL_FORMAT_CUDA_PTX);
    assert_true(bad.error().note.find("could not compile the PTX") != std::string::npos);
    assert_int_equal(gpu.backend->live().programs, 0);

    auto p = must_load_kernels(gpu);
    auto xs = gpu.buffer(512), ys = gpu.buffer(512);
    const std::vector<Binding> bindings{{0, VACCEL_ACCESS_READ, xs.get(), 0, 512},
                                        {1, VACCEL_ACCESS_READ | VACCEL_ACCESS_WRITE, ys.get(), 0,
                                         512}};
    const std::vector<Arg> args{Arg::ptr(0, 512), Arg::ptr(1, 512), Arg::f32(2.0f), Arg::u32(128)};
    // No such kernel.
    assert_refused(launch(gpu, *p, "main", args, bindings, dims(2)), Errc::invalid_argument,
                   VACCEL_D_KERNEL_ENTRY, 0, 0);
    // The kernel's parameters, not the ones given: three arguments for
    // four parameters; a u64 where the kernel takes a float at offset 16.
    assert_refused(launch(gpu, *p, "saxpy", {args[0], args[1], args[2]}, bindings, dims(2)),
                   Errc::incompatible, VACCEL_D_KERNEL_SIGNATURE, 3, 0);
    assert_refused(launch(gpu, *p, "saxpy", {args[0], args[1], Arg::u64(2), args[3]}, bindings,
                          dims(2)),
                   Errc::incompatible, VACCEL_D_KERNEL_SIGNATURE, 2, 0);
    // A pointer 4 bytes past its 512-byte binding; a pointer to a slot no
    // binding carries (record 1, slot 9).
    assert_refused(launch(gpu, *p, "saxpy",
                          {Arg::ptr(0, 512), Arg::ptr(1, 516), Arg::f32(2.0f), Arg::u32(128)},
                          bindings, dims(2)),
                   Errc::out_of_bounds, VACCEL_D_RANGE, 0, 516);
    assert_refused(launch(gpu, *p, "saxpy",
                          {Arg::ptr(0, 512), Arg::ptr(9, 512), Arg::f32(2.0f), Arg::u32(128)},
                          bindings, dims(2)),
                   Errc::invalid_argument, VACCEL_D_KERNEL_ARG_POINTER, 1, 9);
    // Dims past the device: a block of 2048 threads (every CUDA device
    // stops at 1024), a grid of 70000 along y (65535), and more shared
    // memory than a block can have.
    const std::uint64_t dims_at = offsetof(vaccel_launch, dims);
    assert_refused(launch(gpu, *p, "saxpy", args, bindings, dims(1, 2048)), Errc::invalid_argument,
                   VACCEL_D_LAUNCH_DIMS, dims_at + offsetof(vaccel_launch_dims, block), 2048);
    assert_refused(launch(gpu, *p, "saxpy", args, bindings, dims(1, 64, 70000)),
                   Errc::invalid_argument, VACCEL_D_LAUNCH_DIMS,
                   dims_at + offsetof(vaccel_launch_dims, grid) + 4, 70000);
    auto huge_shared = dims(1);
    huge_shared.shared_bytes = 16u << 20;
    assert_refused(launch(gpu, *p, "saxpy", args, bindings, huge_shared), Errc::invalid_argument,
                   VACCEL_D_LAUNCH_DIMS, dims_at + offsetof(vaccel_launch_dims, shared_bytes),
                   16u << 20);
    // A kernel is launched, not submitted; a TOSA program is submitted.
    SubmitDesc submit;
    submit.queue = gpu.queue.get();
    submit.program = p.get();
    submit.sink = std::make_shared<CallbackSink>();
    assert_refused(gpu.backend->submit(submit), Errc::incompatible, VACCEL_D_FORMAT,
                   VACCEL_FORMAT_CUDA_PTX, 0);
    auto tosa_program = gpu.must_load(doubling(4));
    assert_refused(launch(gpu, *tosa_program, "saxpy", {}, {}, dims(1)), Errc::incompatible,
                   VACCEL_D_FORMAT, VACCEL_FORMAT_TOSA, 0);
    // Nothing was held by any refusal.
    assert_int_equal(xs->in_flight(), 0);
    assert_int_equal(ys->in_flight(), 0);
    assert_int_equal(gpu.backend->live().events, 0);
    assert_ok(gpu.backend->unload_program(tosa_program));
    assert_ok(gpu.backend->free_buffer(xs));
    assert_ok(gpu.backend->free_buffer(ys));
    gpu.finish(p);
}

// PTX is compiled once per device and driver: the first load writes
// <state_dir>/cuda/<key>.cubin, a second device object loads from it, and a
// damaged file is ignored and replaced.
void compiled_ptx_is_kept_in_the_state_directory(void**)
{
    const auto dir = std::filesystem::temp_directory_path() /
                     ("vaccel-cuda-jit-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    CudaOptions options;
    options.state_dir = dir;
    auto files = [&] {
        std::vector<std::filesystem::path> out;
        if (std::filesystem::exists(dir / "cuda"))
            for (const auto& e : std::filesystem::directory_iterator(dir / "cuda"))
                out.push_back(e.path());
        return out;
    };
    {
        Rig gpu = cuda_rig(options);
        auto p = must_load_kernels(gpu);
        gpu.finish(p);
    }
    auto kept = files();
    assert_int_equal(kept.size(), 1);
    const auto size = std::filesystem::file_size(kept[0]);
    assert_true(size > 1000);
    {
        Rig gpu = cuda_rig(options);
        auto p = must_load_kernels(gpu);  // from the file
        auto out = gpu.buffer(64 * 4);
        run(gpu, *p, "fill64", {Arg::u32(1), Arg::u64(0), Arg::u32(64), Arg::ptr(0, 256)},
            {{0, VACCEL_ACCESS_WRITE, out.get(), 0, 256}}, dims(1));
        std::vector<std::uint32_t> got(64);
        assert_ok(gpu.backend->read_buffer(*out, 0, std::as_writable_bytes(std::span(got))));
        assert_int_equal(got[63], 64);
        assert_ok(gpu.backend->free_buffer(out));
        gpu.finish(p);
    }
    std::filesystem::resize_file(kept[0], size / 2);  // damaged
    {
        Rig gpu = cuda_rig(options);
        auto p = must_load_kernels(gpu);
        gpu.finish(p);
    }
    assert_int_equal(std::filesystem::file_size(kept[0]), size);  // replaced, whole
    std::filesystem::remove_all(dir);
}

}  // namespace

int main()
{
    cuda_test::require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_device_advertises_cuda_launches),
        cmocka_unit_test(saxpy_runs_from_ptx_and_cubin),
        cmocka_unit_test(pointers_start_at_their_binding_offsets),
        cmocka_unit_test(scalars_keep_their_natural_alignment),
        cmocka_unit_test(bad_modules_and_launches_are_refused),
        cmocka_unit_test(compiled_ptx_is_kept_in_the_state_directory),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
