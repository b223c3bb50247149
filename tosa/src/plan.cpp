// plan.cpp - slots, lifetime-packed arena, views and hazards of one block (plan.hpp).
#include "vaccel/tosa/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ranges>

namespace vaccel::tosa {

std::vector<std::uint64_t> row_major_strides(std::span<const std::int64_t> shape)
{
    std::vector<std::uint64_t> strides(shape.size(), 1);
    std::uint64_t step = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
        strides[d] = step;
        step *= static_cast<std::uint64_t>(shape[d]);
    }
    return strides;
}

std::vector<std::int64_t> pad_leading(std::span<const std::int64_t> values, std::int64_t fill)
{
    std::vector<std::int64_t> padded(max_plan_rank > values.size() ? max_plan_rank - values.size()
                                                                    : 0,
                                     fill);
    padded.insert(padded.end(), values.begin(), values.end());
    return padded;
}

// ----- ArenaPacker -------------------------------------------------------------

Result<std::uint32_t> ArenaPacker::allocate(std::uint64_t bytes, std::uint32_t live_end,
                                            std::uint32_t written_at)
{
    if (bytes > max_arena_bytes)
        return fail(Error::limit_hit(VACCEL_LIMIT_MEMORY_BYTES, max_arena_bytes, bytes)
                        .with_note(fmt::format("a {}-byte tensor does not fit a plan's arena "
                                               "(at most {} bytes)",
                                               bytes, max_arena_bytes)));
    const std::uint64_t size =
        (std::max<std::uint64_t>(bytes, 1) + arena_alignment - 1) / arena_alignment *
        arena_alignment;
    // Regions still live when the new one is first written: it must not touch them.
    std::vector<const ArenaRegion*> live;
    std::vector<std::uint64_t> candidates{0};
    for (const ArenaRegion& r : regions_)
        if (r.live_end >= written_at) {
            live.push_back(&r);
            candidates.push_back(r.offset + r.bytes);
        }
    std::ranges::sort(candidates);
    for (std::uint64_t offset : candidates) {
        const std::uint64_t end = offset + size;
        const bool free = std::ranges::all_of(live, [&](const ArenaRegion* r) {
            return end <= r->offset || offset >= r->offset + r->bytes;
        });
        if (!free) continue;
        if (end > max_arena_bytes)
            return fail(Error::limit_hit(VACCEL_LIMIT_MEMORY_BYTES, max_arena_bytes, end)
                            .with_note(fmt::format("the program's working arena would need {} "
                                                   "bytes; a plan lays out at most {}",
                                                   end, max_arena_bytes)));
        regions_.push_back({offset, size, live_end});
        bytes_ = std::max(bytes_, end);
        return static_cast<std::uint32_t>(regions_.size() - 1);
    }
    // Unreachable: the highest end among the live regions is always free.
    return fail(Errc::resource_limit, VACCEL_D_LIMIT);
}

void ArenaPacker::extend(std::uint32_t region, std::uint32_t live_end)
{
    regions_[region].live_end = std::max(regions_[region].live_end, live_end);
}

// ----- hazards -------------------------------------------------------------------

bool MemoryRange::overlaps(const MemoryRange& other) const
{
    if (space != other.space) return false;
    if (space != Space::arena) return index == other.index;
    return offset < other.end && other.offset < end;
}

bool HazardTracker::record(std::span<const MemoryRange> reads,
                           std::span<const MemoryRange> writes, std::uint32_t writer)
{
    const bool raw = std::ranges::any_of(reads, [&](const MemoryRange& r) {
        return std::ranges::any_of(written_, [&](const auto& w) { return w.first.overlaps(r); });
    });
    const bool war = std::ranges::any_of(writes, [&](const MemoryRange& w) {
        return std::ranges::any_of(read_, [&](const MemoryRange& r) { return r.overlaps(w); });
    });
    const bool waw = std::ranges::any_of(writes, [&](const MemoryRange& w) {
        return std::ranges::any_of(written_, [&](const auto& earlier) {
            return earlier.first.overlaps(w) && earlier.second != writer;
        });
    });
    const bool barrier = raw || war || waw;
    if (barrier) {
        written_.clear();
        read_.clear();
    }
    read_.insert(read_.end(), reads.begin(), reads.end());
    for (const MemoryRange& w : writes) written_.emplace_back(w, writer);
    return barrier;
}

