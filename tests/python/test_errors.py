"""test_errors.py - every refusal carries its contract status and sentence."""

import errno
import pickle

import numpy as np
import pytest

import vaccel
from conftest import OLD_ADD_MODEL, add_inputs, expect_error


def test_malformed_tosa_is_refused_with_the_reason(client):
    with pytest.raises(vaccel.Error) as excinfo:
        client.load(b"this is not a TOSA flatbuffer, only text" * 4, device="cpu")
    error = expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                         vaccel.D_TOSA_MALFORMED, arg0=vaccel.TOSA_NO_IDENTIFIER)
    assert error.detail_name == "VACCEL_D_TOSA_MALFORMED"
    assert error.errno == errno.EINVAL
    assert 'the TOSA file is malformed: the file identifier is not "TOSA"' in error.sentence
    assert error.context.startswith("cannot load the program on device ")


def test_old_tosa_version_is_refused_naming_it(client):
    with pytest.raises(vaccel.Error) as excinfo:
        client.load(OLD_ADD_MODEL, device="cpu")
    error = excinfo.value
    assert error.detail == vaccel.D_TOSA_VERSION, str(error)
    assert (error.arg0, error.arg1) == (0, 80)
    assert "TOSA version 0.80 is not supported" in error.sentence
    assert error.sentence == vaccel.status_message(error.code, error.detail, 0, 0, 80)


def test_wrong_dtype_is_refused(add_program):
    a, b, _ = add_inputs()
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        add_program.run([a.astype(np.float64), b])
    error = expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                         vaccel.D_NONE)
    assert error.context == ("input 'TosaInput_0' expects FP32 (NumPy float32) but the array "
                             "is float64; convert it with arr.astype('float32')")
    assert error.sentence == vaccel.status_message(vaccel.E_INVALID_ARGUMENT)
    assert isinstance(error, ValueError)


def test_wrong_shape_is_refused(add_program):
    a, b, _ = add_inputs()
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        add_program.run([a, b[..., :2]])
    error = expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                         vaccel.D_BINDING_SIZE, arg0=1, arg1=256)
    assert "expects shape (1, 4, 4, 4) but the array has shape (1, 4, 4, 2)" in error.context
    assert "256 bytes" in error.sentence
    with pytest.raises(vaccel.InvalidArgument) as excinfo:  # the same bytes, another shape
        add_program.run([a, b.reshape(4, 4, 4, 1)])
    error = expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                         vaccel.D_NONE)
    assert error.context.endswith("; reshape it")


def test_unknown_tensor_name_is_refused_listing_the_names(add_program):
    a, b, _ = add_inputs()
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        add_program(TosaInput_0=a, TosaInput_1=b, bias=a)
    error = expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                         vaccel.D_NONE)
    assert error.context == ("the program has no input named 'bias'; its inputs are "
                             "'TosaInput_0', 'TosaInput_1'")


def test_missing_and_extra_inputs_are_refused(add_program):
    a, b, _ = add_inputs()
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        add_program(TosaInput_0=a)
    expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                 vaccel.D_BINDING_MISSING, arg0=1, arg1=3)
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        add_program.run([a])
    expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                 vaccel.D_BINDING_MISSING, arg0=1, arg1=3)
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        add_program.run([a, b, b])
    expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT, vaccel.D_NONE)
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        add_program.run([a, b], outputs=[np.empty((1, 4, 4, 8), np.float32)[..., ::2]])
    expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT, vaccel.D_NONE)


def test_device_specs_are_refused_with_the_device_list(client):
    count = len(client.devices())
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        client.device(99)
    error = expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                         vaccel.D_NO_DEVICE, arg0=99, arg1=count)
    assert "the devices are: " in error.context
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        client.load(b"", device="cpu:7")
    error = expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                         vaccel.D_NONE)
    assert error.context.startswith("no device matches device='cpu:7': there is 1 cpu device")
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        client.device("vulkan:x")
    expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT, vaccel.D_NONE)
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        client.device("tpu")
    error = expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                         vaccel.D_NONE)
    assert error.context.startswith("no device matches device='tpu' (not auto, an index, cpu")


def test_device_specs_take_what_vaccelctl_devices_prints(client):
    cpu = client.device("cpu")
    for spec in (cpu.index, str(cpu.index), "[%d]" % cpu.index, "CPU", "Cpu:0",
                 cpu.name, cpu.name.upper(), cpu.name[:3].lower()):
        assert client.device(spec).index == cpu.index, spec


def test_errors_name_their_status_and_survive_pickling(add_program):
    with pytest.raises(vaccel.Error) as excinfo:
        add_program.run([])
    error = excinfo.value
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and str(copy) == str(error)
    assert (copy.code, copy.detail, copy.arg0, copy.arg1, copy.errno) == (
        error.code, error.detail, error.arg0, error.arg1, error.errno)
    assert copy.detail_name == "VACCEL_D_BINDING_MISSING"
    assert vaccel.strerror(-errno.EBUSY).startswith("Busy: ")
    assert vaccel.error_name(vaccel.E_RESOURCE_LIMIT) == "ResourceLimit"
