// notify_fd.hpp - a session's pollable "some event of mine completed" file.
//
// Owns one eventfd. As the session's completion listener
// (Session::set_completion_listener) it is written once per completion;
// whoever serves the session (the daemon, or libvaccel's embedded
// transport) clears it when the client starts an EVENT_POLL or EVENT_WAIT,
// before looking: a completion after the clear makes it readable again, so
// none is lost. Clients poll it (directly, or through /dev/vaccel's poll(),
// which the module delegates to it); they never read it.
// Thread-safety: wake() from any thread (eventfd writes are atomic);
// clear() from the serving thread.
#pragma once

#include "vaccel/engine/event_watch.hpp"

namespace vaccel::engine {

class NotifyFd final : public Waiter {
public:
    // -1 from fd() when the eventfd could not be made (EMFILE...).
    NotifyFd();
    ~NotifyFd() override;
    NotifyFd(const NotifyFd&) = delete;
    NotifyFd& operator=(const NotifyFd&) = delete;

    int fd() const { return fd_; }
    void wake() noexcept override;
    // Not readable any more until the next completion.
    void clear() noexcept;

private:
    int fd_;  // Ownership: this object's; closed by the destructor
};

}  // namespace vaccel::engine
