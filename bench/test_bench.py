#!/usr/bin/env python3
"""Tests of the benchmark's parts that need no torch nor GPU: models.py's
sizes, portable weights and external data, the FLOP count, statistics,
run.py's arguments and its regenerate-and-check step.

    /usr/bin/python3 bench/test_bench.py [-v]
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
INPUTS = os.path.join(ROOT, "test", "Target", "ONNX", "Inputs")
MODELS_PY = os.path.join(INPUTS, "models.py")
sys.path.insert(0, HERE)
sys.path.insert(0, INPUTS)

import common  # noqa: E402
import models  # noqa: E402
import parallel  # noqa: E402
import run  # noqa: E402

# The commit before models.py learned sizes: its tiny fixtures are the
# reference bytes.
BASE_COMMIT = "0712962"


def models_py(*args, cwd):
    subprocess.run([sys.executable, MODELS_PY, *args], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL)


class Sizes(unittest.TestCase):
    def tearDown(self):
        models.set_size("tiny")

    def test_set_size(self):
        models.set_size("llama-4l")
        self.assertEqual((models.HIDDEN, models.HEADS, models.KV_HEADS, models.HEAD_DIM,
                          models.INTERMEDIATE, models.VOCAB, models.EPS["llama"],
                          models.ROPE_THETA),
                         (4096, 32, 8, 128, 14336, 32000, 1e-5, 10000.0))
        self.assertGreaterEqual(models.MAX_POS, 2048)
        models.set_size("gpt2-small")
        self.assertEqual((models.HIDDEN, models.HEADS, models.HEAD_DIM, models.INTERMEDIATE,
                          models.VOCAB, models.MAX_POS, models.SIZE.layers),
                         (768, 12, 64, 3072, 50257, 1024, 12))
        models.set_size("tiny")
        self.assertEqual((models.HIDDEN, models.HEADS, models.HEAD_DIM, models.INTERMEDIATE,
                          models.VOCAB, models.MAX_POS, models.KV_HEADS, models.EPS["llama"]),
                         (64, 4, 16, 128, 100, 64, 2, 1e-6))

    def test_portable_uniform_pinned(self):
        """The first values of the portable stream, pinned: a numpy (or
        models.py) change that alters them fails here, on either machine."""
        self.assertEqual(int(np.random.PCG64(0).random_raw()), 0xa30febcfd9c2825f)
        values = models.portable_uniform(np.random.PCG64(0), (1001,), 0.02)
        self.assertEqual(values.dtype, np.float32)
        self.assertEqual(values[0], np.float32(5882498) * np.float32(0.02 * np.sqrt(3.0) / 2**23))
        digest = hashlib.sha256(values.tobytes()).hexdigest()
        self.assertEqual(digest, PINNED_UNIFORM_SHA256)
        bound = 0.02 * np.sqrt(3.0)
        self.assertTrue(np.all(np.abs(values) <= bound * (1 + 1e-6)))
        self.assertAlmostEqual(float(values.std()), 0.02, delta=0.002)
        gains = models.portable_uniform(np.random.PCG64(1), (4096,), 0.1, mean=1.0)
        self.assertAlmostEqual(float(gains.mean()), 1.0, delta=0.01)

    def test_portable_weights_deterministic(self):
        models.set_size("gpt2-small")
        a = models.make_weights("gpt2", layers=1, seed=3)
        b = models.make_weights("gpt2", layers=1, seed=3)
        self.assertEqual(list(a), list(b))
        for name in a:
            self.assertEqual(a[name].tobytes(), b[name].tobytes(), name)
        self.assertEqual(a["wte.weight"].shape, (50257, 768))
        self.assertEqual(a["h.0.attn.c_attn.weight"].shape, (768, 2304))
        c = models.make_weights("gpt2", layers=1, seed=4)
        self.assertNotEqual(a["wte.weight"].tobytes(), c["wte.weight"].tobytes())


class TinyFixtures(unittest.TestCase):
    def test_unchanged_against_base_commit(self):
        try:
            old = subprocess.run(["git", "-C", ROOT, "show",
                                  f"{BASE_COMMIT}:test/Target/ONNX/Inputs/models.py"],
                                 check=True, capture_output=True).stdout
        except (OSError, subprocess.CalledProcessError):
            self.skipTest(f"no git history with {BASE_COMMIT}")
        with tempfile.TemporaryDirectory() as tmp:
            old_py = os.path.join(tmp, "old_models.py")
            with open(old_py, "wb") as f:
                f.write(old)
            for family in models.FAMILIES:
                for exporter in models.EXPORTERS:
                    for script, tag in ((old_py, "old"), (MODELS_PY, "new")):
                        subprocess.run([sys.executable, script, "--family", family,
                                        "--exporter", exporter, "-o", f"{tag}.onnx",
                                        "--reference-out", f"{tag}.npz"],
                                       cwd=tmp, check=True)
                    with open(os.path.join(tmp, "old.onnx"), "rb") as f:
                        want = f.read()
                    with open(os.path.join(tmp, "new.onnx"), "rb") as f:
                        self.assertEqual(f.read(), want, f"{family} {exporter}")
                    old_ref = np.load(os.path.join(tmp, "old.npz"))
                    new_ref = np.load(os.path.join(tmp, "new.npz"))
                    self.assertEqual(sorted(old_ref.files), sorted(new_ref.files))
                    for key in old_ref.files:
                        self.assertEqual(old_ref[key].tobytes(), new_ref[key].tobytes())


class ExternalData(unittest.TestCase):
    def test_tiny_external_data(self):
        import onnx
        from onnx import numpy_helper
        import onnx_numpy
        with tempfile.TemporaryDirectory() as tmp:
            for d in ("a", "b"):
                os.mkdir(os.path.join(tmp, d))
                models_py("--family", "llama", "--exporter", "dynamo", "-o", "m.onnx",
                          "--external-data", "m.data", cwd=os.path.join(tmp, d))
            models_py("--family", "llama", "--exporter", "dynamo", "-o", "inline.onnx",
                      cwd=tmp)
            for f in ("m.onnx", "m.data"):
                with open(os.path.join(tmp, "a", f), "rb") as x, \
                        open(os.path.join(tmp, "b", f), "rb") as y:
                    self.assertEqual(x.read(), y.read(), f)
            raw = onnx.load(os.path.join(tmp, "a", "m.onnx"), load_external_data=False)
            size = os.path.getsize(os.path.join(tmp, "a", "m.data"))
            end = 0
            for t in raw.graph.initializer:
                if t.data_location != onnx.TensorProto.EXTERNAL:
                    continue
                info = {e.key: e.value for e in t.external_data}
                self.assertEqual(info["location"], "m.data")
                offset, length = int(info["offset"]), int(info["length"])
                self.assertEqual(offset % 64, 0)
                self.assertGreaterEqual(offset, end)
                self.assertGreaterEqual(length, models.EXTERNAL_MIN_BYTES)
                end = offset + length
            self.assertEqual(end, size)
            loaded = onnx.load(os.path.join(tmp, "a", "m.onnx"))
            inline = onnx.load(os.path.join(tmp, "inline.onnx"))
            got = {t.name: numpy_helper.to_array(t) for t in loaded.graph.initializer}
            want = {t.name: numpy_helper.to_array(t) for t in inline.graph.initializer}
            self.assertEqual(list(got), list(want))
            for name in want:
                self.assertEqual(got[name].dtype, want[name].dtype)
                self.assertTrue(np.array_equal(got[name], want[name]), name)
            models.set_size("tiny")
            inputs = models.make_inputs("llama", 2, 8)
            ref = models.reference_forward("llama", models.make_weights("llama"), inputs, 2)
            out = onnx_numpy.run(loaded, inputs)["last_hidden_state"]
            self.assertTrue(onnx_numpy.compare(out, ref)["allclose"])

    def test_external_data_name_is_a_file_name(self):
        with self.assertRaises(ValueError):
            models.ExternalData("../x.data")


class Flops(unittest.TestCase):
    def test_gpt2_small(self):
        f = common.model_flops("gpt2-small")
        per_layer = 4 * 768 * 768 + 2 * 768 * 3072        # c_attn, c_proj, c_fc, mlp.c_proj
        self.assertEqual(f["linear_params"], 12 * per_layer)
        self.assertEqual(f["linear_params"], 84934656)     # GPT-2 small's non-embedding matrices
        self.assertEqual(f["linear"], 2 * 8 * 1024 * 12 * per_layer)
        self.assertEqual(f["attention_full"], 12 * 2 * 2 * 8 * 12 * 1024 * 1024 * 64)
        self.assertEqual(f["attention_causal"], 12 * 2 * 2 * 8 * 12 * (1024 * 1025 // 2) * 64)
        self.assertEqual(f["total_full"], f["linear"] + f["attention_full"])

    def test_llama_4l(self):
        f = common.model_flops("llama-4l")
        per_layer = (4096 * 4096 * 2 + 2 * 4096 * 1024      # q, o; k, v (8 KV heads of 128)
                     + 3 * 4096 * 14336)                    # gate, up, down
        self.assertEqual(f["linear_params"], 4 * per_layer)
        self.assertEqual(f["tokens"], 4 * 2048)
        self.assertEqual(f["linear"], 2 * 4 * 2048 * 4 * per_layer)
        self.assertEqual(f["attention_full"], 4 * 4 * 4 * 32 * 2048 * 2048 * 128)
        self.assertAlmostEqual(f["total_full"] / 1e12, 15.393, places=3)

    def test_tflops(self):
        self.assertAlmostEqual(common.tflops(2e12, 4.0), 500.0)


class CompileArgs(unittest.TestCase):
    """What prepare.sh passes mte-compile for each precision and where the
    library lands."""

    def test_precisions(self):
        shape = "--input-shape=input_ids=8x1024"
        want = {"bf16": ["--precision=bf16"],
                "fp8": ["--precision=fp8"],
                "fp8-delayed": ["--precision=fp8", "--fp8-recipe=delayed"],
                "fp8-block": ["--precision=fp8", "--fp8-recipe=block"],
                "fp8-rowwise": ["--precision=fp8", "--fp8-recipe=rowwise"]}
        self.assertEqual(set(want), set(common.PRECISIONS))
        for precision, flags in want.items():
            self.assertEqual(common.compile_args("gpt2-small", precision),
                             ["--target=cuda"] + flags +
                             ["--weights=external", shape])
        self.assertEqual(common.library_name("gpt2-small", "fp8-delayed"),
                         "gpt2-small.fp8-delayed.so")
        self.assertEqual(common.library_name("gpt2-small"), "gpt2-small.so")
        with self.assertRaises(ValueError):
            common.compile_args("gpt2-small", "fp4")


class Stats(unittest.TestCase):
    def test_percentiles_match_numpy(self):
        rng = np.random.default_rng(0)
        for n in (1, 2, 7, 30):
            xs = list(rng.random(n))
            for q in (10, 50, 90):
                self.assertAlmostEqual(common.percentile(xs, q), float(np.percentile(xs, q)))
        s = common.summarize([3.0, 1.0, 2.0])
        self.assertEqual((s["runs"], s["median_ms"], s["min_ms"], s["max_ms"]), (3, 2.0, 1.0, 3.0))


class Accuracy(unittest.TestCase):
    """finish_accuracy's pass criterion."""

    @staticmethod
    def verdict(tol=2e-2, **errors):
        accuracy = {name.replace("_", " "): {"rel_rms": e, "finite": e == e}
                    for name, e in errors.items()}
        result = {"accuracy": accuracy}
        run.finish_accuracy(result, tol)
        check = accuracy.get("mte vs fp32") or accuracy.get("mte vs eager")
        return result["passed"], check and check.get("tol")

    def test_against_fp32(self):
        self.assertEqual(self.verdict(mte_vs_fp32=1.1e-2, eager_vs_fp32=1.2e-2),
                         (True, 2e-2))
        self.assertEqual(self.verdict(mte_vs_fp32=2.1e-2, eager_vs_fp32=1.2e-2),
                         (False, 2e-2))

    def test_eager_error_widens_the_bound(self):
        passed, bound = self.verdict(mte_vs_fp32=4e-2, eager_vs_fp32=3e-2)
        self.assertTrue(passed)
        self.assertAlmostEqual(bound, 4.5e-2)

    def test_bound_has_a_ceiling(self):
        self.assertEqual(self.verdict(mte_vs_fp32=0.3, eager_vs_fp32=0.5),
                         (False, 0.1))

    def test_non_finite_fails(self):
        passed, _ = self.verdict(mte_vs_fp32=float("nan"), eager_vs_fp32=1e-2)
        self.assertFalse(passed)

    def test_without_fp32_reference(self):
        self.assertEqual(self.verdict(mte_vs_eager=1e-2), (True, 2e-2))
        self.assertEqual(self.verdict(mte_vs_eager=3e-2), (False, 2e-2))
        self.assertEqual(self.verdict(), (None, None))


