#!/usr/bin/env python3
"""The multi-GPU benchmark of issue 17: a model's parallel layouts (tensor
parallelism at 1, 2, 4 and 8 ranks, with and without sequence parallelism,
pipeline stages), each rank a process, against the unsharded model on one
GPU; the planner's prediction (mte-compile --plan-parallel) beside each
measured layout; the bus bandwidth of the collectives inside mte's forward
against torch.distributed's of the same sizes. See docs/performance.md.

On the compile machine (make bench-parallel-artifacts):

    parallel.py build DIR [--compile mte-compile] [--runtime LIBDIR]
                          [--models llama-4l] [--target cuda|host]
                          [--max-world 8]

generates each model (models.py, external weights), compiles one model.so
per layout, records the planner's prediction for it, each data file's size
and CRC32 in DIR/parallel.json, and (for CUDA) deletes the data and copies
in the runtime, the mte package and the scripts, so that DIR alone is
carried. On the GPU machine (make bench-parallel):

    cd DIR && LD_LIBRARY_PATH=. python3 parallel.py run [--out R.json]
              [--gpus N] [--iters 20] [--warmup 5] [--input-sets 2]

regenerates the data (checked against the recorded CRC32), then runs every
layout that fits the machine's GPUs: one process per rank (this script's
`worker`), meeting in torch.distributed's NCCL group, which mte.load
joins. Per layout:

* latency: each rank times --iters forwards between CUDA events on its
  stream after --warmup (the ranks meet in every collective, so they run
  in step); the median over the input sets, the slowest rank's;
* speed-up: the unsharded model's median over the layout's;
* outputs: rank 0's first output per input set against the unsharded
  model's, relative RMS, within --tol (bf16: 2e-2; FP8: 5e-2; f32: 1e-5);
* collectives: torch.profiler (CUPTI sees the kernels of mte's CUDA graph)
  on rank 0 over --profile-runs forwards: the NCCL kernels' time as a
  fraction of the forward, and, per kind of collective, its bytes over the
  kernels' mean duration as bus bandwidth (nccl-tests' definition:
  all-reduce 2(n-1)/n, reduce-scatter and all-gather (n-1)/n of the
  algorithm bandwidth). A kernel's time includes waiting for the slowest
  rank, so this is what the forward sees, not the link's peak;
* torch.distributed: all_reduce, reduce_scatter_tensor and
  all_gather_into_tensor of the same bf16 sizes, alone, between CUDA
  events (the peer number, as nccl-tests would measure it).

With --target=host the same layouts run on the host backend (ranks meet in
shared memory; perf_counter latencies, no profile): what CI checks of this
script (test/Integration/bench-parallel.test).

Exit status: 0 every layout run agreed with the unsharded model; 1 one did
not, or a rank failed; 3 nothing could run.
"""

import argparse
import collections
import contextlib
import glob
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
for _path in (os.path.join(HERE, "..", "python"), HERE):
    if os.path.isdir(_path):
        sys.path.insert(0, os.path.abspath(_path))

import common  # noqa: E402  (also puts models.py on the path)
import models  # noqa: E402

MANIFEST = "parallel.json"
GRACE = 20.0    # seconds the other ranks get after one failed

# One layout: `tp` tensor-parallel ranks (1: the unsharded model), with
# sequence parallelism when `sp`, in `pp` pipeline stages of `micro`
# micro-batches.
Layout = collections.namedtuple("Layout", "model precision tp sp pp micro")

# Per model: the precisions and layouts issue 17 asks for. Llama-4l and
# the tiny Llama: every tensor-parallel size, with and without --sp;
# Llama-2-7B's shape: one GPU, eight (with and without --sp), and two
# stages of four (four micro-batches of one sequence: GPipe's latency is
# the stages' sum plus three of the slowest's quarters).
TP_SIZES = (1, 2, 4, 8)
PRECISIONS = {"llama-4l": ("bf16", "fp8-delayed"),
              "llama-7b": ("bf16",),
              "llama-tiny": ("fp32", "bf16", "fp8-delayed")}
FIXED_LAYOUTS = {"llama-7b": ((1, False, 1, 1), (8, False, 1, 1), (8, True, 1, 1),
                              (4, False, 2, 4))}
