// test_admin.cpp - vaccelctl's admin documents and tables
// (tools/vaccelctl/src/admin_documents, admin_report).
//
// Specifies: the size grammar of --memory, the request documents of
// `limits set|reset` (exact JSON), their refusals, and the aligned tables of
// `sessions` and `limits get`.
#include "admin_documents.hpp"
#include "admin_report.hpp"

#include "cmocka.hpp"

using namespace vaccel::ctl;

namespace {

void parse_size_reads_binary_multipliers(void**)
{
    assert_int_equal(*parse_size("4096"), 4096);
    assert_int_equal(*parse_size("512M"), 512ull << 20);
    assert_int_equal(*parse_size("2G"), 2ull << 30);
    assert_int_equal(*parse_size("2g"), 2ull << 30);
    assert_int_equal(*parse_size("2GiB"), 2ull << 30);
    assert_int_equal(*parse_size("1T"), 1ull << 40);
    assert_int_equal(*parse_size("64K"), 65536);
    assert_int_equal(*parse_size("0"), 0);
}

void parse_size_refuses_what_is_not_a_size(void**)
{
    assert_false(parse_size("").has_value());
    assert_false(parse_size("G").has_value());
    assert_false(parse_size("2.5G").has_value());
    assert_false(parse_size("-1").has_value());
    assert_false(parse_size("2 G").has_value());
    assert_false(parse_size("2X").has_value());
    assert_false(parse_size("2GB2").has_value());
    assert_false(parse_size("99999999999999999999").has_value());
    assert_false(parse_size("17179869184G").has_value());  // 2^34 GiB overflows
}

void limits_set_request_carries_only_the_values_given(void**)
{
    RuleSelector selector;
    selector.uid = 1000;
    LimitValues values;
    values.memory = "2G";
    values.contexts = 4;
    values.events = 64;
    auto request = limits_set_request(selector, values);
    assert_true(request.has_value());
    assert_string_equal(request->dump().c_str(),
                        "{\"selector\":{\"uid\":1000},\"limits\":{\"contexts\":4,"
                        "\"memory_bytes\":2147483648,\"events\":64}}");
    LimitValues schedule;
    schedule.priority = "latency";
    schedule.device_share = "30%";
    assert_string_equal(limits_set_request(selector, schedule)->dump().c_str(),
                        "{\"selector\":{\"uid\":1000},\"limits\":{\"priority\":\"latency\","
                        "\"device_share\":\"30%\"}}");
}

void limits_set_request_names_every_selector_kind(void**)
{
    LimitValues values;
    values.buffers = 1;
    RuleSelector gid;
    gid.gid = 27;
    assert_string_equal(limits_set_request(gid, values)->dump().c_str(),
                        "{\"selector\":{\"gid\":27},\"limits\":{\"buffers\":1}}");
    RuleSelector cgroup;
    cgroup.cgroup = "/system.slice/a.service";
    assert_string_equal(limits_set_request(cgroup, values)->dump().c_str(),
                        "{\"selector\":{\"cgroup\":\"/system.slice/a.service\"},"
                        "\"limits\":{\"buffers\":1}}");
    RuleSelector fallback;
    fallback.default_rule = true;
    assert_string_equal(limits_set_request(fallback, values)->dump().c_str(),
                        "{\"selector\":{\"default\":true},\"limits\":{\"buffers\":1}}");
}

void limits_set_refuses_two_selectors_or_none(void**)
{
    LimitValues values;
    values.buffers = 1;
    RuleSelector two;
    two.uid = 1;
    two.default_rule = true;
    auto refused = limits_set_request(two, values);
    assert_false(refused.has_value());
    assert_contains(refused.error().message, "exactly one selector, 2 given");
    refused = limits_set_request(RuleSelector{}, values);
    assert_false(refused.has_value());
    assert_contains(refused.error().message, "exactly one selector, 0 given");
}

void limits_set_refuses_no_values_bad_size_weight_and_cgroup(void**)
{
    RuleSelector selector;
    selector.uid = 0;
    auto refused = limits_set_request(selector, LimitValues{});
    assert_false(refused.has_value());
    assert_contains(refused.error().message, "needs at least one value");

    LimitValues memory;
    memory.memory = "lots";
    refused = limits_set_request(selector, memory);
    assert_false(refused.has_value());
    assert_contains(refused.error().message, "--memory lots is not a size");

    LimitValues weight;
    weight.weight = 0;
    refused = limits_set_request(selector, weight);
    assert_false(refused.has_value());
    assert_contains(refused.error().message, "--weight 0 is outside 1..1000");

    RuleSelector relative;
    relative.cgroup = "system.slice";
    LimitValues buffers;
    buffers.buffers = 2;
    refused = limits_set_request(relative, buffers);
    assert_false(refused.has_value());
    assert_contains(refused.error().message, "starting with '/'");
}

void limits_reset_request_is_the_selector_alone(void**)
{
    RuleSelector selector;
    selector.uid = 0;
    assert_string_equal(limits_reset_request(selector)->dump().c_str(),
                        "{\"selector\":{\"uid\":0}}");
    assert_false(limits_reset_request(RuleSelector{}).has_value());
}

void selector_text_reads_like_the_daemon_rule_names(void**)
{
    assert_string_equal(selector_text(nlohmann::json::parse(R"({"uid":1000})")).c_str(),
                        "uid:1000");
    assert_string_equal(selector_text(nlohmann::json::parse(R"({"gid":5})")).c_str(), "gid:5");
    assert_string_equal(selector_text(nlohmann::json::parse(R"({"cgroup":"/a/b"})")).c_str(),
                        "cgroup:/a/b");
    assert_string_equal(selector_text(nlohmann::json::parse(R"({"default":true})")).c_str(),
                        "default");
}

void sessions_table_aligns_columns_with_human_sizes(void**)
{
    const auto doc = nlohmann::json::parse(R"({"sessions":[
      {"id":1,"pid":4242,"uid":1000,"gid":1000,"cgroup":"/user.slice/a","tenant":"uid:1000",
       "rule":"default",
       "weight":100,"contexts":1,"buffers":3,"memory_bytes":3145728,"programs":1,"queues":1,
       "gates":0,"events_in_flight":0,"submissions":200,"errors":0,
       "device_time":[{"device":0,"charged_ns":1500000,"held_ns":250000,"share":0.25},
                      {"device":1,"charged_ns":0,"held_ns":0,"share":0.0}]},
      {"id":12,"pid":7,"uid":0,"gid":0,"cgroup":"/","tenant":"cgroup:/","rule":"cgroup:/",
       "weight":100,"contexts":2,
       "buffers":10,"memory_bytes":512,"programs":2,"queues":2,"gates":3,"events_in_flight":4,
       "submissions":12345,"errors":3,"device_time":[]}]})");
    assert_string_equal(
        sessions_text(doc).c_str(),
        "id   pid   uid  tenant    cgroup         contexts  buffers   memory  programs  gates  "
        "in-flight  submissions  errors  device-time      held  share\n"
        " 1  4242  1000  uid:1000  /user.slice/a         1        3  3.0 MiB         1      0  "
        "        0          200       0      1.50 ms  250.0 µs  0:25.0%\n"
        "12     7     0  cgroup:/  /                     2       10    512 B         2      3  "
        "        4        12345       3         0 ns         -  -\n");
}

