// test_cpu_fair_queue.cpp - the CPU backend's run queue order, without threads.
//
// Owns: exact dispatch orders of the deficit round-robin run queue
// (backends/cpu/src/fair_queue.hpp) for given weights and backlogs. Each
// test plays the workers itself: pop() is a dispatch, finish() the end of
// that submission, so every order is deterministic; the clock is the test's
// own (`now`), so the headroom rule's recency is exact too. Labels are the
// context letter and the submission's number within its queue ("A1", "B3").
#include <chrono>
#include <map>
#include <string>

#include "fair_queue.hpp"
#include "objects.hpp"

#include "cmocka.hpp"

namespace {

using namespace vaccel::backend::cpu;
using namespace std::chrono_literals;
using Clock = FairQueue::Clock;

// An arbitrary origin for the test's clock.
const Clock::time_point t0 = Clock::time_point{} + 1000s;

struct Ring {
    explicit Ring(unsigned workers = 1) : queue(workers) {}

    FairQueue queue;
    std::map<const Submission*, std::string> labels;
    Clock::time_point now = t0;  // the time of every push and pop

    std::shared_ptr<Lane> lane(const std::shared_ptr<Flow>& flow)
    {
        return std::make_shared<Lane>(flow);
    }
    static std::shared_ptr<Flow> flow(std::uint32_t weight = Flow::default_weight)
    {
        auto f = std::make_shared<Flow>();
        FairQueue::set_weight(*f, weight);
        return f;
    }
    // Queues `count` submissions labelled name1..name<count> on `lane`.
    void push(const std::shared_ptr<Lane>& on, const std::string& name, int count, int first = 1)
    {
        for (int i = first; i < first + count; ++i) {
            auto submission = std::make_shared<Submission>();
            labels[submission.get()] = name + std::to_string(i);
            queue.push(on, std::move(submission), now);
        }
    }
    // One dispatch at `now` (nullopt when nothing is dispatchable); the
    // caller plays the worker and calls queue.finish(lane) later.
    std::optional<FairQueue::Dispatch> pop() { return queue.pop(now); }
    // A dispatch's label; "" for none.
    std::string label(const std::optional<FairQueue::Dispatch>& d) const
    {
        return d ? labels.at(d->submission.get()) : std::string();
    }
    // One worker: dispatches and finishes `count` submissions (all if 0),
    // returns their labels in order, space separated.
    std::string run(int count = 0)
    {
        std::string order;
        for (int n = 0; count == 0 || n < count; ++n) {
            auto next = queue.pop(now);
            if (!next) break;
            if (!order.empty()) order += ' ';
            order += labels.at(next->submission.get());
            queue.finish(next->lane);
        }
        return order;
    }
};

void equal_weights_take_one_submission_per_turn(void**)
{
    Ring ring;
    auto a = ring.lane(Ring::flow());
    auto b = ring.lane(Ring::flow());
    ring.push(a, "A", 6);
    ring.push(b, "B", 3);
    assert_string_equal(ring.run().c_str(), "A1 B1 A2 B2 A3 B3 A4 A5 A6");
    assert_false(ring.queue.has_ready());
}

void a_latency_flow_goes_before_queued_batch_work(void**)
{
    Ring ring;
    auto batch = Ring::flow(1000);
    auto latency = Ring::flow(1);  // the lowest weight: priority, not share, decides
    FairQueue::set_latency(*latency, true);
    auto a = ring.lane(batch);
    auto b = ring.lane(Ring::flow());
    auto l = ring.lane(latency);
    ring.push(a, "A", 4);
    ring.push(b, "B", 2);
    assert_string_equal(ring.run(2).c_str(), "A1 A2");
    // L queues behind six batch submissions and is the very next dispatch,
    // and each of its submissions after it, until it has none ready.
    ring.push(l, "L", 2);
    assert_string_equal(ring.run(2).c_str(), "L1 L2");
    ring.push(l, "L", 1, 3);
    assert_string_equal(ring.run().c_str(), "L3 A3 A4 B1 B2");
    // Two latency flows share by weight among themselves, still first.
    Ring two;
    auto l1 = Ring::flow(100), l2 = Ring::flow(200);
    FairQueue::set_latency(*l1, true);
    FairQueue::set_latency(*l2, true);
    auto x = two.lane(l1), y = two.lane(l2), z = two.lane(Ring::flow(1000));
    two.push(z, "Z", 2);
    two.push(x, "X", 3);
    two.push(y, "Y", 4);
    assert_string_equal(two.run().c_str(), "X1 Y1 Y2 X2 Y3 Y4 X3 Z1 Z2");
}

void a_share_cap_holds_in_charged_time_even_when_alone(void**)
{
    // One worker, a lone flow capped at 30 % whose submissions each run
    // 50 ms: over 10 s it is charged 3 s (within one submission), and the
    // run queue names when each hold lapses.
    Ring ring;
    auto capped = Ring::flow();
    FairQueue::set_share(*capped, 300);
    auto lane = ring.lane(capped);
    ring.push(lane, "C", 1000);
    const Clock::time_point end = t0 + 10s;
    Clock::duration served{0};
    int holds = 0;
    while (ring.now < end) {
        auto next = ring.pop();
        if (!next) {
            const auto until = ring.queue.held_until();
            assert_true(until.has_value());
            assert_true(*until > ring.now);
            ring.now = *until;
            ++holds;
            continue;
        }
        ring.now += 50ms;
        served += 50ms;
        ring.queue.charge(next->lane, 50ms, ring.now);
        ring.queue.finish(next->lane);
    }
    const double share = std::chrono::duration<double>(served).count() / 10.0;
    assert_true(share >= 0.295 && share <= 0.31);
    assert_true(holds > 0);
    // An uncapped flow beside it takes the rest; drain() lifts the cap.
    Ring two;
    auto c2 = Ring::flow();
    FairQueue::set_share(*c2, 300);
    auto a = two.lane(c2), b = two.lane(Ring::flow());
    two.push(a, "C", 100);
    two.push(b, "B", 100);
    int c_runs = 0;
    for (int i = 0; i < 60; ++i) {  // 3 s of 50 ms submissions
        auto next = two.pop();
        assert_true(next.has_value());  // never idle: B fills the device
        if (next->lane == a) ++c_runs;
        two.now += 50ms;
        two.queue.charge(next->lane, 50ms, two.now);
        two.queue.finish(next->lane);
    }
    assert_true(c_runs >= 17 && c_runs <= 20);  // 30 % of 60, within one
    two.queue.drain();
    std::string rest = two.run();
    assert_true(rest.find('C') != std::string::npos);
}

void weight_300_against_100_dispatches_three_to_one(void**)
{
    Ring ring;
    auto a = ring.lane(Ring::flow(300));
    auto b = ring.lane(Ring::flow(100));
    ring.push(a, "A", 9);
    ring.push(b, "B", 5);
    assert_string_equal(ring.run().c_str(),
                        "A1 A2 A3 B1 A4 A5 A6 B2 A7 A8 A9 B3 B4 B5");
}

void weight_150_carries_its_remainder_to_the_next_turn(void**)
{
    Ring ring;
    auto a = ring.lane(Ring::flow(150));
    auto b = ring.lane(Ring::flow(100));
    ring.push(a, "A", 6);
    ring.push(b, "B", 4);
    // Credits 150 (1, 50 left), 200 (2), 150 (1, 50 left), 200 (2).
    assert_string_equal(ring.run().c_str(), "A1 B1 A2 A3 B2 A4 B3 A5 A6 B4");
}

void weight_1_is_served_once_per_hundred_turns_of_weight_100(void**)
{
    Ring ring;
    auto a = ring.lane(Ring::flow(1));
    auto b = ring.lane(Ring::flow(100));
    ring.push(a, "A", 2);
    ring.push(b, "B", 300);
    // A's deficit grows by 1 per turn: its first dispatch comes on its 100th
    // turn, after B's 99; from then on one in every 101 dispatches is A's
    // (1 / (1 + 100), its share by weight).
    std::string expected;
    for (int i = 1; i <= 99; ++i) expected += "B" + std::to_string(i) + " ";
    expected += "A1";
    for (int i = 100; i <= 199; ++i) expected += " B" + std::to_string(i);
    expected += " A2";
    assert_string_equal(ring.run(201).c_str(), expected.c_str());
}

void a_context_joining_late_gets_a_turn_in_the_current_round(void**)
{
    Ring ring;
    auto a = ring.lane(Ring::flow());
    auto b = ring.lane(Ring::flow());
    auto c = ring.lane(Ring::flow());
    ring.push(a, "A", 5);
    ring.push(b, "B", 5);
    assert_string_equal(ring.run(1).c_str(), "A1");
    ring.push(c, "C", 2);
    assert_string_equal(ring.run().c_str(), "B1 C1 A2 B2 C2 A3 B3 A4 B4 A5 B5");
}

void a_context_whose_work_ran_out_starts_again_without_credit(void**)
{
    Ring ring;
    auto a_flow = Ring::flow(300);
    auto a = ring.lane(a_flow);
    auto b = ring.lane(Ring::flow());
    ring.push(a, "A", 1);
    assert_string_equal(ring.run().c_str(), "A1");  // 200 of its 300 left unused
    assert_false(a_flow->in_ring);
    assert_int_equal(a_flow->deficit, 0);
    ring.push(b, "B", 3);
    ring.push(a, "A", 4, 2);
    // With the 200 kept, A would dispatch A2..A5 in one turn.
    assert_string_equal(ring.run().c_str(), "B1 A2 A3 A4 B2 A5 B3");
}

void queues_of_one_context_take_turns_and_each_stays_in_order(void**)
{
    Ring ring;
    auto a_flow = Ring::flow();
    auto a1 = ring.lane(a_flow);
    auto a2 = ring.lane(a_flow);
    auto b = ring.lane(Ring::flow());
    ring.push(a1, "P", 3);  // context A, queue P
    ring.push(a2, "Q", 2);  // context A, queue Q
    ring.push(b, "B", 4);
    assert_string_equal(ring.run().c_str(), "P1 B1 Q1 B2 P2 B3 Q2 B4 P3");
}

void a_queue_is_never_dispatched_twice_at_once(void**)
{
    Ring ring;
    auto a = ring.lane(Ring::flow());
    auto b = ring.lane(Ring::flow());
    ring.push(a, "A", 3);
    ring.push(b, "B", 3);
    // Two workers: each keeps its lane until finish().
    auto first = ring.pop();
    auto second = ring.pop();
    assert_non_null(first ? first->submission.get() : nullptr);
    assert_non_null(second ? second->submission.get() : nullptr);
    assert_string_equal(ring.labels.at(first->submission.get()).c_str(), "A1");
    assert_string_equal(ring.labels.at(second->submission.get()).c_str(), "B1");
    assert_false(ring.queue.has_ready());
    assert_false(ring.pop().has_value());
    ring.queue.finish(first->lane);
    assert_true(ring.queue.has_ready());
    auto third = ring.pop();
    assert_string_equal(ring.labels.at(third->submission.get()).c_str(), "A2");
    assert_false(ring.pop().has_value());  // B1 still runs: B2 waits for it
    ring.queue.finish(second->lane);
    ring.queue.finish(third->lane);
    assert_string_equal(ring.run().c_str(), "B2 A3 B3");
}

void a_busy_context_keeps_its_place_while_another_is_served(void**)
{
    Ring ring;
    auto a = ring.lane(Ring::flow(300));
    auto b = ring.lane(Ring::flow());
    ring.push(a, "A", 4);
    ring.push(b, "B", 2);
    auto running_a = ring.pop();  // A1, A's lane now runs
    assert_string_equal(ring.labels.at(running_a->submission.get()).c_str(), "A1");
    // A has work but no ready lane: skipped, its 200 left untouched.
    assert_string_equal(ring.run(1).c_str(), "B1");
    ring.queue.finish(running_a->lane);
    // A's turn goes on (A2 A3); B1 was B's turn of this round, so the next
    // round starts with A (A4) before B2.
    assert_string_equal(ring.run().c_str(), "A2 A3 A4 B2");
}

// Headroom (two workers): context A floods two queues P and Q; context B
// submitted at t0, so it stays active until t0 + headroom_window.
struct Headroom {
    Ring ring{2};
    std::shared_ptr<Flow> a_flow = Ring::flow();
    std::shared_ptr<Lane> p = ring.lane(a_flow);
    std::shared_ptr<Lane> q = ring.lane(a_flow);
    std::shared_ptr<Lane> b = ring.lane(Ring::flow());

