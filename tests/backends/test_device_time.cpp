// test_device_time.cpp - the device-time scheduler (backends/sched,
// device_time.hpp) driven as a device's dispatcher would, on a simulated
// device whose clock the test moves: every assertion is on what the
// scheduler chose and charged, never on wall time.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "vaccel/sched/device_time.hpp"

#include "cmocka.hpp"

using namespace std::chrono_literals;
using vaccel::sched::DeviceTime;
using vaccel::sched::FlowId;
using vaccel::sched::FlowPolicy;
using vaccel::sched::Priority;

namespace {

using Clock = DeviceTime::Clock;

// A device that runs one item at a time: each flow's items take `cost`
// each; flows listed in `backlogged` always have `depth` items ready.
struct Simulation {
    DeviceTime scheduler;
    Clock::time_point now{};
    std::map<FlowId, std::chrono::nanoseconds> cost;
    std::map<FlowId, std::chrono::nanoseconds> served;
    std::vector<FlowId> order;  // flows in the order their items started
    std::chrono::nanoseconds idle{0};

    void add(FlowId id, FlowPolicy policy, std::chrono::nanoseconds item, std::uint32_t depth)
    {
        scheduler.set_policy(id, policy);
        cost[id] = item;
        scheduler.ready(id, now, depth);
    }

