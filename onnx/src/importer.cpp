// importer.cpp - ONNX models to TOSA (importer.hpp).
#include "vaccel/onnx/importer.hpp"

#include "folding.hpp"
#include "lowering.hpp"
#include "model.hpp"

namespace vaccel::onnx {

Result<Imported> import_model(std::span<const std::byte> model, const ImportOptions& options)
{
    auto read = Model::read(model, options);
    if (!read) return fail(read.error());
    if (auto settled = fold_until_shapes_settle(*read); !settled) return fail(settled.error());
    return lower_model(*read, options.transpose_per_node);
}

}  // namespace vaccel::onnx
