// run_progress.cpp - the progress line and Ctrl-C of `vaccelctl run`
// (run_progress.hpp).
#include "run_progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "report.hpp"

namespace vaccel::ctl {

namespace {

volatile std::sig_atomic_t stop_requested = 0;

constexpr char stopping[] =
    "\r\033[Kvaccelctl: interrupted: stopping after the run in progress (Ctrl-C again ends "
    "at once)\n";

void on_interrupt(int)
{
    stop_requested = 1;
    // SA_RESETHAND made the next SIGINT the default action again.
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, stopping, sizeof stopping - 1);
}

constexpr auto first_after = std::chrono::seconds(2);
constexpr auto redraw_every = std::chrono::milliseconds(200);

}  // namespace

RunProgress::RunProgress(bool show, unsigned warmup, unsigned repeat)
    : show_(show && ::isatty(STDERR_FILENO) == 1), warmup_(warmup), total_(warmup + repeat)
{
    stop_requested = 0;
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    // Calls into the client restart: the loop looks at the flag between runs.
    action.sa_flags = SA_RESTART | SA_RESETHAND;
    ::sigaction(SIGINT, &action, &previous_);
}

RunProgress::~RunProgress()
{
    clear();
    ::sigaction(SIGINT, &previous_, nullptr);
}

bool RunProgress::interrupted() const { return stop_requested != 0; }

void RunProgress::ran(unsigned done, std::uint64_t last_ns)
{
    if (!show_ || stop_requested != 0) return;
    const Clock::time_point now = Clock::now();
    if (now - start_ < first_after || (visible_ && now - drawn_ < redraw_every)) return;
    drawn_ = now;
    visible_ = true;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double left = done == 0 ? 0.0 : elapsed / done * (total_ - done);
    const std::string which = done <= warmup_ ? fmt::format("warm-up {}/{}", done, warmup_)
                                              : fmt::format("run {}/{}", done - warmup_, total_ - warmup_);
    fmt::print(stderr, "\r\033[Kvaccelctl: {}, last {}, {:.0f} s elapsed, about {:.0f} s left",
               which, duration_text(last_ns), elapsed, left);
    std::fflush(stderr);
}

void RunProgress::clear()
{
    if (!visible_) return;
    visible_ = false;
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
}

}  // namespace vaccel::ctl
