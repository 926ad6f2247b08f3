"""Writes .npy files for input x (f32 [2, 3]) of test_model.so into DIR:
good ones in format versions 1.0, 2.0 and 3.0, one of NaNs, and one per
error mte-run reports for a file.

  npy_files.py DIR
"""

import os
import sys

import numpy as np

directory = sys.argv[1]
x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)


def path(name):
    return os.path.join(directory, name)


def save(name, array):
    np.save(path(name), array, allow_pickle=True)


def write_bytes(name, data):
    with open(path(name), "wb") as f:
        f.write(data)


def header(text, version=1):
    """Returns a .npy prefix with `text` as its header dictionary."""
    text = text.encode() + b"\n"
    length = len(text).to_bytes(2 if version == 1 else 4, "little")
    return b"\x93NUMPY" + bytes([version, 0]) + length + text


for version in [(1, 0), (2, 0), (3, 0)]:
    with open(path("x_v%d.npy" % version[0]), "wb") as f:
        np.lib.format.write_array(f, x, version=version)
save("x_nan.npy", np.full((2, 3), np.nan, dtype=np.float32))
save("x_f64.npy", x.astype(np.float64))
save("x_shape.npy", x.reshape(3, 2))
save("x_fortran.npy", np.asfortranarray(x))
save("x_bigendian.npy", x.astype(">f4"))
save("x_object.npy", np.array([[1, "a", None]] * 2, dtype=object))
save("x_structured.npy", np.zeros((2, 3), dtype=[("a", "<f4"), ("b", "<i4")]))
save("x_complex.npy", x.astype(np.complex64))
valid = open(path("x_v1.npy"), "rb").read()
write_bytes("x_truncated.npy", valid[:-4])
write_bytes("x_trailing.npy", valid + b"\0\0\0\0")
write_bytes("x_empty_file.npy", b"")
write_bytes("x_text.npy", b"1 2 3\n4 5 6\n")
write_bytes("x_version.npy", b"\x93NUMPY\x09\x00" + valid[8:])
write_bytes(
    "x_no_shape.npy",
    header("{'descr': '<f4', 'fortran_order': False, }") + x.tobytes(),
)
write_bytes(
    "x_bad_shape.npy",
    header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }")
    + x.tobytes(),
)
write_bytes("x_cut_header.npy", valid[:20])