# The output's largest relative RMS distance from the unsharded model's:
# a bf16 rank rounds its partial sums before they are added (and Llama
# amplifies rounding about sevenfold); an FP8 rank's moved roundings move
# some E4M3 codes too (host-fp8-tensor-parallel.test: up to 2.2e-2).
TOLERANCE = {"fp32": 1e-5, "bf16": 2e-2, "fp8": 5e-2}


log = common.log


def layouts(model, max_world):
    """The layouts of `model` with at most `max_world` ranks, the unsharded
    one of each precision first (the others compare with it)."""
    out = []
    for precision in PRECISIONS[model]:
        if model in FIXED_LAYOUTS:
            out += [l for l in (Layout(model, precision, *f) for f in FIXED_LAYOUTS[model])
                    if world(l) <= max_world]
            continue
        for tp in TP_SIZES:
            if tp > max_world:
                continue
            out.append(Layout(model, precision, tp, False, 1, 1))
            if tp > 1:
                out.append(Layout(model, precision, tp, True, 1, 1))
    return out


def world(layout):
    return layout.tp * layout.pp


def library(layout):
    name = f"{layout.model}.{layout.precision}.tp{layout.tp}"
    if layout.sp:
        name += ".sp"
    if layout.pp > 1:
        name += f".pp{layout.pp}.mb{layout.micro}"
    return name + ".so"


def describe(layout):
    text = "unsharded" if world(layout) == 1 else f"--tp={layout.tp}"
    if layout.sp:
        text += " --sp"
    if layout.pp > 1:
        text += f" --pp={layout.pp} --micro-batches={layout.micro}"
    return text


def precision_flags(layout):
    base, _, recipe = layout.precision.partition("-")
    flags = [f"--precision={base}"]
    if recipe:
        flags.append(f"--fp8-recipe={recipe}")
    if base == "fp8" and common.spec(layout.model)["size"] == "tiny":
        flags.append("--fp8-min-macs=0")    # the tiny GEMMs in FP8 too
    return flags


def compile_args(layout, target):
    s = common.spec(layout.model)
    args = [f"--target={target}"] + precision_flags(layout)
    if target == "cuda":
        args.append("--weights=external")
    args.append(f"--input-shape=input_ids={s['batch']}x{s['seq']}")
    if world(layout) > 1:
        args.append(f"--tp={layout.tp}")
        if layout.sp:
            args.append("--sp")
        if layout.pp > 1:
            args += [f"--pp={layout.pp}", f"--micro-batches={layout.micro}"]
    return args


# ------------------------------------------------------------ the planner

PLAN_ROW = re.compile(r"^\s*\*?\s+(\d+)\s+(sp|-)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+"
                      r"([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")


def parse_plan(text):
    """The rows of mte-compile --plan-parallel's table, as dicts."""
    rows = []
    for line in text.splitlines():
        m = PLAN_ROW.match(line)
        if m:
            tp, sp, pp, dp, micro = m.groups()[:5]
            latency, seqs, comm, weights, acts = map(float, m.groups()[5:])
            rows.append({"tp": int(tp), "sp": sp == "sp", "pp": int(pp), "dp": int(dp),
                         "micro": int(micro), "latency_ms": latency, "seq_per_s": seqs,
                         "comm_percent": comm, "weights_gib": weights,
                         "activations_gib": acts})
    return rows


def predict(compiler, onnx_path, layout):
    """The planner's row for `layout` (planned for its own GPU count), or
    None when it does not list it."""
    s = common.spec(layout.model)
    cmd = [compiler, onnx_path, f"--input-shape=input_ids={s['batch']}x{s['seq']}",
           "--plan-parallel", f"--gpus={world(layout)}"] + precision_flags(layout)
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    for row in parse_plan(text):
        if (row["tp"], row["sp"] and layout.tp > 1, row["pp"], row["dp"], row["micro"]) == \
                (layout.tp, layout.sp, layout.pp, 1, layout.micro if layout.pp > 1 else 1):
            return row
    return None


# ------------------------------------------------------------------ build

