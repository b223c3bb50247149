// test_cpu_inline.cpp - tiny runs on the caller's thread (CpuOptions::
// inline_us, docs/adr/0030-cpu-tiny-runs-on-the-caller.md), through the
// Backend interface: which thread completes each run is read from the
// event sink, which the backend calls on the thread that ran it, so every
// check is exact, never timed.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cpu_test_support.hpp"
#include "matmul_test_support.hpp"

namespace {

using namespace cpu_test;

// Remembers the thread that completed the event, and its state.
class ThreadSink final : public EventSink {
public:
    void completed(const EventStatus& status) noexcept override
    {
        std::lock_guard lock(mutex_);
        thread_ = std::this_thread::get_id();
        state_ = status.state;
        done_ = true;
        changed_.notify_all();
    }
    bool done() const
    {
        std::lock_guard lock(mutex_);
        return done_;
    }
    // Waits for the completion (60 s at most) and returns its thread.
    std::thread::id thread()
    {
        std::unique_lock lock(mutex_);
        if (!changed_.wait_for(lock, std::chrono::seconds(60), [this] { return done_; }))
            fail_msg("the submission never completed");
        assert_int_equal(static_cast<int>(state_), static_cast<int>(EventState::complete));
        return thread_;
    }

private:
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::thread::id thread_{};
    EventState state_ = EventState::pending;
    bool done_ = false;
};

tosa::Graph add_of(std::int64_t elements)
{
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", {elements});
    const auto b = f32(g, "b", {elements});
    const auto c = f32(g, "c", {elements});
    g.op(Op::add, {a, b}, {c});
    g.input(a);
    g.input(b);
    g.output(c);
    return g.finish();
}

tosa::Graph matmul_of(std::int64_t n) { return matmul_graph(DType::fp32, DType::fp32, 1, n, n, n); }

Rig rig_with(unsigned threads, std::uint32_t inline_us, const ContextSchedule& schedule = {})
{
    CpuOptions options;
    options.threads = threads;
    options.inline_us = inline_us;
    return Rig(options, schedule);
}

// One program with its buffers, submitted on `queue`.
struct Work {
    Rig& rig;
    Queue& queue;
    std::unique_ptr<Program> program;
    std::vector<std::unique_ptr<Buffer>> buffers;

    Work(Rig& r, Queue& q, tosa::Graph graph) : rig(r), queue(q), program(r.must_load(std::move(graph)))
    {
        for (const SlotInfo& slot : program->slots()) {
            buffers.push_back(rig.buffer(slot.bytes));
            std::vector<std::byte> ones(slot.bytes, std::byte{0x3f});
            assert_ok(rig.backend->write_buffer(*buffers.back(), 0, ones));
        }
    }
    ~Work()
    {
        for (auto& b : buffers) assert_ok(rig.backend->free_buffer(b));
        assert_ok(rig.backend->unload_program(program));
    }
    // Submits one run; the event stays the caller's.
    std::unique_ptr<Event> submit(std::shared_ptr<EventSink> sink)
    {
        std::vector<Buffer*> raw;
        for (auto& b : buffers) raw.push_back(b.get());
        auto event = cpu_test::submit(*rig.backend, queue, *program, rig.bind(*program, raw), 0,
                                      std::move(sink));
        assert_ok(event);
        return std::move(*event);
    }
    // Runs once to its end; the thread that completed it.
    std::thread::id run()
    {
        auto sink = std::make_shared<ThreadSink>();
        auto event = submit(sink);
        const std::thread::id ran = sink->thread();
        assert_ok(rig.backend->destroy_event(event));
        return ran;
    }
};

// The first run of a program has no measured cost and goes to a worker;
// once a run took less than the bound, the next runs inside submit() on
// the calling thread, done when submit() returns, and are charged to the
// context's flow as a worker's runs are.
void a_tiny_run_runs_on_the_calling_thread(void**)
{
    Rig rig = rig_with(2, 1000, ContextSchedule{"tiny"});
    Work add(rig, *rig.queue, add_of(4));
    const auto me = std::this_thread::get_id();
    assert_true(add.run() != me);  // unmeasured: a worker
    // A busy machine may stretch a measured run past the bound (then the
    // next goes to a worker again): run until one ran inline.
    for (int i = 0; i < 50 && add.run() != me; ++i) {
    }
    const auto before = rig.backend->device_service()->flows;
    for (int i = 0; i < 5; ++i) {
        auto sink = std::make_shared<ThreadSink>();
        auto event = add.submit(sink);
        assert_true(sink->done());  // before submit() returned
        assert_true(sink->thread() == me);
        assert_ok(rig.backend->destroy_event(event));
    }
    const auto after = rig.backend->device_service()->flows;
    assert_int_equal(after.size(), 1);
    assert_string_equal(after[0].flow.c_str(), "tiny");
    assert_true(after[0].charged_ns > before[0].charged_ns);
    assert_int_equal(after[0].queued, 0);
    assert_int_equal(after[0].on_device, 0);
}

// inline_us = 0 never runs inline; a program whose last run took longer
// than the bound goes to a worker every time.
void no_bound_or_a_longer_run_goes_to_a_worker(void**)
{
    const auto me = std::this_thread::get_id();
    {
        Rig rig = rig_with(2, 0);
        Work add(rig, *rig.queue, add_of(4));
        for (int i = 0; i < 4; ++i) assert_true(add.run() != me);
    }
    {
        Rig rig = rig_with(2, 1);  // 1 us: a 128^3 MATMUL takes far longer
        Work mm(rig, *rig.queue, matmul_of(128));
        for (int i = 0; i < 4; ++i) assert_true(mm.run() != me);
    }
}

// Holds the backend's only worker: a long MATMUL whose completion parks
// the worker (in the sink) until released.
class HeldWorker {
public:
    // The program's first run: unmeasured, so a worker's, never inline.
    HeldWorker(Rig& rig, Queue& queue) : work_(rig, queue, matmul_of(16))
    {
        sink_ = std::make_shared<ParkingSink>();
        event_ = work_.submit(sink_);
        sink_->wait_parked();
    }
    ~HeldWorker()
    {
        sink_->release();
        while (!sink_->finished()) std::this_thread::yield();
        assert_ok(work_.rig.backend->destroy_event(event_));
    }
    std::thread::id worker() const { return sink_->thread(); }

private:
    class ParkingSink final : public EventSink {
    public:
        void completed(const EventStatus&) noexcept override
        {
            std::unique_lock lock(mutex_);
            thread_ = std::this_thread::get_id();
            parked_ = true;
            changed_.notify_all();
            changed_.wait(lock, [this] { return released_; });
            finished_ = true;
        }
        void wait_parked()
        {
            std::unique_lock lock(mutex_);
            if (!changed_.wait_for(lock, std::chrono::seconds(60), [this] { return parked_; }))
                fail_msg("the held run never completed");
        }
        void release()
        {
            std::lock_guard lock(mutex_);
            released_ = true;
            changed_.notify_all();
        }
        bool finished()
        {
            std::lock_guard lock(mutex_);
            return finished_;
        }
        std::thread::id thread() const
        {
            std::lock_guard lock(mutex_);
            return thread_;
        }

