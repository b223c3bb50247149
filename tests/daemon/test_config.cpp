// test_config.cpp - reading vacceld.toml: a full file, the shipped default,
// and every kind of bad file refused with its file, line and key.
#include <cerrno>
#include <string>

#include "test_support.hpp"
#include "vaccel/daemon/config.hpp"

using namespace vaccel::daemon;

namespace {

const char* const full_example = R"(# every setting
[daemon]
devices = ["cpu", "vulkan:0"]
socket = "/tmp/v.sock"
admin_group = "gpu-admins"

[[rule]]
default = true
contexts = 4
memory = "2G"
buffers = 1024
programs = 64
queues = 16
events = 256
weight = 100

[[rule]]
uid = 1000
memory = 536870912
weight = 50

[[rule]]
gid = 27
events = 8

[[rule]]
cgroup = "/system.slice/ml.service"
weight = 1000
)";

Config parsed(const char* text)
{
    auto config = parse_config(text, "test.toml");
    if (!config)
        fail_msg("unexpected refusal: %s", config.error().message().c_str());
    return *config;
}

// The refusal of `text`: its line and key, exactly.
void assert_refused_at(const char* text, std::uint32_t line, const char* key)
{
    auto config = parse_config(text, "bad.toml");
    if (config.has_value())
        fail_msg("accepted:\n%s", text);
    const ConfigError& e = config.error();
    if (e.file != "bad.toml" || e.line != line || e.key != key)
        fail_msg("expected bad.toml:%u key '%s', got \"%s\"", line, key, e.message().c_str());
}

void parses_full_example(void**)
{
    const Config c = parsed(full_example);
    assert_true(c.daemon.devices.has_value());
    assert_int_equal(c.daemon.devices->size(), 2);
    assert_string_equal((*c.daemon.devices)[0].c_str(), "cpu");
    assert_string_equal((*c.daemon.devices)[1].c_str(), "vulkan:0");
    assert_string_equal(c.daemon.socket.c_str(), "/tmp/v.sock");
    assert_string_equal(c.daemon.admin_group.c_str(), "gpu-admins");

    const auto& rules = c.policy.rules();
    assert_int_equal(rules.size(), 4);
    const Rule* fallback = c.policy.find(Selector::fallback());
    assert_non_null(fallback);
    assert_int_equal(*fallback->limits.contexts, 4);
    assert_int_equal(*fallback->limits.memory_bytes, 2ull << 30);
    assert_int_equal(*fallback->limits.buffers, 1024);
    assert_int_equal(*fallback->limits.programs, 64);
    assert_int_equal(*fallback->limits.queues, 16);
    assert_int_equal(*fallback->limits.events, 256);
    assert_int_equal(*fallback->limits.weight, 100);

    const Rule* user = c.policy.find(Selector::uid(1000));
    assert_non_null(user);
    assert_int_equal(*user->limits.memory_bytes, 536870912);
    assert_int_equal(*user->limits.weight, 50);
    assert_false(user->limits.contexts.has_value());

    const Rule* group = c.policy.find(Selector::gid(27));
    assert_non_null(group);
    assert_int_equal(*group->limits.events, 8);

    const Rule* service = c.policy.find(Selector::cgroup_prefix("/system.slice/ml.service"));
    assert_non_null(service);
    assert_int_equal(*service->limits.weight, 1000);
}

void empty_file_gives_defaults(void**)
{
    const Config c = parsed("");
    assert_false(c.daemon.devices.has_value());
    assert_string_equal(c.daemon.socket.c_str(), "/run/vaccel/vacceld.sock");
    assert_string_equal(c.daemon.admin_group.c_str(), "vaccel-admin");
    assert_int_equal(c.policy.rules().size(), 0);
}

void shipped_default_config_parses(void**)
{
    auto config = load_config(VACCEL_DIST_CONFIG);
    if (!config)
        fail_msg("%s", config.error().message().c_str());
    assert_int_equal(config->daemon.devices->size(), 3);
    assert_string_equal((*config->daemon.devices)[0].c_str(), "cpu");
    assert_string_equal((*config->daemon.devices)[1].c_str(), "vulkan:*");
    assert_string_equal((*config->daemon.devices)[2].c_str(), "cuda:*");
    const Rule* fallback = config->policy.find(Selector::fallback());
    assert_non_null(fallback);
    assert_int_equal(*fallback->limits.memory_bytes, 2ull << 30);
    assert_int_equal(config->policy.rules().size(), 1);
    assert_int_equal(config->daemon.backends.size(), 1);
    assert_string_equal(config->daemon.backends.at("cpu").at("threads").c_str(), "0");
}

