// vaccel_onnx.cpp - libvaccel-onnx, the C entry point of the ONNX importer
// (include/vaccel/vaccel_onnx.h).
//
// Owns: the C view of one import (vaccel_onnx_model) and this thread's
// last refusal. Decides nothing of its own about models or data: importing
// is onnx::import_model, the boundary is onnx::to_graph / from_graph; this
// file only checks C arguments and turns Results into errnos and messages.
// Nothing here throws across the C boundary: every call catches.
#include "vaccel/vaccel_onnx.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "vaccel/onnx/importer.hpp"

struct vaccel_onnx_model {
    std::vector<std::uint8_t> tosa;
    std::vector<vaccel::onnx::Port> inputs, outputs;
};

namespace {

using vaccel::Errc;
using vaccel::Error;
namespace vo = vaccel::onnx;

thread_local std::string last_error;

int refused(int code, std::string message)
{
    last_error = std::move(message);
    return code;
}

int refused(const Error& error) { return refused(vaccel::error_errno(error.code), error.note); }

int succeeded()
{
    last_error.clear();
    return 0;
}

// Runs `body` (which returns 0 or a negative errno), keeping exceptions
// (std::bad_alloc, a library's) on this side of the C boundary.
template <class Body>
int guarded(const char* call, Body&& body)
{
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return refused(-ENOMEM, fmt::format("{}: out of memory", call));
    } catch (const std::exception& e) {
        return refused(-EIO, fmt::format("{}: {}", call, e.what()));
    }
}

void describe(const vo::Port& port, vaccel_onnx_port* out)
{
    out->name = port.name.c_str();
    out->onnx_type = port.onnx_type;
    out->graph_dtype = static_cast<std::uint32_t>(port.dtype);
    out->rank = static_cast<std::uint32_t>(port.dims.size());
    out->dims = port.dims.data();
    out->model_bytes = vo::model_bytes(port);
    out->graph_bytes = vo::graph_bytes(port);
}

// The names in options may be any C strings; a NULL one is refused.
int read_options(const vaccel_onnx_options* options, vo::ImportOptions* out)
{
    if (options == nullptr) return 0;
    if (options->size < sizeof(vaccel_onnx_options))
        return refused(-EINVAL, fmt::format("vaccel_onnx_import: options.size is {}; set it to "
                                            "sizeof(struct vaccel_onnx_options) ({})",
                                            options->size, sizeof(vaccel_onnx_options)));
    if ((options->shape_count != 0 && options->shapes == nullptr) ||
        (options->value_count != 0 && options->values == nullptr))
        return refused(-EINVAL, "vaccel_onnx_import: options give a count of shapes or values "
                                "but no array of them");
    for (std::uint32_t i = 0; i < options->shape_count; ++i) {
        const vaccel_onnx_input_shape& s = options->shapes[i];
        if (s.name == nullptr || (s.rank != 0 && s.dims == nullptr))
            return refused(-EINVAL, fmt::format("vaccel_onnx_import: shape {} has no name or no "
                                                "dims",
                                                i));
        std::vector<std::int64_t> dims(s.dims, s.dims + s.rank);
        for (std::int64_t d : dims)
            if (d < 0)
                return refused(-EINVAL, fmt::format("vaccel_onnx_import: shape of input '{}': "
                                                    "dimension {} is negative",
                                                    s.name, d));
        out->input_shapes[s.name] = std::move(dims);
    }
    for (std::uint32_t i = 0; i < options->value_count; ++i) {
        const vaccel_onnx_input_value& v = options->values[i];
        if (v.name == nullptr || (v.rank != 0 && v.dims == nullptr))
            return refused(-EINVAL, fmt::format("vaccel_onnx_import: value {} has no name or no "
                                                "dims",
                                                i));
        if (v.type != VACCEL_ONNX_INT64 && v.type != VACCEL_ONNX_INT32 && v.type != VACCEL_ONNX_FLOAT)
            return refused(-EINVAL, fmt::format("vaccel_onnx_import: value of input '{}' is {}; "
                                                "give it as INT64, INT32 or FLOAT",
                                                v.name, vo::onnx_type_name(v.type)));
        vo::ImportOptions::Values values;
        values.dims.assign(v.dims, v.dims + v.rank);
        std::uint64_t n = 1;
        for (std::int64_t d : values.dims) {
            if (d < 0 || d > (std::int64_t{1} << 24))
                return refused(-EINVAL, fmt::format("vaccel_onnx_import: value of input '{}': "
                                                    "dimension {} is outside 0 to 16777216",
                                                    v.name, d));
            n *= static_cast<std::uint64_t>(d);
        }
        if (n > (std::uint64_t{1} << 24))
            return refused(-EINVAL, fmt::format("vaccel_onnx_import: value of input '{}' holds {} "
                                                "elements; a value sets a shape or an attribute, "
                                                "at most 16777216",
                                                v.name, n));
        if (n != 0 && v.data == nullptr)
            return refused(-EINVAL, fmt::format("vaccel_onnx_import: value of input '{}' has no "
                                                "data",
                                                v.name));
        const auto* p = static_cast<const std::byte*>(v.data);
        for (std::uint64_t k = 0; k < n; ++k) {
            if (v.type == VACCEL_ONNX_INT64) {
                std::int64_t x;
                std::memcpy(&x, p + k * 8, 8);
                values.values.push_back(x);
            } else if (v.type == VACCEL_ONNX_INT32) {
                std::int32_t x;
                std::memcpy(&x, p + k * 4, 4);
                values.values.push_back(x);
            } else {  // FLOAT
                float x;
                std::memcpy(&x, p + k * 4, 4);
                values.floats.push_back(x);
            }
        }
        values.floating = v.type == VACCEL_ONNX_FLOAT;
        out->input_values[v.name] = std::move(values);
    }
    return 0;
}