    // Runs until `until`, refilling backlogged flows so each keeps `depth`
    // ready items.
    void run(Clock::time_point until, bool refill = true)
    {
        while (now < until) {
            const DeviceTime::Choice choice = scheduler.next(now);
            if (!choice.flow) {
                if (!choice.held) return;  // nothing ready at all
                idle += std::min(*choice.held, until) - now;
                now = std::min(*choice.held, until);
                continue;
            }
            const FlowId id = *choice.flow;
            order.push_back(id);
            now += cost[id];
            served[id] += cost[id];
            scheduler.charge(id, cost[id], now);
            if (refill) scheduler.ready(id, now);
        }
    }
};

double ratio(std::chrono::nanoseconds a, std::chrono::nanoseconds b)
{
    return static_cast<double>(a.count()) / static_cast<double>(b.count());
}

void weights_share_measured_time_not_items(void**)
{
    // Weight 100 with 250 us items against weight 300 with 60 us items:
    // time, not the number of items, goes 1:3.
    Simulation sim;
    sim.add(1, {100, Priority::batch, 1000}, 250us, 4);
    sim.add(2, {300, Priority::batch, 1000}, 60us, 4);
    sim.run(Clock::time_point{} + 2s);
    const double r = ratio(sim.served[2], sim.served[1]);
    print_message("weights 100:300 served %.3f ms : %.3f ms (ratio %.3f)\n",
                  sim.served[1].count() / 1e6, sim.served[2].count() / 1e6, r);
    assert_true(r > 3.0 * 0.9 && r < 3.0 * 1.1);
    // The account says the same.
    const auto one = sim.scheduler.account(1, sim.now);
    assert_true(one.has_value());
    assert_int_equal(one->charged.count(), sim.served[1].count());
    assert_int_equal(one->policy.weight, 100);
}

void equal_weights_alternate_by_time(void**)
{
    Simulation sim;
    sim.add(1, {}, 1ms, 2);
    sim.add(2, {}, 100us, 2);
    sim.run(Clock::time_point{} + 1s);
    const double r = ratio(sim.served[1], sim.served[2]);
    assert_true(r > 0.9 && r < 1.1);
}

void a_latency_flow_goes_before_queued_batch_work(void**)
{
    Simulation sim;
    sim.add(1, {100, Priority::batch, 1000}, 250us, 8);
    sim.add(2, {900, Priority::batch, 1000}, 250us, 8);
    sim.run(Clock::time_point{} + 10ms);
    // A latency tenant of the lowest weight submits one item: it is the
    // very next to start, ahead of 16 queued batch items.
    sim.add(3, {1, Priority::latency, 1000}, 40us, 1);
    const DeviceTime::Choice next = sim.scheduler.next(sim.now);
    assert_true(next.flow.has_value());
    assert_int_equal(*next.flow, 3);
    sim.scheduler.charge(3, 40us, sim.now + 40us);
    // It left with its work: batch flows go on.
    const DeviceTime::Choice after = sim.scheduler.next(sim.now + 40us);
    assert_true(after.flow.has_value());
    assert_true(*after.flow == 1 || *after.flow == 2);
    const auto latency = sim.scheduler.account(3, sim.now + 40us);
    assert_int_equal(latency->in_flight, 0);
    assert_int_equal(latency->ready, 0);
}

void latency_flows_share_by_weight_among_themselves(void**)
{
    Simulation sim;
    sim.add(1, {100, Priority::latency, 1000}, 100us, 4);
    sim.add(2, {200, Priority::latency, 1000}, 100us, 4);
    sim.add(3, {1000, Priority::batch, 1000}, 100us, 4);
    sim.run(Clock::time_point{} + 600ms);
    const double r = ratio(sim.served[2], sim.served[1]);
    assert_true(r > 2.0 * 0.9 && r < 2.0 * 1.1);
    // Flooding latency flows leave batch nothing (the operator's grant).
    assert_int_equal(sim.served[3].count(), 0);
}

void a_share_cap_holds_even_on_an_idle_device(void**)
{
    Simulation sim;
    sim.add(1, {100, Priority::batch, 300}, 250us, 4);
    sim.run(Clock::time_point{} + 10s);
    const double share = ratio(sim.served[1], sim.now - Clock::time_point{});
    print_message("capped at 30%%: served %.1f%% of 10 s, idle %.1f%%\n", 100 * share,
                  100 * ratio(sim.idle, sim.now - Clock::time_point{}));
    assert_true(share > 0.25 && share < 0.35);
    // In every 1 s window after the first, the charged time is within one
    // item of the cap.
    const auto account = sim.scheduler.account(1, sim.now);
    assert_true(account->charged_in_window <= 300ms + 250us);
    assert_true(account->charged_in_window >= 300ms - 250us);
    // Held: next() names when the hold lapses.
    const DeviceTime::Choice held = sim.scheduler.next(sim.now);
    if (!held.flow) {
        assert_true(held.held.has_value());
        assert_true(*held.held > sim.now);
    }
}

void a_capped_flow_leaves_the_rest_to_others(void**)
{
    Simulation sim;
    sim.add(1, {1000, Priority::batch, 300}, 250us, 4);
    sim.add(2, {1, Priority::batch, 1000}, 250us, 4);
    sim.run(Clock::time_point{} + 5s);
    const double share = ratio(sim.served[1], sim.now - Clock::time_point{});
    assert_true(share > 0.25 && share < 0.35);
    assert_int_equal(sim.idle.count(), 0);  // the uncapped flow fills the device
}

void debts_are_paid_and_idle_credit_is_not_banked(void**)
{
    // A flow whose one item overdraws its quantum a hundredfold waits its
    // debt out against a flow of equal weight, even across going idle.
    Simulation sim;
    sim.add(1, {}, 100ms, 1);
    sim.add(2, {}, 1ms, 1);
    sim.run(Clock::time_point{} + 101ms, false);
    assert_int_equal(sim.served[1].count(), std::chrono::nanoseconds(100ms).count());
    // Both idle now; flow 1 still owes about 99 ms.
    const auto owed = sim.scheduler.account(1, sim.now);
    assert_true(owed->deficit_ns < -90'000'000);
    sim.served.clear();
    sim.scheduler.ready(1, sim.now, 4);
    sim.scheduler.ready(2, sim.now, 4);
    sim.run(sim.now + 100ms);
    // Flow 2 had the device while flow 1 paid back.
    assert_true(sim.served[2] >= 90ms);
    // A long-idle flow with positive credit does not keep it.
    DeviceTime fresh;
    fresh.set_policy(7, {});
    fresh.ready(7, Clock::time_point{});
    const auto choice = fresh.next(Clock::time_point{});
    assert_int_equal(*choice.flow, 7);
    fresh.charge(7, 1us, Clock::time_point{} + 1us);  // credited 1 ms, used 1 us
    assert_int_equal(fresh.account(7, Clock::time_point{} + 1s)->deficit_ns, 0);
}

void policies_are_clamped_and_flows_forgotten_only_when_idle(void**)
{
    DeviceTime s;
    s.set_policy(1, {0, Priority::batch, 0});
    auto a = s.account(1, Clock::time_point{});
    assert_int_equal(a->policy.weight, 1);
    assert_int_equal(a->policy.share_permille, 1);
    s.set_policy(1, {5000, Priority::batch, 5000});
    a = s.account(1, Clock::time_point{});
    assert_int_equal(a->policy.weight, 1000);
    assert_int_equal(a->policy.share_permille, 1000);
    s.ready(1, Clock::time_point{}, 2);
    s.forget(1);
    assert_true(s.account(1, Clock::time_point{}).has_value());
    s.withdraw(1, 2);
    s.forget(1);
    assert_false(s.account(1, Clock::time_point{}).has_value());
    // Nothing ready: no flow and no hold.
    const auto none = s.next(Clock::time_point{});
    assert_false(none.flow.has_value());
    assert_false(none.held.has_value());
    // A priority change while queued moves the flow to the other ring.
    s.set_policy(2, {});
    s.set_policy(3, {});
    s.ready(2, Clock::time_point{});
    s.ready(3, Clock::time_point{});
    s.set_policy(3, {100, Priority::latency, 1000});
    assert_int_equal(*s.next(Clock::time_point{}).flow, 3);
}


// A latency tenant (flow 2, 40 us items) in a closed loop beside a
// backlogged batch flow (flow 1, 1 ms items) on a device that runs one item
// at a time: the tenant submits its next item `think` after its last one
// ended, its first in the middle of a batch item.
struct Beside {
    std::vector<std::chrono::nanoseconds> waits;  // each latency item's, submission to start
    std::size_t batch_between = 0;  // batch items started between latency items
    DeviceTime::Account latency;
};

Beside closed_loop_beside_batch(std::chrono::nanoseconds hold, std::chrono::nanoseconds think,
                                std::size_t items)
{
    DeviceTime::Options options;
    options.latency_hold = hold;
    DeviceTime s(options);
    s.set_policy(1, {100, Priority::batch, 1000});
    s.set_policy(2, {1000, Priority::latency, 1000});
    const std::map<FlowId, std::chrono::nanoseconds> cost{{1, 1ms}, {2, 40us}};
    Clock::time_point now{};
    s.ready(1, now, 2);
    struct Running {
        FlowId flow;
        Clock::time_point end;
    };
    std::optional<Running> running;
    constexpr Clock::time_point never = Clock::time_point::max();
    Clock::time_point submit_at = now + 300us, wake = never;
    Clock::time_point submitted{};
    std::size_t batch_since = 0;
    Beside r;
    auto dispatch = [&] {
        if (running) return;
        const DeviceTime::Choice c = s.next(now);
        wake = c.held.value_or(never);
        if (!c.flow) return;
        running = Running{*c.flow, now + cost.at(*c.flow)};
        if (*c.flow == 1) {
            ++batch_since;
            return;
        }
        if (!r.waits.empty()) r.batch_between += batch_since;
        batch_since = 0;
        r.waits.push_back(now - submitted);
    };
    dispatch();
    while (r.waits.size() < items) {
        now = std::min({running ? running->end : never, submit_at, wake});
        if (running && running->end == now) {
            s.charge(running->flow, cost.at(running->flow), now);
            if (running->flow == 1) s.ready(1, now);  // backlogged
            else submit_at = now + think;
            running.reset();
        }
        if (submit_at == now) {
            s.ready(2, now);
            submitted = now;
            submit_at = never;
        }
        dispatch();
    }
    r.latency = *s.account(2, now);
    return r;
}

void a_latency_hold_keeps_the_device_for_a_closed_loop_tenant(void**)
{
    // Without a hold, a batch item starts in every gap between the tenant's
    // items, and each item but the first waits for one (1 ms - 20 us).
    const Beside without = closed_loop_beside_batch(0us, 20us, 50);
    assert_int_equal(without.batch_between, 49);
    for (std::size_t i = 1; i < without.waits.size(); ++i)
        assert_int_equal(without.waits[i].count(), std::chrono::nanoseconds(980us).count());
    assert_int_equal(without.latency.held.count(), 0);
    // With a 200 us hold, batch work waits out each 20 us gap: only the
    // first item waits (for the batch item it arrived during).
    const Beside with = closed_loop_beside_batch(200us, 20us, 50);
    assert_int_equal(with.batch_between, 0);
    assert_int_equal(with.waits[0].count(), std::chrono::nanoseconds(700us).count());
    for (std::size_t i = 1; i < with.waits.size(); ++i) assert_int_equal(with.waits[i].count(), 0);
    // The idle gaps batch work waited through are the tenant's device time
    // (the account is read as its 50th item starts: 49 have ended).
    assert_int_equal(with.latency.held.count(), std::chrono::nanoseconds(49 * 20us).count());
    assert_int_equal(with.latency.charged.count(),
                     std::chrono::nanoseconds(49 * 40us + 49 * 20us).count());
}

void a_tenant_that_comes_back_late_is_not_held_for(void**)
{
    // The tenant comes back 1 ms after each item, past the 200 us hold:
    // the holds after its first four items lapse (each charged its 200 us,
    // batch waiting), and once four of its returns were late it is held for
    // no more, so batch work starts in every later gap at once.
    const Beside late = closed_loop_beside_batch(200us, 1ms, 20);
    assert_int_equal(late.latency.held.count(), std::chrono::nanoseconds(4 * 200us).count());
    assert_int_equal(late.batch_between, 19);
    // Its waits: behind the batch item that started when its hold lapsed
    // (200 us + 1 ms - 1 ms), then behind one started as its item ended.
    for (std::size_t i = 1; i < 5; ++i)
        assert_int_equal(late.waits[i].count(), std::chrono::nanoseconds(200us).count());
    for (std::size_t i = 5; i < late.waits.size(); ++i) assert_int_equal(late.waits[i].count(), 0);
}

void a_hold_costs_nothing_while_no_batch_work_waits_and_ends_with_its_flow(void**)
{
    DeviceTime::Options options;
    options.latency_hold = 200us;
    DeviceTime s(options);
    s.set_policy(2, {1000, Priority::latency, 1000});
    Clock::time_point now{};
    for (int i = 0; i < 10; ++i) {
        s.ready(2, now);
        assert_int_equal(*s.next(now).flow, 2);
        now += 40us;
        s.charge(2, 40us, now);
        const DeviceTime::Choice idle = s.next(now + 10us);  // nothing ready: no hold told
        assert_false(idle.flow.has_value());
        assert_false(idle.held.has_value());
        now += 50us;
    }
    assert_int_equal(s.account(2, now)->held.count(), 0);
    // Batch work arrives inside a hold: it waits...
    s.set_policy(1, {});
    s.ready(2, now);
    (void)s.next(now);
    s.charge(2, 40us, now + 40us);
    s.ready(1, now + 50us);
    const DeviceTime::Choice waits = s.next(now + 50us);
    assert_false(waits.flow.has_value());
    assert_true(*waits.held == now + 240us);
    // ...until the flow stops being a latency flow, which ends the hold.
    s.set_policy(2, {});
    assert_int_equal(*s.next(now + 60us).flow, 1);
    assert_int_equal(s.account(2, now + 60us)->held.count(), std::chrono::nanoseconds(10us).count());
}

}  // namespace

