// run_progress.hpp - what `vaccelctl run` tells a person while it repeats a
// model: a progress line, and what Ctrl-C does.
//
// Decides:
//  - the progress line is drawn on stderr only when stderr is a terminal
//    and --quiet is not given; first once the runs have gone on for two
//    seconds (a short run prints nothing but its summary), then at most
//    every 200 ms, redrawn in place, and erased before anything else is
//    printed;
//  - a first SIGINT (Ctrl-C) while the runs go on asks the loop to stop
//    after the run in progress (the device finishes it; the outputs of the
//    last run and every timing so far are kept and written); a second one
//    ends the process at once (the signal's default action);
//  - the handler is in place only while the runs go on: Ctrl-C while a
//    model loads ends vaccelctl as usual.
// Threads: one RunProgress at a time, on the thread that runs the loop; the
// handler only sets a flag and writes one fixed line (both
// async-signal-safe).
#pragma once

#include <chrono>
#include <csignal>
#include <cstdint>

namespace vaccel::ctl {

class RunProgress {
public:
    RunProgress(bool show, unsigned warmup, unsigned repeat);
    ~RunProgress();  // puts SIGINT back as it was and erases the line
    RunProgress(const RunProgress&) = delete;
    RunProgress& operator=(const RunProgress&) = delete;

    // True once Ctrl-C asked the runs to stop.
    bool interrupted() const;
    // Run number `done` (1-based, warm-ups included) ended after `last_ns`.
    void ran(unsigned done, std::uint64_t last_ns);
    // Erases the line (also done by the destructor).
    void clear();

private:
    using Clock = std::chrono::steady_clock;
    const bool show_;
    const unsigned warmup_, total_;
    const Clock::time_point start_ = Clock::now();
    Clock::time_point drawn_{};
    bool visible_ = false;
    struct sigaction previous_ {};
};

}  // namespace vaccel::ctl
