// test_limits.cpp - Accounting: refusal at each limit with kind/value/use,
// check-then-commit (a failed or abandoned call changes no counter), and the
// intersection of limits.
#include "test_support.hpp"

#include <array>
#include <atomic>
#include <thread>
#include <vector>

#include "vaccel/common/limits.hpp"

using namespace vaccel;

namespace {

vaccel_device_limits sample_limits()
{
    vaccel_device_limits limits{};
    limits.max_contexts = 2;
    limits.max_buffers = 4;
    limits.max_programs = 3;
    limits.max_queues = 5;
    limits.max_events = 6;
    limits.max_gates = 7;
    limits.max_bindings = 16;
    limits.max_buffer_bytes = 1 << 20;
    limits.max_artifact_bytes = 1 << 16;
    limits.max_memory_bytes = 4096;
    return limits;
}

struct Case {
    Resource resource;
    std::uint32_t kind;
    std::uint64_t limit;
};

constexpr std::array<Case, resource_count> cases = {{
    {Resource::contexts, VACCEL_LIMIT_CONTEXTS, 2},
    {Resource::memory_bytes, VACCEL_LIMIT_MEMORY_BYTES, 4096},
    {Resource::buffers, VACCEL_LIMIT_BUFFERS, 4},
    {Resource::programs, VACCEL_LIMIT_PROGRAMS, 3},
    {Resource::queues, VACCEL_LIMIT_QUEUES, 5},
    {Resource::events, VACCEL_LIMIT_EVENTS, 6},
    {Resource::gates, VACCEL_LIMIT_GATES, 7},
}};

void each_resource_is_refused_at_its_limit_with_kind_value_and_use(void**)
{
    for (const Case& c : cases) {
        Accounting accounting(sample_limits());
        assert_int_equal(accounting.limit(c.resource), c.limit);
        assert_int_equal(limit_kind(c.resource), c.kind);
        for (std::uint64_t i = 0; i < c.limit; ++i) {
            auto charge = accounting.reserve(c.resource, 1);
            assert_ok(charge);
            charge->commit();
        }
        assert_int_equal(accounting.used(c.resource), c.limit);
        auto refused = accounting.reserve(c.resource, 1);
        assert_false(refused.has_value());
        assert_int_equal(static_cast<int>(refused.error().code), VACCEL_E_RESOURCE_LIMIT);
        assert_int_equal(refused.error().detail, VACCEL_D_LIMIT);
        assert_int_equal(refused.error().limit, c.kind);
        assert_int_equal(refused.error().arg0, c.limit);
        assert_int_equal(refused.error().arg1, c.limit);
    }
}

void failed_reserve_changes_no_counter(void**)
{
    Accounting accounting(sample_limits());
    auto charge = accounting.reserve(Resource::memory_bytes, 4000);
    assert_ok(charge);
    charge->commit();
    auto refused = accounting.reserve(Resource::memory_bytes, 97);
    assert_false(refused.has_value());
    assert_int_equal(refused.error().arg0, 4096);
    assert_int_equal(refused.error().arg1, 4000);
    assert_int_equal(accounting.used(Resource::memory_bytes), 4000);
    for (const Case& c : cases)
        if (c.resource != Resource::memory_bytes)
            assert_int_equal(accounting.used(c.resource), 0);
    assert_ok(accounting.reserve(Resource::memory_bytes, 96));  // exactly fits
}

void uncommitted_charge_rolls_back_when_dropped(void**)
{
    Accounting accounting(sample_limits());
    {
        auto charge = accounting.reserve(Resource::buffers, 3);
        assert_ok(charge);
        assert_true(charge->pending());
        assert_int_equal(accounting.used(Resource::buffers), 3);  // held while pending
    }
    assert_int_equal(accounting.used(Resource::buffers), 0);
}

void pending_charge_counts_against_other_reservations(void**)
{
    Accounting accounting(sample_limits());
    auto held = accounting.reserve(Resource::contexts, 2);
    assert_ok(held);
    assert_refused(accounting.reserve(Resource::contexts, 1), Errc::resource_limit,
                   VACCEL_D_LIMIT, 2, 2);
}

void committed_charge_stays_until_released(void**)
{
    Accounting accounting(sample_limits());
    {
        auto charge = accounting.reserve(Resource::queues, 2);
        charge->commit();
        assert_false(charge->pending());
    }
    assert_int_equal(accounting.used(Resource::queues), 2);
    accounting.release(Resource::queues, 1);
    assert_int_equal(accounting.used(Resource::queues), 1);
}

void explicit_rollback_gives_back_once(void**)
{
    Accounting accounting(sample_limits());
    auto charge = accounting.reserve(Resource::events, 4);
    charge->rollback();
    assert_int_equal(accounting.used(Resource::events), 0);
    charge->rollback();
    charge->commit();
    assert_int_equal(accounting.used(Resource::events), 0);
}

void moved_charge_rolls_back_once(void**)
{
    Accounting accounting(sample_limits());
    {
        Charge outer;
        {
            auto charge = accounting.reserve(Resource::programs, 2);
            outer = std::move(*charge);
        }
        assert_int_equal(accounting.used(Resource::programs), 2);
        assert_true(outer.pending());
        assert_int_equal(outer.amount(), 2);
    }
    assert_int_equal(accounting.used(Resource::programs), 0);
}

void release_clamps_at_zero(void**)
{
    Accounting accounting(sample_limits());
    auto charge = accounting.reserve(Resource::buffers, 1);
    charge->commit();
    accounting.release(Resource::buffers, 5);
    assert_int_equal(accounting.used(Resource::buffers), 0);
}

void reserve_near_uint64_max_does_not_wrap(void**)
{
    vaccel_device_limits limits = sample_limits();
    limits.max_memory_bytes = UINT64_MAX;
    Accounting accounting(limits);
    accounting.reserve(Resource::memory_bytes, UINT64_MAX - 1)->commit();
    assert_refused(accounting.reserve(Resource::memory_bytes, 2), Errc::resource_limit,
                   VACCEL_D_LIMIT, UINT64_MAX, UINT64_MAX - 1);
    assert_refused(accounting.reserve(Resource::memory_bytes, UINT64_MAX), Errc::resource_limit,
                   VACCEL_D_LIMIT, UINT64_MAX, UINT64_MAX - 1);
    assert_int_equal(accounting.used(Resource::memory_bytes), UINT64_MAX - 1);
    assert_ok(accounting.reserve(Resource::memory_bytes, 1));
}

void zero_limit_allows_nothing(void**)
{
    vaccel_device_limits limits = sample_limits();
    limits.max_programs = 0;
    Accounting accounting(limits);
    assert_refused(accounting.reserve(Resource::programs, 1), Errc::resource_limit,
                   VACCEL_D_LIMIT, 0, 0);
}

void lowered_limit_refuses_new_use_and_keeps_old(void**)
{
    Accounting accounting(sample_limits());
    for (int i = 0; i < 3; ++i)
        accounting.reserve(Resource::buffers, 1)->commit();
    vaccel_device_limits lower = sample_limits();
    lower.max_buffers = 1;
    accounting.set_limits(lower);
    assert_int_equal(accounting.limit(Resource::buffers), 1);
    assert_int_equal(accounting.used(Resource::buffers), 3);
    assert_refused(accounting.reserve(Resource::buffers, 1), Errc::resource_limit, VACCEL_D_LIMIT,
                   1, 3);
    assert_ok(accounting.reserve(Resource::buffers, 0));
    assert_int_equal(accounting.limits().max_buffers, 1);
}

void concurrent_reservations_never_exceed_the_limit(void**)
{
    vaccel_device_limits limits = sample_limits();
    limits.max_events = 1000;
    Accounting accounting(limits);
    std::atomic<int> granted{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 600; ++i) {
                auto charge = accounting.reserve(Resource::events, 1);
                if (charge) {
                    charge->commit();
                    granted.fetch_add(1);
                }
            }
        });
    for (auto& thread : threads)
        thread.join();
    assert_int_equal(granted.load(), 1000);
    assert_int_equal(accounting.used(Resource::events), 1000);
}

