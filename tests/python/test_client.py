"""test_client.py - vaccel.Client: transports, version, devices, close."""

import ctypes
import errno
import os
import threading

import numpy as np
import pytest

import vaccel
from conftest import ADD_MODEL, TRANSPORT, add_inputs, expect_error

libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p


def c_environment(name):
    """The C library's view of the environment (what libvaccel reads)."""
    value = libc.getenv(name.encode())
    return value.decode() if value is not None else None


def test_automatic_choice_follows_vaccel_transport(client):
    assert os.environ["VACCEL_TRANSPORT"] == TRANSPORT
    assert client.transport == TRANSPORT
    assert not client.closed
    assert repr(client) == "<vaccel.Client open over %s>" % TRANSPORT


def test_the_package_says_its_version():
    assert vaccel.__version__ and vaccel.__version__[0].isdigit()
    assert vaccel.__version__ == vaccel._vaccel.__version__


def test_named_transport_is_used():
    with vaccel.Client(TRANSPORT) as named:
        assert named.transport == TRANSPORT
    assert named.closed
    assert repr(named) == "<vaccel.Client closed over %s>" % TRANSPORT


def test_embedded_needs_no_daemon():
    with vaccel.Client("embedded") as embedded:
        assert embedded.transport == "embedded"
        assert any(d.kind == "cpu" for d in embedded.devices())


def test_socket_path_is_given_for_the_open_only(monkeypatch, tmp_path):
    before = c_environment("VACCEL_SOCKET")
    if TRANSPORT == "socket":
        # The real path only as an argument: the environment names nothing.
        monkeypatch.setenv("VACCEL_SOCKET", str(tmp_path / "nothing-here.sock"))
        with vaccel.Client("socket", before) as remote:
            assert remote.transport == "socket"
            assert remote.devices()[0].name
        assert c_environment("VACCEL_SOCKET") == str(tmp_path / "nothing-here.sock")
        monkeypatch.setenv("VACCEL_SOCKET", before)
    absent = tmp_path / "absent.sock"
    with pytest.raises(vaccel.DeviceLost) as excinfo:
        vaccel.Client("socket", socket=absent)
    error = expect_error(excinfo, vaccel.DaemonGone, vaccel.E_DEVICE_LOST, vaccel.D_PEER_GONE)
    assert isinstance(error, vaccel.DeviceLost) and isinstance(error, ConnectionError)
    assert error.errno == errno.ENODEV
    assert str(absent) in error.sentence
    assert "start vacceld" in error.sentence
    assert c_environment("VACCEL_SOCKET") == before


def test_socket_path_never_passes_through_the_environment(tmp_path):
    """Another thread reading $VACCEL_SOCKET while clients open with a path
    never sees that path: it is an argument to libvaccel, not a variable."""
    before = c_environment("VACCEL_SOCKET")
    absent = str(tmp_path / "absent.sock")
    seen = []
    done = threading.Event()

    def watch():
        while not done.is_set():
            value = c_environment("VACCEL_SOCKET")
            if value != before:
                seen.append(value)
                return

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for _ in range(3000):
            with pytest.raises(vaccel.DeviceLost):
                vaccel.Client("socket", socket=absent)
            if seen:
                break
    finally:
        done.set()
        watcher.join()
    assert seen == []
    assert c_environment("VACCEL_SOCKET") == before


def test_kernel_transport_without_its_node_is_refused_naming_it(monkeypatch, tmp_path):
    absent = tmp_path / "vaccel"
    monkeypatch.setenv("VACCEL_DEVICE", str(absent))
    with pytest.raises(vaccel.DeviceLost) as excinfo:
        vaccel.Client("kernel")
    error = expect_error(excinfo, vaccel.DaemonGone, vaccel.E_DEVICE_LOST, vaccel.D_PEER_GONE)
    assert isinstance(error, vaccel.DeviceLost) and isinstance(error, ConnectionError)
    assert error.errno == errno.ENODEV
    assert error.sentence.startswith("DeviceLost: cannot open %s (No such file or directory); "
                                     "load the kernel module" % absent)
    assert error.context == "cannot open a vaccel client over the 'kernel' transport"


def test_unknown_transport_is_refused_by_name():
    with pytest.raises(vaccel.Unsupported) as excinfo:
        vaccel.Client("carrier-pigeon")
    error = expect_error(excinfo, vaccel.Unsupported, vaccel.E_UNSUPPORTED, vaccel.D_NONE,
                         named=False)
    assert error.errno == errno.EPROTONOSUPPORT
    assert "transport 'carrier-pigeon' is unknown" in error.sentence


def test_socket_path_with_another_transport_is_refused():
    with pytest.raises(vaccel.InvalidArgument) as excinfo:
        vaccel.Client("embedded", socket="/run/vaccel/vacceld.sock")
    error = expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                         vaccel.D_NONE)
    assert "does not use it" in error.context


def test_version_is_the_contract_abi(client):
    version = client.version()
    assert (version.major, version.minor) == (vaccel.ABI_MAJOR, vaccel.ABI_MINOR)
    for capability in (vaccel.CAP_TOSA, vaccel.CAP_RUN, vaccel.CAP_BUFFER_MAP):
        assert version.capabilities & capability


def test_devices_describe_the_cpu(client):
    devices = client.devices()
    assert [d.index for d in devices] == list(range(len(devices)))
    cpu = client.device("cpu")
    assert cpu.kind == "cpu" and cpu.device_class == "other" and not cpu.lost
    assert "tosa" in cpu.formats and "cpu-builtin" in cpu.formats
    assert cpu.host_visible
    assert cpu.memory_bytes > 0 and len(cpu.uuid) == 32
    assert cpu.limits["max_queues"] > 0 and cpu.limits["max_buffers"] > 0
    assert cpu.tosa_targets and cpu.tosa_targets[0][:2] == (1, 0)
    assert cpu in devices
    assert client.device(cpu.index) == cpu == client.device(cpu) == client.device(cpu.name)
    assert client.device("cpu:0") == cpu
    assert str(cpu) == '[%d] cpu "%s"' % (cpu.index, cpu.name)
    assert "tosa" in client.device("auto").formats


def test_close_releases_everything_and_refuses_later_calls():
    client = vaccel.Client()
    program = client.load(ADD_MODEL, device="cpu")
    buffer = client.buffer(4, np.float32, device="cpu")
    client.close()
    client.close()  # closing twice does nothing
    assert client.closed and program.closed and buffer.closed
    for call in (client.devices, client.version, lambda: client.load(ADD_MODEL),
                 lambda: program.run(add_inputs()[:2]),
                 buffer.read, lambda: buffer.write(b"1234"), lambda: np.asarray(buffer)):
        with pytest.raises(vaccel.InvalidArgument) as excinfo:
            call()
        error = expect_error(excinfo, vaccel.InvalidArgument, vaccel.E_INVALID_ARGUMENT,
                             vaccel.D_NONE)
        assert error.context.startswith("the vaccel client is closed")
        assert error.errno == errno.EINVAL
    program.close()  # what the client released is not released again
    buffer.close()