def build(args):
    os.makedirs(args.dir, exist_ok=True)
    for stale in glob.glob(os.path.join(args.dir, "*.so")) + \
            glob.glob(os.path.join(args.dir, MANIFEST)):
        os.remove(stale)                # a layout left from an earlier build
    manifest = {"target": args.target, "models": {}, "layouts": []}
    for name in args.models:
        start = time.perf_counter()
        _, data = common.generate_model(common.models_args(name), args.dir)
        log(f"== {name}: generated in {time.perf_counter() - start:.1f} s")
        manifest["models"][name] = {
            "models_args": common.models_args(name), "spec": common.spec(name),
            "data": {"file": os.path.basename(data), "bytes": os.path.getsize(data),
                     "crc32": common.file_crc32(data)}}
        onnx_path = os.path.join(args.dir, name + ".onnx")
        for layout in layouts(name, args.max_world):
            lib = library(layout)
            cargs = compile_args(layout, args.target)
            start = time.perf_counter()
            subprocess.run([args.compile, onnx_path, "-o", os.path.join(args.dir, lib)] + cargs,
                           check=True)
            seconds = time.perf_counter() - start
            plan = predict(args.compile, onnx_path, layout)
            manifest["layouts"].append({"layout": layout._asdict(), "library": lib,
                                        "compile_args": cargs, "world": world(layout),
                                        "predicted": plan})
            log(f"built {lib} ({describe(layout)}) in {seconds:.1f} s; predicted "
                + (f"{plan['latency_ms']:.3f} ms, comm {plan['comm_percent']:.1f} %"
                   if plan else "nothing (not in the planner's table)"))
        if args.target == "cuda":
            os.remove(data)             # regenerated, bit for bit, by run
    with open(os.path.join(args.dir, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    if args.runtime:
        for lib in ("libmte_runtime.so", "libmte_runtime.so.0"):
            shutil.copy(os.path.realpath(os.path.join(args.runtime, lib)),
                        os.path.join(args.dir, lib))
        package = os.path.join(args.dir, "mte")
        os.makedirs(package, exist_ok=True)
        for source in glob.glob(os.path.join(HERE, "..", "python", "mte", "*.py")):
            shutil.copy(source, package)
        for source in (__file__, os.path.join(HERE, "common.py"), models.__file__):
            shutil.copy(source, args.dir)
    size = sum(os.path.getsize(os.path.join(root, f))
               for root, _, files in os.walk(args.dir) for f in files)
    log(f"== {args.dir}: {size // 1024} KiB")
    return 0


# ------------------------------------------------------------------- run

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def regenerate(manifest, directory, names):
    """Regenerates the data file of each model in `names` unless it is there
    with the recorded size and CRC32; returns {model: problem or None}."""
    problems = {}
    for name in names:
        entry = manifest["models"][name]
        data = os.path.join(directory, entry["data"]["file"])
        want = (entry["data"]["bytes"], entry["data"]["crc32"])
        got = None
        if os.path.exists(data) and os.path.getsize(data) == want[0]:
            got = (want[0], common.file_crc32(data))
        if got != want:             # missing or other bytes: generate again
            start = time.perf_counter()
            common.generate_model(entry["models_args"], directory)
            log(f"regenerated {name} in {time.perf_counter() - start:.1f} s")
            got = (os.path.getsize(data), common.file_crc32(data))
        problems[name] = None if got == want else (
            f"the regenerated {entry['data']['file']} ({got[0]} bytes, crc32 {got[1]:08x}) "
            f"differs from the one the layouts were compiled with ({want[0]} bytes, "
            f"crc32 {want[1]:08x})")
    return problems


def tolerance(precision):
    return TOLERANCE[precision.partition("-")[0]]


def rel_rms(got, want):
    import numpy as np
    got, want = got.astype(np.float64), want.astype(np.float64)
    if not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300))


