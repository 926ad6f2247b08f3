#!/usr/bin/env python3
"""Builds, on the compile machine, everything the GPU check needs, so that
the GPU machine runs models without a compiler (as deployments do).

For each models.py fixture (BERT / GPT-2 / Llama, the model-zoo decoder
families, the ViT and Whisper encoders and the float16 exports, both
exporters' node patterns): the ONNX model with its
weights in an external-data file, its CUDA model.so (mte-compile
--target=cuda, weights embedded), a bf16 one reading the weights from that
file (--precision=bf16 --weights=external), the same two unfused
(--fusion=false, NAME.unfused.*), seeded inputs with the independent
float64 numpy reference output (models.py), and the host backend's outputs
(fp32 and bf16) for the same inputs; for GPT-2 and Llama also the
sharded program on one rank (--tp=1, NAME.tp1.*: its collectives NCCL's)
with the host backend's --tp=1 outputs. Also copies
libmte_runtime, and sets up broken copies of one external-weight model: a
data file that differs, and none at all.

With --node-tests, also every ONNX backend node test the host backend runs
(test/Integration/host_node_tests.py), compiled for CUDA, with its inputs
and expected outputs, under OUTDIR/node.

Usage: prepare.py MTE_COMPILE OUTDIR [--batch 2 --seq 16 --gpu sm_90a]
                  [--node-tests MTE_TRANSLATE]
Then, on the GPU machine: python3 utils/gpu/check.py OUTDIR
"""
import argparse
import concurrent.futures
import glob
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
MODELS = os.path.join(ROOT, "test", "Target", "ONNX", "Inputs", "models.py")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "test", "Integration"))
sys.path.insert(0, os.path.join(ROOT, "test", "Target", "ONNX"))
import mte  # noqa: E402

sys.path.insert(0, os.path.dirname(MODELS))
import models  # noqa: E402


