"""vaccel.program - a loaded TOSA program: its tensors and its runs.

Owns: vaccel.Program and vaccel.TensorInfo, and the binding of Python
values to the program's slots. Decides:
  - inputs are bound by tensor name (program(**arrays), run({...})) or in
    block order (run([...])); every input exactly once;
  - an array input must have the slot's dtype and shape exactly: nothing
    is cast or reshaped (as vaccelctl run refuses it); a non-contiguous
    array is copied to a contiguous one, nothing else is;
  - a vaccel.Buffer is bound as it is (zero copy), to inputs and outputs;
    the contract checks its bytes (VACCEL_D_BINDING_SIZE) and its context
    (VACCEL_D_BINDING_CONTEXT);
  - program(**arrays) returns {output name: array}; run() returns a list in
    block order: a new array per output, or what was given in `outputs`
    (a Buffer, or an array the results were written into);
  - refusals before any call: InvalidArgument, with VACCEL_D_BINDING_MISSING
    (arg0 = slot, arg1 = slots) for an input not given, VACCEL_D_BINDING_SIZE
    (arg0 = slot, arg1 = bytes) for an array whose bytes differ from the
    slot's, VACCEL_D_NONE otherwise (wrong dtype, wrong shape of the same
    bytes, unknown name, given twice).
A Program is safe to use from many threads at once: each run takes its own
queue and staging buffers (python/src/program_core.hpp).
"""

from typing import NamedTuple, Optional, Tuple

import numpy as np

from . import _vaccel
from .dtypes import numpy_dtype_of, tosa_dtype_name
from .errors import refusal

__all__ = ["Program", "TensorInfo"]


class TensorInfo(NamedTuple):
    """One input or output of a program (one slot of its binding interface)."""

    name: str
    shape: Tuple[int, ...]
    dtype: Optional[np.dtype]  # None: NumPy has no dtype for it (see tosa_dtype)
    tosa_dtype: str            # "FP32", "INT8", ...
    nbytes: int                # exactly what a binding covers
    slot: int


def _shape_text(shape):
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


