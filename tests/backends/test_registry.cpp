// test_registry.cpp - the backend registry: which devices a selection opens
// and how a bad selection or setting is refused.
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <thread>

#include "vaccel/backend/registry.hpp"

#include "cmocka.hpp"

using namespace vaccel;
using namespace vaccel::backend;

namespace {

Selection cpus(std::string count)
{
    Selection selection;
    selection.settings["cpu"].emplace("threads", "1");
    selection.settings["cpu"].emplace("count", std::move(count));
    return selection;
}

std::string name_of(const Backend& backend) { return backend.device_info().name; }

// The CPU serves first (docs/adr/0013-vulkan-backend.md): device 0 runs
// every format and operator; then Vulkan, then CUDA, where built.
void the_build_lists_the_cpu_backend_first(void**)
{
    const auto all = factories();
    assert_true(!all.empty());
    assert_string_equal(std::string(all.front().name).c_str(), "cpu");
    const char* order[] = {"cpu", "vulkan", "cuda"};
    std::size_t at = 0;
    for (const auto& factory : all) {
        while (at < 3 && std::string(factory.name) != order[at]) ++at;
        if (at == 3) fail_msg("backend %s is not one of cpu, vulkan, cuda in that order",
                              std::string(factory.name).c_str());
    }
}

void an_empty_list_serves_every_device(void**)
{
    auto devices = open_devices(cpus("3"));
    assert_true(devices.has_value());
    assert_true(devices->size() >= 3);
    assert_true(name_of(*(*devices)[0]).starts_with("cpu ("));
    assert_true(name_of(*(*devices)[1]).starts_with("cpu:1 ("));
    assert_true(name_of(*(*devices)[2]).starts_with("cpu:2 ("));
    // Then whatever Vulkan devices the machine has, after the CPUs.
    for (std::size_t i = 3; i < devices->size(); ++i)
        assert_true(std::string((*devices)[i]->device_info().driver).starts_with("vaccel-vulkan"));
}

void an_index_pattern_serves_that_device_only(void**)
{
    Selection selection = cpus("3");
    selection.devices = {"cpu:2"};
    auto devices = open_devices(selection);
    assert_true(devices.has_value());
    assert_int_equal(devices->size(), 1);
    assert_true(name_of(*(*devices)[0]).starts_with("cpu:2 ("));
    selection.devices = {"cpu:*"};
    assert_int_equal(open_devices(selection)->size(), 3);
}

void a_missing_index_is_refused(void**)
{
    Selection selection = cpus("2");
    selection.devices = {"cpu:2"};
    auto devices = open_devices(selection);
    assert_false(devices.has_value());
    assert_int_equal(devices.error().code, Errc::invalid_argument);
    assert_int_equal(devices.error().detail, VACCEL_D_NO_DEVICE);
    assert_int_equal(devices.error().arg0, 2);
    assert_int_equal(devices.error().arg1, 2);
}

void unknown_backends_and_patterns_are_refused(void**)
{
    Selection selection;
    selection.devices = {"tpu"};
    auto devices = open_devices(selection);
    assert_false(devices.has_value());
    assert_true(devices.error().note.find("no backend named \"tpu\"") != std::string::npos);
    selection.devices = {"cpu:x"};
    assert_false(open_devices(selection).has_value());
    selection.devices = {};
    selection.settings["tpu"].emplace("threads", "1");
    assert_false(open_devices(selection).has_value());
}

void unknown_or_malformed_settings_are_refused(void**)
{
    Selection selection;
    selection.settings["cpu"].emplace("thread", "1");
    auto devices = open_devices(selection);
    assert_false(devices.has_value());
    assert_true(devices.error().note.find("[devices.cpu] thread is not a setting of the cpu backend; its settings are threads, ") !=
                std::string::npos);
    selection.settings["cpu"].clear();
    selection.settings["cpu"].emplace("threads", "four");
    devices = open_devices(selection);
    assert_false(devices.has_value());
    assert_true(devices.error().note.find("is not an unsigned number") != std::string::npos);
    assert_false(open_devices(cpus("0")).has_value());
    assert_false(open_devices(cpus("17")).has_value());
    selection.settings["cpu"].clear();
    selection.settings["cpu"].emplace("inline_us", "1001");
    devices = open_devices(selection);
    assert_false(devices.has_value());
    assert_true(devices.error().note.find("[devices.cpu] inline_us is at most 1000") !=
                std::string::npos);
    selection.settings["cpu"].clear();
    selection.settings["cpu"].emplace("inline_us", "0");
    assert_true(open_devices(selection).has_value());
}

// fp32_math: "fp32" or "tf32" on CUDA, anything else refused listing both;
// Vulkan has no TF32 kernels, so "tf32" there is refused, not ignored.
// Checked before any device is looked for: these hold on a machine without
// a GPU as on one with.
void fp32_math_is_checked_per_backend(void**)
{
    Selection selection;
    selection.devices = {"cuda"};
    selection.settings["cuda"].emplace("fp32_math", "fp16");
    auto cuda = open_devices(selection);
    assert_false(cuda.has_value());
    assert_int_equal(cuda.error().code, Errc::invalid_argument);
    assert_string_equal(cuda.error().note.c_str(),
                        "[devices.cuda] fp32_math = \"fp16\" is not one of \"fp32\" (the "
                        "default), \"tf32\"");
    selection.devices = {"vulkan"};
    selection.settings.clear();
    selection.settings["vulkan"].emplace("fp32_math", "tf32");
    auto vulkan = open_devices(selection);
    assert_false(vulkan.has_value());
    assert_int_equal(vulkan.error().code, Errc::unsupported);
    assert_string_equal(vulkan.error().note.c_str(),
                        "[devices.vulkan] fp32_math = \"tf32\": the Vulkan backend multiplies "
                        "FP32 in FP32 only (it has no TF32 kernels); remove the key or set it "
                        "to \"fp32\"");
    selection.settings["vulkan"]["fp32_math"] = "ieee";
    assert_int_equal(open_devices(selection).error().code, Errc::invalid_argument);
}

// latency_hold_us, read by one rule for both GPUs: at most 10 ms, a number.
void the_latency_hold_is_checked_on_both_gpus(void**)
{
    for (const char* gpu : {"vulkan", "cuda"}) {
        Selection selection;
        selection.devices = {gpu};
        selection.settings[gpu].emplace("latency_hold_us", "10001");
        auto devices = open_devices(selection);
        assert_false(devices.has_value());
        assert_int_equal(devices.error().code, Errc::invalid_argument);
        const std::string expected = std::string("[devices.") + gpu +
                                     "] latency_hold_us is at most 10000 (10 ms of a device kept "
                                     "idle for a latency tenant); 0 never holds batch work back";
        assert_string_equal(devices.error().note.c_str(), expected.c_str());
        selection.settings[gpu]["latency_hold_us"] = "-5";
        devices = open_devices(selection);
        assert_false(devices.has_value());
        assert_true(devices.error().note.find("is not an unsigned number") != std::string::npos);
    }
}

// An EventSink that ignores completions.
struct Quiet final : EventSink {
    void completed(const EventStatus&) noexcept override {}
};

// One fill_u32 launch on a backend, and everything it needed; release()
// waits for the event and gives everything back.
struct LaunchedOnce {
    Backend& backend;
    std::unique_ptr<Context> context;
    std::unique_ptr<Program> program;
    std::unique_ptr<Queue> queue;
    std::unique_ptr<Buffer> buffer;
    Result<Submitted> submitted = std::unexpected(Error{});