def run_layout(args, entry, work):
    """Starts the layout's ranks and collects their results; returns
    (rank 0's result, problem or None)."""
    port = free_port()
    ranks = entry["world"]
    procs, logs = [], []
    for rank in range(ranks):
        cmd = [sys.executable, os.path.abspath(__file__), "worker", "--dir", args.dir,
               "--library", entry["library"], "--rank", str(rank), "--world", str(ranks),
               "--port", str(port), "--work", work, "--iters", str(args.iters),
               "--warmup", str(args.warmup), "--profile-runs", str(args.profile_runs),
               "--backend", args.backend]
        logs.append(os.path.join(work, f"rank{rank}.log"))
        with open(logs[-1], "w") as log_file:
            procs.append(subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT))
    # A rank that fails leaves the others waiting in a collective: they get
    # GRACE seconds to finish, then are stopped.
    deadline = time.monotonic() + args.timeout
    failed = []
    while any(p.poll() is None for p in procs):
        if time.monotonic() > deadline:
            failed.append(f"the ranks ran past {args.timeout:g} s")
            break
        bad = [r for r, p in enumerate(procs) if p.poll() not in (None, 0)]
        if bad:
            failed.append(f"rank {bad[0]} exited with status {procs[bad[0]].returncode}")
            deadline = min(deadline, time.monotonic() + GRACE)
            for p in procs:
                if p.poll() is None:
                    try:
                        p.wait(timeout=max(0.1, deadline - time.monotonic()))
                    except subprocess.TimeoutExpired:
                        pass
            break
        time.sleep(0.2)
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()
    for rank, p in enumerate(procs):
        if p.returncode != 0 and not failed:
            failed.append(f"rank {rank} exited with status {p.returncode}")
    results = []
    for rank in range(ranks):
        path = os.path.join(work, f"rank{rank}.json")
        if os.path.exists(path):
            with open(path) as f:
                results.append(json.load(f))
            os.remove(path)
    if failed or len(results) != ranks:
        tail = []
        for rank, path in enumerate(logs):
            with open(path, errors="replace") as f:
                tail += [f"  rank {rank}: {line}" for line in f.read().splitlines()[-8:]]
        return None, "\n".join([(failed or ["a rank wrote no result"])[0]] + tail)
    summary = results[0]
    # The slowest rank's median: the ranks meet in each collective, so the
    # forward ends when the last one does.
    summary["median_ms"] = max(r["median_ms"] for r in results)
    summary["rank_medians_ms"] = [r["median_ms"] for r in results]
    return summary, None


# NVLink multicast stays off in every rank (NCCL, PyTorch, NVSHMEM): on a
# shared machine a program that uses it can take the GPUs out of service.
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                 "NVSHMEM_DISABLE_NVLS": "1"}


def nccl_library():
    """The libnccl the ranks' torch uses (PyTorch's nvidia-nccl wheel is not
    on the loader's path), for mte's runtime to load the same one."""
    try:
        import nvidia.nccl
        found = glob.glob(os.path.join(nvidia.nccl.__path__[0], "lib", "libnccl.so*"))
        if found:
            return found[0]
    except ImportError:
        pass
    return None


def nccl_version(torch):
    """torch's NCCL version: a tuple in recent releases, an int before."""
    version = torch.cuda.nccl.version()
    return ".".join(map(str, version)) if isinstance(version, tuple) else str(version)


