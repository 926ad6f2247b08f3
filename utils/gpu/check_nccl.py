#!/usr/bin/env python3
"""Checks, on a GPU machine, the NCCL collectives of sharded CUDA models:

1. mte_nccl_get_unique_id (through ctypes, then mte.nccl_unique_id) gives
   128 bytes, two calls different ones.
2. cuda_comm_model_1.so (test/Runtime/Inputs/cuda_comm_model.c: a grid of
   one rank whose run calls every collective on device buffers) opened as
   rank 0 of 1: its world communicator is NCCL's, and every output matches,
   bit for bit, in the eager run, the run captured into a CUDA graph and
   its replay.
3. With two GPUs or more: cuda_comm_model_2.so as two ranks, one process
   and GPU each (LOCAL_RANK), meeting through an id made here
   (mte_open_options.nccl_unique_id), then through rank 0's id sent over
   the host communicator; every rank's outputs are NCCL's sums, gathers
   and scatters, bit for bit. With one GPU: SKIP.
4. With --model: that sharded CUDA model on one rank (its grid must have
   one rank; else, with enough GPUs, on as many ranks, each checked; else
   SKIP) against --reference: |got - want| <= atol + rtol * |want| for
   every output the reference holds, three runs giving the same outputs.

Prints PASS, FAIL and SKIP lines as check.py does and exits non-zero on any
FAIL.

  check_nccl.py [--runtime libmte_runtime.so] [--fixtures DIR]
                [--model M.so --inputs IN.npz --reference REF.npz
                 [--rtol 1e-4] [--atol 1e-5]]

--runtime defaults to $MTE_RUNTIME_LIBRARY, else <repo>/build/lib's;
--fixtures (where cuda_comm_model_*.so are, the build's test/Runtime) to
the test/Runtime beside the runtime's lib directory.
"""
import argparse
import ctypes
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "test", "Runtime", "Inputs"))

import cuda_comm_model_io  # noqa: E402  (test/Runtime/Inputs)

MTE_ERROR_INVALID_ARGUMENT = 1


def report(ok, name, detail):
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)
    return 0 if ok else 1


def gpu_count():
    """The devices the driver sees (0 without one)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


def check_unique_id(runtime_path):
    """mte_nccl_get_unique_id through ctypes, and mte.nccl_unique_id."""
    lib = ctypes.CDLL(runtime_path)
    lib.mte_nccl_get_unique_id.restype = ctypes.c_int
    lib.mte_nccl_get_unique_id.argtypes = [ctypes.c_void_p]
    lib.mte_last_error.restype = ctypes.c_char_p
    first = ctypes.create_string_buffer(128)
    status = lib.mte_nccl_get_unique_id(first)
    if status != 0:
        return report(False, "mte_nccl_get_unique_id",
                      f"status {status}: {lib.mte_last_error().decode()}")
    import mte

    second = mte.nccl_unique_id()
    ok = any(first.raw) and len(second) == 128 and second != first.raw
    return report(ok, "mte_nccl_get_unique_id",
                  f"128 bytes, {first.raw[:8].hex()}..., a second call "
                  f"{'another' if second != first.raw else 'the same'}")


def run_fixture(path, rank, world_size, group, unique_id=None, comm_id=None):
    """Opens fixture `path` as `rank` of `world_size` and checks its outputs
    against NCCL's; returns the lines that say what failed."""
    import mte

    try:
        with mte.load(path, rank=rank, world_size=world_size,
                      comm_id=comm_id, nccl_unique_id=unique_id) as model:
            given = cuda_comm_model_io.inputs(group)
            return cuda_comm_model_io.check(model, given, group, 3, False)
    except mte.Error as error:
        return [f"[{error.status}] {error}"]


def spawn_ranks(world_size, arguments, extra_environment=None):
    """Runs this script's --worker mode as `world_size` processes, rank r on
    GPU r (LOCAL_RANK); returns each one's (exit status, output)."""
    processes = []
    for rank in range(world_size):
        environment = dict(os.environ, LOCAL_RANK=str(rank),
                           **(extra_environment or {}))
        environment.pop("NCCL_COMM_ID", None)
        processes.append(subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker",
             str(rank), str(world_size)] + arguments,
            env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True))
    results = []
    for process in processes:
        try:
            output, _ = process.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
            output += "\n(timed out after 300 s)"
        results.append((process.returncode, output.strip()))
    return results


def check_fixtures(fixtures, gpus):
    import mte

    failures = 0
    one = os.path.join(fixtures, "cuda_comm_model_1.so")
    if not os.path.isfile(one):
        return report(False, "cuda_comm_model_1.so", f"not in {fixtures}")
    problems = run_fixture(one, 0, 1, 1)
    failures += report(not problems, "cuda_comm_model_1.so, rank 0 of 1",
                       "; ".join(problems) or "every collective on NCCL, "
                       "eager, captured and replayed")
    two = os.path.join(fixtures, "cuda_comm_model_2.so")
    if gpus < 2:
        print(f"SKIP cuda_comm_model_2.so: 2 ranks need 2 GPUs, the driver "
              f"sees {gpus}")
        return failures
    for how, arguments, environment in [
            ("an id given to both", ["--id", mte.nccl_unique_id().hex()], {}),
            ("rank 0's id through the host communicator", [],
             {"MTE_COMM_ID": f"check-nccl-{os.getpid()}"})]:
        results = spawn_ranks(2, ["--fixture", two] + arguments, environment)
        for rank, (status, output) in enumerate(results):
            failures += report(status == 0,
                               f"cuda_comm_model_2.so, rank {rank} of 2, {how}",
                               output.splitlines()[-1] if output else
                               f"exit status {status}")
    return failures


