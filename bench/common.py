#!/usr/bin/env python3
"""The benchmark's definitions that need no torch: which models, how they
are generated and compiled, their FLOP counts, the statistics, the manifest
that ties a compiled model.so to the weights it was compiled with.

Used by prepare.sh (on the compile machine) and run.py (on the GPU machine):

    common.py models-args NAME      models.py arguments (one per line)
    common.py compile-args NAME [PRECISION]
                                    mte-compile options (one per line) of
                                    NAME.so (bf16) or NAME.fp8.so (fp8)
    common.py record NAME DIR       add NAME's .data size and CRC32 to
                                    DIR/manifest.json
    common.py flops NAME            the FLOP count, as JSON
"""

import json
import os
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
# models.py sits beside this file in the carried folder, under
# test/Target/ONNX/Inputs in the repository.
for _path in (HERE, os.path.join(HERE, "..", "test", "Target", "ONNX", "Inputs")):
    if os.path.isfile(os.path.join(_path, "models.py")):
        sys.path.insert(0, os.path.abspath(_path))
        break

import models  # noqa: E402

# The benchmarked models: models.py size / family / exporter / seed, and the
# static input shape they are compiled for (mte-compile --input-shape).
BENCH_MODELS = {
    "gpt2-small": dict(size="gpt2-small", family="gpt2", exporter="dynamo",
                       seed=0, batch=8, seq=1024),
    "llama-4l": dict(size="llama-4l", family="llama", exporter="dynamo",
                     seed=0, batch=4, seq=2048),
}
# The parallel benchmark's models besides those (bench/parallel.py): all
# 32 layers of a Llama-2-7B-shaped model, and a tiny Llama whose layouts
# the host backend runs in CI.
PARALLEL_MODELS = {
    "llama-7b": dict(size="llama-7b", family="llama", exporter="dynamo",
                     seed=0, batch=4, seq=2048),
    "llama-tiny": dict(size="tiny", family="llama", exporter="dynamo",
                       seed=0, batch=4, seq=32),
}
MANIFEST = "manifest.json"


def spec(name):
    if name in BENCH_MODELS:
        return BENCH_MODELS[name]
    if name in PARALLEL_MODELS:
        return PARALLEL_MODELS[name]
    raise KeyError(f"unknown benchmark model {name!r} "
                   f"(known: {', '.join(list(BENCH_MODELS) + list(PARALLEL_MODELS))})")


def models_args(name):
    """models.py's arguments that write NAME.onnx and NAME.data (relative
    to the working directory); prepare.sh and run.py both use exactly these."""
    s = spec(name)
    return ["--size", s["size"], "--family", s["family"], "--exporter", s["exporter"],
            "--seed", str(s["seed"]), "-o", name + ".onnx",
            "--external-data", name + ".data"]


PRECISIONS = ("bf16", "fp8", "fp8-delayed", "fp8-block", "fp8-rowwise")


def library_name(name, precision="bf16"):
    """The model library prepare.sh compiles NAME to at `precision`."""
    return name + (".so" if precision == "bf16" else f".{precision}.so")


def compile_args(name, precision="bf16"):
    """mte-compile's options for NAME at `precision`: fp8 is every linear
    of at least 2^30 multiply-adds (all of the benchmark models') in FP8
    with current scaling, fp8-delayed, fp8-block and fp8-rowwise the same
    with delayed (the model's state updated by every run), block and
    rowwise scaling, the weights external as for bf16."""
    s = spec(name)
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}")
    recipe = precision.partition("-")[2]
    flags = ["--precision=" + precision.partition("-")[0]] + \
        ([f"--fp8-recipe={recipe}"] if recipe else [])
    return ["--target=cuda"] + flags + [
        "--weights=external", f"--input-shape=input_ids={s['batch']}x{s['seq']}"]


def size_config(name):
    return models.SIZES[spec(name)["size"]]