class RunArgs(unittest.TestCase):
    def test_defaults(self):
        a = run.parse_args([])
        self.assertEqual(a.models, ["gpt2-small", "llama-4l"])
        self.assertGreaterEqual(a.input_sets, 3)
        self.assertGreaterEqual(a.iters * a.input_sets, 20)
        self.assertGreater(a.warmup, 0)
        self.assertEqual(a.compile_modes,
                         ["default", "reduce-overhead", "max-autotune-no-cudagraphs"])
        self.assertEqual(a.tol, 2e-2)

    def test_options(self):
        a = run.parse_args(["--models", "llama-4l", "--compile-modes", "none", "--tol", "0.05",
                            "--out", "x.json", "--dir", "/tmp"])
        self.assertEqual((a.models, a.compile_modes, a.tol, a.out, a.dir),
                         (["llama-4l"], [], 0.05, "x.json", "/tmp"))
        a = run.parse_args(["--compile-modes", "default,max-autotune-no-cudagraphs"])
        self.assertEqual([run.engine_name(m) for m in a.compile_modes],
                         ["compile", "compile:max-autotune-no-cudagraphs"])

    def test_fastest_compile(self):
        engines = {"mte": {"median_ms": 1.0}, "eager": {"median_ms": 0.5},
                   "compile": {"median_ms": 3.0},
                   "compile:reduce-overhead": {"median_ms": 2.0},
                   "compile:max-autotune-no-cudagraphs": {"median_ms": 2.5}}
        self.assertEqual(run.fastest_compile(engines), "compile:reduce-overhead")
        self.assertIsNone(run.fastest_compile({"mte": {"median_ms": 1.0}}))

    def test_errors(self):
        for bad in (["--models", "gpt3"], ["--iters", "0"], ["--tol", "0"]):
            with self.assertRaises(SystemExit), open(os.devnull, "w") as null:
                stderr, sys.stderr = sys.stderr, null
                try:
                    run.parse_args(bad)
                finally:
                    sys.stderr = stderr

    def test_main_without_torch(self):
        try:
            import torch  # noqa: F401
            self.skipTest("torch is installed here")
        except ImportError:
            pass
        self.assertEqual(run.main(["--models", "gpt2-small"]), 3)


