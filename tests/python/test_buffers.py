"""test_buffers.py - buffers: copies, mapped views, DLPack, zero-copy runs."""

import ctypes
import gc

import numpy as np
import pytest

import vaccel
from conftest import add_inputs, expect_error


@pytest.fixture
def buffer(client):
    return client.buffer((2, 8), np.float32, device="cpu")


def test_buffer_describes_itself(buffer, client):
    assert (buffer.shape, buffer.dtype, buffer.nbytes) == ((2, 8), np.float32, 64)
    assert buffer.domain == vaccel.DOMAIN_HOST
    assert buffer.device == client.device("cpu").index
    assert buffer.handle != 0 and buffer.context != 0
    assert not buffer.mapped and buffer.views == 0 and not buffer.closed
    assert repr(buffer) == "<vaccel.Buffer 64 bytes (2, 8) <f4 on device %d>" % buffer.device
    raw = client.buffer(5, device="cpu")
    assert (raw.shape, raw.dtype, raw.nbytes) == ((5,), np.uint8, 5)


@pytest.mark.parametrize("shape, dtype", [
    ((2**62 + 1, 4), np.float32),   # 2^64 + 4 elements: would wrap to 16 bytes
    ((2**32, 2**32), np.uint8),     # exactly 2^64 bytes: would wrap to 0
    ((2**61, 2**3), np.float64),    # the item size carries it over
])
def test_shape_of_more_than_2_64_bytes_is_refused(client, shape, dtype):
    """A shape whose byte count overflows 64 bits is refused when the buffer
    is made, so no view (numpy, memoryview, DLPack) can ever describe more
    bytes than the buffer has."""
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        client.buffer(shape, dtype, device="cpu")
    error = expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                         vaccel.D_NONE)
    assert "more than 2^64 bytes; give a smaller shape" in error.context


def test_dlpack_tensor_covers_exactly_the_buffer(client):
    buffer = client.buffer((3, 5), np.int16, device="cpu")
    buffer.write(np.arange(15, dtype=np.int16).reshape(3, 5))
    viewed = np.from_dlpack(buffer)
    assert viewed.shape == (3, 5) and viewed.nbytes == buffer.nbytes == 30
    assert np.array_equal(viewed, np.arange(15, dtype=np.int16).reshape(3, 5))
    del viewed


def test_write_read_and_read_into_copy_exactly(buffer):
    values = np.arange(16, dtype=np.float32).reshape(2, 8) / 3
    buffer.write(values)
    assert np.array_equal(buffer.read(), values)
    buffer.write(np.float32([-1, -2]), offset=8)
    out = np.empty(4, np.float32)
    buffer.read_into(out)
    assert np.array_equal(out, np.float32([0, 1 / 3, -1, -2]))
    assert not buffer.mapped  # copies need no mapping


def test_numpy_view_shares_the_mapping(buffer):
    view = np.asarray(buffer)
    assert buffer.mapped and buffer.views == 1
    assert view.ctypes.data == buffer.address
    assert view.shape == (2, 8) and view.dtype == np.float32 and view.flags.writeable
    view[1, 3] = 42.5
    assert buffer.read()[1, 3] == 42.5
    buffer.write(np.full((2, 8), 7, np.float32))
    assert np.array_equal(view, np.full((2, 8), 7, np.float32))
    second = buffer.numpy()
    assert second.ctypes.data == view.ctypes.data and buffer.views == 2
    del view, second
    gc.collect()
    assert buffer.views == 0


def test_array_protocol_views_or_converts_on_request(buffer):
    buffer.write(np.arange(16, dtype=np.float32).reshape(2, 8))
    assert buffer.__array__().ctypes.data == buffer.address
    converted = buffer.__array__(np.float64)
    assert converted.dtype == np.float64 and converted.ctypes.data != buffer.address
    assert np.array_equal(converted, np.arange(16).reshape(2, 8))
    copied = buffer.__array__(copy=True)
    assert copied.ctypes.data != buffer.address and np.array_equal(copied, converted)
    del copied
    gc.collect()
    assert buffer.views == 0


def test_memoryview_uses_the_buffer_protocol(buffer):
    buffer.write(np.zeros((2, 8), np.float32))
    memory = memoryview(buffer)
    assert (memory.format, memory.shape, memory.nbytes) == ("f", (2, 8), 64)
    assert not memory.readonly
    memory[0, 1] = 3.25
    assert buffer.read()[0, 1] == 3.25
    assert buffer.views == 1
    memory.release()
    assert buffer.views == 0


def test_dlpack_shares_memory(buffer):
    assert buffer.__dlpack_device__() == (1, 0)  # kDLCPU
    shared = np.from_dlpack(buffer)
    assert shared.ctypes.data == buffer.address == np.asarray(buffer).ctypes.data
    assert shared.shape == (2, 8) and shared.dtype == np.float32
    view = np.asarray(buffer)
    view[...] = 0
    view[0, 0] = 11.0  # written through the buffer's view, read through DLPack's
    assert shared[0, 0] == 11.0 and shared.sum() == 11.0
    buffer.write(np.full((2, 8), -5, np.float32))  # and through the buffer itself
    assert np.array_equal(shared, np.full((2, 8), -5, np.float32))
    del view, shared
    gc.collect()
    assert buffer.views == 0


class DLTensor(ctypes.Structure):
    """dlpack.h 0.6's DLTensor, for a consumer written here."""

    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int),
                ("device_id", ctypes.c_int), ("ndim", ctypes.c_int),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


USED_NAME = ctypes.c_char_p(b"used_dltensor")  # must outlive the capsules renamed to it


