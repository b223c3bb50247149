// decode.cpp - from a verified TOSA 1.0 root to the in-memory Graph.
//
// Owns: regions, blocks, tensors, operators and the resolution of tensor
// names to indices. Decides:
//  - a tensor's shape has only dimensions >= 0 (-1, dynamic, is Unsupported;
//    other negatives are malformed), is ranked, and holds at most
//    max_tensor_elements elements; offset/size (external data) is Unsupported;
//  - constant data holds at least byte_size() bytes (producers pad it to a
//    multiple of 8) and exactly byte_size() bytes are kept;
//  - a name resolves first in its own block, then in the blocks of the
//    enclosing regions (the region whose COND_IF/WHILE_LOOP names this one,
//    and so on up): real producers let a loop body read its parent's values
//    by name. Such a tensor is copied into the block as `captured`.
//  - TosaShape entries, which no producer writes, are ignored.
// Invariant: the caller has run the flatbuffers Verifier over the whole
// buffer; every pointer read here is either null or inside the buffer.
#include <unordered_map>

#include <fmt/format.h>

#include "flatbuffer.hpp"

namespace vaccel::tosa::detail {
namespace {

constexpr std::int32_t dynamic_dim = -1;
constexpr std::uint32_t last_dtype = static_cast<std::uint32_t>(DType::fp8e5m2);
// Captured tensors are copies; bound what a small file can make us copy.
constexpr std::uint64_t max_captured_bytes = max_artifact_bytes;

std::string text_of(const flatbuffers::String* text)
{
    return text == nullptr ? std::string{} : text->str();
}

template <class T>
std::size_t size_of(const flatbuffers::Vector<T>* vector)
{
    return vector == nullptr ? 0 : vector->size();
}

// ----- tensors -----------------------------------------------------------

struct TensorSite {
    const std::string& block;
    const std::string& tensor;
};

Result<DType> decode_dtype(std::uint32_t value, const TensorSite& site)
{
    if (value == 0 || value > last_dtype) {
        return refuse(Errc::invalid_argument, VACCEL_D_TOSA_DTYPE, value,
                      fmt::format("tensor '{}' of block '{}' refused: DType {} is not a TOSA 1.0 "
                                  "element type (1..{})",
                                  site.tensor, site.block, value, last_dtype));
    }
    return static_cast<DType>(value);
}

Result<std::vector<std::int64_t>> decode_shape(const fb::TosaTensor& source,
                                               const TensorSite& site)
{
    if (source.is_unranked()) {
        return refuse(Errc::unsupported, VACCEL_D_TOSA_MALFORMED, VACCEL_TOSA_BAD_SHAPE,
                      fmt::format("tensor '{}' of block '{}' refused: unranked tensors are not "
                                  "supported; give every tensor a static shape",
                                  site.tensor, site.block));
    }
    std::vector<std::int64_t> shape;
    shape.reserve(size_of(source.shape()));
    std::uint64_t elements = 1;
    for (std::size_t axis = 0; axis < size_of(source.shape()); ++axis) {
        const std::int32_t dim = source.shape()->Get(static_cast<flatbuffers::uoffset_t>(axis));
        if (dim == dynamic_dim) {
            return refuse(Errc::unsupported, VACCEL_D_TOSA_MALFORMED, VACCEL_TOSA_BAD_SHAPE,
                          fmt::format("tensor '{}' of block '{}' refused: dimension {} is dynamic "
                                      "(-1); dynamic shapes are not supported, give a static shape",
                                      site.tensor, site.block, axis));
        }
        if (dim < 0) {
            return malformed(VACCEL_TOSA_BAD_SHAPE,
                             fmt::format("tensor '{}' of block '{}' refused: dimension {} is {}; "
                                         "dimensions must be >= 0",
                                         site.tensor, site.block, axis, dim));
        }
        // Invariant: elements <= 2^40 and dim < 2^31, so the product cannot wrap.
        elements *= static_cast<std::uint64_t>(dim);
        if (elements > max_tensor_elements) {
            return malformed(VACCEL_TOSA_BAD_SHAPE,
                             fmt::format("tensor '{}' of block '{}' refused: more than 2^40 "
                                         "elements",
                                         site.tensor, site.block));
        }
        shape.push_back(dim);
    }
    return shape;
}

Status decode_data(const fb::TosaTensor& source, Tensor& tensor)
{
    if (source.offset() != 0 || source.size() != 0) {
        return refuse(Errc::unsupported, VACCEL_D_TOSA_MALFORMED, VACCEL_TOSA_EXTERNAL_DATA,
                      fmt::format("tensor '{}' refused: its data lies outside the flatbuffer "
                                  "(offset {}, size {}); external data is not supported, embed "
                                  "the constants",
                                  tensor.name, source.offset(), source.size()));
    }
    const std::size_t available = size_of(source.data());
    if (available == 0) return {};  // not a constant
    const std::uint64_t needed = tensor.byte_size();
    if (available < needed) {
        return malformed(VACCEL_TOSA_BAD_DATA,
                         fmt::format("tensor '{}' refused: its shape needs {} bytes of {} data, "
                                     "the file holds {}",
                                     tensor.name, needed, dtype_name(tensor.dtype), available));
    }
    // Invariant: needed <= available, the verified length of the vector.
    const std::uint8_t* bytes = source.data()->data();
    tensor.data.assign(bytes, bytes + needed);
    return {};
}

Result<Tensor> decode_tensor(const fb::TosaTensor& source, const std::string& block)
{
    Tensor tensor;
    tensor.name = text_of(source.name());
    const TensorSite site{block, tensor.name};
    auto dtype = decode_dtype(static_cast<std::uint32_t>(source.type()), site);
    if (!dtype) return fail(std::move(dtype.error()));
    tensor.dtype = *dtype;
    auto shape = decode_shape(source, site);
    if (!shape) return fail(std::move(shape.error()));
    tensor.shape = std::move(*shape);
    if (auto data = decode_data(source, tensor); !data) return fail(std::move(data.error()));
    tensor.variable = source.variable();
    tensor.variable_name = text_of(source.variable_name());
    return tensor;
}

// ----- operators (before their operands are resolved) ---------------------

Result<Op> decode_op(std::uint32_t value, const std::string& block, std::size_t index)
{
    if (value == 0 || value >= op_count) {
        return refuse(Errc::invalid_argument, VACCEL_D_TOSA_OPERATOR, value,
                      fmt::format("operator {} of block '{}' refused: Op {} is not a TOSA 1.0 "
                                  "operator (1..{})",
                                  index, block, value, op_count - 1));
    }
    return static_cast<Op>(value);
}

Result<Operator> decode_operator(const fb::TosaOperator& source, const std::string& block,
                                 std::size_t index)
{
    Operator op;
    auto kind = decode_op(static_cast<std::uint32_t>(source.op()), block, index);
    if (!kind) return fail(std::move(kind.error()));
    op.op = *kind;
    auto attributes = decode_attributes(source, op.op);
    if (!attributes) return fail(std::move(attributes.error()));
    op.attributes = std::move(*attributes);
    if (source.location() != nullptr) op.location = text_of(source.location()->text());
    return op;
}

// ----- blocks and name resolution -----------------------------------------

// One block being decoded. Ownership: `source` points into the verified
// buffer, `block` into the Graph under construction (whose vectors are
// sized before any Pending exists and never grow).
struct Pending {
    const fb::TosaBasicBlock* source = nullptr;
    Block* block = nullptr;
    std::size_t region = 0;
    std::unordered_map<std::string, std::uint32_t> own;       // declared here
    std::unordered_map<std::string, std::uint32_t> captured;  // copied from a parent
};

struct Decoder {
    Graph graph;
    std::vector<std::vector<Pending>> regions;  // parallel to graph.regions
    std::vector<std::size_t> parent;            // region index; self = none
    std::uint64_t captured_bytes = 0;
};

Status decode_block_contents(Pending& pending)
{
    const fb::TosaBasicBlock& source = *pending.source;
    Block& block = *pending.block;
    block.name = text_of(source.name());
    for (std::size_t i = 0; i < size_of(source.tensors()); ++i) {
        auto tensor = decode_tensor(*source.tensors()->Get(static_cast<flatbuffers::uoffset_t>(i)),
                                    block.name);
        if (!tensor) return fail(std::move(tensor.error()));
        const auto index = static_cast<std::uint32_t>(block.tensors.size());
        if (!pending.own.emplace(tensor->name, index).second) {
            return malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                             fmt::format("block '{}' refused: tensor name '{}' is declared twice; "
                                         "a name must identify one tensor",
                                         block.name, tensor->name));
        }
        block.tensors.push_back(std::move(*tensor));
    }
    for (std::size_t i = 0; i < size_of(source.operators()); ++i) {
        auto op = decode_operator(
            *source.operators()->Get(static_cast<flatbuffers::uoffset_t>(i)), block.name, i);
        if (!op) return fail(std::move(op.error()));
        block.operators.push_back(std::move(*op));
    }
    return {};
}

// The region whose control flow names each region (first in file order), so
// a nested region can read its parent's tensors. Regions named by none
// (main) have themselves as parent, which ends every walk up.
void link_parents(Decoder& decoder)
{
    const std::size_t count = decoder.graph.regions.size();
    decoder.parent.resize(count);
    for (std::size_t i = 0; i < count; ++i) decoder.parent[i] = i;
    std::unordered_map<std::string, std::size_t> by_name;
    for (std::size_t i = 0; i < count; ++i) by_name.emplace(decoder.graph.regions[i].name, i);
    std::vector<bool> linked(count, false);
    for (std::size_t r = 0; r < count; ++r) {
        for (const Block& block : decoder.graph.regions[r].blocks) {
            for (const Operator& op : block.operators) {
                for (const std::string* name :
                     {&op.attributes.then_graph, &op.attributes.else_graph,
                      &op.attributes.cond_graph, &op.attributes.body_graph}) {
                    const auto child = by_name.find(*name);
                    if (name->empty() || child == by_name.end()) continue;
                    if (child->second == r || linked[child->second]) continue;
                    decoder.parent[child->second] = r;
                    linked[child->second] = true;
                }
            }
        }
    }
}

// The declaration of `name` in the regions enclosing `region`, nearest first.
const Tensor* find_in_parents(const Decoder& decoder, std::size_t region, const std::string& name)
{
    // Invariant: at most one step per region, so a cycle of parents ends.
    for (std::size_t step = 0; step < decoder.regions.size(); ++step) {
        const std::size_t up = decoder.parent[region];
        if (up == region) return nullptr;
        for (const Pending& pending : decoder.regions[up]) {
            const auto found = pending.own.find(name);
            if (found != pending.own.end()) return &pending.block->tensors[found->second];
        }
        region = up;
    }
    return nullptr;
}

Result<std::uint32_t> capture(Decoder& decoder, Pending& pending, const Tensor& declared)
{
    decoder.captured_bytes += declared.data.size();
    if (decoder.captured_bytes > max_captured_bytes) {
        return fail(Error::limit_hit(VACCEL_LIMIT_ARTIFACT_BYTES, max_captured_bytes,
                                     decoder.captured_bytes)
                        .with_note(fmt::format("TOSA artifact refused: nested regions read more "
                                               "than {} bytes of their parents' constants",
                                               max_captured_bytes)));
    }
    const auto index = static_cast<std::uint32_t>(pending.block->tensors.size());
    Tensor copy = declared;
    copy.captured = true;
    pending.block->tensors.push_back(std::move(copy));
    pending.captured.emplace(declared.name, index);
    return index;
}

Result<std::uint32_t> resolve(Decoder& decoder, Pending& pending, const flatbuffers::String* name,
                              std::string_view user)
{
    const std::string key = text_of(name);
    if (const auto own = pending.own.find(key); own != pending.own.end()) return own->second;
    if (const auto seen = pending.captured.find(key); seen != pending.captured.end()) {
        return seen->second;
    }
    if (const Tensor* declared = find_in_parents(decoder, pending.region, key)) {
        return capture(decoder, pending, *declared);
    }
    return malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                     fmt::format("{} of block '{}' names tensor '{}', which is declared neither in "
                                 "the block nor in an enclosing region",
                                 user, pending.block->name, key));
}