def run(args):
    import numpy as np
    with open(os.path.join(args.dir, MANIFEST)) as f:
        manifest = json.load(f)
    args.backend = manifest["target"]
    library_env = os.path.join(args.dir, "libmte_runtime.so")
    if "MTE_RUNTIME_LIBRARY" not in os.environ and os.path.exists(library_env):
        os.environ["MTE_RUNTIME_LIBRARY"] = library_env
    for key, value in MULTICAST_OFF.items():
        os.environ.setdefault(key, value)
    if args.backend == "cuda":
        try:
            import torch
        except ImportError:
            log("parallel.py run needs PyTorch with CUDA for a CUDA build")
            return 3
        if "MTE_NCCL_LIBRARY" not in os.environ and nccl_library():
            os.environ["MTE_NCCL_LIBRARY"] = nccl_library()
        gpus = torch.cuda.device_count() if args.gpus is None else args.gpus
        environment = {"torch": torch.__version__, "cuda": torch.version.cuda,
                       "gpus": torch.cuda.device_count(),
                       "gpu": torch.cuda.get_device_name(0) if gpus else None,
                       "nccl": nccl_version(torch) if gpus else None}
    else:
        gpus = args.gpus or 8
        environment = {"host": True}
    environment.update({k: os.environ[k] for k in sorted(os.environ)
                        if k.startswith("NCCL_") or k in MULTICAST_OFF
                        or k == "MTE_NCCL_LIBRARY"})
    log(json.dumps(environment))
    if gpus < 1:
        log("parallel.py run: no GPU")
        return 3
    selected = [e for e in manifest["layouts"]
                if not args.only or any(p in e["library"] for p in args.only)]
    needed = sorted({e["layout"]["model"] for e in selected if e["world"] <= gpus})
    problems = regenerate(manifest, args.dir, needed)
    work = tempfile.mkdtemp(prefix="parallel-", dir=args.dir)
    for name in needed:
        s = manifest["models"][name]["spec"]
        cfg = models.SIZES[s["size"]]
        for k in range(args.input_sets):
            rng = np.random.default_rng(args.input_seed + k)
            ids = rng.integers(0, cfg.vocab, (s["batch"], s["seq"]), dtype=np.int64)
            np.save(os.path.join(work, f"{name}.ids{k}.npy"), ids)
    report = {"environment": environment, "settings": {
        k: v for k, v in vars(args).items() if k not in ("out", "command")},
        "layouts": []}
    baselines = {}
    status = 0
    for entry in selected:
        layout = Layout(**entry["layout"])
        row = {"library": entry["library"], "layout": entry["layout"],
               "describe": describe(layout), "world": entry["world"],
               "predicted": entry["predicted"]}
        report["layouts"].append(row)
        if problems.get(layout.model):
            row["error"] = problems[layout.model]
        elif entry["world"] > gpus:
            row["skipped"] = f"needs {entry['world']} GPUs; this machine has {gpus}"
            log(f"SKIP {entry['library']}: {row['skipped']}")
            continue
        else:
            start = time.perf_counter()
            summary, problem = run_layout(args, entry, work)
            row["seconds"] = time.perf_counter() - start
            if problem:
                row["error"] = problem
            else:
                row.update(summary)
        if "error" in row:
            status = 1
            log(f"FAIL {entry['library']}: {row['error']}")
            continue
        key = (layout.model, layout.precision)
        outs = [np.load(os.path.join(work, f"{entry['library']}.out{k}.npy"))
                for k in range(args.input_sets)]
        if entry["world"] == 1:
            baselines[key] = (row, outs)
        base = baselines.get(key)
        if base:
            row["speedup"] = base[0]["median_ms"] / row["median_ms"]
            row["rel_rms_vs_unsharded"] = max(rel_rms(o, b) for o, b in zip(outs, base[1]))
            row["tol"] = tolerance(layout.precision)
            row["passed"] = row["rel_rms_vs_unsharded"] <= row["tol"]
            if base[0].get("predicted") and row.get("predicted"):
                row["predicted_speedup"] = (base[0]["predicted"]["latency_ms"]
                                            / row["predicted"]["latency_ms"])
            if not row["passed"]:
                status = 1
        log(format_row(row))
    shutil.rmtree(work, ignore_errors=True)
    if not args.keep_data and args.backend == "cuda":
        for name in needed:
            with contextlib.suppress(OSError):
                os.remove(os.path.join(args.dir, manifest["models"][name]["data"]["file"]))
    log("\n" + table(report["layouts"]))
    if not any("median_ms" in r for r in report["layouts"]):
        status = 3
    report["exit_status"] = status
    if args.out:
        common.write_report(report, args.out)
    return status


def format_row(row):
    verdict = "PASS" if row.get("passed", True) else "FAIL"
    text = (f"{verdict} {row['library']} ({row['describe']}): median "
            f"{row['median_ms']:.3f} ms")
    if "speedup" in row:
        text += (f", {row['speedup']:.2f}x the unsharded model, output "
                 f"{row['rel_rms_vs_unsharded']:.2e} from its (tol {row['tol']:g})")
    if row.get("collective_fraction") is not None:
        text += f", collectives {100 * row['collective_fraction']:.1f} % of the forward"
    return text