def test_dlpack_tensor_as_a_consumer_sees_it(client):
    buffer = client.buffer((3, 5), np.int16, device="cpu")
    capsule = buffer.__dlpack__()
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                  ctypes.c_char_p]
    set_name = ctypes.pythonapi.PyCapsule_SetName
    set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = get_pointer(capsule, b"dltensor")
    managed = DLManagedTensor.from_address(address)
    tensor = managed.dl_tensor
    assert tensor.data == buffer.address and tensor.byte_offset == 0
    assert (tensor.device_type, tensor.device_id) == (1, 0)  # kDLCPU
    assert (tensor.ndim, tensor.shape[0], tensor.shape[1]) == (2, 3, 5)
    assert (tensor.code, tensor.bits, tensor.lanes) == (0, 16, 1)  # kDLInt
    assert not tensor.strides  # NULL: C-contiguous
    # Taken as a consumer takes it: renamed, then released by its deleter.
    assert set_name(capsule, USED_NAME) == 0
    del capsule
    gc.collect()
    assert buffer.views == 1  # the consumer holds it still
    managed.deleter(address)
    assert buffer.views == 0


def test_unconsumed_dlpack_capsule_releases_its_view(buffer):
    capsule = buffer.__dlpack__()
    assert buffer.views == 1
    del capsule
    gc.collect()
    assert buffer.views == 0


def test_dlpack_refusals(client, buffer):
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        buffer.__dlpack__(stream=1)
    expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT, vaccel.D_NONE)
    flags = client.buffer(3, np.bool_, device="cpu")
    with pytest.raises(vaccel.Unsupported) as excinfo:
        np.from_dlpack(flags)
    expect_error(excinfo, vaccel.Unsupported, vaccel.E_UNSUPPORTED, vaccel.D_NONE)
    assert np.array_equal(np.asarray(flags), np.zeros(3, np.bool_))  # still viewable
    assert buffer.views == 0


def test_a_program_writes_into_a_view_made_before_the_run(add_program):
    a, b, expected = add_inputs()
    inputs = [add_program.buffer("TosaInput_0"), add_program.buffer("TosaInput_1")]
    output = add_program.buffer("TosaOutput_0")
    np.asarray(inputs[0])[...] = a  # inputs written in place
    memoryview(inputs[1]).cast("B")[:] = b.tobytes()
    result = np.asarray(output)  # viewed before anything ran
    result[...] = 0
    assert add_program.run(inputs, outputs=[output]) == [output]
    assert np.array_equal(result, expected)
    # A buffer for one slot, an array for another: both ways in one run.
    [copied] = add_program.run([a, inputs[1]])
    assert np.array_equal(copied, expected)


def test_a_view_keeps_its_buffer(buffer):
    view = np.asarray(buffer)
    with pytest.raises(vaccel.Busy) as excinfo:
        buffer.close()
    expect_error(excinfo, vaccel.Busy, vaccel.E_BUSY, vaccel.D_IN_USE, arg0=1)
    assert not buffer.closed
    view[0, 0] = 1.5  # still mapped
    assert buffer.read()[0, 0] == 1.5
    del view
    gc.collect()
    handle = buffer.handle
    with buffer:
        pass
    assert buffer.closed
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        buffer.read()
    expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                 vaccel.D_UNKNOWN_HANDLE, arg0=handle)
    buffer.close()


def test_closing_the_client_waits_for_the_last_view():
    client = vaccel.Client()
    buffer = client.buffer(4, np.int32, device="cpu")
    view = np.asarray(buffer)
    shared = np.from_dlpack(buffer)
    client.close()  # refuses every call from now; unmaps once the views are gone
    assert client.closed and buffer.closed
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        buffer.read()
    expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT, vaccel.D_NONE)
    view[...] = [5, 6, 7, 8]  # the mapping is still there
    assert shared.tolist() == [5, 6, 7, 8] and buffer.views == 2
    del view, shared
    gc.collect()
    assert buffer.views == 0


def test_a_view_outlives_the_objects_that_made_it():
    client = vaccel.Client()
    view = np.asarray(client.buffer(4, np.int32, device="cpu"))
    del client
    gc.collect()
    view[...] = [1, 2, 3, 4]  # the buffer and its client live on through the view
    assert view.sum() == 10
    del view
    gc.collect()


def test_bindings_are_checked_by_the_contract(client, add_program):
    a, b, _ = add_inputs()
    short = client.buffer(3, np.float32, device="cpu")  # 12 bytes where the slot takes 64
    with pytest.raises(vaccel.OutOfBounds) as excinfo:
        add_program.run([short, b])
    error = expect_error(excinfo, vaccel.OutOfBounds, vaccel.E_OUT_OF_BOUNDS, vaccel.D_RANGE,
                         arg0=0, arg1=64)
    assert error.context == "the device refused the run"
    with vaccel.Client() as other:
        foreign = other.buffer((1, 4, 4, 1), np.float32, device="cpu")
        with pytest.raises(vaccel.InvalidArgument) as excinfo:
            add_program.run([foreign, b])
        expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                     vaccel.D_BINDING_CONTEXT, arg0=0)


def test_buffer_refusals(client):
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        client.buffer(4, np.float32, device="cpu", domain="vram")
    expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT, vaccel.D_NONE)
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        client.buffer(4, np.dtype(">f4"), device="cpu")
    expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT, vaccel.D_NONE)
    with pytest.raises(vaccel.Unsupported) as excinfo:
        client.buffer(4, np.float32, device="cpu", domain="device")  # the CPU has no such memory
    expect_error(excinfo, vaccel.Unsupported, vaccel.E_UNSUPPORTED, vaccel.D_BAD_VALUE,
                 arg1=vaccel.DOMAIN_DEVICE)
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        client.buffer(0, device="cpu")
    assert excinfo.value.code == vaccel.E_INVALID_ARGUMENT
    assert excinfo.value.sentence