def to_comparable(array, dtype):
    """Float values of an output or reference: bf16 bit patterns widened."""
    array = np.asarray(array)
    if dtype == "bf16" and array.dtype == np.uint16:
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array


def model_inputs(model, path):
    """The inputs in `path` (npz), bf16 ones given as floats rounded to
    their bit patterns."""
    data = np.load(path)
    inputs = {}
    for info in model.inputs:
        value = data[info.name]
        if info.dtype == "bf16" and value.dtype != np.uint16:
            bits = np.asarray(value, np.float32).view(np.uint32).astype(np.uint64)
            value = (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16)
                     .astype(np.uint16))
        inputs[info.name] = value
    return inputs


def compare_model(model, inputs_path, reference_path, rtol, atol):
    """Runs `model` three times; the lines that say what failed, and a
    summary."""
    inputs = model_inputs(model, inputs_path)
    reference = np.load(reference_path)
    runs = [model(**inputs) for _ in range(3)]
    problems = []
    for name in runs[0]:
        if any(run[name].tobytes() != runs[0][name].tobytes()
               for run in runs[1:]):
            problems.append(f"'{name}' differs between the eager, captured "
                            "and replayed runs")
    worst = 0.0
    checked = 0
    dtypes = {info.name: info.dtype for info in model.outputs}
    for name in reference.files:
        if name not in runs[0]:
            continue
        checked += 1
        got = to_comparable(runs[0][name], dtypes[name]).astype(np.float64)
        want = to_comparable(reference[name], dtypes[name]).astype(np.float64)
        if got.shape != want.shape:
            problems.append(f"'{name}' has shape {got.shape}, the reference "
                            f"{want.shape}")
            continue
        error = np.abs(got - want)
        worst = max(worst, float(error.max(initial=0.0)))
        if not np.all(error <= atol + rtol * np.abs(want)):
            problems.append(f"'{name}' is off by up to {error.max():.3e}")
    if not checked:
        problems.append("the reference holds none of its outputs")
    return problems, f"{checked} outputs within rtol {rtol:g} (max abs " \
                     f"error {worst:.2e}), 3 runs the same"


def check_model(args, gpus):
    import mte

    name = os.path.basename(args.model)
    try:
        with mte.load(args.model, rank=0, world_size=1) as model:
            if not model.grid:
                print(f"note {name} is not sharded: its collectives (if any) "
                      "do not reach NCCL", flush=True)
            problems, summary = compare_model(model, args.inputs,
                                              args.reference, args.rtol,
                                              args.atol)
            return report(not problems, f"{name}, rank 0 of 1",
                          "; ".join(problems) or summary)
    except mte.Error as error:
        match = re.search(r"was compiled for (\d+) ranks", str(error))
        if error.status != MTE_ERROR_INVALID_ARGUMENT or not match:
            return report(False, f"{name}, rank 0 of 1", str(error))
        ranks = int(match.group(1))
    if gpus < ranks:
        print(f"SKIP {name}: it runs as {ranks} ranks, the driver sees {gpus} "
              "GPU(s)")
        return 0
    results = spawn_ranks(ranks, [
        "--model", args.model, "--inputs", args.inputs, "--reference",
        args.reference, "--rtol", str(args.rtol), "--atol", str(args.atol),
        "--id", mte.nccl_unique_id().hex()])
    failures = 0
    for rank, (status, output) in enumerate(results):
        failures += report(status == 0, f"{name}, rank {rank} of {ranks}",
                           output.splitlines()[-1] if output else
                           f"exit status {status}")
    return failures


def worker(args):
    """One rank of spawn_ranks: prints one line, exits 1 on a failure."""
    rank, world_size = args.worker
    unique_id = bytes.fromhex(args.id) if args.id else None
    if args.fixture:
        problems = run_fixture(args.fixture, rank, world_size, world_size,
                               unique_id)
        print("; ".join(problems) or "outputs match NCCL's, 3 runs")
        return 1 if problems else 0
    import mte

    try:
        with mte.load(args.model, rank=rank, world_size=world_size,
                      nccl_unique_id=unique_id) as model:
            problems, summary = compare_model(model, args.inputs,
                                              args.reference, args.rtol,
                                              args.atol)
    except mte.Error as error:
        problems = [f"[{error.status}] {error}"]
    print("; ".join(problems) or summary)
    return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(
        description="NCCL collectives of sharded CUDA models on this GPU "
                    "machine")
    parser.add_argument("--runtime")
    parser.add_argument("--fixtures")
    parser.add_argument("--model")
    parser.add_argument("--inputs")
    parser.add_argument("--reference")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-5)
    # Internal: one rank of a multi-GPU check.
    parser.add_argument("--worker", type=int, nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--fixture", help=argparse.SUPPRESS)
    parser.add_argument("--id", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model and not (args.inputs and args.reference):
        parser.error("--model needs --inputs and --reference")
    runtime = (args.runtime or os.environ.get("MTE_RUNTIME_LIBRARY")
               or os.path.join(REPO, "build", "lib", "libmte_runtime.so"))
    runtime = os.path.abspath(runtime)
    os.environ["MTE_RUNTIME_LIBRARY"] = runtime
    if args.worker:
        return worker(args)
    gpus = gpu_count()
    if not gpus:
        print("FAIL no GPU: the CUDA driver sees none")
        return 1
    fixtures = args.fixtures or os.path.join(
        os.path.dirname(os.path.dirname(runtime)), "test", "Runtime")
    failures = check_unique_id(runtime)
    failures += check_fixtures(fixtures, gpus)
    if args.model:
        failures += check_model(args, gpus)
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