def table(rows):
    lines = ["layout                         ranks  median ms  speed-up  pred ms  "
             "pred x  coll %  pred %  vs 1 GPU   verdict"]
    for r in rows:
        name = r["library"][:-3]
        if "median_ms" not in r:
            lines.append(f"{name:30s} {r['world']:5d}  {'skipped' if 'skipped' in r else 'error'}: "
                         f"{(r.get('skipped') or r.get('error', '')).splitlines()[0]}")
            continue
        p = r.get("predicted") or {}
        frac = r.get("collective_fraction")
        lines.append(
            f"{name:30s} {r['world']:5d} {r['median_ms']:10.3f} "
            f"{r.get('speedup', 1.0):8.2f}x {p.get('latency_ms', float('nan')):8.3f} "
            f"{r.get('predicted_speedup', float('nan')):6.2f}x "
            f"{'' if frac is None else f'{100 * frac:6.1f}':>6s} "
            f"{p.get('comm_percent', float('nan')):7.1f} "
            f"{r.get('rel_rms_vs_unsharded', 0.0):9.2e}  "
            f"{'PASS' if r.get('passed', True) else 'FAIL'}")
    bus = [(r["library"][:-3], c) for r in rows for c in r.get("collectives", [])
           if c.get("bytes")]
    if bus:
        lines.append("")
        lines.append("collective bus bandwidth, GB/s (nccl-tests' busbw): inside mte's "
                     "forward (kernel time, waits included) vs torch.distributed alone")
        lines.append("layout                         collective       MiB  ranks  "
                     "mte fwd  torch  calls/fwd")
        for name, c in bus:
            mte_bw = c.get("mte_busbw_gbs")
            lines.append(f"{name:30s} {c['kind']:14s} {c['bytes'] / 2**20:6.1f} {c['ranks']:6d} "
                         f"{'' if mte_bw is None else f'{mte_bw:7.1f}':>7s} "
                         f"{c.get('torch_busbw_gbs', float('nan')):6.1f} "
                         f"{c.get('calls_per_forward', 0):9.1f}")
    return "\n".join(lines)


# ---------------------------------------------------------------- workers

BUS_FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n,
              "reduce_scatter": lambda n: (n - 1) / n,
              "all_gather": lambda n: (n - 1) / n}
KERNEL_KIND = (("AllReduce", "all_reduce"), ("ReduceScatter", "reduce_scatter"),
               ("AllGather", "all_gather"))


def activation_bytes(layout, cfg):
    """The bytes of one block output (batch x seq x hidden), in the type
    the collectives carry (bf16 unless the model computes in f32)."""
    s = common.spec(layout.model)
    width = 4 if layout.precision == "fp32" else 2
    return s["batch"] * s["seq"] * cfg.hidden * width


def worker(args):
    import numpy as np
    import mte
    with open(os.path.join(args.dir, MANIFEST)) as f:
        manifest = json.load(f)
    entry = next(e for e in manifest["layouts"] if e["library"] == args.library)
    layout = Layout(**entry["layout"])
    cfg = models.SIZES[common.spec(layout.model)["size"]]
    path = os.path.join(args.dir, args.library)
    ids_sets = []
    while os.path.exists(path_k := os.path.join(args.work,
                                                f"{layout.model}.ids{len(ids_sets)}.npy")):
        ids_sets.append(np.load(path_k))
    result = {"rank": args.rank}
    if args.backend == "host":
        model = (mte.load(path) if args.world == 1 else
                 mte.load(path, rank=args.rank, world_size=args.world,
                          comm_id=f"parallel-{args.port}"))
        name = model.outputs[0].name
        times = []
        for k, ids in enumerate(ids_sets):
            out = model.run({"input_ids": ids})[name]
            if args.rank == 0:
                np.save(os.path.join(args.work, f"{args.library}.out{k}.npy"), out)
            for _ in range(args.warmup):
                model.run({"input_ids": ids})
            for _ in range(args.iters):
                start = time.perf_counter()
                model.run({"input_ids": ids})
                times.append(1e3 * (time.perf_counter() - start))
        model.close()
        result["median_ms"] = statistics.median(times)
        result["times_ms"] = times
    else:
        result.update(cuda_worker(args, layout, cfg, path, ids_sets))
    with open(os.path.join(args.work, f"rank{args.rank}.json"), "w") as f:
        json.dump(result, f)
    return 0


