// onnx_binding.cpp - _vaccel.OnnxModel: an ONNX model imported through
// libvaccel-onnx's C API (vaccel/vaccel_onnx.h), for Client.load of a
// .onnx file (python/vaccel/onnx_program.py).
//
// Owns: the Python view of one vaccel_onnx_model (freed with the object).
// Decides nothing about models or data: importing and the conversions
// across the graph's boundary are the library's; a refusal becomes the
// vaccel.Error its errno names, with the library's sentence.
// Built only where the importer is (VACCEL_ONNX); otherwise _vaccel has no
// OnnxModel and vaccel says so when asked to load ONNX.
#include <pybind11/stl.h>

#include <cerrno>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <vaccel/vaccel_onnx.h>

#include "bindings.hpp"
#include "call_failure.hpp"
#include "gil.hpp"

namespace py = pybind11;

namespace vaccel::python {
namespace {

// The contract error a libvaccel-onnx errno stands for (vaccel_onnx.h).
std::uint32_t contract_error_of(int rc)
{
    switch (rc) {
    case -EOPNOTSUPP: return VACCEL_E_UNSUPPORTED;
    case -ERANGE: return VACCEL_E_OUT_OF_BOUNDS;
    case -ENOMEM: return VACCEL_E_OUT_OF_MEMORY;
    case -EIO: return VACCEL_E_EXTERNAL;
    default: return VACCEL_E_INVALID_ARGUMENT;
    }
}

void check_onnx(int rc, std::string context)
{
    if (rc == 0) return;
    vaccel_status status{};
    status.error = contract_error_of(rc);
    throw CallFailure(rc, status, std::move(context), vaccel_onnx_last_error());
}

class OnnxModel {
public:
    // `values`: (name, ONNX type, dims, bytes) of each input given by value.
    OnnxModel(py::bytes model, const std::map<std::string, std::vector<std::int64_t>>& shapes,
              const std::vector<std::tuple<std::string, std::int32_t, std::vector<std::int64_t>,
                                           py::bytes>>& values,
              const std::string& what)
    {
        std::vector<vaccel_onnx_input_shape> shape_list;
        for (const auto& [name, dims] : shapes)
            shape_list.push_back({name.c_str(), dims.data(), static_cast<std::uint32_t>(dims.size())});
        std::vector<std::string> value_bytes;  // copies: the GIL is released below
        value_bytes.reserve(values.size());
        for (const auto& v : values) value_bytes.push_back(std::string(std::get<3>(v)));
        std::vector<vaccel_onnx_input_value> value_list;
        for (std::size_t i = 0; i < values.size(); ++i) {
            const auto& [name, type, dims, data] = values[i];
            value_list.push_back({name.c_str(), dims.data(), static_cast<std::uint32_t>(dims.size()),
                                  type, value_bytes[i].data()});
        }
        vaccel_onnx_options options{};
        options.size = sizeof options;
        options.shape_count = static_cast<std::uint32_t>(shape_list.size());
        options.shapes = shape_list.data();
        options.value_count = static_cast<std::uint32_t>(value_list.size());
        options.values = value_list.data();
        const std::string bytes(model);
        without_gil([&] {
            check_onnx(vaccel_onnx_import(bytes.data(), bytes.size(), &options, &model_),
                       "cannot import " + what);
        });
    }
    ~OnnxModel() { vaccel_onnx_free(model_); }
    OnnxModel(const OnnxModel&) = delete;
    OnnxModel& operator=(const OnnxModel&) = delete;

    py::bytes tosa() const
    {
        std::size_t size = 0;
        const void* data = vaccel_onnx_tosa(model_, &size);
        return py::bytes(static_cast<const char*>(data), size);
    }

    py::list ports(bool outputs) const
    {
        py::list list;
        const std::uint32_t n = outputs ? vaccel_onnx_output_count(model_) : vaccel_onnx_input_count(model_);
        for (std::uint32_t i = 0; i < n; ++i) {
            vaccel_onnx_port port{};
            check_onnx(outputs ? vaccel_onnx_output(model_, i, &port) : vaccel_onnx_input(model_, i, &port),
                       "cannot describe the imported model");
            py::dict d;
            d["name"] = std::string(port.name);
            d["onnx_type"] = port.onnx_type;
            d["graph_dtype"] = port.graph_dtype;
            d["shape"] = std::vector<std::int64_t>(port.dims, port.dims + port.rank);
            d["model_bytes"] = port.model_bytes;
            d["graph_bytes"] = port.graph_bytes;
            list.append(d);
        }
        return list;
    }

    // Input `index`'s bytes in the model's type, in the graph's (or the
    // reverse for an output); sizes are checked by the library.
    py::bytes convert(bool output, std::uint32_t index, py::buffer data) const
    {
        vaccel_onnx_port port{};
        check_onnx(output ? vaccel_onnx_output(model_, index, &port) : vaccel_onnx_input(model_, index, &port),
                   "cannot convert data of the imported model");
        const py::buffer_info info = data.request();
        const std::size_t given = static_cast<std::size_t>(info.size * info.itemsize);
        std::string out(output ? port.model_bytes : port.graph_bytes, '\0');
        const int rc = output ? vaccel_onnx_output_from_graph(model_, index, info.ptr, given, out.data(), out.size())
                              : vaccel_onnx_input_to_graph(model_, index, info.ptr, given, out.data(), out.size());
        check_onnx(rc, "the imported model refused the data");
        return py::bytes(out);
    }

private:
    vaccel_onnx_model* model_ = nullptr;
};

}  // namespace

void register_onnx(py::module_& module)
{
    py::class_<OnnxModel>(module, "OnnxModel")
        .def(py::init<py::bytes, const std::map<std::string, std::vector<std::int64_t>>&,
                      const std::vector<std::tuple<std::string, std::int32_t,
                                                   std::vector<std::int64_t>, py::bytes>>&,
                      const std::string&>(),
             py::arg("model"), py::arg("shapes"), py::arg("values"), py::arg("what"),
             "Imports an ONNX model (vaccel_onnx_import).")
        .def_property_readonly("tosa", &OnnxModel::tosa, "The TOSA flatbuffer it imported to.")
        .def_property_readonly("inputs", [](const OnnxModel& m) { return m.ports(false); })
        .def_property_readonly("outputs", [](const OnnxModel& m) { return m.ports(true); })
        .def("input_to_graph",
             [](const OnnxModel& m, std::uint32_t i, py::buffer data) { return m.convert(false, i, data); })
        .def("output_from_graph",
             [](const OnnxModel& m, std::uint32_t i, py::buffer data) { return m.convert(true, i, data); });
}

}  // namespace vaccel::python
