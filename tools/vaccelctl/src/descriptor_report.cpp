// descriptor_report.cpp - a device's TOSA capability descriptors, for people and as JSON.
//
// Owns: the rendering of the descriptors of `vaccelctl devices` (report.hpp).
// Decides: a descriptor is read with tosa::descriptor_from_uapi, so a field
// this build does not know is reported as unreadable rather than guessed;
// the operator table's columns are the dtypes some operator takes, in TOSA
// DType order; an operator whose dtypes the device does not state shows
// "any admitted dtype" instead of marks.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>
#include <string_view>
#include <utility>

#include "report.hpp"
#include "vaccel/tosa/capability.hpp"

namespace vaccel::ctl {
namespace {

using tosa::DType;
using tosa::OperatorConstraint;
using tosa::Role;

constexpr std::array<Role, 4> roles{Role::input, Role::output, Role::constant, Role::intermediate};

constexpr std::array<std::pair<OperatorConstraint, std::string_view>, 5> constraint_words{{
    {OperatorConstraint::propagating_nan, "propagating-nan"},
    {OperatorConstraint::zero_padding, "zero-padding"},
    {OperatorConstraint::constant_parameters, "constant-parameters"},
    {OperatorConstraint::zero_zero_points, "zero-zero-points"},
    {OperatorConstraint::zero_shift, "zero-shift"},
}};

std::vector<std::string> role_words(const tosa::DTypeCapability& c)
{
    std::vector<std::string> words;
    for (Role role : roles)
        if (c.allows(role)) words.emplace_back(tosa::role_name(role));
    return words;
}

std::vector<std::string> constraint_list(const tosa::OperatorCapability& c)
{
    std::vector<std::string> words;
    for (const auto& [constraint, word] : constraint_words)
        if (c.has(constraint)) words.emplace_back(word);
    return words;
}

std::vector<std::string> dtype_words(const std::vector<DType>& dtypes)
{
    std::vector<std::string> words;
    for (DType d : dtypes) words.emplace_back(tosa::dtype_name(d));
    return words;
}

// "1 region", "3 regions", "any number of regions" (UINT32_MAX: no limit).
std::string count_text(std::uint32_t count, std::string_view noun)
{
    if (count == UINT32_MAX) return fmt::format("any number of {}s", noun);
    return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

std::string envelope_text(const tosa::GraphEnvelope& e)
{
    return fmt::format("{}, {}, {} shapes, {}", count_text(e.max_regions, "region"),
                       count_text(e.max_blocks, "block"),
                       e.dynamic_shapes ? "dynamic" : "static",
                       e.runtime_conditions == tosa::RuntimeConditionSupport::advisory_only
                           ? "advisory runtime conditions"
                           : "no runtime conditions");
}

// The operators x dtypes table, one line per operator.
std::string operator_table(const tosa::CapabilityDescriptor& d, std::string_view indent)
{
    std::set<DType> columns;
    std::size_t name_width = std::string_view("operator").size();
    for (const auto& op : d.operators) {
        columns.insert(op.dtypes.begin(), op.dtypes.end());
        name_width = std::max(name_width, tosa::op_name(op.op).size());
    }
    std::string out = fmt::format("{}{:<{}}", indent, "operator", name_width);
    for (DType column : columns) out += fmt::format("  {}", tosa::dtype_name(column));
    out += "  constraints\n";
    for (const auto& op : d.operators) {
        std::string line = fmt::format("{}{:<{}}", indent, tosa::op_name(op.op), name_width);
        if (op.dtypes.empty()) {
            line += "  any admitted dtype";
        } else {
            for (DType column : columns) {
                const bool takes = std::ranges::find(op.dtypes, column) != op.dtypes.end();
                line += fmt::format("  {:<{}}", takes ? "x" : "", tosa::dtype_name(column).size());
            }
        }
        const auto constraints = constraint_list(op);
        line += constraints.empty() ? std::string("  -")
                                    : fmt::format("  {}", fmt::join(constraints, ", "));
        out += line + "\n";
    }
    return out;
}

}  // namespace

std::string descriptors_text(std::span<const vaccel_tosa_descriptor> descriptors)
{
    if (descriptors.empty()) return "    tosa descriptors  none\n";
    std::string out;
    for (std::size_t i = 0; i < descriptors.size(); ++i) {
        auto d = tosa::descriptor_from_uapi(descriptors[i]);
        if (!d) {
            out += fmt::format("    tosa descriptor {} of {}: unreadable ({})\n", i,
                               descriptors.size(), describe(d.error()));
            continue;
        }
        out += fmt::format("    tosa descriptor {} of {}: {}\n", i, descriptors.size(),
                           tosa::target_text(d->target));
        out += fmt::format("      envelope  {}\n", envelope_text(d->graph));
        std::vector<std::string> dtypes;
        for (const auto& c : d->dtypes)
            dtypes.push_back(fmt::format("{} ({}{})", tosa::dtype_name(c.dtype),
                                         fmt::join(role_words(c), ", "),
                                         c.parameter_only ? "; parameter only" : ""));
        out += fmt::format("      dtypes    {}\n",
                           dtypes.empty() ? std::string("none")
                                          : fmt::format("{}", fmt::join(dtypes, ", ")));
        out += operator_table(*d, "      ");
    }
    return out;
}

nlohmann::ordered_json descriptors_json(std::span<const vaccel_tosa_descriptor> descriptors)
{
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < descriptors.size(); ++i) {
        nlohmann::ordered_json entry;
        entry["index"] = i;
        auto d = tosa::descriptor_from_uapi(descriptors[i]);
        if (!d) {
            entry["error"] = describe(d.error());
            all.push_back(std::move(entry));
            continue;
        }
        entry["target"] = tosa::target_text(d->target);
        entry["envelope"] = {{"max_regions", d->graph.max_regions},
                             {"max_blocks", d->graph.max_blocks},
                             {"dynamic_shapes", d->graph.dynamic_shapes},
                             {"runtime_conditions",
                              d->graph.runtime_conditions ==
                                      tosa::RuntimeConditionSupport::advisory_only
                                  ? "advisory"
                                  : "none"}};
        nlohmann::ordered_json dtypes = nlohmann::ordered_json::array();
        for (const auto& c : d->dtypes)
            dtypes.push_back({{"dtype", tosa::dtype_name(c.dtype)},
                              {"roles", role_words(c)},
                              {"parameter_only", c.parameter_only}});
        entry["dtypes"] = std::move(dtypes);
        nlohmann::ordered_json operators = nlohmann::ordered_json::array();
        for (const auto& op : d->operators)
            operators.push_back({{"operator", tosa::op_name(op.op)},
                                 // null: the device does not say per operator
                                 {"dtypes", op.dtypes.empty()
                                                ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(dtype_words(op.dtypes))},
                                 {"constraints", constraint_list(op)}});
        entry["operators"] = std::move(operators);
        all.push_back(std::move(entry));
    }
    return all;
}

}  // namespace vaccel::ctl
