// profile.hpp - VACCEL_CUDA_PROFILE: where a TOSA program's device time
// goes, kernel by kernel (docs/operators.md, "The CUDA device").
//
// Decides:
//  - VACCEL_CUDA_PROFILE=1 at load profiles the program; unset, empty or 0
//    does not; any other value refuses the load (InvalidArgument,
//    VACCEL_D_BAD_VALUE), as VACCEL_CUDA_GRAPHS does;
//  - a profiled program's runs launch kernel by kernel (no CUDA graph: a
//    graph has no timing points inside), with a timing event before each
//    kernel and one after the last. The enqueueing thread waits for the
//    run's end and adds each kernel's time, so profiled runs are serialized
//    and slower: a diagnostic, not a way to serve;
//  - the report, written to stderr when the program is destroyed (in the
//    process that ran it: vaccel-cuda-host inherits stderr), lists each
//    dispatch (operator index and name, kernel, grid) with its mean time
//    and share of the run, the slowest first, then the time per operator
//    name. The kernel times add up to less than a graph run's wall time
//    only by what the graph saves in launch gaps.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "driver.hpp"
#include "vaccel/common/error.hpp"

namespace vaccel::backend::cuda {

struct PlannedLaunch;

// VACCEL_CUDA_PROFILE as read at load.
Result<bool> profile_enabled();

// One program's profile: its timing events (launches + 1, made at load in
// the program's context, destroyed with it) and the sums. `mutex` is held
// from the first event of a run to the read of its last, so two queues'
// runs of one program never share the events.
struct ProgramProfile {
    std::mutex mutex;
    std::vector<CUevent> events;
    std::vector<double> total_ms;  // per launch, over `runs`
    std::uint64_t runs = 0;
};

// The report of `profile` over `launches` (empty when nothing ran).
std::string profile_report(const ProgramProfile& profile,
                           const std::vector<PlannedLaunch>& launches);

}  // namespace vaccel::backend::cuda