def prepare_fixture(args, family, exporter, size="tiny"):
    """One models.py fixture: its ONNX model (weights in NAME.data), seeded
    inputs with the float64 reference and the host backend's outputs, and
    four CUDA models: fused and unfused (--fusion=false), each fp32 with
    embedded weights and bf16 reading NAME.data at open. size="peaked":
    models.py's peaked-attention variant, batch 4 x 128 tokens, NAME
    ending in _peaked, without the unfused bf16 model."""
    name = f"{family}_{exporter}" + ("" if size == "tiny" else f"_{size}")
    stem = os.path.join(args.outdir, name)
    batch, seq = (args.batch, args.seq) if size == "tiny" else (4, 128)
    subprocess.run([sys.executable, MODELS, "--family", family,
                    "--exporter", exporter, "--seed", str(args.seed),
                    "--size", size,
                    "-o", stem + ".onnx", "--external-data",
                    name + ".data", "--reference-out",
                    stem + ".npz", "--batch", str(batch),
                    "--seq", str(seq)], check=True)
    reference = dict(np.load(stem + ".npz"))
    inputs = {k: v for k, v in reference.items() if k != "last_hidden_state"}
    shapes = [f"--input-shape={k}={'x'.join(map(str, v.shape))}"
              for k, v in inputs.items()]
    cuda = ["--target=cuda", f"--gpu={args.gpu}"]
    # fp8: every linear in FP8 (--fp8-min-macs=0), checked against the host
    # backend's fp8 build, which equals an exact emulation of the recipe
    # (host_fp8_precision.py); fused only, as FP8 needs the linears.
    fp8 = ["--fp8-min-macs=0"]
    precisions = [("fp32", "", [], []),
                  ("bf16", ".bf16", ["--weights=external"], []),
                  ("fp8", ".fp8", [], fp8)]
    # A model exported in float16 runs as it is (--precision=fp32 converts
    # nothing), fused and unfused.
    if family in models.FP16_FAMILIES:
        precisions = precisions[:1]
    # FP8 with --weights=external: the E4M3 codes, quantized at compile
    # time, are embedded; the other parameters are read from NAME.data.
    if family in ("gpt2", "llama") and size == "tiny":
        precisions.append(("fp8", ".external.fp8", ["--weights=external"], fp8))
        # Block scaling (the MLPs' second GEMMs: K = 128), embedded and
        # external (the runtime quantizes each 128x128 block by its factor).
        block = fp8 + ["--fp8-recipe=block"]
        precisions += [("fp8", ".block.fp8", [], block),
                       ("fp8", ".external.block.fp8", ["--weights=external"],
                        block)]
    # Rowwise scaling (cuBLASLt's outer-vector scales: one per token and
    # per output channel) on every family, against the host's rowwise
    # build; external too for GPT-2 and Llama (the runtime quantizes each
    # channel by its factor).
    if size == "tiny" and family not in models.FP16_FAMILIES:
        rowwise = fp8 + ["--fp8-recipe=rowwise"]
        precisions.append(("fp8", ".rowwise.fp8", [], rowwise))
        if family in ("gpt2", "llama"):
            precisions.append(("fp8", ".external.rowwise.fp8",
                               ["--weights=external"], rowwise))
    # The sharded program on one rank (--tp=1: each collective NCCL's over
    # that rank, weights sliced at upload), fused only, against the host
    # backend's --tp=1 build (NAME.tp1[.bf16|.fp8]).
    sharded = family in ("gpt2", "llama") and size == "tiny"
    for precision, suffix, extra, both in precisions:
        if sharded and suffix in ("", ".bf16", ".fp8"):
            tp1 = f"{stem}.tp1{suffix}"
            subprocess.run([args.compile, stem + ".onnx", "-o",
                            tp1 + ".host.so", f"--precision={precision}",
                            "--tp=1"] + both + shapes, check=True)
            host = mte.load(tp1 + ".host.so")(**inputs)["last_hidden_state"]
            os.remove(tp1 + ".host.so")
            subprocess.run([args.compile, stem + ".onnx", "-o",
                            tp1 + ".cuda.so", f"--precision={precision}",
                            "--tp=1"] + cuda + extra + both + shapes,
                           check=True)
            np.savez(tp1 + ".npz", host_output=host, **reference)
            if suffix == ".bf16":
                # Sequence parallelism's program too (its reduce-scatters
                # and all-gathers, NAME.tp1.sp.bf16), data parallelism's on
                # a [1, 1] grid (the replica's input slice, the outputs'
                # all-gather: NAME.tp1.dp1.bf16), on NCCL, and the batch
                # as two micro-batches (the stages inlined: NAME.tp1.mb2).
                for infix, flags in [(".sp", ["--sp"]), (".dp1", ["--dp=1"]),
                                     (".mb2", ["--micro-batches=2"])]:
                    one = f"{stem}.tp1{infix}{suffix}"
                    subprocess.run([args.compile, stem + ".onnx", "-o",
                                    one + ".host.so",
                                    f"--precision={precision}", "--tp=1"]
                                   + flags + shapes, check=True)
                    host = mte.load(one + ".host.so")(**inputs)[
                        "last_hidden_state"]
                    os.remove(one + ".host.so")
                    subprocess.run([args.compile, stem + ".onnx", "-o",
                                    one + ".cuda.so",
                                    f"--precision={precision}", "--tp=1"]
                                   + flags + cuda + shapes, check=True)
                    np.savez(one + ".npz", host_output=host, **reference)
        host_so = f"{stem}{suffix}.host.so"
        subprocess.run([args.compile, stem + ".onnx", "-o", host_so,
                        f"--precision={precision}"] + both + shapes,
                       check=True)
        host = mte.load(host_so)(**inputs)["last_hidden_state"]
        os.remove(host_so)
        # At the peaked size the unfused bf16 graph, which rounds after
        # every primitive, is 2.4e-2 from the reference (GPT-2): the fp32
        # pair checks the fused forms there, the fused bf16 model the bound.
        unfused = (size == "tiny" or precision == "fp32") and precision != "fp8"
        for fusion, infix in [("true", ""), ("false", ".unfused")][:1 + unfused]:
            subprocess.run([args.compile, stem + ".onnx", "-o",
                            f"{stem}{infix}{suffix}.cuda.so",
                            f"--precision={precision}",
                            f"--fusion={fusion}"] + cuda + extra + both + shapes,
                           check=True)
            np.savez(f"{stem}{infix}{suffix}.npz", host_output=host,
                     **reference)
    return name


