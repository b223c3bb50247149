// gil.hpp - when the extension holds Python's GIL, and when it must not.
//
// Owns: the one helper that runs libvaccel calls with the GIL released.
// Decides the lock discipline of the whole extension:
//  - every libvaccel call that may block (a socket round trip, a run, a
//    wait, closing a client) runs inside without_gil(), so other Python
//    threads run meanwhile;
//  - the C++ locks (ClientCore's lifetime lock, ProgramCore's, BufferCore's,
//    the pools') are only ever taken with the GIL released, and nothing
//    that holds one of them touches a Python object or waits for the GIL:
//    so a thread holding the GIL never waits for a thread that waits for
//    the GIL, and no lock order involves the GIL;
//  - the cores (ClientCore, ProgramCore, BufferCore) hold no Python
//    objects, so they may be destroyed on any thread, with or without the
//    GIL (a DLPack consumer may call its deleter from anywhere).
#pragma once

#include <pybind11/pybind11.h>

#include <type_traits>
#include <utility>

namespace vaccel::python {

// Runs `work` with the GIL released when this thread holds it (a Python
// call, or a destructor run from Python's deallocation), as is otherwise.
template <class Work>
decltype(auto) without_gil(Work&& work)
{
    // Py_IsInitialized(): at interpreter exit no thread state may be given up.
    if (Py_IsInitialized() && PyGILState_Check()) {
        pybind11::gil_scoped_release released;
        return std::forward<Work>(work)();
    }
    return std::forward<Work>(work)();
}

}  // namespace vaccel::python