def cuda_worker(args, layout, cfg, path, ids_sets):
    import numpy as np
    import torch
    import torch.distributed as dist
    import mte
    torch.cuda.set_device(args.rank)
    group = None
    if args.world > 1:
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{args.port}",
                                rank=args.rank, world_size=args.world,
                                device_id=torch.device("cuda", args.rank))
        group = dist.group.WORLD
    model = mte.load(path, device=args.rank, group=group)
    info = model.outputs[0]
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[info.dtype]
    stream = torch.cuda.Stream()
    out = torch.empty(tuple(info.shape), dtype=dtype, device="cuda")
    handle = stream.cuda_stream
    result = {}
    with torch.cuda.stream(stream):
        inputs = [torch.from_numpy(ids).cuda() for ids in ids_sets]
        stream.synchronize()

        def forward(ids):
            model.run_device([ids.data_ptr()], [out.data_ptr()], handle)

        times = []
        for k, ids in enumerate(inputs):
            out.fill_(float("nan"))
            forward(ids)
            stream.synchronize()
            if args.rank == 0:
                np.save(os.path.join(args.work, f"{args.library}.out{k}.npy"),
                        out.float().cpu().numpy())
            for _ in range(args.warmup):
                forward(ids)
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters)]
            for start, end in zip(starts, ends):
                start.record(stream)
                forward(ids)
                end.record(stream)
            ends[-1].synchronize()
            times += [s.elapsed_time(e) for s, e in zip(starts, ends)]
        result["median_ms"] = statistics.median(times)
        result["times_ms"] = times
        if args.profile_runs > 0:
            result.update(profile(torch, forward, inputs[0], stream, args, layout, cfg))
    if args.world > 1:
        result["torch_busbw"] = torch_collectives(torch, dist, layout, cfg, args)
        merge_bandwidths(result)
    model.close()
    if group is not None:
        dist.destroy_process_group()
    return result


def profile(torch, forward, ids, stream, args, layout, cfg):
    """Every rank runs --profile-runs forwards (they meet in collectives);
    rank 0 records them under torch.profiler."""
    stream.synchronize()
    totals = collections.defaultdict(lambda: [0.0, 0])
    activities = [torch.profiler.ProfilerActivity.CUDA]
    if args.rank == 0:
        with torch.profiler.profile(activities=activities) as prof:
            for _ in range(args.profile_runs):
                forward(ids)
            stream.synchronize()
        for event in prof.events():
            if event.device_type == torch.autograd.DeviceType.CUDA:
                totals[event.name][0] += event.device_time_total
                totals[event.name][1] += 1
    else:
        for _ in range(args.profile_runs):
            forward(ids)
        stream.synchronize()
    if args.rank != 0:
        return {}
    return summarize_kernels(totals, args.profile_runs, layout, cfg, args.world)


def summarize_kernels(totals, runs, layout, cfg, ranks):
    """From {kernel name: [total us, launches]} over `runs` forwards: the GPU
    time and NCCL time per forward, and one entry per NCCL kernel name.
    NCCL names a kernel by collective, reduction, type and protocol
    (ncclDevKernel_AllReduce_Sum_bf16_RING_LL), which sets the block
    outputs' sums apart from FP8's one-element MAX reductions of amaxes; a
    name without a collective (NCCL's "Generic" kernels) counts towards the
    fraction only."""
    gpu_us = sum(t for t, _ in totals.values()) / runs
    width_tokens = ("f32", "float") if layout.precision == "fp32" else ("bf16", "bfloat16")
    collectives = []
    nccl_us = 0.0
    for name, (t, n) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
        if "nccl" not in name.lower():
            continue
        nccl_us += t
        kind = next((k for marker, k in KERNEL_KIND if marker in name), "other")
        # NCCL's all-gather kernels name no type (they move bytes); an FP8
        # build may gather E4M3 codes, of another size.
        typed = any(token in name for token in width_tokens) or (
            kind == "all_gather" and not layout.precision.startswith("fp8"))
        block_output = kind in BUS_FACTOR and "Max" not in name and typed
        collectives.append({"kind": kind, "kernel": name[:120], "ranks": ranks,
                            "calls_per_forward": n / runs, "us_per_call": t / n,
                            "bytes": activation_bytes(layout, cfg) if block_output else None})
    return {"gpu_ms_per_forward": gpu_us / 1e3,
            "collective_ms_per_forward": nccl_us / runs / 1e3,
            "collectives": collectives}


