// fair_queue.hpp - the CPU backend's run queue: contexts served by weight.
//
// Owns: the order in which accepted submissions are handed to workers.
// Decides:
//  - Submissions of one queue (a Lane) run one after another in submission
//    order: a lane is handed to one worker at a time.
//  - Contexts (Flows) share the workers by deficit round-robin (DRR,
//    Shreedhar & Varghese 1995) over submissions. Each flow that has work is
//    in a ring. When a flow comes to the head of the ring it is credited its
//    quantum (its weight); it then dispatches submissions while its deficit
//    covers their cost, and goes to the tail when it no longer does. A flow
//    whose work is all done leaves the ring and forgets its deficit.
//  - Cost: every submission costs `submission_cost` (= the default weight,
//    100), whatever its size. The backend cannot know a submission's run
//    time before running it, and counting dispatch slots keeps the bound
//    below exact and easy to check. So a context at the default weight
//    dispatches exactly one submission per visit (plain round-robin among
//    equal weights), weight 300 three per visit, weight 150 alternately one
//    and two, weight 1 one per hundred visits.
//  - The bound: a visit of a backlogged flow ends only when its deficit is
//    below submission_cost, so when its k-th visit since it joined the ring
//    ends, flow i has dispatched exactly floor(k * w_i / 100) submissions.
//    Over any window in which a set of flows stays backlogged, flow i
//    therefore gets at least w_i / sum(w) of the dispatch slots (sum over
//    that set), short by at most one submission per flow in the ring. A
//    flooding context cannot starve another: between two consecutive visits
//    of flow i every other flow j has one visit, of at most ceil(w_j / 100)
//    dispatches; so a flow of weight >= 100 waits at most that sum between
//    its dispatches (with equal weights: one dispatch per other flow).
//  - Priority: a flow marked latency (its tenant's rule says priority =
//    "latency") is served before every other flow whenever it has a ready
//    lane that may be dispatched; latency flows share by the same DRR among
//    themselves. A running submission is never preempted, so a latency
//    submission waits at most for a worker to finish the one it runs.
//  - Share cap: a flow whose share_permille is below 1000 (its tenant's
//    device_share) is held back, place and deficit kept, while the worker
//    time charged to it (charge(): each submission's run time, measured by
//    the caller) within the last share_window reaches share_permille /
//    1000 of the window times the workers, even when no other flow has
//    work; held_until() then names the moment the hold lapses. A submission
//    is charged when it ends, so a flow overdraws by at most its
//    submissions running at that moment. drain() lifts every cap (the
//    scheduler's shutdown runs everything accepted).
//  - Flows are the engine's: every context of one tenant on the device
//    shares one flow (Backend::set_context_schedule()).
//  - Within a context, lanes with work take turns (FIFO of ready lanes).
//  - A flow whose lanes are all being run by other workers is skipped
//    without losing its place or deficit (only with more than one worker).
//  - Headroom (only with more than one worker): a flow that already runs
//    `workers - 1` submissions is skipped the same way (place and deficit
//    kept) while any OTHER flow has submitted within the last
//    `headroom_window`. A running submission is never preempted, so a
//    flood occupying every worker would make another context's small
//    submission wait for one whole running submission (a 2 ms MATMUL
//    against a 40 us ADD). With the headroom one worker stays free for
//    contexts active recently, and the latency bound for an occasional
//    context becomes one dispatch wait (the free worker taking it), not
//    one running submission. The bound holds while the other context
//    submits at least once per window; its first submission after a
//    longer idle time may still wait for one running submission.
//    Cost: with no other flow active within the window, a flood uses all
//    workers (nothing is lost for a lone user); otherwise it loses at most
//    one worker, until `headroom_window` after the others' last submission.
//    Recency is read from the `now` passed to push() and pop(), so tests
//    set the clock.
// Threading: not thread-safe; the scheduler calls it under its mutex.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <optional>

#include "fifo.hpp"