// Closed-loop tenants, as a real client is: each keeps two items out and
// submits its next only once one of them ended, after the device has already
// chosen what runs next (its thread is slower than the device's completion
// path). Were both of a tenant's items let onto the device at once, its
// work would all be there whenever the next turn is decided, the other
// tenant alone would be ready, and service would alternate whatever the
// weights. So the devices take a second item only while no other flow has
// work ready (others_ready), and weights hold.
void closed_loop_tenants_share_by_weight(void**)
{
    DeviceTime scheduler;
    scheduler.set_policy(1, {100, Priority::batch, 1000});
    scheduler.set_policy(2, {300, Priority::batch, 1000});
    scheduler.ready(1, Clock::time_point{}, 2);
    scheduler.ready(2, Clock::time_point{}, 2);
    constexpr auto cost = std::chrono::microseconds(3600);
    struct Running {
        FlowId flow;
        Clock::time_point end;
    };
    std::vector<Running> running;
    std::map<FlowId, std::chrono::nanoseconds> served;
    Clock::time_point now{};
    std::size_t doubled = 0;  // times a second item went on
    auto fill = [&] {
        while (running.size() < 2) {
            if (!running.empty() && scheduler.others_ready(running.front().flow)) break;
            const DeviceTime::Choice choice = scheduler.next(now);
            if (!choice.flow) break;
            doubled += running.empty() ? 0 : 1;
            // The one on the device ends first: the second starts after it.
            const Clock::time_point start = running.empty() ? now : running.front().end;
            running.push_back({*choice.flow, start + cost});
        }
    };
    fill();
    while (now < Clock::time_point{} + 10s) {
        auto first = std::ranges::min_element(running, {}, &Running::end);
        now = first->end;
        const FlowId flow = first->flow;
        running.erase(first);
        scheduler.charge(flow, cost, now);
        served[flow] += cost;
        fill();                 // the device goes on first
        scheduler.ready(flow, now);  // then the tenant submits again
        fill();
    }
    const double r = ratio(served[2], served[1]);
    print_message("served %.0f ms : %.0f ms (ratio %.2f), a second item %zu times\n",
                  served[1].count() / 1e6, served[2].count() / 1e6, r, doubled);
    assert_true(r > 3.0 * 0.9 && r < 3.0 * 1.1);
}