const vo::Port* port_of(const vaccel_onnx_model* model, bool output, std::uint32_t index,
                        const char* call)
{
    if (model == nullptr) {
        refused(-EINVAL, fmt::format("{}: no model (NULL)", call));
        return nullptr;
    }
    const auto& ports = output ? model->outputs : model->inputs;
    if (index >= ports.size()) {
        refused(-EINVAL, fmt::format("{}: the model has {} {}s; there is no {} {}", call,
                                     ports.size(), output ? "output" : "input",
                                     output ? "output" : "input", index));
        return nullptr;
    }
    return &ports[index];
}

int describe_port(const vaccel_onnx_model* model, bool output, std::uint32_t index,
                  vaccel_onnx_port* port, const char* call)
{
    const vo::Port* found = port_of(model, output, index, call);
    if (found == nullptr) return -EINVAL;
    if (port == nullptr) return refused(-EINVAL, fmt::format("{}: no port to fill (NULL)", call));
    describe(*found, port);
    return succeeded();
}

int convert(const vo::Port& port, bool to_graph, const void* from, std::size_t from_bytes,
            void* to, std::size_t to_bytes, const char* call)
{
    const std::uint64_t want_from = to_graph ? vo::model_bytes(port) : vo::graph_bytes(port);
    const std::uint64_t want_to = to_graph ? vo::graph_bytes(port) : vo::model_bytes(port);
    if ((from == nullptr && from_bytes != 0) || (to == nullptr && to_bytes != 0))
        return refused(-EINVAL, fmt::format("{}: a NULL buffer", call));
    if (from_bytes != want_from || to_bytes != want_to)
        return refused(-EINVAL, fmt::format("{}: '{}' takes {} bytes in and {} out; {} and {} "
                                            "given",
                                            call, port.name, want_from, want_to, from_bytes,
                                            to_bytes));
    const std::span<const std::byte> data(static_cast<const std::byte*>(from), from_bytes);
    auto converted = to_graph ? vo::to_graph(port, data) : vo::from_graph(port, data);
    if (!converted) return refused(converted.error());
    if (converted->size() != to_bytes)  // ports.cpp's conversion and its byte counts disagree: a defect
        return refused(-EIO, fmt::format("{}: '{}' converted to {} bytes, not {}", call,
                                         port.name, converted->size(), to_bytes));
    if (to_bytes != 0) std::memcpy(to, converted->data(), to_bytes);
    return succeeded();
}

}  // namespace

