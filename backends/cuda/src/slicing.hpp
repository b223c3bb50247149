// slicing.hpp - cutting a CUDA run into segments that the device's
// scheduler releases one at a time (docs/adr/0026-gpu-device-scheduler.md).
// How a run is cut is the rule both GPUs share (vaccel/sched/slicing.hpp);
// this file says when, and what a CUDA run measures for it.
//
// Decides:
//  - only in a vaccel-cuda-host under vacceld (hold_starts) with slice_us
//    above 0, only TOSA runs, and not for a program profiled with
//    VACCEL_CUDA_PROFILE; raw kernels are never cut;
//  - the first run of a program measures its costs: it goes whole, kernel
//    by kernel (no graph), with a timing event before each launch and one
//    after the last (the program's cost_events). When it completes, those
//    become the program's DispatchCosts: the time of each launch, and for
//    a MATMUL kernel that honours k_first / k_end (MatmulKernel::k_step)
//    its k steps, ceil(C / k_step); the CUDA kernels are not cut over
//    tiles. A run that does not complete leaves the measuring to a later
//    one;
//  - every later run is accepted with the program's cut as it is then,
//    and goes out in its segments; a completed run whose parts of a
//    dispatch took more than 8% more than the dispatch whole halves that
//    dispatch's parts (halve_costly_cuts) and the program is cut again;
//  - at most max_segments segments a run.
// Thread safety: plan_run is called as a submission is accepted, settle_run
// as it is reported (any thread); both take the program's cut_mutex.
#pragma once

#include <cstdint>
#include <vector>

#include "objects.hpp"

namespace vaccel::backend::cuda {

inline constexpr std::uint32_t max_segments = 64;

// Whether `program`'s runs on `core` are cut (the first rule above).
bool slicing_on(const DeviceCore& core, const ProgramState& program);

// At acceptance of a run of s.program: its cut, or that it measures the
// costs; marks and used_ns sized for its segments.
void plan_run(const DeviceCore& core, SubmissionState& s);

// The run ended, completed or not: what it measured settles.
void settle_run(const DeviceCore& core, SubmissionState& s, bool completed);

// The launches of segment `index` of the run (every launch, whole, when it
// has no cut).
std::vector<sched::Piece> segment_pieces(const SubmissionState& s, std::uint32_t index);

// The k step of `launch`'s kernel when it can be cut over k, else 0.
std::uint32_t k_step_of(const PlannedLaunch& launch);

}  // namespace vaccel::backend::cuda
