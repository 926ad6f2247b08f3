#!/usr/bin/env python3
"""Imports hundreds of randomly damaged copies of valid models and requires a
clean exit every time: status 0 (the damage left a valid model) or 1 (an
error message), never a signal, an abort or a hang.

Usage: fuzz_import.py MTE_TRANSLATE WORKDIR MODEL.onnx[:shapes] ... [--runs N]
"""
import argparse
import os
import random
import subprocess
import sys


def mutate(data, rnd):
    data = bytearray(data)
    kind = rnd.randrange(5)
    if kind == 0:  # flip a few bits
        for _ in range(rnd.randint(1, 8)):
            i = rnd.randrange(len(data))
            data[i] ^= 1 << rnd.randrange(8)
    elif kind == 1:  # overwrite a run with random bytes
        i = rnd.randrange(len(data))
        for j in range(i, min(len(data), i + rnd.randint(1, 16))):
            data[j] = rnd.randrange(256)
    elif kind == 2:  # truncate
        data = data[: rnd.randrange(len(data))]
    elif kind == 3:  # insert random bytes
        i = rnd.randrange(len(data))
        data[i:i] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 16)))
    else:  # set a byte to a small varint value (field numbers, lengths, types)
        i = rnd.randrange(len(data))
        data[i] = rnd.choice([0, 1, 2, 7, 8, 0x7F, 0x80, 0xFF])
    return bytes(data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("translate")
    parser.add_argument("workdir")
    parser.add_argument("models", nargs="+")
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    rnd = random.Random(args.seed)
    statuses = {0: 0, 1: 0}
    bad = []
    for run in range(args.runs):
        spec = args.models[run % len(args.models)]
        path, _, shapes = spec.partition(":")
        with open(path, "rb") as f:
            data = f.read()
        mutated = os.path.join(args.workdir, f"mutant_{run}.onnx")
        with open(mutated, "wb") as f:
            f.write(mutate(data, rnd))
        flags = [f"--input-shape={s}" for s in shapes.split(",") if s]
        try:
            result = subprocess.run(
                [args.translate, "--import-onnx", mutated, "-o", os.devnull]
                + flags, capture_output=True, timeout=60)
            status = result.returncode
        except subprocess.TimeoutExpired:
            status = "timeout"
        if status in statuses:
            statuses[status] += 1
            os.remove(mutated)
        else:
            bad.append((mutated, status))
    for path, status in bad:
        print(f"BAD EXIT {status}: {path}")
    print(f"mutants: {args.runs}, imported: {statuses[0]}, "
          f"rejected with an error: {statuses[1]}, crashed: {len(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
