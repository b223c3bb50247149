// test_report.cpp - what vaccelctl prints (tools/vaccelctl/src/report).
//
// Specifies: timing statistics, unit formatting, the JSON device document's
// keys and words, and the one-line run summary.
#include <cstring>

#include "report.hpp"

#include "cmocka.hpp"

using namespace vaccel::ctl;

namespace {

DeviceRecord cpu_device()
{
    DeviceRecord device;
    device.index = 0;
    auto& info = device.info;
    for (int i = 0; i < 16; ++i)
        info.uuid[i] = static_cast<std::uint8_t>(i);
    info.device_class = VACCEL_CLASS_OTHER;
    info.memory_caps = VACCEL_MEM_HOST_VISIBLE | VACCEL_MEM_DEVICE_LOCAL;
    std::strcpy(info.name, "Host CPU");
    std::strcpy(info.driver, "cpu");
    info.memory_bytes = 3ull << 30;
    info.limits.max_contexts = 64;
    info.limits.max_buffer_bytes = 1ull << 30;
    info.formats = VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA);
    info.tosa_target_count = 1;
    info.tosa_targets[0] = {
        1, 0, VACCEL_TOSA_PRO_FP, VACCEL_TOSA_LEVEL_8K, 0, VACCEL_TOSA_EXT_INT16 | (1ull << 40)};
    info.flags = VACCEL_CAP_TOSA | VACCEL_CAP_DEADLINES;
    return device;
}

void timing_median_of_odd_count_is_the_middle_sample(void**)
{
    Timing t = timing_of({50, 10, 30});
    assert_int_equal(t.median_ns, 30);
    assert_int_equal(t.min_ns, 10);
    assert_int_equal(t.max_ns, 50);
    assert_int_equal(t.samples_ns[0], 50);  // run order kept
}

void timing_median_of_even_count_is_the_mean_of_the_middle_two(void**)
{
    Timing t = timing_of({40, 10, 20, 1000});
    assert_int_equal(t.median_ns, 30);
}

void durations_and_sizes_read_in_units(void**)
{
    assert_string_equal(duration_text(850).c_str(), "850 ns");
    assert_string_equal(duration_text(12345).c_str(), "12.3 µs");
    assert_string_equal(duration_text(4560000).c_str(), "4.56 ms");
    assert_string_equal(duration_text(1230000000).c_str(), "1.23 s");
    assert_string_equal(bytes_text(512).c_str(), "512 B");
    assert_string_equal(bytes_text(3ull << 30).c_str(), "3.0 GiB");
    assert_string_equal(shape_brackets(std::vector<std::int64_t>{1, 4, 4, 1}).c_str(), "[1,4,4,1]");
}

void devices_json_names_fields_and_flags_in_words(void**)
{
    std::vector<DeviceRecord> devices{cpu_device()};
    struct vaccel_get_version version {};
    version.major = 1;
    version.capabilities = VACCEL_CAP_TOSA;
    auto doc = devices_json(devices, version);
    assert_int_equal(doc["abi"]["major"].get<int>(), 1);
    const auto& d = doc["devices"][0];
    assert_int_equal(d["index"].get<int>(), 0);
    assert_string_equal(d["name"].get<std::string>().c_str(), "Host CPU");
    assert_string_equal(d["class"].get<std::string>().c_str(), "other");
    assert_string_equal(d["kind"].get<std::string>().c_str(), "cpu");
    assert_string_equal(d["uuid"].get<std::string>().c_str(),
                        "00010203-0405-0607-0809-0a0b0c0d0e0f");
    assert_true(d["pci"].is_null());
    assert_int_equal(d["memory_bytes"].get<std::uint64_t>(), 3ull << 30);
    assert_string_equal(d["memory_caps"].dump().c_str(), "[\"host-visible\",\"device-local\"]");
    assert_int_equal(d["limits"]["max_contexts"].get<int>(), 64);
    assert_string_equal(d["formats"].dump().c_str(), "[\"tosa\"]");
    const auto& target = d["tosa_targets"][0];
    assert_string_equal(target["version"].get<std::string>().c_str(), "1.0");
    assert_string_equal(target["profiles"].dump().c_str(), "[\"fp\"]");
    assert_string_equal(target["level"].get<std::string>().c_str(), "8K");
    assert_string_equal(target["extensions"].dump().c_str(), "[\"int16\",\"bit 40\"]");
    assert_string_equal(d["capabilities"].dump().c_str(), "[\"tosa\",\"deadlines\"]");
}

