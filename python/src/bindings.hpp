// bindings.hpp - the parts of the _vaccel module, one function each.
//
// Owns: the list of what module.cpp registers, in order: errors and
// constants first (every later part may raise), then the classes.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

namespace vaccel::python {

class BufferCore;
using BufferClass = pybind11::class_<BufferCore, std::shared_ptr<BufferCore>>;

// The CallFailure translator and status_message, error_name, strerror, errno_of.
void register_errors(pybind11::module_& module);
// The contract's enums and flags as module integers (E_*, D_*, LIMIT_*, ...).
void register_constants(pybind11::module_& module);
// _vaccel.Client: open, close, transport, version, devices, load, allocate.
void register_client(pybind11::module_& module);
// _vaccel.Program: slots, run, close.
void register_program(pybind11::module_& module);
// _vaccel.Buffer: properties, read/write, the buffer protocol and __array__.
BufferClass register_buffer(pybind11::module_& module);
// __dlpack__ and __dlpack_device__ on the Buffer class.
void register_dlpack(BufferClass& buffer_class);
// _vaccel.OnnxModel (onnx_binding.cpp), where the importer is built.
void register_onnx(pybind11::module_& module);

}  // namespace vaccel::python