namespace vaccel::backend::cpu {

struct Submission;
struct Lane;

// One context's share of the device. Invariant: every field is guarded by
// the scheduler's mutex (the FairQueue's caller).
struct Flow {
    static constexpr std::uint32_t default_weight = 100;
    static constexpr std::uint32_t min_weight = 1;
    static constexpr std::uint32_t max_weight = 1000;

    std::uint32_t weight = default_weight;
    bool latency = false;  // served before every batch flow with work
    std::uint32_t share_permille = 1000;  // 1000: no cap
    // Run time charged within the share window, oldest first, one entry per
    // FairQueue::charge_bucket (charges that close together add up, the
    // entry taking the later time), so the window holds at most
    // share_window / charge_bucket entries and the Fifo, reserved for that
    // many, never allocates after a flow's first charge.
    Fifo<std::pair<std::chrono::steady_clock::time_point, std::chrono::steady_clock::duration>>
        charges;
    std::chrono::steady_clock::duration charged{0};  // the sum of `charges`
    std::chrono::steady_clock::duration charged_total{0};  // since the flow was made
    std::uint32_t queued = 0;  // submissions in its lanes not yet handed to a worker
    std::uint64_t deficit = 0;
    bool credited = false;      // received its quantum for the current visit
    bool in_ring = false;       // has work: ready lanes or lanes being run
    std::uint32_t running = 0;  // its lanes whose front submission a worker runs
    // Ownership: a ready lane is referenced here and by its queue; the
    // reference cycle Lane -> Flow -> Lane exists only while the lane has
    // work, and ends when its last submission is dispatched.
    Fifo<std::shared_ptr<Lane>> ready;
    std::list<std::shared_ptr<Flow>>::iterator position{};  // valid while in_ring
};

// The FIFO of one queue. Invariant: guarded by the scheduler's mutex;
// `scheduled` is true while the lane is in its flow's ready list or a
// worker runs its front submission, so one queue runs in order.
struct Lane {
    explicit Lane(std::shared_ptr<Flow> owner) : flow(std::move(owner)) {}
    std::shared_ptr<Flow> flow;
    Fifo<std::shared_ptr<Submission>> pending;
    bool scheduled = false;
};

class FairQueue {
public:
    using Clock = std::chrono::steady_clock;

    // What one submission costs against a flow's deficit.
    static constexpr std::uint64_t submission_cost = Flow::default_weight;

    // How long after its last submission a context still counts as active
    // for the headroom rule. A closed-loop client (submit, wait, think,
    // submit) spends its round trip plus its own work between submissions,
    // from tens of microseconds to a few milliseconds; 50 ms covers that
    // with a wide margin, so an interactive context keeps its free worker
    // between submissions. It is also short: a flood regains every worker
    // 50 ms after the last other context went quiet, so a lone user's
    // throughput loss is bounded by one worker for 50 ms.
    static constexpr Clock::duration headroom_window = std::chrono::milliseconds(50);

    // `workers`: how many submissions the caller may run at once (0 is 1).
    explicit FairQueue(unsigned workers = 1) : workers_(workers == 0 ? 1 : workers) {}

    struct Dispatch {
        std::shared_ptr<Lane> lane;
        std::shared_ptr<Submission> submission;
    };

    // Appends an accepted submission to its lane and records that its flow
    // was active at `now`. True when it made a lane ready that was not
    // before (a worker should be woken).
    bool push(const std::shared_ptr<Lane>& lane, std::shared_ptr<Submission> submission,
              Clock::time_point now);

    // The next submission by DRR at `now`, its lane now owned by the caller
    // until finish(lane); nullopt when no lane is ready, or when every ready
    // flow is held back by the headroom rule (then held_until() says when
    // the first hold lapses).
    std::optional<Dispatch> pop(Clock::time_point now);

    // After a pop() that returned nullopt with has_ready(): the earliest
    // time a held-back flow may be dispatched without any other change (a
    // finish() of one of its lanes may free it sooner). nullopt otherwise.
    std::optional<Clock::time_point> held_until() const { return held_until_; }

