// graph.hpp - the in-memory TOSA 1.0 graph every backend reads.
//
// Owns: a parsed graph as plain values (no pointers into the input bytes:
// the artifact may be freed once parsing returns). Decides: tensors are
// referred to by index into their block's `tensors`; names are resolved by
// the parser, so a consumer never looks a name up.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vaccel/common/error.hpp"

namespace vaccel::tosa {

// Numbering of TOSA 1.0 (not 0.80/0.90, which differ).
enum class DType : std::uint32_t {
    unknown = 0, boolean = 1, int4 = 2, int8 = 3, int16 = 4, int32 = 5, int48 = 6,
    fp32 = 7, fp16 = 8, bf16 = 9, shape = 10, fp8e4m3 = 11, fp8e5m2 = 12,
};

enum class Op : std::uint32_t {
    unknown = 0, argmax = 1, avg_pool2d = 2, conv2d = 3, conv3d = 4, depthwise_conv2d = 5,
    fft2d = 6, matmul = 7, max_pool2d = 8, rfft2d = 9, transpose_conv2d = 10, clamp = 11,
    erf = 12, sigmoid = 13, tanh = 14, add = 15, arithmetic_right_shift = 16,
    bitwise_and = 17, bitwise_or = 18, bitwise_xor = 19, intdiv = 20, logical_and = 21,
    logical_left_shift = 22, logical_right_shift = 23, logical_or = 24, logical_xor = 25,
    maximum = 26, minimum = 27, mul = 28, pow = 29, sub = 30, table = 31, abs = 32,
    bitwise_not = 33, ceil = 34, clz = 35, cos = 36, exp = 37, floor = 38, log = 39,
    logical_not = 40, negate = 41, reciprocal = 42, rsqrt = 43, sin = 44, select = 45,
    equal = 46, greater = 47, greater_equal = 48, reduce_all = 49, reduce_any = 50,
    reduce_max = 51, reduce_min = 52, reduce_product = 53, reduce_sum = 54, concat = 55,
    pad = 56, reshape = 57, reverse = 58, slice = 59, tile = 60, transpose = 61, gather = 62,
    scatter = 63, resize = 64, cast = 65, rescale = 66, const_ = 67, identity = 68,
    custom = 69, cond_if = 70, while_loop = 71, variable = 72, variable_write = 73,
    variable_read = 74, const_shape = 75,
};
inline constexpr std::uint32_t op_count = 76;

std::string_view dtype_name(DType dtype);  // "FP32", "INT8", ... ("UNKNOWN(n)" never: see below)
std::string_view op_name(Op op);           // "ADD", "MATMUL", ...
// Bytes one element occupies, 0 for INT4 (packed) and unknown dtypes.
std::size_t dtype_bytes(DType dtype);

struct Version {
    std::int32_t major = -1;
    std::int32_t minor = -1;
    std::int32_t patch = -1;
    bool draft = true;

    friend bool operator==(const Version&, const Version&) = default;
};

struct Tensor {
    std::string name;
    std::vector<std::int64_t> shape;  // every dimension >= 0 (dynamic shapes are refused)
    DType dtype = DType::unknown;
    std::vector<std::uint8_t> data;   // constant bytes, exactly element_count * size; empty if none
    bool variable = false;
    std::string variable_name;
    // True when the block names a tensor that an enclosing region's block
    // declares (a WHILE_LOOP/COND_IF body reading a value of its parent, as
    // real producers write). The tensor here is a copy of that declaration
    // (same name, shape, dtype, data); at run time its value is the parent's.
    // The parser appends captured tensors after the block's own, in order of
    // first reference; serialize() does not write them (the name suffices).
    bool captured = false;

    // Both saturate at UINT64_MAX instead of overflowing; parse() refuses
    // shapes over 2^40 elements, so parsed tensors never get near it.
    std::uint64_t element_count() const;
    std::uint64_t byte_size() const;  // packed size in bytes (INT4: two per byte)

