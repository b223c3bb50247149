// test_session_tenants.cpp - a rule's limits are its tenant's totals across
// all its sessions (engine/tenants.hpp, ADR 0024), over a real CPU backend.
#include <atomic>
#include <barrier>
#include <thread>

#include "engine_support.hpp"
#include "vaccel/engine/tenants.hpp"

using namespace vaccel;
using namespace vaccel::test;

namespace {

Status as_status(const Result<engine::TenantSeat>& admitted)
{
    if (admitted)
        return {};
    return std::unexpected(admitted.error());
}

// Every uid is a tenant with these totals; [rule.context] caps optional.
class TotalsPolicy final : public engine::LimitPolicy {
public:
    explicit TotalsPolicy(engine::TenantTotals totals, vaccel_device_limits caps = unlimited_limits())
        : totals_(totals), caps_(caps)
    {
    }
    engine::TenantTotals totals(const engine::SessionIdentity&) const override { return totals_; }
    vaccel_device_limits limits(const engine::SessionIdentity&, std::uint32_t,
                                const vaccel_device_info& device) const override
    {
        return intersect(device.limits, caps_);
    }
    engine::TenantTotals totals_;
    vaccel_device_limits caps_;
};

engine::TenantTotals totals_with(std::uint64_t memory, std::uint32_t contexts = UINT32_MAX,
                                 std::uint64_t sessions = 16)
{
    engine::TenantTotals t{unlimited_limits(), sessions};
    t.per_device.max_memory_bytes = memory;
    t.per_device.max_contexts = contexts;
    return t;
}

struct Tenancy {
    std::shared_ptr<engine::DeviceManager> devices = cpu_devices();
    std::shared_ptr<TotalsPolicy> policy;
    engine::Tenants tenants{devices->count()};

    explicit Tenancy(std::shared_ptr<TotalsPolicy> p) : policy(std::move(p)) {}

    std::unique_ptr<engine::Session> open(uid_t uid = 1000)
    {
        engine::SessionOptions options;
        options.identity.uid = uid;
        options.identity.pid = 4242;
        options.policy = policy;
        auto seat = tenants.admit(options.identity, *policy);
        assert_true(seat.has_value());
        options.tenant = std::move(*seat);
        return std::make_unique<engine::Session>(devices, std::move(options));
    }
};

void memory_total_holds_across_sessions_of_one_tenant(void**)
{
    Tenancy t(std::make_shared<TotalsPolicy>(totals_with(64)));
    auto a = t.open();
    auto b = t.open();
    const std::uint64_t ca = make_context(*a);
    const std::uint64_t cb = make_context(*b);
    make_buffer(*a, ca, 48);
    make_buffer(*b, cb, 16);

    vaccel_buffer_alloc more = buffer_request(cb, 8);
    auto refused = call(*b, VACCEL_OP_BUFFER_ALLOC, more);
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, 64, 64);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_MEMORY_BYTES);
    assert_int_equal(VACCEL_SCOPE_KIND(refused.error().scope), VACCEL_SCOPE_UID);
    assert_int_equal(VACCEL_SCOPE_DEVICE_INDEX(refused.error().scope), 0);
    assert_int_equal(VACCEL_SCOPE_SESSIONS(refused.error().scope), 2);
    assert_string_equal(describe(refused.error()).c_str(),
                        "ResourceLimit: uid 1000 holds 64 bytes of its 64 bytes of memory on "
                        "device 0 across 2 sessions; free buffers there or raise the rule");
    assert_int_equal(more.buffer, 0);
}

void refused_reservation_changes_no_counter_at_any_level(void**)
{
    Tenancy t(std::make_shared<TotalsPolicy>(totals_with(100)));
    auto a = t.open();
    auto b = t.open();
    const std::uint64_t ca = make_context(*a);
    const std::uint64_t cb = make_context(*b);
    make_buffer(*a, ca, 90);
    const vaccel_context_limits before = context_limits(*b, cb);
    vaccel_buffer_alloc big = buffer_request(cb, 20);
    assert_false(call(*b, VACCEL_OP_BUFFER_ALLOC, big).has_value());
    const vaccel_context_limits after = context_limits(*b, cb);
    assert_memory_equal(&before, &after, sizeof before);
    // The tenant's level reports its use: 90 of 100, and b's buffers none.
    assert_int_equal(after.limits.max_memory_bytes, 100);
    assert_int_equal(after.used_memory_bytes, 90);
    const auto report = t.tenants.report();
    assert_int_equal(report.size(), 1);
    assert_int_equal(report[0].used[0][static_cast<std::size_t>(Resource::memory_bytes)], 90);
    assert_int_equal(report[0].used[0][static_cast<std::size_t>(Resource::buffers)], 1);
}