    // The lane's dispatched submission ended. True when the lane has more
    // work and is ready again (a worker should be woken).
    bool finish(const std::shared_ptr<Lane>& lane);

    // The inline rule: the caller may run the lane's next submission on
    // its own thread now, as a worker would, without pushing it. True when
    // nothing waits for a worker (no lane is ready), a worker's place is
    // free (the caller takes it: running counts it until finish(lane)),
    // the lane has nothing waiting or running (its order holds) and its
    // flow's share cap does not hold it back. Then the lane is owned by the
    // caller as after pop(); it charges and finishes it the same way.
    // Nobody is passed over: DRR orders waiting work, and none waits.
    bool claim(const std::shared_ptr<Lane>& lane, Clock::time_point now);

    // Clamped to [min_weight, max_weight]; applies from the flow's next credit.
    static void set_weight(Flow& flow, std::uint32_t weight);
    // Applies from the next pop().
    static void set_latency(Flow& flow, bool latency) { flow.latency = latency; }
    // Clamped to [1, 1000] per mille; applies from the next pop().
    static void set_share(Flow& flow, std::uint32_t share_permille);

    // The window a share cap is measured over.
    static constexpr Clock::duration share_window = std::chrono::seconds(1);
    // Charges this close together are one entry of a flow's window (a cap
    // may then hold a flow up to this much longer than exact accounts would).
    static constexpr Clock::duration charge_bucket = std::chrono::milliseconds(1);
    // The lane's dispatched submission ran for `used`, ending at `now`:
    // charged to its flow (before finish(lane)).
    void charge(const std::shared_ptr<Lane>& lane, Clock::duration used, Clock::time_point now);
    // The flow's charges within the share window ending at `now`.
    static Clock::duration charged_within(Flow& flow, Clock::time_point now);
    // From now on no cap holds any flow back.
    void drain() { draining_ = true; }

    // Some lane is ready (it may still be held back by the headroom rule).
    bool has_ready() const { return ready_flows_ != 0; }

private:
    // A flow and the time of its latest submission.
    struct Activity {
        std::weak_ptr<Flow> flow;
        Clock::time_point at{};
        bool seen = false;
    };

    void enter_ring(const std::shared_ptr<Flow>& flow);
    void leave_ring(Flow& flow);
    void note_activity(const std::shared_ptr<Flow>& flow, Clock::time_point now);
    // The latest submission of any flow but `flow`; nullopt if none.
    std::optional<Clock::time_point> others_latest(const std::shared_ptr<Flow>& flow) const;
    // The time `flow`'s headroom hold lapses, if it is held back at `now`.
    // The time `flow`'s share cap stops holding it, if it holds it at `now`.
    std::optional<Clock::time_point> cap_hold(Flow& flow, Clock::time_point now) const;
    std::optional<Clock::time_point> headroom_hold(const std::shared_ptr<Flow>& flow,
                                                   Clock::time_point now) const;

    unsigned workers_;
    // Invariant: latest_ is the flow with the latest submission;
    // latest_other_ the flow with the latest submission among all others
    // (each `seen` once a submission was recorded). Two entries answer
    // "did any other flow submit since t" for every flow, including flows
    // that have left the ring. Flows are told apart by owner (weak_ptr), so
    // a destroyed context is never taken for a new one at the same address.
    Activity latest_;
    Activity latest_other_;
    std::optional<Clock::time_point> held_until_;
    bool draining_ = false;

    // Flows with work, in DRR visiting order; the head is being visited.
    std::list<std::shared_ptr<Flow>> ring_;
    // Nodes of flows that left the ring, empty, reused when one enters it:
    // a flow going idle and busy again allocates nothing.
    std::list<std::shared_ptr<Flow>> spare_;
    // Flows in the ring with at least one ready lane.
    std::uint64_t ready_flows_ = 0;
    // Submissions being run (by workers or a claim()), over every flow.
    unsigned running_ = 0;
};

}  // namespace vaccel::backend::cpu