class Program:
    """A TOSA program loaded on one device of a client (Client.load makes it)."""

    def __init__(self, client, core, device):
        self._client = client
        self._core = core
        self.device = device
        tensors = [TensorInfo(s["name"], tuple(s["shape"]), numpy_dtype_of(s["dtype"]),
                              tosa_dtype_name(s["dtype"]), s["bytes"], s["slot"])
                   for s in core.slots]
        self.inputs = tuple(tensors[:core.input_count])
        self.outputs = tuple(tensors[core.input_count:])

    @property
    def handle(self):
        return self._core.handle

    @property
    def closed(self):
        return self._core.closed

    def close(self):
        """Unloads the program (waiting for its runs in progress)."""
        self._core.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        def side(tensors):
            return ", ".join("%s %s %s" % (t.name, t.tosa_dtype, _shape_text(t.shape))
                             for t in tensors)
        return "<vaccel.Program on %s: (%s) -> (%s)>" % (self.device, side(self.inputs),
                                                         side(self.outputs))

    def buffer(self, name, domain="host"):
        """A Buffer for the tensor `name`, in this program's context (so it
        can be bound to it), with the tensor's shape and dtype."""
        tensor = self._tensor(name, self.inputs + self.outputs, "tensor")
        dtype = tensor.dtype if tensor.dtype is not None else np.dtype(np.uint8)
        shape = tensor.shape if tensor.dtype is not None else (tensor.nbytes,)
        return self._client.buffer(shape, dtype, device=self.device, domain=domain)

    def __call__(self, **inputs):
        """Runs once with inputs bound by name; {output name: array}."""
        results = self.run(inputs)
        return {tensor.name: value for tensor, value in zip(self.outputs, results)}

    def run(self, inputs, outputs=None):
        """Runs once. `inputs`: a sequence in block order, or a mapping by
        tensor name; each an array (or array-like) or a Buffer. `outputs`
        (optional): per output, None (a new array), a Buffer, or a
        writable array of the output's dtype and shape. Returns the
        outputs in block order."""
        bound = self._bind_inputs(inputs)
        results = self._bind_outputs(outputs)
        self._core.run(bound + results)
        return results

    def _tensor(self, name, tensors, role):
        for tensor in tensors:
            if tensor.name == name:
                return tensor
        raise refusal(_vaccel.E_INVALID_ARGUMENT,
                      "the program has no %s named %r; its %ss are %s"
                      % (role, name, role, ", ".join(repr(t.name) for t in tensors) or "none"))

    def _bind_inputs(self, inputs):
        slot_count = len(self.inputs) + len(self.outputs)
        if isinstance(inputs, dict):
            for name in inputs:
                self._tensor(name, self.inputs, "input")
            ordered = []
            for tensor in self.inputs:
                if tensor.name not in inputs:
                    raise refusal(_vaccel.E_INVALID_ARGUMENT,
                                  "input %r of the program is not given; give every input "
                                  "(%s)" % (tensor.name,
                                            ", ".join(repr(t.name) for t in self.inputs)),
                                  _vaccel.D_BINDING_MISSING, tensor.slot, slot_count)
                ordered.append(inputs[tensor.name])
            inputs = ordered
        else:
            inputs = list(inputs)
            if len(inputs) < len(self.inputs):
                missing = self.inputs[len(inputs)]
                raise refusal(_vaccel.E_INVALID_ARGUMENT,
                              "%d inputs were given and the program takes %d; input %r is "
                              "missing" % (len(inputs), len(self.inputs), missing.name),
                              _vaccel.D_BINDING_MISSING, missing.slot, slot_count)
            if len(inputs) > len(self.inputs):
                raise refusal(_vaccel.E_INVALID_ARGUMENT,
                              "%d inputs were given and the program takes %d (%s)"
                              % (len(inputs), len(self.inputs),
                                 ", ".join(repr(t.name) for t in self.inputs)))
        return [self._as_bindable(tensor, value, "input")
                for tensor, value in zip(self.inputs, inputs)]

    def _bind_outputs(self, outputs):
        if outputs is None:
            outputs = [None] * len(self.outputs)
        outputs = list(outputs)
        if len(outputs) != len(self.outputs):
            raise refusal(_vaccel.E_INVALID_ARGUMENT,
                          "outputs= holds %d entries and the program has %d outputs (%s)"
                          % (len(outputs), len(self.outputs),
                             ", ".join(repr(t.name) for t in self.outputs)))
        bound = []
        for tensor, value in zip(self.outputs, outputs):
            if value is None:
                if tensor.dtype is None:
                    raise self._no_numpy_dtype(tensor, "output")
                bound.append(np.empty(tensor.shape, tensor.dtype))
            else:
                bound.append(self._as_bindable(tensor, value, "output"))
        return bound

    def _as_bindable(self, tensor, value, role):
        if isinstance(value, _vaccel.Buffer):
            return value
        if tensor.dtype is None:
            raise self._no_numpy_dtype(tensor, role)
        if role == "output":
            if not isinstance(value, np.ndarray) or not value.flags.writeable:
                raise refusal(_vaccel.E_INVALID_ARGUMENT,
                              "output %r is given as %s, which cannot be written; give None, "
                              "a vaccel.Buffer or a writable NumPy array"
                              % (tensor.name, type(value).__name__))
            array = value
        else:
            array = np.asarray(value)
        if array.dtype != tensor.dtype:
            raise refusal(_vaccel.E_INVALID_ARGUMENT,
                          "%s %r expects %s (NumPy %s) but the array is %s; convert it with "
                          "arr.astype(%r)" % (role, tensor.name, tensor.tosa_dtype, tensor.dtype,
                                              array.dtype, tensor.dtype.name))
        if array.shape != tensor.shape:
            same_bytes = array.nbytes == tensor.nbytes
            raise refusal(_vaccel.E_INVALID_ARGUMENT,
                          "%s %r expects shape %s but the array has shape %s; %s"
                          % (role, tensor.name, _shape_text(tensor.shape),
                             _shape_text(array.shape),
                             "reshape it" if same_bytes else "pass an array of that shape"),
                          _vaccel.D_NONE if same_bytes else _vaccel.D_BINDING_SIZE,
                          0 if same_bytes else tensor.slot, 0 if same_bytes else tensor.nbytes)
        if not array.flags.c_contiguous:
            if role == "output":
                raise refusal(_vaccel.E_INVALID_ARGUMENT,
                              "output %r is given as a non-contiguous array; give a "
                              "C-contiguous one" % tensor.name)
            array = np.ascontiguousarray(array)
        return array

    @staticmethod
    def _no_numpy_dtype(tensor, role):
        return refusal(_vaccel.E_INVALID_ARGUMENT,
                       "%s %r is %s, which NumPy has no dtype for; bind a vaccel.Buffer of "
                       "its %d bytes (Program.buffer(%r))"
                       % (role, tensor.name, tensor.tosa_dtype, tensor.nbytes, tensor.name))
