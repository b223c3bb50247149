// slicing.cpp - when and how a CUDA run is cut (slicing.hpp).
#include "slicing.hpp"

#include <algorithm>

#include "lowering_matmul.hpp"

namespace vaccel::backend::cuda {

bool slicing_on(const DeviceCore& core, const ProgramState& program)
{
    return core.options.hold_starts && core.options.slice_us != 0 && !program.profile &&
           program.format == VACCEL_FORMAT_TOSA && !program.launches.empty();
}

std::uint32_t k_step_of(const PlannedLaunch& launch)
{
    for (const MatmulKernel& m : matmul_kernels())
        if (m.id == launch.kernel.kernel) return m.k_function != nullptr ? m.k_step : 0;
    return 0;
}

void plan_run(const DeviceCore& core, SubmissionState& s)
{
    ProgramState& program = *s.program;
    if (!slicing_on(core, program)) return;
    int expected = ProgramState::unmeasured;
    if (program.costs_state.compare_exchange_strong(expected, ProgramState::measuring)) {
        s.measures_costs = true;
        return;
    }
    if (expected != ProgramState::measured) return;  // another run is measuring: whole
    {
        std::lock_guard lock(program.cut_mutex);
        s.cut = program.cut;
    }
    if (!s.cut || s.cut->segments.size() <= 1) {
        s.cut.reset();
        return;
    }
    s.marks.assign(2 * s.cut->segments.size(), nullptr);
    s.used_ns.assign(s.cut->segments.size(), 0);
}

namespace {

std::uint64_t elapsed_ns(const Driver& cu, CUevent from, CUevent to, bool& ok)
{
    float ms = 0.0f;
    if (from == nullptr || to == nullptr || cu.cuEventElapsedTime(&ms, from, to) != CUDA_SUCCESS) {
        ok = false;
        return 0;
    }
    return static_cast<std::uint64_t>(static_cast<double>(ms) * 1e6);
}

void measure_costs(const DeviceCore& core, SubmissionState& s)
{
    ProgramState& program = *s.program;
    const std::size_t launches = program.launches.size();
    std::vector<sched::DispatchCost> costs(launches);
    bool ok = program.cost_events.size() == launches + 1;
    for (std::size_t i = 0; ok && i < launches; ++i) {
        costs[i].ns = elapsed_ns(*core.cu, program.cost_events[i], program.cost_events[i + 1], ok);
        if (const std::uint32_t step = k_step_of(program.launches[i]); step != 0)
            costs[i].k_steps = (program.launches[i].kernel.spec[2] + step - 1) / step;  // spec[2]: C
    }
    if (!ok) {
        program.costs_state.store(ProgramState::unmeasured, std::memory_order_release);
        return;
    }
    auto cut = std::make_shared<const sched::Cut>(
        sched::cut_segments(costs, std::uint64_t{core.options.slice_us} * 1000, max_segments));
    {
        std::lock_guard lock(program.cut_mutex);
        program.costs = std::move(costs);
        program.cut = std::move(cut);
    }
    program.costs_state.store(ProgramState::measured, std::memory_order_release);
}

// A completed cut run: its parts' times may lower the caps (slicing.hpp).
void adapt_cut(const DeviceCore& core, SubmissionState& s)
{
    bool ok = true;
    for (std::size_t i = 0; ok && i < s.used_ns.size(); ++i)
        s.used_ns[i] = elapsed_ns(*core.cu, s.marks[2 * i], s.marks[2 * i + 1], ok);
    if (!ok) return;
    ProgramState& program = *s.program;
    std::lock_guard lock(program.cut_mutex);
    if (program.cut != s.cut) return;  // replaced already
    if (sched::halve_costly_cuts(*s.cut, s.used_ns, program.costs))
        program.cut = std::make_shared<const sched::Cut>(sched::cut_segments(
            program.costs, std::uint64_t{core.options.slice_us} * 1000, max_segments));
}

}  // namespace

void settle_run(const DeviceCore& core, SubmissionState& s, bool completed)
{
    if (!s.program || (!s.measures_costs && !s.cut)) return;
    const auto scope = s.program->owner->enter();
    if (s.measures_costs) {
        s.measures_costs = false;
        if (completed && scope)
            measure_costs(core, s);
        else
            s.program->costs_state.store(ProgramState::unmeasured, std::memory_order_release);
        return;
    }
    if (completed && scope && segments_left(s) == 0) adapt_cut(core, s);
}

std::vector<sched::Piece> segment_pieces(const SubmissionState& s, std::uint32_t index)
{
    if (s.cut && index < s.cut->segments.size()) return s.cut->segments[index];
    std::vector<sched::Piece> all(s.program->launches.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i].dispatch = i;
    return all;
}

}  // namespace vaccel::backend::cuda