class Regenerate(unittest.TestCase):
    """run.py's regenerate step against a manifest written by common.record,
    on a tiny stand-in for a benchmark model."""

    def setUp(self):
        common.BENCH_MODELS["tiny-test"] = dict(size="tiny", family="gpt2",
                                                exporter="dynamo", seed=5, batch=2, seq=16)
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        del common.BENCH_MODELS["tiny-test"]
        shutil.rmtree(self.tmp)
        models.set_size("tiny")

    def test_matches_manifest_and_detects_change(self):
        name = "tiny-test"
        models_py(*common.models_args(name), cwd=self.tmp)     # what prepare.sh runs
        entry = common.record(name, self.tmp)
        self.assertEqual(entry["data"]["bytes"], os.path.getsize(os.path.join(self.tmp, name + ".data")))
        os.remove(os.path.join(self.tmp, name + ".data"))
        manifest = common.load_manifest(self.tmp)
        weights, _, problem = run.regenerate(name, common.spec(name), self.tmp, manifest)
        self.assertIsNone(problem)
        self.assertIn("wte.weight", weights)
        manifest[name]["data"]["crc32"] ^= 1
        _, _, problem = run.regenerate(name, common.spec(name), self.tmp, manifest)
        self.assertIn("differs from the one tiny-test.so was compiled with", problem)
        with open(os.path.join(self.tmp, common.MANIFEST)) as f:
            self.assertIn(name, json.load(f))


