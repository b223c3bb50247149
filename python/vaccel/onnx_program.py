"""vaccel.onnx_program - ONNX models loaded through the importer in this
process (libvaccel-onnx; docs/onnx.md, "From C, C++ and Python").

Owns: importing a model for Client.load and vaccel.OnnxProgram, a Program
whose inputs and outputs are the model's own. Decides:
  - the import runs here, in the client; the daemon receives the TOSA it
    makes;
  - `input_shapes` ({name: shape}) fixes input shapes, as vaccelctl's
    --input-shape; `values` ({name: array of int64, int32 or float32})
    gives the inputs that set a shape or an attribute (a Reshape's shape),
    which are folded into the graph and are then no inputs of the program;
  - a tensor the graph holds in another type than the model's (TOSA 1.0
    computes integers as INT32) is described by the model's dtype (int64
    token ids stay int64) and converted by the library on the way in
    (with its range check: a value past INT32 is OutOfBounds, naming the
    input, the element and the value) and on the way out. Such a tensor is
    bound as a NumPy array, not a vaccel.Buffer; every other tensor binds
    as Program says.
"""

import numpy as np

from . import _vaccel
from .errors import refusal
from .program import Program, TensorInfo, _shape_text

__all__ = ["OnnxProgram", "import_onnx"]

# The NumPy dtype of each ONNX element type (TensorProto.DataType) the
# importer takes; BFLOAT16 has none.
_NUMPY_OF_ONNX = {
    1: np.dtype(np.float32), 2: np.dtype(np.uint8), 3: np.dtype(np.int8),
    4: np.dtype(np.uint16), 5: np.dtype(np.int16), 6: np.dtype(np.int32),
    7: np.dtype(np.int64), 9: np.dtype(np.bool_), 10: np.dtype(np.float16),
    12: np.dtype(np.uint32), 13: np.dtype(np.uint64),
}
_VALUE_TYPES = {np.dtype(np.int64): 7, np.dtype(np.int32): 6, np.dtype(np.float32): 1}


def import_onnx(payload, what, input_shapes=None, values=None):
    """The importer's model (_vaccel.OnnxModel) of the ONNX bytes `payload`
    (`what` names them in messages)."""
    if not hasattr(_vaccel, "OnnxModel"):
        raise refusal(_vaccel.E_UNSUPPORTED,
                      "cannot import %s: this build of vaccel has no ONNX importer (it was "
                      "configured with VACCEL_ONNX=OFF); convert the model with a vaccelctl "
                      "that has one (vaccelctl import) and load the .tosa file" % what)
    shapes = {}
    for name, shape in (input_shapes or {}).items():
        dims = [int(d) for d in ((shape,) if isinstance(shape, int) else shape)]
        if any(d < 0 for d in dims):
            raise refusal(_vaccel.E_INVALID_ARGUMENT,
                          "input_shapes[%r] = %r: dimensions are whole numbers from 0"
                          % (name, tuple(dims)))
        shapes[str(name)] = dims
    given = []
    for name, value in (values or {}).items():
        array = np.ascontiguousarray(value)
        if array.dtype not in _VALUE_TYPES:
            raise refusal(_vaccel.E_INVALID_ARGUMENT,
                          "values[%r] is %s: an input given by value sets a shape or an "
                          "attribute; give it as int64, int32 or float32" % (name, array.dtype))
        given.append((str(name), _VALUE_TYPES[array.dtype], list(array.shape),
                      array.tobytes()))
    return _vaccel.OnnxModel(bytes(payload), shapes, given, what)


class OnnxProgram(Program):
    """A Program imported from an ONNX model (Client.load of a .onnx file):
    its tensors carry the model's names, shapes and dtypes."""

    def __init__(self, client, core, device, model):
        super().__init__(client, core, device)
        self._model = model
        # slot -> (port index, graph TensorInfo) of each converted tensor
        self._converted = {}
        self.inputs = self._retyped(self.inputs, model.inputs)
        self.outputs = self._retyped(self.outputs, model.outputs)

    def _retyped(self, tensors, ports):
        retyped = []
        for index, (tensor, port) in enumerate(zip(tensors, ports)):
            dtype = _NUMPY_OF_ONNX.get(port["onnx_type"])
            if port["model_bytes"] == port["graph_bytes"] and dtype == tensor.dtype:
                retyped.append(tensor)
                continue
            self._converted[tensor.slot] = (index, tensor)
            retyped.append(TensorInfo(tensor.name, tensor.shape, dtype, tensor.tosa_dtype,
                                      port["model_bytes"], tensor.slot))
        return tuple(retyped)

    def __repr__(self):
        def side(tensors):
            return ", ".join("%s %s %s" % (t.name, t.dtype if t.slot in self._converted
                                           else t.tosa_dtype, _shape_text(t.shape))
                             for t in tensors)
        return "<vaccel.OnnxProgram on %s: (%s) -> (%s)>" % (self.device, side(self.inputs),
                                                             side(self.outputs))

    def run(self, inputs, outputs=None):
        """As Program.run, in the model's dtypes: a converted output is
        computed in the graph's type and written, converted, into the array
        returned (or given in `outputs`)."""
        bound = self._bind_inputs(inputs)
        results = self._bind_outputs(outputs)
        on_graph = []
        for tensor, result in zip(self.outputs, results):
            converted = self._converted.get(tensor.slot)
            on_graph.append(result if converted is None
                            else np.empty(converted[1].shape, converted[1].dtype))
        self._core.run(bound + on_graph)
        for tensor, result, graph in zip(self.outputs, results, on_graph):
            converted = self._converted.get(tensor.slot)
            if converted is not None:
                data = self._model.output_from_graph(converted[0], graph)
                result[...] = np.frombuffer(data, tensor.dtype).reshape(tensor.shape)
        return results

    def _as_bindable(self, tensor, value, role):
        converted = self._converted.get(tensor.slot)
        if converted is None:
            return super()._as_bindable(tensor, value, role)
        index, graph = converted
        if isinstance(value, _vaccel.Buffer):
            raise refusal(_vaccel.E_INVALID_ARGUMENT,
                          "%s %r of the model is %s, which the imported graph holds as %s; give "
                          "a NumPy array (converted on the way), not a vaccel.Buffer"
                          % (role, tensor.name, tensor.dtype, graph.tosa_dtype))
        array = super()._as_bindable(tensor, value, role)  # the model's dtype and shape
        if role == "output":
            return array
        data = self._model.input_to_graph(index, array)
        return np.frombuffer(bytearray(data), graph.dtype).reshape(graph.shape)