void empty_listings_say_so(void**)
{
    assert_string_equal(sessions_text(nlohmann::json::parse(R"({"sessions":[]})")).c_str(),
                        "no sessions\n");
    assert_contains(limits_text(nlohmann::json::parse(R"({"rules":[]})")), "no rules");
}

void limits_table_marks_unset_limits_with_a_dash(void**)
{
    const auto doc = nlohmann::json::parse(R"({"rules":[
      {"selector":{"default":true},"contexts":4,"memory_bytes":2147483648,"buffers":1024,
       "programs":64,"queues":16,"events":256,"gates":8,"sessions":64,"weight":100},
      {"selector":{"uid":0},"buffers":1,"context":{"memory_bytes":16777216,"queues":2}},
      {"selector":{"uid":7},"priority":"latency","device_share":"12.5%"}]})");
    assert_string_equal(
        limits_text(doc).c_str(),
        "rule     contexts   memory  buffers  programs  queues  events  gates  sessions  weight  "
        "priority  share  per-context\n"
        "default         4  2.0 GiB     1024        64      16     256      8        64     100  "
        "-         -      -\n"
        "uid:0           -        -        1         -       -       -      -         -       -  "
        "-         -      memory 16.0 MiB, queues 2\n"
        "uid:7           -        -        -         -       -       -      -         -       -  "
        "latency   12.5%  -\n");
}

