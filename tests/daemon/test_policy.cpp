// test_policy.cpp - which rule a client falls under, the limits it gets, and
// run-time rule changes (no files involved).
#include <limits>

#include "test_support.hpp"
#include "vaccel/daemon/policy.hpp"
#include "vaccel/daemon/size.hpp"

using namespace vaccel::daemon;

namespace {

constexpr std::uint32_t all32 = std::numeric_limits<std::uint32_t>::max();

vaccel_device_limits device_limits()
{
    vaccel_device_limits l{};
    l.max_contexts = 64;
    l.max_buffers = 4096;
    l.max_programs = 256;
    l.max_queues = 32;
    l.max_events = 1024;
    l.max_bindings = 16;
    l.max_buffer_bytes = 1ull << 30;
    l.max_artifact_bytes = 1ull << 28;
    l.max_memory_bytes = 8ull << 30;
    return l;
}

RuleLimits weight_only(std::uint32_t weight)
{
    RuleLimits l;
    l.weight = weight;
    return l;
}

// One rule of each kind, each with its own weight to tell them apart.
Policy every_kind()
{
    Policy p;
    assert_true(p.set(Selector::fallback(), weight_only(1)).has_value());
    assert_true(p.set(Selector::cgroup_prefix("/system.slice"), weight_only(2)).has_value());
    assert_true(
        p.set(Selector::cgroup_prefix("/system.slice/ml.service"), weight_only(3)).has_value());
    assert_true(p.set(Selector::gid(100), weight_only(4)).has_value());
    assert_true(p.set(Selector::uid(1000), weight_only(5)).has_value());
    return p;
}

void uid_rule_beats_gid_cgroup_and_default(void**)
{
    const Policy p = every_kind();
    assert_int_equal(p.weight(Client{1000, 100, "/system.slice/ml.service"}), 5);
}

void gid_rule_beats_cgroup_and_default(void**)
{
    const Policy p = every_kind();
    assert_int_equal(p.weight(Client{1001, 100, "/system.slice/ml.service"}), 4);
}

void longest_cgroup_prefix_wins(void**)
{
    const Policy p = every_kind();
    assert_int_equal(p.weight(Client{1001, 101, "/system.slice/ml.service/worker"}), 3);
    assert_int_equal(p.weight(Client{1001, 101, "/system.slice/other.service"}), 2);
}

void cgroup_prefix_matches_whole_components_only(void**)
{
    const Policy p = every_kind();
    // "/system.slice/ml.service" is not a component prefix of ".../ml.services".
    assert_int_equal(p.weight(Client{1001, 101, "/system.slice/ml.services"}), 2);
    assert_int_equal(p.weight(Client{1001, 101, "/system.slicer"}), 1);
}

void root_cgroup_prefix_selects_every_known_cgroup(void**)
{
    Policy p;
    assert_true(p.set(Selector::cgroup_prefix("/"), weight_only(7)).has_value());
    assert_int_equal(p.weight(Client{1, 1, "/user.slice"}), 7);
    assert_int_equal(p.weight(Client{1, 1, ""}), weight_default);
}

void default_rule_applies_when_nothing_else_matches(void**)
{
    const Policy p = every_kind();
    const Rule* rule = p.match(Client{1001, 101, "/user.slice"});
    assert_non_null(rule);
    assert_true(rule->selector == Selector::fallback());
    assert_int_equal(p.weight(Client{1001, 101, "/user.slice"}), 1);
}

void no_rule_grants_device_limits_and_default_weight(void**)
{
    const Policy p;
    const vaccel_device_limits device = device_limits();
    const vaccel_device_limits got = p.context_limits(device, Client{1000, 100, "/"});
    assert_memory_equal(&got, &device, sizeof(got));
    assert_null(p.match(Client{1000, 100, "/"}));
    assert_int_equal(p.weight(Client{1000, 100, "/"}), 100);
    const Totals totals = p.totals(Client{1000, 100, "/"});
    assert_int_equal(totals.per_device.max_memory_bytes, UINT64_MAX);
    assert_int_equal(totals.per_device.max_contexts, UINT32_MAX);
    assert_int_equal(totals.sessions, vaccel::default_tenant_sessions);
}

void rule_keys_are_tenant_totals_and_context_caps_narrow_each_context(void**)
{
    Policy p;
    RuleLimits l;
    l.contexts = 4;
    l.memory_bytes = 2ull << 30;
    l.events = 64;
    l.sessions = 8;
    l.context.buffers = 100000;  // above the device's 4096: the device wins
    l.context.memory_bytes = 1ull << 29;
    assert_true(p.set(Selector::uid(1000), l).has_value());
    const Totals totals = p.totals(Client{1000, 100, ""});
    assert_int_equal(totals.per_device.max_contexts, 4);
    assert_int_equal(totals.per_device.max_memory_bytes, 2ull << 30);
    assert_int_equal(totals.per_device.max_events, 64);
    assert_int_equal(totals.per_device.max_buffers, UINT32_MAX);  // no total set
    assert_int_equal(totals.sessions, 8);
    const vaccel_device_limits got = p.context_limits(device_limits(), Client{1000, 100, ""});
    assert_int_equal(got.max_memory_bytes, 1ull << 29);
    assert_int_equal(got.max_buffers, 4096);
    // Totals do not narrow a single context; fields no cap names keep the
    // device's values.
    assert_int_equal(got.max_events, device_limits().max_events);
    assert_int_equal(got.max_contexts, device_limits().max_contexts);
    assert_int_equal(got.max_programs, 256);
    assert_int_equal(got.max_queues, 32);
    assert_int_equal(got.max_bindings, 16);
    assert_int_equal(got.max_buffer_bytes, 1ull << 30);
    assert_int_equal(got.max_artifact_bytes, 1ull << 28);
}

void zero_in_a_rule_allows_none(void**)
{
    Policy p;
    RuleLimits l;
    l.programs = 0;
    l.context.queues = 0;
    assert_true(p.set(Selector::gid(5), l).has_value());
    assert_int_equal(p.totals(Client{1, 5, ""}).per_device.max_programs, 0);
    assert_int_equal(p.context_limits(device_limits(), Client{1, 5, ""}).max_queues, 0);
}

void set_merges_changes_into_existing_rule(void**)
{
    Policy p;
    RuleLimits first;
    first.contexts = 4;
    first.memory_bytes = 1ull << 30;
    assert_true(p.set(Selector::uid(7), first).has_value());
    RuleLimits change;
    change.memory_bytes = 2ull << 30;
    change.weight = 300;
    assert_true(p.set(Selector::uid(7), change).has_value());

    assert_int_equal(p.rules().size(), 1);
    const RuleLimits& now = p.rules()[0].limits;
    assert_int_equal(*now.contexts, 4);
    assert_int_equal(*now.memory_bytes, 2ull << 30);
    assert_int_equal(*now.weight, 300);
    assert_false(now.buffers.has_value());
}

void set_refuses_weight_out_of_range_and_changes_nothing(void**)
{
    Policy p = every_kind();
    const Policy before = p;
    auto zero = p.set(Selector::uid(1000), weight_only(0));
    assert_false(zero.has_value());
    assert_string_equal(zero.error().key.c_str(), "weight");
    assert_string_equal(zero.error().reason.c_str(),
                        "weight 0 is out of range; use 1..1000 (default 100)");
    assert_false(p.set(Selector::uid(1000), weight_only(1001)).has_value());
    assert_true(p == before);
}

void schedule_names_weight_priority_and_share(void**)
{
    Policy policy;
    RuleLimits latency;
    latency.weight = 20;
    latency.priority = TenantPriority::latency;
    latency.device_share = 300;
    assert_true(policy.set(Selector::uid(1000), latency).has_value());
    const Schedule s = policy.schedule(Client{1000, 100, "/x"});
    assert_int_equal(s.weight, 20);
    assert_true(s.priority == TenantPriority::latency);
    assert_int_equal(s.share_permille, 300);
    // No rule: weight 100, batch, no cap.
    assert_true(policy.schedule(Client{5, 5, "/y"}) == Schedule{});
    // A share out of range changes nothing.
    RuleLimits bad;
    bad.device_share = 1001;
    auto refused = policy.set(Selector::uid(1000), bad);
    assert_false(refused.has_value());
    assert_string_equal(refused.error().key.c_str(), "device_share");
    assert_int_equal(policy.schedule(Client{1000, 100, "/x"}).share_permille, 300);
    // The text forms.
    assert_int_equal(*share_of("30%"), 300);
    assert_int_equal(*share_of("0.1%"), 1);
    assert_int_equal(*share_of("100%"), 1000);
    assert_false(share_of("0.0%").has_value());
    assert_false(share_of("30.%").has_value());
    assert_false(share_of("30.55%").has_value());
    assert_false(share_of("10000%").has_value());
    assert_string_equal(share_text(300).c_str(), "30%");
    assert_string_equal(share_text(125).c_str(), "12.5%");
    assert_true(priority_of("latency") == TenantPriority::latency);
    assert_false(priority_of("Latency").has_value());
}

void set_refuses_malformed_cgroup_prefix(void**)
{
    Policy p;
    for (const char* bad : {"", "system.slice", "/system.slice/", "/a//b", "/a/../b", "/a/."}) {
        auto refused = p.set(Selector::cgroup_prefix(bad), weight_only(5));
        if (refused.has_value())
            fail_msg("cgroup prefix \"%s\" was accepted", bad);
        assert_string_equal(refused.error().key.c_str(), "cgroup");
    }
    assert_int_equal(p.rules().size(), 0);
}

void reset_removes_rule_and_reports_absence(void**)
{
    Policy p = every_kind();
    assert_true(p.reset(Selector::uid(1000)));
    assert_int_equal(p.weight(Client{1000, 100, ""}), 4);  // now the gid rule
    assert_false(p.reset(Selector::uid(1000)));
    assert_int_equal(p.rules().size(), 4);
}

void parse_size_reads_units_as_powers_of_1024(void**)
{
    assert_int_equal(*parse_size("4096"), 4096);
    assert_int_equal(*parse_size("2G"), 2147483648ull);
    assert_int_equal(*parse_size("512M"), 536870912ull);
    assert_int_equal(*parse_size("3K"), 3072);
    assert_int_equal(*parse_size("1T"), 1ull << 40);
    assert_int_equal(*parse_size("2GiB"), 2147483648ull);
    assert_int_equal(*parse_size("0"), 0);
}

void parse_size_refuses_what_is_not_a_size(void**)
{
    for (const char* bad : {"", "G", "2X", "-1", "1.5G", "2 G", "2g", "2GB", "2Gi", " 2G",
                            "18446744073709551616", "16777216T"})
        if (parse_size(bad).has_value())
            fail_msg("\"%s\" was accepted as a size", bad);
    assert_int_equal(*parse_size("16777215T"), 16777215ull << 40);
}

void format_size_picks_largest_exact_unit(void**)
{
    assert_string_equal(format_size(2ull << 30).c_str(), "2G");
    assert_string_equal(format_size(1536ull << 20).c_str(), "1536M");
    assert_string_equal(format_size(1000).c_str(), "1000");
    assert_string_equal(format_size(0).c_str(), "0");
    assert_string_equal(format_size(all32).c_str(), "4294967295");
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(uid_rule_beats_gid_cgroup_and_default),
        cmocka_unit_test(gid_rule_beats_cgroup_and_default),
        cmocka_unit_test(longest_cgroup_prefix_wins),
        cmocka_unit_test(cgroup_prefix_matches_whole_components_only),
        cmocka_unit_test(root_cgroup_prefix_selects_every_known_cgroup),
        cmocka_unit_test(default_rule_applies_when_nothing_else_matches),
        cmocka_unit_test(no_rule_grants_device_limits_and_default_weight),
        cmocka_unit_test(rule_keys_are_tenant_totals_and_context_caps_narrow_each_context),
        cmocka_unit_test(zero_in_a_rule_allows_none),
        cmocka_unit_test(set_merges_changes_into_existing_rule),
        cmocka_unit_test(set_refuses_weight_out_of_range_and_changes_nothing),
        cmocka_unit_test(schedule_names_weight_priority_and_share),
        cmocka_unit_test(set_refuses_malformed_cgroup_prefix),
        cmocka_unit_test(reset_removes_rule_and_reports_absence),
        cmocka_unit_test(parse_size_reads_units_as_powers_of_1024),
        cmocka_unit_test(parse_size_refuses_what_is_not_a_size),
        cmocka_unit_test(format_size_picks_largest_exact_unit),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
