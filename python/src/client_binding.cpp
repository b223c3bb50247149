// client_binding.cpp - _vaccel.Client: the client as Python sees it.
//
// Owns: the Python face of ClientCore: open, close, transport, version,
// devices, and the factories of programs and buffers. Decides: device
// records cross into Python as plain dicts of the contract's fields
// (struct vaccel_device_info); vaccel/devices.py gives them their names
// and meaning. Every libvaccel call runs without the GIL.
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings.hpp"
#include "buffer_core.hpp"
#include "client_core.hpp"
#include "gil.hpp"
#include "program_core.hpp"
#include "queue_pool.hpp"

namespace py = pybind11;

namespace vaccel::python {

namespace {

std::string bounded(const char* text, std::size_t capacity)
{
    std::size_t length = 0;
    while (length < capacity && text[length] != '\0')
        ++length;
    return std::string(text, length);
}

py::dict limits_dict(const vaccel_device_limits& limits)
{
    py::dict out;
    out["max_contexts"] = limits.max_contexts;
    out["max_buffers"] = limits.max_buffers;
    out["max_programs"] = limits.max_programs;
    out["max_queues"] = limits.max_queues;
    out["max_events"] = limits.max_events;
    out["max_bindings"] = limits.max_bindings;
    out["max_buffer_bytes"] = limits.max_buffer_bytes;
    out["max_artifact_bytes"] = limits.max_artifact_bytes;
    out["max_memory_bytes"] = limits.max_memory_bytes;
    out["max_gates"] = limits.max_gates;
    return out;
}

py::dict device_dict(std::uint32_t index, const struct vaccel_device_info& info)
{
    py::dict out;
    out["index"] = index;
    out["name"] = bounded(info.name, sizeof info.name);
    out["driver"] = bounded(info.driver, sizeof info.driver);
    out["device_class"] = info.device_class;
    out["vendor_id"] = info.vendor_id;
    out["device_id"] = info.device_id;
    out["uuid"] = py::bytes(reinterpret_cast<const char*>(info.uuid), sizeof info.uuid);
    out["pci"] = info.pci_valid ? py::object(py::make_tuple(info.pci_domain, info.pci_bus,
                                                            info.pci_device, info.pci_function))
                                : py::object(py::none());
    out["memory_caps"] = info.memory_caps;
    out["memory_bytes"] = info.memory_bytes;
    out["limits"] = limits_dict(info.limits);
    out["formats"] = info.formats;
    py::list targets;
    for (std::uint32_t i = 0; i < info.tosa_target_count && i < VACCEL_MAX_TOSA_TARGETS; ++i) {
        const auto& t = info.tosa_targets[i];
        targets.append(py::make_tuple(t.major, t.minor, t.profiles, t.level, t.extensions));
    }
    out["tosa_targets"] = targets;
    out["flags"] = info.flags;
    out["state"] = info.state;
    return out;
}

py::list devices(ClientCore& core)
{
    const std::vector<struct vaccel_device_info> infos = without_gil([&] {
        auto hold = core.hold();
        std::uint32_t count = 0;
        check(vaccel_device_count(hold.get(), &count), "cannot count the devices");
        std::vector<struct vaccel_device_info> out(count);
        for (std::uint32_t i = 0; i < count; ++i)
            check(vaccel_device_info(hold.get(), i, &out[i]),
                  "cannot query device " + std::to_string(i));
        return out;
    });
    py::list out;
    for (std::uint32_t i = 0; i < infos.size(); ++i)
        out.append(device_dict(i, infos[i]));
    return out;
}

py::tuple version(ClientCore& core)
{
    const struct vaccel_get_version got = without_gil([&] {
        auto hold = core.hold();
        struct vaccel_get_version version{};
        check(vaccel_get_version(hold.get(), &version), "cannot query the vaccel ABI version");
        return version;
    });
    return py::make_tuple(got.major, got.minor, got.capabilities);
}

}  // namespace

void register_client(py::module_& module)
{
    py::class_<ClientCore, std::shared_ptr<ClientCore>>(
        module, "Client", "One libvaccel client (vaccel.Client wraps it).")
        .def(py::init([](std::optional<std::string> transport, std::optional<std::string> socket) {
                 return without_gil([&] { return ClientCore::open(transport, socket); });
             }),
             py::arg("transport") = py::none(), py::arg("socket") = py::none())
        .def_property_readonly("transport", &ClientCore::transport)
        .def_property_readonly("closed", [](ClientCore& core) {
            return without_gil([&] { return core.closed(); });
        })
        .def("close", [](ClientCore& core) { without_gil([&] { core.close(); }); })
        .def("version", &version, "(major, minor, capabilities) of the contract ABI.")
        .def(
            "queues",
            [](ClientCore& core, std::uint64_t context) {
                return without_gil([&] { return core.queues().size(context); });
            },
            py::arg("context"), "How many queues the client's runs made in `context`.")
        .def("devices", &devices, "Each device's vaccel_device_info, as a dict.")
        .def(
            "load",
            [](const std::shared_ptr<ClientCore>& core, std::uint32_t device, py::bytes payload) {
                // The bytes object stays alive (and immutable) for the call.
                char* data = nullptr;
                Py_ssize_t size = 0;
                PyBytes_AsStringAndSize(payload.ptr(), &data, &size);
                return without_gil([&] {
                    return ProgramCore::load(core, device, data, static_cast<std::size_t>(size));
                });
            },
            py::arg("device"), py::arg("payload"), "Loads a TOSA flatbuffer on device `device`.")
        .def(
            "allocate",
            [](const std::shared_ptr<ClientCore>& core, std::uint32_t device, std::uint32_t domain,
               std::string typestr, std::size_t itemsize, std::vector<std::int64_t> shape) {
                Layout layout{std::move(typestr), itemsize, std::move(shape)};
                return without_gil(
                    [&] { return BufferCore::allocate(core, device, domain, std::move(layout)); });
            },
            py::arg("device"), py::arg("domain"), py::arg("typestr"), py::arg("itemsize"),
            py::arg("shape"), "A buffer (usage all, access read-write) on device `device`.");
}

}  // namespace vaccel::python