# portable_uniform(PCG64(0), (1001,), 0.02).tobytes(), as numpy 1.24 makes it;
# PCG64(0)'s first raw draw is 0xa30febcfd9c2825f, whose low half 0xd9c2825f
# keeps 0xd9c282 = 2^23 + 5882498, so the first value is

class LazyWeights(unittest.TestCase):
    """A lazy size (llama-7b's) draws each tensor when it is written: the
    same values, and the same external data file, as the eager draws."""

    def setUp(self):
        self.saved = models.SIZE.name
        eager = models.SIZES["gpt2-small"]._replace(
            name="test-eager", hidden=45, heads=3, head_dim=15, intermediate=101,
            vocab=37, kv_heads=1)          # odd sizes: a draw split between tensors
        models.SIZES["test-eager"] = eager
        models.SIZES["test-lazy"] = eager._replace(name="test-lazy", lazy=True)

    def tearDown(self):
        models.set_size(self.saved)
        del models.SIZES["test-eager"], models.SIZES["test-lazy"]

    def test_same_values(self):
        models.set_size("test-eager")
        eager = models.make_weights("llama", 3, 5)
        models.set_size("test-lazy")
        lazy = models.make_weights("llama", 3, 5)
        self.assertEqual(list(eager), list(lazy))
        for name, array in eager.items():
            self.assertIsInstance(lazy[name], models.LazyUniform)
            self.assertEqual(lazy[name].shape, array.shape)
            np.testing.assert_array_equal(np.asarray(lazy[name]), array, err_msg=name)
            np.testing.assert_array_equal(np.asarray(lazy[name].T), array.T, err_msg=name)

    def test_same_data_file(self):
        digests = []
        with tempfile.TemporaryDirectory() as tmp:
            for size in ("test-eager", "test-lazy"):
                models.generate("llama", "dynamo", os.path.join(tmp, size + ".onnx"),
                                size=size, layers=2, external_data=size + ".data",
                                check=False)
                with open(os.path.join(tmp, size + ".data"), "rb") as f:
                    digests.append(hashlib.sha256(f.read()).hexdigest())
        self.assertEqual(digests[0], digests[1])