void backend_tables_are_kept_as_text_and_round_trip(void**)
{
    const Config c = parsed(R"([daemon]
devices = ["cpu:1", "vulkan:*"]
[devices.cpu]
threads = 4
count = 2
[devices.vulkan]
validation = true
name = "llvmpipe"
[[rule]]
default = true
gates = 16
)");
    assert_int_equal(c.daemon.backends.size(), 2);
    assert_string_equal(c.daemon.backends.at("cpu").at("threads").c_str(), "4");
    assert_string_equal(c.daemon.backends.at("cpu").at("count").c_str(), "2");
    assert_string_equal(c.daemon.backends.at("vulkan").at("validation").c_str(), "true");
    assert_string_equal(c.daemon.backends.at("vulkan").at("name").c_str(), "llvmpipe");
    assert_int_equal(*c.policy.find(Selector::fallback())->limits.gates, 16);
    auto again = parse_config(write_config(c), "written.toml");
    if (!again)
        fail_msg("%s\n%s", again.error().message().c_str(), write_config(c).c_str());
    assert_true(*again == c);
}

void state_dir_is_read_checked_and_round_trips(void**)
{
    assert_string_equal(parsed("").daemon.state_dir.c_str(), "/var/lib/vaccel");
    const Config c = parsed("[daemon]\nstate_dir = \"/srv/vaccel-state\"\n");
    assert_string_equal(c.daemon.state_dir.c_str(), "/srv/vaccel-state");
    const std::string written = write_config(c);
    assert_true(written.find("state_dir = \"/srv/vaccel-state\"\n") != std::string::npos);
    auto again = parse_config(written, "written.toml");
    if (!again) fail_msg("%s", again.error().message().c_str());
    assert_true(*again == c);
    // The default is not written back: files that never named it keep their text.
    assert_true(write_config(parsed("")).find("state_dir") == std::string::npos);
    assert_refused_at("[daemon]\nstate_dir = \"var/lib\"\n", 2, "daemon.state_dir");
    assert_refused_at("[daemon]\n\nstate_dir = \"\"\n", 3, "daemon.state_dir");
    auto relative = parse_config("[daemon]\nstate_dir = \"state\"\n", "r.toml");
    assert_string_equal(relative.error().message().c_str(),
                        "r.toml:2: key 'daemon.state_dir': \"state\" is not an absolute path; "
                        "write the full path, e.g. \"/var/lib/vaccel\"");
}

void backend_table_values_must_be_plain(void**)
{
    assert_refused_at("[devices.cpu]\nthreads = [1, 2]\n", 2, "devices.cpu.threads");
    assert_refused_at("[devices]\ncpu = 3\n", 2, "devices.cpu");
}

void bad_size_names_line_and_key(void**)
{
    assert_refused_at("[[rule]]\nuid = 1\nmemory = \"2X\"\n", 3, "rule.memory");
    auto config = parse_config("[[rule]]\nuid = 1\nmemory = \"2X\"\n", "bad.toml");
    assert_string_equal(config.error().message().c_str(),
                        "bad.toml:3: key 'rule.memory': \"2X\" is not a size; write a number "
                        "of bytes, or a number with K, M, G or T, e.g. \"2G\"");
}

void weight_out_of_range_is_refused(void**)
{
    assert_refused_at("[[rule]]\ndefault = true\nweight = 0\n", 3, "rule.weight");
    assert_refused_at("\n[[rule]]\ndefault = true\nweight = 1001\n", 4, "rule.weight");
}

