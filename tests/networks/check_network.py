#!/usr/bin/env python3
"""check_network.py - one network on one device against the float64 reference.

Owns: the networks tests' procedure (tests/networks/CMakeLists.txt registers
one case per network, dtype and device). It writes the network with
make-network into a scratch folder, runs model.tosa with `vaccelctl run` on
the device, computes reference.py's float64 output from network.json and
weights/*.npy, and compares. On a device other than the CPU it also runs
the CPU backend and holds the device to the CPU's result with the same
tolerance.

Decides the tolerances, per element: |got - want| <= T * (1 + |want|), with
T = 1e-4 for FP32 and T = 1e-2 for FP16 (docs/networks.md says why).
--perturb
NAME[:FACTOR]: a negative control; the reference reads weights/NAME.npy
multiplied by FACTOR (default 1.001) and the comparison must FAIL.

Usage: check_network.py --make-network PATH --vaccelctl PATH --device DEV
         [--perturb NAME[:FACTOR]] [--keep DIR]
         NAME DTYPE [make-network options...]
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402

TOLERANCE = {"fp32": 1e-4, "fp16": 1e-2}


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run(cmd, **kwargs):
    return subprocess.run(cmd, capture_output=True, text=True, **kwargs)


def run_model(ctl, folder, device, out):
    """`vaccelctl run` on DEVICE; the completed process and the output array."""
    desc = reference.Network(folder).desc
    inputs = [f"{i['name']}={os.path.join(folder, i['file'])}" for i in desc["inputs"]]
    cmd = [ctl, "run", os.path.join(folder, "model.tosa"), "--device", device, "--output-dir", out]
    for i in inputs:
        cmd += ["--input", i]
    start = time.monotonic()
    proc = run(cmd)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        return proc, None, seconds
    name = desc["outputs"][0]["name"]
    got = np.load(os.path.join(out, name + ".npy"))
    want_dtype = np.float16 if desc["dtype"] == "fp16" else np.float32
    if got.dtype != want_dtype or list(got.shape) != desc["outputs"][0]["shape"]:
        fail(f"{name}.npy from {device}: {got.dtype} {got.shape}, network.json says "
             f"{np.dtype(want_dtype)} {desc['outputs'][0]['shape']}")
    return proc, got, seconds


def errors(got, want):
    """(max |got - want|, max |got - want| / (1 + |want|))."""
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    if not np.all(np.isfinite(got)):
        return float("inf"), float("inf")
    return float(diff.max()), float((diff / (1.0 + np.abs(want.astype(np.float64)))).max())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--make-network", required=True)
    parser.add_argument("--vaccelctl", required=True)
    parser.add_argument("--device", required=True)
    parser.add_argument("--perturb")
    parser.add_argument("--keep", help="write the folder here and keep it")
    parser.add_argument("name")
    parser.add_argument("dtype", choices=sorted(TOLERANCE))
    parser.add_argument("options", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    tol = TOLERANCE[args.dtype]

    scratch = tempfile.mkdtemp(prefix="vaccel-networks.")
    try:
        folder = args.keep or os.path.join(scratch, "net")
        gen = run([args.make_network, args.name, folder, "--dtype", args.dtype] + args.options)
        if gen.returncode != 0:
            fail(f"make-network {args.name} failed:\n{gen.stderr}")
        print(gen.stdout.strip())

        if args.perturb:
            name, _, factor = args.perturb.partition(":")
            path = os.path.join(folder, "weights", name + ".npy")
            if not os.path.exists(path):
                fail(f"--perturb {name}: no {path}")
            w = np.load(path)
            np.save(path, (w * np.float32(factor or 1.001)).astype(np.float32))
            print(f"negative control: the reference reads {name} times {factor or 1.001}")

        start = time.monotonic()
        want, _ = reference.compute(folder)
        print(f"reference (NumPy float64): {time.monotonic() - start:.2f} s")

        cpu_proc, cpu, cpu_s = run_model(args.vaccelctl, folder, "cpu", os.path.join(scratch, "cpu"))
        if cpu is None:
            fail(f"the CPU backend refused {args.name} {args.dtype}:\n{cpu_proc.stderr}")
        abs_err, rel_err = errors(cpu, want)
        verdicts = [("cpu", abs_err, rel_err, cpu_s)]

        if args.device != "cpu":
            proc, got, seconds = run_model(args.vaccelctl, folder, args.device,
                                           os.path.join(scratch, "device"))
            if got is None:
                fail(f"{args.device} refused {args.name} {args.dtype}:\n{proc.stderr}")
            a, r = errors(got, want)
            verdicts.append((args.device, a, r, seconds))
            a2, r2 = errors(got, cpu)
            print(f"{args.device} against the CPU backend: max |got-cpu| {a2:.3g}, "
                  f"max |got-cpu|/(1+|cpu|) {r2:.3g} (tolerance {tol:g})")
            if not r2 <= tol:
                fail(f"{args.name} {args.dtype} on {args.device} differs from the CPU backend "
                     f"by {r2:.3g} relative, beyond {tol:g}")

        bad = []
        for device, a, r, seconds in verdicts:
            print(f"{args.name} {args.dtype} on {device}: max |got-want| {a:.3g}, "
                  f"max |got-want|/(1+|want|) {r:.3g} (tolerance {tol:g}; run {seconds:.2f} s)")
            if not r <= tol:
                bad.append(device)
        if args.perturb:
            if not bad:
                fail(f"negative control: the comparison still passed with {args.perturb} "
                     "perturbed; it cannot see such an error")
            print(f"negative control: the comparison fails as it must ({', '.join(bad)})")
            return 0
        if bad:
            fail(f"{args.name} {args.dtype} differs from the float64 reference beyond "
                 f"{tol:g} on {', '.join(bad)}")
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
