// fuzz_tosa.cpp - libFuzzer target: a TOSA file through parse, analyze,
// admit (against the three tiers) and plan (every block, staged outputs or
// not, control flow or not).
//
// Property: any byte string is either refused with an Error at some stage,
// or passes it; nothing crashes, reads out of bounds or hangs. What passes is
// consistent:
//  - analysis: every block's order lists each of its operators once, each
//    after the producers of what it reads;
//  - plan: every tensor a dispatch touches has a location inside its slot or
//    the arena, and replaying the dispatches in order never reads arena
//    bytes that another region's writer has overwritten since they were
//    written (lifetime packing and the constant rule are sound).
// Seeded (make fuzz) with the repository's TOSA fixtures.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/capability.hpp"
#include "vaccel/tosa/graph.hpp"
#include "vaccel/tosa/plan.hpp"

namespace {

using vaccel::tosa::Location;
using vaccel::tosa::ProgramPlan;

void check_location(const ProgramPlan& plan, const Location& l)
{
    switch (l.kind) {
    case Location::Kind::none: std::abort();  // touched but placed nowhere
    case Location::Kind::slot:
        if (l.slot >= plan.slots.size()) std::abort();
        return;
    case Location::Kind::state:
        if (l.slot >= plan.variables.size()) std::abort();
        return;
    case Location::Kind::captured:
        if (l.slot >= plan.captured.size()) std::abort();
        return;
    case Location::Kind::arena: break;
    }
    if (l.region >= plan.regions.size() || l.offset != plan.regions[l.region].offset ||
        l.offset + l.bytes > plan.arena_bytes || l.bytes > plan.regions[l.region].bytes)
        std::abort();
}

// Replays the dispatches: a region is valid once written (constants: at
// load) and invalid once another region over any of its bytes is written.
void replay(const ProgramPlan& plan)
{
    std::vector<bool> valid(plan.regions.size(), false);
    auto overlap = [&](std::uint32_t a, std::uint32_t b) {
        const auto& x = plan.regions[a];
        const auto& y = plan.regions[b];
        return x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
    };
    auto write = [&](std::uint32_t region) {
        for (std::uint32_t other = 0; other < plan.regions.size(); ++other)
            if (other != region && overlap(region, other)) valid[other] = false;
        valid[region] = true;
    };
    for (const auto& constant : plan.constants) {
        const Location& l = plan.locations[constant.tensor];
        check_location(plan, l);
        write(l.region);
    }
    for (const auto& dispatch : plan.dispatches) {
        for (std::uint32_t tensor : dispatch.reads) {
            const Location& l = plan.locations[tensor];
            check_location(plan, l);
            if (l.is_arena() && !valid[l.region]) std::abort();  // clobbered or never written
        }
        for (std::uint32_t tensor : dispatch.writes) {
            const Location& l = plan.locations[tensor];
            check_location(plan, l);
            if (!l.is_arena()) continue;
            // A dispatch never writes over bytes it reads (no kernel runs in place).
            for (std::uint32_t input : dispatch.reads) {
                const Location& in = plan.locations[input];
                if (in.is_arena() && in.region != l.region && overlap(in.region, l.region))
                    std::abort();
            }
        }
        for (std::uint32_t tensor : dispatch.writes)
            if (plan.locations[tensor].is_arena()) write(plan.locations[tensor].region);
    }
    // Staged outputs are read after the last dispatch.
    for (const auto& slot : plan.slots) {
        const Location& l = plan.locations[slot.tensor];
        check_location(plan, l);
        if (slot.role == vaccel::tosa::SlotRole::output && l.is_arena() && !valid[l.region])
            std::abort();
    }
}

void plan_everything(const vaccel::tosa::Graph& graph, const vaccel::tosa::Analysis& analysis)
{
    for (const auto& descriptor :
         {vaccel::tosa::fp32_tier(), vaccel::tosa::fp16_tier(), vaccel::tosa::fp8_tier()})
        (void)vaccel::tosa::admit(graph, analysis, descriptor);
    for (std::uint32_t r = 0; r < graph.regions.size(); ++r)
        for (std::uint32_t b = 0; b < graph.regions[r].blocks.size(); ++b)
            for (int mode = 0; mode < 4; ++mode) {
                vaccel::tosa::PlanOptions options;
                options.stage_outputs = (mode & 1) != 0;
                options.control_flow = (mode & 2) != 0;
                auto plan = vaccel::tosa::plan_block(graph, analysis, {r, b}, options);
                if (!plan) continue;
                if (plan->slots.size() != graph.regions[r].blocks[b].inputs.size() +
                                              graph.regions[r].blocks[b].outputs.size())
                    std::abort();
                replay(*plan);
            }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto bytes = std::as_bytes(std::span(data, size));
    auto graph = vaccel::tosa::parse(bytes);
    if (!graph)
        return 0;
    auto analysis = vaccel::tosa::analyze(*graph);
    if (!analysis)
        return 0;
    if (analysis->regions.size() != graph->regions.size())
        std::abort();
    for (std::size_t r = 0; r < graph->regions.size(); ++r) {
        const auto& blocks = graph->regions[r].blocks;
        if (analysis->regions[r].blocks.size() != blocks.size())
            std::abort();
        for (std::size_t b = 0; b < blocks.size(); ++b) {
            const auto& order = analysis->regions[r].blocks[b].order;
            const std::size_t operators = blocks[b].operators.size();
            if (order.size() != operators)
                std::abort();  // every operator once
            std::vector<std::size_t> position(operators, operators);
            for (std::size_t i = 0; i < order.size(); ++i) {
                if (order[i] >= operators || position[order[i]] != operators)
                    std::abort();
                position[order[i]] = i;
            }
            const auto& values = analysis->regions[r].blocks[b].values;
            for (std::size_t op = 0; op < operators; ++op)
                for (std::uint32_t input : blocks[b].operators[op].inputs) {
                    if (input >= values.size())
                        std::abort();
                    const std::uint32_t producer = values[input].producer;
                    if (producer != vaccel::tosa::no_operator && position[producer] > position[op])
                        std::abort();  // read before it is written
                }
        }
    }
    plan_everything(*graph, *analysis);
    return 0;
}