def prepare_vocab_models(args):
    """GPT-2 and Llama ending in an LM head (models.py --lm-head: logits
    out), bf16: unsharded, and the sharded program on one rank with the
    vocabulary split too (--tp=1 --tp-vocab: the masked embedding gather,
    its all-reduce and the logits' all-gather on NCCL), each against the
    host backend's build of the same flags (NAME_lmhead[.tp1].bf16)."""
    for family in ("gpt2", "llama"):
        name = f"{family}_dynamo_lmhead"
        stem = os.path.join(args.outdir, name)
        subprocess.run([sys.executable, MODELS, "--family", family,
                        "--exporter", "dynamo", "--seed", str(args.seed),
                        "--lm-head", "-o", stem + ".onnx", "--reference-out",
                        stem + ".npz", "--batch", str(args.batch),
                        "--seq", str(args.seq)], check=True)
        reference = dict(np.load(stem + ".npz"))
        inputs = {k: v for k, v in reference.items() if k != "logits"}
        shapes = [f"--input-shape={k}={'x'.join(map(str, v.shape))}"
                  for k, v in inputs.items()]
        for infix, flags in [("", []), (".tp1", ["--tp=1", "--tp-vocab"])]:
            out = f"{stem}{infix}.bf16"
            common = [args.compile, stem + ".onnx", "--precision=bf16"] + \
                flags + shapes
            subprocess.run(common + ["-o", out + ".host.so"], check=True)
            host = mte.load(out + ".host.so")(**inputs)["logits"]
            os.remove(out + ".host.so")
            subprocess.run(common + ["-o", out + ".cuda.so", "--target=cuda",
                                     f"--gpu={args.gpu}"], check=True)
            np.savez(out + ".npz", host_output=host, **reference)
        print(f"prepared {name}", flush=True)


