// test_launch.cpp - raw SPIR-V kernels (VACCEL_FORMAT_SPIRV) on Mesa
// lavapipe: the module checks on hand-built words, then glslc-compiled test
// kernels (tests/vulkan/kernels) launched with the tagged argv: scalars as
// push constants, pointers as storage buffers, exact outputs, every refusal.
#include <fstream>
#include <iterator>

#include "vulkan_test_support.hpp"
#include "spirv_module.hpp"
#include "vaccel/backend/vulkan.hpp"

namespace {

using namespace vulkan_test;
using kernel_args::Arg;
using vaccel::backend::vulkan::inspect_spirv;

// A module of `words` as bytes.
std::vector<std::byte> bytes_of_words(const std::vector<std::uint32_t>& words)
{
    std::vector<std::byte> out(words.size() * 4);
    std::memcpy(out.data(), words.data(), out.size());
    return out;
}

// Header (magic, 1.0, generator 0, bound 10, schema 0) then an OpEntryPoint
// GLCompute %1 "main" and an OpEntryPoint Vertex %2 "vs".
std::vector<std::uint32_t> tiny_module()
{
    return {0x07230203, 0x00010000, 0, 10, 0,
            (5u << 16) | 15, 5, 1, 0x6e69616d /* "main" */, 0,
            (4u << 16) | 15, 0, 2, 0x00007376 /* "vs\0\0" */};
}

void spirv_words_are_checked_and_entries_read(void**)
{
    auto module = inspect_spirv(bytes_of_words(tiny_module()));
    assert_ok(module);
    assert_int_equal(module->compute_entries.size(), 1);  // the Vertex entry is not a kernel
    assert_string_equal(module->compute_entries[0].c_str(), "main");

    auto bad_magic = tiny_module();
    bad_magic[0] = 0x03022307;  // byte-swapped
    assert_refused(inspect_spirv(bytes_of_words(bad_magic)), Errc::invalid_argument,
                   VACCEL_D_FORMAT, VACCEL_FORMAT_SPIRV, 0);
    auto bytes = bytes_of_words(tiny_module());
    bytes.resize(bytes.size() - 2);  // 54 bytes: not whole words; the last word starts at 52
    assert_refused(inspect_spirv(bytes), Errc::invalid_argument, VACCEL_D_FORMAT,
                   VACCEL_FORMAT_SPIRV, 52);
    assert_refused(inspect_spirv(std::vector<std::byte>(16)), Errc::invalid_argument,
                   VACCEL_D_FORMAT, VACCEL_FORMAT_SPIRV, 0);
    auto new_version = tiny_module();
    new_version[1] = 0x00010700;  // 1.7 does not exist
    assert_refused(inspect_spirv(bytes_of_words(new_version)), Errc::invalid_argument,
                   VACCEL_D_FORMAT, VACCEL_FORMAT_SPIRV, 4);
    auto zero_count = tiny_module();
    zero_count[5] = 15;  // word count 0 at word 5 = byte 20
    assert_refused(inspect_spirv(bytes_of_words(zero_count)), Errc::invalid_argument,
                   VACCEL_D_FORMAT, VACCEL_FORMAT_SPIRV, 20);
    auto overrun = tiny_module();
    overrun[10] = (9u << 16) | 15;  // 9 words at word 10, 4 remain: byte 40
    assert_refused(inspect_spirv(bytes_of_words(overrun)), Errc::invalid_argument,
                   VACCEL_D_FORMAT, VACCEL_FORMAT_SPIRV, 40);
    auto unterminated = tiny_module();
    unterminated[9] = 0x41414141;  // "main" then "AAAA": no NUL in its words
    assert_refused(inspect_spirv(bytes_of_words(unterminated)), Errc::invalid_argument,
                   VACCEL_D_FORMAT, VACCEL_FORMAT_SPIRV, 20);
}

std::vector<std::byte> kernel_file(const char* name)
{
    const std::string path = std::string(VACCEL_TEST_KERNELS_DIR) + "/" + name + ".spv";
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_msg("cannot read %s", path.c_str());
    std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> out(raw.size());
    std::memcpy(out.data(), raw.data(), raw.size());
    return out;
}

Result<std::unique_ptr<Program>> load_spirv(Rig& rig, std::span<const std::byte> module)
{
    ProgramDesc desc;
    desc.format = VACCEL_FORMAT_SPIRV;
    desc.payload = module;
    return rig.backend->load_program(*rig.context, desc);
}

std::unique_ptr<Program> must_load_kernel(Rig& rig, const char* name)
{
    const auto module = kernel_file(name);
    auto program = load_spirv(rig, module);
    assert_ok(program);
    return std::move(*program);
}

vaccel_launch_dims grid(std::uint32_t x, std::uint32_t y = 1, std::uint32_t z = 1)
{
    vaccel_launch_dims dims{};
    dims.grid[0] = x;
    dims.grid[1] = y;
    dims.grid[2] = z;
    dims.block[0] = dims.block[1] = dims.block[2] = 1;
    return dims;
}

void the_device_advertises_spirv_launches(void**)
{
    Rig gpu = vulkan_rig();
    const vaccel_device_info& info = gpu.backend->device_info();
    assert_int_equal(info.formats, VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA) |
                                       VACCEL_FORMAT_BIT(VACCEL_FORMAT_SPIRV));
    assert_int_equal(info.flags & VACCEL_CAP_LAUNCH, VACCEL_CAP_LAUNCH);
    gpu.finish();
}