void devices_text_aligns_labels_under_each_device(void**)
{
    std::vector<DeviceRecord> devices{cpu_device()};
    struct vaccel_get_version version {};
    version.major = 1;
    auto text = devices_text(devices, version);
    assert_contains(text, "vaccel ABI 1.0, 1 device\n\n[0] Host CPU\n");
    assert_contains(text, "    class          other (cpu)\n");
    assert_contains(text, "    memory         3.0 GiB (host-visible, device-local)\n");
    assert_contains(text,
                    "    tosa targets   1.0  profiles fp  level 8K  extensions int16, bit 40\n");
}

// A descriptor as the daemon answers it: TOSA 1.0 FP 8K; FP32 (DType 7) in
// every role, INT8 (3) constant and parameter-only; ADD (Op 15) on FP32, MUL
// (28) on INT8 and FP32 with a zero shift, IDENTITY (68) with its dtypes
// not stated.
vaccel_tosa_descriptor small_descriptor()
{
    vaccel_tosa_descriptor d{};
    d.target = {1, 0, VACCEL_TOSA_PRO_FP, VACCEL_TOSA_LEVEL_8K, 0, 0};
    d.descriptor_count = 1;
    d.envelope = {1, 1, 0, VACCEL_TOSA_RUNTIME_NONE};
    d.dtypes[3] = {VACCEL_TOSA_ROLE_CONSTANT, 1};
    d.dtypes[7] = {VACCEL_TOSA_ROLE_ALL, 0};
    d.operators[15] = {1, 0, 0, 1u << 7};
    d.operators[28] = {1, 0, VACCEL_TOSA_OPC_ZERO_SHIFT, (1u << 3) | (1u << 7)};
    d.operators[68] = {1, 0, 0, 0};
    return d;
}

void descriptors_print_target_dtypes_and_an_operator_table(void**)
{
    const std::vector<vaccel_tosa_descriptor> descriptors{small_descriptor()};
    assert_string_equal(descriptors_text(descriptors).c_str(),
                        "    tosa descriptor 0 of 1: TOSA 1.0 FP level 8K\n"
                        "      envelope  1 region, 1 block, static shapes, no runtime conditions\n"
                        "      dtypes    INT8 (constant; parameter only), FP32 (input, output, "
                        "constant, intermediate)\n"
                        "      operator  INT8  FP32  constraints\n"
                        "      ADD             x     -\n"
                        "      MUL       x     x     zero-shift\n"
                        "      IDENTITY  any admitted dtype  -\n");
    assert_string_equal(descriptors_text({}).c_str(), "    tosa descriptors  none\n");
    auto doc = descriptors_json(descriptors);
    assert_string_equal(doc.dump().c_str(),
                        "[{\"index\":0,\"target\":\"TOSA 1.0 FP level 8K\",\"envelope\":"
                        "{\"max_regions\":1,\"max_blocks\":1,\"dynamic_shapes\":false,"
                        "\"runtime_conditions\":\"none\"},\"dtypes\":[{\"dtype\":\"INT8\","
                        "\"roles\":[\"constant\"],\"parameter_only\":true},{\"dtype\":"
                        "\"FP32\",\"roles\":[\"input\",\"output\",\"constant\","
                        "\"intermediate\"],\"parameter_only\":false}],\"operators\":["
                        "{\"operator\":\"ADD\",\"dtypes\":[\"FP32\"],\"constraints\":[]},"
                        "{\"operator\":\"MUL\",\"dtypes\":[\"INT8\",\"FP32\"],"
                        "\"constraints\":[\"zero-shift\"]},{\"operator\":\"IDENTITY\","
                        "\"dtypes\":null,\"constraints\":[]}]}]");
}

void an_unreadable_descriptor_is_reported_not_guessed(void**)
{
    vaccel_tosa_descriptor d = small_descriptor();
    d.operators[15].constraints = 0x40;  // a constraint bit this build does not define
    const std::vector<vaccel_tosa_descriptor> descriptors{d};
    assert_contains(descriptors_text(descriptors),
                    "    tosa descriptor 0 of 1: unreadable (InvalidArgument: ");
    auto doc = descriptors_json(descriptors);
    assert_true(doc[0]["error"].get<std::string>().find("constraint bits holds 64") !=
                std::string::npos);
}