void intersect_takes_the_smaller_of_every_field(void**)
{
    vaccel_device_limits a = sample_limits();
    vaccel_device_limits b{};
    b.max_contexts = 1;
    b.max_buffers = 100;
    b.max_programs = 0;
    b.max_queues = 9;
    b.max_events = 2;
    b.max_bindings = 8;
    b.max_buffer_bytes = UINT64_MAX;
    b.max_artifact_bytes = 10;
    b.max_memory_bytes = 8192;
    vaccel_device_limits both = intersect(a, b);
    assert_int_equal(both.max_contexts, 1);
    assert_int_equal(both.max_buffers, 4);
    assert_int_equal(both.max_programs, 0);  // 0 is a real limit, not "none"
    assert_int_equal(both.max_queues, 5);
    assert_int_equal(both.max_events, 2);
    assert_int_equal(both.max_bindings, 8);
    assert_int_equal(both.max_buffer_bytes, 1 << 20);
    assert_int_equal(both.max_artifact_bytes, 10);
    assert_int_equal(both.max_memory_bytes, 4096);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_resource_is_refused_at_its_limit_with_kind_value_and_use),
        cmocka_unit_test(failed_reserve_changes_no_counter),
        cmocka_unit_test(uncommitted_charge_rolls_back_when_dropped),
        cmocka_unit_test(pending_charge_counts_against_other_reservations),
        cmocka_unit_test(committed_charge_stays_until_released),
        cmocka_unit_test(explicit_rollback_gives_back_once),
        cmocka_unit_test(moved_charge_rolls_back_once),
        cmocka_unit_test(release_clamps_at_zero),
        cmocka_unit_test(reserve_near_uint64_max_does_not_wrap),
        cmocka_unit_test(zero_limit_allows_nothing),
        cmocka_unit_test(lowered_limit_refuses_new_use_and_keeps_old),
        cmocka_unit_test(concurrent_reservations_never_exceed_the_limit),
        cmocka_unit_test(intersect_takes_the_smaller_of_every_field),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