// ----- operands ----------------------------------------------------------------------

bool compile_time_operand(Op op, std::size_t index)
{
    switch (op) {
    case Op::mul: return index == 2;                     // shift
    case Op::matmul: return index >= 2;                  // A_zp, B_zp
    case Op::conv2d:
    case Op::conv3d:
    case Op::depthwise_conv2d:
    case Op::transpose_conv2d: return index >= 3;        // input_zp, weight_zp
    case Op::avg_pool2d:
    case Op::negate: return index >= 1;                  // input_zp, output_zp
    case Op::reshape:
    case Op::tile: return index == 1;                    // shape, multiples
    case Op::slice:
    case Op::pad: return index == 1 || index == 2;       // start/size, padding/pad_const
    case Op::rescale: return index >= 1;                 // multiplier, shift, zero points
    case Op::resize: return index >= 1;                  // scale, offset, border
    default: return false;
    }
}

Result<std::vector<DispatchRequest>> default_lowering(const OperatorView& view)
{
    DispatchRequest request;
    request.kernel.kernel = static_cast<std::uint32_t>(view.op->op);
    if (!view.outputs.empty())
        request.kernel.work = view.block->tensors[view.outputs[0]].element_count();
    request.reads = view.inputs;
    request.reads.insert(request.reads.end(), view.implicit_inputs.begin(),
                         view.implicit_inputs.end());
    request.writes = view.outputs;
    std::vector<DispatchRequest> requests;
    requests.push_back(std::move(request));
    return requests;
}

// ----- the planner ----------------------------------------------------------------------

namespace {

constexpr std::uint32_t forever = UINT32_MAX;

bool is_view_op(Op op) { return op == Op::reshape || op == Op::identity; }
// Operators that carry data or declarations and dispatch nothing.
bool is_data_op(Op op) { return op == Op::const_ || op == Op::const_shape || op == Op::variable; }

class Planner {
public:
    Planner(const Graph& graph, const Analysis& analysis, BlockRef ref, const PlanOptions& options,
            const Lowerer& lowerer)
        : region_(graph.regions[ref.region]),
          block_(region_.blocks[ref.block]),
          info_(analysis.block(ref)),
          options_(options),
          lowerer_(lowerer),
          located_(block_.tensors.size(), false),
          last_use_(block_.tensors.size(), 0),
          readers_(block_.tensors.size(), 0),
          is_output_(block_.tensors.size(), false),
          epilogue_(block_.operators.size()),
          absorbed_(block_.operators.size(), false)
    {
        plan_.locations.resize(block_.tensors.size());
    }

    Result<ProgramPlan> run();

private:
    std::string where(std::uint32_t op_index) const
    {
        return fmt::format("operator {} ({}) of block '{}' (region '{}')", op_index,
                           op_name(block_.operators[op_index].op), block_.name, region_.name);
    }
    std::string where_block() const
    {
        return fmt::format("block '{}' (region '{}')", block_.name, region_.name);
    }
    Error graph_error(std::uint32_t reason, std::string note) const
    {
        return Error::of(Errc::unsupported, VACCEL_D_TOSA_GRAPH, reason).with_note(std::move(note));
    }