PLAN_TABLE = """parallel layouts for 2 GPUs (141 GiB each, 8 a node; NVLink 450 GB/s, network 50 GB/s), batch 4, predicted on one H200's rates:
     tp  sp  pp  dp  micro  latency ms    seq/s  comm %  weights GiB  activations GiB
  *   1   -   1   2      1     14.0811    284.0     6.2       12.5001           0.5000
      2  sp   1   1      1     16.1162    248.2    34.5        6.2501           0.2500
      2   -   1   1      1     16.0740    248.9     7.9        6.2501           0.5000
      1   -   2   1      2     20.1312    198.6    11.5       12.5001           0.2500
pick: --dp=2 (the lowest predicted latency that fits)
"""


class Parallel(unittest.TestCase):
    """bench/parallel.py's parts that run on the GPU machine only: the
    planner's table, the profile's NCCL kernels, the report."""

    def test_layouts_and_flags(self):
        names = [parallel.library(l) for l in parallel.layouts("llama-4l", 8)]
        self.assertEqual(len(names), 14)
        self.assertEqual(names[:3], ["llama-4l.bf16.tp1.so", "llama-4l.bf16.tp2.so",
                                     "llama-4l.bf16.tp2.sp.so"])
        self.assertEqual(len(parallel.layouts("llama-4l", 2)), 6)
        layout = parallel.Layout("llama-4l", "fp8-delayed", 4, True, 1, 1)
        self.assertEqual(parallel.compile_args(layout, "cuda"), [
            "--target=cuda", "--precision=fp8", "--fp8-recipe=delayed",
            "--weights=external", "--input-shape=input_ids=4x2048", "--tp=4", "--sp"])
        unsharded = parallel.Layout("llama-4l", "bf16", 1, False, 1, 1)
        self.assertNotIn("--tp=1", parallel.compile_args(unsharded, "cuda"))

    def test_parse_plan(self):
        rows = parallel.parse_plan(PLAN_TABLE)
        self.assertEqual(len(rows), 4)
        self.assertEqual(rows[1], {"tp": 2, "sp": True, "pp": 1, "dp": 1, "micro": 1,
                                   "latency_ms": 16.1162, "seq_per_s": 248.2,
                                   "comm_percent": 34.5, "weights_gib": 6.2501,
                                   "activations_gib": 0.25})
        self.assertEqual(rows[0]["dp"], 2)

    def test_kernels_and_bandwidth(self):
        layout = parallel.Layout("llama-4l", "fp8-delayed", 2, True, 1, 1)
        cfg = models.SIZES["llama-4l"]
        totals = {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL128": [3000.0, 24],
                  "ncclDevKernel_AllGather_RING_LL128": [2400.0, 24],
                  "ncclDevKernel_AllReduce_Max_f32_RING_LL": [60.0, 24],
                  "ncclDevKernel_Generic_4": [30.0, 3],
                  "mte_row_rms_norm_4096x4096xbf16_kernel": [900.0, 27],
                  "Kernel2": [30000.0, 300]}
        result = parallel.summarize_kernels(totals, 3, layout, cfg, 2)
        self.assertAlmostEqual(result["gpu_ms_per_forward"], 36390.0 / 3 / 1e3)
        self.assertAlmostEqual(result["collective_ms_per_forward"], 5490.0 / 3 / 1e3)
        kinds = {c["kernel"]: c for c in result["collectives"]}
        self.assertEqual(len(kinds), 4)
        rs = kinds["ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL128"]
        self.assertEqual((rs["kind"], rs["calls_per_forward"], rs["us_per_call"]),
                         ("reduce_scatter", 8.0, 125.0))
        self.assertEqual(rs["bytes"], 4 * 2048 * 4096 * 2)
        # FP8 may gather E4M3 codes; the amaxes' MAX and Generic have no size
        for name in ("ncclDevKernel_AllGather_RING_LL128", "ncclDevKernel_AllReduce_Max_f32_RING_LL",
                     "ncclDevKernel_Generic_4"):
            self.assertIsNone(kinds[name]["bytes"], name)
        self.assertEqual(kinds["ncclDevKernel_Generic_4"]["kind"], "other")
        result["median_ms"] = 20.0
        result["torch_busbw"] = {"reduce_scatter": 300.0, "all_gather": 310.0,
                                 "all_reduce": 320.0}
        parallel.merge_bandwidths(result)
        self.assertAlmostEqual(result["collective_fraction"], 5490.0 / 3 / 1e3 / 20.0)
        # 64 MiB in 125 us, half of it crossing: (n-1)/n of 536.9 GB/s
        self.assertAlmostEqual(rs["mte_busbw_gbs"], 4 * 2048 * 4096 * 2 / 125e-6 / 2 / 1e9)
        self.assertEqual(rs["torch_busbw_gbs"], 300.0)
        self.assertNotIn("mte_busbw_gbs", kinds["ncclDevKernel_AllReduce_Max_f32_RING_LL"])
        bf16 = parallel.Layout("llama-4l", "bf16", 2, True, 1, 1)
        gather = parallel.summarize_kernels(totals, 3, bf16, cfg, 2)["collectives"]
        self.assertTrue(any(c["kind"] == "all_gather" and c["bytes"] for c in gather))

    def test_table(self):
        base = {"library": "llama-4l.bf16.tp1.so", "world": 1, "median_ms": 25.0,
                "predicted": parallel.parse_plan(PLAN_TABLE)[2], "passed": True,
                "speedup": 1.0, "rel_rms_vs_unsharded": 0.0, "collective_fraction": None}
        row = {"library": "llama-4l.bf16.tp2.sp.so", "world": 2, "median_ms": 14.0,
               "predicted": parallel.parse_plan(PLAN_TABLE)[1], "passed": False,
               "speedup": 25.0 / 14.0, "predicted_speedup": 1.1,
               "rel_rms_vs_unsharded": 3e-2, "collective_fraction": 0.12,
               "collectives": [{"kind": "reduce_scatter", "bytes": 2**26, "ranks": 2,
                                "calls_per_forward": 8.0, "mte_busbw_gbs": 250.0,
                                "torch_busbw_gbs": 300.0}]}
        skipped = {"library": "llama-4l.bf16.tp8.so", "world": 8,
                   "skipped": "needs 8 GPUs; this machine has 2"}
        text = parallel.table([base, row, skipped])
        self.assertIn("llama-4l.bf16.tp2.sp", text)
        self.assertRegex(text, r"tp2\.sp +2 +14\.000 +1\.79x +16\.116 +1\.10x +12\.0 +34\.5 "
                               r"+3\.00e-02 +FAIL")
        self.assertRegex(text, r"reduce_scatter +64\.0 +2 +250\.0 +300\.0 +8\.0")
        self.assertIn("llama-4l.bf16.tp8                  8  skipped: needs 8 GPUs", text)

# float32(5882498) * float32(0.02 * sqrt(3) / 2^23) = 0.024291...
PINNED_UNIFORM_SHA256 = "916d9746158468e35150897b28cd4fe6f8ffd92c8db4b8ce0f3600d8e075bdea"

if __name__ == "__main__":
    unittest.main()
