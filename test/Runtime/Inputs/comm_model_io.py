"""Inputs for comm_model_*.so and the outputs numpy expects of its ranks.

  comm_model_io.py write DIR G [SEED]     random x [G, 3000], h (bf16 values
                                          and a NaN), f, d, ids, k as .npy,
                                          fresh ones unless SEED is given
  comm_model_io.py check IN OUT GRID AXES OUT holds what rank 0 computes for
                                          the grid GRID ("2,2") and the grid
                                          axes mask AXES on IN's inputs
  comm_model_io.py ranks MODEL GRID AXES IN
                                          runs every rank of MODEL in a
                                          process of its own through the mte
                                          package and checks each one's
                                          outputs

The model (Inputs/comm_model.c) reduces in rank order, f16 and bf16 in f32
rounded once, so the expected outputs are computed the same way here and
compared bit for bit.
"""

import os
import subprocess
import sys

import numpy as np

N = 3000
INPUTS = ("x", "h", "f", "d", "ids", "k")


def round_to_bf16(values):
    """float32 values rounded to the nearest bf16, ties to even (NaN stays)."""
    values = np.asarray(values, np.float32)
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    result = (rounded & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(values), np.float32(np.nan), result)


def write(directory, group, seed):
    rng = np.random.default_rng(seed)
    h = round_to_bf16(rng.uniform(-8, 8, N))
    h[5] = np.nan
    arrays = {
        "x": rng.uniform(-4, 4, (group, N)).astype(np.float32),
        "h": h,
        "f": rng.uniform(-30, 30, N).astype(np.float16),
        "d": rng.uniform(-1e6, 1e6, N),
        "ids": rng.integers(-10**6, 10**6, N, dtype=np.int64),
        "k": rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32),
    }
    os.makedirs(directory, exist_ok=True)
    for name, array in arrays.items():
        np.save(os.path.join(directory, name + ".npy"), array)


def read_inputs(directory):
    return {name: np.load(os.path.join(directory, name + ".npy")) for name in INPUTS}


def group_of(grid, axes, rank):
    """The ranks of `rank`'s group (by linear index) and its index there."""
    size = int(np.prod(grid))
    mine = np.unravel_index(rank, grid)
    members = [
        other for other in range(size)
        if all((axes >> axis) & 1 or np.unravel_index(other, grid)[axis] == mine[axis]
               for axis in range(len(grid)))
    ]
    return members, members.index(rank)


def reduce_in_order(arrays, combine):
    result = arrays[0]
    for array in arrays[1:]:
        result = combine(result, array)
    return result


def expected(inputs, grid, axes, rank):
    """{output name: array} of rank `rank`; bf16 outputs as float32 values."""
    members, index = group_of(grid, axes, rank)

    def rotated(name, member):  # rot(v)[i] = v[(i + member) % N]
        return np.roll(inputs[name], -member)

    scaled = [inputs["x"] * np.float32(member + 1) for member in members]
    total = reduce_in_order(scaled, np.add)
    h = [rotated("h", member) for member in members]
    f = [rotated("f", member).astype(np.float32) for member in members]
    return {
        "rank": np.array(rank, np.int64),
        "sum": total,
        "gathered": np.stack([scaled[k][k] for k in range(len(members))]),
        "scattered": total[index],
        "max_bf16": round_to_bf16(reduce_in_order(h, np.maximum)),
        "sum_bf16": round_to_bf16(reduce_in_order(h, np.add)),
        "sum_f16": reduce_in_order(f, np.add).astype(np.float16),
        "min_f64": reduce_in_order([rotated("d", m) for m in members], np.minimum),
        "sum_i64": reduce_in_order(
            [inputs["ids"] * (member + 1) for member in members], np.add),
        "max_i32": reduce_in_order([rotated("k", m) for m in members], np.maximum),
    }


def compare(outputs, wanted, what):
    for name, want in wanted.items():
        got = outputs[name]
        assert got.dtype == want.dtype, (what, name, got.dtype, want.dtype)
        assert got.shape == want.shape, (what, name, got.shape, want.shape)
        assert np.array_equal(got, want, equal_nan=True), (what, name, got, want)


def parse_grid(text):
    return tuple(int(extent) for extent in text.split(","))


def check(inputs, outputs, grid, axes):
    files = {name: np.load(os.path.join(outputs, name + ".npy"))
             for name in expected(read_inputs(inputs), grid, axes, 0)}
    compare(files, expected(read_inputs(inputs), grid, axes, 0), "rank 0")
    print("outputs match")


def run_rank(model, grid, axes, inputs, rank, comm_id):
    """One rank, in a process of its own: its outputs through the package."""
    import mte

    size = int(np.prod(grid))
    arrays = read_inputs(inputs)
    with mte.load(model, rank=rank, world_size=size, comm_id=comm_id) as loaded:
        assert (loaded.rank, loaded.world_size, loaded.grid) == (rank, size, grid), (
            loaded.rank, loaded.world_size, loaded.grid)
        feeds = dict(arrays)
        feeds["h"] = (round_to_bf16(arrays["h"]).view(np.uint32) >> 16).astype(np.uint16)
        outputs = loaded(**feeds)
    # bf16 outputs come back as bit patterns.
    for name in ("max_bf16", "sum_bf16"):
        outputs[name] = (outputs[name].astype(np.uint32) << 16).view(np.float32)
    compare(outputs, expected(arrays, grid, axes, rank), f"rank {rank}")


def ranks(model, grid, axes, inputs):
    size = int(np.prod(grid))
    comm_id = f"comm-model-io-{os.getpid()}"
    processes = [
        subprocess.Popen([sys.executable, __file__, "rank", model, ",".join(map(str, grid)),
                          str(axes), inputs, str(rank), comm_id])
        for rank in range(size)
    ]
    for rank, process in enumerate(processes):
        assert process.wait(timeout=120) == 0, f"rank {rank} failed"
        print(f"rank {rank}: outputs match")


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "write":
        write(arguments[0], int(arguments[1]),
              int(arguments[2]) if len(arguments) > 2 else None)
    elif command == "check":
        check(arguments[0], arguments[1], parse_grid(arguments[2]), int(arguments[3]))
    elif command == "ranks":
        ranks(arguments[0], parse_grid(arguments[1]), int(arguments[2]), arguments[3])
    else:
        run_rank(arguments[0], parse_grid(arguments[1]), int(arguments[2]), arguments[3],
                 int(arguments[4]), arguments[5])