    private:
        mutable std::mutex mutex_;
        std::condition_variable changed_;
        std::thread::id thread_{};
        bool parked_ = false, released_ = false, finished_ = false;
    };
    Work work_;
    std::shared_ptr<ParkingSink> sink_;
    std::unique_ptr<Event> event_;
};

// The caller takes a worker's place: with the only worker busy, a tiny run
// waits for it like any other (it never runs beside the device's workers),
// and with a second worker free it runs inline beside the busy one.
void a_tiny_run_waits_while_every_worker_is_busy(void**)
{
    const auto me = std::this_thread::get_id();
    for (unsigned threads : {1u, 2u}) {
        Rig rig = rig_with(threads, 1000);
        auto other = rig.backend->create_queue(*rig.context);
        assert_ok(other);
        Work add(rig, *rig.queue, add_of(4));
        add.run();
        add.run();  // measured on a worker or inline: either way cheap now
        std::shared_ptr<ThreadSink> sink;
        std::unique_ptr<Event> event;
        std::thread::id worker;
        {
            HeldWorker held(rig, **other);
            worker = held.worker();
            sink = std::make_shared<ThreadSink>();
            event = add.submit(sink);
            if (threads == 1) assert_false(sink->done());  // waits for the worker
            else assert_true(sink->done() && sink->thread() == me);
        }
        if (threads == 1) assert_true(sink->thread() == worker);
        assert_ok(rig.backend->destroy_event(event));
        assert_ok(rig.backend->destroy_queue(*other));
    }
}

// A tiny run never passes queued work: with a submission of its own queue
// waiting (behind a held worker), the next one queues behind it, in order.
void a_tiny_run_keeps_its_queue_order(void**)
{
    Rig rig = rig_with(2, 1000);
    Work first(rig, *rig.queue, add_of(4)), second(rig, *rig.queue, add_of(4));
    for (Work* w : {&first, &second}) {
        w->run();
        w->run();
    }
    std::vector<std::shared_ptr<ThreadSink>> sinks;
    std::vector<std::unique_ptr<Event>> events;
    {
        // The same queue: it runs before both, though a worker is free.
        HeldWorker held(rig, *rig.queue);
        for (Work* w : {&first, &second}) {
            sinks.push_back(std::make_shared<ThreadSink>());
            events.push_back(w->submit(sinks.back()));
            assert_false(sinks.back()->done());
        }
    }
    for (auto& sink : sinks) assert_true(sink->thread() != std::this_thread::get_id());
    for (auto& event : events) assert_ok(rig.backend->destroy_event(event));
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_tiny_run_runs_on_the_calling_thread),
        cmocka_unit_test(no_bound_or_a_longer_run_goes_to_a_worker),
        cmocka_unit_test(a_tiny_run_waits_while_every_worker_is_busy),
        cmocka_unit_test(a_tiny_run_keeps_its_queue_order),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
