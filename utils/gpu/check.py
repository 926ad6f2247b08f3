#!/usr/bin/env python3
"""Runs, on a GPU machine, the CUDA models utils/gpu/prepare.py built and
compares their outputs with the float64 numpy reference and with the host
backend's outputs.

Tolerance (fp32): |cuda - expected| <= 1e-4 * |expected| + 1e-5 elementwise,
against both. Exits non-zero on any failure; prints one PASS/FAIL line per
comparison.

Usage: check.py DIR
"""
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

RTOL, ATOL = 1e-4, 1e-5


def main():
    directory = os.path.abspath(sys.argv[1])
    os.environ["MTE_RUNTIME_LIBRARY"] = os.path.join(directory,
                                                     "libmte_runtime.so")
    import mte

    failures = 0
    cases = sorted(f[:-len(".cuda.so")] for f in os.listdir(directory)
                   if f.endswith(".cuda.so"))
    if not cases:
        print(f"FAIL no models in {directory}")
        return 1
    for name in cases:
        data = np.load(os.path.join(directory, name + ".npz"))
        inputs = {k: data[k] for k in data.files
                  if k not in ("last_hidden_state", "host_output")}
        print(f"running {name}", flush=True)
        start = time.perf_counter()
        try:
            model = mte.load(os.path.join(directory, name + ".cuda.so"))
            got = model(**inputs)["last_hidden_state"]
        except Exception as error:  # noqa: BLE001 - report and go on
            print(f"FAIL {name}: {error}")
            failures += 1
            continue
        seconds = time.perf_counter() - start
        for label, want in [("float64 reference", data["last_hidden_state"]),
                            ("host backend", data["host_output"])]:
            err = np.abs(got.astype(np.float64) - want)
            ok = got.shape == want.shape and bool(
                np.all(err <= RTOL * np.abs(want) + ATOL))
            print(f"{'PASS' if ok else 'FAIL'} {name} vs {label}: max abs "
                  f"error {err.max():.2e} (load + first run {seconds:.2f} s)")
            failures += not ok
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
