// ports.cpp - data across the graph's boundary (ports.hpp).
#include "vaccel/onnx/ports.hpp"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <limits>

namespace vaccel::onnx {

namespace {

using T = ::onnx::TensorProto;

bool is_integer(std::int32_t t)
{
    switch (t) {
    case T::INT8: case T::INT16: case T::INT32: case T::INT64:
    case T::UINT8: case T::UINT16: case T::UINT32: case T::UINT64:
        return true;
    default:
        return false;
    }
}

bool is_signed(std::int32_t t) { return t == T::INT8 || t == T::INT16 || t == T::INT32 || t == T::INT64; }

// Element i of integer data of type t, as a 64-bit value (UINT64 above
// INT64_MAX reads as negative here; the range check treats it by its bits).
std::int64_t read_integer(std::int32_t t, const std::byte* p)
{
    switch (t) {
    case T::INT8: { std::int8_t v; std::memcpy(&v, p, 1); return v; }
    case T::UINT8: { std::uint8_t v; std::memcpy(&v, p, 1); return v; }
    case T::INT16: { std::int16_t v; std::memcpy(&v, p, 2); return v; }
    case T::UINT16: { std::uint16_t v; std::memcpy(&v, p, 2); return v; }
    case T::INT32: { std::int32_t v; std::memcpy(&v, p, 4); return v; }
    case T::UINT32: { std::uint32_t v; std::memcpy(&v, p, 4); return v; }
    default: { std::int64_t v; std::memcpy(&v, p, 8); return v; }
    }
}

std::uint64_t element_count(const Port& port)
{
    std::uint64_t n = 1;
    for (std::int64_t d : port.dims) n *= static_cast<std::uint64_t>(d);
    return n;
}

Status check_size(const Port& port, std::size_t have, std::size_t element, std::string_view side)
{
    const std::uint64_t want = element_count(port) * element;
    if (have == want) return {};
    return fail(Error::of(Errc::invalid_argument)
                    .with_note(fmt::format("{} '{}': {} bytes given; its {} elements take {} "
                                           "bytes as {}",
                                           side, port.name, have, element_count(port), want,
                                           side == "input" ? onnx_type_name(port.onnx_type)
                                                           : std::string("the graph holds them"))));
}

}  // namespace

std::optional<tosa::DType> carrier_of(std::int32_t onnx_type)
{
    switch (onnx_type) {
    case T::FLOAT: return tosa::DType::fp32;
    case T::FLOAT16: return tosa::DType::fp16;
    case T::BFLOAT16: return tosa::DType::bf16;
    case T::BOOL: return tosa::DType::boolean;
    default: return is_integer(onnx_type) ? std::optional(tosa::DType::int32) : std::nullopt;
    }
}

std::size_t onnx_element_size(std::int32_t onnx_type)
{
    switch (onnx_type) {
    case T::BOOL: case T::INT8: case T::UINT8: return 1;
    case T::FLOAT16: case T::BFLOAT16: case T::INT16: case T::UINT16: return 2;
    case T::FLOAT: case T::INT32: case T::UINT32: return 4;
    case T::INT64: case T::UINT64: case T::DOUBLE: case T::COMPLEX64: return 8;
    case T::COMPLEX128: return 16;
    default: return 0;
    }
}

std::string onnx_type_name(std::int32_t onnx_type)
{
    if (T::DataType_IsValid(onnx_type))
        return T::DataType_Name(static_cast<T::DataType>(onnx_type));
    return fmt::format("type {}", onnx_type);
}

std::optional<std::pair<std::int64_t, std::int64_t>> int32_range(std::int32_t onnx_type)
{
    using Range = std::pair<std::int64_t, std::int64_t>;
    switch (onnx_type) {
    case T::INT8: return Range{INT8_MIN, INT8_MAX};
    case T::UINT8: return Range{0, UINT8_MAX};
    case T::INT16: return Range{INT16_MIN, INT16_MAX};
    case T::UINT16: return Range{0, UINT16_MAX};
    case T::INT32: return Range{INT32_MIN, INT32_MAX};
    default: return std::nullopt;
    }
}

std::uint64_t model_bytes(const Port& port) { return element_count(port) * onnx_element_size(port.onnx_type); }

std::uint64_t graph_bytes(const Port& port) { return element_count(port) * tosa::dtype_bytes(port.dtype); }

Result<std::vector<std::byte>> to_graph(const Port& port, std::span<const std::byte> data)
{
    const std::size_t width = onnx_element_size(port.onnx_type);
    if (auto ok = check_size(port, data.size(), width, "input"); !ok) return fail(ok.error());
    if (!is_integer(port.onnx_type) || port.onnx_type == T::INT32)
        return std::vector<std::byte>(data.begin(), data.end());
    const std::uint64_t n = element_count(port);
    std::vector<std::byte> out(n * 4);
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::int64_t v = read_integer(port.onnx_type, data.data() + i * width);
        const bool above = port.onnx_type == T::UINT64 ? (v < 0 || v > INT32_MAX) : v > INT32_MAX;
        if (above || v < INT32_MIN) {
            const std::string shown = port.onnx_type == T::UINT64
                                          ? fmt::format("{}", static_cast<std::uint64_t>(v))
                                          : fmt::format("{}", v);
            return fail(Error::of(Errc::out_of_bounds)
                            .with_note(fmt::format("input '{}' element {} holds {}, outside INT32: "
                                                   "the imported graph carries {} as INT32; give "
                                                   "values from {} to {}",
                                                   port.name, i, shown, onnx_type_name(port.onnx_type),
                                                   INT32_MIN, INT32_MAX)));
        }
        const auto narrowed = static_cast<std::int32_t>(v);
        std::memcpy(out.data() + i * 4, &narrowed, 4);
    }
    return out;
}

Result<std::vector<std::byte>> from_graph(const Port& port, std::span<const std::byte> data)
{
    if (!is_integer(port.onnx_type) || port.onnx_type == T::INT32) {
        if (auto ok = check_size(port, data.size(), onnx_element_size(port.onnx_type), "output"); !ok)
            return fail(ok.error());
        return std::vector<std::byte>(data.begin(), data.end());
    }
    if (auto ok = check_size(port, data.size(), 4, "output"); !ok) return fail(ok.error());
    const std::size_t width = onnx_element_size(port.onnx_type);
    const std::uint64_t n = element_count(port);
    std::vector<std::byte> out(n * width);
    for (std::uint64_t i = 0; i < n; ++i) {
        std::int32_t v;
        std::memcpy(&v, data.data() + i * 4, 4);
        // Wider: sign-extended for signed types, the INT32's bits for
        // unsigned ones; narrower: the low bytes (little-endian).
        const std::int64_t wide = is_signed(port.onnx_type) ? std::int64_t{v}
                                                            : std::int64_t{static_cast<std::uint32_t>(v)};
        std::memcpy(out.data() + i * width, &wide, width);
    }
    return out;
}

}  // namespace vaccel::onnx
