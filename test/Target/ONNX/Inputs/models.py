#!/usr/bin/env python3
"""Tiny BERT / GPT-2 / Llama ONNX fixtures in the node patterns of PyTorch's
two ONNX exporters, plus an independent float64 numpy reference.

    models.py --family {bert,gpt2,llama} --exporter {torchscript,dynamo}
              [--size {tiny,gpt2-small,llama-4l,llama-7b,peaked}] [--layers N] [--seed 0]
              -o OUT.onnx [--external-data NAME.data]
              [--reference-out REF.npz --batch 2 --seq 16] [--verbose]
    models.py --self-check [--verbose]   # every family and exporter: checker,
                                         # shape inference, onnx_numpy.py vs.
                                         # the reference
    models.py --size peaked --batch 4 --seq 128 --check-perturbations TOL
              # each deliberate attention error moves the output >= 10x TOL

Configuration (--size tiny, the default, and the test fixtures): hidden 64,
4 heads of 16, intermediate 128, vocab 100, 64 positions, 2 layers.
LayerNorm eps: BERT 1e-12 (BertConfig's default), GPT-2 1e-5.  Llama: 2 KV
heads (GQA), RMSNorm eps 1e-6, rope theta 10000.  Larger sizes (SIZES below;
benchmark and compile-time models, bench/ and docs/performance.md):
  gpt2-small  GPT-2 small: 12 layers, hidden 768, 12 heads of 64, MLP 3072,
              vocab 50257, 1024 positions (Llama at this size: 4 KV heads).
  llama-4l    the first 4 layers of a Mistral-7B-shaped Llama (which is
              Llama-2-7B's vocab with Llama-3-8B's GQA and MLP): hidden 4096,
              32 heads of 128, 8 KV heads, MLP 14336, vocab 32000, 4096
              positions, RMSNorm eps 1e-5, rope theta 10000 (Llama 2's; the
              kernels do not depend on it).  About 1.0e9 parameters, 4.0 GB
              of float32 (no LM head: the output is last_hidden_state).
  llama-7b    Llama-2-7B's shape (issue 17's scaling model): 32 layers,
              hidden 4096, 32 heads of 128 (no GQA), MLP 11008, vocab 32000,
              4096 positions, eps 1e-5.  6.7e9 parameters, 27 GB of
              float32: its weights are drawn as each is written (LazyUniform),
              so generating it holds one tensor at a time.
  peaked      the tiny dimensions with 256 positions, Q/K weights of std 0.2
              and V/output weights of std 0.1 (attention scores of std ~2.5
              instead of ~0.03, an attention that matters in BERT's post-norm
              residual), and BERT's padding over three quarters of every row
              after the first: at 4 x 128 tokens, zeroing the attention, a
              uniform softmax, a 1/d scale, no mask or no RoPE each moves the
              output by 11-56x the bf16 tolerance (--check-perturbations),
              where at the tiny size they move it by 0.01-20x.
Weights of the tiny and peaked sizes come from numpy's default_rng normal draws (the
fixtures' bytes must not change); every other size draws them from the raw
64-bit output of np.random.PCG64(seed) only (portable_uniform), which gives
identical bytes under any numpy version, so two machines regenerate the same
model and --external-data file bit for bit.  Inputs
have symbolic dims "batch" and "sequence": BERT takes input_ids,
attention_mask, token_type_ids (int64); GPT-2 and Llama take input_ids only
(causal mask, no padding mask).  The output is last_hidden_state, float32
[batch, sequence, hidden], after ln_f / the final norm.  Weights are seeded
float32 initializers under their Hugging Face state-dict names.

--external-data NAME writes every float initializer of at least
EXTERNAL_MIN_BYTES bytes into the one file NAME beside the .onnx, in the
order the graph first uses them, each at an offset aligned to 64 bytes
(zero padding), as raw little-endian bytes with the TensorProto fields
data_location = EXTERNAL and external_data location / offset / length set
here (not by onnx.external_data_helper, whose layout varies by release).

"torchscript": torch.onnx.export(dynamo=False), opset 17, over the eager
Hugging Face code of the transformers 4.3x-4.4x era.  Names are module scopes
(/encoder/layer.0/attention/self/query/MatMul, outputs <name>_output_0); small
constants are Constant nodes; nn.Linear is MatMul(x, onnx::MatMul_<n>) +
Add(bias, y) with the transposed weight folded; x.size(i) is Shape ->
Gather(i), x.size(-k) Shape -> Slice -> Squeeze, and int lists Unsqueeze ->
Concat; torch.arange is Cast(int64) -> Range; Tensor.expand goes through the
symbolic's ConstantOfShape / Mul(-1) / Equal / Where fix-up of -1 sizes.
  BERT: embeddings Gather x3 (position ids Sliced from a buffer) -> Add ->
    LayerNormalization; mask Unsqueeze, Unsqueeze, Cast, Sub(1, m), Mul(min);
    heads Reshape -> Transpose(0,2,1,3), K fused into Transpose(0,2,3,1);
    Div(sqrt d), Add mask, Softmax; Erf GELU Div(1.4142135) Erf Add Mul Mul.
  GPT-2: Conv1D = Reshape -> Gemm(x, W[in,out], b) -> Reshape; Split with a
    split input; K Transpose(0,2,3,1) from the Reshape beside the (0,2,1,3)
    one that key.size(-2) reads; scale = zeros([]) + v.size(-1) ** 0.5 built
    at run time; causal mask = the bool `bias` buffer [1,1,64,64] Sliced by
    size chains, Where(mask, Cast(scores), min); Softmax -> Cast; gelu_new
    with Pow(x, 3); position ids Range -> Unsqueeze; final view Reshape.
  Llama: RMSNorm Cast, Pow 2, ReduceMean, Add eps, Sqrt, Div(1, .) (rsqrt's
    symbolic), Mul, Cast, Mul(weight); causal mask ConstantOfShape(min) ->
    Trilu(k=1) -> Mul(Cast(arange > cache_position)) -> Unsqueeze x2 ->
    Expand, Sliced to the key length and added in every layer; rotary
    Expand(inv_freq[None,:,None]) -> Cast -> MatMul(positions) -> Transpose ->
    Concat -> Cos/Sin -> Mul(1.0); rotate_half Shape -> Gather -> Div(2) ->
    Cast -> Cast bounds two Slices, Neg, Concat; repeat_kv Unsqueeze ->
    Expand -> Reshape from K/V's traced shape; Div(sqrt d); Softmax -> Cast
    -> Cast; SwiGLU Sigmoid, Mul, Mul(up).

"dynamo": torch.onnx.export(dynamo=True), opset 18.  Names node_<Op>_<n> /
node_<fx name> with values val_<n> / fx names; constants and shape lists
shared; weights pre-transposed into val_<n> initializers (no Transpose
node); sizes taken once as Shape(start, end) (+ Squeeze for Range); views
Reshape(allowzero=1); ReduceMean axes and Split(num_outputs) in their
opset-18 forms.  Element-wise parts use the torch._refs decompositions:
  BERT: LayerNorm ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div,
    Mul(gamma), Add(beta); mask Unsqueeze(1,2), Expand, Cast, Sub(1, m),
    Cast(bool), Where(b, min, m); torchlib's SDPA: K transposed through
    Shape Slices, Reshape(-1,s,d), Transpose(0,2,1), Reshape; Q and K each
    Mul sqrt(1/sqrt d); MatMul, Add mask, Softmax, IsNaN/Where, MatMul;
    GELU a*0.5 * (1 + erf(a*0.70710678)).
  GPT-2: Conv1D as Reshape -> MatMul -> Add -> Reshape (no Gemm); LayerNorm
    with Mul(d, d) and Reciprocal(Sqrt); Split(num_outputs=3); K
    Transpose(0,2,1,3) then (0,1,3,2); Mul(1/sqrt d); causal mask Range ->
    Unsqueeze -> LessOrEqual(kv, q) -> Where(0, min), added; tanh GELU x*x*x.
  Llama: RMSNorm Pow, ReduceMean, Add, Sqrt, Reciprocal, Mul, Mul(weight), no
    Casts; causal mask Range -> Unsqueeze -> GreaterOrEqual(q, kv) ->
    Where(0, min) -> Add; rotary with the expanded inv_freq folded, no Mul by
    1.0; rotate_half with constant bounds; repeat_kv Unsqueeze -> Expand ->
    Reshape; Mul(1/sqrt d); SiLU x * Sigmoid(x).

Provenance: the TorchScript patterns above were compared node by node with
torch 2.11's TorchScript exporter run on the same eager code, and the dynamo
naming, SDPA body, mask and Llama parts with torch 2.11's dynamo exporter on
transformers 5.17 models.  That exporter emits LayerNormalization (stash_type
1), Gemm for GPT-2's Conv1D, Pow(x, 3) and Div(1.4142135) GELUs, and
transformers 5's packed-sequence mask code (CumSum, GatherND, And); the
decomposed forms here are the deliberate alternatives this fixture set asks
for.

Model-zoo families (--family
gptj|neox|phi|qwen3|gemma|gemma2|mistral|llama_padded|llama_packed|stablelm|bloom|opt|falcon|phi3|
clip_text|t5;
ZOO below): decoders built from the same helpers in both exporters'
patterns, with the blocks the three above lack: GPT-J's parallel attention
+ MLP on one LayerNorm with interleaved (rotate_every_two) partial rotary
from a sin/cos buffer; GPT-NeoX's packed per-head query_key_value, partial
rotate-half rotary and two-norm parallel residual; Phi's parallel block
with partial rotate-half rotary; Qwen3's per-head q/k RMSNorm; Gemma's
(1 + w) RMSNorm, GeGLU (tanh) and multi-query attention with the embedding
scaled by sqrt(hidden); Gemma 2's attention logit softcapping, norms after
attention and MLP, and a sliding window every other layer; Mistral's sliding-window mask; a Llama whose
padding attention_mask input is merged with the causal mask; a Llama whose
causal mask is transformers 5's traced and_masks of causal and
packed-sequence functions (CumSum, GatherND); StableLM 2's
partial rotary with grouped-query attention; BLOOM's ALiBi bias, embedding
LayerNorm and packed per-head projection; OPT's learned positions at offset
2, query scaled before the product and ReLU MLP; Falcon-7B's multi-query
attention sliced from one fused projection, in a parallel block; Phi-3's
fused qkv_proj and gate_up_proj; CLIP's causal text encoder with quick
GELU; t5: Flan-T5's encoder (relative position bias from log-spaced
buckets, unscaled scores, gated GELU; T5 ENCODER below).  Their Q/K
weights have std 0.15 (others 0.05), so attention is peaked at the fixture
size: using the other rotary form moves the output by 8 to 63 % (relative
RMS), a 2-token window instead of the model's by 70 % or more.

The reference (reference_forward) is written from the models' definitions in
float64 numpy and never reads the ONNX graph; onnx_numpy.py, beside this
file, interprets a generated graph in float64 to cross-check the two.
"""

import argparse
import collections
import contextlib
import functools
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Size(collections.namedtuple(
        "Size", "name hidden heads head_dim intermediate vocab max_pos kv_heads "
                "layers eps rope_theta qk_std vo_std lazy",
        defaults=(None, None, False))):
    """One model size; set_size() makes it the module's configuration.
    qk_std, vo_std: the standard deviation of the Q and K, and of the V and
    output projections' weights (None: that of every other weight, 0.02).
    lazy: make_weights returns LazyUniform tensors (the same values), drawn
    when they are read."""


SIZES = {
    "tiny": Size("tiny", 64, 4, 16, 128, 100, 64, 2, 2,
                 {"bert": 1e-12, "gpt2": 1e-5, "llama": 1e-6}, 10000.0),
    "gpt2-small": Size("gpt2-small", 768, 12, 64, 3072, 50257, 1024, 4, 12,
                       {"bert": 1e-12, "gpt2": 1e-5, "llama": 1e-6}, 10000.0),
    "llama-4l": Size("llama-4l", 4096, 32, 128, 14336, 32000, 4096, 8, 4,
                     {"bert": 1e-12, "gpt2": 1e-5, "llama": 1e-5}, 10000.0),
    "llama-7b": Size("llama-7b", 4096, 32, 128, 11008, 32000, 4096, 32, 32,
                     {"bert": 1e-12, "gpt2": 1e-5, "llama": 1e-5}, 10000.0,
                     lazy=True),
    # The tiny dimensions with peaked attention and room for 256 positions:
    # Q/K weights of std 0.2 make the scores' std about 2.5 (std 0.02: 0.03,
    # a nearly uniform softmax), and V/output weights of std 0.1 make the
    # attention a large part of BERT's post-norm residual, so that a wrong
    # softmax, scale, mask or rotary moves the output far beyond the narrow
    # precisions' tolerance (check_perturbations).
    "peaked": Size("peaked", 64, 4, 16, 128, 100, 256, 2, 2,
                   {"bert": 1e-12, "gpt2": 1e-5, "llama": 1e-6}, 10000.0, 0.2, 0.1),
}
TYPE_VOCAB = 2
EXTERNAL_MIN_BYTES = 1024       # --external-data: smaller float tensors stay inline
EXTERNAL_ALIGN = 64


def set_size(name):
    """Makes SIZES[name] the configuration every builder and the reference
    read (the module constants HIDDEN, HEADS, ..., EPS, ROPE_THETA)."""
    global SIZE, HIDDEN, HEADS, HEAD_DIM, INTERMEDIATE, VOCAB, MAX_POS, KV_HEADS
    global EPS, ROPE_THETA
    SIZE = SIZES[name]
    HIDDEN, HEADS, HEAD_DIM, INTERMEDIATE = (SIZE.hidden, SIZE.heads, SIZE.head_dim,
                                             SIZE.intermediate)
    VOCAB, MAX_POS, KV_HEADS = SIZE.vocab, SIZE.max_pos, SIZE.kv_heads
    EPS, ROPE_THETA = dict(SIZE.eps), SIZE.rope_theta
    return SIZE


set_size("tiny")
FMIN = float(np.finfo(np.float32).min)        # -3.4028234663852886e+38
INT64_MAX, INT64_MIN = 2**63 - 1, -2**63
FAMILIES = ("bert", "gpt2", "llama")
# The model-zoo decoder families (ZOO below).
ZOO_FAMILIES = ("gptj", "neox", "phi", "qwen3", "gemma", "gemma2", "mistral", "llama_padded",
                "llama_packed", "stablelm", "bloom", "opt", "falcon", "phi3", "clip_text",
                "t5")
# BERT, GPT-2 and Llama exported after model.half(): float16 weights,
# activations and output, with the float32 upcasts the Hugging Face code
# makes (RMSNorm's variance, the rotary tables, the decomposed LayerNorm).
FP16_FAMILIES = tuple(f + "_fp16" for f in FAMILIES)
# Llama with a key/value cache, as exports with use_cache=True take it:
# past_key_values.<i>.key/value inputs [batch, kv_heads, past, head_dim]
# before input_ids' tokens, present.<i>.key/value outputs (the past and
# the new tokens' keys and values), positions and the causal mask offset
# by the past's length. The past holds PAST_EXTRA more tokens than the
# input where the positions allow (a prefill continued, or with --seq 1 a
# decoding step).
CACHE_FAMILIES = ("llama_past",)
PAST_EXTRA = 3


def past_length(seq):
    return min(seq + PAST_EXTRA, MAX_POS - seq)


def split_family(family):
    """(the family whose graph a name builds, its float type)."""
    if family.endswith("_fp16"):
        return family[:-len("_fp16")], np.float16
    return family, np.float32
EXPORTERS = ("torchscript", "dynamo")
OPSET = {"torchscript": 17, "dynamo": 18}
I64, F32 = np.int64, np.float32


# ---------------------------------------------------------------- weights

