#!/usr/bin/env python3
"""mte's memory-bound kernels at large sizes against the H200's copy
bandwidth (issue 6: norms, masked softmax, rotary embedding and elementwise
chains should reach 80% of the measured ~4.3 TB/s device copy, bytes read +
written).

Each case is a small ONNX model with bf16 inputs and outputs, compiled
with --target=cuda --precision=bf16, so that its forward is one mte kernel
(the masked softmax: the head transposes of Q, K and V and cuBLASLt GEMMs
around it, MEASURED_KERNEL picks it).
On the GPU, kernel times come from torch.profiler (CUPTI) over 20
CUDA-graph replays (each kernel is listed; memcpys left out); the bytes the
measured kernel must move are counted from the shapes (each input read
once, each output written once); every output is checked against PyTorch
in float32 on the same random inputs.

  build (compile machine):  kernels.py build OUTDIR MTE_COMPILE
  run (GPU machine):        cd OUTDIR && LD_LIBRARY_PATH=. python3 kernels.py run
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COPY_BANDWIDTH = 4.3e12  # bytes/s, read + written, measured on the H200
TOKENS = 8192

# name: (inputs {name: shape}, output shape, bytes moved)
B, S, H, D = 4, 2048, 32, 128
AB, AH, AS, AD = 8, 16, 1024, 64  # the masked-softmax case's attention
CASES = {
    "layer_norm": ({"x": [TOKENS, 4096]}, [TOKENS, 4096],
                   2 * 2 * TOKENS * 4096 + 2 * 2 * 4096),
    # Pre-norm residual: LN(x + r), also writing x + r ("sum").
    "layer_norm_residual": ({"x": [TOKENS, 4096], "r": [TOKENS, 4096]},
                            [TOKENS, 4096],
                            2 * 4 * TOKENS * 4096 + 2 * 2 * 4096),
    "rms_norm": ({"x": [TOKENS, 4096]}, [TOKENS, 4096],
                 2 * 2 * TOKENS * 4096 + 2 * 4096),
    "rms_norm_residual": ({"x": [TOKENS, 4096], "r": [TOKENS, 4096]},
                          [TOKENS, 4096], 2 * 4 * TOKENS * 4096 + 2 * 4096),
    "swiglu": ({"x": [TOKENS, 2 * 14336]}, [TOKENS, 14336],
               2 * 3 * TOKENS * 14336),
    "rotary": ({"x": [B, S, H * D], "cos": [1, S, 1, D], "sin": [1, S, 1, D]},
               [B, S, H * D], 2 * 2 * B * S * H * D + 2 * 2 * S * D),
    "elementwise": ({"x": [TOKENS, 8192], "y": [TOKENS, 8192]},
                    [TOKENS, 8192], 2 * 3 * TOKENS * 8192),
    # Attention with an additive mask per query and key (a sliding window,
    # ALiBi-like biases: a key-padding mask [B, 1, 1, S] would go to the
    # fused attention kernel): cuBLASLt GEMMs around the scale + mask +
    # softmax row kernel, which alone is timed: it reads the f32 scores and
    # the mask, and writes the bf16 probabilities.
    "masked_softmax": ({"q": [AB, AH, AS, AD], "k": [AB, AH, AS, AD],
                        "v": [AB, AH, AS, AD], "mask": [AB, 1, AS, AS]},
                       [AB, AH, AS, AD],
                       (4 + 2) * AB * AH * AS * AS + 2 * AB * AS * AS),
}
# Cases whose forward has more kernels than the one measured: the name part
# that picks it.
MEASURED_KERNEL = {"masked_softmax": "attention_softmax"}
# Outputs besides "out" (of the same shape).
EXTRA_OUTPUTS = {"layer_norm_residual": ["sum"], "rms_norm_residual": ["sum"]}


def build_model(name, path):
    """The ONNX graph of case `name`, in the node patterns mte recognises."""
    import numpy as np
    import onnx
    from onnx import helper as h, numpy_helper, TensorProto as T

    inputs, output, _ = CASES[name]
    nodes, inits = [], []

    def const(cname, array):
        inits.append(numpy_helper.from_array(np.asarray(array), cname))
        return cname

    def bf16(cname, array):  # a bf16 initializer
        bits = np.asarray(array, np.float32).view(np.uint32)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        tensor = h.make_tensor(cname, T.BFLOAT16, list(np.shape(array)),
                               rounded.tobytes(), raw=True)
        inits.append(tensor)
        return cname

    def node(op, ins, **attrs):
        out = f"t{len(nodes)}"
        nodes.append(h.make_node(op, ins, [out], **attrs))
        return out

    n = inputs["x"][-1] if "x" in inputs else 0
    if name == "layer_norm":
        gain, bias = norm_params(name, n)
        node("LayerNormalization", ["x", bf16("g", gain), bf16("b", bias)],
                 axis=-1, epsilon=1e-5)
    elif name == "layer_norm_residual":
        gain, bias = norm_params(name, n)
        nodes.append(h.make_node("Add", ["x", "r"], ["sum"]))
        node("LayerNormalization", ["sum", bf16("g", gain), bf16("b", bias)],
             axis=-1, epsilon=1e-5)
    elif name in ("rms_norm", "rms_norm_residual"):  # HF LlamaRMSNorm
        if name == "rms_norm_residual":
            nodes.append(h.make_node("Add", ["x", "r"], ["sum"]))
        xf = node("Cast", ["sum" if name == "rms_norm_residual" else "x"],
                  to=T.FLOAT)
        var = node("ReduceMean", [node("Pow", [xf, const("two", np.float32(2))])],
                   axes=[-1], keepdims=1)
        inv = node("Reciprocal", [node("Sqrt", [node("Add", [var, const("eps", np.float32(1e-5))])])])
        yb = node("Cast", [node("Mul", [xf, inv])], to=T.BFLOAT16)
        node("Mul", [bf16("g", norm_params(name, n)[0]), yb])
    elif name == "swiglu":
        half = n // 2
        gate = node("Slice", ["x", const("s0", np.array([0])),
                              const("s1", np.array([half])),
                              const("ax", np.array([1]))])
        up = node("Slice", ["x", "s1", const("s2", np.array([n])), "ax"])
        node("Mul", [node("Mul", [gate, node("Sigmoid", [gate])]), up])
    elif name == "rotary":  # x * cos + rotate_half(x) * sin on [B, S, H, D]
        xr = node("Reshape", ["x", const("shape4", np.array([B, S, H, D]))])
        ax = const("ax", np.array([3]))
        x1 = node("Slice", [xr, const("s0", np.array([0])),
                            const("s1", np.array([D // 2])), ax])
        x2 = node("Slice", [xr, "s1", const("s2", np.array([D])), ax])
        rot = node("Concat", [node("Neg", [x2]), x1], axis=3)
        rotated = node("Add", [node("Mul", [xr, "cos"]),
                               node("Mul", [rot, "sin"])])
        node("Reshape", [rotated, const("shape3", np.array(output))])
    elif name == "masked_softmax":  # softmax(q·kᵀ / sqrt(d) + mask)·v
        kt = node("Transpose", ["k"], perm=[0, 1, 3, 2])
        scores = node("Mul", [node("MatMul", ["q", kt]),
                              bf16("scale", np.float32(AD ** -0.5))])
        probs = node("Softmax", [node("Add", [scores, "mask"])], axis=-1)
        node("MatMul", [probs, "v"])
    else:  # an elementwise chain: tanh(x * y + x) * y, one fused kernel
        node("Mul", [node("Tanh", [node("Add", [node("Mul", ["x", "y"]), "x"])]), "y"])
    nodes[-1].output[0] = "out"
    graph = h.make_graph(
        nodes, name,
        [h.make_tensor_value_info(k, T.BFLOAT16, v) for k, v in inputs.items()],
        [h.make_tensor_value_info(o, T.BFLOAT16, output)
         for o in ["out"] + EXTRA_OUTPUTS.get(name, [])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def norm_params(name, n):
    """The gain (and bias) build_model drew for a norm case, as bf16 would
    round them: the same generator, the same draws."""
    import numpy as np
    rng = np.random.default_rng(0)
    gain = 1 + 0.1 * rng.standard_normal(n)
    bias = (0.1 * rng.standard_normal(n)
            if name.startswith("layer_norm") else None)
    return gain, bias


def reference(name, t):
    """PyTorch float32 forward of case `name` on the bf16 inputs `t`: the
    output "out", or a dict of every output."""
    import torch
    x = t["x"].float() if "x" in t else None
    if name in ("layer_norm", "layer_norm_residual", "rms_norm",
                "rms_norm_residual"):
        gain, bias = norm_params(name, x.shape[-1])
        def as_bf16(a):
            return torch.tensor(a, dtype=torch.float32,
                                device="cuda").to(torch.bfloat16).float()
        if name == "layer_norm":
            return torch.nn.functional.layer_norm(
                x, (x.shape[-1],), as_bf16(gain), as_bf16(bias), 1e-5)
        if name == "layer_norm_residual":  # the sum is rounded to bf16 first
            total = (x + t["r"].float()).to(torch.bfloat16).float()
            return {"sum": total, "out": torch.nn.functional.layer_norm(
                total, (x.shape[-1],), as_bf16(gain), as_bf16(bias), 1e-5)}
        if name == "rms_norm_residual":
            x = (x + t["r"].float()).to(torch.bfloat16).float()
        normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
        out = as_bf16(gain) * normed.to(torch.bfloat16).float()
        return {"sum": x, "out": out} if name == "rms_norm_residual" else out
    if name == "swiglu":
        gate, up = x.chunk(2, dim=-1)
        return torch.nn.functional.silu(gate) * up
    if name == "rotary":
        xr = x.reshape(B, S, H, D)
        rot = torch.cat([-xr[..., D // 2:], xr[..., :D // 2]], dim=-1)
        return (xr * t["cos"].float() + rot * t["sin"].float()).reshape(B, S, H * D)
    if name == "masked_softmax":
        q, k, v, mask = (t[n].float() for n in ("q", "k", "v", "mask"))
        scores = q @ k.transpose(-1, -2) * AD ** -0.5 + mask
        return torch.softmax(scores, dim=-1) @ v
    y = t["y"].float()
    return torch.tanh(x * y + x) * y


def run():
    os.environ.setdefault("MTE_RUNTIME_LIBRARY",
                          os.path.join(HERE, "libmte_runtime.so"))
    import torch
    import mte

    results, failures = {}, 0
    gen = torch.Generator(device="cuda").manual_seed(0)
    for name, (inputs, output, moved) in CASES.items():
        model = mte.load(os.path.join(HERE, name + ".so"))
        tensors = {k: torch.randn(*shape, generator=gen, device="cuda").to(torch.bfloat16)
                   for k, shape in inputs.items()}
        outs = {o.name: torch.empty(output, dtype=torch.bfloat16, device="cuda")
                for o in model.outputs}
        ins = [tensors[i.name].data_ptr() for i in model.inputs]
        out_ptrs = [outs[o.name].data_ptr() for o in model.outputs]
        stream = torch.cuda.current_stream()
        for _ in range(3):  # eager, captured, replayed
            model.run_device(ins, out_ptrs, stream.cuda_stream)
        torch.cuda.synchronize()
        runs = 20
        with torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(runs):
                model.run_device(ins, out_ptrs, stream.cuda_stream)
            torch.cuda.synchronize()
        kernels = {}
        for event in prof.events():
            if (event.device_type == torch.autograd.DeviceType.CUDA
                    and not event.name.startswith("Memcpy")):
                kernels[event.name] = kernels.get(event.name, 0.0) + event.device_time_total
        measured = [k for k in kernels if MEASURED_KERNEL.get(name, "") in k]
        if len(measured) != 1:
            print(f"{name:19s} FAIL: {len(measured)} kernels to time, not 1: "
                  f"{sorted(kernels)}", flush=True)
            failures += 1
            continue
        seconds = kernels[measured[0]] / runs * 1e-6
        rate = moved / seconds
        want = reference(name, tensors)
        if not isinstance(want, dict):
            want = {"out": want}
        err, ok = 0.0, True
        for o, expected in want.items():
            got = outs[o].float()
            err = max(err, float((got - expected).norm() / expected.norm()))
            ok = ok and bool(torch.isfinite(got).all())
        ok = ok and err <= 1e-2
        failures += not ok
        results[name] = {"kernels_us": {k: t / runs for k, t in kernels.items()},
                         "us": seconds * 1e6,
                         "bytes": moved, "tb_per_s": rate / 1e12,
                         "fraction_of_copy": rate / COPY_BANDWIDTH,
                         "rel_rms_vs_torch_fp32": err, "ok": ok}
        print(f"{name:19s} {seconds * 1e6:8.1f} us  {moved / 1e6:7.0f} MB  "
              f"{rate / 1e12:5.2f} TB/s  {100 * rate / COPY_BANDWIDTH:4.0f}% of copy  "
              f"rel RMS vs torch fp32 {err:.1e}  {'PASS' if ok else 'FAIL'}",
              flush=True)
        for kernel, t in sorted(kernels.items(), key=lambda kv: -kv[1]):
            print(f"    {t / runs:8.1f} us  {kernel[:70]}")
    out_path = os.path.join(os.environ.get("OUT", HERE), "kernels.json")
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)
    return 1 if failures else 0


def build(outdir, compiler):
    os.makedirs(outdir, exist_ok=True)
    for name in CASES:
        onnx_path = os.path.join(outdir, name + ".onnx")
        build_model(name, onnx_path)
        subprocess.run([compiler, onnx_path, "--target=cuda", "--precision=bf16",
                        "-o", os.path.join(outdir, name + ".so")], check=True)
        print(f"built {name}.so")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "build":
        sys.exit(build(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 2 and sys.argv[1] == "run":
        sys.exit(run())
    sys.exit(__doc__)