void tenants_table_shows_use_against_totals_per_device(void**)
{
    const auto doc = nlohmann::json::parse(R"({"tenants":[
      {"tenant":"uid:65534","kind":"uid","name":"65534","sessions":{"open":3,"total":64},
       "devices":[{"index":0,"contexts":{"used":3,"total":4},
         "memory_bytes":{"used":62914560,"total":67108864},"buffers":{"used":1,"total":null},
         "programs":{"used":0,"total":null},"queues":{"used":0,"total":null},
         "events":{"used":0,"total":null},"gates":{"used":0,"total":null},
         "device_time_ns":2500000000,"device_held_ns":1200000,"device_share":0.305}]}]})");
    assert_string_equal(
        tenants_text(doc).c_str(),
        "tenant     sessions  device  contexts             memory  buffers  programs  queues  "
        "events  gates  device-time     held  share\n"
        "uid:65534      3/64       0       3/4  60.0 MiB/64.0 MiB        1         0       0  "
        "     0      0       2.50 s  1.20 ms  30.5%\n");
    assert_string_equal(tenants_text(nlohmann::json::parse(R"({"tenants":[]})")).c_str(),
                        "no tenants: no session is open\n");
}

// `limits mine`: who, which rule, then the caller's devices with use/total
// and each context's caps (unbounded ones left out).
void mine_shows_the_callers_rule_use_and_caps(void**)
{
    const auto doc = nlohmann::json::parse(R"({"caller":{"pid":42,"uid":1000,"gid":100,
       "cgroup":"/user.slice","container":""},"rule":"uid:1000","tenant":"uid:1000",
       "kind":"uid","name":"1000","weight":250,"priority":"latency","device_share":"30%",
       "sessions":{"open":1,"total":8},
       "devices":[{"index":1,"name":"llvmpipe","contexts":{"used":1,"total":4},
         "memory_bytes":{"used":0,"total":2147483648},"buffers":{"used":0,"total":null},
         "programs":{"used":0,"total":null},"queues":{"used":1,"total":null},
         "events":{"used":0,"total":null},"gates":{"used":0,"total":null},
         "device_time_ns":0,"device_held_ns":0,"device_share":0.0,
         "context":{"memory_bytes":67108864,"buffer_bytes":null,"buffers":16,"programs":null,
           "queues":null,"events":64,"gates":null,"bindings":null}}]})");
    assert_string_equal(
        mine_text(doc).c_str(),
        "you: uid 1000, gid 100, pid 42, cgroup /user.slice\n"
        "rule: uid:1000; tenant uid:1000; weight 250, priority latency, device share 30%\n"
        "sessions open: 1/8\n"
        "device  name      contexts       memory  buffers  programs  queues  events  gates  "
        "device-time  share  each context\n"
        "     1  llvmpipe       1/4  0 B/2.0 GiB        0         0       1       0      0  "
        "       0 ns   0.0%  memory 64.0 MiB, buffers 16, events 64\n");
    auto none = doc;
    none["devices"] = nlohmann::json::array();
    assert_true(mine_text(none).ends_with("devices: none you may use\n"));
}

void admin_document_refuses_what_is_not_the_document(void**)
{
    auto refused = admin_document("not json", "sessions", "sessions");
    assert_false(refused.has_value());
    assert_contains(refused.error().message, "answer to 'sessions' is not a JSON document");
    refused = admin_document(R"({"rules":[]})", "sessions", "sessions");
    assert_false(refused.has_value());
    assert_contains(refused.error().message, "lacks the \"sessions\" list");
    assert_true(admin_document(R"({"removed":true})", "limits reset", "").has_value());
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_size_reads_binary_multipliers),
        cmocka_unit_test(parse_size_refuses_what_is_not_a_size),
        cmocka_unit_test(limits_set_request_carries_only_the_values_given),
        cmocka_unit_test(limits_set_request_names_every_selector_kind),
        cmocka_unit_test(limits_set_refuses_two_selectors_or_none),
        cmocka_unit_test(limits_set_refuses_no_values_bad_size_weight_and_cgroup),
        cmocka_unit_test(limits_reset_request_is_the_selector_alone),
        cmocka_unit_test(selector_text_reads_like_the_daemon_rule_names),
        cmocka_unit_test(sessions_table_aligns_columns_with_human_sizes),
        cmocka_unit_test(empty_listings_say_so),
        cmocka_unit_test(limits_table_marks_unset_limits_with_a_dash),
        cmocka_unit_test(tenants_table_shows_use_against_totals_per_device),
        cmocka_unit_test(admin_document_refuses_what_is_not_the_document),
        cmocka_unit_test(mine_shows_the_callers_rule_use_and_caps),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
