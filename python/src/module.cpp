// module.cpp - the _vaccel extension module: the C++ half of `import vaccel`.
//
// Owns: the module's entry point. Decides nothing itself: each part
// (bindings.hpp) registers what it owns. The Python package (python/vaccel)
// is the public API; _vaccel is its private implementation.
#include "bindings.hpp"
#include "buffer_core.hpp"

PYBIND11_MODULE(_vaccel, module)
{
    module.doc() = "libvaccel's C API for the vaccel package (use `import vaccel`).";
    // VACCEL_VERSION: the project's version (CMakeLists.txt, project()).
    module.attr("__version__") = VACCEL_VERSION;
    vaccel::python::register_errors(module);
    vaccel::python::register_constants(module);
    vaccel::python::register_client(module);
    vaccel::python::register_program(module);
    auto buffer_class = vaccel::python::register_buffer(module);
    vaccel::python::register_dlpack(buffer_class);
#ifdef VACCEL_PYTHON_ONNX
    vaccel::python::register_onnx(module);
#endif
}
