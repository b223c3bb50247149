// fuzz_tosa.cpp - libFuzzer target: a TOSA file from parse to analysis.
//
// Property: any byte string is either refused by parse() or analyze() with
// an Error, or analyzed; nothing crashes, reads out of bounds or hangs. An
// analysis that succeeds is consistent with its graph: every block's order
// lists each of its operators once, with each operator after the producers
// of what it reads. Seeded (make fuzz) with the repository's TOSA fixtures.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/graph.hpp"

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
    return 0;
}
