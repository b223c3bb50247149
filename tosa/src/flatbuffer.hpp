// flatbuffer.hpp - private glue between the generated TOSA reader and the graph.
//
// Owns: the declarations the parser, the attribute codec and the serializer
// share, and the one way this library builds a refusal. Decides: nothing
// here is public; the generated header (tosa_generated.h, from
// schema/tosa.fbs) is included by this library's sources and tests only.
#pragma once

#include <cstdint>
#include <string>

#include "tosa_generated.h"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::tosa::detail {

// A refusal of the artifact: `code` with `detail`/`arg0` and a note a person
// can act on.
inline std::unexpected<Error> refuse(Errc code, std::uint32_t detail, std::uint64_t arg0,
                                     std::string note)
{
    return std::unexpected(Error::of(code, detail, arg0).with_note(std::move(note)));
}

// InvalidArgument + VACCEL_D_TOSA_MALFORMED with `reason` (enum vaccel_tosa_reason).
inline std::unexpected<Error> malformed(std::uint32_t reason, std::string note)
{
    return refuse(Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED, reason, std::move(note));
}

// Whether the attribute table with union index `type` has any field. Tables
// without fields carry nothing, so which of them an operator holds does not
// change its meaning (see decode_attributes).
bool attribute_has_fields(std::uint32_t type);

// Decodes the attribute union of `source`, whose op the caller has already
// checked is a known Op. Invariant: the verifier has checked the union table
// against its own type tag, so reading it as that type is sound.
Result<Attributes> decode_attributes(const fb::TosaOperator& source, Op op);

// Writes the attribute table of `op` (the union index equals the Op value).
flatbuffers::Offset<void> encode_attributes(flatbuffers::FlatBufferBuilder& builder, Op op,
                                            const Attributes& attributes);

// Decodes a verified TOSA 1.0 root into a graph: tensors, operators and
// names resolved to indices (decode.cpp).
Result<Graph> decode_graph(const fb::TosaGraph& root, const Version& version);

}  // namespace vaccel::tosa::detail
