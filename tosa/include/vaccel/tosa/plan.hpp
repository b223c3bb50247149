// plan.hpp - the device-independent execution plan of one analyzed TOSA block.
//
// Owns: plan_block(), which turns a block that analyze() accepted into what
// every backend needs before it records anything device-specific: binding
// slots, where every tensor's bytes live (a slot, a range of one arena, or
// nowhere), the constants to write into the arena at load, and the ordered
// dispatches with their kernel specs, the byte ranges they read and write
// and whether a barrier must precede them. The CPU, Vulkan and CUDA backends
// share it; a backend says how one operator becomes dispatches through a
// Lowerer (the default emits one dispatch per operator).
//
// Decides (docs/adr/0010-shared-plan.md says why):
//  - slots: the block inputs take slots 0..inputs-1, the block outputs the
//    following ones, both in declared order; the arena is buffer number
//    `slots.size()` when arena_bytes is non-zero;
//  - arena: one region per computed tensor, packed by lifetime at the lowest
//    offset free of every region whose life overlaps it, sizes rounded up to
//    arena_alignment (256 bytes, every element type and every device's
//    storage-buffer offset alignment we know of);
//  - constants are written before the first dispatch and live for the whole
//    program: their region must not share bytes with any region allocated
//    before them, even one whose tensor is already dead (the dispatch that
//    wrote the dead tensor runs after the upload and would overwrite it);
//  - views: RESHAPE and IDENTITY whose result is an intermediate take the
//    source's location (an arena region, whose life they extend, or a bound
//    input slot, read-only for the whole run); no dispatch;
//  - output aliasing (with PlanOptions::alias_outputs): a block output that
//    RESHAPE or IDENTITY makes from an intermediate nothing else reads is
//    written by that intermediate's producer straight into the output slot,
//    and the copy disappears;
//  - hazards are tracked on byte ranges (a slot, or [offset, end) of the
//    arena), not on tensors, because packing hands a dead tensor's bytes to a
//    later one: a dispatch needs a barrier before it when it reads bytes
//    written since the last barrier (RAW), writes bytes read since then (WAR),
//    or writes bytes written since then by a dispatch of another operator
//    output (WAW; the segments of one CONCAT write disjoint parts of one
//    tensor and need no order among themselves);
//  - epilogues (PlanOptions::epilogue, for a backend whose kernels apply
//    them): an operator P with one result T0 may absorb a chain E1..En of
//    operators, each the only reader of the previous result T(k-1) (never a
//    block output), of its shape and dtype, whose other operands exist
//    before P runs (constants, block inputs, results of operators planned
//    before P). T0..Tn then share Tn's bytes, P's dispatches read the
//    chain's other operands too and write Tn, E1..En dispatch nothing, and
//    Dispatch::fused names them; the backend's filter says which chains its
//    kernels compute (it is asked one link at a time);
//  - compile-time operands (shift, zero points, SHAPE operands, PAD's
//    pad_const...; see compile_time_operand()) that are serialized constants
//    are read at plan time by the backend and get no location.
//  - control flow (PlanOptions::control_flow, for a backend that runs it):
//    every block is planned on its own; a COND_IF/WHILE_LOOP is one dispatch
//    that reads its operands and every tensor its blocks read by name, and
//    writes its results; a variable tensor lives in the backend's state
//    (Location::Kind::state, never a view: a later write would change what
//    the view reads), a tensor read from an enclosing block lives there
//    (Location::Kind::captured, read-only while the block runs); VARIABLE
//    declarations dispatch nothing, VARIABLE_WRITE writes its variable.
// What plan_block() refuses (Unsupported, VACCEL_D_TOSA_GRAPH), without
// control_flow: COND_IF / WHILE_LOOP (arg0 = VACCEL_TOSA_CONTROL_FLOW),
// variables (VACCEL_TOSA_VARIABLES), captured tensors (VACCEL_TOSA_REGIONS);
// always: a program whose arena would pass max_arena_bytes (ResourceLimit,
// VACCEL_D_LIMIT).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "vaccel/common/error.hpp"
#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::tosa {

inline constexpr std::uint64_t arena_alignment = 256;
// The largest arena a plan lays out (16 GiB): beyond any one device's
// buffer limit we serve, and far below overflow of the offsets.
inline constexpr std::uint64_t max_arena_bytes = std::uint64_t{16} << 30;
// The most dimensions a plan's row-major helpers handle (VACCEL_MAX_RANK).
inline constexpr std::size_t max_plan_rank = 6;

// Row-major element strides of `shape` (the last dimension has stride 1).
std::vector<std::uint64_t> row_major_strides(std::span<const std::int64_t> shape);
// `values` with leading `fill` entries up to max_plan_rank entries.
std::vector<std::int64_t> pad_leading(std::span<const std::int64_t> values, std::int64_t fill);

// ----- arena packing ---------------------------------------------------------

// One arena region: [offset, offset + bytes), live until the dispatch at
// execution position `live_end` has read it (UINT32_MAX: the whole program).
struct ArenaRegion {
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
    std::uint32_t live_end = 0;