// put_back returns a started item uncharged, the flow keeping its turn;
// others_ready sees only other flows' ready items.
void an_item_put_back_keeps_its_turn_and_others_ready_sees_the_rest(void**)
{
    DeviceTime scheduler;
    const Clock::time_point now{};
    scheduler.set_policy(1, FlowPolicy{});
    scheduler.set_policy(2, FlowPolicy{});
    scheduler.ready(1, now);
    assert_false(scheduler.others_ready(1));
    assert_true(scheduler.others_ready(2));
    DeviceTime::Choice first = scheduler.next(now);
    assert_int_equal(*first.flow, 1);
    assert_false(scheduler.others_ready(2));  // started: no longer ready
    scheduler.ready(2, now);
    scheduler.put_back(1);
    assert_true(scheduler.others_ready(2));
    const auto account = scheduler.account(1, now);
    assert_int_equal(account->ready, 1);
    assert_int_equal(account->in_flight, 0);
    assert_int_equal(account->charged.count(), 0);
    // Its turn and credit are kept: it goes next, before flow 2.
    assert_int_equal(*scheduler.next(now).flow, 1);
    scheduler.put_back(3);  // unknown, or nothing in flight: no-op
    assert_false(scheduler.account(3, now).has_value());
}

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(weights_share_measured_time_not_items),
        cmocka_unit_test(equal_weights_alternate_by_time),
        cmocka_unit_test(a_latency_flow_goes_before_queued_batch_work),
        cmocka_unit_test(latency_flows_share_by_weight_among_themselves),
        cmocka_unit_test(a_share_cap_holds_even_on_an_idle_device),
        cmocka_unit_test(a_capped_flow_leaves_the_rest_to_others),
        cmocka_unit_test(debts_are_paid_and_idle_credit_is_not_banked),
        cmocka_unit_test(policies_are_clamped_and_flows_forgotten_only_when_idle),
        cmocka_unit_test(an_item_put_back_keeps_its_turn_and_others_ready_sees_the_rest),
        cmocka_unit_test(closed_loop_tenants_share_by_weight),
        cmocka_unit_test(a_latency_hold_keeps_the_device_for_a_closed_loop_tenant),
        cmocka_unit_test(a_tenant_that_comes_back_late_is_not_held_for),
        cmocka_unit_test(a_hold_costs_nothing_while_no_batch_work_waits_and_ends_with_its_flow),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
