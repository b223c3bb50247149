"""test_program.py - loading programs, describing their tensors, running them."""

import numpy as np
import pytest

import vaccel
from conftest import (ADD_MODEL, CONV_DIR, CONV_MODEL, EXAMPLES, LSTM_DIR, LSTM_MODEL,
                      MAXPOOL_MODEL, MLP_MODEL, add_inputs, expect_error)

f32 = np.dtype(np.float32)


def test_add_describes_its_tensors(add_program):
    assert add_program.inputs == (
        vaccel.TensorInfo("TosaInput_0", (1, 4, 4, 1), f32, "FP32", 64, 0),
        vaccel.TensorInfo("TosaInput_1", (1, 4, 4, 4), f32, "FP32", 256, 1),
    )
    assert add_program.outputs == (
        vaccel.TensorInfo("TosaOutput_0", (1, 4, 4, 4), f32, "FP32", 256, 2),
    )
    assert add_program.device.kind == "cpu"
    assert add_program.handle != 0 and not add_program.closed
    assert repr(add_program) == (
        '<vaccel.Program on %s: (TosaInput_0 FP32 (1, 4, 4, 1), TosaInput_1 FP32 '
        '(1, 4, 4, 4)) -> (TosaOutput_0 FP32 (1, 4, 4, 4))>' % add_program.device)


def test_tosa_dtypes_and_their_numpy_dtypes():
    assert [vaccel.tosa_dtype_name(code) for code in (1, 3, 4, 5, 7, 8, 9, 99)] == [
        "BOOL", "INT8", "INT16", "INT32", "FP32", "FP16", "BF16", "DType(99)"]
    assert [vaccel.numpy_dtype_of(code) for code in (1, 3, 4, 5, 7, 8)] == [
        np.bool_, np.int8, np.int16, np.int32, np.float32, np.float16]
    assert vaccel.numpy_dtype_of(9) is None  # BF16: bound as a Buffer of its bytes


def test_add_by_name_is_exact(add_program):
    a, b, expected = add_inputs()
    outputs = add_program(TosaInput_0=a, TosaInput_1=b)
    assert list(outputs) == ["TosaOutput_0"]
    result = outputs["TosaOutput_0"]
    assert result.dtype == f32 and result.shape == (1, 4, 4, 4)
    assert np.array_equal(result, expected)


def test_add_in_block_order_and_by_mapping_is_exact(add_program):
    a, b, expected = add_inputs()
    [by_order] = add_program.run([a, b])
    [by_mapping] = add_program.run({"TosaInput_1": b, "TosaInput_0": a})
    assert np.array_equal(by_order, expected) and np.array_equal(by_mapping, expected)


def test_outputs_are_written_into_given_arrays(add_program):
    a, b, expected = add_inputs()
    out = np.full((1, 4, 4, 4), -1.0, np.float32)
    results = add_program.run([a, b], outputs=[out])
    assert results[0] is out
    assert np.array_equal(out, expected)


def test_non_contiguous_inputs_are_accepted(add_program):
    a, b, expected = add_inputs()
    b_strided = np.asfortranarray(b)
    assert not b_strided.flags.c_contiguous
    [result] = add_program.run([a, b_strided])
    assert np.array_equal(result, expected)


def test_load_from_bytes(client):
    program = client.load(ADD_MODEL.read_bytes(), device="cpu")
    a, b, expected = add_inputs()
    assert np.array_equal(program.run([a, b])[0], expected)
    program.close()
    assert program.closed


def test_example_mlp_matches_its_oracle(client):
    program = client.load(MLP_MODEL, device="cpu")
    assert program.inputs == (vaccel.TensorInfo("x", (4, 16), f32, "FP32", 256, 0),)
    assert program.outputs == (vaccel.TensorInfo("y", (4, 8), f32, "FP32", 128, 1),)
    y = program(x=np.load(EXAMPLES / "input.npy"))["y"]
    np.testing.assert_allclose(y, np.load(EXAMPLES / "expected.npy"), rtol=1e-5, atol=0)


def test_conv2d_fixture_matches_tflite(client):
    program = client.load(CONV_MODEL, device="cpu")
    [tensor] = program.inputs
    assert (tensor.shape, tensor.dtype) == ((1, 32, 32, 8), f32)
    [result] = program.run([np.load(CONV_DIR / "placeholder_0.npy")])
    expected = np.load(CONV_DIR / "tflite_result.npy")
    assert result.shape == expected.shape
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


def test_lstm_variables_carry_across_runs(client):
    program = client.load(LSTM_MODEL, device="cpu")
    x = np.load(LSTM_DIR / "placeholder_0.npy")
    first = program(**{program.inputs[0].name: x})[program.outputs[0].name]
    np.testing.assert_allclose(first, np.load(LSTM_DIR / "tflite_result.npy"),
                               rtol=1e-5, atol=1e-6)
    [second] = program.run([x])
    assert not np.array_equal(first, second)


def test_int8_maxpool_is_exact(client):
    program = client.load(MAXPOOL_MODEL, device="cpu")
    [tensor] = program.inputs
    [output] = program.outputs
    assert tensor.dtype == np.int8 and tensor.tosa_dtype == "INT8"
    n, h, w, c = tensor.shape
    assert output.shape == (n, h // 2, w // 2, c)
    x = np.random.default_rng(7).integers(-128, 128, tensor.shape, dtype=np.int8)
    [result] = program.run([x])
    expected = x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))
    assert result.dtype == np.int8 and np.array_equal(result, expected)


def test_closed_program_is_refused_as_a_released_handle(add_program):
    handle = add_program.handle
    with add_program:
        pass
    assert add_program.closed
    a, b, _ = add_inputs()
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        add_program.run([a, b])
    error = expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                         vaccel.D_UNKNOWN_HANDLE, arg0=handle)
    assert "0x%x" % handle in error.sentence
    add_program.close()  # closing twice does nothing


def test_program_buffer_has_the_tensor_layout(add_program):
    buffer = add_program.buffer("TosaInput_1")
    assert (buffer.shape, buffer.dtype, buffer.nbytes) == ((1, 4, 4, 4), f32, 256)
    assert buffer.domain == vaccel.DOMAIN_HOST and buffer.device == add_program.device.index
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        add_program.buffer("nope")
    expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT, vaccel.D_NONE)