void devices_keep_their_fields_and_add_descriptors(void**)
{
    DeviceRecord device = cpu_device();
    device.tosa.push_back(small_descriptor());
    std::vector<DeviceRecord> devices{device};
    struct vaccel_get_version version {};
    version.major = 1;
    version.minor = 2;
    const std::string text = devices_text(devices, version);
    assert_contains(text, "    capabilities   tosa, deadlines\n"
                          "    tosa descriptor 0 of 1: TOSA 1.0 FP level 8K\n");
    auto doc = devices_json(devices, version);
    assert_string_equal(doc["devices"][0]["capabilities"].dump().c_str(),
                        "[\"tosa\",\"deadlines\"]");
    const auto& descriptor = doc["devices"][0]["tosa_descriptors"][0];
    assert_string_equal(descriptor["operators"][0]["operator"].get<std::string>().c_str(), "ADD");
}

void run_summary_is_one_line_with_tensors_and_timing(void**)
{
    RunReport report;
    report.model = "build/examples/mlp.tosa";
    report.device = cpu_device();
    report.inputs.push_back({0, "x", vaccel::npy::DType::f4, "FP32", {1, 4, 16}, 256, "in.npy"});
    report.outputs.push_back({1, "y", vaccel::npy::DType::f4, "FP32", {1, 4, 8}, 128, "out/y.npy"});
    report.timing = timing_of({2000, 1000, 3000});
    assert_string_equal(run_summary(report).c_str(),
                        "mlp.tosa on [0] Host CPU (cpu): in x[1,4,16] f4 <- in.npy; out "
                        "y[1,4,8] f4 -> out/y.npy; median 2.0 µs (min 1.0 µs, max 3.0 µs) over 3 "
                        "runs");
    auto doc = run_json(report);
    assert_string_equal(doc["model"].get<std::string>().c_str(), "build/examples/mlp.tosa");
    assert_string_equal(doc["outputs"][0]["dtype"].get<std::string>().c_str(), "<f4");
    assert_int_equal(doc["timing"]["median_ns"].get<int>(), 2000);
    assert_int_equal(doc["timing"]["repeat"].get<int>(), 3);
}

// Ctrl-C: the summary keeps the runs that completed and says how many were
// asked; none completed is said in words, not as a median of nothing.
void an_interrupted_run_says_so_and_keeps_its_timings(void**)
{
    RunReport report;
    report.model = "m.tosa";
    report.device = cpu_device();
    report.timing = timing_of({1000, 3000});
    report.planned = 1000;
    report.interrupted = true;
    assert_string_equal(run_summary(report).c_str(),
                        "m.tosa on [0] Host CPU (cpu): in ; out ; median 2.0 µs (min 1.0 µs, max "
                        "3.0 µs) over 2 runs (interrupted: 1000 asked)");
    auto doc = run_json(report);
    assert_true(doc["timing"]["interrupted"].get<bool>());
    assert_int_equal(doc["timing"]["planned"].get<int>(), 1000);
    assert_int_equal(doc["timing"]["samples_ns"].size(), 2);
    report.timing = timing_of({});
    assert_string_equal(run_summary(report).c_str(),
                        "m.tosa on [0] Host CPU (cpu): in ; out ; no timed run completed "
                        "(interrupted: 1000 asked)");
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(timing_median_of_odd_count_is_the_middle_sample),
        cmocka_unit_test(descriptors_print_target_dtypes_and_an_operator_table),
        cmocka_unit_test(an_unreadable_descriptor_is_reported_not_guessed),
        cmocka_unit_test(devices_keep_their_fields_and_add_descriptors),
        cmocka_unit_test(timing_median_of_even_count_is_the_mean_of_the_middle_two),
        cmocka_unit_test(durations_and_sizes_read_in_units),
        cmocka_unit_test(devices_json_names_fields_and_flags_in_words),
        cmocka_unit_test(devices_text_aligns_labels_under_each_device),
        cmocka_unit_test(run_summary_is_one_line_with_tensors_and_timing),
        cmocka_unit_test(an_interrupted_run_says_so_and_keeps_its_timings),
    };
    return cmocka_run_group_tests_name("report", tests, nullptr, nullptr);
}