    friend bool operator==(const ArenaRegion&, const ArenaRegion&) = default;
};

// Packs regions by lifetime. Positions are indices into the execution order
// of live operators; a region first written at position p may take bytes of
// every region whose life ended before p.
class ArenaPacker {
public:
    // A region of `bytes` (rounded up to arena_alignment, at least one unit)
    // first written at `written_at` and live through `live_end`, at the lowest
    // offset free of every region still live at `written_at`. Its index, or
    // ResourceLimit past max_arena_bytes.
    Result<std::uint32_t> allocate(std::uint64_t bytes, std::uint32_t live_end,
                                   std::uint32_t written_at);
    // A view extends its source's life.
    void extend(std::uint32_t region, std::uint32_t live_end);

    const ArenaRegion& region(std::uint32_t index) const { return regions_[index]; }
    const std::vector<ArenaRegion>& regions() const { return regions_; }
    std::uint64_t bytes() const { return bytes_; }  // the arena's size: the highest end

private:
    std::vector<ArenaRegion> regions_;
    std::uint64_t bytes_ = 0;
};

// ----- locations and hazards ------------------------------------------------

// Where a tensor's bytes live while the block runs.
struct Location {
    enum class Kind : std::uint8_t {
        none,      // nowhere: a compile-time operand, a dead or unread tensor
        slot,      // a bound buffer: bytes [0, bytes) of slot `slot`
        arena,     // the program's arena: [offset, offset + bytes)
        state,     // variable ProgramPlan::variables[slot], kept by the backend
        captured,  // ProgramPlan::captured[slot]: an enclosing block's tensor
    };
    Kind kind = Kind::none;
    std::uint32_t slot = 0;    // slot, state or captured index
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;  // the tensor's own bytes (not rounded)
    std::uint32_t region = 0; // Kind::arena: the ArenaPacker region

    bool is_slot() const { return kind == Kind::slot; }
    bool is_arena() const { return kind == Kind::arena; }
    friend bool operator==(const Location&, const Location&) = default;
};

// A byte range for hazard tracking: a whole slot, variable or captured
// tensor, or [offset, end) of the arena.
struct MemoryRange {
    enum class Space : std::uint8_t { slot, arena, state, captured };
    Space space = Space::slot;
    std::uint32_t index = 0;  // slot, state, captured
    std::uint64_t offset = 0;
    std::uint64_t end = 0;

    static MemoryRange of_slot(std::uint32_t slot) { return {Space::slot, slot, 0, 0}; }
    static MemoryRange of_arena(std::uint64_t offset, std::uint64_t end)
    {
        return {Space::arena, 0, offset, end};
    }
    static MemoryRange of_state(std::uint32_t index) { return {Space::state, index, 0, 0}; }
    static MemoryRange of_captured(std::uint32_t index)
    {
        return {Space::captured, index, 0, 0};
    }
    bool overlaps(const MemoryRange& other) const;

    friend bool operator==(const MemoryRange&, const MemoryRange&) = default;
};

// Decides the barriers between dispatches that run in recorded order but may
// overlap on a device (see the top of this file).
class HazardTracker {
public:
    // Records one dispatch; true when a barrier must precede it (which also
    // starts a new epoch: everything before it is then ordered).
    // `writer` identifies the tensor written: writes of the same writer do
    // not order against each other (CONCAT segments).
    bool record(std::span<const MemoryRange> reads, std::span<const MemoryRange> writes,
                std::uint32_t writer);

private:
    std::vector<std::pair<MemoryRange, std::uint32_t>> written_;  // since the last barrier
    std::vector<MemoryRange> read_;
};

// ----- dispatches -------------------------------------------------------------

// What a backend's lowering asks for: one kernel launch.
struct KernelSpec {
    std::uint32_t kernel = 0;        // backend-defined kernel identity
    std::vector<std::uint32_t> spec; // specialization words, in the kernel's declared order
    std::uint64_t work = 0;          // work items (the backend sizes the grid)

    friend bool operator==(const KernelSpec&, const KernelSpec&) = default;
};

struct DispatchRequest {
    KernelSpec kernel;
    std::vector<std::uint32_t> reads;   // tensors read (indices into Block::tensors)
    std::vector<std::uint32_t> writes;  // tensors written, each an output of the operator
};

// What a Lowerer sees of one operator: its tensors with their locations.
struct OperatorView {
    std::uint32_t op_index = 0;
    const Operator* op = nullptr;
    const Block* block = nullptr;
    // Data operands (compile-time constants excluded; for VARIABLE_WRITE,
    // the variable is a result), the tensors its blocks read by name
    // (COND_IF, WHILE_LOOP), and results.
    std::vector<std::uint32_t> inputs;
    std::vector<std::uint32_t> implicit_inputs;
    std::vector<std::uint32_t> outputs;
    const std::vector<Location>* locations = nullptr;  // per tensor
    // Operators folded into this one (PlanOptions::epilogue), in order: the
    // first reads this operator's result, each next one the previous one's,
    // and the last one's result is what the dispatches write (every result
    // of the chain has that location).
    std::vector<std::uint32_t> epilogue;

