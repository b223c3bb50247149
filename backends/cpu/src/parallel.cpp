// parallel.cpp - the CPU kernels' helper threads (parallel.hpp).
#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace vaccel::backend::cpu {
namespace {

thread_local unsigned serial_depth = 0;

// One operator's range, published to the helpers under Pool::mutex.
struct Job {
    detail::ChunkFn fn = nullptr;
    void* body = nullptr;
    std::uint64_t count = 0, chunk = 1;
};

class Pool {
public:
    // Never destroyed: helpers may be blocked in wait() at exit, and a
    // static destructor joining them would race the process's other
    // static destructors (the pool outlives every CPU device).
    static Pool& get()
    {
        static Pool* pool = new Pool;
        return *pool;
    }

    void grow(unsigned threads)
    {
        const std::lock_guard sizing(sizing_);
        while (helpers_ + 1 < threads) {
            std::thread(&Pool::helper, this).detach();
            ++helpers_;
        }
        threads_.store(helpers_ + 1, std::memory_order_relaxed);
    }

    unsigned threads() const { return threads_.load(std::memory_order_relaxed); }

    void run(std::uint64_t count, std::uint64_t grain, detail::ChunkFn fn, void* body)
    {
        const unsigned threads = this->threads();
        // Taken by another worker's operator, or by this very operator (the
        // caller's own chunk calling parallel_for), or no helpers: all of
        // it here.
        if (threads <= 1 || busy_.exchange(true, std::memory_order_acquire)) {
            fn(body, 0, count);
            return;
        }
        // About four chunks a thread, so a helper that wakes late leaves
        // its share to the others instead of holding up the end.
        const std::uint64_t chunks_wanted = std::uint64_t{threads} * 4;
        const std::uint64_t chunk = std::max(grain, (count + chunks_wanted - 1) / chunks_wanted);
        {
            const std::lock_guard held(mutex_);
            job_ = Job{fn, body, count, chunk};
            next_.store(0, std::memory_order_relaxed);
            open_ = true;
            ++generation_;
        }
        wake_.notify_all();
        work(job_);
        {
            std::unique_lock held(mutex_);
            // Helpers that have not joined yet will not: the job is closed.
            open_ = false;
            done_.wait(held, [&] { return active_ == 0; });
        }
        busy_.store(false, std::memory_order_release);
    }

private:
    Pool() = default;

    // Claims chunks of `job` until none is left.
    void work(const Job& job)
    {
        for (;;) {
            const std::uint64_t begin = next_.fetch_add(job.chunk, std::memory_order_relaxed);
            if (begin >= job.count) return;
            job.fn(job.body, begin, std::min(job.count, begin + job.chunk));
        }
    }

    void helper()
    {
        const SerialScope nested_calls_inline;
        std::uint64_t seen = 0;
        std::unique_lock held(mutex_);
        for (;;) {
            wake_.wait(held, [&] { return generation_ != seen; });
            seen = generation_;
            if (!open_) continue;
            const Job job = job_;
            ++active_;
            held.unlock();
            work(job);
            held.lock();
            if (--active_ == 0) done_.notify_one();
        }
    }

    std::mutex sizing_;
    unsigned helpers_ = 0;  // under sizing_
    std::atomic<unsigned> threads_{1};
    std::atomic<bool> busy_{false};  // set by the one parallel_for using the helpers
    std::mutex mutex_;  // guards job_, open_, generation_, active_
    std::condition_variable wake_, done_;
    Job job_;
    bool open_ = false;
    std::uint64_t generation_ = 0;
    unsigned active_ = 0;
    std::atomic<std::uint64_t> next_{0};
};

}  // namespace

void size_parallel_threads(unsigned workers)
{
    static std::mutex lock;
    static unsigned largest = 0;
    const std::lock_guard held(lock);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    largest = std::max(largest, workers);
    Pool::get().grow(std::min(largest, cores));
}

unsigned parallel_threads() { return Pool::get().threads(); }

SerialScope::SerialScope() { ++serial_depth; }
SerialScope::~SerialScope() { --serial_depth; }

namespace detail {
bool serial_here() { return serial_depth != 0; }

void parallel_run(std::uint64_t count, std::uint64_t grain, ChunkFn fn, void* body)
{
    Pool::get().run(count, grain, fn, body);
}
}  // namespace detail

}  // namespace vaccel::backend::cpu
