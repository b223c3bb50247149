// tensor.cpp - element counts and packed sizes of TOSA tensors.
//
// Owns: the arithmetic from a shape and dtype to bytes. Decides: a scalar
// (rank 0) has one element; arithmetic saturates at UINT64_MAX instead of
// wrapping, so a hostile shape can never yield a small size.
#include <limits>

#include "vaccel/tosa/graph.hpp"

namespace vaccel::tosa {
namespace {

constexpr std::uint64_t saturated = std::numeric_limits<std::uint64_t>::max();

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b)
{
    std::uint64_t product = 0;
    return __builtin_mul_overflow(a, b, &product) ? saturated : product;
}

}  // namespace

std::uint64_t Tensor::element_count() const
{
    std::uint64_t count = 1;
    for (const std::int64_t dim : shape) {
        if (dim < 0) return 0;  // parse() refuses these; a hand-built one holds nothing
        count = saturating_mul(count, static_cast<std::uint64_t>(dim));
    }
    return count;
}

std::uint64_t Tensor::byte_size() const
{
    const std::uint64_t count = element_count();
    if (dtype == DType::int4) return count / 2 + count % 2;  // two per byte, last one padded
    return saturating_mul(count, dtype_bytes(dtype));
}

}  // namespace vaccel::tosa