void priority_and_device_share_are_read_and_checked(void**)
{
    const Config c = parsed("[[rule]]\nuid = 7\npriority = \"latency\"\n"
                            "device_share = \"12.5%\"\n\n[[rule]]\ngid = 9\n"
                            "priority = \"batch\"\ndevice_share = \"100%\"\n");
    const Rule* latency = c.policy.find(Selector::uid(7));
    assert_non_null(latency);
    assert_true(*latency->limits.priority == TenantPriority::latency);
    assert_int_equal(*latency->limits.device_share, 125);
    const Rule* batch = c.policy.find(Selector::gid(9));
    assert_true(*batch->limits.priority == TenantPriority::batch);
    assert_int_equal(*batch->limits.device_share, 1000);
    // Written back as read.
    const std::string text = write_config(c);
    assert_true(text.find("priority = \"latency\"\ndevice_share = \"12.5%\"\n") !=
                std::string::npos);
    auto again = parse_config(text, "again.toml");
    assert_true(again.has_value() && *again == c);
    // Refusals name the file, line, key and the valid forms.
    assert_refused_at("[[rule]]\nuid = 1\npriority = \"fast\"\n", 3, "rule.priority");
    assert_refused_at("[[rule]]\nuid = 1\n\npriority = 1\n", 4, "rule.priority");
    auto fast = parse_config("[[rule]]\nuid = 1\npriority = \"fast\"\n", "bad.toml");
    assert_string_equal(fast.error().message().c_str(),
                        "bad.toml:3: key 'rule.priority': \"fast\" is not a priority; use "
                        "\"latency\" (served before batch work whenever it waits) or \"batch\" "
                        "(shares by weight, the default)");
    for (const char* bad : {"\"0%\"", "\"100.1%\"", "\"130%\"", "\"30\"", "\"3.25%\"",
                            "\"-5%\"", "\"%\"", "30", "\"x%\""})
        assert_refused_at((std::string("[[rule]]\nuid = 1\ndevice_share = ") + bad + "\n").c_str(),
                          3, "rule.device_share");
    auto share = parse_config("[[rule]]\nuid = 1\ndevice_share = \"130%\"\n", "bad.toml");
    assert_string_equal(share.error().message().c_str(),
                        "bad.toml:3: key 'rule.device_share': \"130%\" is not a share; write a "
                        "percentage in quotes from \"0.1%\" to \"100%\" (at most one "
                        "decimal), e.g. \"30%\"");
    // The tenant's, not one context's.
    assert_refused_at("[[rule]]\nuid = 1\n[rule.context]\ndevice_share = \"5%\"\n", 4,
                      "rule.context.device_share");
}

void negative_or_quoted_count_is_refused(void**)
{
    assert_refused_at("[[rule]]\ngid = 4\ncontexts = -1\n", 3, "rule.contexts");
    assert_refused_at("[[rule]]\ngid = 4\n\nevents = \"64\"\n", 4, "rule.events");
    assert_refused_at("[[rule]]\ngid = 4\nqueues = 4294967296\n", 3, "rule.queues");
}

void unknown_rule_key_is_refused(void**)
{
    assert_refused_at("[[rule]]\nuid = 3\nmemroy = \"1G\"\n", 3, "rule.memroy");
}

void unknown_table_is_refused(void**)
{
    assert_refused_at("[daemon]\nsocket = \"/s\"\n\n[limits]\nx = 1\n", 4, "limits");
    assert_refused_at("[daemon]\nsokcet = \"/s\"\n", 2, "daemon.sokcet");
}

void rule_without_selector_is_refused_at_its_header(void**)
{
    assert_refused_at("[[rule]]\nuid = 1\n\n[[rule]]\nmemory = \"1G\"\n", 4, "rule");
}

void rule_with_two_selectors_is_refused(void**)
{
    // Reported at the second selector in the file.
    assert_refused_at("[[rule]]\nuid = 1\ngid = 2\n", 3, "rule.gid");
    auto config = parse_config("[[rule]]\nuid = 1\ngid = 2\n", "bad.toml");
    assert_string_equal(config.error().reason.c_str(),
                        "a rule selects clients one way only, and this one already selects "
                        "uid 1 (line 2); split it into two rules");
}

void second_rule_for_same_selector_is_refused(void**)
{
    assert_refused_at("[[rule]]\nuid = 1\n\n[[rule]]\nuid = 1\nweight = 3\n", 5, "rule.uid");
}

void default_must_be_true(void**)
{
    assert_refused_at("[[rule]]\ndefault = false\n", 2, "rule.default");
}

void malformed_cgroup_prefix_is_refused(void**)
{
    assert_refused_at("[[rule]]\ncgroup = \"system.slice\"\n", 2, "rule.cgroup");
    assert_refused_at("[[rule]]\ncgroup = \"/a/\"\n", 2, "rule.cgroup");
}

void rule_as_plain_table_is_refused(void**)
{
    assert_refused_at("[rule]\nuid = 1\n", 1, "rule");
}