    const Location& location(std::uint32_t tensor) const { return (*locations)[tensor]; }
};

// One link the planner offers to a backend's epilogue filter: operator
// `consumer` of `block` reads the result of `producer` (directly, or through
// the `stages` links accepted before it) as its input number `input`.
struct EpilogueLink {
    const Block* block = nullptr;
    std::uint32_t producer = 0;
    std::uint32_t consumer = 0;
    std::uint32_t input = 0;
    std::size_t stages = 0;
};
using EpilogueFilter = std::function<bool(const EpilogueLink&)>;

// Turns one operator into dispatches (in order). Views, CONST and dead
// operators never reach it. A refusal stops planning and is returned as is.
using Lowerer = std::function<Result<std::vector<DispatchRequest>>(const OperatorView&)>;

// One dispatch: the operator (op_index) with its kernel, after hazards.
struct Dispatch {
    std::uint32_t op_index = 0;
    Op op = Op::unknown;
    KernelSpec kernel;
    std::vector<std::uint32_t> reads;
    std::vector<std::uint32_t> writes;
    bool barrier_before = false;
    std::vector<std::uint32_t> fused;  // the operators of its epilogue (OperatorView::epilogue)

    friend bool operator==(const Dispatch&, const Dispatch&) = default;
};

enum class SlotRole : std::uint8_t { input, output };

struct SlotPlan {
    std::uint32_t slot = 0;
    SlotRole role = SlotRole::input;
    std::uint32_t tensor = 0;
    DType dtype = DType::unknown;
    std::vector<std::int64_t> shape;
    std::uint64_t bytes = 0;  // exact tensor bytes: what a binding of this slot must cover

    friend bool operator==(const SlotPlan&, const SlotPlan&) = default;
};

// Serialized bytes written into the arena at load, before the first dispatch.
struct ConstantPlan {
    std::uint32_t tensor = 0;
    std::uint64_t offset = 0;
    std::vector<std::uint8_t> bytes;

    friend bool operator==(const ConstantPlan&, const ConstantPlan&) = default;
};

struct PlanOptions {
    // Write outputs produced through RESHAPE/IDENTITY straight into their slot.
    bool alias_outputs = true;
    // Give every block output an arena region as well (live to the end), so
    // a backend that must not touch output buffers before the run succeeds
    // (the CPU backend, for its deadline rule) computes there and copies the
    // outputs at the end. Implies no output aliasing.
    bool stage_outputs = false;
    // The backend runs COND_IF, WHILE_LOOP and variables (see above).
    bool control_flow = false;
    // Fold elementwise chains into their producers (see above); empty: none.
    // Not with stage_outputs or control_flow.
    EpilogueFilter epilogue;
};

struct ProgramPlan {
    std::vector<SlotPlan> slots;        // inputs, then outputs
    std::uint32_t input_count = 0;
    std::uint64_t arena_bytes = 0;      // 0: no arena
    std::vector<ConstantPlan> constants;
    std::vector<Dispatch> dispatches;   // execution order
    std::vector<Location> locations;    // per tensor of the block
    // Per tensor: the location of the bytes a staged output is computed in
    // (stage_outputs), equal to `locations` otherwise.
    std::vector<Location> staged;
    std::vector<ArenaRegion> regions;   // the packer's regions, for inspection
    // control_flow: the variables the block touches (Variable::name, the
    // identity across blocks), and its captured tensors (indices into
    // Block::tensors; an enclosing block's tensor of the same name).
    std::vector<std::string> variables;
    std::vector<std::uint32_t> captured;

    std::uint32_t arena_buffer_index() const { return static_cast<std::uint32_t>(slots.size()); }
    std::uint32_t buffer_count() const
    {
        return static_cast<std::uint32_t>(slots.size()) + (arena_bytes != 0 ? 1u : 0u);
    }

    friend bool operator==(const ProgramPlan&, const ProgramPlan&) = default;
};

// True when operand `index` of `op` is read at plan time, not at run time,
// when it is a serialized constant: MUL's shift, the zero points of MATMUL,
// the convolutions, the pools and NEGATE, every SHAPE operand, PAD's
// pad_const, RESCALE's multiplier/shift/zero points, RESIZE's scale, offset
// and border, TABLE's table is data (false).
bool compile_time_operand(Op op, std::size_t index);

// One dispatch per operator, reading its data operands and implicit inputs
// and writing its results;
// KernelSpec::kernel is the Op number, no specialization words, work = the
// first result's element count.
Result<std::vector<DispatchRequest>> default_lowering(const OperatorView& view);

// Plans block `ref` of `graph`. `analysis` is analyze(graph)'s result.
Result<ProgramPlan> plan_block(const Graph& graph, const Analysis& analysis, BlockRef ref,
                               const PlanOptions& options = {},
                               const Lowerer& lowerer = default_lowering);

}  // namespace vaccel::tosa