def torch_collectives(torch, dist, layout, cfg, args):
    """torch.distributed's all-reduce, reduce-scatter and all-gather of one
    block output, each alone between CUDA events: {kind: busbw GB/s}."""
    n = args.world
    size = activation_bytes(layout, cfg)
    dtype = torch.float32 if layout.precision == "fp32" else torch.bfloat16
    elems = size // (4 if dtype == torch.float32 else 2)
    full = torch.randn(elems, device="cuda").to(dtype)
    part = torch.empty(elems // n, device="cuda", dtype=dtype)
    ops = {"all_reduce": lambda: dist.all_reduce(full),
           "reduce_scatter": lambda: dist.reduce_scatter_tensor(part, full),
           "all_gather": lambda: dist.all_gather_into_tensor(full, part)}
    bandwidth = {}
    for kind, op in ops.items():
        for _ in range(5):
            op()
        torch.cuda.synchronize()
        dist.barrier()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.iters):
            op()
        end.record()
        end.synchronize()
        seconds = start.elapsed_time(end) / 1e3 / args.iters
        bandwidth[kind] = size / seconds * BUS_FACTOR[kind](n) / 1e9
    return bandwidth


def merge_bandwidths(result):
    """Each collective of the forward with its busbw and torch's."""
    torch_bw = result.get("torch_busbw", {})
    for c in result.get("collectives", []):
        kind = c["kind"]
        if c.get("bytes") and c.get("us_per_call"):
            c["mte_busbw_gbs"] = (c["bytes"] / (c["us_per_call"] * 1e-6)
                                  * BUS_FACTOR[kind](c["ranks"]) / 1e9)
        if c.get("bytes") and kind in torch_bw:
            c["torch_busbw_gbs"] = torch_bw[kind]
    if "collective_ms_per_forward" in result:
        result["collective_fraction"] = (result["collective_ms_per_forward"]
                                         / result["median_ms"])


# -------------------------------------------------------------------- main

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="generate and compile the layouts (compile machine)")
    b.add_argument("dir")
    b.add_argument("--compile", default="mte-compile")
    b.add_argument("--runtime", help="copy libmte_runtime.so from this folder, with "
                                     "the mte package and the scripts")
    b.add_argument("--models", default="llama-4l")
    b.add_argument("--target", choices=("cuda", "host"), default="cuda")
    b.add_argument("--max-world", type=int, default=8)
    r = sub.add_parser("run", help="run every layout that fits (GPU machine)")
    r.add_argument("--dir", default=HERE)
    r.add_argument("--out")
    r.add_argument("--gpus", type=int, help="default: torch.cuda.device_count()")
    r.add_argument("--only", action="append",
                   help="run only the layouts whose library name contains this")
    r.add_argument("--iters", type=int, default=20)
    r.add_argument("--warmup", type=int, default=5)
    r.add_argument("--input-sets", type=int, default=2)
    r.add_argument("--input-seed", type=int, default=1234)
    r.add_argument("--profile-runs", type=int, default=3)
    r.add_argument("--timeout", type=float, default=600.0,
                   help="seconds a layout's ranks may take")
    r.add_argument("--keep-data", action="store_true")
    w = sub.add_parser("worker", help="one rank of a layout (started by run)")
    for flag in ("--dir", "--library", "--work", "--backend"):
        w.add_argument(flag, required=True)
    for flag in ("--rank", "--world", "--port", "--iters", "--warmup", "--profile-runs"):
        w.add_argument(flag, type=int, required=True)
    args = ap.parse_args(argv)
    if args.command == "build":
        args.models = [m for m in args.models.split(",") if m]
        for name in args.models:
            if name not in PRECISIONS:
                ap.error(f"unknown model {name!r}; known: {', '.join(PRECISIONS)}")
        args.dir = os.path.abspath(args.dir)
    if args.command == "run":
        if args.iters < 1 or args.warmup < 0 or args.input_sets < 1:
            ap.error("need --iters >= 1, --warmup >= 0, --input-sets >= 1")
        args.dir = os.path.abspath(args.dir)
    return args


def main(argv=None):
    args = parse_args(argv)
    return {"build": build, "run": run, "worker": worker}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
