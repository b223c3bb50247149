#!/usr/bin/env python3
"""run_model.py [EXAMPLES_DIR] - the demo model, run from Python.

Loads the example MLP (mlp.tosa, which the build writes into build/examples
with input.npy and expected.npy), runs it once through whatever transport
libvaccel finds (the kernel module, a vacceld on its socket, or in process),
and checks the output against expected.npy (1e-5 relative, as
examples/run-demo.sh does). Run it from the repository root:

    PYTHONPATH=build/python python3 examples/python/run_model.py
"""

import pathlib
import sys

import numpy as np
import vaccel

examples = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/examples")
x = np.load(examples / "input.npy")
expected = np.load(examples / "expected.npy")

with vaccel.Client() as client:
    program = client.load(examples / "mlp.tosa")  # on the "auto" device
    print("transport", client.transport, "device", program.device)
    for tensor in program.inputs + program.outputs:
        print(" ", tensor.name, tensor.shape, tensor.dtype)
    y = program(x=x)["y"]

if not np.allclose(y, expected, rtol=1e-5, atol=0):
    sys.exit("run_model: the output differs from expected.npy by up to %g"
             % np.max(np.abs(y - expected)))
print("y matches expected.npy:", y.shape, y.dtype)
