"""conftest.py - what every test of the vaccel package shares.

Owns: the paths of the fixtures and the example model, the transport the
run is for, and the rule that no test may skip. Decides:
  - the ctest entries (tests/python/CMakeLists.txt, run_pytest.sh) set
    VACCEL_TEST_TRANSPORT ("embedded" or "socket"), VACCEL_TRANSPORT to the
    same, VACCEL_TEST_QUEUE_LIMIT (queues per context), VACCEL_FIXTURES_DIR
    and VACCEL_EXAMPLES_DIR; a missing one stops the run with an error,
    never a smaller run;
  - `client` is a vaccel.Client() (libvaccel's automatic choice, which
    $VACCEL_TRANSPORT forces), checked to be over the expected transport,
    closed after the test;
  - a skipped test is reported as failed: a test that cannot run fails.
"""

import os
import pathlib

import numpy as np
import pytest

import vaccel


def _required(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError("%s is not set: run these tests through ctest (tests/python/"
                           "run_pytest.sh sets it)" % name)
    return value


TRANSPORT = _required("VACCEL_TEST_TRANSPORT")
QUEUE_LIMIT = int(_required("VACCEL_TEST_QUEUE_LIMIT"))
FIXTURES = pathlib.Path(_required("VACCEL_FIXTURES_DIR"))
EXAMPLES = pathlib.Path(_required("VACCEL_EXAMPLES_DIR"))

ADD_DIR = FIXTURES / "v1.0-add_1x4x4x4_f32"
ADD_MODEL = ADD_DIR / "flatbuffer-tflite" / "test_add_1x4x4x4_f32.tosa"
CONV_DIR = FIXTURES / "v1.0-conv2d_1x1_1x32x32x8_f32"
CONV_MODEL = (CONV_DIR / "flatbuffer-tflite" /
              "test_conv2d_1x1_1x32x32x8_f32_st11_padSAME_dilat11.tosa")
LSTM_DIR = FIXTURES / "v1.0-lstm_stateful_13x21x3_f32"
LSTM_MODEL = LSTM_DIR / "flatbuffer-tflite" / "test_lstm_stateful_13x21x3_f32.tosa"
MAXPOOL_MODEL = FIXTURES / "v1.0-maxpool2d_int8" / "simple_maxpool2d.tosa"
OLD_ADD_MODEL = (FIXTURES / "v0.80-add_1x4x4x4_f32" / "flatbuffer-tflite" /
                 "test_add_1x4x4x4_f32.tosa")
MLP_MODEL = EXAMPLES / "mlp.tosa"

for _path in (ADD_MODEL, CONV_MODEL, LSTM_MODEL, MAXPOOL_MODEL, OLD_ADD_MODEL, MLP_MODEL):
    if not _path.is_file():
        raise RuntimeError("%s is missing (the fixtures, or the example model the build "
                           "generates: cmake --build build --target example-mlp)" % _path)


def add_inputs():
    """The ADD fixture's inputs and its exact expected output."""
    return (np.load(ADD_DIR / "placeholder_0.npy"), np.load(ADD_DIR / "placeholder_1.npy"),
            np.load(ADD_DIR / "tflite_result.npy"))


def expect_error(excinfo, cls, code, detail, arg0=None, arg1=None, named=True):
    """The raised vaccel.Error is `cls` with exactly this status, and carries
    libvaccel's sentence for it ("Name: ..." unless `named` is False: the
    library's own refusals have sentences of their own)."""
    error = excinfo.value
    assert type(error) is cls, repr(error)
    assert (error.code, error.detail) == (code, detail), str(error)
    if arg0 is not None:
        assert error.arg0 == arg0, str(error)
    if arg1 is not None:
        assert error.arg1 == arg1, str(error)
    assert error.name == vaccel.error_name(code)
    assert error.sentence, "no sentence"
    if named:
        assert error.sentence.startswith(error.name + ": "), error.sentence
    if error.own:  # the package's own refusal: its one sentence, no generic tail
        assert str(error) == error.context, str(error)
        assert "an argument is malformed or names nothing" not in str(error)
    else:
        assert str(error) == error.context + ": " + error.sentence
    return error


@pytest.fixture
def client():
    opened = vaccel.Client()
    assert opened.transport == TRANSPORT
    yield opened
    opened.close()


@pytest.fixture
def add_program(client):
    return client.load(ADD_MODEL, device="cpu")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped:
        report.outcome = "failed"
        report.longrepr = "%s skipped: the vaccel package's tests may not skip" % item.nodeid
