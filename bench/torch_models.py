"""PyTorch forwards of models.py's GPT-2 and Llama, exactly as its
reference_forward defines them (same weight dict, same output: the
last_hidden_state after ln_f / the final norm), for the benchmark baselines.

Written the way Hugging Face's eager code runs a bf16 model: nn.Linear as
F.linear on [out, in] weights (GPT-2's Conv1D [in, out] weights are
transposed once at load), LayerNorm as F.layer_norm, RMSNorm in float32 and
cast back before the gain (LlamaRMSNorm), rope cos/sin computed in float32
and cast to the activation type, attention as
F.scaled_dot_product_attention(is_causal=True) over [batch, heads, seq,
head_dim]; Llama's grouped KV heads are passed as they are with
enable_gqa=True (query head j reads KV head j // (heads / kv_heads), as
repeat_kv does), so no repeated K/V is materialised and flash attention can
run; gqa="repeat" repeats them instead (repeat_interleave), for backends
without GQA support.  Projections are not fused (q/k/v and gate/up stay
separate GEMMs, as in Hugging Face).

    model = build(family, cfg, weights, device="cuda", dtype=torch.bfloat16)
    out = model(input_ids)            # [batch, seq, hidden], dtype

`cfg` is a models.Size (models.SIZES[...]); `weights` is make_weights' dict
of float32 numpy arrays (or torch tensors).

    model = build(family, cfg, weights, fp8=True)

is the FP8 forward mte's --precision=fp8 is measured against: the same
bf16 model whose every linear runs `torch._scaled_mm` (cuBLASLt's E4M3
GEMM, bf16 output, bias in its epilogue) with per-tensor scales, as
torchao's float8 inference and TransformerEngine's current scaling do: the
weight quantized once at build time (scale amax(W) / 448 of its bf16
values, [out, in] K-major), the activation in each call (scale amax(x) /
448 of this call's input, 1 when that is 0).
"""

import numpy as np
import torch
import torch.nn.functional as F


def _key(name):
    return name.replace(".", "__")


def _rope_inv_freq(head_dim, theta):
    """models.rope_inv_freq, computed in float32 as transformers does."""
    exponent = np.arange(0, head_dim, 2, dtype=np.int64).astype(np.float32) / np.float32(head_dim)
    return (np.float32(1.0) / (np.float32(theta) ** exponent)).astype(np.float32)


