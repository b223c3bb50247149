// parse.cpp - admission of TOSA artifact bytes: framing, verification, version.
//
// Owns: the order in which untrusted bytes are checked before anything is
// decoded from them. Decides:
//  1. size: at most max_artifact_bytes (ResourceLimit, artifact bytes);
//  2. framing: the "TOSA" file identifier (VACCEL_TOSA_NO_IDENTIFIER);
//  3. the version, read through a verifier that checks only the root table
//     and Version (whose layout is the same in every TOSA version), so that
//     0.80/0.90 and 1.1 files are refused by version, not as garbage;
//  4. the full flatbuffers Verifier against the 1.0 schema
//     (VACCEL_TOSA_NOT_FLATBUFFER);
//  5. decoding (decode.cpp).
// Nothing reads an offset the verifier has not checked.
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "flatbuffer.hpp"

namespace vaccel::tosa {
namespace {

using detail::malformed;
using detail::refuse;

constexpr char file_identifier[] = "TOSA";
constexpr std::size_t identifier_end = 8;  // root offset (4) + identifier (4)

// The root table read as far as its version and no further: the one layout
// every TOSA version shares.
struct VersionOnlyRoot : private flatbuffers::Table {
    const fb::Version* version() const
    {
        return GetPointer<const fb::Version*>(fb::TosaGraph::VT_VERSION);
    }
    bool Verify(flatbuffers::Verifier& verifier) const
    {
        return VerifyTableStart(verifier) &&
               VerifyOffsetRequired(verifier, fb::TosaGraph::VT_VERSION) &&
               verifier.VerifyTable(version()) && verifier.EndTable();
    }
};

// Bytes the reader may use in place. Ownership: either a view of the
// caller's bytes (already 8-aligned) or an aligned copy owned here.
// Invariant: data() is 8-aligned. The verifier checks alignment relative to
// the buffer start and flatbuffers reads scalars in place, so an unaligned
// start would make every read a misaligned access.
class AlignedBytes {
public:
    explicit AlignedBytes(std::span<const std::byte> bytes)
    {
        if (reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(std::uint64_t) == 0) {
            view_ = reinterpret_cast<const std::uint8_t*>(bytes.data());
        } else {
            copy_ = std::make_unique<std::uint64_t[]>(bytes.size() / 8 + 1);
            std::memcpy(copy_.get(), bytes.data(), bytes.size());
            view_ = reinterpret_cast<const std::uint8_t*>(copy_.get());
        }
    }
    const std::uint8_t* data() const { return view_; }

private:
    std::unique_ptr<std::uint64_t[]> copy_;
    const std::uint8_t* view_ = nullptr;
};

std::string version_text(std::int32_t major, std::int32_t minor)
{
    // 0.x versions are written with a two-digit minor: 0.80, 0.90.
    if (major == 0) return fmt::format("{}.{:02}", major, minor);
    return fmt::format("{}.{}", major, minor);
}

Status check_framing(std::span<const std::byte> bytes)
{
    if (bytes.size() > max_artifact_bytes) {
        return fail(Error::limit_hit(VACCEL_LIMIT_ARTIFACT_BYTES, max_artifact_bytes, bytes.size())
                        .with_note(fmt::format("TOSA artifact of {} bytes refused: this build reads "
                                               "at most {} bytes; split the model",
                                               bytes.size(), max_artifact_bytes)));
    }
    if (bytes.size() < identifier_end) {
        return malformed(VACCEL_TOSA_NOT_FLATBUFFER,
                         fmt::format("TOSA artifact of {} bytes refused: too short to be a "
                                     "flatbuffer; pass a .tosa file",
                                     bytes.size()));
    }
    if (std::memcmp(bytes.data() + 4, file_identifier, 4) != 0) {
        return malformed(VACCEL_TOSA_NO_IDENTIFIER,
                         "artifact refused: its file identifier (bytes 4..7) is not \"TOSA\"; "
                         "pass a TOSA flatbuffer (.tosa)");
    }
    return {};
}

Result<Version> read_version(const std::uint8_t* data, std::size_t size)
{
    flatbuffers::Verifier verifier(data, size);
    if (!verifier.VerifyBuffer<VersionOnlyRoot>(file_identifier)) {
        return malformed(VACCEL_TOSA_NOT_FLATBUFFER,
                         "TOSA artifact refused: its root table or version is not a valid "
                         "flatbuffer (truncated or corrupted file)");
    }
    const fb::Version& source = *flatbuffers::GetRoot<VersionOnlyRoot>(data)->version();
    return Version{source._major(), source._minor(), source._patch(), source._draft()};
}

Status check_version(const Version& version)
{
    // Any 1.0 patch is read, draft or not: real 1.0 producers write both.
    if (version.major == 1 && version.minor == 0) return {};
    const std::string text = version_text(version.major, version.minor);
    return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_VERSION,
                          static_cast<std::uint32_t>(version.major),
                          static_cast<std::uint32_t>(version.minor))
                    .with_note(fmt::format("unsupported TOSA version {} (this build reads TOSA "
                                           "1.0 only); regenerate the model for TOSA 1.0",
                                           text)));
}

Status verify_graph(const std::uint8_t* data, std::size_t size)
{
    flatbuffers::Verifier verifier(data, size);
    if (!fb::VerifyTosaGraphBuffer(verifier)) {
        return malformed(VACCEL_TOSA_NOT_FLATBUFFER,
                         "TOSA 1.0 artifact refused: the flatbuffer verifier found offsets or "
                         "sizes outside the file (truncated or corrupted file)");
    }
    return {};
}

}  // namespace

Result<Graph> parse(std::span<const std::byte> bytes)
{
    if (auto framed = check_framing(bytes); !framed) return fail(std::move(framed.error()));
    const AlignedBytes aligned(bytes);
    auto version = read_version(aligned.data(), bytes.size());
    if (!version) return fail(std::move(version.error()));
    if (auto supported = check_version(*version); !supported) {
        return fail(std::move(supported.error()));
    }
    if (auto verified = verify_graph(aligned.data(), bytes.size()); !verified) {
        return fail(std::move(verified.error()));
    }
    return detail::decode_graph(*fb::GetTosaGraph(aligned.data()), *version);
}

}  // namespace vaccel::tosa
