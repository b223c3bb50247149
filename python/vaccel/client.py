"""vaccel.client - vaccel.Client, one session with the accelerators.

Owns: opening a client over a transport, and the client's calls: devices,
version, load, buffer, close. Decides:
  - transport None is libvaccel's automatic choice ($VACCEL_TRANSPORT if
    set, else the kernel module, else the daemon's socket, else embedded);
    "embedded", "socket" and "kernel" name one, never silently replaced by
    another; `socket` names the daemon's socket for "socket" (and for the
    automatic choice, which then never falls back to embedded), else
    $VACCEL_SOCKET (likewise) or vaccel.SOCKET_DEFAULT;
  - load() takes a path or the bytes of a TOSA 1.0 flatbuffer, or of an
    ONNX model (imported in this process: vaccel/onnx_program.py), and a
    device spec (vaccel/devices.py); a Program's buffers and runs live in
    the client's one context on that device;
  - buffer() makes a Buffer (usage all, access read-write) in a device's
    context, by default in the Host domain, which maps into the process;
  - close() releases everything the client made (waiting for work in
    flight); every later call is refused (InvalidArgument). While NumPy
    arrays, memoryviews or DLPack tensors still view its mapped buffers,
    the release waits for the last of them, so they stay valid. A client is
    also closed once it and everything made through it are garbage.
A Client is safe to use from many threads at once; blocking calls release
the GIL.
"""

import os
from typing import NamedTuple

import numpy as np

from . import _vaccel
from .devices import device_of, select_device
from .dtypes import typestr_of
from .errors import refusal
from .onnx_program import OnnxProgram, import_onnx
from .program import Program

__all__ = ["Client", "Version"]

_DOMAINS = {"host": _vaccel.DOMAIN_HOST, "device": _vaccel.DOMAIN_DEVICE,
            "shared": _vaccel.DOMAIN_SHARED}


class Version(NamedTuple):
    """The contract ABI the client speaks: major, minor, vaccel.CAP_* bits."""

    major: int
    minor: int
    capabilities: int


class Client:
    """One libvaccel client: Client(), Client("embedded"),
    Client("socket", "/run/vaccel/vacceld.sock"), Client("kernel")."""

    def __init__(self, transport=None, socket=None):
        if socket is not None:
            socket = os.fspath(socket)
        self._core = _vaccel.Client(transport, socket)

    @property
    def transport(self):
        """The transport in use: "kernel", "socket" or "embedded"."""
        return self._core.transport

    @property
    def closed(self):
        return self._core.closed

    def close(self):
        """Releases everything the client made, then the session."""
        self._core.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self.closed else "open"
        return "<vaccel.Client %s over %s>" % (state, self.transport)

    def version(self):
        """The contract ABI the client speaks (vaccel_get_version)."""
        return Version(*self._core.version())

    def devices(self):
        """Every device, accelerators before the CPU (vaccel_device_info)."""
        return [device_of(record) for record in self._core.devices()]

    def device(self, spec="auto"):
        """The Device a spec picks: "auto", "cpu", "vulkan:N", "cuda:N", a
        name, an index or a Device."""
        return select_device(self.devices(), spec)

    def load(self, model, device="auto", *, format=None, input_shapes=None, values=None):
        """Loads a model (a path, or its bytes) on a device: a TOSA 1.0
        flatbuffer, or an ONNX model (a path ending in .onnx, or
        format="onnx"), imported here (vaccel/onnx_program.py) with
        `input_shapes` ({name: shape}) and `values` ({name: array} for the
        inputs that set a shape) and loaded as an OnnxProgram."""
        if isinstance(model, (bytes, bytearray, memoryview)):
            payload, what = bytes(model), "the ONNX model given as bytes"
        else:
            path = os.fspath(model)
            with open(path, "rb") as file:
                payload = file.read()
            what = path
            if format is None and str(path).endswith(".onnx"):
                format = "onnx"
        if format not in (None, "tosa", "onnx"):
            raise refusal(_vaccel.E_INVALID_ARGUMENT,
                          "format=%r is not a model format; give 'tosa' or 'onnx'" % (format,))
        if format != "onnx":
            if input_shapes or values:
                raise refusal(_vaccel.E_INVALID_ARGUMENT,
                              "input_shapes and values are for ONNX models; a TOSA "
                              "flatbuffer's shapes are its own")
            chosen = self.device(device)
            return Program(self, self._core.load(chosen.index, payload), chosen)
        imported = import_onnx(payload, what, input_shapes, values)
        chosen = self.device(device)
        return OnnxProgram(self, self._core.load(chosen.index, imported.tosa), chosen, imported)

    def buffer(self, shape, dtype=np.uint8, device="auto", domain="host"):
        """A Buffer of `shape` and `dtype` on a device; domain "host" (the
        default) or "shared" maps into the process, "device" does not."""
        if domain not in _DOMAINS:
            raise refusal(_vaccel.E_INVALID_ARGUMENT,
                          "domain=%r is not a buffer domain; give 'host', 'shared' or 'device'"
                          % (domain,))
        dtype = np.dtype(dtype)
        if dtype.kind not in "biuf" or not dtype.isnative:
            raise refusal(_vaccel.E_INVALID_ARGUMENT,
                          "dtype %s cannot live in a buffer: give a boolean, integer or "
                          "floating dtype in native byte order" % dtype.str)
        shape = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
        chosen = self.device(device)
        return self._core.allocate(chosen.index, _DOMAINS[domain], typestr_of(dtype),
                                   dtype.itemsize, list(shape))