// y = 2x + y over the first 100 of 128 elements, two workgroups of 64:
// x[i] = i, y[i] = 1000 - 3i, so y becomes 1000 - i (every value an exact
// small integer); elements 100..127 keep 1000 - 3i.
void saxpy_runs_with_push_constants_and_two_buffers(void**)
{
    Rig gpu = vulkan_rig();
    auto p = must_load_kernel(gpu, "saxpy");
    std::vector<float> x(128), y(128), want(128);
    for (int i = 0; i < 128; ++i) {
        x[i] = static_cast<float>(i);
        y[i] = static_cast<float>(1000 - 3 * i);
        want[i] = static_cast<float>(i < 100 ? 1000 - i : 1000 - 3 * i);
    }
    auto xs = gpu.buffer_with(x), ys = gpu.buffer_with(y);
    const std::vector<Binding> bindings{{0, VACCEL_ACCESS_READ, xs.get(), 0, 512},
                                        {1, VACCEL_ACCESS_READ | VACCEL_ACCESS_WRITE, ys.get(), 0,
                                         512}};
    run(gpu, *p, "main", {Arg::ptr(0, 512), Arg::ptr(1, 512), Arg::f32(2.0f), Arg::u32(100)},
        bindings, grid(2));
    assert_exactly(gpu.read(*ys, 128), want);
    // The same program again (its pipeline is made once): y = 2x + y once more.
    for (int i = 0; i < 100; ++i) want[i] = static_cast<float>(1000 + i);
    run(gpu, *p, "main", {Arg::ptr(0, 512), Arg::ptr(1, 512), Arg::f32(2.0f), Arg::u32(100)},
        bindings, grid(2));
    assert_exactly(gpu.read(*ys, 128), want);
    assert_ok(gpu.backend->free_buffer(xs));
    assert_ok(gpu.backend->free_buffer(ys));
    gpu.finish(p);
}

