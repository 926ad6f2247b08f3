"""Runs a rank of cuda_comm_model_*.so through the mte package and checks
its outputs.

  cuda_comm_model_io.py MODEL [--group G] [--fake] [--runs N] [--rank R]
      [--world-size W] [--device D] [--comm-id ID] [--nccl-id TEXT]
      [--torch-group]

opens MODEL (Inputs/cuda_comm_model.c) as the options say (left out: the
launcher's), runs it N times (default 3: eager, captured as a CUDA graph,
replayed) on fixed inputs that every rank shares, and prints "rank R:
outputs match (N runs)" or what differs; a failure prints "rank R: error
[STATUS]: MESSAGE" and exits with status 1. G is the size of the model's
groups. The outputs expected are NCCL's (every rank's contribution), or
with --fake fake_nccl.c's (the rank's own, its part of a gather alone).
--nccl-id passes TEXT, padded with zeros to 128 bytes, as the NCCL unique
id; --torch-group gives torch.distributed's default group (a stand-in
torch in nccl.test). utils/gpu/check_nccl.py imports `inputs` and `check`.
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Integration"))
import fp8_reference  # noqa: E402

N = 3000


def inputs(group):
    """The inputs of a model of groups of `group` ranks, the same in every
    rank: integers, so that every sum is exact in every type and order."""
    rng = np.random.default_rng(7)
    h = rng.integers(-8, 9, N).astype(np.float32)
    return {
        "x": rng.integers(-100, 101, (group, N)).astype(np.float32),
        # bf16 bit patterns: the top half of the float32's.
        "h": (h.view(np.uint32) >> 16).astype(np.uint16),
        "f": rng.integers(-30, 31, N).astype(np.float16),
        "d": rng.standard_normal(N),
        "ids": rng.integers(-10**6, 10**6, N, dtype=np.int64),
        "k": rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32),
        # E4M3 codes without NaN (0x7f, 0xff).
        "q": rng.integers(0, 0x7f, N).astype(np.uint8),
    }


def bf16_times(bits, factor):
    """bf16 bit patterns of `factor` times the bf16 values `bits` (exact:
    small integers)."""
    values = (bits.astype(np.uint32) << 16).view(np.float32) * factor
    return (values.view(np.uint32) >> 16).astype(np.uint16)


def expected(given, group, index, rank, fake):
    """{output: (array, rows)}: the expected value and the rows of it to
    compare (None: all) of the rank `rank`, index `index` of its group."""
    x = given["x"]
    times = 1 if fake else group
    own = [index] if fake else None
    return {
        "rank": (np.array(rank, np.int64), None),
        "sum": (x * times, None),
        "gathered": (x, own),
        "scattered": (x[index] * times, None),
        "max_bf16": (given["h"], None),
        "sum_bf16": (bf16_times(given["h"], times), None),
        "sum_f16": (given["f"] * np.float16(times), None),
        "min_f64": (given["d"], None),
        "sum_i64": (given["ids"] * times, None),
        "max_i32": (given["k"], None),
        "gathered_f8": (np.tile(given["q"], (group, 1)), own),
        "alone": (x[0], None),
        "broadcast": (x[0], None),
        "passed": (passed(x, index, fake), None),
        # The runtime uploads only the rank's columns of the weight.
        "weight_part": (100 * np.arange(4)[:, None] + 2 * index
                        + np.arange(2)[None, :], None),
    }


def passed(x, index, fake):
    """`passed` of index `index`: its row of x, or at an odd index the row
    before, which NCCL receives from the index before (fake_nccl.c zeroes
    the buffer)."""
    if index % 2 == 0:
        return x[index]
    return np.zeros_like(x[index]) if fake else x[index - 1]


def fp8_weight(group):
    """The external variants' FP8 weight: the first 8 elements of the
    [4, 2G] weight rounded to bf16 (nearest even), divided by 4 and encoded
    as E4M3, transposed from [2, 4]."""
    w = (100 * np.arange(4)[:, None] + np.arange(2 * group)[None, :])
    w = w.astype(np.float32).reshape(-1)[:8]
    bits = w.view(np.uint32).astype(np.uint64)
    bf16 = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16)
    codes = fp8_reference.quantize(bf16.astype(np.uint32).view(np.float32), 4)
    return codes.reshape(2, 4).T


def group_index(model, rank):
    """The index of `rank` in its group, for the model's grid of 1 or 2
    axes named by its file (_axis0: axis 0 only; else all)."""
    if "_axis0" in model.path:
        return rank // model.grid[1]
    return rank


def check(model, given, group, runs, fake):
    """Runs `model` `runs` times; returns the lines that say what differs
    (empty: every run matched)."""
    index = group_index(model, model.rank)
    want = expected(given, group, index, model.rank, fake)
    if any(o.name == "weight_fp8" for o in model.outputs):
        # The rank's rows of it, cut before the transpose.
        want["weight_fp8"] = (fp8_weight(group).reshape(group, -1, 2)[index],
                              None)
    differing = {}
    for run in range(runs):
        got = model(**given)
        for name, (value, rows) in want.items():
            have = got[name]
            if rows is not None:
                have, value = have[rows], value[rows]
            value = np.asarray(value, have.dtype)
            if have.shape != value.shape or have.tobytes() != value.tobytes():
                differing.setdefault(name, []).append(str(run + 1))
    return [f"output '{name}' differs (run{'s' if len(bad) > 1 else ''} "
            f"{', '.join(bad)})" for name, bad in differing.items()]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--group", type=int, default=1)
    parser.add_argument("--fake", action="store_true")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rank", type=int)
    parser.add_argument("--world-size", type=int)
    parser.add_argument("--device", type=int)
    parser.add_argument("--comm-id")
    parser.add_argument("--nccl-id")
    parser.add_argument("--torch-group", action="store_true")
    args = parser.parse_args()

    import mte

    options = {"device": args.device, "rank": args.rank,
               "world_size": args.world_size, "comm_id": args.comm_id}
    if args.nccl_id is not None:
        options["nccl_unique_id"] = args.nccl_id.encode().ljust(128, b"\0")
    if args.torch_group:
        import torch.distributed

        options["group"] = torch.distributed.group.WORLD
    who = f"rank {os.environ.get('RANK', 0) if args.rank is None else args.rank}"
    try:
        with mte.load(args.model, **options) as model:
            who = f"rank {model.rank}"
            given = inputs(args.group)
            problems = check(model, given, args.group, args.runs, args.fake)
    except mte.Error as error:
        print(f"{who}: error [{error.status}]: {error}", flush=True)
        return 1
    for problem in problems:
        print(f"{who}: {problem}")
    if not problems:
        print(f"{who}: outputs match ({args.runs} runs)", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