    Headroom()
    {
        ring.push(b, "B", 1);
        assert_string_equal(ring.run().c_str(), "B1");  // B active at t0, now idle
        ring.now = t0 + 1ms;
        ring.push(p, "P", 3);
        ring.push(q, "Q", 3);
    }
};

void a_flooding_context_leaves_one_worker_free_while_another_is_active(void**)
{
    Headroom h;
    auto first = h.ring.pop();
    assert_string_equal(h.ring.label(first).c_str(), "P1");
    // Q1 is ready, but dispatching it would take the last worker.
    assert_true(h.ring.queue.has_ready());
    assert_false(h.ring.pop().has_value());
    assert_int_equal(h.a_flow->running, 1);
    assert_true(h.ring.queue.held_until() == t0 + FairQueue::headroom_window);
    // Still held just before the window ends.
    h.ring.now = t0 + FairQueue::headroom_window - 1ns;
    assert_false(h.ring.pop().has_value());
    // Each of A's submissions ending lets the next in, one at a time, in
    // the order its queues take turns.
    std::string order = h.ring.label(first);
    auto running = first;
    for (int n = 0; n < 5; ++n) {
        h.ring.queue.finish(running->lane);
        running = h.ring.pop();
        order += ' ' + h.ring.label(running);
        assert_int_equal(h.a_flow->running, 1);
        assert_false(h.ring.pop().has_value());
    }
    assert_string_equal(order.c_str(), "P1 Q1 P2 Q2 P3 Q3");
}

void an_active_context_is_dispatched_at_once_to_the_free_worker(void**)
{
    Headroom h;
    h.ring.now = t0 + 10ms;
    auto a_running = h.ring.pop();
    assert_string_equal(h.ring.label(a_running).c_str(), "P1");
    h.ring.push(h.b, "B", 1, 2);
    // B2 goes to the worker A left free, while P1 still runs.
    auto b_running = h.ring.pop();
    assert_string_equal(h.ring.label(b_running).c_str(), "B2");
    assert_false(h.ring.pop().has_value());  // both workers busy
    // B's new submission restarted its window: A stays at one worker.
    h.ring.queue.finish(b_running->lane);
    h.ring.now = t0 + 10ms + FairQueue::headroom_window - 1ns;
    assert_false(h.ring.pop().has_value());
    assert_true(h.ring.queue.held_until() == t0 + 10ms + FairQueue::headroom_window);
}

void a_flooding_context_uses_every_worker_once_the_other_is_idle_past_the_window(void**)
{
    Headroom h;
    auto first = h.ring.pop();
    assert_false(h.ring.pop().has_value());
    h.ring.now = t0 + FairQueue::headroom_window;  // B idle for the whole window
    auto second = h.ring.pop();
    assert_string_equal(h.ring.label(first).c_str(), "P1");
    assert_string_equal(h.ring.label(second).c_str(), "Q1");
    assert_int_equal(h.a_flow->running, 2);
    assert_false(h.ring.queue.held_until().has_value());
}

void a_lone_context_uses_every_worker(void**)
{
    Ring ring{2};
    auto flow = Ring::flow();
    auto p = ring.lane(flow);
    auto q = ring.lane(flow);
    ring.push(p, "P", 2);
    ring.push(q, "Q", 2);
    assert_string_equal(ring.label(ring.pop()).c_str(), "P1");
    assert_string_equal(ring.label(ring.pop()).c_str(), "Q1");
    assert_int_equal(flow->running, 2);
}

void a_held_context_keeps_its_place_and_deficit(void**)
{
    Ring ring{2};
    auto a_flow = Ring::flow(300);
    auto p = ring.lane(a_flow);
    auto q = ring.lane(a_flow);
    auto b = ring.lane(Ring::flow());
    ring.push(p, "P", 3);
    ring.push(q, "Q", 3);
    ring.push(b, "B", 2);
    auto p1 = ring.pop();  // A's visit: credited 300, 200 left
    assert_string_equal(ring.label(p1).c_str(), "P1");
    // A is held (B is active); B is served without ending A's visit.
    auto b1 = ring.pop();
    assert_string_equal(ring.label(b1).c_str(), "B1");
    assert_int_equal(a_flow->deficit, 200);
    ring.queue.finish(b1->lane);
    ring.queue.finish(p1->lane);
    // A's visit goes on with its 200 (Q1 P2); B1 was B's turn of this
    // round, so the next round starts with A (Q2 P3 Q3) before B2.
    assert_string_equal(ring.run().c_str(), "Q1 P2 Q2 P3 Q3 B2");
}

void with_one_worker_headroom_never_holds_a_context_back(void**)
{
    Ring ring{1};
    auto a_flow = Ring::flow();
    auto p = ring.lane(a_flow);
    auto b = ring.lane(Ring::flow());
    ring.push(b, "B", 1);
    ring.push(p, "P", 2);
    // A runs nothing, which is already workers - 1 = 0: still dispatched.
    assert_string_equal(ring.run().c_str(), "B1 P1 P2");
}

void weights_are_clamped_to_1_through_1000(void**)
{
    Flow flow;
    assert_int_equal(flow.weight, 100);
    FairQueue::set_weight(flow, 0);
    assert_int_equal(flow.weight, 1);
    FairQueue::set_weight(flow, 5000);
    assert_int_equal(flow.weight, 1000);
    FairQueue::set_weight(flow, 250);
    assert_int_equal(flow.weight, 250);
}

// claim() (the inline rule) takes a worker's place only when nothing waits
// for one: not while another flow's lane is ready, not while every worker
// runs, not while the lane itself waits or runs, not past a share cap; a
// claimed lane runs like a popped one (finish() ends it, and work pushed
// meanwhile waits for a worker).
void a_claim_never_passes_waiting_work(void**)
{
    Ring r(2);
    auto a = Ring::flow(), b = Ring::flow();
    auto la = r.lane(a), lb = r.lane(b);
    assert_true(r.queue.claim(la, r.now));  // idle device
    r.push(la, "A", 1);                      // arrives while the claim runs
    assert_false(r.queue.claim(la, r.now));  // the lane is the caller's
    assert_true(r.queue.claim(lb, r.now));   // the second worker's place
    assert_true(r.queue.finish(la));         // A1 waited: a worker takes it
    assert_false(r.queue.finish(lb));
    assert_false(r.queue.claim(lb, r.now));  // A1 is ready: nobody passes it
    auto d = r.pop();
    assert_string_equal(r.label(d).c_str(), "A1");
    assert_true(r.queue.claim(lb, r.now));   // A1 runs, one place is left
    auto lc = r.lane(Ring::flow());
    assert_false(r.queue.claim(lc, r.now));  // both places taken
    r.queue.finish(d->lane);
    assert_false(r.queue.finish(lb));
    // A 10% cap, charged its whole window already.
    auto capped = Ring::flow();
    FairQueue::set_share(*capped, 100);
    auto lcap = r.lane(capped);
    r.queue.charge(lcap, 1s, r.now);
    assert_false(r.queue.claim(lcap, r.now));
    assert_true(r.queue.claim(lcap, r.now + 2s));  // the charge left the window
    assert_false(r.queue.finish(lcap));
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(equal_weights_take_one_submission_per_turn),
        cmocka_unit_test(a_latency_flow_goes_before_queued_batch_work),
        cmocka_unit_test(a_share_cap_holds_in_charged_time_even_when_alone),
        cmocka_unit_test(weight_300_against_100_dispatches_three_to_one),
        cmocka_unit_test(weight_150_carries_its_remainder_to_the_next_turn),
        cmocka_unit_test(weight_1_is_served_once_per_hundred_turns_of_weight_100),
        cmocka_unit_test(a_context_joining_late_gets_a_turn_in_the_current_round),
        cmocka_unit_test(a_context_whose_work_ran_out_starts_again_without_credit),
        cmocka_unit_test(queues_of_one_context_take_turns_and_each_stays_in_order),
        cmocka_unit_test(a_queue_is_never_dispatched_twice_at_once),
        cmocka_unit_test(a_busy_context_keeps_its_place_while_another_is_served),
        cmocka_unit_test(a_flooding_context_leaves_one_worker_free_while_another_is_active),
        cmocka_unit_test(an_active_context_is_dispatched_at_once_to_the_free_worker),
        cmocka_unit_test(a_flooding_context_uses_every_worker_once_the_other_is_idle_past_the_window),
        cmocka_unit_test(a_lone_context_uses_every_worker),
        cmocka_unit_test(a_held_context_keeps_its_place_and_deficit),
        cmocka_unit_test(with_one_worker_headroom_never_holds_a_context_back),
        cmocka_unit_test(weights_are_clamped_to_1_through_1000),
        cmocka_unit_test(a_claim_never_passes_waiting_work),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
