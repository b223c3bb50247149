// model_variables.hpp - setting and reading a model's variables from vaccelctl.
//
// Owns: the rewrite of a TOSA model that `vaccelctl run --variable` loads.
// The contract has no call that reads or writes a loaded program's
// variables, so vaccelctl changes the model it loads instead (docs/adr/
// 0012-variables-in-vaccelctl.md):
//  - `--variable NAME=FILE.npy` replaces the initial value (the declaration's
//    data) of the variable NAME in every block that declares it;
//  - every variable of the first block gets one more block output,
//    `variable.<NAME>` (NAME with characters outside [A-Za-z0-9._+-] as
//    '_'), written by an IDENTITY of the variable appended after every other
//    operator: TOSA runs a block's variable accesses in declared order, so it
//    reads the value the run leaves, which vaccelctl writes beside the
//    outputs as `variable.<NAME>.npy`.
// A model without variables is loaded byte for byte as given. Decides: a
// variable is named by its variable name, or its tensor name when it has
// none; the file must hold exactly its dtype and shape.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "refusal.hpp"
#include "vaccel/npy/npy.hpp"

namespace vaccel::ctl {

struct ExposedModel {
    std::vector<std::uint8_t> bytes;  // what to load
    // The outputs added for the variables, in block output order after the
    // model's own: (variable name, output tensor name).
    std::vector<std::pair<std::string, std::string>> variables;
};

// `initial`: (variable name, its new value), from --variable arguments.
Result<ExposedModel> expose_variables(std::span<const std::uint8_t> model,
                                      const std::vector<std::pair<std::string, npy::Array>>& initial);

// Splits "NAME=FILE.npy"; refused without '=' or with an empty side.
Result<std::pair<std::string, std::string>> variable_argument(const std::string& argument);

}  // namespace vaccel::ctl