Result<std::vector<std::uint32_t>> resolve_all(
    Decoder& decoder, Pending& pending,
    const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* names,
    std::string_view user)
{
    std::vector<std::uint32_t> indices;
    indices.reserve(size_of(names));
    for (std::size_t i = 0; i < size_of(names); ++i) {
        auto index =
            resolve(decoder, pending, names->Get(static_cast<flatbuffers::uoffset_t>(i)), user);
        if (!index) return fail(std::move(index.error()));
        indices.push_back(*index);
    }
    return indices;
}

// Order of resolution (and so of captured tensors): each operator's inputs
// then outputs, in operator order, then the block's inputs and outputs.
Status resolve_block(Decoder& decoder, Pending& pending)
{
    const fb::TosaBasicBlock& source = *pending.source;
    Block& block = *pending.block;
    for (std::size_t i = 0; i < block.operators.size(); ++i) {
        const fb::TosaOperator& op = *source.operators()->Get(static_cast<flatbuffers::uoffset_t>(i));
        const std::string user =
            fmt::format("operator {} ({})", i, op_name(block.operators[i].op));
        auto inputs = resolve_all(decoder, pending, op.inputs(), user);
        if (!inputs) return fail(std::move(inputs.error()));
        block.operators[i].inputs = std::move(*inputs);
        auto outputs = resolve_all(decoder, pending, op.outputs(), user);
        if (!outputs) return fail(std::move(outputs.error()));
        block.operators[i].outputs = std::move(*outputs);
    }
    auto inputs = resolve_all(decoder, pending, source.inputs(), "the block's input list");
    if (!inputs) return fail(std::move(inputs.error()));
    block.inputs = std::move(*inputs);
    auto outputs = resolve_all(decoder, pending, source.outputs(), "the block's output list");
    if (!outputs) return fail(std::move(outputs.error()));
    block.outputs = std::move(*outputs);
    return {};
}

