// buffer_binding.cpp - _vaccel.Buffer: a buffer as Python sees it.
//
// Owns: the Buffer class, its copies in and out (read, read_into, write)
// and its host views: numpy(), __array__ and the buffer protocol. Decides:
// the buffer protocol hands out the Py_buffer of a fresh mapped view
// (buffer_views.hpp), so the exported object (Py_buffer.obj) is that
// ndarray, and releasing the Py_buffer releases the view and its token;
// pybind11's own buffer slots (which cannot report a release) are replaced.
#include <pybind11/stl.h>

#include <string>

#include "bindings.hpp"
#include "buffer_views.hpp"
#include "gil.hpp"

namespace py = pybind11;

namespace vaccel::python {

namespace {

// bf_getbuffer of Buffer: a mapped view's own buffer. Called with the GIL.
int buffer_getbuffer(PyObject* self, Py_buffer* view, int flags)
{
    view->obj = nullptr;
    try {
        auto buffer = py::reinterpret_borrow<py::object>(self).cast<std::shared_ptr<BufferCore>>();
        py::array array = mapped_view(buffer);
        return PyObject_GetBuffer(array.ptr(), view, flags);  // view->obj owns the array
    } catch (py::error_already_set& error) {
        error.restore();
    } catch (const CallFailure& failure) {
        set_python_error(failure);
    } catch (const std::exception& error) {
        PyErr_SetString(PyExc_BufferError, error.what());
    }
    return -1;
}

std::uint64_t host_bytes(const Py_buffer& view) { return static_cast<std::uint64_t>(view.len); }

void write(BufferCore& buffer, const py::buffer& data, std::uint64_t offset)
{
    Py_buffer view{};
    if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0)
        throw py::error_already_set();
    try {
        without_gil([&] { buffer.write(view.buf, host_bytes(view), offset); });
    } catch (...) {
        PyBuffer_Release(&view);
        throw;
    }
    PyBuffer_Release(&view);
}

void read_into(BufferCore& buffer, const py::buffer& out, std::uint64_t offset)
{
    Py_buffer view{};
    if (PyObject_GetBuffer(out.ptr(), &view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0)
        throw py::error_already_set();
    try {
        without_gil([&] { buffer.read(view.buf, host_bytes(view), offset); });
    } catch (...) {
        PyBuffer_Release(&view);
        throw;
    }
    PyBuffer_Release(&view);
}

py::array read(BufferCore& buffer)
{
    const Layout& layout = buffer.layout();
    py::array out(py::dtype(layout.typestr), layout.shape);
    void* data = out.mutable_data();
    without_gil([&] { buffer.read(data, buffer.nbytes(), 0); });
    return out;
}

py::object as_array(const std::shared_ptr<BufferCore>& buffer, py::object dtype, py::object copy)
{
    py::array view = mapped_view(buffer);
    const bool wants_copy = !copy.is_none() && copy.cast<bool>();
    if (!dtype.is_none() && !view.dtype().equal(py::dtype::from_args(dtype)))
        return view.attr("astype")(dtype);
    return wants_copy ? view.attr("copy")() : py::object(view);
}

}  // namespace

BufferClass register_buffer(py::module_& module)
{
    BufferClass cls(module, "Buffer", py::buffer_protocol(),
                    "A vaccel buffer: bytes in a device's context. Host and Shared buffers map "
                    "into the process: numpy(), np.asarray(), memoryview() and np.from_dlpack() "
                    "view them in place.");
    // Replace pybind11's buffer slots (see the file comment).
    auto* heap_type = reinterpret_cast<PyHeapTypeObject*>(cls.ptr());
    heap_type->as_buffer.bf_getbuffer = &buffer_getbuffer;
    heap_type->as_buffer.bf_releasebuffer = nullptr;
    cls.def_property_readonly("nbytes", &BufferCore::nbytes)
        .def_property_readonly(
            "shape", [](const BufferCore& b) { return py::tuple(py::cast(b.layout().shape)); })
        .def_property_readonly(
            "dtype", [](const BufferCore& b) { return py::dtype(b.layout().typestr); })
        .def_property_readonly("domain", &BufferCore::domain)
        .def_property_readonly("device", &BufferCore::device)
        .def_property_readonly("handle", &BufferCore::handle)
        .def_property_readonly("context", &BufferCore::context)
        .def_property_readonly("views", &BufferCore::views,
                               "How many host views (arrays, memoryviews, DLPack tensors) live.")
        .def_property_readonly("mapped", [](const BufferCore& b) {
            return without_gil([&] { return b.mapped(); });
        })
        .def_property_readonly("closed", [](const BufferCore& b) {
            return without_gil([&] { return b.closed(); });
        })
        .def_property_readonly(
            "address", [](BufferCore& b) { return without_gil([&] { return b.address(); }); },
            "The address of the mapping in this process (mapping the buffer first).")
        .def("write", &write, py::arg("data"), py::arg("offset") = 0,
             "Copies the bytes of `data` (C-contiguous) into the buffer at `offset`.")
        .def("read", &read, "A new array holding a copy of the buffer.")
        .def("read_into", &read_into, py::arg("out"), py::arg("offset") = 0,
             "Copies len(out) bytes from `offset` into `out` (writable, C-contiguous).")
        .def("numpy", &mapped_view, "An ndarray viewing the mapped buffer in place.")
        .def("__array__", &as_array, py::arg("dtype") = py::none(), py::arg("copy") = py::none())
        .def("close", [](BufferCore& b) { without_gil([&] { b.close(); }); },
             "Frees the buffer; refused (Busy) while views are alive.")
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](BufferCore& b, py::args) { without_gil([&] { b.close(); }); })
        .def("__repr__", [](const BufferCore& b) {
            std::string shape;
            for (std::size_t i = 0; i < b.layout().shape.size(); ++i)
                shape += (i ? ", " : "") + std::to_string(b.layout().shape[i]);
            if (b.layout().shape.size() == 1)
                shape += ",";
            return "<vaccel.Buffer " + std::to_string(b.nbytes()) + " bytes (" + shape + ") " +
                   b.layout().typestr + " on device " + std::to_string(b.device()) + ">";
        });
    return cls;
}

py::array mapped_view(const std::shared_ptr<BufferCore>& buffer)
{
    std::unique_ptr<BufferCore::ViewToken> token = without_gil([&] { return buffer->view(); });
    void* address = token->address();
    py::capsule keeper(token.get(),
                       [](void* owned) { delete static_cast<BufferCore::ViewToken*>(owned); });
    token.release();  // the capsule owns it now
    const Layout& layout = buffer->layout();
    return py::array(py::dtype(layout.typestr), layout.shape, address, keeper);
}

}  // namespace vaccel::python