def row_kernel_cases():
    """One-op models whose rows take the row kernels' multi-warp, block and
    ragged paths, which the fixtures' 64-wide rows never reach: (name,
    nodes, inputs {name: array}, initializers, float64 reference, opset,
    extra mte-compile flags). A name ending in .bf16 is compiled with
    --precision=bf16 and checked at that precision."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(17)
    cases = []

    def layer_norm(name, rows, width):
        x = rng.standard_normal((rows, width)).astype(np.float32) * 3 + 1
        g = (1 + 0.1 * rng.standard_normal(width)).astype(np.float32)
        b = (0.1 * rng.standard_normal(width)).astype(np.float32)
        x64 = x.astype(np.float64)
        mu = x64.mean(-1, keepdims=True)
        var = ((x64 - mu) ** 2).mean(-1, keepdims=True)
        want = (x64 - mu) / np.sqrt(var + np.float64(np.float32(1e-5))) * g + b
        node = helper.make_node("LayerNormalization", ["x", "g", "b"],
                                ["last_hidden_state"], axis=-1, epsilon=1e-5)
        cases.append((name, [node], {"x": x},
                      [numpy_helper.from_array(g, "g"), numpy_helper.from_array(b, "b")],
                      want, 17, []))

    layer_norm("rows_layer_norm_f32_1024", 64, 1024)    # a block per row
    layer_norm("rows_layer_norm_f32_1000", 33, 1000)    # ragged across threads
    layer_norm("rows_layer_norm_f32_770", 17, 770)      # 2-element vectors

    # RMSNorm in bf16 over 4096 (a block of 8-wide vectors).
    x = rng.standard_normal((32, 4096)).astype(np.float32)
    g = (1 + 0.1 * rng.standard_normal(4096)).astype(np.float32)
    x64 = x.astype(np.float64)
    want = x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + np.float64(np.float32(1e-6))) * g
    node = helper.make_node("RMSNormalization", ["x", "g"], ["last_hidden_state"],
                            axis=-1, epsilon=1e-6)
    cases.append(("rows_rms_norm_4096.bf16", [node], {"x": x},
                  [numpy_helper.from_array(g, "g")], want, 23, ["--precision=bf16"]))

    # Softmax over rows wider than a warp, with -inf and -1e9 entries
    # (never a whole row) added by a mask.
    x = rng.standard_normal((32, 2048)).astype(np.float32) * 4
    mask = np.zeros((32, 2048), np.float32)
    mask[rng.random((32, 2048)) < 0.2] = -np.inf
    mask[rng.random((32, 2048)) < 0.2] = -1e9
    mask[:, 0] = 0
    s64 = x.astype(np.float64) + mask.astype(np.float64)
    e = np.exp(s64 - s64.max(-1, keepdims=True))
    want = e / e.sum(-1, keepdims=True)
    nodes = [helper.make_node("Add", ["x", "mask"], ["s"]),
             helper.make_node("Softmax", ["s"], ["last_hidden_state"], axis=-1)]
    cases.append(("rows_masked_softmax_2048", nodes, {"x": x, "mask": mask}, [],
                  want, 17, []))
    return cases


def prepare_one_op_models(args):
    """host_conv.py's convolutions (fused and unfused) and row_kernel_cases()
    as CUDA models, each with its float64 reference and the host backend's
    output, the output named last_hidden_state so that check.py runs them
    as it runs the fixtures (and compares fused with unfused)."""
    import host_conv
    import onnx
    from onnx import TensorProto, helper

    cases = [(name, nodes, inputs, inits, want, 17, [], True)
             for name, nodes, inputs, inits, want in
             host_conv.conv_cases(output="last_hidden_state")]
    cases += [case + (False,) for case in row_kernel_cases()]
    # The FP8 MLP whose host build equals an exact emulation of the recipe.
    import host_fp8_precision
    cases.append(host_fp8_precision.gpu_case() + (False,))
    # Block and rowwise scaling (cuBLASLt's VEC128 x BLK128x128 and
    # OUTER_VEC GEMMs): the MLPs whose host builds equal an exact
    # emulation, and massive activations.
    import host_fp8_scaling
    cases += [case + (False,) for case in host_fp8_scaling.gpu_cases()]
    cases = [case + ((),) for case in cases]
    # FP8 models as other tools export them (Q/DQ, TensorRT's FP8 ops),
    # fused (FP8 cuBLASLt GEMMs with the imported scales) and unfused.
    import host_fp8_qdq
    cases += [(name + ".qdq", nodes, {"x": x}, inits, want, opset, [], True, domains)
              for name, nodes, x, inits, want, opset, domains in
              host_fp8_qdq.gemm_cases(np.random.default_rng(31), "last_hidden_state")]
    # Saturating E4M3 conversions, which cvt.rn.satfinite does on its own:
    # CUDA must give the host's values bit for bit (check.py's .exact).
    name, nodes, x, inits, want, opset, domains = host_fp8_qdq.saturation_case(
        np.random.default_rng(37), "last_hidden_state")
    cases.append((name + ".exact", nodes, {"x": x}, inits, want, opset, [],
                  False, domains))
    for name, nodes, inputs, inits, want, opset, flags, unfused, domains in cases:
        graph = helper.make_graph(
            nodes, name,
            [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape))
             for k, v in inputs.items()],
            [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                           list(want.shape))], inits)
        stem = os.path.join(args.outdir, name)
        opsets = [helper.make_opsetid("", opset)] + [
            helper.make_opsetid(domain, version) for domain, version in domains]
        onnx.save(helper.make_model(graph, opset_imports=opsets), stem + ".onnx")
        subprocess.run([args.compile, stem + ".onnx", "-o", stem + ".host.so"] + flags,
                       check=True)
        host = mte.load(stem + ".host.so")(**inputs)["last_hidden_state"]
        os.remove(stem + ".host.so")
        for fusion, infix in [("true", ""), ("false", ".unfused")][:1 + unfused]:
            subprocess.run([args.compile, stem + ".onnx", "-o", f"{stem}{infix}.cuda.so",
                            "--target=cuda", f"--gpu={args.gpu}",
                            f"--fusion={fusion}"] + flags, check=True)
            np.savez(f"{stem}{infix}.npz", last_hidden_state=want, host_output=host,
                     **inputs)
        print(f"prepared {name}", flush=True)


DELAYED_FLAGS = ["--precision=fp8", "--fp8-min-macs=0", "--fp8-recipe=delayed"]


def prepare_delayed_models(args):
    """Delayed FP8 scaling (--fp8-recipe=delayed, a history of 4): the
    two-layer MLP of host_fp8_delayed.py (also with TransformerEngine's
    1024-row history, whose maxima reduce in two levels) and every tiny
    family's dynamo fixture as
    NAME.delayed.so (not .cuda.so: each run changes the next, so check.py
    runs them as a sequence), with the steps' inputs and the host backend's
    outputs and states after each step in NAME.delayed.npz; and the Llama
    fixture calibrated at compile time (llama_calibrated). A fixture's
    later steps permute its integer inputs (token ids, masks) and scale its
    float ones (pixels, audio features) by 1/4..4, so that the amaxes, and
    the history, change from step to step."""
    import host_fp8_delayed
    rng = np.random.default_rng(41)
    mlp = os.path.join(args.outdir, "mlp_delayed.onnx")
    host_fp8_delayed.write_onnx(mlp)
    shape = host_fp8_delayed.M, host_fp8_delayed.K
    mlp_steps = [{"x": (rng.standard_normal(shape) * m).astype(np.float32)}
                 for m in [1.0, 40.0, 0.02, 0.0, 600.0, 3.0]]
    cases = [("mlp_delayed", mlp, mlp_steps, ["--amax-history=4"]),
             ("mlp_delayed_long", mlp, mlp_steps, ["--amax-history=1024"])]
    def vary(value):
        if not np.issubdtype(value.dtype, np.floating):
            return rng.permutation(value.ravel()).reshape(value.shape)
        return (value * np.float32(4.0 ** rng.uniform(-1, 1))).astype(
            value.dtype)

    families = (models.FAMILIES + models.ZOO_FAMILIES
                + models.ENCODER_FAMILIES)
    for fixture in [f + "_dynamo" for f in families]:
        stem = os.path.join(args.outdir, fixture)
        inputs = {k: v for k, v in np.load(stem + ".npz").items()
                  if k not in ("last_hidden_state", "host_output")}
        steps = [inputs] + [{k: vary(v) for k, v in inputs.items()}
                            for _ in range(4)]
        cases.append((fixture, stem + ".onnx", steps,
                      [f"--input-shape={k}={'x'.join(map(str, v.shape))}"
                       for k, v in inputs.items()] + ["--amax-history=4"]))
    # Calibrated at compile time (--calibration, three samples): the state
    # the host's calibration leaves is the CUDA model's initial state too.
    stem = os.path.join(args.outdir, "llama_dynamo")
    ids = np.load(stem + ".npz")["input_ids"]
    calibration = stem + ".calib.npz"
    np.savez(calibration, input_ids=np.stack(
        [rng.permutation(ids.ravel()).reshape(ids.shape) for _ in range(3)]))
    llama_steps = next(c[2] for c in cases if c[0] == "llama_dynamo")
    cases.append(("llama_calibrated", stem + ".onnx", llama_steps,
                  [f"--input-shape=input_ids={'x'.join(map(str, ids.shape))}",
                   "--amax-history=4", f"--calibration={calibration}"]))
    for name, onnx_path, steps, shapes in cases:
        stem = os.path.join(args.outdir, name + ".delayed")
        subprocess.run([args.compile, onnx_path, "-o", stem + ".host.so"]
                       + DELAYED_FLAGS + shapes, check=True)
        host = mte.load(stem + ".host.so")
        record = {f"state_initial_{info.name}": host.get_state(info.name)
                  for info in host.states}
        for step, feeds in enumerate(steps):
            output = next(iter(host(**feeds).values()))
            record[f"output_{step}"] = output
            for key, value in feeds.items():
                record[f"input_{step}_{key}"] = value
            for info in host.states:
                record[f"state_{step}_{info.name}"] = host.get_state(info.name)
        host.close()
        os.remove(stem + ".host.so")
        subprocess.run([args.compile, onnx_path, "-o", stem + ".so",
                        "--target=cuda", f"--gpu={args.gpu}"]
                       + DELAYED_FLAGS + shapes, check=True)
        np.savez(stem + ".npz", steps=len(steps), **record)
        print(f"prepared {name}.delayed", flush=True)


def prepare_index_check_model(args):
    """An embedding lookup of ids [2, 6] into a [50, 8] table, for CUDA,
    as gather_ids.idx.so (not a .cuda.so: check.py runs it by itself,
    with ids out of range) and its table in gather_ids.npz."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    table = np.random.default_rng(5).standard_normal((50, 8)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["y"], name="/wte/Gather")],
        "gather_ids",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6, 8])],
        [numpy_helper.from_array(table, "table")])
    stem = os.path.join(args.outdir, "gather_ids")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              stem + ".onnx")
    subprocess.run([args.compile, stem + ".onnx", "-o", stem + ".idx.so",
                    "--target=cuda", f"--gpu={args.gpu}"], check=True)
    np.savez(stem + ".npz", table=table)
    print("prepared gather_ids", flush=True)


