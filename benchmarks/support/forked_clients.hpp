// forked_clients.hpp - N client processes running one loop for a fixed time.
//
// Owns: the client processes (fork), the pipes that start them together and
// bring back their counts. Decides: each child builds its own client after
// the fork (make()), says ready, and waits until every child is ready; the
// timed part is step() called until `seconds` have passed; begin() (before
// the clock starts) and finish() (after it stops) are optional. The result
// is the sum over the children of steps per second.
#pragma once

#include <functional>

namespace vaccel::bench {

struct ClientLoop {
    std::function<bool()> begin;   // may be empty
    std::function<bool()> step;    // empty: the client could not be built
    std::function<bool()> finish;  // may be empty
};

// The summed steps/s of `clients` processes each running make()'s loop, or
// a negative value when any of them failed (its reason printed).
double forked_rate(unsigned clients, double seconds, const std::function<ClientLoop()>& make);

}  // namespace vaccel::bench
