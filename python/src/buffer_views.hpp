// buffer_views.hpp - NumPy arrays that view a mapped buffer in place.
//
// Owns: the one way a host view of a buffer is made. Decides: a view is an
// ndarray over the mapping, with the buffer's Layout, whose base object is a
// capsule owning a ViewToken; the token (and so the mapping and the buffer)
// lives exactly as long as the array and whatever views it in turn
// (memoryviews, arrays sliced from it).
#pragma once

#include <pybind11/numpy.h>

#include <memory>

#include "buffer_core.hpp"

namespace vaccel::python {

// Maps the buffer if needed (without the GIL) and returns the view; call
// with the GIL held. Raises the refusal for a Device-domain or closed buffer.
pybind11::array mapped_view(const std::shared_ptr<BufferCore>& buffer);

}  // namespace vaccel::python