def prepare_node_test(args, test_dir, outdir):
    """Compiles one node test for CUDA; returns (name, problem or None)."""
    import onnx
    import host_node_tests
    import import_node_tests as node_tests

    name = os.path.basename(test_dir)
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    graph_inputs = [i.name for i in model.graph.input]
    flags = node_tests.prepare(model, test_dir)
    onnx_path = os.path.join(outdir, name + ".onnx")
    onnx.save(model, onnx_path)
    result = subprocess.run([args.compile, onnx_path, "-o",
                             os.path.join(outdir, name + ".cuda.so"),
                             "--target=cuda", f"--gpu={args.gpu}"] + flags,
                            capture_output=True)
    os.remove(onnx_path)
    if result.returncode != 0:
        lines = result.stderr.decode(errors="replace").strip().splitlines()
        return name, "compile: " + (lines[-1] if lines else "failed")
    bound = {t.name for t in model.graph.initializer}
    data_dir = os.path.join(test_dir, "test_data_set_0")
    arrays = {}
    for index, input_name in enumerate(graph_inputs):
        path = os.path.join(data_dir, f"input_{index}.pb")
        if input_name in bound or not os.path.exists(path):
            continue
        arrays["input:" + input_name] = host_node_tests.load_tensor(path)[1]
    for index, output in enumerate(model.graph.output):
        path = os.path.join(data_dir, f"output_{index}.pb")
        arrays["output:" + output.name] = host_node_tests.load_tensor(path)[1]
    np.savez(os.path.join(outdir, name + ".npz"), **arrays)
    return name, None