// Pointers at binding offsets: x from byte 256 of its buffer, y from byte
// 512 of one buffer that also holds bytes before and after it. y[i] =
// -1 * x[i] + y[i] with x[i] = i + 1, y[i] = 10 i: y becomes 9 i - 1.
void pointer_arguments_start_at_their_binding_offsets(void**)
{
    Rig gpu = vulkan_rig();
    auto p = must_load_kernel(gpu, "saxpy");
    std::vector<float> xwords(64 + 64, -7.0f), ywords(128 + 64 + 32, 5.5f);
    for (int i = 0; i < 64; ++i) {
        xwords[64 + i] = static_cast<float>(i + 1);
        ywords[128 + i] = static_cast<float>(10 * i);
    }
    auto xs = gpu.buffer_with(xwords), ys = gpu.buffer_with(ywords);
    std::vector<float> want = ywords;
    for (int i = 0; i < 64; ++i) want[128 + i] = static_cast<float>(9 * i - 1);
    run(gpu, *p, "main", {Arg::ptr(3, 256), Arg::ptr(4, 256), Arg::f32(-1.0f), Arg::u32(64)},
        {{3, VACCEL_ACCESS_READ, xs.get(), 256, 256},
         {4, VACCEL_ACCESS_READ | VACCEL_ACCESS_WRITE, ys.get(), 512, 256}},
        grid(1));
    assert_exactly(gpu.read(*ys, ywords.size()), want);  // bytes around y untouched
    assert_ok(gpu.backend->free_buffer(xs));
    assert_ok(gpu.backend->free_buffer(ys));
    gpu.finish(p);
}

// A u64 between two u32s: the push block is the parameter block of the
// scalars (u32 at 0, padding, u64 at 8, u32 at 16). values[i] = 7 + i for
// i < 70 of 128. Packed without the padding the block would be 16 bytes,
// with count at 12, where the kernel reads the u64's high word.
void scalars_keep_their_natural_alignment(void**)
{
    Rig gpu = vulkan_rig();
    auto p = must_load_kernel(gpu, "fill64");
    auto out = gpu.buffer(128 * 4);
    run(gpu, *p, "main",
        {Arg::u32(7), Arg::u64(0xdeadbeefcafef00dull), Arg::u32(70), Arg::ptr(0, 512)},
        {{0, VACCEL_ACCESS_WRITE, out.get(), 0, 512}}, grid(2));
    std::vector<std::uint32_t> got(128), want(128, 0);
    for (std::uint32_t i = 0; i < 70; ++i) want[i] = 7 + i;
    assert_ok(gpu.backend->read_buffer(*out, 0, std::as_writable_bytes(std::span(got))));
    assert_memory_equal(got.data(), want.data(), 512);
    assert_ok(gpu.backend->free_buffer(out));
    gpu.finish(p);
}