// Sizes every region and block of the graph before any Pending points at one.
void lay_out(Decoder& decoder, const fb::TosaGraph& root)
{
    const std::size_t region_count = size_of(root.regions());
    decoder.graph.regions.resize(region_count);
    decoder.regions.resize(region_count);
    for (std::size_t r = 0; r < region_count; ++r) {
        const fb::TosaRegion& source = *root.regions()->Get(static_cast<flatbuffers::uoffset_t>(r));
        Region& region = decoder.graph.regions[r];
        region.name = text_of(source.name());
        const std::size_t block_count = size_of(source.blocks());
        region.blocks.resize(block_count);
        for (std::size_t b = 0; b < block_count; ++b) {
            Pending pending;
            pending.source = source.blocks()->Get(static_cast<flatbuffers::uoffset_t>(b));
            pending.block = &region.blocks[b];
            pending.region = r;
            decoder.regions[r].push_back(std::move(pending));
        }
    }
}

}  // namespace

Result<Graph> decode_graph(const fb::TosaGraph& root, const Version& version)
{
    Decoder decoder;
    decoder.graph.version = version;
    lay_out(decoder, root);
    for (auto& region : decoder.regions) {
        for (Pending& pending : region) {
            if (auto decoded = decode_block_contents(pending); !decoded) {
                return fail(std::move(decoded.error()));
            }
        }
    }
    link_parents(decoder);
    for (auto& region : decoder.regions) {
        for (Pending& pending : region) {
            if (auto resolved = resolve_block(decoder, pending); !resolved) {
                return fail(std::move(resolved.error()));
            }
        }
    }
    return std::move(decoder.graph);
}

}  // namespace vaccel::tosa::detail