void freeing_in_one_session_makes_room_in_the_other(void**)
{
    Tenancy t(std::make_shared<TotalsPolicy>(totals_with(64)));
    auto a = t.open();
    auto b = t.open();
    const std::uint64_t ca = make_context(*a);
    const std::uint64_t cb = make_context(*b);
    const std::uint64_t held = make_buffer(*a, ca, 64);
    vaccel_buffer_alloc wanted = buffer_request(cb, 32);
    assert_false(call(*b, VACCEL_OP_BUFFER_ALLOC, wanted).has_value());
    assert_true(release(*a, VACCEL_OP_BUFFER_FREE, held).has_value());
    assert_true(call(*b, VACCEL_OP_BUFFER_ALLOC, wanted).has_value());
}

void contexts_total_counts_every_session_of_the_tenant(void**)
{
    Tenancy t(std::make_shared<TotalsPolicy>(totals_with(UINT64_MAX, 2)));
    auto a = t.open();
    auto b = t.open();
    auto c = t.open();
    make_context(*a);
    make_context(*b);
    vaccel_context_create third{};
    auto refused = call(*c, VACCEL_OP_CONTEXT_CREATE, third);
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, 2, 2);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_CONTEXTS);
    assert_int_equal(VACCEL_SCOPE_SESSIONS(refused.error().scope), 3);
    // Another tenant is not touched by this one's total.
    auto other = t.open(2000);
    make_context(*other);
}

void a_closed_session_gives_everything_back_to_its_tenant(void**)
{
    Tenancy t(std::make_shared<TotalsPolicy>(totals_with(64, 1)));
    {
        auto a = t.open();
        const std::uint64_t ca = make_context(*a);
        make_buffer(*a, ca, 64);
        const auto report = t.tenants.report();
        assert_int_equal(report.at(0).sessions, 1);
        assert_int_equal(report.at(0).used[0][static_cast<std::size_t>(Resource::contexts)], 1);
    }
    assert_int_equal(t.tenants.report().size(), 0);  // no session: no tenant
    auto b = t.open();
    const std::uint64_t cb = make_context(*b);
    make_buffer(*b, cb, 64);
}

void sessions_total_refuses_the_next_session_until_one_closes(void**)
{
    auto policy = std::make_shared<TotalsPolicy>(totals_with(UINT64_MAX, UINT32_MAX, 2));
    engine::Tenants tenants(1);
    engine::SessionIdentity who;
    who.uid = 1000;
    auto first = tenants.admit(who, *policy);
    auto second = tenants.admit(who, *policy);
    assert_true(first.has_value() && second.has_value());
    auto third = tenants.admit(who, *policy);
    assert_refused(as_status(third), Errc::resource_limit, VACCEL_D_LIMIT, 2, 2);
    assert_int_equal(third.error().limit, VACCEL_LIMIT_SESSIONS);
    assert_string_equal(describe(third.error()).c_str(),
                        "ResourceLimit: uid 1000 has 2 of its 2 sessions open; close a session "
                        "or raise the rule");
    engine::SessionIdentity other;
    other.uid = 1001;
    assert_true(tenants.admit(other, *policy).has_value());
    *first = engine::TenantSeat{};
    assert_true(tenants.admit(who, *policy).has_value());
}

void two_sessions_racing_for_the_last_bytes_get_one_success(void**)
{
    for (int round = 0; round < 50; ++round) {
        Tenancy t(std::make_shared<TotalsPolicy>(totals_with(100)));
        auto a = t.open();
        auto b = t.open();
        const std::uint64_t ca = make_context(*a);
        const std::uint64_t cb = make_context(*b);
        make_buffer(*a, ca, 40);
        std::atomic<int> wins{0};
        std::barrier start(2);
        auto racer = [&](engine::Session& s, std::uint64_t context) {
            vaccel_buffer_alloc last = buffer_request(context, 60);
            start.arrive_and_wait();
            if (call(s, VACCEL_OP_BUFFER_ALLOC, last).has_value())
                wins.fetch_add(1);
        };
        std::thread x(racer, std::ref(*a), ca);
        std::thread y(racer, std::ref(*b), cb);
        x.join();
        y.join();
        assert_int_equal(wins.load(), 1);
        assert_int_equal(
            t.tenants.report().at(0).used[0][static_cast<std::size_t>(Resource::memory_bytes)],
            100);
    }
}