def prepare_node_tests(args):
    import onnx
    import import_node_tests as node_tests

    outdir = os.path.join(args.outdir, "node")
    os.makedirs(outdir, exist_ok=True)
    ops = node_tests.supported_ops(args.node_tests)
    tests = []
    for model_path in sorted(glob.glob(os.path.join(node_tests.DEFAULT_DATA,
                                                    "*", "model.onnx"))):
        name = os.path.basename(os.path.dirname(model_path))
        if name in node_tests.EXPECTED_FAILURES:
            continue
        if node_tests.node_ops(onnx.load(model_path)) <= ops:
            tests.append(os.path.dirname(model_path))
    from host_node_tests import known_difference

    failed, unexpected, prepared = 0, 0, []
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for name, problem in pool.map(
                lambda t: prepare_node_test(args, t, outdir), tests):
            if not problem:
                prepared.append(name)
            elif known_difference(name, problem):
                print(f"not compiled for CUDA (known): {name}: {problem}")
                failed += 1
            else:
                print(f"FAIL not compiled for CUDA: {name}: {problem}")
                unexpected += 1
    # check.py runs exactly these: a missing model is a failure there.
    with open(os.path.join(outdir, "prepared.txt"), "w") as f:
        f.write("".join(name + "\n" for name in sorted(prepared)))
    print(f"prepared {len(prepared)} node tests ({failed} known not to "
          f"compile for CUDA, {unexpected} unexpected failures)")
    return unexpected


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("compile")
    parser.add_argument("outdir")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--gpu", default="sm_90a")
    parser.add_argument("--node-tests", metavar="MTE_TRANSLATE")
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    lib = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(args.compile))), "lib")
    # The runtime under the names the loader and check.py look for (the
    # build keeps the libraries of earlier versions too).
    for name in ["libmte_runtime.so", "libmte_runtime.so.0"]:
        shutil.copy(os.path.join(lib, name), args.outdir, follow_symlinks=True)
    # mte-run, for the compute-sanitizer run of check-gpu.
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(args.compile)),
                             "mte-run"), args.outdir)
    # Hand-written CUDA models with an activation arena (test/Runtime).
    # and the sharded ones whose collectives run on NCCL (check_nccl.py).
    for name in ["arena_model.so", "huge_arena_model.so",
                 "huge_run_alloc_model.so", "cuda_comm_model_1.so",
                 "cuda_comm_model_2.so"]:
        shutil.copy(os.path.join(os.path.dirname(lib), "test", "Runtime",
                                 name), args.outdir)
    families = (models.FAMILIES + models.ZOO_FAMILIES + models.ENCODER_FAMILIES
                + models.FP16_FAMILIES + models.CACHE_FAMILIES)
    cases = [(f, e) for f in families for e in ["torchscript", "dynamo"]]
    # Peaked attention, 128 tokens: where a wrong softmax, scale, mask or
    # rotary shows beyond the bf16 tolerance (models.py check_perturbations).
    cases += [(f, "dynamo", "peaked") for f in models.FAMILIES]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for name in pool.map(lambda c: prepare_fixture(args, *c), cases):
            print(f"prepared {name}", flush=True)
    prepare_one_op_models(args)
    prepare_vocab_models(args)
    # External weights that do not match, or are missing.
    for case in ["corrupt", "missing"]:
        os.makedirs(os.path.join(args.outdir, case), exist_ok=True)
        shutil.copy(os.path.join(args.outdir, "gpt2_dynamo.bf16.cuda.so"),
                    os.path.join(args.outdir, case, "model.so"))
    with open(os.path.join(args.outdir, "gpt2_dynamo.data"), "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0x40
    with open(os.path.join(args.outdir, "corrupt", "gpt2_dynamo.data"),
              "wb") as f:
        f.write(data)
    prepare_index_check_model(args)
    prepare_delayed_models(args)
    # A model for another architecture: opening it must fail with a message.
    subprocess.run([args.compile, os.path.join(args.outdir, "gpt2_dynamo.onnx"),
                    "-o", os.path.join(args.outdir, "wrong_arch.so"),
                    "--target=cuda", "--gpu=sm_100a",
                    f"--input-shape=input_ids={args.batch}x{args.seq}"],
                   check=True)
    if args.node_tests and prepare_node_tests(args):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
