"""Inputs for test_model.so and checks of what mte-run wrote for it.

  test_model_io.py write DIR             seeded random, non-zero x.npy, ids.npy
  test_model_io.py check IN_DIR OUT_DIR  OUT_DIR holds sum, twice, stats_total
                                         computed from IN_DIR's x and ids
  test_model_io.py range IN_DIR LO HI    IN_DIR's inputs are random: x in
                                         [-1, 1), ids in [LO, HI), not constant
"""

import os
import sys

import numpy as np


def write(directory):
    rng = np.random.default_rng(1234)
    x = rng.uniform(-4, 4, size=(2, 3)).astype(np.float32)
    ids = rng.integers(-1000, 1000, size=(2,), dtype=np.int64)
    assert np.all(x != 0) and np.all(ids != 0)
    np.save(os.path.join(directory, "x.npy"), x)
    np.save(os.path.join(directory, "ids.npy"), ids)


def check(inputs, outputs):
    x = np.load(os.path.join(inputs, "x.npy"))
    ids = np.load(os.path.join(inputs, "ids.npy"))
    total = 0.0
    for value in x.flat:  # the order the model adds in
        total += float(value)
    expected = {
        "sum": x + np.float32(1),
        "twice": ids * 2,
        "stats_total": np.array(total),
    }
    for name, want in expected.items():
        got = np.load(os.path.join(outputs, name + ".npy"))
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert np.array_equal(got, want), (name, got, want)
    print("outputs match")


def check_range(inputs, lo, hi):
    x = np.load(os.path.join(inputs, "x.npy"))
    ids = np.load(os.path.join(inputs, "ids.npy"))
    assert x.dtype == np.float32 and ids.dtype == np.int64
    assert np.all((x >= -1) & (x < 1)) and len(np.unique(x)) == x.size, x
    assert np.all((ids >= lo) & (ids < hi)), ids
    print("inputs in range")


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "write":
        write(sys.argv[2])
    elif command == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        check_range(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