void context_cap_binds_below_the_tenant_total(void**)
{
    vaccel_device_limits caps = unlimited_limits();
    caps.max_memory_bytes = 32;
    Tenancy t(std::make_shared<TotalsPolicy>(totals_with(1000), caps));
    auto a = t.open();
    const std::uint64_t ca = make_context(*a);
    make_buffer(*a, ca, 32);
    vaccel_buffer_alloc more = buffer_request(ca, 1);
    auto refused = call(*a, VACCEL_OP_BUFFER_ALLOC, more);
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, 32, 32);
    assert_int_equal(VACCEL_SCOPE_KIND(refused.error().scope), VACCEL_SCOPE_CONTEXT);
    // A second context of the tenant has its own cap and the shared total.
    const std::uint64_t cb = make_context(*a);
    make_buffer(*a, cb, 32);
    const vaccel_context_limits limits = context_limits(*a, cb);
    assert_int_equal(limits.limits.max_memory_bytes, 32);
    assert_int_equal(limits.used_memory_bytes, 32);
}

void lowered_totals_bind_the_next_reservation_after_refresh(void**)
{
    auto policy = std::make_shared<TotalsPolicy>(totals_with(1000));
    Tenancy t(policy);
    auto a = t.open();
    const std::uint64_t ca = make_context(*a);
    make_buffer(*a, ca, 100);
    policy->totals_ = totals_with(120);
    t.tenants.refresh(*policy);
    vaccel_buffer_alloc more = buffer_request(ca, 30);
    assert_refused(call(*a, VACCEL_OP_BUFFER_ALLOC, more), Errc::resource_limit, VACCEL_D_LIMIT,
                   120, 100);
    vaccel_buffer_alloc fits = buffer_request(ca, 20);
    assert_true(call(*a, VACCEL_OP_BUFFER_ALLOC, fits).has_value());
}

void device_context_limit_says_it_is_the_devices(void**)
{
    // The device's own max_contexts binds all tenants together.
    Tenancy t(std::make_shared<TotalsPolicy>(totals_with(UINT64_MAX)));
    const std::uint32_t device_max = t.devices->device(0)->info().limits.max_contexts;
    std::vector<std::unique_ptr<engine::Session>> sessions;
    for (std::uint32_t i = 0; i < device_max; ++i) {
        sessions.push_back(t.open(3000 + i % 8));
        make_context(*sessions.back());
    }
    auto late = t.open(5000);
    vaccel_context_create one{};
    auto refused = call(*late, VACCEL_OP_CONTEXT_CREATE, one);
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, device_max, device_max);
    assert_int_equal(VACCEL_SCOPE_KIND(refused.error().scope), VACCEL_SCOPE_DEVICE);
}

// Totals that differ by primary gid while the tenant stays the uid.
class ByGid final : public engine::LimitPolicy {
public:
    engine::TenantTotals totals(const engine::SessionIdentity& who) const override
    {
        return totals_with(who.gid == 1 ? 100 : 50);
    }
};

void a_tenants_totals_come_from_its_first_session_whoever_asks(void**)
{
    ByGid policy;
    engine::Tenants tenants(1);
    engine::SessionIdentity first, second;
    first.uid = second.uid = 1000;
    first.gid = 1;
    second.gid = 2;
    auto a = tenants.admit(first, policy);
    auto b = tenants.admit(second, policy);
    assert_true(a.has_value() && b.has_value());
    assert_int_equal(tenants.report().at(0).totals.per_device.max_memory_bytes, 100);
    tenants.refresh(policy);
    assert_int_equal(tenants.report().at(0).totals.per_device.max_memory_bytes, 100);
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(memory_total_holds_across_sessions_of_one_tenant),
        cmocka_unit_test(refused_reservation_changes_no_counter_at_any_level),
        cmocka_unit_test(freeing_in_one_session_makes_room_in_the_other),
        cmocka_unit_test(contexts_total_counts_every_session_of_the_tenant),
        cmocka_unit_test(a_closed_session_gives_everything_back_to_its_tenant),
        cmocka_unit_test(sessions_total_refuses_the_next_session_until_one_closes),
        cmocka_unit_test(two_sessions_racing_for_the_last_bytes_get_one_success),
        cmocka_unit_test(context_cap_binds_below_the_tenant_total),
        cmocka_unit_test(lowered_totals_bind_the_next_reservation_after_refresh),
        cmocka_unit_test(device_context_limit_says_it_is_the_devices),
        cmocka_unit_test(a_tenants_totals_come_from_its_first_session_whoever_asks),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
