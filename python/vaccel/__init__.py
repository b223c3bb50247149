"""vaccel - shared accelerators from Python, over libvaccel.

    import numpy as np, vaccel
    with vaccel.Client() as client:            # libvaccel's automatic transport
        program = client.load("mlp.tosa")      # on the "auto" device
        print(program.inputs, program.outputs)  # names, shapes, NumPy dtypes
        y = program(x=np.load("input.npy"))["y"]

Owns: the public names of the package. The pieces: vaccel.Client
(client.py), vaccel.Program and vaccel.TensorInfo (program.py),
vaccel.OnnxProgram (onnx_program.py: ONNX models imported in process),
vaccel.Device (devices.py), vaccel.Buffer (the extension, python/src:
buffer protocol, __array__, __dlpack__), vaccel.Error and its subclasses
(errors.py), and the contract's constants without their VACCEL_ prefix
(vaccel.E_BUSY, vaccel.D_TOSA_MALFORMED, vaccel.DOMAIN_HOST, ...).
docs/adr/0022-python-binding.md says why it is built this way.
"""

from . import _vaccel
from ._vaccel import Buffer
from .client import Client, Version
from .devices import Device
from .dtypes import numpy_dtype_of, tosa_dtype_name
from .errors import (Busy, Cancelled, DaemonGone, DeadlineExpired, DeviceLost, Error, External,
                     Incompatible, InvalidArgument, OutOfBounds, OutOfMemory,
                     PermissionDenied, ResourceLimit, Unsupported)
from .onnx_program import OnnxProgram
from .program import Program, TensorInfo

# The contract's constants (uapi/vaccel.h) without their VACCEL_ prefix.
globals().update({name: getattr(_vaccel, name) for name in dir(_vaccel)
                  if name.isupper() and not name.startswith("_")})

# The project's version, as `vaccelctl --version` and `vacceld --version` say it.
__version__ = _vaccel.__version__

status_message = _vaccel.status_message
error_name = _vaccel.error_name
strerror = _vaccel.strerror

__all__ = [
    "Client", "Version", "Program", "OnnxProgram", "TensorInfo", "Buffer", "Device",
    "Error", "Unsupported", "Incompatible", "InvalidArgument", "OutOfBounds",
    "OutOfMemory", "ResourceLimit", "DeviceLost", "Busy", "PermissionDenied",
    "DeadlineExpired", "External", "Cancelled", "DaemonGone",
    "status_message", "error_name", "strerror", "numpy_dtype_of", "tosa_dtype_name",
]
