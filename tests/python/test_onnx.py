"""test_onnx.py - Client.load of ONNX models, imported in process
(vaccel/onnx_program.py): the model's own names and dtypes, its data
converted across the graph's boundary, refusals by node and by value.
The models are ONNX node tests of Debian's libonnx-testdata; over the
socket the daemon receives only the TOSA the import made."""

import os
import pathlib

import numpy as np
import pytest

import vaccel
from conftest import ADD_MODEL, expect_error

NODE = pathlib.Path("/usr/share/libonnx-testdata/data/node")
# Set by tests/python/CMakeLists.txt: 1 where the importer is built.
HAS_ONNX = os.environ.get("VACCEL_TEST_ONNX") == "1"


def model(test):
    path = NODE / test / "model.onnx"
    assert path.is_file(), "%s is missing: install libonnx-testdata (make deps)" % path
    return path


def test_onnx_tensors_keep_the_models_names_and_dtypes(client):
    program = client.load(model("test_gather_0"), device="cpu")
    assert isinstance(program, vaccel.OnnxProgram)
    assert program.inputs == (
        vaccel.TensorInfo("data", (5, 4, 3, 2), np.dtype(np.float32), "FP32", 480, 0),
        vaccel.TensorInfo("indices", (3,), np.dtype(np.int64), "INT32", 24, 1),
    )
    assert program.outputs == (
        vaccel.TensorInfo("y", (3, 4, 3, 2), np.dtype(np.float32), "FP32", 288, 2),)
    assert repr(program) == (
        "<vaccel.OnnxProgram on %s: (data FP32 (5, 4, 3, 2), indices int64 (3,)) -> "
        "(y FP32 (3, 4, 3, 2))>" % program.device)
    data = np.arange(120, dtype=np.float32).reshape(5, 4, 3, 2) * 0.5
    y = program(data=data, indices=np.array([4, 1, 0], dtype=np.int64))["y"]
    assert y.dtype == np.float32 and np.array_equal(y, data[[4, 1, 0]])


def test_int64_past_int32_is_refused_by_element(client):
    program = client.load(model("test_gather_0"), device="cpu")
    data = np.zeros((5, 4, 3, 2), np.float32)
    with pytest.raises(vaccel.OutOfBounds) as excinfo:
        program(data=data, indices=np.array([4, 1 << 40, 0], dtype=np.int64))
    error = expect_error(excinfo, vaccel.OutOfBounds, vaccel.E_OUT_OF_BOUNDS, vaccel.D_NONE,
                         named=False)
    assert str(error) == (
        "the imported model refused the data: input 'indices' element 1 holds 1099511627776, "
        "outside INT32: the imported graph carries INT64 as INT32; give values from "
        "-2147483648 to 2147483647")
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        program(data=data, indices=np.array([4, 1, 0], dtype=np.int32))
    assert "input 'indices' expects INT32 (NumPy int64) but the array is int32" in str(
        excinfo.value)
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        program.run([data, program.buffer("data")])
    assert "input 'indices' of the model is int64, which the imported graph holds as INT32" in \
        str(excinfo.value)


def test_integer_results_come_back_in_the_models_type(client):
    argmax = client.load(model("test_argmax_default_axis_example"), device="cpu")
    assert argmax.outputs[0].dtype == np.dtype(np.int64)
    result = argmax(data=np.array([[2, 1], [3, 10]], dtype=np.float32))["result"]
    assert result.dtype == np.int64 and result.tolist() == [[1, 1]]
    add = client.load(model("test_add_uint8"), device="cpu")
    x = np.arange(60, dtype=np.uint8).reshape(3, 4, 5) * 4 + 20
    y = np.full((3, 4, 5), 200, np.uint8)
    out = np.zeros((3, 4, 5), np.uint8)
    assert add.run([x, y], [out])[0] is out
    assert np.array_equal(out, x + y)  # uint8 wraps, as NumPy's does


def test_shapes_and_values_given_at_load(client):
    path = model("test_reshape_reordered_all_dims")
    with pytest.raises(vaccel.Unsupported) as excinfo:
        client.load(path)
    assert str(excinfo.value).startswith(
        "cannot import %s: node 'reshaped' (Reshape): input 1 ('shape') sets a shape or an "
        "attribute, so its value must be known at import" % path)
    program = client.load(path, device="cpu", values={"shape": np.array([4, 2, 3])})
    assert [t.name for t in program.inputs] == ["data"]
    assert program.outputs[0].shape == (4, 2, 3)
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert np.array_equal(program(data=data)["reshaped"], data.reshape(4, 2, 3))
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        client.load(path, values={"shape": np.array([4.0, 2, 3])})
    assert "values['shape'] is float64" in str(excinfo.value)
    add = client.load(model("test_add").read_bytes(), device="cpu", format="onnx",
                      input_shapes={"x": (3, 4, 5)})
    assert add.inputs[0].shape == (3, 4, 5)


def test_bad_models_are_refused(client):
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        client.load(b"this is not an ONNX model", format="onnx")
    assert str(excinfo.value).startswith("cannot import the ONNX model given as bytes: ")
    with pytest.raises(vaccel.Unsupported) as excinfo:
        client.load(model("test_nonmaxsuppression_single_box"))
    assert "(NonMaxSuppression): " in str(excinfo.value)
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        client.load(ADD_MODEL, input_shapes={"x": (1,)})
    assert "input_shapes and values are for ONNX models" in str(excinfo.value)
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        client.load(ADD_MODEL, format="tflite")
    assert "format='tflite' is not a model format" in str(excinfo.value)


def test_without_the_importer_onnx_is_refused_saying_so(client):
    with pytest.raises(vaccel.Unsupported) as excinfo:
        client.load(model("test_add"))
    assert "this build of vaccel has no ONNX importer" in str(excinfo.value)


# Each build runs the tests of what it has (no test may skip: conftest.py):
# with the importer the imports, without it only the refusal.
for _name in [n for n in globals() if n.startswith("test_")]:
    if (_name == "test_without_the_importer_onnx_is_refused_saying_so") == HAS_ONNX:
        del globals()[_name]