    friend bool operator==(const Tensor&, const Tensor&) = default;
};

// The union of the attribute fields of the operators vaccel reads. Fields an
// operator does not have stay at their defaults; `present` says whether the
// operator carried an attribute table at all.
struct Attributes {
    bool present = false;
    std::int32_t axis = 0;
    std::uint32_t nan_mode = 0;
    std::vector<std::int32_t> perms;                     // TRANSPOSE
    std::vector<std::int32_t> kernel, stride, pad, dilation, out_pad;  // pools, convolutions
    DType acc_type = DType::unknown;
    bool local_bound = false;
    std::vector<std::uint8_t> min_val, max_val;          // CLAMP, raw element bytes
    std::uint32_t resize_mode = 0;
    bool scale32 = false, per_channel = false, input_unsigned = false, output_unsigned = false;
    std::uint32_t rounding_mode = 0;
    bool round = false;                                  // ARITHMETIC_RIGHT_SHIFT
    bool inverse = false;                                // FFT2D
    std::string then_graph, else_graph, cond_graph, body_graph;  // control flow
    std::string operator_name, domain_name;              // CUSTOM
    std::vector<std::uint8_t> implementation_attrs;      // CUSTOM, opaque bytes

    friend bool operator==(const Attributes&, const Attributes&) = default;
};

struct Operator {
    Op op = Op::unknown;
    Attributes attributes;
    std::vector<std::uint32_t> inputs;   // indices into Block::tensors
    std::vector<std::uint32_t> outputs;  // indices into Block::tensors
    std::string location;

    friend bool operator==(const Operator&, const Operator&) = default;
};

struct Block {
    std::string name;
    std::vector<Operator> operators;
    std::vector<Tensor> tensors;
    std::vector<std::uint32_t> inputs;   // indices into tensors, declared order
    std::vector<std::uint32_t> outputs;  // indices into tensors, declared order

    friend bool operator==(const Block&, const Block&) = default;
};

struct Region {
    std::string name;
    std::vector<Block> blocks;

    friend bool operator==(const Region&, const Region&) = default;
};

struct Graph {
    Version version;
    std::vector<Region> regions;

    friend bool operator==(const Graph&, const Graph&) = default;
};

// Parses a TOSA 1.0 flatbuffer. Every input first passes the flatbuffers
// Verifier; then the version is read and anything but 1.0 is refused
// (Unsupported, VACCEL_D_TOSA_VERSION, arg0/arg1 = major/minor, a note
// naming it, e.g. "unsupported TOSA version 0.80"). Names are resolved to
// indices; an unknown name, a bad shape or short constant data is
// InvalidArgument with VACCEL_D_TOSA_MALFORMED.
Result<Graph> parse(std::span<const std::byte> bytes);

// Serializes a graph (version, regions, blocks, tensors, operators and the
// attributes above) to a TOSA 1.0 flatbuffer: the project's graph builder
// writes its example models with it; parse(serialize(g)) reproduces g.
// An operator index out of range of its block's tensors is written as a
// name no tensor has, so the result is refused by parse() rather than read
// out of bounds here.
std::vector<std::uint8_t> serialize(const Graph& graph);

// The largest artifact parse() reads (the flatbuffer itself, 1 GiB): the
// largest payload one request carries to the daemon (VACCEL_SRV_PAYLOAD_MAX
// of uapi/vaccel_server.h), half of what a flatbuffer can address (2 GiB).
// Every device's limit is this one (DeviceLimits::max_artifact_bytes); an
// FP32 BERT-base encoder (12 layers) is a 324 MiB program.
inline constexpr std::size_t max_artifact_bytes = std::size_t{1} << 30;
// The most elements one tensor may hold (2^40).
inline constexpr std::uint64_t max_tensor_elements = std::uint64_t{1} << 40;

}  // namespace vaccel::tosa