extern "C" {

int vaccel_onnx_import(const void* onnx, size_t size, const vaccel_onnx_options* options,
                       vaccel_onnx_model** model)
{
    return guarded("vaccel_onnx_import", [&] {
        if (model == nullptr || (onnx == nullptr && size != 0))
            return refused(-EINVAL, "vaccel_onnx_import: no model bytes or no place for the "
                                    "result (NULL)");
        vo::ImportOptions how;
        if (int r = read_options(options, &how); r != 0) return r;
        const std::span<const std::byte> bytes(static_cast<const std::byte*>(onnx), size);
        auto imported = vo::import_model(bytes, how);
        if (!imported) return refused(imported.error());
        auto made = std::make_unique<vaccel_onnx_model>();
        made->tosa = vaccel::tosa::serialize(imported->graph);
        made->inputs = std::move(imported->inputs);
        made->outputs = std::move(imported->outputs);
        *model = made.release();
        return succeeded();
    });
}

int vaccel_onnx_import_file(const char* path, const vaccel_onnx_options* options,
                            vaccel_onnx_model** model)
{
    return guarded("vaccel_onnx_import_file", [&] {
        if (path == nullptr) return refused(-EINVAL, "vaccel_onnx_import_file: no path (NULL)");
        std::ifstream file(path, std::ios::binary);
        if (!file) {
            const int e = errno != 0 ? errno : ENOENT;
            return refused(-e, fmt::format("cannot read {}: {}", path, std::strerror(e)));
        }
        const std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                                      std::istreambuf_iterator<char>());
        if (file.bad()) return refused(-EIO, fmt::format("cannot read {}: a read failed", path));
        const int r = vaccel_onnx_import(bytes.data(), bytes.size(), options, model);
        if (r != 0) last_error = fmt::format("cannot import {}: {}", path, last_error);
        return r;
    });
}

void vaccel_onnx_free(vaccel_onnx_model* model) { delete model; }

const void* vaccel_onnx_tosa(const vaccel_onnx_model* model, size_t* size)
{
    if (model == nullptr) {
        refused(-EINVAL, "vaccel_onnx_tosa: no model (NULL)");
        if (size != nullptr) *size = 0;
        return nullptr;
    }
    succeeded();
    if (size != nullptr) *size = model->tosa.size();
    return model->tosa.data();
}

uint32_t vaccel_onnx_input_count(const vaccel_onnx_model* model)
{
    return model == nullptr ? 0 : static_cast<std::uint32_t>(model->inputs.size());
}

uint32_t vaccel_onnx_output_count(const vaccel_onnx_model* model)
{
    return model == nullptr ? 0 : static_cast<std::uint32_t>(model->outputs.size());
}

int vaccel_onnx_input(const vaccel_onnx_model* model, uint32_t index, vaccel_onnx_port* port)
{
    return describe_port(model, false, index, port, "vaccel_onnx_input");
}

int vaccel_onnx_output(const vaccel_onnx_model* model, uint32_t index, vaccel_onnx_port* port)
{
    return describe_port(model, true, index, port, "vaccel_onnx_output");
}

int vaccel_onnx_input_to_graph(const vaccel_onnx_model* model, uint32_t index,
                               const void* model_data, size_t model_bytes, void* graph_data,
                               size_t graph_bytes)
{
    return guarded("vaccel_onnx_input_to_graph", [&] {
        const vo::Port* port = port_of(model, false, index, "vaccel_onnx_input_to_graph");
        if (port == nullptr) return -EINVAL;
        return convert(*port, true, model_data, model_bytes, graph_data, graph_bytes,
                       "vaccel_onnx_input_to_graph");
    });
}

int vaccel_onnx_output_from_graph(const vaccel_onnx_model* model, uint32_t index,
                                  const void* graph_data, size_t graph_bytes, void* model_data,
                                  size_t model_bytes)
{
    return guarded("vaccel_onnx_output_from_graph", [&] {
        const vo::Port* port = port_of(model, true, index, "vaccel_onnx_output_from_graph");
        if (port == nullptr) return -EINVAL;
        return convert(*port, false, graph_data, graph_bytes, model_data, model_bytes,
                       "vaccel_onnx_output_from_graph");
    });
}

const char* vaccel_onnx_last_error(void) { return last_error.c_str(); }

}  // extern "C"
