#!/usr/bin/env python3
"""State files for fp8-state-files.test.

  state_files.py compare A.npz B.npz   print whether the states are equal
  state_files.py variants A.npz DIR    write DIR/<variant>.npz from A: a
                                       compressed copy and files that do
                                       not fit the model
"""
import os
import sys

import numpy as np


def load(path):
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def main():
    command, source = sys.argv[1], sys.argv[2]
    state = load(source)
    if command == "compare":
        other = load(sys.argv[3])
        equal = [f"{key} {'equal' if np.array_equal(state[key], other[key]) else 'DIFFERENT'}"
                 for key in ("fp8.amax_history", "fp8.scale")]
        labels = bytes(state["fp8.scale.labels"]).decode().split("\n")
        history = state["fp8.amax_history"]
        print(f"{', '.join(equal)}; labels {' '.join(labels)}; "
              f"{len(history)} history rows"
              f"{' with amaxes' if history.max() > 0 else ''}")
        return 0
    out = sys.argv[3]
    scale, history = state["fp8.scale"], state["fp8.amax_history"]

    def save(name, **arrays):
        np.savez(os.path.join(out, name + ".npz"), **arrays)

    np.savez_compressed(os.path.join(out, "compressed.npz"), **state)
    save("negative", **{"fp8.scale": np.array([1, -1], np.float32),
                        "fp8.amax_history": history})
    save("shape", **{"fp8.scale": np.ones(3, np.float32),
                     "fp8.amax_history": history})
    save("missing", **{"fp8.scale": scale})
    save("extra", **{"fp8.scale": scale, "fp8.amax_history": history,
                     "bias": scale})
    save("labels", **{"fp8.scale": scale, "fp8.amax_history": history,
                      "fp8.scale.labels": np.frombuffer(b"x.input\ny.input",
                                                        np.uint8)})
    with open(os.path.join(out, "compressed.npz"), "rb") as f:
        data = f.read()
    with open(os.path.join(out, "truncated.npz"), "wb") as f:
        f.write(data[:100])
    # A flipped byte inside the stored fp8.scale member's data.
    save("corrupt", **{"fp8.scale": scale, "fp8.amax_history": history})
    path = os.path.join(out, "corrupt.npz")
    data = bytearray(open(path, "rb").read())
    at = data.find(b"fp8.scale.npy") + len("fp8.scale.npy") + 140
    data[at] ^= 0xFF
    open(path, "wb").write(bytes(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