    explicit LaunchedOnce(Backend& b) : backend(b)
    {
        context = std::move(*backend.create_context());
        static constexpr char library[] = "vaccel.builtin";
        ProgramDesc program_desc;
        program_desc.format = VACCEL_FORMAT_CPU_BUILTIN;
        program_desc.payload = std::as_bytes(std::span(library, sizeof library - 1));
        program = std::move(*backend.load_program(*context, program_desc));
        queue = std::move(*backend.create_queue(*context));
        BufferDesc buffer_desc;
        buffer_desc.bytes = 16;
        BufferInfo info;
        buffer = std::move(*backend.allocate_buffer(*context, buffer_desc, info));
        const kernel_args::Arg args[] = {kernel_args::Arg::ptr(0, 16), kernel_args::Arg::u32(7),
                                         kernel_args::Arg::u32(4)};
        const Binding bindings[] = {{0, VACCEL_ACCESS_WRITE, buffer.get(), 0, 16}};
        LaunchDesc desc;
        desc.queue = queue.get();
        desc.program = program.get();
        desc.entry = "fill_u32";
        desc.dims = vaccel_launch_dims{{1, 1, 1}, {1, 1, 1}, 0, 0};
        desc.args = args;
        desc.bindings = bindings;
        desc.sink = std::make_shared<Quiet>();
        submitted = backend.launch(desc);
    }

    EventState release()
    {
        assert_true(submitted.has_value());
        // The worker finishes it within moments; 30 s is only a guard.
        EventStatus status = backend.poll(*submitted->event);
        for (int i = 0; i < 30000 && status.state == EventState::pending; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            status = backend.poll(*submitted->event);
        }
        assert_true(backend.destroy_event(submitted->event).has_value());
        assert_true(backend.free_buffer(buffer).has_value());
        assert_true(backend.unload_program(program).has_value());
        assert_true(backend.destroy_queue(queue).has_value());
        assert_true(backend.destroy_context(context).has_value());
        return status.state;
    }
};

void loss_is_injected_into_the_device_named_only(void**)
{
    Selection selection = cpus("2");
    selection.settings["cpu"].emplace("inject_loss_after", "0");
    selection.settings["cpu"].emplace("inject_loss_device", "1");
    selection.devices = {"cpu"};
    auto devices = open_devices(selection);
    assert_true(devices.has_value());
    assert_int_equal(devices->size(), 2);
    LaunchedOnce kept(*(*devices)[0]);
    assert_true(kept.submitted.has_value());
    assert_false(kept.submitted->indeterminate.has_value());
    assert_int_equal(kept.release(), EventState::complete);
    assert_int_equal((*devices)[0]->state(), DeviceState::ok);
    // Device 1 dies taking its first submission: accepted, unconfirmed, and
    // its event fails.
    LaunchedOnce lost(*(*devices)[1]);
    assert_true(lost.submitted.has_value());
    assert_true(lost.submitted->indeterminate.has_value());
    assert_int_equal(lost.submitted->indeterminate->code, Errc::device_lost);
    assert_int_equal(lost.submitted->indeterminate->detail, VACCEL_D_INDETERMINATE);
    assert_int_equal(lost.release(), EventState::failed);
    assert_int_equal((*devices)[1]->state(), DeviceState::lost);
    assert_int_equal((*devices)[0]->state(), DeviceState::ok);
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(the_build_lists_the_cpu_backend_first),
        cmocka_unit_test(an_empty_list_serves_every_device),
        cmocka_unit_test(an_index_pattern_serves_that_device_only),
        cmocka_unit_test(a_missing_index_is_refused),
        cmocka_unit_test(unknown_backends_and_patterns_are_refused),
        cmocka_unit_test(unknown_or_malformed_settings_are_refused),
        cmocka_unit_test(fp32_math_is_checked_per_backend),
        cmocka_unit_test(the_latency_hold_is_checked_on_both_gpus),
        cmocka_unit_test(loss_is_injected_into_the_device_named_only),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