def portable_uniform(bits, shape, std, mean=0.0):
    """float32 values uniform in [mean - std*sqrt(3), mean + std*sqrt(3)) (so of
    standard deviation `std`) from the raw output of the bit generator `bits`
    alone: bit generators' streams are stable across numpy releases, the
    distribution methods' are not.  Each value takes 32 bits (the low, then
    the high half of each 64-bit draw, on a little-endian machine), keeps the
    top 24 as an integer in [-2^23, 2^23), converted exactly to float32 and
    scaled by one float32 multiply: every step is exact or one IEEE rounding,
    so the bytes do not depend on numpy's version or SIMD paths."""
    n = int(np.prod(shape, dtype=np.int64))
    raw = bits.random_raw((n + 1) // 2)
    ints = (raw.view(np.uint32)[:n] >> np.uint32(8)).astype(np.int32)
    ints -= 1 << 23
    out = ints.astype(F32)
    del ints
    out *= F32(std * math.sqrt(3.0) / 2.0**23)
    if mean:
        out += F32(mean)
    return out.reshape(shape)


class LazyUniform:
    """portable_uniform(bits, shape, std, mean) of the PCG64(seed) stream
    advanced by `start` raw draws (where an eager make_weights would have
    drawn it), computed when numpy reads it (np.asarray) and not kept: a
    model larger than memory is written one tensor at a time.  `.T` is the
    transpose, also lazy."""

    dtype = np.dtype(F32)

    def __init__(self, seed, start, shape, std, mean=0.0, transposed=False):
        self.seed, self.start, self.std, self.mean = seed, start, std, mean
        self.base_shape, self.transposed = tuple(shape), transposed
        self.shape = self.base_shape[::-1] if transposed else self.base_shape
        self.ndim = len(self.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.nbytes = self.size * self.dtype.itemsize

    @property
    def T(self):
        return LazyUniform(self.seed, self.start, self.base_shape, self.std, self.mean,
                           not self.transposed)

    def __array__(self, dtype=None, copy=None):
        bits = np.random.PCG64(self.seed)
        bits.advance(self.start)
        out = portable_uniform(bits, self.base_shape, self.std, self.mean)
        if self.transposed:
            out = np.ascontiguousarray(out.T)
        return out if dtype is None else out.astype(dtype)


def make_weights(family, layers=2, seed=0):
    """Random float32 parameters under their Hugging Face state-dict names,
    in PyTorch layout (nn.Linear [out, in]; GPT-2 Conv1D [in, out]).
    Normal draws (std 0.02, norm gains 1 + 0.1 N) for the tiny size; uniform
    draws of the same standard deviations from PCG64(seed)'s raw bits for the
    others (portable_uniform), in the same order; LazyUniform tensors of
    those draws for a lazy size."""
    w = {}
    if SIZE.name in ("tiny", "peaked"):
        rng = np.random.default_rng(seed)

        def normal(name, *shape):
            w[name] = (0.02 * rng.standard_normal(shape)).astype(F32)

        def gain(name):
            w[name] = (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(F32)
    else:
        if sys.byteorder != "little":
            raise RuntimeError("portable weights assume a little-endian machine")
        bits = np.random.PCG64(seed)
        drawn = [0]                     # raw draws before the next tensor

        def uniform(shape, std, mean=0.0):
            if not SIZE.lazy:
                return portable_uniform(bits, shape, std, mean)
            tensor = LazyUniform(seed, drawn[0], shape, std, mean)
            drawn[0] += (tensor.size + 1) // 2
            return tensor

        def normal(name, *shape):
            w[name] = uniform(shape, 0.02)

        def gain(name):
            w[name] = uniform((HIDDEN,), 0.1, mean=1.0)

    def norm(name, bias=True):
        gain(name + ".weight")
        if bias:
            normal(name + ".bias", HIDDEN)

    def dense(name, n_in, n_out, bias=True, conv1d=False):
        normal(name + ".weight", *((n_in, n_out) if conv1d else (n_out, n_in)))
        if bias:
            normal(name + ".bias", n_out)

    if family in ZOO or family in ENCODER_FAMILIES or family == "t5":
        if SIZE.name in ("tiny", "peaked"):
            draw = lambda shape, std: (std * rng.standard_normal(shape)).astype(F32)
            unit = lambda size: (1 + 0.1 * rng.standard_normal(size)).astype(F32)
        else:
            draw = lambda shape, std: portable_uniform(bits, shape, std)
            unit = lambda size: portable_uniform(bits, (size,), 0.1, mean=1.0)
        if family in ZOO:
            return make_zoo_weights(ZOO[family], layers, draw, unit)
        if family == "t5":
            return make_t5_weights(layers, draw, unit)
        return make_encoder_weights(family, layers, draw, unit)
    if family == "bert":
        normal("embeddings.word_embeddings.weight", VOCAB, HIDDEN)
        normal("embeddings.position_embeddings.weight", MAX_POS, HIDDEN)
        normal("embeddings.token_type_embeddings.weight", TYPE_VOCAB, HIDDEN)
        norm("embeddings.LayerNorm")
        for i in range(layers):
            p = f"encoder.layer.{i}."
            for proj in ("query", "key", "value"):
                dense(p + "attention.self." + proj, HIDDEN, HIDDEN)
            dense(p + "attention.output.dense", HIDDEN, HIDDEN)
            norm(p + "attention.output.LayerNorm")
            dense(p + "intermediate.dense", HIDDEN, INTERMEDIATE)
            dense(p + "output.dense", INTERMEDIATE, HIDDEN)
            norm(p + "output.LayerNorm")
    elif family == "gpt2":
        normal("wte.weight", VOCAB, HIDDEN)
        normal("wpe.weight", MAX_POS, HIDDEN)
        for i in range(layers):
            p = f"h.{i}."
            norm(p + "ln_1")
            dense(p + "attn.c_attn", HIDDEN, 3 * HIDDEN, conv1d=True)
            dense(p + "attn.c_proj", HIDDEN, HIDDEN, conv1d=True)
            norm(p + "ln_2")
            dense(p + "mlp.c_fc", HIDDEN, INTERMEDIATE, conv1d=True)
            dense(p + "mlp.c_proj", INTERMEDIATE, HIDDEN, conv1d=True)
        norm("ln_f")
    elif family in ("llama",) + CACHE_FAMILIES:
        normal("embed_tokens.weight", VOCAB, HIDDEN)
        for i in range(layers):
            p = f"layers.{i}."
            norm(p + "input_layernorm", bias=False)
            dense(p + "self_attn.q_proj", HIDDEN, HEADS * HEAD_DIM, bias=False)
            dense(p + "self_attn.k_proj", HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
            dense(p + "self_attn.v_proj", HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
            dense(p + "self_attn.o_proj", HEADS * HEAD_DIM, HIDDEN, bias=False)
            norm(p + "post_attention_layernorm", bias=False)
            dense(p + "mlp.gate_proj", HIDDEN, INTERMEDIATE, bias=False)
            dense(p + "mlp.up_proj", HIDDEN, INTERMEDIATE, bias=False)
            dense(p + "mlp.down_proj", INTERMEDIATE, HIDDEN, bias=False)
        norm("norm", bias=False)
    else:
        raise ValueError(family)
    if SIZE.qk_std is not None:
        qk, vo = F32(SIZE.qk_std / 0.02), F32(SIZE.vo_std / 0.02)
        for name in list(w):
            if name.endswith((".query.weight", ".key.weight", "q_proj.weight",
                              "k_proj.weight")):
                w[name] = w[name] * qk
            elif name.endswith((".value.weight", "attention.output.dense.weight",
                                "v_proj.weight", "o_proj.weight",
                                "attn.c_proj.weight")):
                w[name] = w[name] * vo
            elif name.endswith("attn.c_attn.weight"):     # Conv1D [in, q|k|v]
                w[name] = np.concatenate([w[name][:, :2 * HIDDEN] * qk,
                                          w[name][:, 2 * HIDDEN:] * vo], axis=1)
    return w


def rope_inv_freq(dim=None):
    """LlamaRotaryEmbedding.inv_freq over `dim` rotated channels (the head
    dimension unless the rotary is partial), in float32 as transformers does."""
    dim = HEAD_DIM if dim is None else dim
    exponent = np.arange(0, dim, 2, dtype=I64).astype(F32) / F32(dim)
    return (F32(1.0) / (F32(ROPE_THETA) ** exponent)).astype(F32)


# ---------------------------------------------------------- graph builder

class GraphBuilder:
    """Appends ONNX nodes with exporter-like names.

    TorchScript: scoped names /<module path>/<Op>[_k], outputs <name>_output_0,
    constants as Constant nodes.  Dynamo: node_<Op>_<n> with values val_<n>,
    or node_<fx> / <fx>[_k] when `fx` is given; constants become shared
    initializers."""

    def __init__(self, exporter, weights, dtype=F32):
        self.exporter = exporter
        # The model's float type (model.half() before the export: float16),
        # its ONNX element type and torch.finfo(dtype).min, the masks' fill.
        self.nf = np.dtype(dtype).type
        self.ft = TensorProto.FLOAT16 if self.nf == np.float16 else TensorProto.FLOAT
        self.fmin = float(np.finfo(self.nf).min)
        self.half = self.nf == np.float16
        self.dynamo = exporter == "dynamo"
        self.ts = not self.dynamo
        self.opset = OPSET[exporter]
        self.w = weights
        self.nodes, self.inputs = [], []
        self.initializers = {}
        self._scope = ""
        self._taken = collections.Counter()
        self._n = 0
        self.cache = {}                 # dynamo: shared constants and shape lists
        self.extra_outputs = []         # (name, value, dims) after the first

    @contextlib.contextmanager
    def scope(self, path):
        """Module path such as 'encoder/layer.0/attention/self'."""
        saved, self._scope = self._scope, path
        try:
            yield
        finally:
            self._scope = saved

    def _unique(self, base):
        k = self._taken[base]
        self._taken[base] += 1
        return base if k == 0 else f"{base}_{k}"

    def op(self, op_type, *inputs, outputs=1, fx=None, **attrs):
        if self.dynamo:
            self._n += 1
            if fx:
                out = self._unique(fx)
                name = "node_" + out
            else:
                name, out = f"node_{op_type}_{self._n}", f"val_{self._n}"
            outs = [out] if outputs == 1 else [f"{out}_{i}" for i in range(outputs)]
        else:
            name = self._unique(f"/{self._scope}/{op_type}" if self._scope else f"/{op_type}")
            outs = [f"{name}_output_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=name, **attrs))
        return outs[0] if outputs == 1 else outs

    def initializer(self, name, array):
        """Records a constant; its TensorProto is made by model(), so that a
        transposed weight is copied only when it is written."""
        if name not in self.initializers:
            self.initializers[name] = (array if isinstance(array, LazyUniform)
                                       else np.asarray(array))
        return name

    def param(self, leaf):
        """A parameter of the current module, e.g. 'weight' in scope 'h.0/ln_1'."""
        name = self._scope.replace("/", ".") + "." + leaf
        return self.initializer(name, self.w[name])

    def folded(self, array, consumer):
        """A constant-folded tensor (a transposed weight, a folded buffer)."""
        self._n += 1
        name = f"onnx::{consumer}_{self._n}" if self.ts else f"val_{self._n}"
        return self.initializer(name, array)

    def const(self, value, dtype):
        array = np.array(value, dtype=dtype)
        if self.ts:
            return self.op("Constant", value=numpy_helper.from_array(array))
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self.cache:
            self._n += 1
            self.cache[key] = self.initializer(f"val_{self._n}", array)
        return self.cache[key]

    def i64(self, *values):
        return self.const(list(values), I64)

    def scalar(self, value, dtype=None):
        """A constant of the model's float type unless `dtype` is given."""
        return self.const(value, self.nf if dtype is None else dtype)

    def input(self, name, elem_type=TensorProto.INT64, dims=("batch", "sequence")):
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, list(dims)))
        return name

    def model(self, family, result, doc, external=None,
              output="last_hidden_state", width=None):
        """The ModelProto, whose output `output` is `result` of `width`
        (HIDDEN) features; with `external` (an ExternalData), its large
        float initializers refer to that file instead of holding their
        bytes."""
        renamed = {result: output}
        renamed.update({value: name for name, value, _ in self.extra_outputs})
        for node in self.nodes:                        # name the graph outputs
            node.output[:] = [renamed.get(o, o) for o in node.output]
            node.input[:] = [renamed.get(o, o) for o in node.input]
        out = helper.make_tensor_value_info(output, self.ft,
                                            ["batch", "sequence", width or HIDDEN])
        outputs = [out] + [helper.make_tensor_value_info(name, self.ft, dims)
                           for name, _, dims in self.extra_outputs]
        tensors = []
        for name, array in self.initializers.items():
            if external is not None and external.takes(array):
                tensors.append(external.add(name, array))
            else:
                if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
                    array = np.ascontiguousarray(array)
                tensors.append(numpy_helper.from_array(array, name))
        graph = helper.make_graph(self.nodes, "main_graph", self.inputs, outputs,
                                  initializer=tensors)
        model = helper.make_model(graph, ir_version=8, producer_name="mte-test-models",
                                  producer_version=f"{family}-{self.exporter}",
                                  opset_imports=[helper.make_opsetid("", self.opset)])
        model.doc_string = doc
        return model


class ExternalData:
    """One external data file: add() gives each tensor the next offset that
    is a multiple of EXTERNAL_ALIGN and returns its TensorProto (location,
    offset, length; no bytes); write() then writes the file in that order,
    zero-padded between tensors."""

    TYPES = {np.dtype(np.float32): TensorProto.FLOAT,
             np.dtype(np.float16): TensorProto.FLOAT16,
             np.dtype(np.float64): TensorProto.DOUBLE}

    def __init__(self, location):
        if os.path.basename(location) != location or location in ("", ".", ".."):
            raise ValueError(f"--external-data takes a file name, not a path: {location!r}")
        self.location = location
        self.entries = []               # (name, offset, array)
        self.size = 0

    def takes(self, array):
        return array.dtype in self.TYPES and array.nbytes >= EXTERNAL_MIN_BYTES

    def add(self, name, array):
        if sys.byteorder != "little":
            raise RuntimeError("external data is written little-endian")
        offset = -(-self.size // EXTERNAL_ALIGN) * EXTERNAL_ALIGN
        self.entries.append((name, offset, array))
        self.size = offset + array.nbytes
        tensor = TensorProto()
        tensor.name = name
        tensor.data_type = self.TYPES[array.dtype]
        tensor.dims.extend(array.shape)
        tensor.data_location = TensorProto.EXTERNAL
        for key, value in (("location", self.location), ("offset", str(offset)),
                           ("length", str(array.nbytes))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        return tensor

    def write(self, directory):
        """Writes the file into `directory`; returns [(name, offset, length)]."""
        with open(os.path.join(directory, self.location), "wb") as f:
            for name, offset, array in self.entries:
                f.write(bytes(offset - f.tell()))
                contiguous = np.ascontiguousarray(array)
                f.write(contiguous.reshape(-1).view(np.uint8).data)
        return [(name, offset, array.nbytes) for name, offset, array in self.entries]


# ------------------------------------------------------- shared patterns

def ts_size(g, x, axis):
    """x.size(axis) under tracing: Shape -> Gather(scalar index); a negative
    axis goes through Shape -> Slice([axis], [axis + 1], [0]) -> Squeeze."""
    shape = g.op("Shape", x)
    if axis >= 0:
        return g.op("Gather", shape, g.scalar(axis, I64), axis=0)
    end = INT64_MAX if axis == -1 else axis + 1
    return g.op("Squeeze", g.op("Slice", shape, g.i64(axis), g.i64(end), g.i64(0)), g.i64(0))


def ts_list(g, *items):
    """A traced int list: ints become Constant [v], traced sizes Unsqueeze(0)."""
    parts = [g.i64(v) if isinstance(v, int) else g.op("Unsqueeze", v, g.i64(0))
             for v in items]
    return g.op("Concat", *parts, axis=0)


def ts_expand(g, x, *sizes):
    """Tensor.expand(*sizes) via the TorchScript symbolic, which maps -1 to 1:
    Concat -> Reshape(-1) -> ConstantOfShape(1) * -1 -> Equal -> Where -> Expand."""
    size = g.op("Reshape", ts_list(g, *sizes), g.i64(-1), allowzero=0)
    ones = g.op("ConstantOfShape", g.op("Shape", size),
                value=numpy_helper.from_array(np.ones(1, I64)))
    minus_ones = g.op("Mul", ones, g.scalar(-1, I64))
    size = g.op("Where", g.op("Equal", size, minus_ones), ones, size)
    return g.op("Expand", x, size)


def ts_arange(g, end):
    """torch.arange(0, end) under tracing: Cast(int64) -> Range."""
    end = g.op("Cast", end, to=TensorProto.INT64)
    return g.op("Range", g.scalar(0, I64), end, g.scalar(1, I64))


def dyn_shape(g, *items):
    """A symbolic-int list under dynamo: 1-D size slices and int constants,
    one Concat per distinct list (the exporter's optimizer shares them)."""
    key = ("shape",) + items
    if key not in g.cache:
        g.cache[key] = g.op("Concat", *[g.i64(v) if isinstance(v, int) else v for v in items],
                            axis=0)
    return g.cache[key]


def reduce_mean_last(g, x, fx=None):
    if g.opset >= 18:
        return g.op("ReduceMean", x, g.i64(-1), keepdims=1, noop_with_empty_axes=0, fx=fx)
    return g.op("ReduceMean", x, axes=[-1], keepdims=1)


def embedding(g, path, ids):
    with g.scope(path):
        if g.ts:
            return g.op("Gather", g.param("weight"), ids)
        return g.op("Gather", g.param("weight"), ids, axis=0, fx="embedding")


def linear(g, path, x, bias=True):
    """nn.Linear: TorchScript MatMul(x, onnx::MatMul_n) + Add(bias, y);
    dynamo MatMul(x, val_n) + Add(y, bias) with the transpose folded."""
    with g.scope(path):
        name = path.replace("/", ".")
        wt = g.w[name + ".weight"].T           # made contiguous when written
        if g.ts:
            y = g.op("MatMul", x, g.folded(wt, "MatMul"))
            return g.op("Add", g.param("bias"), y) if bias else y
        if not bias:
            return g.op("MatMul", x, g.folded(wt, "MatMul"), fx="linear")
        y = g.op("MatMul", x, g.folded(wt, "MatMul"))
        return g.op("Add", y, g.param("bias"), fx="linear")


def layer_norm(g, path, x, eps, form):
    """'native': LayerNormalization.  'pow_div': ReduceMean, Sub, Pow 2,
    ReduceMean, Add eps, Sqrt, Div.  'mul_rsqrt': ReduceMean, Sub, Mul(d, d),
    ReduceMean, Add eps, Sqrt, Reciprocal, Mul.  Both end Mul(gamma), Add(beta)."""
    with g.scope(path):
        gamma, beta = g.param("weight"), g.param("bias")
        if form == "native":
            return g.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=eps)
        if g.half:      # torch._refs normalise in float32
            x = g.op("Cast", x, to=TensorProto.FLOAT, fx="_to_copy")
        centered = g.op("Sub", x, reduce_mean_last(g, x, fx="mean"))
        if form == "pow_div":
            var = reduce_mean_last(g, g.op("Pow", centered, g.scalar(2.0, F32)))
            normed = g.op("Div", centered,
                          g.op("Sqrt", g.op("Add", var, g.scalar(eps, F32))))
        else:
            var = reduce_mean_last(g, g.op("Mul", centered, centered))
            rstd = g.op("Reciprocal", g.op("Sqrt", g.op("Add", var, g.scalar(eps, F32))),
                        fx="rsqrt")
            normed = g.op("Mul", centered, rstd)
        if g.half:
            normed = g.op("Cast", normed, to=g.ft, fx="_to_copy")
        return g.op("Add", g.op("Mul", normed, gamma), beta, fx="layer_norm")


def rms_norm(g, path, x, one_plus=False):
    """LlamaRMSNorm: TorchScript keeps the float32 Casts and exports rsqrt as
    Div(1, Sqrt); dynamo drops the no-op casts and uses Reciprocal(Sqrt).
    one_plus: GemmaRMSNorm, whose gain is (1 + weight), applied after."""
    with g.scope(path):
        weight = g.param("weight")
        if one_plus:
            weight = g.op("Add", weight, g.scalar(1.0), fx="add")
        # hidden_states.to(torch.float32) ... .to(input_dtype): real casts
        # in a float16 model, no-ops that dynamo drops in a float32 one.
        casts = g.ts or g.half
        if casts:
            x = g.op("Cast", x, to=TensorProto.FLOAT, fx="_to_copy")
        var = reduce_mean_last(g, g.op("Pow", x, g.scalar(2.0, F32), fx="pow"), fx="mean")
        std = g.op("Sqrt", g.op("Add", var, g.scalar(EPS["llama"], F32)))
        if g.ts:
            inv = g.op("Div", g.scalar(1.0, F32), std)
        else:
            inv = g.op("Reciprocal", std, fx="rsqrt")
        y = g.op("Mul", x, inv)
        if casts:
            y = g.op("Cast", y, to=g.ft, fx="_to_copy")
        return g.op("Mul", weight, y)


def gelu_erf(g, x):
    if g.ts:        # aten::gelu symbolic: x * (erf(x / sqrt 2) + 1) * 0.5
        e = g.op("Erf", g.op("Div", x, g.scalar(math.sqrt(2.0))))
        return g.op("Mul", g.op("Mul", x, g.op("Add", e, g.scalar(1.0))), g.scalar(0.5))
    # torch._refs gelu: a * 0.5 * (1 + erf(a * M_SQRT1_2))
    half = g.op("Mul", x, g.scalar(0.5))
    e = g.op("Erf", g.op("Mul", x, g.scalar(0.7071067811865476)))
    return g.op("Mul", half, g.op("Add", e, g.scalar(1.0)), fx="gelu")


def gelu_tanh(g, x):
    """gelu_new 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))); x^3 is
    Pow(x, 3) under TorchScript and x*x*x (torch._refs) under dynamo."""
    half = g.op("Mul", x, g.scalar(0.5))
    cube = (g.op("Pow", x, g.scalar(3.0)) if g.ts
            else g.op("Mul", g.op("Mul", x, x), x))
    inner = g.op("Add", x, g.op("Mul", cube, g.scalar(0.044715)))
    t = g.op("Tanh", g.op("Mul", inner, g.scalar(math.sqrt(2.0 / math.pi))))
    return g.op("Mul", half, g.op("Add", t, g.scalar(1.0)))


def silu(g, x):
    return g.op("Mul", x, g.op("Sigmoid", x), fx="silu")


def gelu_mlp(g, fc_in, act, fc_out, x):
    """fc_out(gelu(fc_in(x))) with exact GELU, the activation in scope `act`
    (BERT, ViT, Whisper)."""
    h = linear(g, fc_in, x)
    with g.scope(act):
        h = gelu_erf(g, h)
    return linear(g, fc_out, h)


# -------------------------------------------------------------------- BERT

def bert_mask(g, mask, dims):
    """Additive [b, 1, 1|s, s] mask from attention_mask."""
    if g.ts:        # get_extended_attention_mask
        m = g.op("Unsqueeze", g.op("Unsqueeze", mask, g.i64(1)), g.i64(2))
        m = g.op("Sub", g.scalar(1.0), g.op("Cast", m, to=g.ft))
        return g.op("Mul", m, g.scalar(g.fmin))
    b1, s1 = dims   # _prepare_4d_attention_mask_for_sdpa -> _expand_mask
    m = g.op("Unsqueeze", mask, g.i64(1, 2), fx="unsqueeze")
    m = g.op("Expand", m, dyn_shape(g, b1, 1, s1, s1), fx="expand")
    inverted = g.op("Sub", g.scalar(1.0), g.op("Cast", m, to=g.ft), fx="rsub")
    as_bool = g.op("Cast", inverted, to=TensorProto.BOOL)
    return g.op("Where", as_bool, g.scalar(g.fmin), inverted, fx="masked_fill")


def sdpa(g, q, k, v, mask):
    """torchlib's aten::scaled_dot_product_attention with a float mask or
    (mask None) none."""
    sqrt_scale = g.scalar(math.sqrt(1.0 / math.sqrt(HEAD_DIM)))
    shape = g.op("Shape", k, start=0)
    last = g.op("Slice", shape, g.i64(-1), g.i64(INT64_MAX))
    second_last = g.op("Slice", shape, g.i64(-2), g.i64(-1))
    leading = g.op("Slice", shape, g.i64(INT64_MIN), g.i64(-2))
    k3 = g.op("Reshape", k, g.op("Concat", g.i64(-1), second_last, last, axis=0), allowzero=0)
    k3 = g.op("Transpose", k3, perm=[0, 2, 1])
    kt = g.op("Reshape", k3, g.op("Concat", leading, last, second_last, axis=0), allowzero=0)
    scores = g.op("MatMul", g.op("Mul", q, sqrt_scale), g.op("Mul", kt, sqrt_scale))
    if mask is None:        # _aten_scaled_dot_product_attention_no_mask_onnx
        return g.op("MatMul", g.op("Softmax", scores, axis=-1), v,
                    fx="scaled_dot_product_attention")
    probs = g.op("Softmax", g.op("Add", scores, mask), axis=-1)
    probs = g.op("Where", g.op("IsNaN", probs), g.scalar(0.0), probs)
    return g.op("MatMul", probs, v, fx="scaled_dot_product_attention")


def bert_attention(g, p, x, mask, dims):
    with g.scope(p + "/attention/self"):
        if g.ts:
            def heads(t, perm):     # transpose_for_scores
                shape = ts_list(g, ts_size(g, t, 0), ts_size(g, t, 1), HEADS, HEAD_DIM)
                return g.op("Transpose", g.op("Reshape", t, shape, allowzero=0), perm=perm)
            q = linear(g, p + "/attention/self/query", x)
            kt = heads(linear(g, p + "/attention/self/key", x), [0, 2, 3, 1])
            vh = heads(linear(g, p + "/attention/self/value", x), [0, 2, 1, 3])
            qh = heads(q, [0, 2, 1, 3])
            scores = g.op("Div", g.op("MatMul", qh, kt), g.scalar(math.sqrt(HEAD_DIM)))
            probs = g.op("Softmax", g.op("Add", scores, mask), axis=-1)
            ctx = g.op("Transpose", g.op("MatMul", probs, vh), perm=[0, 2, 1, 3])
            shape = ts_list(g, ts_size(g, ctx, 0), ts_size(g, ctx, 1), HIDDEN)
            ctx = g.op("Reshape", ctx, shape, allowzero=0)
        else:
            b1, s1 = dims
            shape = dyn_shape(g, b1, -1, HEADS, HEAD_DIM)
            hs = [g.op("Transpose", g.op("Reshape", linear(g, f"{p}/attention/self/{n}", x),
                                         shape, allowzero=1, fx="view"),
                       perm=[0, 2, 1, 3], fx="transpose")
                  for n in ("query", "key", "value")]
            ctx = g.op("Transpose", sdpa(g, *hs, mask), perm=[0, 2, 1, 3], fx="transpose")
            ctx = g.op("Reshape", ctx, dyn_shape(g, b1, s1, HIDDEN), allowzero=1, fx="view")
    return linear(g, p + "/attention/output/dense", ctx)


def build_bert(g, layers):
    eps = EPS["bert"]
    ln_form = "native" if g.ts else "pow_div"
    ids = g.input("input_ids")
    mask_in = g.input("attention_mask")
    types = g.input("token_type_ids")
    dims = None
    with g.scope("embeddings"):
        table = g.initializer("embeddings.position_ids", np.arange(MAX_POS, dtype=I64)[None])
        if g.ts:
            end = g.op("Unsqueeze", ts_size(g, ids, 1), g.i64(0))
        else:
            dims = (g.op("Shape", ids, start=0, end=1), g.op("Shape", ids, start=1, end=2))
            end = dims[1]
        positions = g.op("Slice", table, g.i64(0), end, g.i64(1), g.i64(1), fx="slice")
    x = embedding(g, "embeddings/word_embeddings", ids)
    with g.scope("embeddings"):
        x = g.op("Add", x, embedding(g, "embeddings/token_type_embeddings", types), fx="add")
        x = g.op("Add", x, embedding(g, "embeddings/position_embeddings", positions), fx="add")
    x = layer_norm(g, "embeddings/LayerNorm", x, eps, ln_form)
    mask = bert_mask(g, mask_in, dims)
    for i in range(layers):
        p = f"encoder/layer.{i}"
        h = bert_attention(g, p, x, mask, dims)
        with g.scope(p + "/attention/output"):
            h = g.op("Add", h, x, fx="add")
        x = layer_norm(g, p + "/attention/output/LayerNorm", h, eps, ln_form)
        h = gelu_mlp(g, p + "/intermediate/dense", p + "/intermediate/intermediate_act_fn",
                     p + "/output/dense", x)
        with g.scope(p + "/output"):
            h = g.op("Add", h, x, fx="add")
        x = layer_norm(g, p + "/output/LayerNorm", h, eps, ln_form)
    return x


# ------------------------------------------------------------------- GPT-2

def conv1d(g, path, x, n_out, dims):
    """HF Conv1D: addmm(bias, x.view(-1, n_in), weight).view(*x.shape[:-1], n_out)."""
    with g.scope(path):
        weight, bias = g.param("weight"), g.param("bias")
        if g.ts:
            b, s = ts_size(g, x, 0), ts_size(g, x, 1)
            x2 = g.op("Reshape", x, ts_list(g, -1, ts_size(g, x, -1)), allowzero=0)
            y = g.op("Gemm", x2, weight, bias, alpha=1.0, beta=1.0)
            return g.op("Reshape", y, ts_list(g, b, s, n_out), allowzero=0)
        n_in = g.w[path.replace("/", ".") + ".weight"].shape[0]
        x2 = g.op("Reshape", x, g.i64(-1, n_in), allowzero=1, fx="view")
        y = g.op("Add", g.op("MatMul", x2, weight, fx="mm"), bias, fx="add")
        return g.op("Reshape", y, dyn_shape(g, *dims, n_out), allowzero=1, fx="view")


def gpt2_attention(g, p, x, layer, dims, causal):
    qkv = conv1d(g, p + "/attn/c_attn", x, 3 * HIDDEN, dims)
    with g.scope(p + "/attn"):
        if g.ts:
            q, k, v = g.op("Split", qkv, g.i64(HIDDEN, HIDDEN, HIDDEN), axis=2, outputs=3)

            def split_heads(t):
                shape = ts_list(g, ts_size(g, t, 0), ts_size(g, t, 1), HEADS, HEAD_DIM)
                return g.op("Reshape", t, shape, allowzero=0)
            qh = g.op("Transpose", split_heads(q), perm=[0, 2, 1, 3])
            k4 = split_heads(k)
            kh = g.op("Transpose", k4, perm=[0, 2, 1, 3])          # read by key.size(-2)
            vh = g.op("Transpose", split_heads(v), perm=[0, 2, 1, 3])
            kt = g.op("Transpose", k4, perm=[0, 2, 3, 1])          # fused k.transpose(-1, -2)
            # attn / torch.full([], value.size(-1) ** 0.5): zeros([]) + the traced pow
            root = g.op("Pow", g.op("Cast", ts_size(g, vh, -1), to=TensorProto.FLOAT),
                        g.scalar(0.5, F32))
            if g.half:      # torch.full([], root, dtype=attn_weights.dtype)
                root = g.op("Cast", root, to=g.ft)
            zero = g.op("ConstantOfShape", g.const(np.zeros(0, I64), I64),
                        value=numpy_helper.from_array(np.zeros(1, g.nf)))
            scores = g.op("Div", g.op("MatMul", qh, kt), g.op("Add", zero, root))
            q_len, k_len = ts_size(g, qh, -2), ts_size(g, kh, -2)
            buffer = g.initializer(f"h.{layer}.attn.bias",
                                   np.tril(np.ones((MAX_POS, MAX_POS), bool))[None, None])
            start = g.op("Unsqueeze", g.op("Sub", k_len, q_len), g.i64(0))
            sliced = g.op("Slice", buffer, start, g.op("Unsqueeze", k_len, g.i64(0)),
                          g.i64(2), g.i64(1))
            sliced = g.op("Slice", sliced, g.i64(0), g.op("Unsqueeze", k_len, g.i64(0)),
                          g.i64(3), g.i64(1))
            scores = g.op("Cast", scores, to=g.ft)     # attn.to(attn.dtype)
            scores = g.op("Where", sliced, scores, g.scalar(g.fmin))
            probs = g.op("Cast", g.op("Softmax", scores, axis=-1), to=g.ft)
            ctx = g.op("Transpose", g.op("MatMul", probs, vh), perm=[0, 2, 1, 3])
            ctx = g.op("Reshape", ctx, ts_list(g, ts_size(g, ctx, 0), ts_size(g, ctx, 1), HIDDEN),
                       allowzero=0)
        else:
            q, k, v = g.op("Split", qkv, axis=2, num_outputs=3, outputs=3, fx="split")
            shape = dyn_shape(g, *dims, -1, HEAD_DIM)
            k4 = g.op("Reshape", k, shape, allowzero=1, fx="view")
            vh = g.op("Transpose", g.op("Reshape", v, shape, allowzero=1, fx="view"),
                      perm=[0, 2, 1, 3], fx="transpose")
            qh = g.op("Transpose", g.op("Reshape", q, shape, allowzero=1, fx="view"),
                      perm=[0, 2, 1, 3], fx="transpose")
            kh = g.op("Transpose", k4, perm=[0, 2, 1, 3], fx="transpose")
            kt = g.op("Transpose", kh, perm=[0, 1, 3, 2], fx="transpose")
            scores = g.op("Mul", g.op("MatMul", qh, kt, fx="matmul"),
                          g.scalar(1.0 / math.sqrt(HEAD_DIM)), fx="mul")
            probs = g.op("Softmax", g.op("Add", scores, causal, fx="add"), axis=-1, fx="softmax")
            ctx = g.op("Transpose", g.op("MatMul", probs, vh, fx="matmul"),
                       perm=[0, 2, 1, 3], fx="transpose")
    return conv1d(g, p + "/attn/c_proj", ctx, HIDDEN, dims)


def build_gpt2(g, layers):
    eps = EPS["gpt2"]
    ln_form = "native" if g.ts else "mul_rsqrt"
    ids = g.input("input_ids")
    dims = causal = None
    if g.ts:
        seq = ts_size(g, ids, 1)
        flat_ids = g.op("Reshape", ids, ts_list(g, -1, seq), allowzero=0)
        positions = g.op("Unsqueeze", ts_arange(g, seq), g.i64(0))
    else:
        dims = (g.op("Shape", ids, start=0, end=1), g.op("Shape", ids, start=1, end=2))
        seq = g.op("Squeeze", dims[1], fx="sym_size_int")
        flat_ids = g.op("Reshape", ids, dyn_shape(g, -1, dims[1]), allowzero=1, fx="view")
        arange = g.op("Range", g.scalar(0, I64), seq, g.scalar(1, I64), fx="arange")
        positions = g.op("Unsqueeze", arange, g.i64(0), fx="unsqueeze")
        # sdpa_mask / causal_mask_function: kv_idx <= q_idx, as additive bias
        rows = g.op("Unsqueeze", arange, g.i64(0, 1), fx="unsqueeze")
        q_idx = g.op("Unsqueeze", rows, g.i64(3), fx="unsqueeze")
        kv_idx = g.op("Unsqueeze", rows, g.i64(2), fx="unsqueeze")
        allowed = g.op("LessOrEqual", kv_idx, q_idx, fx="le")
        causal = g.op("Where", allowed, g.scalar(0.0), g.scalar(g.fmin), fx="where")
    x = g.op("Add", embedding(g, "wte", flat_ids), embedding(g, "wpe", positions), fx="add")
    for i in range(layers):
        p = f"h.{i}"
        h = layer_norm(g, p + "/ln_1", x, eps, ln_form)
        h = gpt2_attention(g, p, h, i, dims, causal)
        with g.scope(p):
            x = g.op("Add", h, x, fx="add")
        h = layer_norm(g, p + "/ln_2", x, eps, ln_form)
        h = conv1d(g, p + "/mlp/c_fc", h, INTERMEDIATE, dims)
        with g.scope(p + "/mlp/act"):
            h = gelu_tanh(g, h)
        h = conv1d(g, p + "/mlp/c_proj", h, HIDDEN, dims)
        with g.scope(p):
            x = g.op("Add", x, h, fx="add")
    x = layer_norm(g, "ln_f", x, eps, ln_form)
    if g.ts:        # hidden_states.view((-1,) + input_shape[1:] + (hidden,))
        x = g.op("Reshape", x, ts_list(g, -1, seq, ts_size(g, x, -1)), allowzero=0)
    return x


# ------------------------------------------------------------------- Llama

def rotate_half(g, x, dim=None):
    """cat((-x[..., d//2:], x[..., :d//2]), -1) over the last `dim` (default
    HEAD_DIM) channels.  TorchScript traces d//2 as Shape -> Gather(3) ->
    Div(2) -> Cast -> Cast (int floor_divide), shared by both Slices; dynamo
    folds it to a constant."""
    dim = HEAD_DIM if dim is None else dim
    if g.ts:
        d = g.op("Div", ts_size(g, x, 3), g.scalar(2, I64))
        d = g.op("Cast", g.op("Cast", d, to=TensorProto.INT64), to=TensorProto.INT64)
        half = lambda: g.op("Unsqueeze", d, g.i64(0))
        x2 = g.op("Slice", x, half(), g.i64(INT64_MAX), g.i64(3), g.i64(1))
        neg = g.op("Neg", x2)
        x1 = g.op("Slice", x, g.i64(0), half(), g.i64(3), g.i64(1))
        return g.op("Concat", neg, x1, axis=-1)
    x1 = g.op("Slice", x, g.i64(0), g.i64(dim // 2), g.i64(3), g.i64(1), fx="slice")
    x2 = g.op("Slice", x, g.i64(dim // 2), g.i64(INT64_MAX), g.i64(3), g.i64(1), fx="slice")
    return g.op("Concat", g.op("Neg", x2, fx="neg"), x1, axis=-1, fx="cat")


def apply_rope(g, x, cos, sin, dim=None):
    return g.op("Add", g.op("Mul", x, cos, fx="mul"),
                g.op("Mul", rotate_half(g, x, dim), sin, fx="mul"), fx="add")


def repeat_kv(g, x, dims, kv_heads=None):
    """x[:, :, None].expand(b, kv, n_rep, s, d).reshape(b, kv * n_rep, s, d)."""
    kv_heads = KV_HEADS if kv_heads is None else kv_heads
    n_rep = HEADS // kv_heads
    x5 = g.op("Unsqueeze", x, g.i64(2), fx="unsqueeze")
    if g.ts:
        b, kv, s, d = (ts_size(g, x, i) for i in range(4))
        x5 = ts_expand(g, x5, b, kv, n_rep, s, d)
        shape = ts_list(g, b, g.op("Mul", kv, g.scalar(n_rep, I64)), s, d)
        return g.op("Reshape", x5, shape, allowzero=0)
    b1, s1 = dims
    x5 = g.op("Expand", x5, dyn_shape(g, b1, kv_heads, n_rep, s1, HEAD_DIM), fx="expand")
    return g.op("Reshape", x5, dyn_shape(g, b1, HEADS, s1, HEAD_DIM), allowzero=1,
                fx="_unsafe_view")


def rotary_embedding(g, x, position_ids, dim=None):
    """LlamaRotaryEmbedding.forward -> (cos, sin), each [1, s, dim] (dim:
    the rotated channels, head_dim unless the rotary is partial)."""
    with g.scope("rotary_emb"):
        inv = rope_inv_freq(dim)[None, :, None]
        pos = g.op("Unsqueeze", position_ids, g.i64(1), fx="unsqueeze")
        pos = g.op("Cast", pos, to=TensorProto.FLOAT, fx="_to_copy")
        if g.ts:
            inv = ts_expand(g, g.folded(inv, "Expand"), ts_size(g, position_ids, 0), -1, 1)
            inv = g.op("Cast", inv, to=TensorProto.FLOAT)             # .float()
        else:
            inv = g.folded(inv, "Expand")
        freqs = g.op("Transpose", g.op("MatMul", inv, pos, fx="matmul"), perm=[0, 2, 1],
                     fx="transpose")
        emb = g.op("Concat", freqs, freqs, axis=-1, fx="cat")
        cos, sin = g.op("Cos", emb, fx="cos"), g.op("Sin", emb, fx="sin")
        if g.ts:        # * self.attention_scaling (1.0 for the default rope)
            cos, sin = (g.op("Mul", t, g.scalar(1.0, F32)) for t in (cos, sin))
        if g.half:      # cos.to(dtype=x.dtype)
            cos, sin = (g.op("Cast", t, to=g.ft, fx="_to_copy") for t in (cos, sin))
        return cos, sin


def llama_causal_mask(g, x, cache_position, seq, dims):
    if g.ts:    # LlamaModel._update_causal_mask without an attention_mask
        target = g.op("Add", seq, g.scalar(1, I64))   # past + sequence_length + 1
        full = g.op("ConstantOfShape", ts_list(g, seq, target),
                    value=numpy_helper.from_array(np.array([g.fmin], g.nf)))
        mask = g.op("Trilu", full, g.scalar(1, I64), upper=1)
        later = g.op("Greater", ts_arange(g, target),
                     g.op("Reshape", cache_position, g.i64(-1, 1), allowzero=0))
        mask = g.op("Mul", mask, g.op("Cast", later, to=g.ft))
        mask = g.op("Unsqueeze", g.op("Unsqueeze", mask, g.i64(0)), g.i64(1))
        return ts_expand(g, mask, ts_size(g, x, 0), 1, -1, -1)
    rows = g.op("Unsqueeze", cache_position, g.i64(0, 1), fx="unsqueeze")
    q_idx = g.op("Unsqueeze", rows, g.i64(3), fx="unsqueeze")
    kv_idx = g.op("Unsqueeze", rows, g.i64(2), fx="unsqueeze")
    allowed = g.op("GreaterOrEqual", q_idx, kv_idx, fx="ge")
    return g.op("Where", allowed, g.scalar(0.0), g.scalar(g.fmin), fx="where")


def llama_attention(g, p, x, cos, sin, mask, dims, past=None):
    """LlamaAttention; with `past` ((key, value) of the cache, and the
    total length's dims), the cache's keys and values come first and the
    layer's present.<i>.key/value are recorded as outputs."""
    with g.scope(p + "/self_attn"):
        if g.ts:
            b, s = ts_size(g, x, 0), ts_size(g, x, 1)
            q = linear(g, p + "/self_attn/q_proj", x, bias=False)
            k = linear(g, p + "/self_attn/k_proj", x, bias=False)
            v = linear(g, p + "/self_attn/v_proj", x, bias=False)
            q, k, v = (g.op("Transpose", g.op("Reshape", t, ts_list(g, b, s, n, HEAD_DIM),
                                              allowzero=0), perm=[0, 2, 1, 3])
                       for t, n in ((q, HEADS), (k, KV_HEADS), (v, KV_HEADS)))
        else:
            shape = dyn_shape(g, *dims, -1, HEAD_DIM)
            q, k, v = (g.op("Transpose",
                            g.op("Reshape", linear(g, f"{p}/self_attn/{n}", x, bias=False),
                                 shape, allowzero=1, fx="view"),
                            perm=[0, 2, 1, 3], fx="transpose")
                       for n in ("q_proj", "k_proj", "v_proj"))
        cos = g.op("Unsqueeze", cos, g.i64(1), fx="unsqueeze")
        sin = g.op("Unsqueeze", sin, g.i64(1), fx="unsqueeze")
        q, k = apply_rope(g, q, cos, sin), apply_rope(g, k, cos, sin)
        kv_dims = dims
        if past:
            (past_k, past_v), kv_dims = past
            # DynamicCache.update: torch.cat([past, new], dim=-2)
            k = g.op("Concat", past_k, k, axis=-2, fx="cat")
            v = g.op("Concat", past_v, v, axis=-2, fx="cat")
            layer = p.split(".")[-1]
            for kind, t in (("key", k), ("value", v)):
                g.extra_outputs.append((f"present.{layer}.{kind}", t,
                                        ["batch", KV_HEADS, "total", HEAD_DIM]))
        k, v = repeat_kv(g, k, kv_dims), repeat_kv(g, v, kv_dims)
        scores = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2], fx="transpose"),
                      fx="matmul")
        if g.ts:
            scores = g.op("Div", scores, g.scalar(math.sqrt(HEAD_DIM)))
            end = g.op("Unsqueeze", ts_size(g, k, 2), g.i64(0))
            mask = g.op("Slice", mask, g.i64(0), end, g.i64(3), g.i64(1))
            probs = g.op("Softmax", g.op("Add", scores, mask), axis=-1)
            # softmax(..., dtype=torch.float32).to(query.dtype)
            probs = g.op("Cast", g.op("Cast", probs, to=TensorProto.FLOAT), to=g.ft)
        else:
            scores = g.op("Mul", scores, g.scalar(1.0 / math.sqrt(HEAD_DIM)), fx="mul")
            probs = g.op("Softmax", g.op("Add", scores, mask, fx="add"), axis=-1, fx="softmax")
        ctx = g.op("Transpose", g.op("MatMul", probs, v, fx="matmul"), perm=[0, 2, 1, 3],
                   fx="transpose")
        shape = ts_list(g, b, s, -1) if g.ts else dyn_shape(g, *dims, -1)
        ctx = g.op("Reshape", ctx, shape, allowzero=0 if g.ts else 1, fx="view")
    return linear(g, p + "/self_attn/o_proj", ctx, bias=False)


def decoder_positions(g, ids, x):
    """(dims, seq, cache_position, position_ids) of a decoder: dynamo takes
    the sizes of input_ids once as Shape slices; TorchScript traces
    x.size(1) of the embeddings `x`."""
    dims = None
    if g.ts:
        seq = ts_size(g, x, 1)
        cache_position = ts_arange(g, seq)
    else:
        dims = (g.op("Shape", ids, start=0, end=1), g.op("Shape", ids, start=1, end=2))
        seq = g.op("Squeeze", dims[1], fx="sym_size_int")
        cache_position = g.op("Range", g.scalar(0, I64), seq, g.scalar(1, I64), fx="arange")
    position_ids = g.op("Unsqueeze", cache_position, g.i64(0), fx="unsqueeze")
    return dims, seq, cache_position, position_ids


def past_positions(g, ids, pasts):
    """(dims, total dims, cache_position, position_ids, mask) of a decoder
    continuing a cache of `pasts`' length P: positions P .. P + S - 1, and
    query i sees keys 0 .. P + i (the exporters trace the same Shape and
    Range ops; the mask as LlamaModel's sdpa mask function builds it)."""
    b1 = g.op("Shape", ids, start=0, end=1)
    s1 = g.op("Shape", ids, start=1, end=2)
    p1 = g.op("Shape", pasts[0], start=2, end=3)
    t1 = g.op("Add", p1, s1, fx="add")
    start, total = g.op("Squeeze", p1), g.op("Squeeze", t1)
    cache_position = g.op("Range", start, total, g.scalar(1, I64), fx="arange")
    position_ids = g.op("Unsqueeze", cache_position, g.i64(0), fx="unsqueeze")
    q_idx = g.op("Unsqueeze", cache_position, g.i64(0, 1, 3), fx="unsqueeze")
    kv_idx = g.op("Unsqueeze", g.op("Range", g.scalar(0, I64), total, g.scalar(1, I64)),
                  g.i64(0, 1, 2), fx="unsqueeze")
    allowed = g.op("GreaterOrEqual", q_idx, kv_idx, fx="ge")
    mask = g.op("Where", allowed, g.scalar(0.0), g.scalar(g.fmin), fx="where")
    return (b1, s1), (b1, t1), position_ids, mask


def build_llama(g, layers, past=False):
    ids = g.input("input_ids")
    pasts = []
    if past:
        for i in range(layers):
            for kind in ("key", "value"):
                pasts.append(g.input(f"past_key_values.{i}.{kind}", g.ft,
                                     ("batch", KV_HEADS, "past", HEAD_DIM)))
    x = embedding(g, "embed_tokens", ids)
    if past:
        dims, total_dims, position_ids, mask = past_positions(g, ids, pasts)
    else:
        dims, seq, cache_position, position_ids = decoder_positions(g, ids, x)
        mask = llama_causal_mask(g, x, cache_position, seq, dims)
    cos, sin = rotary_embedding(g, x, position_ids)
    for i in range(layers):
        p = f"layers.{i}"
        h = rms_norm(g, p + "/input_layernorm", x)
        layer_past = ((pasts[2 * i], pasts[2 * i + 1]), total_dims) if past else None
        h = llama_attention(g, p, h, cos, sin, mask, dims, layer_past)
        with g.scope(p):
            x = g.op("Add", x, h, fx="add")
        h = rms_norm(g, p + "/post_attention_layernorm", x)
        gate = linear(g, p + "/mlp/gate_proj", h, bias=False)
        with g.scope(p + "/mlp/act_fn"):
            gate = silu(g, gate)
        up = linear(g, p + "/mlp/up_proj", h, bias=False)
        with g.scope(p + "/mlp"):
            h = g.op("Mul", gate, up, fx="mul")
        h = linear(g, p + "/mlp/down_proj", h, bias=False)
        with g.scope(p):
            x = g.op("Add", x, h, fx="add")
    return rms_norm(g, "norm", x)


# ---------------------------------------------------------------- model zoo
#
# Decoder families whose blocks the three above lack, in the same two
# exporters' node patterns (the parts shared with GPT-2 and Llama use the
# same helpers).  Each is a Decoder configuration; build_decoder and the
# reference follow it.  Their Q/K projections are drawn with std ZOO_QK_STD
# and the others with ZOO_STD, so that attention is peaked at the fixture
# size (score std about 1.4 at hidden 64, head 16) and a wrong rotary, mask
# or head mapping moves the output far beyond the tolerance.

class Decoder(collections.namedtuple(
        "Decoder", "norm parallel qkv qkv_bias o_bias rotary rotary_dim mlp "
                   "mlp_bias kv_heads qk_norm embed_scale window padding names "
                   "positions pos_offset embed_norm q_scaled mask_form softcap sandwich "
                   "window_every",
        defaults=("rotary", 0, False, False, None, None, False, 1))):
    """norm: "layer" | "rms" | "rms1p" (Gemma's (1 + w) gain).
    parallel: None (x += attn(n1(x)); x += mlp(n2(x))), "shared" (one norm
    feeds both, x = attn + mlp + x: GPT-J, Phi) or "two_norms" (GPT-NeoX's
    use_parallel_residual: x = mlp(n2(x)) + attn(n1(x)) + x).
    qkv: "separate" (q/k/v projections), "packed_heads" (NeoX's and
    BLOOM's query_key_value viewed [b, s, heads, 3 * d] and chunked),
    "fused_slices" (Phi-3's qkv_proj: rows [q | k | v], sliced on the last
    axis) or "fused_heads" (Falcon's multi-query query_key_value viewed
    [b, s, heads + 2 * kv_heads, d], sliced on the heads axis with negative
    bounds).
    rotary: "half" (rotate_half) or "interleaved" (GPT-J's
    rotate_every_two), over the first rotary_dim channels of each head.
    rotary: "half" (rotate_half) or "interleaved" (GPT-J's
    rotate_every_two), or None without rotary positions.
    mlp: "gelu_tanh" | "gelu_erf" | "relu" (OPT) | "quick_gelu" (CLIP's
    x * sigmoid(1.702 x)) (fc_in, act, fc_out), "swiglu" | "geglu"
    (down(act(gate) * up)) or "gate_up" (Phi-3: one gate_up_proj, chunked,
    down(up * silu(gate))).  window: sliding-window size (Mistral) or None.
    padding: an attention_mask input merged with the causal mask.
    names: the Hugging Face module names (see ZOO_NAMES).
    positions: "rotary", "alibi" (BLOOM's per-head linear bias slope_h * j
    added to the scaled scores) or "learned" (an embed_positions table read
    at position + pos_offset: OPT's offset of 2, CLIP's 0).  embed_norm: a
    LayerNorm on the embeddings (BLOOM's word_embeddings_layernorm).
    q_scaled: the query projection scaled by head_dim ** -0.5 before the
    product and the scores left unscaled (OPT, CLIP, BART).
    mask_form: None, or "packed": transformers 5's causal mask as its
    create_causal_mask builds it under tracing when position_ids is given
    and attention_mask is not (a plain export): the causal function AND
    the packed-sequence one, psm[b, q] == psm[b, kv] with psm the cumulative
    count of position jumps, indexed by broadcast index tensors (GatherND).
    softcap: Gemma 2's attention logit softcapping, cap * tanh(s / cap) of
    the scaled scores before the mask, or None.  sandwich: Gemma 2's norms
    after the attention and the MLP too (post_attention_layernorm,
    pre_feedforward_layernorm, post_feedforward_layernorm).  window_every:
    with a window, the layers that slide it (Gemma 2: every other one, the
    first among them; the rest attend globally)."""


ZOO_NAMES = {
    "gptj": dict(embed="wte", layer="h.{}", norm1="ln_1", attn="attn", q="q_proj",
                 k="k_proj", v="v_proj", o="out_proj", mlp="mlp", fc_in="fc_in",
                 fc_out="fc_out", final="ln_f"),
    "neox": dict(embed="embed_in", layer="layers.{}", norm1="input_layernorm",
                 norm2="post_attention_layernorm", attn="attention", qkv="query_key_value",
                 o="dense", mlp="mlp", fc_in="dense_h_to_4h", fc_out="dense_4h_to_h",
                 final="final_layer_norm"),
    "phi": dict(embed="embed_tokens", layer="layers.{}", norm1="input_layernorm",
                attn="self_attn", q="q_proj", k="k_proj", v="v_proj", o="dense", mlp="mlp",
                fc_in="fc1", fc_out="fc2", final="final_layernorm"),
    "llama": dict(embed="embed_tokens", layer="layers.{}", norm1="input_layernorm",
                  norm2="post_attention_layernorm", attn="self_attn", q="q_proj",
                  k="k_proj", v="v_proj", o="o_proj", mlp="mlp", gate="gate_proj",
                  up="up_proj", down="down_proj", final="norm", q_norm="q_norm",
                  k_norm="k_norm"),
    "gemma2": dict(embed="embed_tokens", layer="layers.{}", norm1="input_layernorm",
                   post_attn="post_attention_layernorm", norm2="pre_feedforward_layernorm",
                   post_mlp="post_feedforward_layernorm", attn="self_attn", q="q_proj",
                   k="k_proj", v="v_proj", o="o_proj", mlp="mlp", gate="gate_proj",
                   up="up_proj", down="down_proj", final="norm"),
    "bloom": dict(embed="word_embeddings", embed_norm="word_embeddings_layernorm",
                  layer="h.{}", norm1="input_layernorm", norm2="post_attention_layernorm",
                  attn="self_attention", qkv="query_key_value", o="dense", mlp="mlp",
                  fc_in="dense_h_to_4h", fc_out="dense_4h_to_h", final="ln_f"),
    "opt": dict(embed="embed_tokens", pos="embed_positions", layer="layers.{}",
                norm1="self_attn_layer_norm", norm2="final_layer_norm", attn="self_attn",
                q="q_proj", k="k_proj", v="v_proj", o="out_proj", mlp="mlp", fc_in="fc1",
                fc_out="fc2", final="final_layer_norm"),
    "falcon": dict(embed="word_embeddings", layer="h.{}", norm1="input_layernorm",
                   attn="self_attention", qkv="query_key_value", o="dense", mlp="mlp",
                   fc_in="dense_h_to_4h", fc_out="dense_4h_to_h", final="ln_f"),
    "phi3": dict(embed="embed_tokens", layer="layers.{}", norm1="input_layernorm",
                 norm2="post_attention_layernorm", attn="self_attn", qkv="qkv_proj",
                 o="o_proj", mlp="mlp", gate_up="gate_up_proj", down="down_proj",
                 final="norm"),
    "clip_text": dict(embed="token_embedding", pos="position_embedding", layer="layers.{}",
                      norm1="layer_norm1", norm2="layer_norm2", attn="self_attn",
                      q="q_proj", k="k_proj", v="v_proj", o="out_proj", mlp="mlp",
                      fc_in="fc1", fc_out="fc2", final="final_layer_norm"),
}

# Tiny-size configurations (HEADS 4 of HEAD_DIM 16): partial rotary over half
# of each head for GPT-J and Phi (rotary_dim 64 of 256 in GPT-J 6B, 32 of 80
# in Phi-2), a quarter for NeoX (Pythia's rotary_pct 0.25).
ZOO = {
    "gptj": Decoder("layer", "shared", "separate", False, False, "interleaved", 8,
                    "gelu_tanh", True, 4, False, None, None, False, ZOO_NAMES["gptj"]),
    "neox": Decoder("layer", "two_norms", "packed_heads", True, True, "half", 4,
                    "gelu_erf", True, 4, False, None, None, False, ZOO_NAMES["neox"]),
    "phi": Decoder("layer", "shared", "separate", True, True, "half", 8,
                   "gelu_tanh", True, 4, False, None, None, False, ZOO_NAMES["phi"]),
    "qwen3": Decoder("rms", None, "separate", False, False, "half", 16,
                     "swiglu", False, 2, True, None, None, False, ZOO_NAMES["llama"]),
    "gemma": Decoder("rms1p", None, "separate", False, False, "half", 16,
                     "geglu", False, 1, False, True, None, False, ZOO_NAMES["llama"]),
    "mistral": Decoder("rms", None, "separate", False, False, "half", 16,
                       "swiglu", False, 2, False, None, 6, False, ZOO_NAMES["llama"]),
    "llama_padded": Decoder("rms", None, "separate", False, False, "half", 16,
                            "swiglu", False, 2, False, None, None, True,
                            ZOO_NAMES["llama"]),
    # StableLM 2: LayerNorm, Q/K/V biases, rotate-half rotary over a
    # quarter of each head (partial_rotary_factor 0.25) and grouped-query
    # attention (2 key/value heads) together.
    # A Llama exported as transformers 5 masks it without an attention_mask
    # input: causal AND same packed sequence.
    "llama_packed": Decoder("rms", None, "separate", False, False, "half", 16,
                            "swiglu", False, 2, False, None, None, False,
                            ZOO_NAMES["llama"], mask_form="packed"),
    # Gemma 2: Gemma's block with attention logit softcapping, norms after
    # the attention and the MLP too, a sliding window every other layer.
    "gemma2": Decoder("rms1p", None, "separate", False, False, "half", 16,
                      "geglu", False, 2, False, True, 6, False, ZOO_NAMES["gemma2"],
                      softcap=5.0, sandwich=True, window_every=2),
    "stablelm": Decoder("layer", None, "separate", True, False, "half", 4,
                        "swiglu", False, 2, False, None, None, False,
                        ZOO_NAMES["llama"]),
    # BLOOM: ALiBi instead of rotary, a LayerNorm on the embeddings, the
    # packed per-head query_key_value, tanh GELU, biases everywhere.
    "bloom": Decoder("layer", None, "packed_heads", True, True, None, 0,
                     "gelu_tanh", True, 4, False, None, None, False, ZOO_NAMES["bloom"],
                     positions="alibi", embed_norm=True),
    # OPT: learned positions at offset 2, the query scaled before the
    # product, ReLU MLP.
    "opt": Decoder("layer", None, "separate", True, True, None, 0,
                   "relu", True, 4, False, None, None, False, ZOO_NAMES["opt"],
                   positions="learned", pos_offset=2, q_scaled=True),
    # Falcon-7B: one LayerNorm feeding parallel attention and MLP, multi-query
    # attention from one fused projection viewed per head, exact GELU, no
    # biases.
    "falcon": Decoder("layer", "shared", "fused_heads", False, False, "half", 16,
                      "gelu_erf", False, 1, False, None, None, False, ZOO_NAMES["falcon"]),
    # Phi-3: fused qkv_proj sliced on the last axis (grouped-query), fused
    # gate_up_proj chunked into up * silu(gate).
    "phi3": Decoder("rms", None, "fused_slices", False, False, "half", 16,
                    "gate_up", False, 2, False, None, None, False, ZOO_NAMES["phi3"]),
    # CLIP's text encoder: causal, learned positions, quick GELU.
    "clip_text": Decoder("layer", None, "separate", True, True, None, 0,
                         "quick_gelu", True, 4, False, None, None, False,
                         ZOO_NAMES["clip_text"], positions="learned"),
}
ZOO_STD, ZOO_QK_STD = 0.05, 0.15
ZOO_EPS = {"layer": 1e-5, "rms": 1e-6, "rms1p": 1e-6}


def make_zoo_weights(cfg, layers, normal, gain):
    """The parameters of a zoo family in the order build_decoder reads them."""
    w = {}
    n = cfg.names

    def dense(name, n_in, n_out, bias, std=ZOO_STD):
        w[name + ".weight"] = normal((n_out, n_in), std)
        if bias:
            w[name + ".bias"] = normal((n_out,), ZOO_STD)

    def norm(name, size=HIDDEN):
        w[name + ".weight"] = (normal((size,), 0.1) if cfg.norm == "rms1p"
                               else gain(size))
        if cfg.norm == "layer":
            w[name + ".bias"] = normal((size,), ZOO_STD)

    w[n["embed"] + ".weight"] = normal((VOCAB, HIDDEN), 0.02)
    if cfg.positions == "learned":
        w[n["pos"] + ".weight"] = normal((MAX_POS + cfg.pos_offset, HIDDEN), 0.02)
    if cfg.embed_norm:
        norm(n["embed_norm"])
    kv = cfg.kv_heads * HEAD_DIM
    for i in range(layers):
        p = n["layer"].format(i) + "."
        a = p + n["attn"] + "."
        norm(p + n["norm1"])
        if cfg.qkv == "packed_heads":
            # [heads, 3, head_dim] rows: q, k, v of head 0, then of head 1...
            std = np.array([ZOO_QK_STD, ZOO_QK_STD, ZOO_STD], F32)
            rows = np.repeat(np.tile(std, HEADS), HEAD_DIM)
            w[a + n["qkv"] + ".weight"] = (normal((3 * HIDDEN, HIDDEN), 1.0)
                                           * rows[:, None]).astype(F32)
            w[a + n["qkv"] + ".bias"] = normal((3 * HIDDEN,), ZOO_STD)
        elif cfg.qkv in ("fused_slices", "fused_heads"):
            # rows [q | k | v]
            rows = np.concatenate([np.full(HEADS * HEAD_DIM + kv, ZOO_QK_STD, F32),
                                   np.full(kv, ZOO_STD, F32)])
            w[a + n["qkv"] + ".weight"] = (normal((rows.size, HIDDEN), 1.0)
                                           * rows[:, None]).astype(F32)
            if cfg.qkv_bias:
                w[a + n["qkv"] + ".bias"] = normal((rows.size,), ZOO_STD)
        else:
            dense(a + n["q"], HIDDEN, HEADS * HEAD_DIM, cfg.qkv_bias, ZOO_QK_STD)
            dense(a + n["k"], HIDDEN, kv, cfg.qkv_bias, ZOO_QK_STD)
            dense(a + n["v"], HIDDEN, kv, cfg.qkv_bias)
        if cfg.qk_norm:
            norm(a + n["q_norm"], HEAD_DIM)
            norm(a + n["k_norm"], HEAD_DIM)
        dense(a + n["o"], HEADS * HEAD_DIM, HIDDEN, cfg.o_bias)
        if cfg.sandwich:
            norm(p + n["post_attn"])
        if cfg.parallel != "shared":
            norm(p + n["norm2"])
        if cfg.sandwich:
            norm(p + n["post_mlp"])
        m = p + n["mlp"] + "."
        if cfg.mlp in ("swiglu", "geglu"):
            dense(m + n["gate"], HIDDEN, INTERMEDIATE, cfg.mlp_bias)
            dense(m + n["up"], HIDDEN, INTERMEDIATE, cfg.mlp_bias)
            dense(m + n["down"], INTERMEDIATE, HIDDEN, cfg.mlp_bias)
        elif cfg.mlp == "gate_up":
            dense(m + n["gate_up"], HIDDEN, 2 * INTERMEDIATE, cfg.mlp_bias)
            dense(m + n["down"], INTERMEDIATE, HIDDEN, cfg.mlp_bias)
        else:
            dense(m + n["fc_in"], HIDDEN, INTERMEDIATE, cfg.mlp_bias)
            dense(m + n["fc_out"], INTERMEDIATE, HIDDEN, cfg.mlp_bias)
    norm(n["final"])
    return w


def gptj_sincos(rotary_dim):
    """GPT-J's embed_positions buffer: cat(sin, cos) of position x inv_freq,
    [MAX_POS, rotary_dim], computed in float32 (create_sinusoidal_positions)."""
    inv = rope_inv_freq(rotary_dim)
    angles = np.einsum("i,j->ij", np.arange(MAX_POS, dtype=F32), inv).astype(F32)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1).astype(F32)


def rotate_every_two(g, x):
    """GPT-J: stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2)."""
    even = g.op("Slice", x, g.i64(0), g.i64(INT64_MAX), g.i64(3), g.i64(2), fx="slice")
    odd = g.op("Slice", x, g.i64(1), g.i64(INT64_MAX), g.i64(3), g.i64(2), fx="slice")
    pair = g.op("Concat", g.op("Unsqueeze", g.op("Neg", odd, fx="neg"), g.i64(-1), fx="unsqueeze"),
                g.op("Unsqueeze", even, g.i64(-1), fx="unsqueeze"), axis=-1, fx="stack")
    if g.ts:
        shape = ts_list(g, ts_size(g, x, 0), ts_size(g, x, 1), ts_size(g, x, 2), -1)
        return g.op("Reshape", pair, shape, allowzero=0)
    return g.op("Reshape", pair, g.i64(0, 0, 0, -1), allowzero=0, fx="flatten")


def repeat_interleave_last(g, t):
    """torch.repeat_interleave(t, 2, dim=-1) of a 4-D table: Unsqueeze(-1) ->
    Expand(.., 2) -> Reshape(.., -1), as the exporters decompose it."""
    t5 = g.op("Unsqueeze", t, g.i64(-1), fx="unsqueeze")
    t5 = g.op("Expand", t5, g.i64(1, 1, 1, 1, 2), fx="expand")
    return g.op("Reshape", t5, g.i64(0, 0, 0, -1), allowzero=0, fx="repeat_interleave")


def partial_rotary(g, t, dim, rotate):
    """rotate(t[..., :dim]) concatenated with t[..., dim:], or rotate(t)."""
    if dim == HEAD_DIM:
        return rotate(t)
    rot = g.op("Slice", t, g.i64(0), g.i64(dim), g.i64(3), g.i64(1), fx="slice")
    keep = g.op("Slice", t, g.i64(dim), g.i64(INT64_MAX), g.i64(3), g.i64(1), fx="slice")
    return g.op("Concat", rotate(rot), keep, axis=-1, fx="cat")


def heads_view(g, t, n, dims):
    """t [b, s, n * d] viewed [b, s, n, d]."""
    if g.ts:
        shape = ts_list(g, ts_size(g, t, 0), ts_size(g, t, 1), n, HEAD_DIM)
        return g.op("Reshape", t, shape, allowzero=0)
    return g.op("Reshape", t, dyn_shape(g, *dims, n, HEAD_DIM), allowzero=1, fx="view")


def packed_causal_mask(g, x, cache_position, seq, dims):
    """transformers 5's create_causal_mask under tracing with position_ids
    (cache_position.unsqueeze(0)) and no attention_mask, as an additive
    [b, 1, s, s] mask: find_packed_sequence_indices' psm (the cumulative
    count of steps other than 1 between consecutive positions, after a
    dummy first - 1) and and_masks(causal, psm[b, q] == psm[b, kv]) on
    broadcast index tensors, which torch's aten::index exports as one
    GatherND per lookup."""
    if g.ts:
        batch = ts_size(g, x, 0)
        batch_1d = g.op("Unsqueeze", batch, g.i64(0))
    else:
        batch_1d = dims[0]
        batch = g.op("Squeeze", batch_1d, fx="sym_size_int")
    pos = g.op("Unsqueeze", cache_position, g.i64(0), fx="unsqueeze")
    pos = g.op("Expand", pos, g.op("Concat", batch_1d, g.i64(1), axis=0), fx="expand")
    first = g.op("Sub", g.op("Slice", pos, g.i64(0), g.i64(1), g.i64(1), fx="slice"),
                 g.scalar(1, I64), fx="sub")
    prev = g.op("Concat", first, g.op("Slice", pos, g.i64(0), g.i64(-1), g.i64(1),
                                      fx="slice"), axis=1, fx="cat")
    jump = g.op("Not", g.op("Equal", g.op("Sub", pos, prev, fx="diff"), g.scalar(1, I64),
                            fx="eq"), fx="logical_not")
    psm = g.op("CumSum", g.op("Cast", jump, to=TensorProto.INT64, fx="_to_copy"),
               g.scalar(-1, I64), fx="cumsum")
    arange = lambda end: g.op("Range", g.scalar(0, I64), end, g.scalar(1, I64),
                              fx="arange")
    batch_idx = g.op("Reshape", arange(batch), g.i64(-1, 1, 1, 1), fx="view")
    q_idx = g.op("Reshape", cache_position, g.i64(1, 1, -1, 1), fx="view")
    kv_idx = g.op("Reshape", arange(seq), g.i64(1, 1, 1, -1), fx="view")

    def lookup(rows, cols):             # psm[rows, cols], indices broadcast
        common = g.op("Shape", g.op("Add", rows, cols, fx="add"), fx="shape")
        idx = [g.op("Unsqueeze", g.op("Expand", t, common, fx="expand"), g.i64(-1),
                    fx="unsqueeze") for t in (rows, cols)]
        return g.op("GatherND", psm, g.op("Concat", *idx, axis=-1, fx="stack"),
                    fx="index")
    same = g.op("Equal", lookup(batch_idx, q_idx), lookup(batch_idx, kv_idx), fx="eq")
    causal = g.op("LessOrEqual", kv_idx, q_idx, fx="le")
    allowed = g.op("And", causal, same, fx="and")
    return g.op("Where", allowed, g.scalar(0.0), g.scalar(g.fmin), fx="where")


def zoo_mask(g, cfg, x, cache_position, seq, dims, mask_in):
    """The additive [1|b, 1, s, s] mask: causal, within the sliding window
    when cfg.window (kv > q - window), and over the keys attention_mask
    keeps when cfg.padding (transformers' and_masks of the three)."""
    if cfg.mask_form == "packed":
        return packed_causal_mask(g, x, cache_position, seq, dims)
    if not cfg.window and not cfg.padding:
        return llama_causal_mask(g, x, cache_position, seq, dims)
    rows = g.op("Unsqueeze", cache_position, g.i64(0, 1), fx="unsqueeze")
    q_idx = g.op("Unsqueeze", rows, g.i64(3), fx="unsqueeze")
    kv_idx = g.op("Unsqueeze", rows, g.i64(2), fx="unsqueeze")
    allowed = g.op("GreaterOrEqual", q_idx, kv_idx, fx="ge")
    if cfg.window:
        start = g.op("Sub", q_idx, g.scalar(cfg.window, I64), fx="sub")
        allowed = g.op("And", allowed, g.op("Greater", kv_idx, start, fx="gt"), fx="and")
    if cfg.padding:
        keep = g.op("Cast", mask_in, to=TensorProto.BOOL, fx="to")
        keep = g.op("Unsqueeze", keep, g.i64(1, 2), fx="unsqueeze")
        allowed = g.op("And", allowed, keep, fx="and")
    return g.op("Where", allowed, g.scalar(0.0), g.scalar(g.fmin), fx="where")


def fused_qkv_views(g, cfg, a, x, dims):
    """Phi-3's and Falcon's fused projection (rows [q | k | v]) split into
    the [b, s, heads, d] views of q, k and v."""
    n = cfg.names
    qkv = linear(g, f"{a}/{n['qkv']}", x, cfg.qkv_bias)
    q_width, kv = HEADS * HEAD_DIM, cfg.kv_heads * HEAD_DIM
    if cfg.qkv == "fused_slices":       # qkv[..., :q], [..., q:q + kv], [..., q + kv:]
        bounds = ((0, q_width), (q_width, q_width + kv), (q_width + kv, INT64_MAX))
        parts = [g.op("Slice", qkv, g.i64(lo), g.i64(hi), g.i64(2), g.i64(1), fx="slice")
                 for lo, hi in bounds]
        return tuple(heads_view(g, t, h, dims)
                     for t, h in zip(parts, (HEADS, cfg.kv_heads, cfg.kv_heads)))
    # Falcon: view(b, s, heads + 2 kv, d); [..., :-2kv, :], [-2kv:-kv], [-kv:]
    if g.ts:
        shape = ts_list(g, ts_size(g, qkv, 0), ts_size(g, qkv, 1), HEADS + 2 * cfg.kv_heads,
                        HEAD_DIM)
        qkv = g.op("Reshape", qkv, shape, allowzero=0)
    else:
        qkv = g.op("Reshape", qkv, dyn_shape(g, *dims, HEADS + 2 * cfg.kv_heads, HEAD_DIM),
                   allowzero=1, fx="view")
    k2 = cfg.kv_heads
    bounds = ((0, -2 * k2), (-2 * k2, -k2), (-k2, INT64_MAX))
    return tuple(g.op("Slice", qkv, g.i64(lo), g.i64(hi), g.i64(2), g.i64(1), fx="slice")
                 for lo, hi in bounds)


def alibi_bias(g, cache_position):
    """BLOOM's ALiBi as a [1, heads, 1, s] tensor: slope_h * key position
    (build_alibi_tensor without padding: the cumsum of an all-ones mask
    minus one is the position)."""
    slopes = g.initializer("alibi_slopes", alibi_slopes().astype(F32).reshape(HEADS, 1, 1))
    pos = g.op("Cast", cache_position, to=TensorProto.FLOAT, fx="_to_copy")
    alibi = g.op("Mul", slopes, pos, fx="mul")                  # [heads, 1, s]
    return g.op("Unsqueeze", alibi, g.i64(0), fx="unsqueeze")


def alibi_slopes():
    """get_alibi_slopes for a power-of-two head count: 2^(-8 h / heads)."""
    return 2.0 ** (-8.0 * np.arange(1, HEADS + 1) / HEADS)


def zoo_attention(g, cfg, p, x, tables, mask, dims, alibi=None):
    n = cfg.names
    a = f"{p}/{n['attn']}"
    with g.scope(a):
        if cfg.qkv == "packed_heads":       # view(b, s, heads, 3d).transpose(1, 2).chunk(3)
            qkv = linear(g, f"{a}/{n['qkv']}", x)
            if g.ts:
                shape = ts_list(g, ts_size(g, qkv, 0), ts_size(g, qkv, 1), HEADS, 3 * HEAD_DIM)
                qkv = g.op("Reshape", qkv, shape, allowzero=0)
            else:
                qkv = g.op("Reshape", qkv, dyn_shape(g, *dims, -1, 3 * HEAD_DIM),
                           allowzero=1, fx="view")
            qkv = g.op("Transpose", qkv, perm=[0, 2, 1, 3], fx="transpose")
            if g.ts:
                q, k, v = g.op("Split", qkv, g.i64(HEAD_DIM, HEAD_DIM, HEAD_DIM), axis=3,
                               outputs=3)
            else:
                q, k, v = g.op("Split", qkv, axis=3, num_outputs=3, outputs=3, fx="split")
            q4 = k4 = v4 = None
        elif cfg.qkv in ("fused_slices", "fused_heads"):
            q4, k4, v4 = fused_qkv_views(g, cfg, a, x, dims)
        else:
            q = linear(g, f"{a}/{n['q']}", x, cfg.qkv_bias)
            if cfg.q_scaled:             # OPT: q_proj(x) * self.scaling
                q = g.op("Mul", q, g.scalar(HEAD_DIM ** -0.5), fx="mul")
            q4 = heads_view(g, q, HEADS, dims)
            k4 = heads_view(g, linear(g, f"{a}/{n['k']}", x, cfg.qkv_bias), cfg.kv_heads, dims)
            v4 = heads_view(g, linear(g, f"{a}/{n['v']}", x, cfg.qkv_bias), cfg.kv_heads, dims)
            if cfg.qk_norm:                  # Qwen3: per-head RMSNorm before RoPE
                q4 = rms_norm(g, f"{a}/{n['q_norm']}", q4)
                k4 = rms_norm(g, f"{a}/{n['k_norm']}", k4)
        rd = cfg.rotary_dim
        if cfg.rotary == "interleaved":      # GPT-J: on [b, s, h, d], before the permute
            cos, sin = tables

            def rotate(t):
                return g.op("Add", g.op("Mul", t, cos, fx="mul"),
                            g.op("Mul", rotate_every_two(g, t), sin, fx="mul"), fx="add")
            q4 = partial_rotary(g, q4, rd, rotate)
            k4 = partial_rotary(g, k4, rd, rotate)
        if q4 is not None:
            q, k, v = (g.op("Transpose", t, perm=[0, 2, 1, 3], fx="transpose")
                       for t in (q4, k4, v4))
        if cfg.rotary == "half":
            cos, sin = (g.op("Unsqueeze", t, g.i64(1), fx="unsqueeze") for t in tables)
            q = partial_rotary(g, q, rd, lambda t: apply_rope(g, t, cos, sin, rd))
            k = partial_rotary(g, k, rd, lambda t: apply_rope(g, t, cos, sin, rd))
        if cfg.kv_heads != HEADS:
            k, v = repeat_kv(g, k, dims, cfg.kv_heads), repeat_kv(g, v, dims, cfg.kv_heads)
        scores = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2], fx="transpose"),
                      fx="matmul")
        if cfg.q_scaled:
            pass
        elif g.ts:
            scores = g.op("Div", scores, g.scalar(math.sqrt(HEAD_DIM)))
        else:
            scores = g.op("Mul", scores, g.scalar(1.0 / math.sqrt(HEAD_DIM)), fx="mul")
        if alibi is not None:
            scores = g.op("Add", scores, alibi, fx="add")
        if cfg.softcap:                 # Gemma 2: cap * tanh(scores / cap)
            scores = g.op("Mul", g.op("Tanh", g.op("Div", scores, g.scalar(cfg.softcap),
                                                   fx="div"), fx="tanh"),
                          g.scalar(cfg.softcap), fx="mul")
        if g.ts:            # causal_mask[:, :, :, :key_states.shape[-2]]
            end = g.op("Unsqueeze", ts_size(g, k, 2), g.i64(0))
            mask = g.op("Slice", mask, g.i64(0), end, g.i64(3), g.i64(1))
        probs = g.op("Softmax", g.op("Add", scores, mask, fx="add"), axis=-1, fx="softmax")
        ctx = g.op("Transpose", g.op("MatMul", probs, v, fx="matmul"), perm=[0, 2, 1, 3],
                   fx="transpose")
        if g.ts:
            shape = ts_list(g, ts_size(g, ctx, 0), ts_size(g, ctx, 1), HIDDEN)
            ctx = g.op("Reshape", ctx, shape, allowzero=0)
        else:
            ctx = g.op("Reshape", ctx, dyn_shape(g, *dims, -1), allowzero=1, fx="view")
    return linear(g, f"{a}/{n['o']}", ctx, cfg.o_bias)


def zoo_norm(g, cfg, path, x):
    if cfg.norm == "layer":
        return layer_norm(g, path, x, ZOO_EPS["layer"], "native" if g.ts else "mul_rsqrt")
    return rms_norm(g, path, x, one_plus=cfg.norm == "rms1p")


def quick_gelu(g, x):
    """CLIP's QuickGELUActivation: x * sigmoid(1.702 * x)."""
    return g.op("Mul", x, g.op("Sigmoid", g.op("Mul", x, g.scalar(1.702), fx="mul"),
                               fx="sigmoid"), fx="mul")


def zoo_mlp(g, cfg, p, x):
    n = cfg.names
    m = f"{p}/{n['mlp']}"
    if cfg.mlp == "gate_up":            # up_states.chunk(2, -1); up * act(gate)
        gate_up = linear(g, f"{m}/{n['gate_up']}", x, cfg.mlp_bias)
        with g.scope(m):
            gate, up = g.op("Split", gate_up, g.i64(INTERMEDIATE, INTERMEDIATE), axis=-1,
                            outputs=2, fx="split")
        with g.scope(m + "/activation_fn"):
            gate = silu(g, gate)
        with g.scope(m):
            h = g.op("Mul", up, gate, fx="mul")
        return linear(g, f"{m}/{n['down']}", h, cfg.mlp_bias)
    if cfg.mlp in ("swiglu", "geglu"):
        gate = linear(g, f"{m}/{n['gate']}", x, cfg.mlp_bias)
        with g.scope(m + "/act_fn"):
            gate = silu(g, gate) if cfg.mlp == "swiglu" else gelu_tanh(g, gate)
        up = linear(g, f"{m}/{n['up']}", x, cfg.mlp_bias)
        with g.scope(m):
            h = g.op("Mul", gate, up, fx="mul")
        return linear(g, f"{m}/{n['down']}", h, cfg.mlp_bias)
    h = linear(g, f"{m}/{n['fc_in']}", x, cfg.mlp_bias)
    with g.scope(m + "/act"):
        act = {"gelu_tanh": gelu_tanh, "gelu_erf": gelu_erf, "quick_gelu": quick_gelu,
               "relu": lambda g, h: g.op("Relu", h, fx="relu")}[cfg.mlp]
        h = act(g, h)
    return linear(g, f"{m}/{n['fc_out']}", h, cfg.mlp_bias)


def build_decoder(g, layers, cfg):
    n = cfg.names
    ids = g.input("input_ids")
    mask_in = g.input("attention_mask") if cfg.padding else None
    x = embedding(g, n["embed"], ids)
    if cfg.embed_scale:                 # Gemma: inputs_embeds * sqrt(hidden)
        x = g.op("Mul", x, g.scalar(math.sqrt(HIDDEN)), fx="mul")
    dims, seq, cache_position, position_ids = decoder_positions(g, ids, x)
    if cfg.positions == "learned":      # embed_positions(position_ids + offset)
        pos = position_ids
        if cfg.pos_offset:
            pos = g.op("Add", pos, g.scalar(cfg.pos_offset, I64), fx="add")
        x = g.op("Add", x, embedding(g, n["pos"], pos), fx="add")
    if cfg.embed_norm:
        x = zoo_norm(g, cfg, n["embed_norm"], x)
    mask = zoo_mask(g, cfg, x, cache_position, seq, dims, mask_in)
    # Gemma 2: the layers that do not slide the window attend causally.
    full_mask = (zoo_mask(g, cfg._replace(window=None), x, cache_position, seq, dims,
                          mask_in) if cfg.window and cfg.window_every > 1 else mask)
    alibi = alibi_bias(g, cache_position) if cfg.positions == "alibi" else None
    if cfg.rotary is None:
        tables = None
    elif cfg.rotary == "interleaved":     # embed_positions[position_ids], split, repeated
        table = g.initializer("embed_positions", gptj_sincos(cfg.rotary_dim))
        sincos = g.op("Gather", table, position_ids, axis=0, fx="index")
        sin, cos = g.op("Split", sincos, g.i64(cfg.rotary_dim // 2, cfg.rotary_dim // 2),
                        axis=-1, outputs=2, fx="split")
        tables = tuple(repeat_interleave_last(g, g.op("Unsqueeze", t, g.i64(2), fx="unsqueeze"))
                       for t in (cos, sin))
    else:
        tables = rotary_embedding(g, x, position_ids, cfg.rotary_dim)
    for i in range(layers):
        p = n["layer"].format(i)
        h = zoo_norm(g, cfg, f"{p}/{n['norm1']}", x)
        attn = zoo_attention(g, cfg, p, h, tables,
                             mask if i % cfg.window_every == 0 else full_mask, dims, alibi)
        if cfg.sandwich:
            attn = zoo_norm(g, cfg, f"{p}/{n['post_attn']}", attn)
        with g.scope(p):
            if cfg.parallel == "shared":
                x = g.op("Add", g.op("Add", attn, zoo_mlp(g, cfg, p, h), fx="add"), x, fx="add")
                continue
            if cfg.parallel == "two_norms":
                mlp = zoo_mlp(g, cfg, p, zoo_norm(g, cfg, f"{p}/{n['norm2']}", x))
                x = g.op("Add", g.op("Add", mlp, attn, fx="add"), x, fx="add")
                continue
            x = g.op("Add", x, attn, fx="add")
        h = zoo_mlp(g, cfg, p, zoo_norm(g, cfg, f"{p}/{n['norm2']}", x))
        if cfg.sandwich:
            h = zoo_norm(g, cfg, f"{p}/{n['post_mlp']}", h)
        with g.scope(p):
            x = g.op("Add", x, h, fx="add")
    return zoo_norm(g, cfg, n["final"], x)


def zoo_reference(cfg, W, inputs, layers):
    """The zoo family's forward, from the Hugging Face definitions, in float64."""
    n = cfg.names
    ids = inputs["input_ids"]
    b, s = ids.shape
    q_pos, k_pos = np.arange(s)[:, None], np.arange(s)[None, :]
    full = (k_pos <= q_pos)[None, None]
    if cfg.padding:
        full = full & inputs["attention_mask"].astype(bool)[:, None, None, :]
    allowed = full
    if cfg.window:
        allowed = allowed & (k_pos > q_pos - cfg.window)[None, None]
    eps = _f32(ZOO_EPS[cfg.norm])

    def lin(x, name, bias):
        y = project(x, W[name + ".weight"].T)
        return y + W[name + ".bias"] if bias else y

    def norm(x, name):
        if cfg.norm == "layer":
            return _ln(x, W[name + ".weight"], W[name + ".bias"], eps)
        gain = W[name + ".weight"] + (1.0 if cfg.norm == "rms1p" else 0.0)
        return _rms(x, gain, eps)

    rd = cfg.rotary_dim
    angles = np.arange(s)[:, None] * rope_inv_freq(rd).astype(np.float64)[None, :]

    def rope(t):                        # t [b, h, s, d]
        if cfg.rotary is None:
            return t
        rot, keep = t[..., :rd], t[..., rd:]
        if cfg.rotary == "interleaved":     # GPT-J's float32 table, as the model holds it
            table = gptj_sincos(rd)[:s].astype(np.float64)
            sin, cos = (np.repeat(t, 2, -1) for t in np.split(table, 2, axis=-1))
            turned = np.stack([-rot[..., 1::2], rot[..., 0::2]], -1).reshape(rot.shape)
        else:
            cos, sin = np.cos(np.concatenate([angles] * 2, -1)), np.sin(
                np.concatenate([angles] * 2, -1))
            turned = np.concatenate([-rot[..., rd // 2:], rot[..., :rd // 2]], -1)
        return np.concatenate([rot * cos + turned * sin, keep], -1)

    def attention(h, a, allowed):
        if cfg.qkv == "packed_heads":
            qkv = lin(h, a + n["qkv"], True).reshape(b, s, HEADS, 3 * HEAD_DIM)
            q, k, v = np.split(qkv.transpose(0, 2, 1, 3), 3, axis=-1)
        elif cfg.qkv in ("fused_slices", "fused_heads"):
            qkv = lin(h, a + n["qkv"], cfg.qkv_bias)
            q, k, v = np.split(qkv, [HEADS * HEAD_DIM, (HEADS + cfg.kv_heads) * HEAD_DIM], -1)
            q, k, v = (t.reshape(b, s, -1, HEAD_DIM).transpose(0, 2, 1, 3) for t in (q, k, v))
        else:
            q, k, v = (lin(h, a + n[key], cfg.qkv_bias).reshape(b, s, -1, HEAD_DIM)
                       for key in ("q", "k", "v"))
            if cfg.qk_norm:
                q = _rms(q, W[a + n["q_norm"] + ".weight"], eps)
                k = _rms(k, W[a + n["k_norm"] + ".weight"], eps)
            q, k, v = (t.transpose(0, 2, 1, 3) for t in (q, k, v))
        q, k = rope(q), rope(k)
        rep = HEADS // k.shape[1]
        k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
        return lin(_merge(_attend(q, k, v, allowed, bias, cfg.softcap)), a + n["o"],
                   cfg.o_bias)

    bias = None
    if cfg.positions == "alibi":        # [1, heads, 1, s]: slope_h * key position
        bias = (alibi_slopes()[:, None, None] * np.arange(s)[None, None, :])[None]

    def mlp(h, m):
        if cfg.mlp == "gate_up":
            gate, up = np.split(lin(h, m + n["gate_up"], cfg.mlp_bias), 2, -1)
            return lin(up * (gate / (1 + np.exp(-gate))), m + n["down"], cfg.mlp_bias)
        if cfg.mlp in ("swiglu", "geglu"):
            gate = lin(h, m + n["gate"], cfg.mlp_bias)
            if cfg.mlp == "swiglu":
                act = gate / (1 + np.exp(-gate))
            else:
                act = _gelu_tanh(gate)
            return lin(act * lin(h, m + n["up"], cfg.mlp_bias), m + n["down"], cfg.mlp_bias)
        h = lin(h, m + n["fc_in"], cfg.mlp_bias)
        if cfg.mlp == "gelu_tanh":
            h = _gelu_tanh(h)
        elif cfg.mlp == "relu":
            h = np.maximum(h, 0.0)
        elif cfg.mlp == "quick_gelu":
            h = h / (1.0 + np.exp(-_f32(1.702) * h))
        else:
            h = 0.5 * h * (1.0 + _erf(h / _model(math.sqrt(2.0))))
        return lin(h, m + n["fc_out"], cfg.mlp_bias)

    x = W[n["embed"] + ".weight"][ids]
    if cfg.embed_scale:
        x = x * _f32(math.sqrt(HIDDEN))
    if cfg.positions == "learned":
        x = x + W[n["pos"] + ".weight"][np.arange(s) + cfg.pos_offset][None]
    if cfg.embed_norm:
        x = norm(x, n["embed_norm"])
    for i in range(layers):
        p = n["layer"].format(i) + "."
        a, m = p + n["attn"] + ".", p + n["mlp"] + "."
        h = norm(x, p + n["norm1"])
        mask = allowed if i % cfg.window_every == 0 else full
        if cfg.parallel == "shared":
            x = attention(h, a, mask) + mlp(h, m) + x
        elif cfg.parallel == "two_norms":
            x = mlp(norm(x, p + n["norm2"]), m) + attention(h, a, mask) + x
        elif cfg.sandwich:
            x = x + norm(attention(h, a, mask), p + n["post_attn"])
            x = x + norm(mlp(norm(x, p + n["norm2"]), m), p + n["post_mlp"])
        else:
            x = x + attention(h, a, mask)
            x = x + mlp(norm(x, p + n["norm2"]), m)
    return norm(x, n["final"])

# ------------------------------------------------------- ViT and Whisper
#
# Encoders whose input is not token ids: ViT's Conv2d patch embedding
# (kernel = stride = PATCH) with a class token and learned positions, and
# Whisper's Conv1d stem (two k=3 convolutions, the second of stride 2, each
# followed by exact GELU) with sinusoidal positions.  Both are pre-norm
# encoders (LayerNorm before attention and MLP, exact GELU, no mask) ending
# in a LayerNorm.  Whisper's K projection has no bias and its Q projection
# is scaled by head_dim ** -0.5 before the product; under TorchScript its
# attention is the BART-era eager code on [batch * heads, tokens, head_dim]
# (view, bmm, softmax, bmm), under dynamo transformers 5's SDPA with
# scale=head_dim ** -0.5.  Q/K weights of std ZOO_QK_STD make attention
# peaked, as in the zoo.

IMAGE, PATCH, CHANNELS = 16, 4, 3            # ViT: 16 patches + the class token
MELS = 16                                   # Whisper: input_features [b, MELS, 2 * seq]
ENCODER_FAMILIES = ("vit", "whisper")
ENCODER_EPS = {"vit": 1e-12, "whisper": 1e-5}


def make_encoder_weights(family, layers, normal, gain):
    w = {}

    def dense(name, n_in, n_out, bias=True, std=ZOO_STD):
        w[name + ".weight"] = normal((n_out, n_in), std)
        if bias:
            w[name + ".bias"] = normal((n_out,), ZOO_STD)

    def norm(name):
        w[name + ".weight"] = gain(HIDDEN)
        w[name + ".bias"] = normal((HIDDEN,), ZOO_STD)

    if family == "vit":
        e = "embeddings."
        w[e + "cls_token"] = normal((1, 1, HIDDEN), 0.5)
        w[e + "position_embeddings"] = normal((1, (IMAGE // PATCH) ** 2 + 1, HIDDEN), 0.5)
        w[e + "patch_embeddings.projection.weight"] = normal(
            (HIDDEN, CHANNELS, PATCH, PATCH), 0.1)
        w[e + "patch_embeddings.projection.bias"] = normal((HIDDEN,), ZOO_STD)
        for i in range(layers):
            p = f"encoder.layer.{i}."
            norm(p + "layernorm_before")
            for n in ("query", "key"):
                dense(p + "attention.attention." + n, HIDDEN, HIDDEN, std=ZOO_QK_STD)
            dense(p + "attention.attention.value", HIDDEN, HIDDEN)
            dense(p + "attention.output.dense", HIDDEN, HIDDEN)
            norm(p + "layernorm_after")
            dense(p + "intermediate.dense", HIDDEN, INTERMEDIATE)
            dense(p + "output.dense", INTERMEDIATE, HIDDEN)
        norm("layernorm")
        return w
    w["conv1.weight"] = normal((HIDDEN, MELS, 3), 0.1)
    w["conv1.bias"] = normal((HIDDEN,), ZOO_STD)
    w["conv2.weight"] = normal((HIDDEN, HIDDEN, 3), 0.1)
    w["conv2.bias"] = normal((HIDDEN,), ZOO_STD)
    for i in range(layers):
        p = f"layers.{i}."
        norm(p + "self_attn_layer_norm")
        dense(p + "self_attn.q_proj", HIDDEN, HIDDEN, std=ZOO_QK_STD)
        dense(p + "self_attn.k_proj", HIDDEN, HIDDEN, bias=False, std=ZOO_QK_STD)
        dense(p + "self_attn.v_proj", HIDDEN, HIDDEN)
        dense(p + "self_attn.out_proj", HIDDEN, HIDDEN)
        norm(p + "final_layer_norm")
        dense(p + "fc1", HIDDEN, INTERMEDIATE)
        dense(p + "fc2", INTERMEDIATE, HIDDEN)
    norm("layer_norm")
    return w


def whisper_sinusoids(length, channels):
    """Whisper's embed_positions table (sinusoids(), float32)."""
    increment = np.log(10000) / (channels // 2 - 1)
    inv = np.exp(-increment * np.arange(channels // 2)).astype(F32)
    scaled = np.arange(length, dtype=F32)[:, None] * inv[None, :]
    return np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1).astype(F32)


def conv(g, path, x, **attrs):
    """nn.Conv1d / nn.Conv2d: one Conv node with the explicit attributes
    both exporters write."""
    with g.scope(path):
        weight = g.param("weight")
        k = list(g.w[path.replace("/", ".") + ".weight"].shape[2:])
        attrs.setdefault("strides", [1] * len(k))
        attrs.setdefault("pads", [0] * 2 * len(k))
        return g.op("Conv", x, weight, g.param("bias"), dilations=[1] * len(k), group=1,
                    kernel_shape=k, fx="conv" + str(len(k)) + "d", **attrs)


def encoder_attention(g, family, path, x, dims, o_name):
    """Self-attention without a mask over [b, s, HIDDEN]."""
    names = (("query", "key", "value") if family == "vit"
             else ("q_proj", "k_proj", "v_proj"))
    q = linear(g, f"{path}/{names[0]}", x)
    k = linear(g, f"{path}/{names[1]}", x, bias=family == "vit")
    v = linear(g, f"{path}/{names[2]}", x)
    with g.scope(path):
        if g.dynamo:            # view, transpose(1, 2), torchlib SDPA
            shape = dyn_shape(g, dims[0], -1, HEADS, HEAD_DIM)
            q, k, v = (g.op("Transpose", g.op("Reshape", t, shape, allowzero=1, fx="view"),
                            perm=[0, 2, 1, 3], fx="transpose") for t in (q, k, v))
            ctx = g.op("Transpose", sdpa(g, q, k, v, None), perm=[0, 2, 1, 3],
                       fx="transpose")
            ctx = g.op("Reshape", ctx, dyn_shape(g, dims[0], -1, HIDDEN), allowzero=1,
                       fx="view")
        elif family == "vit":   # ViTSelfAttention.transpose_for_scores
            def heads(t, perm):
                shape = ts_list(g, ts_size(g, t, 0), ts_size(g, t, 1), HEADS, HEAD_DIM)
                return g.op("Transpose", g.op("Reshape", t, shape, allowzero=0), perm=perm)
            qh, kt, vh = heads(q, [0, 2, 1, 3]), heads(k, [0, 2, 3, 1]), heads(v, [0, 2, 1, 3])
            scores = g.op("Div", g.op("MatMul", qh, kt), g.scalar(math.sqrt(HEAD_DIM)))
            ctx = g.op("MatMul", g.op("Softmax", scores, axis=-1), vh)
            ctx = g.op("Transpose", ctx, perm=[0, 2, 1, 3])
            ctx = g.op("Reshape", ctx, ts_list(g, ts_size(g, ctx, 0), ts_size(g, ctx, 1),
                                               HIDDEN), allowzero=0)
        else:                   # BART-era WhisperAttention on [b * heads, s, d]
            b, s = ts_size(g, x, 0), ts_size(g, x, 1)
            q = g.op("Mul", q, g.scalar(HEAD_DIM ** -0.5))

            def heads3(t):
                t = g.op("Transpose", g.op("Reshape", t, ts_list(g, b, -1, HEADS, HEAD_DIM),
                                           allowzero=0), perm=[0, 2, 1, 3])
                bh = g.op("Mul", b, g.scalar(HEADS, I64))
                return g.op("Reshape", t, ts_list(g, bh, -1, HEAD_DIM), allowzero=0)
            q3, k3, v3 = heads3(q), heads3(k), heads3(v)
            scores = g.op("MatMul", q3, g.op("Transpose", k3, perm=[0, 2, 1]))
            ctx = g.op("MatMul", g.op("Softmax", scores, axis=-1), v3)
            ctx = g.op("Reshape", ctx, ts_list(g, b, HEADS, s, HEAD_DIM), allowzero=0)
            ctx = g.op("Transpose", ctx, perm=[0, 2, 1, 3])
            ctx = g.op("Reshape", ctx, ts_list(g, b, s, HIDDEN), allowzero=0)
    return linear(g, f"{path.rsplit('/', 1)[0] if family == 'vit' else path}/{o_name}", ctx)


def build_encoder(g, layers, family):
    eps = ENCODER_EPS[family]
    ln_form = "native" if g.ts else "pow_div"
    if family == "vit":
        pixels = g.input("pixel_values", TensorProto.FLOAT,
                         ["batch", CHANNELS, IMAGE, IMAGE])
        dims = (g.op("Shape", pixels, start=0, end=1),) if g.dynamo else None
        with g.scope("embeddings"):
            x = conv(g, "embeddings/patch_embeddings/projection", pixels,
                     strides=[PATCH, PATCH])
            if g.ts:            # .flatten(2): Reshape to Shape[:2] + [-1]
                head = g.op("Slice", g.op("Shape", x), g.i64(0), g.i64(2), g.i64(0))
                x = g.op("Reshape", x, g.op("Concat", head, g.i64(-1), axis=0), allowzero=0)
                cls = ts_expand(g, g.param("cls_token"), ts_size(g, pixels, 0), -1, -1)
            else:
                x = g.op("Reshape", x, dyn_shape(g, dims[0], HIDDEN, -1), allowzero=1,
                         fx="view")
                cls = g.op("Expand", g.param("cls_token"), dyn_shape(g, dims[0], 1, HIDDEN),
                           fx="expand")
            x = g.op("Transpose", x, perm=[0, 2, 1], fx="transpose")
            x = g.op("Concat", cls, x, axis=1, fx="cat")
            x = g.op("Add", x, g.param("position_embeddings"), fx="add")
        for i in range(layers):
            p = f"encoder/layer.{i}"
            h = layer_norm(g, p + "/layernorm_before", x, eps, ln_form)
            h = encoder_attention(g, family, p + "/attention/attention", h, dims,
                                  "output/dense")
            with g.scope(p):
                x = g.op("Add", h, x, fx="add")
            h = layer_norm(g, p + "/layernorm_after", x, eps, ln_form)
            h = gelu_mlp(g, p + "/intermediate/dense",
                         p + "/intermediate/intermediate_act_fn", p + "/output/dense", h)
            with g.scope(p + "/output"):
                x = g.op("Add", h, x, fx="add")
        return layer_norm(g, "layernorm", x, eps, ln_form)

    features = g.input("input_features", TensorProto.FLOAT, ["batch", MELS, "frames"])
    dims = (g.op("Shape", features, start=0, end=1),) if g.dynamo else None
    with g.scope("conv1"):
        x = gelu_erf(g, conv(g, "conv1", features, pads=[1, 1]))
    with g.scope("conv2"):
        x = gelu_erf(g, conv(g, "conv2", x, strides=[2], pads=[1, 1]))
    x = g.op("Transpose", x, perm=[0, 2, 1], fx="permute")
    # embed_positions.weight[:seq]
    table = g.initializer("embed_positions.weight", whisper_sinusoids(MAX_POS, HIDDEN))
    if g.ts:
        end = g.op("Unsqueeze", ts_size(g, x, 1), g.i64(0))
    else:
        end = g.op("Shape", x, start=1, end=2)
    x = g.op("Add", x, g.op("Slice", table, g.i64(0), end, g.i64(0), g.i64(1), fx="slice"),
             fx="add")
    for i in range(layers):
        p = f"layers.{i}"
        h = layer_norm(g, p + "/self_attn_layer_norm", x, eps, ln_form)
        h = encoder_attention(g, family, p + "/self_attn", h, dims, "out_proj")
        with g.scope(p):
            x = g.op("Add", x, h, fx="add")
        h = layer_norm(g, p + "/final_layer_norm", x, eps, ln_form)
        h = gelu_mlp(g, p + "/fc1", p + "/activation_fn", p + "/fc2", h)
        with g.scope(p):
            x = g.op("Add", x, h, fx="add")
    return layer_norm(g, "layer_norm", x, eps, ln_form)


def encoder_reference(family, W, inputs, layers):
    """ViT's or Whisper's encoder forward, in float64."""
    eps = _f32(ENCODER_EPS[family])

    def lin(x, name, bias=True):
        y = project(x, W[name + ".weight"].T)
        return y + W[name + ".bias"] if bias else y

    def ln(x, name):
        return _ln(x, W[name + ".weight"], W[name + ".bias"], eps)

    def gelu(h):
        return 0.5 * h * (1.0 + _erf(h / _model(math.sqrt(2.0))))

    def conv1d(x, name, stride):            # x [b, c, t], kernel 3, padding 1
        w, bias = W[name + ".weight"], W[name + ".bias"]
        padded = np.pad(x, ((0, 0), (0, 0), (1, 1)))
        t = (x.shape[2] + 2 - 3) // stride + 1
        taps = np.stack([padded[:, :, j:j + stride * (t - 1) + 1:stride]
                         for j in range(3)], -1)          # [b, c, t, 3]
        return np.einsum("bctk,ock->bot", taps, w) + bias[None, :, None]

    def attention(h, a, q_name, k_name, v_name, o_name):
        q = _heads(lin(h, a + q_name), HEADS)
        k = _heads(lin(h, a + k_name, family == "vit"), HEADS)
        v = _heads(lin(h, a + v_name), HEADS)
        allowed = np.ones((1, 1, q.shape[2], k.shape[2]), bool)
        return lin(_merge(_attend(q, k, v, allowed)), o_name)

    if family == "vit":
        px = inputs["pixel_values"].astype(np.float64)
        b, n = px.shape[0], IMAGE // PATCH
        e = "embeddings."
        # A linear over the patches, as mte computes it (and quantizes it).
        patches = px.reshape(b, CHANNELS, n, PATCH, n, PATCH).transpose(
            0, 2, 4, 1, 3, 5).reshape(b, n * n, CHANNELS * PATCH * PATCH)
        w = W[e + "patch_embeddings.projection.weight"]
        x = project(patches, w.reshape(HIDDEN, -1).T)
        x = x + W[e + "patch_embeddings.projection.bias"]
        cls = np.broadcast_to(W[e + "cls_token"], (b, 1, HIDDEN))
        x = np.concatenate([cls, x], axis=1) + W[e + "position_embeddings"]
        for i in range(layers):
            p = f"encoder.layer.{i}."
            a = p + "attention.attention."
            x = x + attention(ln(x, p + "layernorm_before"), a, "query", "key", "value",
                              p + "attention.output.dense")
            h = gelu(lin(ln(x, p + "layernorm_after"), p + "intermediate.dense"))
            x = x + lin(h, p + "output.dense")
        return ln(x, "layernorm")

    x = inputs["input_features"].astype(np.float64)
    x = gelu(conv1d(x, "conv1", 1))
    x = gelu(conv1d(x, "conv2", 2)).transpose(0, 2, 1)
    x = x + whisper_sinusoids(MAX_POS, HIDDEN)[:x.shape[1]].astype(np.float64)
    for i in range(layers):
        p = f"layers.{i}."
        a = p + "self_attn."
        x = x + attention(ln(x, p + "self_attn_layer_norm"), a, "q_proj", "k_proj",
                          "v_proj", a + "out_proj")
        h = gelu(lin(ln(x, p + "final_layer_norm"), p + "fc1"))
        x = x + lin(h, p + "fc2")
    return ln(x, "layer_norm")


# ------------------------------------------------------------ T5 ENCODER
#
# Flan-T5's encoder (T5EncoderModel, T5 v1.1 blocks): RMSNorm without mean
# (T5LayerNorm), attention without 1/sqrt(d) and with a relative position
# bias, one [1, heads, s, s] table computed in the first layer from
# bidirectional log-spaced buckets (_relative_position_bucket) and shared
# by every layer, to which the padding mask is added; gated-GELU MLP
# (wo(gelu_new(wi_0 x) * wi_1 x)); no biases anywhere.

T5_BUCKETS, T5_MAX_DISTANCE = 32, 128
T5_QK_STD, T5_BIAS_STD = 0.1, 0.5


def make_t5_weights(layers, normal, gain):
    w = {"shared.weight": normal((VOCAB, HIDDEN), 0.02)}
    for i in range(layers):
        p = f"encoder.block.{i}.layer."
        w[p + "0.layer_norm.weight"] = gain(HIDDEN)
        for proj, std in (("q", T5_QK_STD), ("k", T5_QK_STD), ("v", ZOO_STD)):
            w[p + f"0.SelfAttention.{proj}.weight"] = normal((HIDDEN, HIDDEN), std)
        if i == 0:
            w[p + "0.SelfAttention.relative_attention_bias.weight"] = normal(
                (T5_BUCKETS, HEADS), T5_BIAS_STD)
        w[p + "0.SelfAttention.o.weight"] = normal((HIDDEN, HIDDEN), ZOO_STD)
        w[p + "1.layer_norm.weight"] = gain(HIDDEN)
        for proj in ("wi_0", "wi_1"):
            w[p + f"1.DenseReluDense.{proj}.weight"] = normal((INTERMEDIATE, HIDDEN),
                                                               ZOO_STD)
        w[p + "1.DenseReluDense.wo.weight"] = normal((HIDDEN, INTERMEDIATE), ZOO_STD)
    w["encoder.final_layer_norm.weight"] = gain(HIDDEN)
    return w


def t5_relative_bias(g, seq, table):
    """compute_bias(s, s): the bidirectional bucket of each key - query
    distance (exact below max_exact, log-spaced above, clamped), looked up
    in relative_attention_bias and permuted to [1, heads, s, s]."""
    with g.scope("encoder/block.0/layer.0/SelfAttention"):
        arange = g.op("Range", g.scalar(0, I64), seq, g.scalar(1, I64), fx="arange")
        context = g.op("Unsqueeze", arange, g.i64(1), fx="unsqueeze")
        memory = g.op("Unsqueeze", arange, g.i64(0), fx="unsqueeze")
        relative = g.op("Sub", memory, context, fx="sub")
        half = T5_BUCKETS // 2
        max_exact = half // 2
        later = g.op("Cast", g.op("Greater", relative, g.scalar(0, I64), fx="gt"),
                     to=TensorProto.INT64, fx="_to_copy")
        buckets = g.op("Mul", later, g.scalar(half, I64), fx="mul")
        distance = g.op("Abs", relative, fx="abs")
        small = g.op("Less", distance, g.scalar(max_exact, I64), fx="lt")
        ratio = g.op("Div", g.op("Cast", distance, to=TensorProto.FLOAT, fx="_to_copy"),
                     g.scalar(float(max_exact), F32), fx="div")
        scaled = g.op("Mul", g.op("Div", g.op("Log", ratio, fx="log"),
                                  g.scalar(math.log(T5_MAX_DISTANCE / max_exact), F32),
                                  fx="div"),
                      g.scalar(float(half - max_exact), F32), fx="mul")
        large = g.op("Add", g.op("Cast", scaled, to=TensorProto.INT64, fx="_to_copy"),
                     g.scalar(max_exact, I64), fx="add")
        large = g.op("Min", large, g.scalar(half - 1, I64), fx="minimum")
        buckets = g.op("Add", buckets, g.op("Where", small, distance, large, fx="where"),
                       fx="add")
        values = g.op("Gather", table, buckets, axis=0, fx="embedding")     # [s, s, heads]
        values = g.op("Transpose", values, perm=[2, 0, 1], fx="permute")
        return g.op("Unsqueeze", values, g.i64(0), fx="unsqueeze")


def build_t5(g, layers):
    ids = g.input("input_ids")
    mask_in = g.input("attention_mask")
    x = embedding(g, "shared", ids)
    if g.ts:
        seq = ts_size(g, x, 1)
        dims = None
    else:
        dims = (g.op("Shape", ids, start=0, end=1), g.op("Shape", ids, start=1, end=2))
        seq = g.op("Squeeze", dims[1], fx="sym_size_int")
    table = g.initializer("encoder.block.0.layer.0.SelfAttention.relative_attention_bias"
                          ".weight", g.w["encoder.block.0.layer.0.SelfAttention."
                                         "relative_attention_bias.weight"])
    bias = t5_relative_bias(g, seq, table)
    # The padding mask, additive: (1 - mask[:, None, None, :]) * finfo.min.
    keep = g.op("Cast", g.op("Unsqueeze", mask_in, g.i64(1, 2), fx="unsqueeze"),
                to=g.ft, fx="_to_copy")
    padding = g.op("Mul", g.op("Sub", g.scalar(1.0), keep, fx="rsub"), g.scalar(g.fmin),
                   fx="mul")
    bias = g.op("Add", bias, padding, fx="add")                               # [b, h, s, s]
    for i in range(layers):
        p = f"encoder/block.{i}/layer"
        h = rms_norm(g, f"{p}.0/layer_norm", x)
        a = f"{p}.0/SelfAttention"
        q, k, v = (g.op("Transpose", heads_view(g, linear(g, f"{a}/{n}", h, False), HEADS,
                                                dims), perm=[0, 2, 1, 3], fx="transpose")
                   for n in ("q", "k", "v"))
        with g.scope(a):
            scores = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2], fx="transpose"),
                          fx="matmul")
            scores = g.op("Add", scores, bias, fx="add")
            probs = g.op("Softmax", scores, axis=-1, fx="softmax")
            ctx = g.op("Transpose", g.op("MatMul", probs, v, fx="matmul"), perm=[0, 2, 1, 3],
                       fx="transpose")
            if g.ts:
                shape = ts_list(g, ts_size(g, ctx, 0), -1, HIDDEN)
                ctx = g.op("Reshape", ctx, shape, allowzero=0)
            else:
                ctx = g.op("Reshape", ctx, dyn_shape(g, dims[0], -1, HIDDEN), allowzero=1,
                           fx="view")
        h = linear(g, f"{a}/o", ctx, False)
        with g.scope(f"{p}.0"):
            x = g.op("Add", x, h, fx="add")
        h = rms_norm(g, f"{p}.1/layer_norm", x)
        f = f"{p}.1/DenseReluDense"
        gate = linear(g, f"{f}/wi_0", h, False)
        with g.scope(f + "/act"):
            gate = gelu_tanh(g, gate)
        up = linear(g, f"{f}/wi_1", h, False)
        with g.scope(f):
            h = g.op("Mul", gate, up, fx="mul")
        h = linear(g, f"{f}/wo", h, False)
        with g.scope(f"{p}.1"):
            x = g.op("Add", x, h, fx="add")
    return rms_norm(g, "encoder/final_layer_norm", x)


def t5_bucket(relative):
    """_relative_position_bucket(bidirectional=True), as PyTorch computes
    it: float32 log and quotients, truncation to long."""
    half = T5_BUCKETS // 2
    max_exact = half // 2
    buckets = (relative > 0).astype(np.int64) * half
    distance = np.abs(relative)
    with np.errstate(divide="ignore"):
        ratio = distance.astype(F32) / F32(max_exact)
        scaled = (np.log(ratio) / F32(math.log(T5_MAX_DISTANCE / max_exact))
                  * F32(half - max_exact)).astype(F32)
    large = np.minimum(np.where(np.isfinite(scaled), scaled, 0).astype(np.int64)
                       + max_exact, half - 1)
    return buckets + np.where(distance < max_exact, distance, large)


def t5_reference(W, inputs, layers):
    ids = inputs["input_ids"]
    b, s = ids.shape
    eps = _f32(EPS["llama"])
    positions = np.arange(s)
    buckets = t5_bucket(positions[None, :] - positions[:, None])
    table = W["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]
    bias = table[buckets].transpose(2, 0, 1)[None]                        # [1, h, s, s]
    keep = inputs["attention_mask"].astype(bool)[:, None, None, :]

    def lin(x, name):
        return project(x, W[name + ".weight"].T)

    x = W["shared.weight"][ids]
    for i in range(layers):
        p = f"encoder.block.{i}.layer."
        h = _rms(x, W[p + "0.layer_norm.weight"], eps)
        a = p + "0.SelfAttention."
        q, k, v = (_heads(lin(h, a + n), HEADS) for n in ("q", "k", "v"))
        scores = np.where(keep, q @ k.transpose(0, 1, 3, 2) + bias, -np.inf)
        x = x + lin(_merge(_softmax(scores) @ v), a + "o")
        h = _rms(x, W[p + "1.layer_norm.weight"], eps)
        f = p + "1.DenseReluDense."
        x = x + lin(_gelu_tanh(lin(h, f + "wi_0")) * lin(h, f + "wi_1"), f + "wo")
    return _rms(x, W["encoder.final_layer_norm.weight"], eps)


BUILDERS = {"bert": build_bert, "gpt2": build_gpt2, "llama": build_llama,
            "llama_past": lambda g, layers: build_llama(g, layers, past=True)}
BUILDERS.update({name: (lambda g, layers, cfg=cfg: build_decoder(g, layers, cfg))
                 for name, cfg in ZOO.items()})
BUILDERS.update({name: (lambda g, layers, family=name: build_encoder(g, layers, family))
                 for name in ENCODER_FAMILIES})
BUILDERS["t5"] = build_t5


def lm_head_weight(seed):
    """--lm-head's untied LM head, [HIDDEN, VOCAB] as MatMul reads it."""
    rng = np.random.default_rng(seed + 7919)
    return (rng.standard_normal((HIDDEN, VOCAB)) * 0.02).astype(np.float32)


def build_model(family, exporter, layers=2, seed=0, external=None,
                lm_head=False):
    """(ModelProto, weights) at the current size; with `external` (an
    ExternalData) the large float initializers go to that file, to be
    written with external.write() (save_model does both). With `lm_head`
    the output is a causal LM's `logits`: the hidden state times an untied
    `lm_head.weight`."""
    base, dtype = split_family(family)
    weights = make_weights(base, layers, seed)
    if lm_head:
        weights["lm_head.weight"] = lm_head_weight(seed)
    if dtype != np.float32:
        weights = {k: v.astype(dtype) for k, v in weights.items()}
    g = GraphBuilder(exporter, weights, dtype)
    result = BUILDERS[base](g, layers)
    output, width = "last_hidden_state", HIDDEN
    if lm_head:
        result = g.op("MatMul", result,
                      g.initializer("lm_head.weight", weights["lm_head.weight"]),
                      fx="linear")
        output, width = "logits", VOCAB
    size = "Tiny" if SIZE.name == "tiny" else SIZE.name
    doc = (f"{size} {family} ({layers} layers, seed {seed}"
           f"{', LM head' if lm_head else ''}) in the node patterns of "
           f"torch.onnx.export ({exporter}); generated by test/Target/ONNX/Inputs/models.py")
    return g.model(family, result, doc, external, output, width), weights


def save_model(model, path, external=None):
    """Writes the .onnx (and, with `external`, its data file beside it)."""
    if external is None:
        onnx.save(model, path)
        return
    external.write(os.path.dirname(os.path.abspath(path)))
    with open(path, "wb") as f:         # not onnx.save: it would handle the
        f.write(model.SerializeToString())   # external tensors itself


def generate(family, exporter, output, size="tiny", layers=None, seed=0,
             external_data=None, check=True, lm_head=False):
    """What the command line does without --reference-out: sets the size,
    builds the model, validates it and writes it (and NAME beside it when
    external_data is NAME).  Returns (model, weights, note)."""
    set_size(size)
    layers = SIZE.layers if layers is None else layers
    external = ExternalData(external_data) if external_data else None
    model, weights = build_model(family, exporter, layers, seed, external,
                                 lm_head)
    note = validate(model) if check else "not checked"
    save_model(model, output, external)
    return model, weights, note


# --------------------------------------------------------------- validation

def opset17_view(model):
    """The opset-18 constructs in these models rewritten to opset 17 (ReduceMean
    axes input -> attribute, Split num_outputs -> split input), so that an onnx
    release that stops at opset 17 can still check everything else."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    consts = {t.name: t for t in m.graph.initializer}
    extra = []
    for node in m.graph.node:
        attrs = {a.name: a for a in node.attribute}
        if node.op_type == "ReduceMean" and len(node.input) > 1:
            axes = numpy_helper.to_array(consts[node.input[1]]).tolist()
            del node.input[1:]
            node.attribute.append(helper.make_attribute("axes", axes))
        if node.op_type == "Split" and "num_outputs" in attrs:
            n = attrs["num_outputs"].i
            node.attribute.remove(attrs["num_outputs"])
            extra.append(numpy_helper.from_array(np.full(n, 3 * HIDDEN // n, I64),
                                                 node.name + "_split"))
            node.input.append(extra[-1].name)
        if node.op_type == "ReduceMean":
            for a in list(node.attribute):
                if a.name == "noop_with_empty_axes":
                    node.attribute.remove(a)
    m.graph.initializer.extend(extra)
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("", 17))
    return m


def without_external_data(model):
    """A copy whose external initializers are graph inputs of the same type
    and shape: what the checker and shape inference see is the same, and the
    data file need not exist (nor be looked up relative to the cwd)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    kept = []
    for t in m.graph.initializer:
        if t.data_location == TensorProto.EXTERNAL:
            m.graph.input.append(helper.make_tensor_value_info(t.name, t.data_type,
                                                               list(t.dims)))
        else:
            kept.append(t)
    del m.graph.initializer[:]
    m.graph.initializer.extend(kept)
    return m


def validate(model):
    """onnx.checker (full) and strict shape inference; returns a note on what
    was checked."""
    target = model
    note = "checked as is"
    if any(t.data_location == TensorProto.EXTERNAL for t in model.graph.initializer):
        target = without_external_data(model)
        note = "external initializers checked as graph inputs"
    if model.opset_import[0].version > onnx.defs.onnx_opset_version():
        target = opset17_view(target)
        note = (f"onnx {onnx.__version__} knows opset {onnx.defs.onnx_opset_version()}: "
                "checked the opset-17 view of the ReduceMean/Split nodes")
    onnx.checker.check_model(target, full_check=True)
    onnx.shape_inference.infer_shapes(target, check_type=True, strict_mode=True)
    return note


# ---------------------------------------------------------------- reference

def make_inputs(family, batch, seq, seed=0, layers=None):
    if not 1 <= seq <= MAX_POS:
        raise ValueError(f"--seq must be in [1, {MAX_POS}]")
    family = split_family(family)[0]
    rng = np.random.default_rng(seed + 1)
    if family == "vit":         # the image size is the model's; seq is unused
        return {"pixel_values": rng.standard_normal(
            (batch, CHANNELS, IMAGE, IMAGE)).astype(F32)}
    if family == "whisper":     # 2 * seq frames: seq tokens after the stride-2 conv
        return {"input_features": rng.standard_normal((batch, MELS, 2 * seq)).astype(F32)}
    inputs = {"input_ids": rng.integers(0, VOCAB, (batch, seq), dtype=I64)}
    if family in ("bert", "t5") or (family in ZOO and ZOO[family].padding):
        mask = np.ones((batch, seq), I64)
        if batch > 1:
            # Padding at the end of row 1: a quarter of it (at the peaked
            # size, where a wrong mask must show, three quarters of every
            # row after the first).
            if SIZE.name == "peaked":
                mask[1:, seq - 3 * seq // 4:] = 0
            else:
                mask[1, seq - max(1, seq // 4):] = 0
            mask[1:, 0] = 1
        inputs["attention_mask"] = mask
    if family == "bert":
        inputs["token_type_ids"] = rng.integers(0, TYPE_VOCAB, (batch, seq), dtype=I64)
    if family in CACHE_FAMILIES:
        # Keys and values of the scale the layers' projections give (the
        # hidden state is normalised, the weights of std 0.02 or the size's).
        std = (SIZE.qk_std or 0.02) * math.sqrt(HIDDEN)
        if past_length(seq) < 1:
            raise ValueError(f"--seq {seq} leaves no room for a past in {MAX_POS} positions")
        for i in range(SIZE.layers if layers is None else layers):
            for kind in ("key", "value"):
                inputs[f"past_key_values.{i}.{kind}"] = (std * rng.standard_normal(
                    (batch, KV_HEADS, past_length(seq), HEAD_DIM))).astype(F32)
    return inputs


def _ln(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _rms(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _gelu_tanh(h):
    return 0.5 * h * (1 + np.tanh(_model(math.sqrt(2 / math.pi))
                                  * (h + _model(0.044715) * h ** 3)))


def _heads(t, n):                       # [b, s, n*d] -> [b, n, s, d]
    b, s, _ = t.shape
    return t.reshape(b, s, n, HEAD_DIM).transpose(0, 2, 1, 3)


def _merge(t):                          # [b, n, s, d] -> [b, s, n*d]
    b, n, s, d = t.shape
    return t.transpose(0, 2, 1, 3).reshape(b, s, n * d)


# A deliberate error in the reference's attention (check_perturbations):
# None, or one of PERTURBATIONS.
PERTURBATION = None
PERTURBATIONS = ("zero_attention", "uniform_softmax", "scale_1_over_d",
                 "no_mask", "no_rope", "top_left_mask", "no_position_offset")
# The perturbations of a key/value cache's offset.
CACHE_PERTURBATIONS = ("top_left_mask", "no_position_offset")


def _attend(q, k, v, allowed, bias=None, softcap=None):
    if PERTURBATION == "zero_attention":
        return np.zeros(q.shape[:-1] + v.shape[-1:])
    if PERTURBATION == "no_mask":
        allowed = np.ones_like(allowed)
    scale = HEAD_DIM if PERTURBATION == "scale_1_over_d" else math.sqrt(HEAD_DIM)
    s = q @ k.transpose(0, 1, 3, 2) / scale
    if bias is not None:
        s = s + bias
    if softcap:
        s = _f32(softcap) * np.tanh(s / _f32(softcap))
    if PERTURBATION == "uniform_softmax":
        s = np.zeros_like(s)
    return _softmax(np.where(allowed, s, -np.inf)) @ v


# How the reference multiplies an activation by a linear's weight: exactly
# (None), or with both operands quantized as mte-compile --precision=fp8
# quantizes them under the recipe named, "current" (the default recipe) or
# "rowwise" (fp8_reference.py), and everything else still float64: the
# recipe's own error, which host_models.py bounds mte's FP8 builds by
# (write_reference's fp8 outputs).
PROJECTION = None


def project(x, w_t):
    """x [..., K] times a linear's weight w_t [K, N] (in any view of it)."""
    if PROJECTION == "current":
        x, w_t = _fp8_reference().current_scaling_operands(x, w_t)
    elif PROJECTION == "rowwise":
        x, w_t = _fp8_reference().rowwise_scaling_operands(x, w_t)
    return x @ w_t


@functools.cache
def _fp8_reference():
    """test/Integration/fp8_reference.py, imported on first use."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "..", "..", "Integration"))
    import fp8_reference
    return fp8_reference


# The float type of the model the reference follows (reference_forward sets
# it): the GELUs' constants are values of that type, the norms' eps float32.
MODEL_FLOAT = np.float32


def _model(value):
    return float(MODEL_FLOAT(value))


def _f32(value):
    """A Python-float model constant as PyTorch applies it to float32 tensors."""
    return float(np.float32(value))


# The cache family's present.<i>.key/value of the last reference_forward.
PRESENTS = {}


def reference_forward(family, weights, inputs, layers):
    """The model's forward pass, written from the Hugging Face definitions, in
    float64 (parameters and the model's float constants as float32 values).
    A cache family's present keys and values are left in PRESENTS."""
    global MODEL_FLOAT
    PRESENTS.clear()
    family, MODEL_FLOAT = split_family(family)
    try:
        return _reference_forward(family, weights, inputs, layers)
    finally:
        MODEL_FLOAT = np.float32


def _reference_forward(family, weights, inputs, layers):
    W = {k: v.astype(np.float64) for k, v in weights.items()}
    if family in ENCODER_FAMILIES:
        return encoder_reference(family, W, inputs, layers)
    if family == "t5":
        return t5_reference(W, inputs, layers)
    if family in ZOO:
        return zoo_reference(ZOO[family], W, inputs, layers)
    ids = inputs["input_ids"]
    b, s = ids.shape
    causal = np.tril(np.ones((s, s), bool))
    eps = _f32(EPS["llama" if family in CACHE_FAMILIES else family])

    def lin(x, name, bias=True):
        y = project(x, W[name + ".weight"].T)
        return y + W[name + ".bias"] if bias else y

    if family == "bert":
        x = (W["embeddings.word_embeddings.weight"][ids]
             + W["embeddings.token_type_embeddings.weight"][inputs["token_type_ids"]]
             + W["embeddings.position_embeddings.weight"][np.arange(s)][None])
        x = _ln(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"], eps)
        keys = inputs["attention_mask"].astype(bool)[:, None, None, :]
        for i in range(layers):
            p = f"encoder.layer.{i}."
            q, k, v = (_heads(lin(x, p + "attention.self." + n), HEADS)
                       for n in ("query", "key", "value"))
            a = lin(_merge(_attend(q, k, v, keys)), p + "attention.output.dense")
            x = _ln(a + x, W[p + "attention.output.LayerNorm.weight"],
                    W[p + "attention.output.LayerNorm.bias"], eps)
            h = lin(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / _model(math.sqrt(2.0))))
            x = _ln(lin(h, p + "output.dense") + x, W[p + "output.LayerNorm.weight"],
                    W[p + "output.LayerNorm.bias"], eps)
        return x

    if family == "gpt2":
        def conv(x, name):
            return project(x, W[name + ".weight"]) + W[name + ".bias"]
        x = W["wte.weight"][ids] + W["wpe.weight"][np.arange(s)][None]
        for i in range(layers):
            p = f"h.{i}."
            h = _ln(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)
            q, k, v = np.split(conv(h, p + "attn.c_attn"), 3, axis=-1)
            a = _attend(_heads(q, HEADS), _heads(k, HEADS), _heads(v, HEADS), causal)
            x = x + conv(_merge(a), p + "attn.c_proj")
            h = conv(_ln(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps), p + "mlp.c_fc")
            h = _gelu_tanh(h)
            x = x + conv(h, p + "mlp.c_proj")
        return _ln(x, W["ln_f.weight"], W["ln_f.bias"], eps)

    # llama, and with a cache of `past` positions before the input's
    past = 0
    if family in CACHE_FAMILIES:
        past = inputs["past_key_values.0.key"].shape[2]
        # The diagonal at the bottom right: query i (position past + i)
        # sees keys 0 .. past + i; "top_left_mask" is the mistake of
        # aligning it at the top left, "no_position_offset" of rotating the
        # new tokens as if they came first.
        first = 0 if PERTURBATION == "top_left_mask" else past
        causal = np.arange(past + s)[None, :] <= np.arange(first, first + s)[:, None]
    start = 0 if PERTURBATION == "no_position_offset" else past
    angles = np.arange(start, start + s)[:, None] * rope_inv_freq().astype(np.float64)[None, :]
    angles = np.concatenate([angles, angles], axis=-1)
    cos, sin = np.cos(angles), np.sin(angles)

    def rope(t):
        if PERTURBATION == "no_rope":
            return t
        half = HEAD_DIM // 2
        rotated = np.concatenate([-t[..., half:], t[..., :half]], axis=-1)
        return t * cos + rotated * sin

    x = W["embed_tokens.weight"][ids]
    for i in range(layers):
        p = f"layers.{i}."
        h = _rms(x, W[p + "input_layernorm.weight"], eps)
        q = rope(_heads(lin(h, p + "self_attn.q_proj", False), HEADS))
        k = rope(_heads(lin(h, p + "self_attn.k_proj", False), KV_HEADS))
        v = _heads(lin(h, p + "self_attn.v_proj", False), KV_HEADS)
        if past:
            k = np.concatenate([inputs[f"past_key_values.{i}.key"], k], axis=2)
            v = np.concatenate([inputs[f"past_key_values.{i}.value"], v], axis=2)
            PRESENTS[f"present.{i}.key"], PRESENTS[f"present.{i}.value"] = k, v
        rep = HEADS // KV_HEADS                 # query head j reads KV head j // rep
        k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
        x = x + lin(_merge(_attend(q, k, v, causal)), p + "self_attn.o_proj", False)
        h = _rms(x, W[p + "post_attention_layernorm.weight"], eps)
        gate = lin(h, p + "mlp.gate_proj", False)
        h = gate / (1 + np.exp(-gate)) * lin(h, p + "mlp.up_proj", False)
        x = x + lin(h, p + "mlp.down_proj", False)
    return _rms(x, W["norm.weight"], eps)


def write_reference(path, family, weights, layers, batch, seq, seed,
                    fp8=()):
    """Writes the inputs and the reference output (`logits` with an LM head,
    else `last_hidden_state`) to the .npz `path`; for each FP8 recipe in
    `fp8` (current, rowwise) also the output with every linear quantized as
    that recipe does (PROJECTION) as `fp8_<output>` (current scaling's) or
    `fp8_<recipe>_<output>`. Returns (inputs, output)."""
    global PROJECTION
    inputs = make_inputs(family, batch, seq, seed, layers)

    def forward():
        out = reference_forward(family, weights, inputs, layers)
        if "lm_head.weight" in weights:
            return "logits", project(out, weights["lm_head.weight"].astype(np.float64))
        return "last_hidden_state", out

    name, expected = forward()
    arrays = {name: expected}
    for recipe in fp8:
        PROJECTION = recipe
        try:
            key = "fp8_" + ("" if recipe == "current" else recipe + "_") + name
            arrays[key] = forward()[1]
        finally:
            PROJECTION = None
    np.savez(path, **arrays, **inputs)
    return inputs, expected


# -------------------------------------------------------------------- CLI

def op_counts(model):
    return dict(sorted(collections.Counter(n.op_type for n in model.graph.node).items()))


def self_check(layers, seed, batch, seq, verbose):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import onnx_numpy
    worst = 0.0
    for family in FAMILIES + ZOO_FAMILIES + ENCODER_FAMILIES + FP16_FAMILIES + CACHE_FAMILIES:
        for exporter in EXPORTERS:
            model, weights = build_model(family, exporter, layers, seed)
            note = validate(model)
            inputs = make_inputs(family, batch, seq, seed, layers)
            expected = reference_forward(family, weights, inputs, layers)
            outputs = onnx_numpy.run(model, inputs)
            got = outputs["last_hidden_state"]
            for name, present in PRESENTS.items():     # the cache's outputs
                if not onnx_numpy.compare(outputs[name], present, rtol=1e-6,
                                          atol=1e-9)["allclose"]:
                    print(f"{family} {exporter}: {name} differs from the reference")
                    return 1
            # The zoo's and encoders' peaked attention amplifies the exporters' float32
            # constants (0.70710678 for 1/sqrt 2, ...) to a few 1e-8.
            # A float16 model's constants are float16 values (0.044715 is
            # 0.04471 there; 1/sqrt 2 is 0.70703 as a product, 1.4141 as a
            # divisor: the exporters differ by 6e-4 in that constant).
            err = onnx_numpy.compare(got, expected,
                                     rtol=2e-3 if family in FP16_FAMILIES else 1e-6,
                                     atol=1e-7 if family in ZOO_FAMILIES or family in ENCODER_FAMILIES
                                     else 1e-9)
            worst = max(worst, err["max_rel"])
            print(f"{family:12s} {exporter:11s} nodes={len(model.graph.node):4d} "
                  f"max_abs={err['max_abs']:.3e} max_rel={err['max_rel']:.3e} "
                  f"allclose={err['allclose']}  [{note}]")
            if verbose:
                print("   ", op_counts(model))
            if not err["allclose"]:
                return 1
    print(f"self-check passed; worst max_rel {worst:.3e}")
    return 0


def check_perturbations(tolerance, layers, seed, batch, seq):
    """Proves the narrow-precision gate can see attention bugs: for each
    BERT, GPT-2, Llama and Llama with a cache at this size, each deliberate
    error in the reference's attention (PERTURBATIONS; a mask is BERT's
    padding and the decoders' causal one; RoPE is Llama's; the cache's
    offset, CACHE_PERTURBATIONS, the cached Llama's) must move the output
    by at least 10x `tolerance` (relative RMS), or the gate could pass it."""
    global PERTURBATION
    failures = 0
    for family in FAMILIES + CACHE_FAMILIES:
        weights = make_weights(family, layers, seed)
        inputs = make_inputs(family, batch, seq, seed, layers)
        want = reference_forward(family, weights, inputs, layers)
        for kind in PERTURBATIONS:
            if kind == "no_rope" and family not in ("llama",) + CACHE_FAMILIES:
                continue
            if (kind in CACHE_PERTURBATIONS) != (family in CACHE_FAMILIES):
                continue
            PERTURBATION = kind
            try:
                got = reference_forward(family, weights, inputs, layers)
            finally:
                PERTURBATION = None
            rel = np.linalg.norm(got - want) / np.linalg.norm(want)
            ok = rel >= 10 * tolerance
            print(f"{'PASS' if ok else 'FAIL'} {family} {kind}: moves the output "
                  f"by {rel:.2e} relative RMS, {rel / tolerance:.0f}x the "
                  f"tolerance {tolerance:g}")
            failures += not ok
    return 1 if failures else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", choices=FAMILIES + ZOO_FAMILIES + ENCODER_FAMILIES + FP16_FAMILIES
                    + CACHE_FAMILIES)
    ap.add_argument("--exporter", choices=EXPORTERS)
    ap.add_argument("--size", choices=list(SIZES), default="tiny",
                    help="tiny (the test fixtures): hidden 64, 4 heads; "
                         "peaked: tiny with peaked attention, 256 positions; "
                         "gpt2-small: GPT-2 small's dimensions; llama-4l: 4 "
                         "layers of a Mistral-7B-shaped Llama (see above)")
    ap.add_argument("--layers", type=int,
                    help="default: the size's (tiny 2, gpt2-small 12, llama-4l 4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lm-head", action="store_true",
                    help="end in a causal LM's untied LM head: the output is "
                         "logits [batch, sequence, vocabulary]")
    ap.add_argument("-o", "--output")
    ap.add_argument("--external-data", metavar="NAME",
                    help="write the float initializers of at least "
                         f"{EXTERNAL_MIN_BYTES} bytes to the file NAME beside "
                         "the .onnx (64-byte aligned, deterministic)")
    ap.add_argument("--reference-out")
    ap.add_argument("--fp8-reference", nargs="?", const="current",
                    default="", metavar="RECIPES",
                    help="--reference-out also holds, for each FP8 recipe "
                         "of the comma-separated RECIPES (current, the "
                         "default, or rowwise), the reference with every "
                         "linear's operands quantized as --precision=fp8 "
                         "--fp8-recipe=RECIPE does: fp8_<output> for "
                         "current, fp8_rowwise_<output>")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=16)
    ap.add_argument("--self-check", action="store_true",
                    help="build all six models and compare onnx_numpy.py with the reference")
    ap.add_argument("--check-perturbations", type=float, metavar="TOL",
                    help="check that each deliberate attention error in the "
                         "reference moves BERT's, GPT-2's and Llama's output "
                         "by >= 10x TOL (relative RMS) at --size, --batch, --seq")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    set_size(args.size)
    layers = SIZE.layers if args.layers is None else args.layers
    if args.check_perturbations is not None:
        return check_perturbations(args.check_perturbations, layers, args.seed,
                                   args.batch, args.seq)
    if args.self_check:
        return self_check(layers, args.seed, args.batch, args.seq, args.verbose)
    if not (args.family and args.exporter and args.output):
        ap.error("--family, --exporter and -o are required (or --self-check)")
    if layers < 1 or args.batch < 1 or not 1 <= args.seq <= MAX_POS:
        ap.error(f"need --layers >= 1, --batch >= 1 and 1 <= --seq <= {MAX_POS}")
    try:
        model, weights, note = generate(args.family, args.exporter, args.output,
                                        args.size, layers, args.seed,
                                        args.external_data,
                                        lm_head=args.lm_head)
    except ValueError as error:
        ap.error(str(error))
    if args.verbose:
        print(f"{args.output}: {len(model.graph.node)} nodes {op_counts(model)} [{note}]")
    if args.reference_out:
        write_reference(args.reference_out, args.family, weights, layers,
                        args.batch, args.seq, args.seed,
                        [r for r in args.fp8_reference.split(",") if r])
    return 0


if __name__ == "__main__":
    sys.exit(main())
