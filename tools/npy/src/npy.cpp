// npy.cpp - decoding and encoding .npy files.
//
// Owns: the preamble (magic, version, header length), the meaning of 'descr'
// and the check that the data is exactly as long as the header promises.
// Decides: the refusals a person sees for every file vaccel does not read
// (see npy.hpp), each naming the file, what was found and what to do.
#include "vaccel/npy/npy.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "header_dict.hpp"

namespace vaccel::npy {
namespace {

struct DTypeInfo {
    DType dtype;
    std::string_view code;
    std::string_view name;
    std::size_t size;
};

constexpr std::array<DTypeInfo, 12> dtype_table{{
    {DType::f4, "f4", "float32", 4},
    {DType::f8, "f8", "float64", 8},
    {DType::f2, "f2", "float16", 2},
    {DType::i1, "i1", "int8", 1},
    {DType::i2, "i2", "int16", 2},
    {DType::i4, "i4", "int32", 4},
    {DType::i8, "i8", "int64", 8},
    {DType::u1, "u1", "uint8", 1},
    {DType::u2, "u2", "uint16", 2},
    {DType::u4, "u4", "uint32", 4},
    {DType::u8, "u8", "uint64", 8},
    {DType::b1, "b1", "bool", 1},
}};

const DTypeInfo& info(DType dtype)
{
    return dtype_table[static_cast<std::size_t>(dtype)];
}

constexpr std::string_view magic{"\x93NUMPY", 6};
constexpr std::string_view known_codes = "f4, f8, f2, i1, i2, i4, i8, u1, u2, u4, u8, b1";

std::unexpected<Error> refuse(std::string message)
{
    return std::unexpected(Error{std::move(message)});
}

// 'descr' -> dtype, refusing every byte order and type vaccel does not read.
Result<DType> dtype_of_descr(std::string_view descr, std::string_view origin)
{
    if (descr.empty())
        return refuse(
            fmt::format("file {} has an empty 'descr'; re-save it with numpy.save", origin));
    char order = descr.front();
    std::string_view code = descr.substr(1);
    if (order != '<' && order != '>' && order != '|' && order != '=')
        return refuse(fmt::format("file {} has dtype '{}' without a byte order; vaccel reads "
                                  "little-endian arrays ('<f4', '|i1', ...)",
                                  origin, descr));
    auto dtype = dtype_from_code(code);
    if (!dtype)
        return refuse(fmt::format("file {} has dtype '{}', which vaccel does not read; vaccel "
                                  "reads {} (little-endian): convert with arr.astype('<f4') or "
                                  "similar",
                                  origin, descr, known_codes));
    std::size_t size = dtype_size(*dtype);
    if (order == '>' && size > 1)
        return refuse(fmt::format("file {} is big-endian (dtype '{}'); vaccel reads "
                                  "little-endian arrays: save with arr.astype('<{}')",
                                  origin, descr, code));
    if (order == '=')
        return refuse(fmt::format("file {} has dtype '{}' in native byte order, which does not "
                                  "say which it is; save with arr.astype('<{}')",
                                  origin, descr, code));
    if (order == '|' && size > 1)
        return refuse(fmt::format("file {} has dtype '{}': '|' (no byte order) is only valid for "
                                  "one-byte types; save with arr.astype('<{}')",
                                  origin, descr, code));
    if (order == '>')  // one-byte types have no byte order; NumPy writes '|'
        return refuse(fmt::format("file {} has dtype '{}' with a big-endian mark; save with "
                                  "numpy.save, which writes '|{}'",
                                  origin, descr, code));
    return *dtype;
}

std::uint32_t read_le(const std::uint8_t* p, std::size_t bytes)
{
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < bytes; ++i)
        value |= static_cast<std::uint32_t>(p[i]) << (8 * i);
    return value;
}

// Product of the dimensions, or nothing on overflow of 64 bits.
std::optional<std::uint64_t> checked_count(std::span<const std::int64_t> shape)
{
    std::uint64_t count = 1;
    for (std::int64_t dim : shape) {
        if (dim < 0)
            return std::nullopt;
        auto d = static_cast<std::uint64_t>(dim);
        if (d != 0 && count > std::numeric_limits<std::uint64_t>::max() / d)
            return std::nullopt;
        count *= d;
    }
    return count;
}

}  // namespace

std::string_view dtype_code(DType dtype)
{
    return info(dtype).code;
}
std::string_view dtype_name(DType dtype)
{
    return info(dtype).name;
}
std::size_t dtype_size(DType dtype)
{
    return info(dtype).size;
}

std::string dtype_descr(DType dtype)
{
    return fmt::format("{}{}", dtype_size(dtype) == 1 ? '|' : '<', dtype_code(dtype));
}

std::optional<DType> dtype_from_code(std::string_view code)
{
    for (const auto& entry : dtype_table)
        if (entry.code == code)
            return entry.dtype;
    return std::nullopt;
}

std::uint64_t Array::element_count() const
{
    std::uint64_t count = 1;
    for (std::int64_t dim : shape)
        count *= static_cast<std::uint64_t>(dim);
    return count;
}

bool Array::valid() const
{
    auto count = checked_count(shape);
    if (!count || *count > std::numeric_limits<std::uint64_t>::max() / dtype_size(dtype))
        return false;
    return data.size() == *count * dtype_size(dtype);
}

std::string shape_text(std::span<const std::int64_t> shape)
{
    if (shape.size() == 1)
        return fmt::format("({},)", shape[0]);
    return fmt::format("({})", fmt::join(shape, ", "));
}