    Status refuse_unplannable() const;
    void locate_state_and_captured();
    Status lay_out_slots();
    void measure_lifetimes();
    void alias_outputs();
    void find_epilogues();
    std::vector<std::uint32_t> epilogue_chain(std::uint32_t producer,
                                              const std::vector<std::uint32_t>& computed_at,
                                              const std::vector<std::uint32_t>& reader);
    Status locate_epilogue(std::uint32_t producer, std::vector<std::uint32_t>& extra_reads);
    bool compile_time(const Operator& op, std::size_t index) const;
    Result<Location> input_location(std::uint32_t tensor, std::uint32_t op_index);
    Result<Location> output_location(std::uint32_t tensor);
    Result<Location> place(std::uint32_t tensor, std::uint32_t live_end, std::uint32_t written_at);
    void locate(std::uint32_t tensor, Location location)
    {
        plan_.locations[tensor] = location;
        located_[tensor] = true;
    }
    MemoryRange range(std::uint32_t tensor) const;
    Status plan_operator(std::uint32_t op_index);
    Status finish_outputs();

    const Region& region_;
    const Block& block_;
    const BlockAnalysis& info_;
    const PlanOptions& options_;
    const Lowerer& lowerer_;
    ProgramPlan plan_;
    ArenaPacker arena_;
    HazardTracker hazards_;
    std::vector<bool> located_;
    std::vector<std::uint32_t> last_use_;  // position of the last live reader
    std::vector<std::uint32_t> readers_;   // how many live operators read it
    std::vector<bool> is_output_;
    std::uint32_t position_ = 0;           // index in the live, non-CONST order
    // Per operator: the chain folded into it, and whether it is folded into another.
    std::vector<std::vector<std::uint32_t>> epilogue_;
    std::vector<bool> absorbed_;
};

Status Planner::refuse_unplannable() const
{
    if (options_.control_flow) return {};
    for (std::uint32_t index : info_.live_order) {
        const Op op = block_.operators[index].op;
        if (op == Op::cond_if || op == Op::while_loop)
            return fail(graph_error(VACCEL_TOSA_CONTROL_FLOW,
                                    fmt::format("{}: control flow is planned block by block by "
                                                "a backend that runs it; this plan covers one "
                                                "block without it",
                                                where(index))));
    }
    if (!info_.variables.empty())
        return fail(graph_error(VACCEL_TOSA_VARIABLES,
                                fmt::format("{} uses variable '{}': variables are state the "
                                            "backend keeps, not part of a block plan",
                                            where_block(), info_.variables.front().name)));
    if (!info_.captured.empty())
        return fail(graph_error(VACCEL_TOSA_REGIONS,
                                fmt::format("{} reads '{}' of an enclosing block",
                                            where_block(),
                                            block_.tensors[info_.captured.front()].name)));
    return {};
}

void Planner::locate_state_and_captured()
{
    if (!options_.control_flow) return;
    for (const Variable& variable : info_.variables) {
        const auto index = static_cast<std::uint32_t>(plan_.variables.size());
        plan_.variables.push_back(variable.name);
        locate(variable.tensor, {Location::Kind::state, index, 0,
                                 info_.values[variable.tensor].bytes, 0});
    }
    for (std::uint32_t tensor : info_.captured) {
        const auto index = static_cast<std::uint32_t>(plan_.captured.size());
        plan_.captured.push_back(tensor);
        locate(tensor, {Location::Kind::captured, index, 0, info_.values[tensor].bytes, 0});
    }
}

Status Planner::lay_out_slots()
{
    std::vector<std::uint32_t> seen;
    auto add = [&](std::uint32_t tensor, SlotRole role) -> Status {
        // A staged backend copies every output at the end, so a tensor may
        // serve several slots; a device writing slots in place cannot.
        if (!options_.stage_outputs && std::ranges::find(seen, tensor) != seen.end())
            return fail(graph_error(0, fmt::format("{} names tensor '{}' more than once among its "
                                                   "inputs and outputs; every slot needs its own "
                                                   "tensor",
                                                   where_block(), block_.tensors[tensor].name)));
        seen.push_back(tensor);
        const Tensor& t = block_.tensors[tensor];
        const auto slot = static_cast<std::uint32_t>(plan_.slots.size());
        plan_.slots.push_back({slot, role, tensor, t.dtype, t.shape, info_.values[tensor].bytes});
        return {};
    };
    for (std::uint32_t tensor : block_.inputs)
        if (auto added = add(tensor, SlotRole::input); !added) return added;
    plan_.input_count = static_cast<std::uint32_t>(plan_.slots.size());
    for (std::uint32_t tensor : block_.outputs)
        if (auto added = add(tensor, SlotRole::output); !added) return added;
    for (const SlotPlan& slot : plan_.slots) {
        if (slot.role == SlotRole::output) is_output_[slot.tensor] = true;
        // A staged output is placed when produced; everything else lives in its slot.
        if (slot.role == SlotRole::input || !options_.stage_outputs)
            locate(slot.tensor, {Location::Kind::slot, slot.slot, 0, slot.bytes, 0});
    }
    return {};
}

void Planner::measure_lifetimes()
{
    std::uint32_t position = 0;
    for (std::uint32_t index : info_.live_order) {
        const Operator& op = block_.operators[index];
        if (is_data_op(op.op)) continue;
        auto read = [&](std::uint32_t tensor) {
            last_use_[tensor] = position;
            ++readers_[tensor];
        };
        for (std::uint32_t tensor : op.inputs) read(tensor);
        for (std::uint32_t tensor : info_.operators[index].implicit_inputs) read(tensor);
        ++position;
    }
    if (options_.stage_outputs)
        for (std::uint32_t tensor : block_.outputs) last_use_[tensor] = forever;
}

void Planner::alias_outputs()
{
    if (!options_.alias_outputs || options_.stage_outputs) return;
    for (std::uint32_t output : block_.outputs) {
        const std::uint32_t producer = info_.values[output].producer;
        if (producer == no_operator || info_.operators[producer].dead) continue;
        const Operator& op = block_.operators[producer];
        if (!is_view_op(op.op) || op.inputs.empty()) continue;
        const std::uint32_t source = op.inputs[0];
        const Tensor& from = block_.tensors[source];
        const Tensor& to = block_.tensors[output];
        if (located_[source] || info_.values[source].kind != ValueKind::computed ||
            readers_[source] != 1 || from.dtype != to.dtype ||
            info_.values[source].bytes != info_.values[output].bytes)
            continue;
        locate(source, plan_.locations[output]);
    }
}

void Planner::find_epilogues()
{
    if (!options_.epilogue || options_.stage_outputs || options_.control_flow) return;
    // Where each live operator's results are computed: its position, or
    // for an operator folded into a chain, its producer's; and the one live
    // reader of each tensor read exactly once.
    std::vector<std::uint32_t> computed_at(block_.operators.size(), forever);
    std::vector<std::uint32_t> reader(block_.tensors.size(), no_operator);
    std::uint32_t at = 0;
    for (std::uint32_t index : info_.live_order) {
        const Operator& op = block_.operators[index];
        if (is_data_op(op.op)) continue;
        computed_at[index] = at++;
        for (std::uint32_t tensor : op.inputs) reader[tensor] = index;
    }
    // In execution order, so a chain's operands may be the results of chains before it.
    for (std::uint32_t index : info_.live_order) {
        if (computed_at[index] == forever || absorbed_[index]) continue;
        epilogue_[index] = epilogue_chain(index, computed_at, reader);
        for (std::uint32_t e : epilogue_[index]) {
            absorbed_[e] = true;
            computed_at[e] = computed_at[index];
        }
    }
}

std::vector<std::uint32_t> Planner::epilogue_chain(std::uint32_t producer,
                                                   const std::vector<std::uint32_t>& computed_at,
                                                   const std::vector<std::uint32_t>& reader)
{
    std::vector<std::uint32_t> chain;
    const Operator& p = block_.operators[producer];
    if (is_view_op(p.op) || p.outputs.size() != 1 || info_.operators[producer].side_effect ||
        !info_.operators[producer].implicit_inputs.empty())
        return chain;
    std::uint32_t result = p.outputs[0];
    while (true) {
        // The result feeds exactly one operator and nothing else sees it.
        if (readers_[result] != 1 || is_output_[result] || located_[result] ||
            info_.values[result].kind != ValueKind::computed)
            break;
        const std::uint32_t consumer = reader[result];
        if (consumer == no_operator || computed_at[consumer] == forever) break;
        const Operator& e = block_.operators[consumer];
        if (is_view_op(e.op) || e.outputs.size() != 1 || info_.operators[consumer].side_effect ||
            !info_.operators[consumer].implicit_inputs.empty())
            break;
        const std::uint32_t next = e.outputs[0];
        const Tensor& from = block_.tensors[result];
        const Tensor& to = block_.tensors[next];
        if (from.dtype != to.dtype || from.shape != to.shape ||
            info_.values[result].bytes != info_.values[next].bytes ||
            info_.values[next].kind != ValueKind::computed)
            break;
        // Every other operand exists when the producer runs.
        std::uint32_t input = 0;
        bool ready = true;
        for (std::uint32_t i = 0; i < e.inputs.size(); ++i) {
            const std::uint32_t tensor = e.inputs[i];
            if (tensor == result) {
                input = i;
                continue;
            }
            if (compile_time(e, i) || info_.values[tensor].kind != ValueKind::computed) continue;
            // (A chain's inner results are read once, by the chain: an
            // operand made by an absorbed operator is a chain's last result.)
            const std::uint32_t made_by = info_.values[tensor].producer;
            ready = ready && made_by != no_operator &&
                    computed_at[made_by] < computed_at[producer];
        }
        if (!ready) break;
        if (!options_.epilogue({&block_, producer, consumer, input, chain.size()})) break;
        chain.push_back(consumer);
        result = next;
    }
    return chain;
}

// The producer's chain shares its last result's bytes: that result's
// location if it has one (a block output's slot), else one region placed
// now and live until the last result's last reader. Collects the chain's
// other operands, which the producer's dispatches then read.
Status Planner::locate_epilogue(std::uint32_t producer, std::vector<std::uint32_t>& extra_reads)
{
    const std::vector<std::uint32_t>& chain = epilogue_[producer];
    std::vector<std::uint32_t> results{block_.operators[producer].outputs[0]};
    for (std::uint32_t e : chain) results.push_back(block_.operators[e].outputs[0]);
    const std::uint32_t last = results.back();
    if (!located_[last]) {
        const std::uint32_t live_end =
            readers_[last] == 0 && !is_output_[last] ? position_ : last_use_[last];
        auto placed = place(last, std::max(live_end, position_), position_);
        if (!placed) return fail(std::move(placed.error()));
    }
    for (std::uint32_t tensor : results) locate(tensor, plan_.locations[last]);
    for (std::size_t k = 0; k < chain.size(); ++k) {
        const Operator& e = block_.operators[chain[k]];
        for (std::size_t i = 0; i < e.inputs.size(); ++i) {
            const std::uint32_t tensor = e.inputs[i];
            if (tensor == results[k] || compile_time(e, i)) continue;
            if (auto location = input_location(tensor, chain[k]); !location)
                return fail(std::move(location.error()));
            extra_reads.push_back(tensor);
        }
    }
    return {};
}

bool Planner::compile_time(const Operator& op, std::size_t index) const
{
    const std::uint32_t tensor = op.inputs[index];
    if (info_.values[tensor].kind != ValueKind::constant) return false;
    return block_.tensors[tensor].dtype == DType::shape || compile_time_operand(op.op, index);
}

Result<Location> Planner::place(std::uint32_t tensor, std::uint32_t live_end,
                                std::uint32_t written_at)
{
    auto region = arena_.allocate(info_.values[tensor].bytes, live_end, written_at);
    if (!region) return fail(std::move(region.error()));
    const ArenaRegion& r = arena_.region(*region);
    Location location{Location::Kind::arena, 0, r.offset, info_.values[tensor].bytes, *region};
    locate(tensor, location);
    return location;
}

Result<Location> Planner::input_location(std::uint32_t tensor, std::uint32_t op_index)
{
    if (located_[tensor]) return plan_.locations[tensor];
    if (info_.values[tensor].kind != ValueKind::constant)
        return fail(graph_error(0, fmt::format("{} reads '{}' before anything wrote it",
                                               where(op_index), block_.tensors[tensor].name)));
    // Uploaded before the first dispatch (written at position 0) and kept for
    // the whole program (see the constant rule in plan.hpp).
    auto location = place(tensor, forever, 0);
    if (!location) return location;
    plan_.constants.push_back({tensor, location->offset, block_.tensors[tensor].data});
    return location;
}

Result<Location> Planner::output_location(std::uint32_t tensor)
{
    if (located_[tensor]) return plan_.locations[tensor];
    // A result nobody reads still needs bytes for the dispatch that writes it.
    const std::uint32_t live_end =
        readers_[tensor] == 0 && !is_output_[tensor] ? position_ : last_use_[tensor];
    return place(tensor, std::max(live_end, position_), position_);
}

MemoryRange Planner::range(std::uint32_t tensor) const
{
    const Location& l = plan_.locations[tensor];
    if (l.is_slot()) return MemoryRange::of_slot(l.slot);
    if (l.kind == Location::Kind::state) return MemoryRange::of_state(l.slot);
    if (l.kind == Location::Kind::captured) return MemoryRange::of_captured(l.slot);
    const ArenaRegion& r = arena_.region(l.region);
    return MemoryRange::of_arena(r.offset, r.offset + r.bytes);
}

Status Planner::plan_operator(std::uint32_t op_index)
{
    if (absorbed_[op_index]) return {};  // computed by its producer's dispatches
    const Operator& op = block_.operators[op_index];
    OperatorView view;
    view.op_index = op_index;
    view.op = &op;
    view.block = &block_;
    view.locations = &plan_.locations;
    std::vector<std::uint32_t> written_variables;
    for (std::size_t i = 0; i < op.inputs.size(); ++i) {
        if (compile_time(op, i)) continue;
        const std::uint32_t tensor = op.inputs[i];
        if (op.op == Op::variable_write && block_.tensors[tensor].variable) {
            written_variables.push_back(tensor);  // the variable is what it writes
            continue;
        }
        auto location = input_location(tensor, op_index);
        if (!location) return fail(std::move(location.error()));
        view.inputs.push_back(tensor);
    }
    for (std::uint32_t tensor : info_.operators[op_index].implicit_inputs) {
        if (auto location = input_location(tensor, op_index); !location)
            return fail(std::move(location.error()));
        view.implicit_inputs.push_back(tensor);
    }

    if (is_view_op(op.op) && !view.inputs.empty() && op.outputs.size() == 1) {
        const std::uint32_t source = view.inputs[0];
        const std::uint32_t result = op.outputs[0];
        const Location::Kind kind = plan_.locations[source].kind;
        // Never a view of a variable: a later write would change what it reads.
        const bool same_bytes = block_.tensors[source].dtype == block_.tensors[result].dtype &&
                                info_.values[source].bytes == info_.values[result].bytes &&
                                kind != Location::Kind::state;
        if (same_bytes && !located_[result]) {
            // A view: the result is the source's bytes under another shape.
            Location location = plan_.locations[source];
            location.bytes = info_.values[result].bytes;
            if (location.is_arena()) arena_.extend(location.region, last_use_[result]);
            locate(result, location);
            return {};
        }
        if (same_bytes && plan_.locations[result] == plan_.locations[source])
            return {};  // aliased onto the output slot: the producer already wrote it
    }

    std::vector<std::uint32_t> epilogue_reads;
    if (!epilogue_[op_index].empty()) {
        if (auto located = locate_epilogue(op_index, epilogue_reads); !located)
            return located;
        view.epilogue = epilogue_[op_index];
    }
    for (std::uint32_t tensor : op.outputs)
        if (auto location = output_location(tensor); !location)
            return fail(std::move(location.error()));
    view.outputs = op.outputs;
    view.outputs.insert(view.outputs.end(), written_variables.begin(), written_variables.end());

    auto requests = lowerer_(view);
    if (!requests) return fail(std::move(requests.error()));
    for (DispatchRequest& request : *requests) {
        // Whatever the lowering says, a dispatch of a chain reads its
        // operands: ordering never depends on the backend remembering them.
        for (std::uint32_t tensor : epilogue_reads)
            if (std::ranges::find(request.reads, tensor) == request.reads.end())
                request.reads.push_back(tensor);
        std::vector<MemoryRange> reads;
        std::vector<MemoryRange> writes;
        for (std::uint32_t tensor : request.reads) reads.push_back(range(tensor));
        for (std::uint32_t tensor : request.writes) writes.push_back(range(tensor));
        const std::uint32_t writer = request.writes.empty() ? no_operator : request.writes[0];
        Dispatch dispatch;
        dispatch.op_index = op_index;
        dispatch.op = op.op;
        dispatch.barrier_before = hazards_.record(reads, writes, writer);
        dispatch.kernel = std::move(request.kernel);
        dispatch.reads = std::move(request.reads);
        dispatch.writes = std::move(request.writes);
        dispatch.fused = epilogue_[op_index];
        plan_.dispatches.push_back(std::move(dispatch));
    }
    return {};
}

Status Planner::finish_outputs()
{
    for (std::uint32_t tensor : block_.outputs) {
        if (located_[tensor]) continue;
        // Only a staged output can still be unplaced: a passthrough of a
        // constant is uploaded like any constant; anything else had no writer.
        if (info_.values[tensor].kind == ValueKind::constant) {
            if (auto placed = input_location(tensor, 0); !placed) return fail(placed.error());
            continue;
        }
        return fail(graph_error(0, fmt::format("{}: output '{}' is written by no live operator",
                                               where_block(), block_.tensors[tensor].name)));
    }
    if (!options_.stage_outputs)
        for (std::uint32_t tensor : block_.outputs) {
            const ValueKind kind = info_.values[tensor].kind;
            if (kind == ValueKind::constant || kind == ValueKind::block_input ||
                kind == ValueKind::variable || kind == ValueKind::captured)
                return fail(graph_error(
                    0, fmt::format("{}: output '{}' is a {}, which only a backend that stages its "
                                   "outputs can return",
                                   where_block(), block_.tensors[tensor].name,
                                   value_kind_name(kind))));
        }
    return {};
}

Result<ProgramPlan> Planner::run()
{
    if (auto refused = refuse_unplannable(); !refused) return fail(refused.error());
    locate_state_and_captured();
    if (auto slots = lay_out_slots(); !slots) return fail(slots.error());
    measure_lifetimes();
    alias_outputs();
    find_epilogues();
    for (std::uint32_t index : info_.live_order) {
        if (is_data_op(block_.operators[index].op)) continue;
        if (auto planned = plan_operator(index); !planned) return fail(planned.error());
        ++position_;
    }
    if (auto outputs = finish_outputs(); !outputs) return fail(outputs.error());
    plan_.arena_bytes = arena_.bytes();
    plan_.regions = arena_.regions();
    return std::move(plan_);
}

}  // namespace

Result<ProgramPlan> plan_block(const Graph& graph, const Analysis& analysis, BlockRef ref,
                               const PlanOptions& options, const Lowerer& lowerer)
{
    if (ref.region >= graph.regions.size() || ref.block >= graph.regions[ref.region].blocks.size() ||
        ref.region >= analysis.regions.size() ||
        ref.block >= analysis.regions[ref.region].blocks.size())
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_REGIONS)
                        .with_note(fmt::format("block {} of region {} does not exist", ref.block,
                                               ref.region)));
    return Planner(graph, analysis, ref, options, lowerer).run();
}

}  // namespace vaccel::tosa
