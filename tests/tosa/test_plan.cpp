// test_plan.cpp - plan_block(): slots, lifetime packing, the constant rule,
// views, output aliasing, staged outputs, byte-range hazards and refusals,
// on built graphs and the real fixtures. Offsets are derived by hand in the
// comments (regions are rounded to 256 bytes).
#include <algorithm>
#include <cstring>
#include <string>

#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/plan.hpp"

#include "support.hpp"

using namespace vaccel;
using namespace vaccel::tosa;
using namespace vaccel::tosa::test;

namespace {

constexpr std::uint64_t unit = arena_alignment;

struct Planned {
    Graph graph;
    Analysis analysis;
    ProgramPlan plan;
};

Result<ProgramPlan> plan_of(const Graph& graph, const PlanOptions& options = {},
                            const Lowerer& lowerer = default_lowering)
{
    auto analysis = analyze(graph);
    if (!analysis) fail_msg("analyze refused: %s", analysis.error().note.c_str());
    return plan_block(graph, *analysis, {0, 0}, options, lowerer);
}

ProgramPlan plan_ok(const Graph& graph, const PlanOptions& options = {},
                    const Lowerer& lowerer = default_lowering)
{
    auto plan = plan_of(graph, options, lowerer);
    if (!plan) fail_msg("plan refused: %s", plan.error().note.c_str());
    return std::move(*plan);
}

void expect_refusal(const Result<ProgramPlan>& result, Errc code, std::uint32_t detail,
                    std::uint64_t arg0, const char* note_part)
{
    if (result.has_value()) fail_msg("plan accepted a block it must refuse (%s)", note_part);
    const Error& e = result.error();
    if (e.code != code || e.detail != detail || e.arg0 != arg0)
        fail_msg("expected code %u detail %u arg0 %llu, got code %u detail %u arg0 %llu (%s)",
                 static_cast<unsigned>(code), detail, static_cast<unsigned long long>(arg0),
                 static_cast<unsigned>(e.code), e.detail,
                 static_cast<unsigned long long>(e.arg0), e.note.c_str());
    if (e.note.find(note_part) == std::string::npos)
        fail_msg("note \"%s\" does not contain \"%s\"", e.note.c_str(), note_part);
}

std::vector<std::uint8_t> shape_bytes(std::vector<std::int64_t> values)
{
    std::vector<std::uint8_t> bytes(values.size() * 8);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

// ----- the packer and the tracker on their own (the reference design's plan tests) -----

void arena_regions_pack_by_lifetime(void**)
{
    ArenaPacker packer;
    const auto a = packer.allocate(100, 1, 0);
    const auto b = packer.allocate(100, 5, 0);
    assert_true(a && b);
    assert_int_equal(packer.region(*a).offset, 0);
    assert_int_equal(packer.region(*b).offset, unit);
    // Position 2: a is dead, its bytes are reused before the arena grows.
    const auto c = packer.allocate(unit, 9, 2);
    assert_true(c.has_value());
    assert_int_equal(packer.region(*c).offset, 0);
    const auto d = packer.allocate(1, 9, 2);
    assert_true(d.has_value());
    assert_int_equal(packer.region(*d).offset, 2 * unit);
    assert_int_equal(packer.bytes(), 3 * unit);
    // A region that straddles two freed ones takes the first gap that fits.
    const auto e = packer.allocate(2 * unit, 12, 10);
    assert_true(e.has_value());
    assert_int_equal(packer.region(*e).offset, 0);
}

// A constant first used at position 2 is written before position 0's
// dispatch runs, so the bytes of a (dead since position 1) are not free for
// it: that dispatch would overwrite the constant. An intermediate first
// written at position 2 may still take them.
void constants_never_share_bytes_with_earlier_intermediates(void**)
{
    ArenaPacker packer;
    const auto a = packer.allocate(64, 1, 0);
    assert_int_equal(packer.region(*a).offset, 0);
    const auto constant = packer.allocate(64, UINT32_MAX, 0);
    assert_int_equal(packer.region(*constant).offset, unit);
    const auto intermediate = packer.allocate(64, 3, 2);
    assert_int_equal(packer.region(*intermediate).offset, 0);
}

// Region a is read at position 1 and dies; at position 2 the packer gives
// its bytes to b. The dispatch writing b reads nothing written since the
// last barrier: only byte-range tracking orders it after a's reader (WAR).
void reused_arena_bytes_force_a_barrier_before_the_new_writer(void**)
{
    ArenaPacker packer;
    HazardTracker hazards;
    const MemoryRange slot0 = MemoryRange::of_slot(0);
    const MemoryRange slot1 = MemoryRange::of_slot(1);
    auto arena = [&](std::uint32_t region) {
        const ArenaRegion& r = packer.region(region);
        return MemoryRange::of_arena(r.offset, r.offset + r.bytes);
    };
    const std::uint32_t a_value = 10, b_value = 11;
    const auto a = *packer.allocate(64, 1, 0);
    std::vector<bool> barriers;
    barriers.push_back(hazards.record(std::vector{slot0}, std::vector{arena(a)}, a_value));
    barriers.push_back(hazards.record(std::vector{arena(a)}, std::vector{slot1}, b_value));
    const auto b = *packer.allocate(64, 3, 2);
    assert_int_equal(packer.region(b).offset, packer.region(a).offset);
    assert_int_not_equal(a, b);
    barriers.push_back(hazards.record(std::vector{slot0}, std::vector{arena(b)}, b_value));
    // RAW for the reader, WAR for the new writer.
    assert_true(barriers == (std::vector<bool>{false, true, true}));
    // Disjoint bytes carry no hazard.
    const auto c = *packer.allocate(64, 4, 3);
    assert_int_not_equal(packer.region(c).offset, packer.region(b).offset);
    assert_false(hazards.record(std::vector{slot0}, std::vector{arena(c)}, a_value));

    assert_true(MemoryRange::of_arena(0, 256).overlaps(MemoryRange::of_arena(255, 512)));
    assert_false(MemoryRange::of_arena(0, 256).overlaps(MemoryRange::of_arena(256, 512)));
    assert_false(MemoryRange::of_slot(0).overlaps(MemoryRange::of_arena(0, 256)));
    assert_true(MemoryRange::of_slot(3).overlaps(MemoryRange::of_slot(3)));
}

// Two writes of one tensor (CONCAT segments) need no order between them;
// a write of another tensor over the same bytes does (WAW).
void segments_of_one_writer_need_no_barrier(void**)
{
    HazardTracker hazards;
    const MemoryRange out = MemoryRange::of_arena(0, 512);
    assert_false(hazards.record(std::vector{MemoryRange::of_slot(0)}, std::vector{out}, 7));
    assert_false(hazards.record(std::vector{MemoryRange::of_slot(1)}, std::vector{out}, 7));
    assert_true(hazards.record(std::vector{MemoryRange::of_slot(2)},
                               std::vector{MemoryRange::of_arena(256, 768)}, 8));
}

void arena_limit_is_a_resource_limit(void**)
{
    ArenaPacker packer;
    const auto too_big = packer.allocate(max_arena_bytes + 1, 1, 0);
    assert_false(too_big.has_value());
    assert_int_equal(static_cast<int>(too_big.error().code), static_cast<int>(Errc::resource_limit));
    assert_int_equal(too_big.error().detail, VACCEL_D_LIMIT);
    assert_int_equal(too_big.error().limit, VACCEL_LIMIT_MEMORY_BYTES);
    // Two halves that fit alone do not fit together while both live.
    assert_true(packer.allocate(max_arena_bytes / 2 + unit, 5, 0).has_value());
    const auto second = packer.allocate(max_arena_bytes / 2, 5, 0);
    assert_false(second.has_value());
    assert_int_equal(second.error().arg1, max_arena_bytes / 2 + unit + max_arena_bytes / 2);
}

void padding_and_strides_follow_row_major_order(void**)
{
    const std::vector<std::int64_t> shape{2, 3, 4};
    assert_true(row_major_strides(shape) == (std::vector<std::uint64_t>{12, 4, 1}));
    assert_true(pad_leading(shape, 1) == (std::vector<std::int64_t>{1, 1, 1, 2, 3, 4}));
    assert_true(row_major_strides(std::vector<std::int64_t>{}).empty());
    assert_true(pad_leading(std::vector<std::int64_t>{}, 0) == std::vector<std::int64_t>(6, 0));
}

// ----- whole blocks -----------------------------------------------------------

// x -> EXP -> a -> LOG -> b -> SIGMOID -> c -> TANH -> y, 64 floats each
// (256 bytes, one unit). a lives 0..1, b 1..2, c 2..3: b is written while a
// is still read (position 1), so it goes to 256; c is written at 2, after
// a's last read, so it takes offset 0 again. Arena: 512 bytes.
void a_chain_packs_and_orders_its_dispatches(void**)
{
    GraphBuilder g;
    const auto x = g.tensor("x", {64}, DType::fp32);
    const auto a = g.tensor("a", {64}, DType::fp32);
    const auto b = g.tensor("b", {64}, DType::fp32);
    const auto c = g.tensor("c", {64}, DType::fp32);
    const auto y = g.tensor("y", {64}, DType::fp32);
    g.op(Op::exp, {x}, {a});
    g.op(Op::log, {a}, {b});
    g.op(Op::sigmoid, {b}, {c});
    g.op(Op::tanh, {c}, {y});
    g.input(x);
    g.output(y);
    const ProgramPlan plan = plan_ok(g.finish());

    assert_int_equal(plan.slots.size(), 2);
    assert_int_equal(plan.input_count, 1);
    assert_true(plan.slots[0].role == SlotRole::input && plan.slots[0].tensor == x);
    assert_true(plan.slots[1].role == SlotRole::output && plan.slots[1].tensor == y);
    assert_int_equal(plan.slots[1].slot, 1);
    assert_int_equal(plan.slots[1].bytes, 256);
    assert_int_equal(plan.arena_bytes, 512);
    assert_int_equal(plan.arena_buffer_index(), 2);
    assert_int_equal(plan.buffer_count(), 3);
    assert_true(plan.locations[a].is_arena() && plan.locations[a].offset == 0);
    assert_true(plan.locations[b].is_arena() && plan.locations[b].offset == unit);
    assert_true(plan.locations[c].is_arena() && plan.locations[c].offset == 0);
    assert_true(plan.locations[x].is_slot() && plan.locations[x].slot == 0);
    assert_true(plan.locations[y].is_slot() && plan.locations[y].slot == 1);

    assert_int_equal(plan.dispatches.size(), 4);
    const Op ops[] = {Op::exp, Op::log, Op::sigmoid, Op::tanh};
    for (std::size_t i = 0; i < 4; ++i) {
        assert_true(plan.dispatches[i].op == ops[i]);
        assert_int_equal(plan.dispatches[i].op_index, i);
        assert_int_equal(plan.dispatches[i].kernel.kernel, static_cast<std::uint32_t>(ops[i]));
        assert_int_equal(plan.dispatches[i].kernel.work, 64);
        // Each reads what the one before wrote.
        assert_int_equal(plan.dispatches[i].barrier_before, i != 0);
    }
}

// Epilogues (PlanOptions::epilogue): the filter is asked one link at a
// time, with the link's position; its "no" ends the chain there. A chain's
// results share one region placed when the producer runs (never a byte of
// its input's), and a second chain may read the first one's last result.
void epilogue_chains_ask_the_filter_link_by_link(void**)
{
    GraphBuilder g;
    const auto x = g.tensor("x", {64}, DType::fp32);
    const auto a = g.tensor("a", {64}, DType::fp32);
    const auto b = g.tensor("b", {64}, DType::fp32);
    const auto c = g.tensor("c", {64}, DType::fp32);
    const auto d = g.tensor("d", {64}, DType::fp32);
    const auto e = g.tensor("e", {64}, DType::fp32);
    const auto y = g.tensor("y", {64}, DType::fp32);
    g.op(Op::exp, {x}, {a});      // 0: producer of a chain
    g.op(Op::log, {a}, {b});      // 1: link 0
    g.op(Op::sigmoid, {b}, {c});  // 2: link 1, refused: a chain of its own
    g.op(Op::tanh, {c}, {d});     // 3: folded into SIGMOID
    g.op(Op::floor, {x}, {e});    // 4
    g.op(Op::add, {e, d}, {y});   // 5: d, a chain's last result, is ready: folded into FLOOR
    g.input(x);
    g.output(y);
    std::vector<std::pair<std::uint32_t, std::size_t>> asked;
    PlanOptions options;
    options.epilogue = [&](const EpilogueLink& link) {
        asked.emplace_back(link.consumer, link.stages);
        return link.consumer != 2;
    };
    const ProgramPlan plan = plan_ok(g.finish(), options);
    const std::vector<std::pair<std::uint32_t, std::size_t>> want_asked{
        {1, 0}, {2, 1}, {3, 0}, {5, 0}};
    assert_true(asked == want_asked);
    assert_int_equal(plan.dispatches.size(), 3);
    assert_int_equal(plan.dispatches[0].op_index, 0);
    assert_true(plan.dispatches[0].fused == std::vector<std::uint32_t>{1});
    assert_int_equal(plan.dispatches[1].op_index, 2);
    assert_true(plan.dispatches[1].fused == std::vector<std::uint32_t>{3});
    assert_int_equal(plan.dispatches[2].op_index, 4);
    assert_true(plan.dispatches[2].fused == std::vector<std::uint32_t>{5});
    // a and b share bytes, c and d theirs; y is the output slot, e too.
    assert_true(plan.locations[a] == plan.locations[b]);
    assert_true(plan.locations[c] == plan.locations[d]);
    assert_true(plan.locations[a].offset != plan.locations[c].offset);
    assert_true(plan.locations[e] == plan.locations[y] && plan.locations[y].is_slot());
    // FLOOR's dispatch reads d, which the SIGMOID chain wrote: a barrier.
    assert_true(std::ranges::find(plan.dispatches[2].reads, d) != plan.dispatches[2].reads.end());
    assert_true(plan.dispatches[2].barrier_before);
    // Without a filter nothing folds.
    assert_int_equal(plan_ok([&] {
                         GraphBuilder h;
                         const auto p = h.tensor("p", {4}, DType::fp32);
                         const auto q = h.tensor("q", {4}, DType::fp32);
                         const auto r = h.tensor("r", {4}, DType::fp32);
                         h.op(Op::exp, {p}, {q});
                         h.op(Op::log, {q}, {r});
                         h.input(p);
                         h.output(r);
                         return h.finish();
                     }())
                         .dispatches.size(),
                     2);
}

// EXP(x) and LOG(x) touch disjoint bytes: no barrier between them; ADD reads both.
void independent_dispatches_share_an_epoch(void**)
{
    GraphBuilder g;
    const auto x = g.tensor("x", {8}, DType::fp32);
    const auto a = g.tensor("a", {8}, DType::fp32);
    const auto b = g.tensor("b", {8}, DType::fp32);
    const auto y = g.tensor("y", {8}, DType::fp32);
    g.op(Op::exp, {x}, {a});
    g.op(Op::log, {x}, {b});
    g.op(Op::add, {a, b}, {y});
    g.input(x);
    g.output(y);
    const ProgramPlan plan = plan_ok(g.finish());
    assert_int_equal(plan.dispatches.size(), 3);
    assert_false(plan.dispatches[0].barrier_before);
    assert_false(plan.dispatches[1].barrier_before);
    assert_true(plan.dispatches[2].barrier_before);
    assert_true((plan.dispatches[2].reads == std::vector<std::uint32_t>{a, b}));
    assert_true((plan.dispatches[2].writes == std::vector<std::uint32_t>{y}));
}

// 0 EXP(x)->a, 1 RESHAPE(a)->r, 2 SIN(x)->s, 3 ADD(r', s)->y. r is a view
// of a, read at position 3, so a's bytes stay taken until then and s must
// not reuse them even though a itself is last read at position 1.
void views_extend_their_source_and_emit_nothing(void**)
{
    GraphBuilder g;
    const auto x = g.tensor("x", {2, 4}, DType::fp32);
    const auto a = g.tensor("a", {2, 4}, DType::fp32);
    const auto shape = g.tensor("shape", {2}, DType::shape, shape_bytes({4, 2}));
    const auto r = g.tensor("r", {4, 2}, DType::fp32);
    const auto xs = g.tensor("xs", {4, 2}, DType::fp32);
    const auto shape2 = g.tensor("shape2", {2}, DType::shape, shape_bytes({4, 2}));
    const auto s = g.tensor("s", {4, 2}, DType::fp32);
    const auto y = g.tensor("y", {4, 2}, DType::fp32);
    g.op(Op::exp, {x}, {a});
    g.op(Op::reshape, {a, shape}, {r});
    g.op(Op::reshape, {x, shape2}, {xs});  // a view of the input slot
    g.op(Op::sin, {xs}, {s});
    g.op(Op::add, {r, s}, {y});
    g.input(x);
    g.output(y);
    const ProgramPlan plan = plan_ok(g.finish());
    assert_int_equal(plan.dispatches.size(), 3);  // EXP, SIN, ADD
    assert_true(plan.locations[r] == plan.locations[a]);
    assert_true(plan.locations[xs].is_slot() && plan.locations[xs].slot == 0);
    assert_true(plan.locations[s].is_arena());
    assert_int_not_equal(plan.locations[s].offset, plan.locations[a].offset);
    // SHAPE operands are compile-time: no location, no constant upload.
    assert_true(plan.locations[shape].kind == Location::Kind::none);
    assert_true(plan.constants.empty());
}

// x -> EXP -> a -> RESHAPE -> y: EXP writes the output slot directly.
void outputs_alias_their_single_use_source(void**)
{
    auto build = [] {
        GraphBuilder g;
        const auto x = g.tensor("x", {2, 3}, DType::fp32);
        const auto a = g.tensor("a", {2, 3}, DType::fp32);
        const auto shape = g.tensor("shape", {1}, DType::shape, shape_bytes({6}));
        const auto y = g.tensor("y", {6}, DType::fp32);
        g.op(Op::exp, {x}, {a});
        g.op(Op::reshape, {a, shape}, {y});
        g.input(x);
        g.output(y);
        return g.finish();
    };
    const ProgramPlan aliased = plan_ok(build());
    assert_int_equal(aliased.dispatches.size(), 1);
    assert_true(aliased.locations[1].is_slot() && aliased.locations[1].slot == 1);
    assert_int_equal(aliased.arena_bytes, 0);
    assert_int_equal(aliased.buffer_count(), 2);

    PlanOptions no_alias;
    no_alias.alias_outputs = false;
    const ProgramPlan copied = plan_ok(build(), no_alias);
    assert_int_equal(copied.dispatches.size(), 2);
    assert_true(copied.dispatches[1].op == Op::reshape);  // a copy into the slot
    assert_true(copied.dispatches[1].barrier_before);
    assert_int_equal(copied.arena_bytes, unit);
}

// A second reader keeps the source in the arena: the copy stays.
void a_source_read_twice_is_not_aliased(void**)
{
    GraphBuilder g;
    const auto x = g.tensor("x", {4}, DType::fp32);
    const auto a = g.tensor("a", {4}, DType::fp32);
    const auto y = g.tensor("y", {4}, DType::fp32);
    const auto z = g.tensor("z", {4}, DType::fp32);
    g.op(Op::exp, {x}, {a});
    g.op(Op::identity, {a}, {y});
    g.op(Op::log, {a}, {z});
    g.input(x);
    g.output(y);
    g.output(z);
    const ProgramPlan plan = plan_ok(g.finish());
    assert_true(plan.locations[a].is_arena());
    assert_int_equal(plan.dispatches.size(), 3);
    assert_true(plan.dispatches[1].op == Op::identity);
}

// ADD(x, c) with c serialized: uploaded at load into its own region;
// MUL's shift is a compile-time operand and gets nothing.
void constants_are_uploaded_and_parameters_are_not(void**)
{
    GraphBuilder g;
    const auto x = g.tensor("x", {4}, DType::fp32);
    const float values[] = {1, 2, 3, 4};
    const auto c = g.constant_f32("c", {4}, values);
    const auto shift = g.tensor("shift", {1}, DType::int8, {0});
    const auto a = g.tensor("a", {4}, DType::fp32);
    const auto y = g.tensor("y", {4}, DType::fp32);
    g.op(Op::add, {x, c}, {a});
    g.op(Op::mul, {a, c, shift}, {y});
    g.input(x);
    g.output(y);
    const ProgramPlan plan = plan_ok(g.finish());
    assert_int_equal(plan.constants.size(), 1);
    assert_int_equal(plan.constants[0].tensor, c);
    assert_int_equal(plan.constants[0].offset, 0);
    assert_true(plan.constants[0].bytes == f32_bytes(values));
    assert_true(plan.locations[c].is_arena() && plan.locations[c].bytes == 16);
    assert_true(plan.locations[shift].kind == Location::Kind::none);
    assert_true(plan.locations[a].is_arena() && plan.locations[a].offset == unit);
    assert_true((plan.dispatches[1].reads == std::vector<std::uint32_t>{a, c}));
    assert_int_equal(plan.regions[0].live_end, UINT32_MAX);
}

// Staged outputs get arena bytes live to the end; a passthrough input and a
// duplicated output are then fine, and are refused without staging.
void staged_outputs_live_in_the_arena(void**)
{
    auto build = [] {
        GraphBuilder g;
        const auto x = g.tensor("x", {4}, DType::fp32);
        const auto a = g.tensor("a", {4}, DType::fp32);
        const auto y = g.tensor("y", {4}, DType::fp32);
        g.op(Op::exp, {x}, {a});
        g.op(Op::log, {a}, {y});
        g.input(x);
        g.output(y);
        g.output(x);
        g.output(y);
        return g.finish();
    };
    PlanOptions staged;
    staged.stage_outputs = true;
    const ProgramPlan plan = plan_ok(build(), staged);
    assert_int_equal(plan.slots.size(), 4);
    assert_true(plan.locations[2].is_arena());            // y, computed in the arena
    assert_true(plan.locations[0].is_slot());             // x, copied from its slot
    // a dies at position 1 while y is written there: distinct bytes.
    assert_int_not_equal(plan.locations[1].offset, plan.locations[2].offset);
    assert_int_equal(plan.regions[plan.locations[2].region].live_end, UINT32_MAX);

    expect_refusal(plan_of(build()), Errc::unsupported, VACCEL_D_TOSA_GRAPH, 0,
                   "more than once");
}

void an_input_passed_through_needs_staging(void**)
{
    GraphBuilder g;
    const auto x = g.tensor("x", {4}, DType::fp32);
    const float values[] = {1, 2, 3, 4};
    const auto c = g.constant_f32("c", {4}, values);
    g.input(x);
    g.output(c);
    Graph graph = g.finish();
    expect_refusal(plan_of(graph), Errc::unsupported, VACCEL_D_TOSA_GRAPH, 0, "output 'c'");
    PlanOptions staged;
    staged.stage_outputs = true;
    const ProgramPlan plan = plan_ok(graph, staged);
    assert_int_equal(plan.constants.size(), 1);
    assert_true(plan.locations[c].is_arena());
}

// A lowerer that splits CONCAT into one dispatch per segment, as a GPU
// backend does: segments share a writer and need no barrier among
// themselves; the reader of the result needs one.
void concat_segments_are_exempt(void**)
{
    GraphBuilder g;
    const auto x = g.tensor("x", {2, 2}, DType::fp32);
    const auto y = g.tensor("y", {2, 2}, DType::fp32);
    const auto j = g.tensor("j", {4, 2}, DType::fp32);
    const auto z = g.tensor("z", {4, 2}, DType::fp32);
    g.op(Op::concat, {x, y}, {j}, axis_attr(0));
    g.op(Op::exp, {j}, {z});
    g.input(x);
    g.input(y);
    g.output(z);
    Lowerer segments = [](const OperatorView& view) -> Result<std::vector<DispatchRequest>> {
        if (view.op->op != Op::concat) return default_lowering(view);
        std::vector<DispatchRequest> requests;
        for (std::uint32_t i = 0; i < view.inputs.size(); ++i)
            requests.push_back({{100, {i}, 4}, {view.inputs[i]}, view.outputs});
        return requests;
    };
    const ProgramPlan plan = plan_ok(g.finish(), {}, segments);
    assert_int_equal(plan.dispatches.size(), 3);
    assert_int_equal(plan.dispatches[0].kernel.kernel, 100);
    assert_true(plan.dispatches[1].kernel.spec == std::vector<std::uint32_t>{1});
    assert_false(plan.dispatches[0].barrier_before);
    assert_false(plan.dispatches[1].barrier_before);
    assert_true(plan.dispatches[2].barrier_before);
    assert_int_equal(plan.dispatches[0].op_index, plan.dispatches[1].op_index);
}

void a_lowering_refusal_is_returned_as_is(void**)
{
    GraphBuilder g;
    const auto x = g.tensor("x", {4}, DType::fp32);
    const auto y = g.tensor("y", {4}, DType::fp32);
    g.op(Op::erf, {x}, {y});
    g.input(x);
    g.output(y);
    Lowerer refuse = [](const OperatorView& view) -> Result<std::vector<DispatchRequest>> {
        return std::unexpected(Error::of(Errc::unsupported, VACCEL_D_TOSA_OPERATOR,
                                         static_cast<std::uint32_t>(view.op->op), 7)
                                   .with_note("no ERF kernel"));
    };
    expect_refusal(plan_of(g.finish(), {}, refuse), Errc::unsupported, VACCEL_D_TOSA_OPERATOR,
                   static_cast<std::uint32_t>(Op::erf), "no ERF kernel");
}

void dead_operators_get_no_bytes(void**)
{
    GraphBuilder g;
    const auto x = g.tensor("x", {4}, DType::fp32);
    const auto dead = g.tensor("dead", {1024}, DType::fp32);
    const auto y = g.tensor("y", {4}, DType::fp32);
    g.op(Op::exp, {x}, {y});
    g.op(Op::tile, {x, g.tensor("m", {1}, DType::shape, shape_bytes({256}))}, {dead});
    g.input(x);
    g.output(y);
    const ProgramPlan plan = plan_ok(g.finish());
    assert_int_equal(plan.dispatches.size(), 1);
    assert_int_equal(plan.arena_bytes, 0);
    assert_true(plan.locations[dead].kind == Location::Kind::none);
}

void control_flow_and_variables_are_refused(void**)
{
    expect_refusal(plan_of(cond_if_graph({1}, {2})), Errc::unsupported, VACCEL_D_TOSA_GRAPH,
                   VACCEL_TOSA_CONTROL_FLOW, "operator 0 (COND_IF) of block 'main'");
    const Graph lstm_graph = parse_ok(read_fixture(lstm));
    auto analysis = analyze(lstm_graph);
    assert_true(analysis.has_value());
    expect_refusal(plan_block(lstm_graph, *analysis, {0, 0}), Errc::unsupported,
                   VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_CONTROL_FLOW, "WHILE_LOOP");
    expect_refusal(plan_block(lstm_graph, *analysis, {9, 0}), Errc::invalid_argument,
                   VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_REGIONS, "does not exist");
}

void a_tensor_past_the_arena_limit_is_refused(void**)
{
    GraphBuilder g;
    const auto x = g.tensor("x", {1, 1}, DType::fp32);
    const std::int64_t wide = std::int64_t{1} << 30;
    const auto big = g.tensor("big", {8, wide}, DType::fp32);  // 2^33 floats: 32 GiB
    const auto y = g.tensor("y", {8, 1}, DType::fp32);
    g.op(Op::tile, {x, g.tensor("m", {2}, DType::shape, shape_bytes({8, wide}))}, {big});
    g.op(Op::reduce_sum, {big}, {y}, axis_attr(1));
    g.input(x);
    g.output(y);
    const auto plan = plan_of(g.finish());
    assert_false(plan.has_value());
    assert_int_equal(static_cast<int>(plan.error().code), static_cast<int>(Errc::resource_limit));
    assert_int_equal(plan.error().arg1, std::uint64_t{1} << 35);
}

// The real conv2d fixture: one input, one output, weight and bias uploaded,
// zero points (compile-time) not.
void plans_the_conv2d_fixture(void**)
{
    const Graph graph = parse_ok(read_fixture(conv2d));
    const ProgramPlan plan = plan_ok(graph);
    const Block& block = graph.regions[0].blocks[0];
    assert_int_equal(plan.slots.size(), 2);
    assert_int_equal(plan.dispatches.size(), 1);
    assert_true(plan.dispatches[0].op == Op::conv2d);
    assert_int_equal(plan.dispatches[0].reads.size(), 3);  // input, weight, bias
    assert_int_equal(plan.constants.size(), 2);
    std::uint64_t constant_bytes = 0;
    for (const ConstantPlan& c : plan.constants) {
        assert_true(c.bytes == block.tensors[c.tensor].data);
        assert_int_equal(c.offset % arena_alignment, 0);
        constant_bytes += (c.bytes.size() + unit - 1) / unit * unit;
    }
    assert_int_equal(plan.arena_bytes, constant_bytes);
    assert_true(plan.locations[plan.slots[1].tensor].is_slot());
}

void plans_the_int8_maxpool_fixture(void**)
{
    const Graph graph = parse_ok(read_fixture(maxpool2d));
    const ProgramPlan plan = plan_ok(graph);
    assert_int_equal(plan.dispatches.size(), 1);
    assert_true(plan.dispatches[0].op == Op::max_pool2d);
    assert_true(plan.slots[0].dtype == DType::int8);
    assert_int_equal(plan.arena_bytes, 0);
}

// The LSTM fixture with control flow: the main block's WHILE_LOOP is one
// dispatch reading its five operands and what its blocks read by name
// (layer_19 for the condition; the body's captured constants and the
// TRANSPOSE result layer_24); the variables live in state; IDENTITY of a
// variable is a copy (dispatch), IDENTITY into a variable writes the state.
void plans_the_lstm_blocks_with_control_flow(void**)
{
    const Graph graph = parse_ok(read_fixture(lstm));
    auto analysis = analyze(graph);
    assert_true(analysis.has_value());
    PlanOptions options;
    options.control_flow = true;
    options.stage_outputs = true;
    auto main = plan_block(graph, *analysis, {0, 0}, options);
    if (!main) fail_msg("main refused: %s", main.error().note.c_str());
    const Block& block = graph.regions[0].blocks[0];
    assert_int_equal(main->variables.size(), 2);
    assert_true(main->captured.empty());
    const std::uint32_t variable_1 = tensor_index(block, "Variable_1");
    const std::uint32_t variable_0 = tensor_index(block, "Variable_0");
    assert_true(main->locations[variable_1].kind == Location::Kind::state);
    assert_true(main->locations[variable_0].kind == Location::Kind::state);
    assert_int_not_equal(main->locations[variable_1].slot, main->locations[variable_0].slot);

    // IDENTITY(Variable_0), IDENTITY(Variable_1), TRANSPOSE, WHILE_LOOP, and
    // the two IDENTITYs into the variables; the RESHAPE to the output is a view.
    std::vector<Op> ops;
    for (const Dispatch& d : main->dispatches) ops.push_back(d.op);
    assert_true((ops == std::vector<Op>{Op::identity, Op::identity, Op::transpose,
                                        Op::while_loop, Op::identity, Op::identity}));
    const Dispatch& loop = main->dispatches[3];
    assert_true(loop.barrier_before);  // reads what the copies and TRANSPOSE wrote
    assert_int_equal(loop.writes.size(), 5);
    const std::uint32_t layer_24 = tensor_index(block, "layer_24");
    const std::uint32_t layer_19 = tensor_index(block, "layer_19");
    assert_true(std::ranges::find(loop.reads, layer_24) != loop.reads.end());
    assert_true(std::ranges::find(loop.reads, layer_19) != loop.reads.end());
    // The last two write the variables' state.
    assert_true(main->locations[main->dispatches[4].writes[0]].kind == Location::Kind::state);
    assert_true(main->locations[main->dispatches[5].writes[0]].kind == Location::Kind::state);
    // The copy of a variable is arena bytes of its own, not a view of state.
    const std::uint32_t layer_22 = tensor_index(block, "layer_22");
    assert_true(main->locations[layer_22].is_arena());

    // The body reads 20 tensors of main by name; each is captured.
    auto body = plan_block(graph, *analysis, {2, 0}, options);
    if (!body) fail_msg("body refused: %s", body.error().note.c_str());
    const Block& body_block = graph.regions[2].blocks[0];
    assert_int_equal(body->captured.size(), analysis->block({2, 0}).captured.size());
    const std::uint32_t captured_24 = tensor_index(body_block, "layer_24");
    assert_true(body->locations[captured_24].kind == Location::Kind::captured);
    assert_int_equal(body->slots.size(), 10);  // 5 inputs, 5 outputs
    // The cond block: one GREATER over a captured constant and an input.
    auto cond = plan_block(graph, *analysis, {1, 0}, options);
    assert_true(cond.has_value());
    assert_int_equal(cond->dispatches.size(), 1);
    assert_true(cond->dispatches[0].op == Op::greater);
    assert_true(cond->locations[tensor_index(graph.regions[1].blocks[0], "layer_19")].kind ==
                Location::Kind::captured);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arena_regions_pack_by_lifetime),
        cmocka_unit_test(constants_never_share_bytes_with_earlier_intermediates),
        cmocka_unit_test(reused_arena_bytes_force_a_barrier_before_the_new_writer),
        cmocka_unit_test(segments_of_one_writer_need_no_barrier),
        cmocka_unit_test(arena_limit_is_a_resource_limit),
        cmocka_unit_test(padding_and_strides_follow_row_major_order),
        cmocka_unit_test(a_chain_packs_and_orders_its_dispatches),
        cmocka_unit_test(independent_dispatches_share_an_epoch),
        cmocka_unit_test(views_extend_their_source_and_emit_nothing),
        cmocka_unit_test(outputs_alias_their_single_use_source),
        cmocka_unit_test(epilogue_chains_ask_the_filter_link_by_link),
        cmocka_unit_test(a_source_read_twice_is_not_aliased),
        cmocka_unit_test(constants_are_uploaded_and_parameters_are_not),
        cmocka_unit_test(staged_outputs_live_in_the_arena),
        cmocka_unit_test(an_input_passed_through_needs_staging),
        cmocka_unit_test(concat_segments_are_exempt),
        cmocka_unit_test(a_lowering_refusal_is_returned_as_is),
        cmocka_unit_test(dead_operators_get_no_bytes),
        cmocka_unit_test(control_flow_and_variables_are_refused),
        cmocka_unit_test(a_tensor_past_the_arena_limit_is_refused),
        cmocka_unit_test(plans_the_conv2d_fixture),
        cmocka_unit_test(plans_the_int8_maxpool_fixture),
        cmocka_unit_test(plans_the_lstm_blocks_with_control_flow),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
