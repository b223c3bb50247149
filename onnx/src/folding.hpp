// folding.hpp - nodes whose inputs are all known values, computed at import
// (the shape subgraphs exporters write: Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape).
//
// Decides: a node of the kinds below whose every input is a constant (an
// initializer, a Constant node, a folded node, or a value given for an
// input) is computed here and its output becomes a constant too; it emits
// no TOSA operator. Shape needs only its input's static shape, so it folds
// whatever computes the input. Kinds: Shape, Size, ConstantOfShape,
// Identity, Cast (between integers and floats), Reshape, Flatten,
// Squeeze, Unsqueeze (the result's shape from inference), Gather, Concat,
// Slice (step 1), Range, Add, Sub, Mul, Div (integer division truncates),
// Equal, Less, Greater, Not, Neg, Abs, Where, Min, Max on integer or float
// values of at most max_folded_elements.
#pragma once

#include <functional>
#include <optional>

#include "model.hpp"

namespace vaccel::onnx {

inline constexpr std::size_t max_folded_elements = 1 << 16;

using ConstantLookup = std::function<const ConstantData*(const std::string&)>;

// The node's output 0 computed from constants, or nullopt when the node is
// not one that folds (or an input is not known).
std::optional<ConstantData> fold(const ::onnx::NodeProto& node, const Model& model,
                                 const ConstantLookup& constant);

inline constexpr int max_folding_rounds = 16;

// Where ONNX's shape inference (whose data propagation covers few op
// types: not Div, for one) left values without a static shape: every node
// that folds becomes a Constant node holding its value, and inference runs
// again, until every value has a shape, nothing more folds, or
// max_folding_rounds passed. Exporters compute a Slice's bounds or a
// Reshape's shape from Shape -> Gather -> Div -> Mul chains so.
Status fold_until_shapes_settle(Model& model);

}  // namespace vaccel::onnx