Result<Array> decode(std::span<const std::uint8_t> bytes, std::string_view origin)
{
    if (bytes.size() < magic.size() || std::memcmp(bytes.data(), magic.data(), magic.size()) != 0)
        return refuse(fmt::format("file {} is not a NumPy .npy file (it does not start with "
                                  "\"\\x93NUMPY\"); save arrays with numpy.save",
                                  origin));
    if (bytes.size() < 8)
        return refuse(fmt::format("file {} is truncated inside its .npy preamble ({} bytes)",
                                  origin, bytes.size()));
    unsigned major = bytes[6], minor = bytes[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        return refuse(fmt::format("file {} is .npy format version {}.{}; vaccel reads versions "
                                  "1.0, 2.0 and 3.0",
                                  origin, major, minor));
    std::size_t length_bytes = major == 1 ? 2 : 4;
    std::size_t prefix = 8 + length_bytes;
    if (bytes.size() < prefix)
        return refuse(fmt::format("file {} is truncated inside its .npy preamble ({} bytes)",
                                  origin, bytes.size()));
    std::uint64_t header_length = read_le(bytes.data() + 8, length_bytes);
    if (bytes.size() - prefix < header_length)
        return refuse(fmt::format("file {} is truncated: its header should be {} bytes but only "
                                  "{} follow the preamble",
                                  origin, header_length, bytes.size() - prefix));
    std::string_view header(reinterpret_cast<const char*>(bytes.data() + prefix),
                            static_cast<std::size_t>(header_length));
    auto dict = detail::parse_header_dict(header, origin);
    if (!dict)
        return std::unexpected(dict.error());
    auto dtype = dtype_of_descr(dict->descr, origin);
    if (!dtype)
        return std::unexpected(dtype.error());
    if (dict->fortran_order && dict->shape.size() > 1)
        return refuse(fmt::format("file {} is in Fortran order; vaccel reads C-order arrays: "
                                  "save with np.ascontiguousarray",
                                  origin));
    auto count = checked_count(dict->shape);
    if (!count || *count > std::numeric_limits<std::uint64_t>::max() / dtype_size(*dtype))
        return refuse(fmt::format("file {} has shape {}, whose size does not fit in 64 bits",
                                  origin, shape_text(dict->shape)));
    std::uint64_t expected = *count * dtype_size(*dtype);
    std::uint64_t actual = bytes.size() - prefix - header_length;
    if (actual < expected)
        return refuse(fmt::format("file {} is truncated: shape {} of {} needs {} bytes of data, "
                                  "the file holds {}",
                                  origin, shape_text(dict->shape), dtype_name(*dtype), expected,
                                  actual));
    if (actual > expected)
        return refuse(fmt::format("file {} has {} bytes after its array data (shape {} of {} "
                                  "needs {}); a .npy file holds one array: save one per file",
                                  origin, actual - expected, shape_text(dict->shape),
                                  dtype_name(*dtype), expected));
    Array array;
    array.dtype = *dtype;
    array.shape = std::move(dict->shape);
    auto data = bytes.subspan(static_cast<std::size_t>(prefix + header_length));
    array.data.assign(data.begin(), data.end());
    return array;
}

std::vector<std::uint8_t> encode(const Array& array)
{
    std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   dtype_descr(array.dtype), shape_text(array.shape));
    // NumPy pads the header with spaces and a final '\n' so that the data
    // starts at a multiple of 64 bytes; version 2.0 only when 1.0's 16-bit
    // length cannot hold it.
    auto padded = [&](std::size_t prefix) {
        std::size_t total = prefix + dict.size() + 1;
        return dict.size() + 1 + (64 - total % 64) % 64;
    };
    std::size_t prefix = 10;
    std::size_t header_length = padded(prefix);
    unsigned major = 1;
    if (header_length > 0xffff) {
        prefix = 12;
        header_length = padded(prefix);
        major = 2;
    }
    std::vector<std::uint8_t> out(prefix + header_length + array.data.size(), ' ');
    std::memcpy(out.data(), magic.data(), magic.size());
    out[6] = static_cast<std::uint8_t>(major);
    out[7] = 0;
    for (std::size_t i = 0; i < prefix - 8; ++i)
        out[8 + i] = static_cast<std::uint8_t>(header_length >> (8 * i));
    std::memcpy(out.data() + prefix, dict.data(), dict.size());
    out[prefix + header_length - 1] = '\n';
    if (!array.data.empty())
        std::memcpy(out.data() + prefix + header_length, array.data.data(), array.data.size());
    return out;
}

Result<Array> read_file(const std::filesystem::path& path)
{
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (!file)
        return refuse(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
    std::vector<std::uint8_t> bytes;
    std::array<std::uint8_t, 65536> chunk;
    std::size_t got;
    while ((got = std::fread(chunk.data(), 1, chunk.size(), file)) > 0)
        bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(got));
    bool failed = std::ferror(file) != 0;
    int error = errno;
    std::fclose(file);
    if (failed)
        return refuse(fmt::format("cannot read {}: {}", path.string(), std::strerror(error)));
    return decode(bytes, path.string());
}

Result<void> write_file(const std::filesystem::path& path, const Array& array)
{
    if (!array.valid())
        return refuse(fmt::format("cannot write {}: the array's data ({} bytes) does not match "
                                  "shape {} of {}",
                                  path.string(), array.data.size(), shape_text(array.shape),
                                  dtype_name(array.dtype)));
    auto bytes = encode(array);
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (!file)
        return refuse(fmt::format("cannot create {}: {}", path.string(), std::strerror(errno)));
    bool ok = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
    int error = errno;
    if (std::fclose(file) != 0 && ok) {
        ok = false;
        error = errno;
    }
    if (!ok)
        return refuse(fmt::format("cannot write {}: {}", path.string(), std::strerror(error)));
    return {};
}

}  // namespace vaccel::npy
