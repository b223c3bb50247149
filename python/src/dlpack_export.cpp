// dlpack_export.cpp - Buffer.__dlpack__ and __dlpack_device__ (DLPack 0.6).
//
// Owns: the DLManagedTensor a consumer (np.from_dlpack, torch.from_dlpack,
// ...) takes. Decides:
//  - only host-visible memory is exported: a mapped Host or Shared buffer,
//    as kDLCPU device 0; a Device-domain buffer is refused as
//    vaccel_buffer_map() refuses it (Incompatible, VACCEL_D_DOMAIN);
//  - the tensor is the buffer's Layout, C-contiguous (strides NULL),
//    byte_offset 0; DLPack 0.6 has no boolean type, so a bool buffer is
//    refused (Unsupported);
//  - the tensor owns a ViewToken: until its deleter runs, the buffer is
//    neither freed nor unmapped. The deleter touches no Python object, so
//    a consumer may call it on any thread, with or without the GIL;
//  - the capsule is named "dltensor"; a consumer renames it
//    "used_dltensor" and calls the deleter itself; a capsule dropped
//    unconsumed calls it from its destructor.
#include <dlpack/dlpack.h>

#include <string>
#include <vector>

#include "bindings.hpp"
#include "buffer_core.hpp"
#include "gil.hpp"

namespace py = pybind11;

namespace vaccel::python {

namespace {

constexpr const char* capsule_name = "dltensor";
constexpr const char* used_capsule_name = "used_dltensor";

// The managed tensor and everything its pointers point into.
struct DlpackExport {
    DLManagedTensor managed{};
    std::vector<std::int64_t> shape;
    std::unique_ptr<BufferCore::ViewToken> token;
};

void delete_export(DLManagedTensor* managed)
{
    delete static_cast<DlpackExport*>(managed->manager_ctx);
}

void capsule_destructor(PyObject* capsule)
{
    if (PyCapsule_IsValid(capsule, used_capsule_name))
        return;  // a consumer took it, and calls the deleter
    // Keep any exception being raised across this destructor.
    PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
    PyErr_Fetch(&type, &value, &traceback);
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, capsule_name));
    if (managed != nullptr)
        managed->deleter(managed);
    else
        PyErr_WriteUnraisable(capsule);
    PyErr_Restore(type, value, traceback);
}

// The DLPack type of a NumPy typestr ("<f4", "|i1", "<u2", ...).
DLDataType dlpack_type(const BufferCore& buffer)
{
    const Layout& layout = buffer.layout();
    const char kind = layout.typestr.size() >= 2 ? layout.typestr[1] : '?';
    DLDataType type{};
    type.bits = static_cast<std::uint8_t>(layout.itemsize * 8);
    type.lanes = 1;
    switch (kind) {
    case 'f': type.code = kDLFloat; return type;
    case 'i': type.code = kDLInt; return type;
    case 'u': type.code = kDLUInt; return type;
    default:
        throw CallFailure::refusal(VACCEL_E_UNSUPPORTED, VACCEL_D_NONE, 0, 0,
                                   "cannot export the buffer through DLPack: its dtype '" +
                                       layout.typestr +
                                       "' has no DLPack 0.6 type (booleans have none); view it "
                                       "with numpy() or np.asarray() instead");
    }
}

py::object dlpack(const std::shared_ptr<BufferCore>& buffer, py::object stream)
{
    if (!stream.is_none())
        throw CallFailure::refusal(VACCEL_E_INVALID_ARGUMENT, VACCEL_D_NONE, 0, 0,
                                   "__dlpack__(stream=...) was given a stream, but the buffer "
                                   "is host memory (kDLCPU), which has none; pass None");
    const DLDataType type = dlpack_type(*buffer);
    // Invariant: the tensor describes exactly the buffer's bytes (the shape
    // was checked when it was allocated; a consumer trusts it blindly).
    if (layout_bytes(buffer->layout()) != buffer->nbytes())
        throw CallFailure::refusal(VACCEL_E_INVALID_ARGUMENT, VACCEL_D_NONE, 0, 0,
                                   "cannot export the buffer through DLPack: its shape does not "
                                   "describe its " + std::to_string(buffer->nbytes()) + " bytes");
    auto exported = std::make_unique<DlpackExport>();
    exported->token = without_gil([&] { return buffer->view(); });
    exported->shape = buffer->layout().shape;
    DLTensor& tensor = exported->managed.dl_tensor;
    tensor.data = exported->token->address();
    tensor.device = DLDevice{kDLCPU, 0};
    tensor.ndim = static_cast<int>(exported->shape.size());
    tensor.dtype = type;
    tensor.shape = exported->shape.data();
    tensor.strides = nullptr;  // C-contiguous
    tensor.byte_offset = 0;
    exported->managed.manager_ctx = exported.get();
    exported->managed.deleter = &delete_export;
    PyObject* capsule = PyCapsule_New(&exported->managed, capsule_name, &capsule_destructor);
    if (capsule == nullptr)
        throw py::error_already_set();
    exported.release();  // owned by the capsule, then by its consumer
    return py::reinterpret_steal<py::object>(capsule);
}

py::tuple dlpack_device(const BufferCore& buffer)
{
    buffer.require_mappable();
    return py::make_tuple(static_cast<int>(kDLCPU), 0);
}

}  // namespace

void register_dlpack(BufferClass& buffer_class)
{
    buffer_class
        .def("__dlpack__", &dlpack, py::arg("stream") = py::none(),
             "A DLPack capsule viewing the mapped buffer in place (kDLCPU).")
        .def("__dlpack_device__", &dlpack_device, "(kDLCPU, 0) for a host-visible buffer.");
}

}  // namespace vaccel::python