void bad_modules_and_launches_are_refused(void**)
{
    Rig gpu = vulkan_rig();
    auto module = kernel_file("saxpy");
    module[0] = std::byte{0};  // the magic's low byte
    assert_refused(load_spirv(gpu, module), Errc::invalid_argument, VACCEL_D_FORMAT,
                   VACCEL_FORMAT_SPIRV, 0);
    assert_int_equal(gpu.backend->live().programs, 0);

    auto p = must_load_kernel(gpu, "saxpy");
    auto xs = gpu.buffer(512), ys = gpu.buffer(512);
    const std::vector<Binding> bindings{{0, VACCEL_ACCESS_READ, xs.get(), 0, 512},
                                        {1, VACCEL_ACCESS_READ | VACCEL_ACCESS_WRITE, ys.get(), 0,
                                         512}};
    const std::vector<Arg> args{Arg::ptr(0, 512), Arg::ptr(1, 512), Arg::f32(2.0f), Arg::u32(128)};
    // No such entry point: glslc names a GLSL kernel's entry "main".
    const auto no_entry = launch(gpu, *p, "saxpy", args, bindings, grid(2));
    assert_refused(no_entry, Errc::invalid_argument, VACCEL_D_KERNEL_ENTRY, 0, 0);
    assert_string_equal(no_entry.error().note.c_str(),
                        "\"saxpy\" is not a GLCompute entry point of the SPIR-V module "
                        "(entries: main)");
    // 64 u64 scalars: 512 bytes of push constants, past every device's
    // maxPushConstantsSize here (lavapipe 128, the NVIDIA H200 256; Vulkan
    // guarantees 128): arg0 is the device's limit, arg1 the block's size.
    std::vector<Arg> many(args.begin(), args.begin() + 2);
    for (int i = 0; i < 64; ++i) many.push_back(Arg::u64(i));
    const auto too_many = launch(gpu, *p, "main", many, bindings, grid(2));
    if (too_many.has_value()) fail_msg("64 u64 scalars were accepted");
    assert_int_equal(static_cast<int>(too_many.error().code), static_cast<int>(Errc::resource_limit));
    assert_int_equal(too_many.error().detail, VACCEL_D_LIMIT);
    assert_int_equal(too_many.error().arg1, 512);
    assert_true(too_many.error().arg0 >= 128 && too_many.error().arg0 < 512);
    assert_int_equal(too_many.error().limit, VACCEL_LIMIT_KERNEL_ARGS_BYTES);
    // A pointer reaching 4 bytes past its 512-byte binding.
    assert_refused(launch(gpu, *p, "main",
                          {Arg::ptr(0, 512), Arg::ptr(1, 516), Arg::f32(2.0f), Arg::u32(128)},
                          bindings, grid(2)),
                   Errc::out_of_bounds, VACCEL_D_RANGE, 0, 516);
    // A pointer to a slot no binding carries: record 1, slot 9.
    assert_refused(launch(gpu, *p, "main",
                          {Arg::ptr(0, 512), Arg::ptr(9, 512), Arg::f32(2.0f), Arg::u32(128)},
                          bindings, grid(2)),
                   Errc::invalid_argument, VACCEL_D_KERNEL_ARG_POINTER, 1, 9);
    // More workgroups along x than any device counts (2^32 - 1: lavapipe
    // takes 65535, the NVIDIA H200 2^31 - 1), then along y past lavapipe's
    // and the H200's 65535.
    assert_refused(launch(gpu, *p, "main", args, bindings, grid(0xffffffffu)),
                   Errc::invalid_argument, VACCEL_D_LAUNCH_DIMS,
                   offsetof(vaccel_launch, dims) + offsetof(vaccel_launch_dims, grid),
                   0xffffffffu);
    assert_refused(launch(gpu, *p, "main", args, bindings, grid(1, 70000)),
                   Errc::invalid_argument, VACCEL_D_LAUNCH_DIMS,
                   offsetof(vaccel_launch, dims) + offsetof(vaccel_launch_dims, grid) + 4, 70000);
    // A misaligned binding offset (lavapipe aligns storage buffers to 16).
    assert_refused(launch(gpu, *p, "main", args,
                          {{0, VACCEL_ACCESS_READ, xs.get(), 8, 256},
                           {1, VACCEL_ACCESS_READ | VACCEL_ACCESS_WRITE, ys.get(), 0, 512}},
                          grid(2)),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE, offsetof(vaccel_binding, offset), 8);
    // A kernel is launched, not submitted; a TOSA program is submitted.
    SubmitDesc submit;
    submit.queue = gpu.queue.get();
    submit.program = p.get();
    submit.sink = std::make_shared<CallbackSink>();
    assert_refused(gpu.backend->submit(submit), Errc::incompatible, VACCEL_D_FORMAT,
                   VACCEL_FORMAT_SPIRV, 0);
    tosa::GraphBuilder g;
    const auto in = f32(g, "x", {4});
    const auto outt = f32(g, "out", {4});
    g.op(Op::add, {in, in}, {outt});
    g.input(in);
    g.output(outt);
    auto tosa_program = gpu.must_load(g.finish());
    assert_refused(launch(gpu, *tosa_program, "main", {}, {}, grid(1)), Errc::incompatible,
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

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spirv_words_are_checked_and_entries_read),
        cmocka_unit_test(the_device_advertises_spirv_launches),
        cmocka_unit_test(saxpy_runs_with_push_constants_and_two_buffers),
        cmocka_unit_test(pointer_arguments_start_at_their_binding_offsets),
        cmocka_unit_test(scalars_keep_their_natural_alignment),
        cmocka_unit_test(bad_modules_and_launches_are_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
