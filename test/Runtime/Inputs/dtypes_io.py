"""Inputs for dtypes_model.so and checks of what mte-run did with them.

  dtypes_io.py write DIR             in_<dtype>.npy for every element type:
                                     edge values and seeded random ones;
                                     bf16 and f8 inputs as f32 arrays
  dtypes_io.py check IN_DIR OUT_DIR  each out_<dtype>.npy is its input,
                                     rounded to bf16/f8 where it applies
  dtypes_io.py random IN_DIR LO HI   the inputs mte-run generated (saved with
                                     --save-inputs) are in their ranges
"""

import os
import sys

import numpy as np

NUMPY_TYPES = {
    "f32": np.float32,
    "f16": np.float16,
    "f64": np.float64,
    "i64": np.int64,
    "i32": np.int32,
    "i16": np.int16,
    "i8": np.int8,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "bool": np.bool_,
}
NARROW_TYPES = ["bf16", "f8e4m3fn", "f8e5m2"]
SIZE = 256


def load(directory, name):
    return np.load(os.path.join(directory, name + ".npy"))


def write(directory):
    rng = np.random.default_rng(99)
    for name, dtype in NUMPY_TYPES.items():
        if dtype == np.bool_:
            values = rng.integers(0, 2, SIZE).astype(np.bool_)
        elif np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            values = rng.integers(info.min, info.max, SIZE, dtype=dtype,
                                  endpoint=True)
            values[:3] = [info.min, info.max, 0]
        else:
            values = (rng.standard_normal(SIZE) * 100).astype(dtype)
            values[:4] = [np.inf, -np.inf, -0.0, np.finfo(dtype).tiny]
            if dtype == np.float32:
                values[4:7] = np.nan  # counted apart in the summary
        np.save(os.path.join(directory, "in_" + name + ".npy"), values)
    for name in NARROW_TYPES:
        # Magnitudes across and beyond every narrow format's range.
        values = (rng.standard_normal(SIZE)
                  * 10.0 ** rng.uniform(-9, 6, SIZE)).astype(np.float32)
        values[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 0.3]
        # Halfway between 1 and the next bf16 (ties to even: 1), and between
        # that one and the next (ties to even: up).
        values[8:10] = [1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8]
        np.save(os.path.join(directory, "in_" + name + ".npy"), values)
    np.save(os.path.join(directory, "in_empty.npy"),
            np.zeros((0, 3), np.float32))


def round_bf16(values):
    """Rounds f32 to bf16 (nearest, ties to even) with integer arithmetic."""
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    result = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(values), np.float32(np.nan), result)


def f8_values(exponent_bits, mantissa_bits, finite_only):
    """Returns the non-negative finite values of an f8 format by code."""
    bias = 2 ** (exponent_bits - 1) - 1
    values = []
    for code in range(2 ** (exponent_bits + mantissa_bits)):
        exponent, mantissa = code >> mantissa_bits, code % 2 ** mantissa_bits
        top = exponent == 2 ** exponent_bits - 1
        if top and (not finite_only or mantissa == 2 ** mantissa_bits - 1):
            break
        if exponent == 0:
            values.append(mantissa * 2.0 ** (1 - bias - mantissa_bits))
        else:
            values.append((1 + mantissa * 2.0 ** -mantissa_bits)
                          * 2.0 ** (exponent - bias))
    return np.array(values)


def round_f8(values, exponent_bits, mantissa_bits, finite_only):
    """Rounds to the nearest f8 value by brute force, ties to even codes.
    Formats without infinity saturate; the others round past the largest
    finite value to infinity as IEEE does, as if the next power of two were
    the next code."""
    table = f8_values(exponent_bits, mantissa_bits, finite_only)
    candidates = table
    if not finite_only:
        candidates = np.append(table, 2 ** (np.floor(np.log2(table[-1])) + 1))
    result = []
    for value in values.astype(np.float64):
        magnitude = abs(value)
        if np.isnan(value) or (np.isinf(value) and not finite_only):
            result.append(value)
            continue
        magnitude = min(magnitude, candidates[-1])
        distance = np.abs(candidates - magnitude)
        nearest = np.flatnonzero(distance == distance.min())
        code = nearest[0] if len(nearest) == 1 else nearest[nearest % 2 == 0][0]
        rounded = np.inf if code == len(table) else candidates[code]
        result.append(np.copysign(rounded, value))
    return np.array(result, dtype=np.float32)


def check(inputs, outputs):
    for name in NUMPY_TYPES:
        want = load(inputs, "in_" + name)
        got = load(outputs, "out_" + name)
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert np.array_equal(got, want, equal_nan=got.dtype.kind == "f"), name
        if got.dtype.kind == "f":  # -0.0 stays negative
            assert np.array_equal(np.signbit(got), np.signbit(want)), name
    expected = {
        "bf16": round_bf16(load(inputs, "in_bf16")),
        "f8e4m3fn": round_f8(load(inputs, "in_f8e4m3fn"), 4, 3, True),
        "f8e5m2": round_f8(load(inputs, "in_f8e5m2"), 5, 2, False),
    }
    assert expected["bf16"][8] == 1 and expected["bf16"][9] == 1 + 2.0 ** -6
    assert expected["f8e4m3fn"][7] == 0.3125
    assert expected["f8e4m3fn"][1] == 448 and expected["f8e5m2"][1] == np.inf
    for name, want in expected.items():
        got = load(outputs, "out_" + name)
        assert got.dtype == np.float32 and got.shape == (SIZE,), name
        bad = ~((got == want) | (np.isnan(got) & np.isnan(want)))
        assert not bad.any(), (name, load(inputs, "in_" + name)[bad],
                               got[bad], want[bad])
        assert np.array_equal(np.signbit(got), np.signbit(want)), name
    empty = load(outputs, "out_empty")
    assert empty.dtype == np.float32 and empty.shape == (0, 3)
    print("outputs match")


def check_random(inputs, lo, hi):
    for name in list(NUMPY_TYPES) + NARROW_TYPES:
        values = load(inputs, "in_" + name)
        if name == "bool":
            assert values.dtype == np.bool_ and 0 < values.sum() < SIZE
        elif values.dtype.kind in "iu":
            assert np.all((values >= lo) & (values < hi)), name
            assert len(np.unique(values)) > 1, name
        else:
            assert np.all((values >= -1) & (values < 1)), (name, values)
            assert len(np.unique(values)) > 4, name
    assert load(inputs, "in_empty").shape == (0, 3)
    print("inputs in range")


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "write":
        write(sys.argv[2])
    elif command == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        check_random(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
