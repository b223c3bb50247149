// program_binding.cpp - _vaccel.Program: a loaded program as Python sees it.
//
// Owns: turning the Python objects bound to slots into SlotSources. Decides:
// a slot takes a vaccel Buffer (bound directly) or any object with the
// buffer protocol that is C-contiguous and exactly the slot's bytes
// (readable for inputs, writable for outputs); vaccel/program.py has
// already checked dtype and shape, this checks what the run relies on.
// The Py_buffer views are taken and released with the GIL held, and stay
// valid (their objects kept alive) for the run, which runs without it.
#include <pybind11/stl.h>

#include <vector>

#include "bindings.hpp"
#include "buffer_core.hpp"
#include "gil.hpp"
#include "program_core.hpp"

namespace py = pybind11;

namespace vaccel::python {

namespace {

// One Py_buffer, released (with the GIL, which its owner holds) on destruction.
class HostView {
public:
    HostView(py::handle object, bool writable)
    {
        const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(object.ptr(), &view_, flags) != 0)
            throw py::error_already_set();
    }
    ~HostView() { PyBuffer_Release(&view_); }
    HostView(const HostView&) = delete;
    HostView& operator=(const HostView&) = delete;
    void* data() const { return view_.buf; }
    std::uint64_t bytes() const { return static_cast<std::uint64_t>(view_.len); }

private:
    Py_buffer view_{};
};

py::list slot_list(const ProgramCore& program)
{
    py::list out;
    for (const SlotInfo& slot : program.slots()) {
        py::dict entry;
        entry["slot"] = slot.slot;
        entry["role"] = slot.role;
        entry["dtype"] = slot.dtype;
        entry["shape"] = py::tuple(py::cast(slot.shape));
        entry["bytes"] = slot.bytes;
        entry["name"] = slot.name;
        out.append(entry);
    }
    return out;
}

void run(ProgramCore& program, const py::list& bound)
{
    const auto& slots = program.slots();
    std::vector<SlotSource> sources(bound.size());
    std::vector<std::unique_ptr<HostView>> views;  // released after the run, with the GIL
    for (std::size_t i = 0; i < bound.size(); ++i) {
        py::handle object = bound[i];
        if (py::isinstance<BufferCore>(object)) {
            sources[i].buffer = &object.cast<BufferCore&>();
            continue;
        }
        const bool input = i < program.input_count();
        views.push_back(std::make_unique<HostView>(object, !input));
        const HostView& view = *views.back();
        if (i < slots.size() && view.bytes() != slots[i].bytes)
            throw CallFailure::refusal(
                VACCEL_E_INVALID_ARGUMENT, VACCEL_D_BINDING_SIZE, i, slots[i].bytes,
                "cannot run the program: " + std::string(input ? "input" : "output") + " '" +
                    slots[i].name + "' takes " + std::to_string(slots[i].bytes) +
                    " bytes and the object bound to it has " + std::to_string(view.bytes()));
        if (input)
            sources[i].input = view.data();
        else
            sources[i].output = view.data();
    }
    // `bound` (the caller's list) keeps every Buffer and viewed object alive.
    without_gil([&] { program.run(sources); });
}

}  // namespace

void register_program(py::module_& module)
{
    py::class_<ProgramCore, std::shared_ptr<ProgramCore>>(
        module, "Program", "One loaded TOSA program (vaccel.Program wraps it).")
        .def_property_readonly("slots", &slot_list)
        .def_property_readonly("input_count", &ProgramCore::input_count)
        .def_property_readonly("device", &ProgramCore::device)
        .def_property_readonly("handle", &ProgramCore::handle)
        .def_property_readonly("context", &ProgramCore::context)
        .def_property_readonly("lanes", [](ProgramCore& program) {
            return without_gil([&] { return program.lanes(); });
        })
        .def_property_readonly("closed", [](ProgramCore& program) {
            return without_gil([&] { return program.closed(); });
        })
        .def("run", &run, py::arg("bound"),
             "One run: `bound` holds, per slot in order, a Buffer or a C-contiguous object "
             "with the buffer protocol.")
        .def("close", [](ProgramCore& program) { without_gil([&] { program.close(); }); });
}

}  // namespace vaccel::python
