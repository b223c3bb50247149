// npy.hpp - NumPy .npy arrays in and out of vaccel's tools.
//
// Owns: the in-memory array (dtype, shape, raw little-endian element bytes)
// and the .npy encoding of it. Decides: which .npy files vaccel reads —
// format versions 1.0, 2.0 and 3.0, little-endian ('<', or '|' for one-byte
// types), C order, the dtypes of `enum class DType` — and that everything
// else is refused with a sentence naming the file, what was found and what to
// do. Writing always produces version 1.0 (2.0 only when the header needs it),
// with the header padded to a multiple of 64 bytes as NumPy does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vaccel::npy {

// The element types vaccel exchanges, named by their NumPy type codes.
enum class DType : std::uint8_t {
    f4,
    f8,
    f2,
    i1,
    i2,
    i4,
    i8,
    u1,
    u2,
    u4,
    u8,
    b1,
};

// "f4", "i1", ... (the code without byte order).
std::string_view dtype_code(DType dtype);
// "float32", "int8", "bool", ... (NumPy's name, for people).
std::string_view dtype_name(DType dtype);
// The descr NumPy writes: "<f4", "|i1", "|b1", ...
std::string dtype_descr(DType dtype);
std::size_t dtype_size(DType dtype);
// The dtype of a code such as "f4" (no byte order), if vaccel knows it.
std::optional<DType> dtype_from_code(std::string_view code);

// A refusal: one sentence a person can act on.
struct Error {
    std::string message;
};
template <class T>
using Result = std::expected<T, Error>;

// An n-dimensional array in C order. Invariant (for arrays that came from
// decode() or were checked with valid()): data.size() ==
// element_count() * dtype_size(dtype).
struct Array {
    DType dtype = DType::f4;
    std::vector<std::int64_t> shape;  // empty = a scalar (one element)
    std::vector<std::uint8_t> data;   // little-endian element bytes

    std::uint64_t element_count() const;
    std::uint64_t byte_size() const { return element_count() * dtype_size(dtype); }
    bool valid() const;
};

// "(1, 4, 4, 1)" / "(3,)" / "()": the shape as NumPy prints it.
std::string shape_text(std::span<const std::int64_t> shape);

// Decodes the bytes of a .npy file. `origin` names the file in messages
// ("file x.npy ..."); use the path the person gave.
Result<Array> decode(std::span<const std::uint8_t> bytes, std::string_view origin);
// Encodes `array` (which must be valid()) as a .npy file.
std::vector<std::uint8_t> encode(const Array& array);

Result<Array> read_file(const std::filesystem::path& path);
// Writes atomically enough for tools: the whole file, then close; a failure
// names the path and the system error.
Result<void> write_file(const std::filesystem::path& path, const Array& array);

}  // namespace vaccel::npy