def attention(q, k, v, gqa="native"):
    """Causal SDPA; k and v may have fewer (grouped) heads than q."""
    if k.shape[1] != q.shape[1]:
        if gqa == "native":
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        rep = q.shape[1] // k.shape[1]
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class Transformer(torch.nn.Module):
    """The forward of one family; weights are frozen parameters (so that
    torch.compile treats them as parameters, not as captured constants)."""

    def __init__(self, family, cfg, weights, device="cuda", dtype=torch.bfloat16,
                 gqa="native", fp8=False):
        super().__init__()
        self.fp8 = fp8
        if family not in ("gpt2", "llama"):
            raise ValueError(f"no PyTorch forward for family {family!r}")
        self.family, self.cfg, self.gqa = family, cfg, gqa
        self.layers = sum(1 for n in weights if n.endswith(
            ".ln_1.weight" if family == "gpt2" else ".input_layernorm.weight"))
        params = {}
        for name, value in weights.items():
            t = value if isinstance(value, torch.Tensor) else torch.from_numpy(np.asarray(value))
            if family == "gpt2" and name.endswith(".weight") and (
                    ".attn.c_" in name or ".mlp.c_" in name):
                t = t.t()                   # Conv1D [in, out] -> F.linear's [out, in]
            t = t.to(device=device).to(dtype=dtype).contiguous()   # convert on the GPU
            params[_key(name)] = torch.nn.Parameter(t, requires_grad=False)
        if fp8:
            for name in [n for n in params if n.endswith("__weight") and
                         params[n].dim() == 2 and _is_projection(n)]:
                w = params.pop(name).float()
                scale = w.abs().max() / 448
                scale = torch.where(scale > 0, scale, torch.ones_like(scale))
                params[name + "_fp8"] = torch.nn.Parameter(
                    (w / scale).to(torch.float8_e4m3fn), requires_grad=False)
                params[name + "_scale"] = torch.nn.Parameter(
                    scale.reshape(()), requires_grad=False)
        self.p = torch.nn.ParameterDict(params)
        if family == "llama":
            inv = torch.from_numpy(_rope_inv_freq(cfg.head_dim, cfg.rope_theta))
            self.register_buffer("inv_freq", inv.to(device), persistent=False)

    def w(self, name):
        return self.p[_key(name)]

    def _linear(self, x, name, bias=True):
        b = self.w(name + ".bias") if bias else None
        if not self.fp8:
            return F.linear(x, self.w(name + ".weight"), b)
        rows = x.reshape(-1, x.shape[-1])
        amax = rows.abs().max().float()
        scale = torch.where(amax > 0, amax / 448, torch.ones_like(amax))
        codes = (rows.float() / scale).to(torch.float8_e4m3fn)
        y = torch._scaled_mm(codes, self.w(name + ".weight_fp8").t(),
                             scale_a=scale, scale_b=self.w(name + ".weight_scale"),
                             bias=b, out_dtype=x.dtype)
        return y.reshape(*x.shape[:-1], y.shape[-1])

    def forward(self, ids):
        return self._gpt2(ids) if self.family == "gpt2" else self._llama(ids)

    def _gpt2(self, ids):
        cfg = self.cfg
        b, s = ids.shape
        h, heads, d = cfg.hidden, cfg.heads, cfg.head_dim
        eps = cfg.eps["gpt2"]
        positions = torch.arange(s, device=ids.device)
        x = F.embedding(ids, self.w("wte.weight")) + F.embedding(positions, self.w("wpe.weight"))
        for i in range(self.layers):
            p = f"h.{i}."
            y = F.layer_norm(x, (h,), self.w(p + "ln_1.weight"), self.w(p + "ln_1.bias"), eps)
            q, k, v = self._linear(y, p + "attn.c_attn").split(h, dim=-1)
            q, k, v = (t.view(b, s, heads, d).transpose(1, 2) for t in (q, k, v))
            a = attention(q, k, v).transpose(1, 2).reshape(b, s, h)
            x = x + self._linear(a, p + "attn.c_proj")
            y = F.layer_norm(x, (h,), self.w(p + "ln_2.weight"), self.w(p + "ln_2.bias"), eps)
            y = F.gelu(self._linear(y, p + "mlp.c_fc"), approximate="tanh")   # gelu_new
            x = x + self._linear(y, p + "mlp.c_proj")
        return F.layer_norm(x, (h,), self.w("ln_f.weight"), self.w("ln_f.bias"), eps)

    def _rms(self, x, name):
        """LlamaRMSNorm: float32 statistics, cast back, times the gain."""
        dtype = x.dtype
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.cfg.eps["llama"])
        return self.w(name + ".weight") * xf.to(dtype)

    def _llama(self, ids):
        cfg = self.cfg
        b, s = ids.shape
        heads, kv, d = cfg.heads, cfg.kv_heads, cfg.head_dim
        x = F.embedding(ids, self.w("embed_tokens.weight"))
        # LlamaRotaryEmbedding: float32 angles, cos/sin cast to x's type.
        angles = torch.arange(s, device=ids.device, dtype=torch.float32)[:, None] * self.inv_freq[None, :]
        emb = torch.cat((angles, angles), dim=-1)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)    # [s, d]

        def rope(t):
            half = d // 2
            rotated = torch.cat((-t[..., half:], t[..., :half]), dim=-1)
            return t * cos + rotated * sin

        for i in range(self.layers):
            p = f"layers.{i}."
            y = self._rms(x, p + "input_layernorm")
            q = self._linear(y, p + "self_attn.q_proj", False).view(b, s, heads, d).transpose(1, 2)
            k = self._linear(y, p + "self_attn.k_proj", False).view(b, s, kv, d).transpose(1, 2)
            v = self._linear(y, p + "self_attn.v_proj", False).view(b, s, kv, d).transpose(1, 2)
            a = attention(rope(q), rope(k), v, self.gqa)
            a = a.transpose(1, 2).reshape(b, s, heads * d)
            x = x + self._linear(a, p + "self_attn.o_proj", False)
            y = self._rms(x, p + "post_attention_layernorm")
            y = F.silu(self._linear(y, p + "mlp.gate_proj", False)) * self._linear(
                y, p + "mlp.up_proj", False)
            x = x + self._linear(y, p + "mlp.down_proj", False)
        return self._rms(x, "norm")


def _is_projection(key):
    """Whether a parameter (its ParameterDict key) is a linear's weight:
    the attention and MLP projections, not the embeddings or norm gains."""
    return any(part in key for part in ("__attn__c_", "__mlp__c_", "__self_attn__",
                                        "__mlp__gate_proj", "__mlp__up_proj",
                                        "__mlp__down_proj"))


def build(family, cfg, weights, device="cuda", dtype=torch.bfloat16, gqa="native",
          fp8=False):
    return Transformer(family, cfg, weights, device, dtype, gqa, fp8).eval()


def errors(got, want):
    """max |got - want| and the RMS of the difference relative to want's RMS,
    in float64."""
    g, w = got.double(), want.double()
    diff = g - w
    rms_want = w.pow(2).mean().sqrt().item()
    return {"max_abs": diff.abs().max().item(),
            "rms": diff.pow(2).mean().sqrt().item(),
            "rel_rms": diff.pow(2).mean().sqrt().item() / max(rms_want, 1e-30),
            "ref_rms": rms_want,
            "finite": bool(torch.isfinite(g).all().item())}


__all__ = ["Transformer", "attention", "build", "errors"]