def flops(family, cfg, batch, seq, layers=None):
    """Forward FLOPs (a multiply-add = 2), analytically:
      linear     2 * tokens * (weights of every projection and MLP matrix;
                 biases, norms, activations, rope, softmax and the embedding
                 gathers are not counted; there is no LM head)
      attention  Q.K^T and P.V, each 2 * batch * heads * seq_q * seq_k *
                 head_dim: "full" counts every (query, key) pair, which is
                 what mte's two batched GEMMs execute; "causal" only the
                 seq * (seq + 1) / 2 pairs the causal mask keeps, what flash
                 attention kernels (mostly) execute.
    Returns a dict of ints; total_full / total_causal add the linear part."""
    h, d, inter = cfg.hidden, cfg.head_dim, cfg.intermediate
    heads, kv = cfg.heads, cfg.kv_heads
    layers = cfg.layers if layers is None else layers
    if family == "gpt2":
        per_layer = 3 * h * h + h * h + 2 * h * inter
    elif family == "llama":
        per_layer = h * heads * d + 2 * h * kv * d + heads * d * h + 3 * h * inter
    elif family == "bert":
        per_layer = 4 * h * h + 2 * h * inter
    else:
        raise ValueError(family)
    tokens = batch * seq
    linear = 2 * tokens * layers * per_layer
    attention_full = layers * 2 * (2 * batch * heads * seq * seq * d)
    attention_causal = layers * 2 * (2 * batch * heads * (seq * (seq + 1) // 2) * d)
    return {"linear_params": layers * per_layer, "tokens": tokens, "linear": linear,
            "attention_full": attention_full, "attention_causal": attention_causal,
            "total_full": linear + attention_full,
            "total_causal": linear + attention_causal}


def model_flops(name):
    s = spec(name)
    return flops(s["family"], size_config(name), s["batch"], s["seq"])


def percentile(values, q):
    """Linear-interpolation percentile (numpy's default), q in [0, 100]."""
    xs = sorted(values)
    if not xs:
        raise ValueError("no values")
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarize(ms):
    """Latency statistics (milliseconds) of a list of timed runs."""
    return {"runs": len(ms), "median_ms": percentile(ms, 50),
            "p10_ms": percentile(ms, 10), "p90_ms": percentile(ms, 90),
            "mean_ms": sum(ms) / len(ms), "min_ms": min(ms), "max_ms": max(ms)}


def tflops(flop_count, ms):
    return flop_count / (ms * 1e-3) / 1e12


def file_crc32(path, chunk=1 << 26):
    crc = 0
    with open(path, "rb") as f:
        while True:
            block = f.read(chunk)
            if not block:
                return crc
            crc = zlib.crc32(block, crc)


def load_manifest(directory):
    path = os.path.join(directory, MANIFEST)
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def record(name, directory):
    """Records, for run.py, what NAME.so was compiled from: the models.py and
    mte-compile arguments, and the size and CRC32 of NAME.data."""
    manifest = load_manifest(directory)
    data = os.path.join(directory, name + ".data")
    manifest[name] = {"models_args": models_args(name),
                      "compile_args": {p: compile_args(name, p) for p in PRECISIONS},
                      "data": {"file": name + ".data", "bytes": os.path.getsize(data),
                               "crc32": file_crc32(data)}}
    with open(os.path.join(directory, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return manifest[name]


def log(*parts):
    print(*parts, flush=True)


def first_line(error):
    """An exception's first line (its whole text up to 2000 characters)."""
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0] if len(text) < 2000 else text[:2000]


def generate_model(args, directory):
    """Runs models.generate with models.py's arguments `args` (models_args'
    form) in `directory`; returns (weights, path of the data file)."""
    opts = {args[i].lstrip("-").replace("-", "_"): args[i + 1] for i in range(0, len(args), 2)}
    _, weights, _ = models.generate(opts["family"], opts["exporter"],
                                    os.path.join(directory, opts["o"]), size=opts["size"],
                                    seed=int(opts["seed"]),
                                    external_data=opts["external_data"], check=False)
    return weights, os.path.join(directory, opts["external_data"])


def write_report(report, path):
    """Writes a benchmark's JSON report to `path` (its folder made)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print(f"wrote {path}", flush=True)


def main(argv):
    if len(argv) >= 2 and argv[0] == "models-args":
        print("\n".join(models_args(argv[1])))
    elif len(argv) >= 2 and argv[0] == "compile-args":
        print("\n".join(compile_args(*argv[1:3])))
    elif len(argv) == 3 and argv[0] == "record":
        entry = record(argv[1], argv[2])
        print(f"{argv[1]}: {entry['data']['file']} {entry['data']['bytes']} bytes, "
              f"crc32 {entry['data']['crc32']:08x}")
    elif len(argv) == 2 and argv[0] == "flops":
        print(json.dumps(model_flops(argv[1]), indent=1))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