void daemon_settings_are_checked(void**)
{
    assert_refused_at("[daemon]\nsocket = \"run/v.sock\"\n", 2, "daemon.socket");
    assert_refused_at("[daemon]\ndevices = [\"cpu\", 3]\n", 2, "daemon.devices");
    assert_refused_at("[daemon]\ndevices = \"cpu\"\n", 2, "daemon.devices");
    assert_refused_at("[daemon]\n\nadmin_group = \"\"\n", 3, "daemon.admin_group");
}

void toml_syntax_error_names_line(void**)
{
    assert_refused_at("[daemon]\nsocket = \"/s\"\n[[rule]\nuid = 1\n", 3, "");
}

void missing_file_error_names_file_and_errno(void**)
{
    auto config = load_config("/nonexistent/vaccel/vacceld.toml");
    assert_false(config.has_value());
    assert_int_equal(config.error().sys_errno, ENOENT);
    assert_string_equal(config.error().message().c_str(),
                        "/nonexistent/vaccel/vacceld.toml: cannot be read: No such file or "
                        "directory");
}

void sessions_and_context_caps_parse_and_round_trip(void**)
{
    const char* text = R"([[rule]]
uid = 1000
memory = "8G"
sessions = 8
[rule.context]
memory = "2G"
buffers = 16
events = 4

[[rule]]
default = true
contexts = 2
)";
    const Config c = parsed(text);
    const Rule* user = c.policy.find(Selector::uid(1000));
    assert_non_null(user);
    assert_int_equal(*user->limits.memory_bytes, 8ull << 30);
    assert_int_equal(*user->limits.sessions, 8);
    assert_int_equal(*user->limits.context.memory_bytes, 2ull << 30);
    assert_int_equal(*user->limits.context.buffers, 16);
    assert_int_equal(*user->limits.context.events, 4);
    assert_false(user->limits.context.queues.has_value());
    const Rule* fallback = c.policy.find(Selector::fallback());
    assert_true(fallback->limits.context.empty());
    // Written and read back: the same policy.
    const Config again = parsed(write_config(c).c_str());
    assert_true(again == c);
}

void context_caps_refuse_keys_that_count_more_than_one_context(void**)
{
    assert_refused_at("[[rule]]\nuid = 1\n[rule.context]\ncontexts = 2\n", 4, "rule.context.contexts");
    assert_refused_at("[[rule]]\nuid = 1\n[rule.context]\nsessions = 2\n", 4, "rule.context.sessions");
    assert_refused_at("[[rule]]\nuid = 1\n[rule.context]\nbufers = 2\n", 4, "rule.context.bufers");
    assert_refused_at("[[rule]]\nuid = 1\ncontext = 3\n", 3, "rule.context");
    auto refused = parse_config("[[rule]]\nuid = 1\n[rule.context]\nweight = 2\n", "bad.toml");
    assert_false(refused.has_value());
    assert_string_equal(refused.error().message().c_str(),
                        "bad.toml:4: key 'rule.context.weight': is the tenant's, not one "
                        "context's; set weight in the rule itself");
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(parses_full_example),
        cmocka_unit_test(empty_file_gives_defaults),
        cmocka_unit_test(shipped_default_config_parses),
        cmocka_unit_test(backend_tables_are_kept_as_text_and_round_trip),
        cmocka_unit_test(state_dir_is_read_checked_and_round_trips),
        cmocka_unit_test(backend_table_values_must_be_plain),
        cmocka_unit_test(bad_size_names_line_and_key),
        cmocka_unit_test(weight_out_of_range_is_refused),
        cmocka_unit_test(priority_and_device_share_are_read_and_checked),
        cmocka_unit_test(negative_or_quoted_count_is_refused),
        cmocka_unit_test(unknown_rule_key_is_refused),
        cmocka_unit_test(unknown_table_is_refused),
        cmocka_unit_test(rule_without_selector_is_refused_at_its_header),
        cmocka_unit_test(rule_with_two_selectors_is_refused),
        cmocka_unit_test(second_rule_for_same_selector_is_refused),
        cmocka_unit_test(default_must_be_true),
        cmocka_unit_test(malformed_cgroup_prefix_is_refused),
        cmocka_unit_test(rule_as_plain_table_is_refused),
        cmocka_unit_test(daemon_settings_are_checked),
        cmocka_unit_test(toml_syntax_error_names_line),
        cmocka_unit_test(missing_file_error_names_file_and_errno),
        cmocka_unit_test(sessions_and_context_caps_parse_and_round_trip),
        cmocka_unit_test(context_caps_refuse_keys_that_count_more_than_one_context),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
