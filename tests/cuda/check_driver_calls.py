#!/usr/bin/env python3
"""check_driver_calls.py CUDA_H CUDA_TYPEDEFS_H DRIVER_HPP

The CUDA backend resolves every driver call it lists (driver.hpp) with
cuGetProcAddress at the headers' CUDA version, and calls it with the
prototype cuda.h gives the name. That is only right when cuda.h maps the
name to its newest version (#define cuX cuX_vN) or the function has one
prototype in every version. This fails, naming the call, when cuda.h keeps
an old prototype under the name while a newer version with other parameters
exists (cuCtxSynchronize: (void) in cuda.h, (CUcontext) at 13.0).
"""
import re
import sys


def main(cuda_h, typedefs_h, driver_hpp):
    header = open(cuda_h).read()
    typedefs = open(typedefs_h).read()
    version = int(re.search(r"#define CUDA_VERSION (\d+)", header).group(1))
    names = re.findall(r"X\((cu\w+)\)", open(driver_hpp).read())
    if not names:
        print(f"no driver calls found in {driver_hpp}")
        return 1
    bad = []
    for name in names:
        pattern = r"typedef CUresult \(CUDAAPI \*PFN_" + name + r"_v(\d+)\)\(([^;]*)\);"
        versions = [(int(v), " ".join(sig.split())) for v, sig in re.findall(pattern, typedefs)]
        versions = [v for v in versions if v[0] <= version]
        if not versions:
            bad.append(f"{name}: no PFN_{name}_v* typedef at or below CUDA {version}")
            continue
        remapped = re.search(r"#define\s+" + name + r"\s", header) is not None
        if not remapped and len({sig for _, sig in versions}) > 1:
            bad.append(f"{name}: cuda.h keeps one prototype under this name while "
                       f"cuGetProcAddress at {version} gives another: "
                       + "; ".join(f"v{v}({sig})" for v, sig in sorted(versions)))
    for line in bad:
        print("FAIL", line)
    print(f"{len(names)} driver calls checked against CUDA {version}: {len(bad)} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
